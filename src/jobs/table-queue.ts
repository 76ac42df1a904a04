/**
 * The embedded job runner: jobs in the `jobs` table, run by this process. The embedded SQLite database
 * belongs to one process, so a job still marked `running` at start was interrupted by a crash: start()
 * puts it back in the queue and it runs again.
 */
import { randomUUID } from 'node:crypto';
import { col, DataTypes, fn, Op, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import type { Logger } from '../logger.js';
import { BULK_INSERT_SIZE, DEFAULT_RETRY_POLICY, type JobCount, type JobHandler, type JobQueue, type JobRecord, type JobState, type JobStats, type QueueStats, type RetryPolicy, queueStatsOf } from './queue.js';
import { activeTraceContext, runTraced, withoutTraceContext, withTraceContext } from './trace-context.js';

interface JobRow {
  id: string;
  name: string;
  data: string;
  state: JobRecord['state'];
  attempts: number;
  max_attempts: number;
  retry_delay_ms: number;
  backoff: boolean;
  run_after: Date;
  output: string | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface TableQueueOptions {
  pollIntervalMs?: number;
  /** Jobs run at once (default 2; JOB_CONCURRENCY). */
  concurrency?: number;
  stopTimeoutMs?: number;
  /** false: enqueues, reads and purges jobs but runs none (and leaves `running` ones alone at start). */
  runJobs?: boolean;
}

export class TableJobQueue implements JobQueue {
  private readonly model: ModelStatic<Model<JobRow, JobRow>>;
  private readonly handlers = new Map<string, { handler: JobHandler; policy: RetryPolicy }>();
  private readonly pollIntervalMs: number;
  private readonly concurrency: number;
  private readonly stopTimeoutMs: number;
  private timer: NodeJS.Timeout | undefined;
  /** Polls under way, awaited by stop() so that none queries a database being closed. */
  private readonly polls = new Set<Promise<void>>();
  private running = 0;
  private stopped = true;
  private readonly runJobs: boolean;

  constructor(
    sequelize: Sequelize,
    private readonly logger: Logger,
    options: TableQueueOptions = {},
  ) {
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
    this.concurrency = options.concurrency ?? 2;
    this.stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
    this.runJobs = options.runJobs ?? true;
    this.model = sequelize.define<Model<JobRow, JobRow>>(
      'Job',
      {
        id: { type: DataTypes.STRING(36), primaryKey: true },
        name: DataTypes.STRING(100),
        data: DataTypes.TEXT,
        state: DataTypes.STRING(20),
        attempts: DataTypes.INTEGER,
        max_attempts: DataTypes.INTEGER,
        retry_delay_ms: DataTypes.INTEGER,
        backoff: DataTypes.BOOLEAN,
        run_after: DataTypes.DATE,
        output: DataTypes.TEXT,
        error: DataTypes.TEXT,
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      { tableName: 'jobs', timestamps: false },
    );
  }

  async start(): Promise<void> {
    if (!this.runJobs) return;
    const [interrupted] = await this.model.update({ state: 'queued', updated_at: new Date() }, { where: { state: 'running' } });
    if (interrupted > 0) this.logger.warn({ jobs: interrupted }, 'jobs interrupted by a stop were queued again');
    this.stopped = false;
    this.schedule(0);
  }

  async register(name: string, handler: JobHandler, policy: Partial<RetryPolicy> = {}): Promise<void> {
    this.handlers.set(name, { handler, policy: { ...DEFAULT_RETRY_POLICY, ...policy } });
    this.schedule(0);
  }

  async enqueue(name: string, data: object): Promise<string> {
    const [id] = await this.enqueueMany(name, [data]);
    return id!;
  }

  async enqueueMany(name: string, data: object[]): Promise<string[]> {
    const policy = this.handlers.get(name)?.policy ?? DEFAULT_RETRY_POLICY;
    const now = new Date();
    const trace = activeTraceContext();
    const rows = data.map((item) => ({
      id: randomUUID(),
      name,
      data: JSON.stringify(withTraceContext(item, trace)),
      state: 'queued' as const,
      attempts: 0,
      max_attempts: policy.retryLimit + 1,
      retry_delay_ms: policy.retryDelaySeconds * 1000,
      backoff: policy.backoff,
      run_after: now,
      output: null,
      error: null,
      created_at: now,
      updated_at: now,
    }));
    // One transaction: one commit (one disk sync) for the whole batch rather than one per job.
    await this.model.sequelize!.transaction(async (transaction) => {
      for (let start = 0; start < rows.length; start += BULK_INSERT_SIZE) await this.model.bulkCreate(rows.slice(start, start + BULK_INSERT_SIZE), { transaction });
    });
    this.schedule(0);
    return rows.map((row) => row.id);
  }

  async get(name: string, id: string): Promise<JobRecord | undefined> {
    const row = (await this.model.findOne({ where: { id, name }, raw: true })) as JobRow | null;
    return row ? toRecord(row) : undefined;
  }

  async stats(): Promise<JobStats> {
    const count = (state: JobRecord['state'][]) => this.model.count({ where: { state: { [Op.in]: state } } });
    const [queued, running, failed] = await Promise.all([count(['queued']), count(['running']), count(['failed', 'dead'])]);
    return { queued, running, failed };
  }

  async queueStats(): Promise<QueueStats[]> {
    const rows = (await this.model.findAll({
      attributes: ['name', 'state', [fn('count', col('id')), 'jobs'], [fn('min', col('created_at')), 'oldest']],
      where: { state: { [Op.in]: ['queued', 'failed', 'running'] } },
      group: ['name', 'state'],
      raw: true,
    })) as unknown as Array<{ name: string; state: JobRecord['state']; jobs: number; oldest: string | Date | null }>;
    const now = Date.now();
    const found = new Map<string, QueueStats>();
    for (const row of rows) {
      const stats = found.get(row.name) ?? { name: row.name, waiting: 0, running: 0, oldestWaitingSeconds: 0 };
      found.set(row.name, stats);
      if (row.state === 'running') {
        stats.running += Number(row.jobs);
        continue;
      }
      // `failed` waits for its retry here.
      stats.waiting += Number(row.jobs);
      if (row.oldest !== null) stats.oldestWaitingSeconds = Math.max(stats.oldestWaitingSeconds, (now - new Date(row.oldest).getTime()) / 1000);
    }
    return queueStatsOf(this.handlers.keys(), [...found.values()]);
  }

  async purgeQueued(name: string, match: Record<string, string | number>): Promise<number> {
    // Matched here rather than in SQL: the data is JSON text, and the embedded queue holds few jobs.
    const waiting = (await this.model.findAll({ where: { name, state: { [Op.in]: ['queued', 'failed'] } }, attributes: ['id', 'data'], raw: true })) as unknown as Pick<JobRow, 'id' | 'data'>[];
    const ids = waiting.filter((row) => matches(JSON.parse(row.data), match)).map((row) => row.id);
    let purged = 0;
    // A job claimed meanwhile is no longer queued or failed, and stays.
    for (let start = 0; start < ids.length; start += BULK_INSERT_SIZE) {
      purged += await this.model.destroy({ where: { id: { [Op.in]: ids.slice(start, start + BULK_INSERT_SIZE) }, state: { [Op.in]: ['queued', 'failed'] } } });
    }
    return purged;
  }

  async counts(): Promise<JobCount[]> {
    const rows = (await this.model.findAll({
      attributes: ['name', 'state', [this.model.sequelize!.fn('COUNT', this.model.sequelize!.col('id')), 'jobs']],
      group: ['name', 'state'],
      order: [['name', 'ASC']],
      raw: true,
    })) as unknown as Array<{ name: string; state: JobState; jobs: number | string }>;
    return rows.map((row) => ({ name: row.name, state: row.state, jobs: Number(row.jobs) }));
  }

  async list(name: string, state: JobState, limit: number): Promise<JobRecord[]> {
    const rows = (await this.model.findAll({ where: { name, state }, order: [['updated_at', 'DESC'], ['id', 'ASC']], limit, raw: true })) as unknown as JobRow[];
    return rows.map(toRecord);
  }

  async retry(name: string, id: string): Promise<boolean> {
    const dead = (await this.model.findOne({ where: { id, name, state: 'dead' }, raw: true })) as JobRow | null;
    if (!dead) return false;
    const [retried] = await this.model.update(
      { state: 'queued', max_attempts: Number(dead.attempts) + 1, run_after: new Date(), updated_at: new Date() },
      { where: { id, state: 'dead' } },
    );
    if (retried === 1) this.schedule(0);
    return retried === 1;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.all(this.polls);
    const deadline = Date.now() + this.stopTimeoutMs;
    while (this.running > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      const poll = this.poll().finally(() => this.polls.delete(poll));
      this.polls.add(poll);
    }, delayMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    try {
      while (!this.stopped && this.running < this.concurrency) {
        const job = await this.claimNext();
        if (!job) break;
        this.running += 1;
        void this.execute(job).finally(() => {
          this.running -= 1;
          this.schedule(0);
        });
      }
    } catch (error) {
      this.logger.error({ err: error }, 'job polling failed');
    }
    this.schedule(this.pollIntervalMs);
  }

  /** The oldest due job of a registered kind, marked running (only one poller can win the update). */
  private async claimNext(): Promise<JobRow | undefined> {
    if (this.handlers.size === 0) return undefined;
    const now = new Date();
    const candidate = (await this.model.findOne({
      where: { name: { [Op.in]: [...this.handlers.keys()] }, state: { [Op.in]: ['queued', 'failed'] }, run_after: { [Op.lte]: now } },
      order: [['run_after', 'ASC']],
      raw: true,
    })) as JobRow | null;
    if (!candidate) return undefined;
    const [claimed] = await this.model.update(
      { state: 'running', attempts: candidate.attempts + 1, updated_at: now },
      { where: { id: candidate.id, state: candidate.state } },
    );
    return claimed === 1 ? { ...candidate, state: 'running', attempts: candidate.attempts + 1 } : undefined;
  }

  private async execute(job: JobRow): Promise<void> {
    const registered = this.handlers.get(job.name);
    if (!registered) return;
    try {
      const output = await runTraced(job.name, JSON.parse(job.data), { id: job.id, attempt: job.attempts, lastAttempt: job.attempts >= job.max_attempts }, registered.handler);
      await this.model.update({ state: 'completed', output: JSON.stringify(output ?? null), error: null, updated_at: new Date() }, { where: { id: job.id } });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const dead = job.attempts >= job.max_attempts;
      const delay = job.retry_delay_ms * (job.backoff ? 2 ** (job.attempts - 1) : 1);
      await this.model.update(
        { state: dead ? 'dead' : 'failed', error: reason, run_after: new Date(Date.now() + delay), updated_at: new Date() },
        { where: { id: job.id } },
      );
      this.logger.warn({ job_id: job.id, job: job.name, attempt: job.attempts, dead, reason }, dead ? 'job is dead' : 'job failed; it will be retried');
    }
  }
}

function matches(data: unknown, match: Record<string, string | number>): boolean {
  if (typeof data !== 'object' || data === null) return false;
  const fields = data as Record<string, unknown>;
  return Object.entries(match).every(([field, value]) => fields[field] !== undefined && fields[field] !== null && String(fields[field]) === String(value));
}

function toRecord(row: JobRow): JobRecord {
  return {
    id: row.id,
    name: row.name,
    state: row.state,
    attempts: Number(row.attempts),
    data: withoutTraceContext(JSON.parse(row.data)),
    output: row.output === null ? null : JSON.parse(row.output),
    error: row.error,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}
