/**
 * Jobs on PostgreSQL with pg-boss: every instance enqueues into and works from the same queue, and
 * pg-boss hands each job to one worker. A job whose worker died is failed by pg-boss's maintenance once
 * it has run longer than its timeout, and then retried like any failure.
 */
import pg from 'pg';
import PgBoss from 'pg-boss';
import type { Logger } from '../logger.js';
import { DEFAULT_RETRY_POLICY, type JobHandler, type JobQueue, type JobRecord, type JobStats, type RetryPolicy } from './queue.js';

export interface PgBossQueueOptions {
  /** Longest a job may run before it counts as failed (and a dead worker's job is retried). */
  jobTimeoutSeconds?: number;
  /** How often pg-boss looks for timed-out jobs. */
  maintenanceIntervalSeconds?: number;
  pollingIntervalSeconds?: number;
}

const STATES: Record<string, JobRecord['state']> = {
  created: 'queued',
  retry: 'failed',
  active: 'running',
  completed: 'completed',
  failed: 'dead',
  cancelled: 'dead',
};

export class PgBossJobQueue implements JobQueue {
  private readonly boss: PgBoss;

  constructor(
    private readonly connectionString: string,
    private readonly logger: Logger,
    private readonly options: PgBossQueueOptions = {},
  ) {
    this.boss = new PgBoss({
      connectionString,
      application_name: 'palanque',
      maintenanceIntervalSeconds: options.maintenanceIntervalSeconds ?? 60,
    });
    this.boss.on('error', (error: Error) => this.logger.error({ err: error }, 'job queue error'));
  }

  async start(): Promise<void> {
    await this.boss.start();
  }

  async register(name: string, handler: JobHandler, policy: Partial<RetryPolicy> = {}): Promise<void> {
    const { retryLimit, retryDelaySeconds, backoff } = { ...DEFAULT_RETRY_POLICY, ...policy };
    await this.oneInstanceAtATime(() =>
      this.boss.createQueue(name, {
        name,
        retryLimit,
        retryDelay: retryDelaySeconds,
        retryBackoff: backoff,
        expireInSeconds: this.options.jobTimeoutSeconds ?? 15 * 60,
      }),
    );
    const options = { pollingIntervalSeconds: this.options.pollingIntervalSeconds ?? 2, includeMetadata: true as const };
    await this.boss.work(name, options, async ([job]) => {
      if (job) return handler(job.data, { id: job.id, attempt: job.retryCount + 1, lastAttempt: job.retryCount >= job.retryLimit });
    });
  }

  /**
   * Creating a queue writes a row and creates and attaches a partition; instances starting together on
   * a new database that create the same queues at once deadlock in there. So they take turns, under an
   * advisory lock held by a transaction of a connection of its own for the duration.
   */
  private async oneInstanceAtATime<T>(work: () => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: this.connectionString, application_name: 'palanque' });
    client.on('error', () => undefined); // a dropped connection fails the query below instead
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['palanque:pgboss-create-queue']);
      return await work();
    } finally {
      await client.query('COMMIT').catch(() => undefined);
      await client.end().catch(() => undefined);
    }
  }

  async enqueue(name: string, data: object): Promise<string> {
    const id = await this.boss.send(name, data);
    if (!id) throw new Error(`The job queue refused a ${name} job`);
    return id;
  }

  async get(name: string, id: string): Promise<JobRecord | undefined> {
    const job = await this.boss.getJobById(name, id, { includeArchive: true });
    if (!job) return undefined;
    const state = STATES[job.state] ?? 'queued';
    const finished = ['active', 'completed', 'failed'].includes(job.state);
    const output = job.output as { message?: string } | null;
    return {
      id: job.id,
      name: job.name,
      state,
      attempts: job.retryCount + (finished ? 1 : 0),
      data: job.data,
      output: state === 'completed' ? (job.output ?? null) : null,
      error: state === 'failed' || state === 'dead' ? (output?.message ?? 'failed') : null,
      createdAt: new Date(job.createdOn),
      updatedAt: new Date(job.completedOn ?? job.startedOn ?? job.createdOn),
    };
  }

  async stats(): Promise<JobStats> {
    const { rows } = await this.boss
      .getDb()
      .executeSql(`SELECT state, count(*)::int AS jobs FROM pgboss.job WHERE state IN ('created', 'active', 'retry', 'failed') GROUP BY state`, []);
    const count = (states: string[]) => rows.filter((row) => states.includes(row.state)).reduce((total, row) => total + Number(row.jobs), 0);
    return { queued: count(['created']), running: count(['active']), failed: count(['retry', 'failed']) };
  }

  async stop(): Promise<void> {
    await this.boss.stop({ graceful: true, wait: true, timeout: 10_000 });
  }
}
