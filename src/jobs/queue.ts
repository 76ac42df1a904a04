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

export interface JobQueue {
  start(): Promise<void>;
  /** Registers the handler of a kind of job; jobs of unregistered kinds wait. */
  register(name: string, handler: JobHandler, policy?: Partial<RetryPolicy>): Promise<void>;
  enqueue(name: string, data: object): Promise<string>;
  /** Enqueues many jobs of one kind in a few statements (a campaign's 10,000 messages), returning their ids in order. */
  enqueueMany(name: string, data: object[]): Promise<string[]>;
  get(name: string, id: string): Promise<JobRecord | undefined>;
  /** Jobs waiting, running, and failed or dead (for status and metrics). */
  stats(): Promise<JobStats>;
  /** Stops taking jobs and waits (within a bound) for the running ones. */
  stop(): Promise<void>;
}
