/**
 * Background jobs: work that must not block a request or be lost. One interface, two implementations:
 * pg-boss on PostgreSQL (several instances share the queue) and a table-backed runner in this process on
 * the embedded SQLite default. Both persist jobs, retry failures with backoff, mark a job `dead` after its
 * last try, pick up after a restart what a crash interrupted, and let the enqueuer read a job's state.
 */
export type JobState = 'queued' | 'running' | 'completed' | 'failed' | 'dead';

export interface JobRecord {
  id: string;
  name: string;
  /** queued, running, completed; failed = the last try failed and another will follow; dead = no more tries. */
  state: JobState;
  attempts: number;
  data: unknown;
  output: unknown;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface RetryPolicy {
  /** Retries after the first try (0 = one try only). */
  retryLimit: number;
  /** Seconds before the first retry; doubled for each further retry when `backoff` is on. */
  retryDelaySeconds: number;
  backoff: boolean;
}

/** How a kind of job is run, beside its retries. */
export interface JobOptions {
  /**
   * Jobs of this kind one instance runs at once, where the queue gives each kind its own (pg-boss: the
   * jobs one fetch takes; the embedded runner runs a few jobs at a time of any kind).
   */
  jobsAtOnce?: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { retryLimit: 4, retryDelaySeconds: 5, backoff: true };

/** Jobs written by one INSERT in enqueueMany. */
export const BULK_INSERT_SIZE = 1_000;

export interface JobAttempt {
  id: string;
  /** 1 on the first try. */
  attempt: number;
  /** No retry follows if this try fails: the handler may record the failure where its users see it. */
  lastAttempt: boolean;
}

export type JobHandler = (data: unknown, job: JobAttempt) => Promise<unknown>;

export interface JobStats {
  queued: number;
  running: number;
  failed: number;
}

/** One kind of job's queue, for the metrics: how many wait and run, and how long the oldest has waited. */
export interface QueueStats {
  name: string;
  /** Jobs waiting to run: queued, or failed and waiting for their retry. */
  waiting: number;
  running: number;
  /** Seconds since the oldest waiting job was created (0 when none waits). */
  oldestWaitingSeconds: number;
}

/** The connections a queue keeps of its own (pg-boss's pool), as the database pool reports them. */
export interface QueuePoolStats {
  size: number;
  available: number;
  using: number;
  waiting: number;
}

/** The stats found, and a row of zeros for each registered kind with no job. */
export function queueStatsOf(registered: Iterable<string>, found: QueueStats[]): QueueStats[] {
  const byName = new Map(found.map((stats) => [stats.name, stats]));
  for (const name of registered) if (!byName.has(name)) byName.set(name, { name, waiting: 0, running: 0, oldestWaitingSeconds: 0 });
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

export interface JobCount {
  name: string;
  state: JobState;
  jobs: number;
}

export const JOB_STATES: readonly JobState[] = ['queued', 'running', 'completed', 'failed', 'dead'];

export interface JobQueue {
  start(): Promise<void>;
  /** Registers the handler of a kind of job; jobs of unregistered kinds wait. */
  register(name: string, handler: JobHandler, policy?: Partial<RetryPolicy> & JobOptions): Promise<void>;
  enqueue(name: string, data: object): Promise<string>;
  /** Enqueues many jobs of one kind in a few statements (a campaign's 10,000 messages), returning their ids in order. */
  enqueueMany(name: string, data: object[]): Promise<string[]>;
  get(name: string, id: string): Promise<JobRecord | undefined>;
  /** Jobs waiting, running, and failed or dead (for status and metrics). */
  stats(): Promise<JobStats>;
  /** The same per kind of job, every registered kind included (for the metrics; absent from stand-ins). */
  queueStats?(): Promise<QueueStats[]>;
  /** The queue's own connection pool, if it has one (pg-boss; the table runner uses the database's). */
  poolStats?(): QueuePoolStats | undefined;
  /**
   * Deletes the jobs of kind `name` that wait to run (queued, or failed and waiting for a retry) whose
   * data has every field of `match` (compared as text: 7 matches "7"); returns how many. A job already
   * running is left to finish (its handler must check what it works for, e.g. a canceled campaign).
   */
  purgeQueued(name: string, match: Record<string, string | number>): Promise<number>;
  /** How many jobs each kind has in each state (the admins' `palanque jobs`); kinds and states without jobs are left out. */
  counts(): Promise<JobCount[]>;
  /** The jobs of kind `name` in `state`, the most recently changed first, at most `limit`. */
  list(name: string, state: JobState, limit: number): Promise<JobRecord[]>;
  /** Queues a dead job again for one more try; false when no dead job of that kind has that id. */
  retry(name: string, id: string): Promise<boolean>;
  /** Stops taking jobs and waits (within a bound) for the running ones. */
  stop(): Promise<void>;
}
