/**
 * What basicStatus reports. Each dependency is checked within a time bound and a failure becomes a value
 * (`reachable: false`, `jobs: null`, `status: degraded`), so that the answer shows an outage instead of
 * being one.
 */
import { performance } from 'node:perf_hooks';
import type { Sequelize } from 'sequelize';
import type { components } from '../../sdk/schema.js';
import type { Dialect } from '../db/database.js';
import type { JobStats } from '../jobs/queue.js';
import type { MunicipalityCatalog } from '../municipalities/catalog.js';
import { SERVICE_VERSION } from './service.js';

export type BasicStatus = components['schemas']['BasicStatus'];

/** What the status reads beyond the municipality catalog. */
export interface StatusSources {
  dialect: Dialect;
  /** Runs a trivial query; rejects when the database does not answer. */
  pingDatabase(): Promise<void>;
  /** The job queue's counts (JobQueue.stats). */
  jobStats(): Promise<JobStats>;
  /** How long each check may take before it counts as failed (2 s by default). */
  timeoutMs?: number;
}

export const DEFAULT_CHECK_TIMEOUT_MS = 2_000;

export function statusSourcesOf(sequelize: Sequelize, jobStats: () => Promise<JobStats>): StatusSources {
  return {
    dialect: sequelize.getDialect() === 'postgres' ? 'postgres' : 'sqlite',
    pingDatabase: async () => {
      await sequelize.query('SELECT 1');
    },
    jobStats,
  };
}

/** A check that failed or timed out, for the log. */
export type CheckFailure = (check: 'database' | 'jobs' | 'municipalities', reason: unknown) => void;

/** The status, and in words what degrades it (empty when `ok`). */
export async function readStatus(
  sources: StatusSources,
  catalog: MunicipalityCatalog,
  onFailure: CheckFailure = () => {},
): Promise<{ status: BasicStatus; problems: string[] }> {
  const timeoutMs = sources.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  const bound = <T>(check: Parameters<CheckFailure>[0], work: () => Promise<T>) =>
    withinTime(work, timeoutMs).catch((reason: unknown) => {
      onFailure(check, reason);
      return undefined;
    });
  const [latencyMs, jobs] = await Promise.all([
    bound('database', async () => {
      const started = performance.now();
      await sources.pingDatabase();
      return Math.round((performance.now() - started) * 100) / 100;
    }),
    bound('jobs', () => sources.jobStats()),
    // The list may have been imported by another process since it was last read.
    bound('municipalities', () => catalog.reloadIfEmpty()),
  ]);
  const problems = [
    ...(latencyMs === undefined ? ['the database does not answer'] : []),
    ...(jobs === undefined ? ['the job queue cannot be read'] : []),
    ...(catalog.size === 0 ? ['no municipalities are loaded'] : []),
  ];
  const status: BasicStatus = {
    status: problems.length === 0 ? 'ok' : 'degraded',
    version: SERVICE_VERSION,
    uptime_seconds: Math.floor(process.uptime()),
    database: { reachable: latencyMs !== undefined, dialect: sources.dialect, latency_ms: latencyMs ?? null },
    jobs: jobs ? { queued: jobs.queued, running: jobs.running, failed: jobs.failed } : null,
    municipalities_loaded: catalog.size,
  };
  return { status, problems };
}

/** The work's result; rejects when it fails or takes longer than `timeoutMs`. */
async function withinTime<T>(work: () => Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([work(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
