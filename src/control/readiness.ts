/**
 * The probes of load balancers and orchestrators, outside the API's paths and contract (like /metrics),
 * open and cheap:
 * - `GET /livez`: 200 while the process answers at all (its event loop turns). It reads nothing, so a
 *   database outage never makes an orchestrator restart every instance.
 * - `GET /readyz`: 200 when this instance can serve the API, else 503, with each check's state and
 *   nothing else (no host, no error text: those go to the log). Required: the database answers within
 *   a second, and every migration this build knows is applied (a newer schema, from an instance of the
 *   next release in a rolling deploy, is fine). Redis, when REDIS_URL is set, is checked and reported
 *   but not required: without it the API still serves (budgets counted per instance, revocations bounded
 *   by the key cache, see serve.ts), and since every instance shares it, failing readiness on it would
 *   take them all out of rotation at once. The answer is kept for a second, and probes arriving
 *   meanwhile share one check, so probes cannot load the database.
 *
 * docs/operations.md shows their use from nginx, systemd and Kubernetes.
 */
import { performance } from 'node:perf_hooks';
import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import type { Sequelize } from 'sequelize';
import type { Logger } from '../logger.js';

export type CheckState = 'ok' | 'failing' | 'timeout' | 'behind';

export interface Readiness {
  status: 'ready' | 'not_ready';
  checks: Record<string, { state: CheckState; latency_ms?: number; missing?: number; reason?: string; required?: false }>;
}

export interface ReadinessSources {
  /** Runs a trivial query; rejects when the database does not answer. */
  pingDatabase(): Promise<void>;
  /** The names of the migrations applied to the database. */
  appliedMigrations(): Promise<string[]>;
  /** The names of the migrations this build knows. */
  knownMigrations: readonly string[];
  /** Pings Redis; absent when REDIS_URL is not set. */
  pingRedis?: () => Promise<void>;
  /** Whether the job queue's own schema is there (an api instance waits for a worker to install it); absent: not checked. */
  jobQueueInstalled?: () => Promise<boolean>;
  /**
   * Whether this instance serves the API yet: an api instance that found its schema still starts its
   * domains before it does, and until then its /readyz must not send it traffic. Absent: not checked.
   */
  serving?: () => boolean;
}

/** How many missing migrations a not-ready answer names. */
const NAMED_MIGRATIONS = 10;

export const READINESS_CHECK_TIMEOUT_MS = 1_000;
export const READINESS_CACHE_MS = 1_000;

export function readinessSourcesOf(sequelize: Sequelize, knownMigrations: readonly string[], redis?: Redis): ReadinessSources {
  return {
    pingDatabase: async () => {
      await sequelize.query('SELECT 1');
    },
    appliedMigrations: async () => {
      try {
        const [rows] = await sequelize.query('SELECT name FROM migrations');
        return (rows as Array<{ name: string }>).map((row) => row.name);
      } catch (error) {
        // A database nobody migrated yet (an api instance waiting for its worker) has every migration missing.
        if (!(await sequelize.getQueryInterface().tableExists('migrations'))) return [];
        throw error;
      }
    },
    knownMigrations,
    ...(redis ? { pingRedis: async () => void (await redis.ping()) } : {}),
  };
}

/** Checks everything once, each check within READINESS_CHECK_TIMEOUT_MS; failures are reported to `onFailure`. */
export async function checkReadiness(sources: ReadinessSources, onFailure: (check: string, reason: unknown) => void = () => {}): Promise<Readiness> {
  const checks: Readiness['checks'] = {};
  const run = async (check: string, work: () => Promise<CheckState>) => {
    const started = performance.now();
    try {
      const state = await withinTime(work, READINESS_CHECK_TIMEOUT_MS);
      checks[check] = { state, latency_ms: Math.round((performance.now() - started) * 100) / 100 };
    } catch (reason) {
      onFailure(check, reason);
      checks[check] = { state: reason instanceof CheckTimeout ? 'timeout' : 'failing' };
    }
  };
  let missing: string[] = [];
  await Promise.all([
    run('database', async () => {
      await sources.pingDatabase();
      return 'ok';
    }),
    run('migrations', async () => {
      const applied = new Set(await sources.appliedMigrations());
      missing = sources.knownMigrations.filter((name) => !applied.has(name));
      return missing.length === 0 ? 'ok' : 'behind';
    }),
    ...(sources.jobQueueInstalled ? [run('job_queue', async () => ((await sources.jobQueueInstalled!()) ? 'ok' : 'behind'))] : []),
    ...(sources.serving ? [run('startup', async () => (sources.serving!() ? 'ok' : 'behind'))] : []),
    ...(sources.pingRedis ? [run('redis', async () => (await sources.pingRedis!(), 'ok' as const))] : []),
  ]);
  if (checks.migrations?.state === 'behind') {
    const named = missing.slice(0, NAMED_MIGRATIONS).join(', ') + (missing.length > NAMED_MIGRATIONS ? ` and ${missing.length - NAMED_MIGRATIONS} more` : '');
    checks.migrations.missing = missing.length;
    checks.migrations.reason = `missing migrations: ${named} (a worker, an instance of role all or \`npm run db:migrate\` applies them)`;
  }
  if (checks.job_queue?.state === 'behind') checks.job_queue.reason = 'the job queue\'s schema (pg-boss) is not installed yet: a worker installs it when it starts';
  if (checks.startup?.state === 'behind') checks.startup.reason = 'the schema is there and the API is starting (its domains and job queue): it serves in a moment';
  if (checks.redis) checks.redis.required = false;
  const ready = Object.values(checks).every((check) => check.state === 'ok' || check.required === false);
  return { status: ready ? 'ready' : 'not_ready', checks };
}

/** GET (or HEAD) /livez and /readyz; any other request passes on. */
export function probes(sources: ReadinessSources, logger: Logger): RequestHandler {
  let cached: { at: number; answer: Promise<Readiness> } | undefined;
  let wasReady: boolean | undefined;
  const readiness = () => {
    const now = Date.now();
    if (cached && now - cached.at < READINESS_CACHE_MS) return cached.answer;
    const failures: Record<string, string> = {};
    const answer = checkReadiness(sources, (check, reason) => (failures[check] = reason instanceof Error ? reason.message : String(reason))).then((result) => {
      const ready = result.status === 'ready';
      // Logged when it changes, not on every probe.
      if (ready !== wasReady) {
        if (ready) logger.info({ checks: result.checks, failures }, 'ready: this instance can serve the API');
        else logger.error({ checks: result.checks, failures }, 'not ready: a dependency of the API is unavailable (GET /readyz answers 503)');
        wasReady = ready;
      }
      return result;
    });
    cached = { at: now, answer };
    return answer;
  };
  // Not an async function: every request passes here, and only the probes need to wait.
  return (req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || (req.path !== '/readyz' && req.path !== '/livez')) return next();
    res.set('Cache-Control', 'no-store');
    if (req.path === '/livez') {
      res.status(200).json({ status: 'live' });
      return;
    }
    readiness().then((result) => void res.status(result.status === 'ready' ? 200 : 503).json(result), next);
  };
}

class CheckTimeout extends Error {}

async function withinTime<T>(work: () => Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new CheckTimeout(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([work(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
