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
import { BULK_INSERT_SIZE, DEFAULT_RETRY_POLICY, type JobCount, type JobHandler, type JobOptions, type JobQueue, type JobRecord, type JobState, type JobStats, type QueuePoolStats, type QueueStats, type RetryPolicy, queueStatsOf } from './queue.js';
import { activeTraceContext, runTraced, withoutTraceContext, withTraceContext } from './trace-context.js';
import { jobQueueError } from '../db/outages.js';

export interface PgBossQueueOptions {
  /** Longest a job may run before it counts as failed (and a dead worker's job is retried); 15 minutes by default. */
  jobTimeoutSeconds?: number;
  /** How often pg-boss looks for timed-out jobs; a fifth of the job timeout, from 1 s to 60 s, by default. */
  maintenanceIntervalSeconds?: number;
  pollingIntervalSeconds?: number;
  /** Jobs of one kind taken by one fetch and run together (default JOBS_PER_FETCH; JOB_CONCURRENCY). */
  batchSize?: number;
  /**
   * false: this process enqueues, reads and purges jobs but runs none, runs no maintenance and installs
   * nothing (the api role, PALANQUE_ROLE=api): start() fails until a worker installed pg-boss's schema.
   */
  runJobs?: boolean;
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
  /** This instance's worker of each kind of job, woken when this instance queues one. */
  private readonly workers = new Map<string, string>();
  /** The kinds registered here: their queues are reported even when empty. */
  private readonly names = new Set<string>();

  constructor(
    private readonly connectionString: string,
    private readonly logger: Logger,
    private readonly options: PgBossQueueOptions = {},
  ) {
    const jobTimeoutSeconds = options.jobTimeoutSeconds ?? DEFAULT_JOB_TIMEOUT_SECONDS;
    const runJobs = options.runJobs ?? true;
    this.boss = new PgBoss({
      connectionString,
      application_name: 'palanque',
      migrate: runJobs,
      supervise: runJobs,
      schedule: runJobs,
      // pg-boss fails timed-out jobs only during its maintenance.
      maintenanceIntervalSeconds: options.maintenanceIntervalSeconds ?? Math.min(60, Math.max(1, Math.round(jobTimeoutSeconds / 5))),
    });
    this.boss.on('error', (error: Error) => this.logger.error({ err: error }, 'job queue error'));
  }

  async start(): Promise<void> {
    await this.boss.start();
  }

  async register(name: string, handler: JobHandler, policy: Partial<RetryPolicy> & JobOptions = {}): Promise<void> {
    const { retryLimit, retryDelaySeconds, backoff } = { ...DEFAULT_RETRY_POLICY, ...policy };
    this.names.add(name);
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
    // whole; its own completion afterwards touches only jobs still active, none by then), and a batch
    // that found jobs wakes the worker at once for the next, so a backlog drains as fast as the handlers
    // go, and so do jobs that queue their own successor (a campaign's next batch: messaging/campaign-sending.ts).
    if (this.options.runJobs === false) return;
    const batchSize = policy.jobsAtOnce ?? this.options.batchSize ?? JOBS_PER_FETCH;
    let workerId = '';
    workerId = await this.boss.work(name, { pollingIntervalSeconds: this.options.pollingIntervalSeconds ?? 2, batchSize, includeMetadata: true }, async (jobs) => {
      await Promise.all(jobs.map((job) => this.runOne(name, job, handler)));
      if (jobs.length > 0) this.boss.notifyWorker(workerId);
    });
    this.workers.set(name, workerId);
  }

  /** Wakes this instance's worker of `name`, if it has one, rather than leave a new job to its next poll. */
  private wake(name: string): void {
    const workerId = this.workers.get(name);
    if (workerId) this.boss.notifyWorker(workerId);
  }

