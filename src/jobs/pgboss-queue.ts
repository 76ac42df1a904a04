/**
 * Jobs on PostgreSQL with pg-boss: every instance enqueues into and works from the same queue, and
 * pg-boss hands each job to one worker. A job whose worker died is failed by pg-boss's maintenance once
 * it has run longer than its timeout (JOB_TIMEOUT_SECONDS), and then retried like any failure; the
 * maintenance runs every fifth of that timeout (up to a minute), so such a job is retried within about
 * 1.2 timeouts. A handler that may be run twice at once that way says how it copes (messaging/sending.ts).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import PgBoss from 'pg-boss';
import type { Logger } from '../logger.js';
import { BULK_INSERT_SIZE, DEFAULT_RETRY_POLICY, type JobHandler, type JobQueue, type JobRecord, type JobStats, type RetryPolicy } from './queue.js';

export interface PgBossQueueOptions {
  /** Longest a job may run before it counts as failed (and a dead worker's job is retried); 15 minutes by default. */
  jobTimeoutSeconds?: number;
  /** How often pg-boss looks for timed-out jobs; a fifth of the job timeout, from 1 s to 60 s, by default. */
  maintenanceIntervalSeconds?: number;
  pollingIntervalSeconds?: number;
  /** Jobs of one kind taken by one fetch and run together (default JOBS_PER_FETCH). */
  batchSize?: number;
}

const DEFAULT_JOB_TIMEOUT_SECONDS = 15 * 60;

/** Jobs a worker takes at a time: a few dozen sends a second at the default polling interval, within the pool of 10 connections. */
const JOBS_PER_FETCH = 10;

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
    const jobTimeoutSeconds = options.jobTimeoutSeconds ?? DEFAULT_JOB_TIMEOUT_SECONDS;
    this.boss = new PgBoss({
      connectionString,
      application_name: 'palanque',
      // pg-boss fails timed-out jobs only during its maintenance.
      maintenanceIntervalSeconds: options.maintenanceIntervalSeconds ?? Math.min(60, Math.max(1, Math.round(jobTimeoutSeconds / 5))),
    });
    this.boss.on('error', (error: Error) => this.logger.error({ err: error }, 'job queue error'));
  }

  async start(): Promise<void> {
    await this.boss.start();
  }

  async register(name: string, handler: JobHandler, policy: Partial<RetryPolicy> = {}): Promise<void> {
    const { retryLimit, retryDelaySeconds, backoff } = { ...DEFAULT_RETRY_POLICY, ...policy };
    const queue = { name, retryLimit, retryDelay: retryDelaySeconds, retryBackoff: backoff, expireInSeconds: this.options.jobTimeoutSeconds ?? DEFAULT_JOB_TIMEOUT_SECONDS };
    // createQueue leaves a queue that exists as it was: the update applies a changed timeout or policy.
    await retriedOnDeadlock(() =>
      this.oneInstanceAtATime(async () => {
        await this.boss.createQueue(name, queue);
        await this.boss.updateQueue(name, queue);
      }),
    );
    // pg-boss waits its polling interval between two fetches even when jobs are waiting, so one job per
    // fetch ran a campaign of 10,000 messages at one message per 2 s. A fetch takes a batch instead, whose
    // jobs run together and are completed or failed one by one here (pg-boss would settle a batch as a
    // whole; its own completion afterwards touches only jobs still active, none by then), and a full
    // batch wakes the worker at once for the next, so a backlog drains as fast as the handlers go.
    const batchSize = this.options.batchSize ?? JOBS_PER_FETCH;
    let workerId = '';
    workerId = await this.boss.work(name, { pollingIntervalSeconds: this.options.pollingIntervalSeconds ?? 2, batchSize, includeMetadata: true }, async (jobs) => {
      await Promise.all(jobs.map((job) => this.runOne(name, job, handler)));
      if (jobs.length === batchSize) this.boss.notifyWorker(workerId);
    });
  }

  /** Runs one job of a batch and records its outcome, as pg-boss would for a batch of one. */
  private async runOne(name: string, job: PgBoss.JobWithMetadata<unknown>, handler: JobHandler): Promise<void> {
    try {
      const output = await handler(job.data, { id: job.id, attempt: job.retryCount + 1, lastAttempt: job.retryCount >= job.retryLimit });
      await this.boss.complete(name, job.id, typeof output === 'object' && output !== null ? (output as object) : undefined);
    } catch (error) {
      await this.boss.fail(name, job.id, { message: error instanceof Error ? error.message : String(error) });
    }
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

  async enqueueMany(name: string, data: object[]): Promise<string[]> {
    // pg-boss's insert takes the queue's retry policy, as send does; the ids are ours so we can return them.
    const jobs = data.map((item) => ({ id: randomUUID(), name, data: item }));
    for (let start = 0; start < jobs.length; start += BULK_INSERT_SIZE) await this.boss.insert(jobs.slice(start, start + BULK_INSERT_SIZE));
    return jobs.map((job) => job.id);
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

/** PostgreSQL's code for a transaction it aborted to break a deadlock: the other one went on, and a retry succeeds. */
const DEADLOCK_DETECTED = '40P01';

/**
 * Runs `work` again when PostgreSQL aborted it to break a deadlock. Queue creation is serialised between
 * our instances (oneInstanceAtATime), yet CI saw one deadlock inside pg-boss's create_queue when three
 * instances started at once on a new database; PostgreSQL's remedy is to retry the aborted transaction.
 */
export async function retriedOnDeadlock<T>(work: () => Promise<T>, tries = 3): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      if ((error as { code?: string }).code !== DEADLOCK_DETECTED || attempt >= tries) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt + Math.random() * 100));
    }
  }
}
