/**
 * The embedded job runner: jobs in the `jobs` table, run by this process. The embedded SQLite database
 * belongs to one process, so a job still marked `running` at start was interrupted by a crash: start()
 * puts it back in the queue and it runs again.
 */
import { randomUUID } from 'node:crypto';
import { DataTypes, Op, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import type { Logger } from '../logger.js';
import { BULK_INSERT_SIZE, DEFAULT_RETRY_POLICY, type JobHandler, type JobQueue, type JobRecord, type JobStats, type RetryPolicy } from './queue.js';

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
  concurrency?: number;
  stopTimeoutMs?: number;
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

  constructor(
    sequelize: Sequelize,
    private readonly logger: Logger,
    options: TableQueueOptions = {},
  ) {
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
    this.concurrency = options.concurrency ?? 2;
    this.stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
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
    const rows = data.map((item) => ({
      id: randomUUID(),
      name,
      data: JSON.stringify(item),
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
      const output = await registered.handler(JSON.parse(job.data), { id: job.id, attempt: job.attempts, lastAttempt: job.attempts >= job.max_attempts });
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

function toRecord(row: JobRow): JobRecord {
  return {
    id: row.id,
    name: row.name,
    state: row.state,
    attempts: Number(row.attempts),
    data: JSON.parse(row.data),
    output: row.output === null ? null : JSON.parse(row.output),
    error: row.error,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}