  /** Runs one job of a batch and records its outcome, as pg-boss would for a batch of one. */
  private async runOne(name: string, job: PgBoss.JobWithMetadata<unknown>, handler: JobHandler): Promise<void> {
    try {
      const output = await runTraced(name, job.data, { id: job.id, attempt: job.retryCount + 1, lastAttempt: job.retryCount >= job.retryLimit }, handler);
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
    // Its pool's failures are wrapped as Sequelize wraps its driver's: a lost connection is an outage (503).
    const id = await this.boss.send(name, withTraceContext(data)).catch((error: unknown) => Promise.reject(jobQueueError(error)));
    if (!id) throw new Error(`The job queue refused a ${name} job`);
    this.wake(name);
    return id;
  }

  async enqueueMany(name: string, data: object[]): Promise<string[]> {
    // pg-boss's insert takes the queue's retry policy, as send does; the ids are ours so we can return them.
    const trace = activeTraceContext();
    const jobs = data.map((item) => ({ id: randomUUID(), name, data: withTraceContext(item, trace) }));
    for (let start = 0; start < jobs.length; start += BULK_INSERT_SIZE) {
      await this.boss.insert(jobs.slice(start, start + BULK_INSERT_SIZE)).catch((error: unknown) => Promise.reject(jobQueueError(error)));
    }
    if (jobs.length > 0) this.wake(name);
    return jobs.map((job) => job.id);
  }

  async get(name: string, id: string): Promise<JobRecord | undefined> {
    // pg-boss's ids are UUIDs: another id names no job (PostgreSQL would refuse it in the query).
    if (!UUID.test(id)) return undefined;
    const job = await this.boss.getJobById(name, id, { includeArchive: true });
    return job ? recordOf(job) : undefined;
  }

  async stats(): Promise<JobStats> {
    const { rows } = await this.boss
      .getDb()
      .executeSql(`SELECT state, count(*)::int AS jobs FROM pgboss.job WHERE state IN ('created', 'active', 'retry', 'failed') GROUP BY state`, []);
    const count = (states: string[]) => rows.filter((row) => states.includes(row.state)).reduce((total, row) => total + Number(row.jobs), 0);
    return { queued: count(['created']), running: count(['active']), failed: count(['retry', 'failed']) };
  }

  async purgeQueued(name: string, match: Record<string, string | number>): Promise<number> {
    const fields = Object.entries(match);
    // data->>'field' is the field as text: a number matches its decimal form.
    const conditions = fields.map((_field, index) => `data->>$${2 * index + 2} = $${2 * index + 3}`);
    const { rows } = await this.boss
      .getDb()
      .executeSql(
        `DELETE FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry')${conditions.map((condition) => ` AND ${condition}`).join('')} RETURNING id`,
        [name, ...fields.flatMap(([field, value]) => [field, String(value)])],
      )
      .catch((error: unknown) => Promise.reject(jobQueueError(error)));
    return rows.length;
  }

  async queueStats(): Promise<QueueStats[]> {
    // `retry` jobs wait for their next try; the age is from the job's creation, so a job retried for an hour shows it.
    const { rows } = await this.boss.getDb().executeSql(
      `SELECT name,
              count(*) FILTER (WHERE state IN ('created', 'retry'))::int AS waiting,
              count(*) FILTER (WHERE state = 'active')::int AS running,
              COALESCE(EXTRACT(EPOCH FROM now() - min(created_on) FILTER (WHERE state IN ('created', 'retry'))), 0)::float8 AS oldest
         FROM pgboss.job WHERE state IN ('created', 'retry', 'active') GROUP BY name`,
      [],
    );
    return queueStatsOf(this.names, (rows as Array<{ name: string; waiting: number; running: number; oldest: number }>).map((row) => ({
      name: row.name,
      waiting: Number(row.waiting),
      running: Number(row.running),
      oldestWaitingSeconds: Math.max(0, Number(row.oldest)),
    })));
  }

  poolStats(): QueuePoolStats | undefined {
    // pg-boss's Db keeps a node-postgres Pool once started.
    const pool = (this.boss.getDb() as unknown as { pool?: { totalCount: number; idleCount: number; waitingCount: number } }).pool;
    if (!pool) return undefined;
    return { size: pool.totalCount, available: pool.idleCount, using: pool.totalCount - pool.idleCount, waiting: pool.waitingCount };
  }

  async counts(): Promise<JobCount[]> {
    const { rows } = await this.sql<{ name: string; state: string; jobs: number }>(`SELECT name, state, count(*)::int AS jobs FROM pgboss.job GROUP BY name, state`, []);
    const counts = new Map<string, JobCount>();
    for (const row of rows) {
      const state = STATES[row.state] ?? 'queued';
      const key = `${row.name} ${state}`;
      const count = counts.get(key) ?? { name: row.name, state, jobs: 0 };
      count.jobs += Number(row.jobs);
      counts.set(key, count);
    }
    return [...counts.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  async list(name: string, state: JobState, limit: number): Promise<JobRecord[]> {
    const states = Object.keys(STATES).filter((bossState) => STATES[bossState] === state);
    const { rows } = await this.sql<RawJob>(
      `SELECT id, name, state, data, output, retry_count AS "retryCount", created_on AS "createdOn", started_on AS "startedOn", completed_on AS "completedOn"
         FROM pgboss.job WHERE name = $1 AND state::text = ANY($2::text[])
        ORDER BY coalesce(completed_on, started_on, created_on) DESC, id LIMIT $3`,
      [name, states, limit],
    );
    return rows.map(recordOf);
  }

  async retry(name: string, id: string): Promise<boolean> {
    // pg-boss's retry: a failed (dead) job becomes `retry` with one more try allowed.
    const { rows } = await this.sql<{ id: string }>(`UPDATE pgboss.job SET state = 'retry', retry_limit = retry_count + 1, start_after = now() WHERE name = $1 AND id::text = $2 AND state = 'failed' RETURNING id`, [name, id]);
    return rows.length === 1;
  }

  private async sql<Row>(text: string, values: unknown[]): Promise<{ rows: Row[] }> {
    return (await this.boss
      .getDb()
      .executeSql(text, values)
      .catch((error: unknown) => Promise.reject(jobQueueError(error)))) as { rows: Row[] };
  }

  async stop(): Promise<void> {
    await this.boss.stop({ graceful: true, wait: true, timeout: 10_000 });
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A job as pg-boss gives it (getJobById) or as list() selects it. */
interface RawJob {
  id: string;
  name: string;
  state: string;
  data: unknown;
  output: unknown;
  retryCount: number;
  createdOn: Date | string;
  startedOn: Date | string | null;
  completedOn: Date | string | null;
}

function recordOf(job: RawJob): JobRecord {
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
