/**
 * Background jobs on the configured database (the embedded runner on SQLite, pg-boss on PostgreSQL):
 * jobs complete, failures retry with backoff until a dead state, the enqueuer can read a job's state,
 * and a job interrupted by a killed process runs to completion after a restart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import type { Sequelize } from 'sequelize';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrator.js';
import { createJobQueue, type JobQueue, type JobRecord } from '../src/jobs/index.js';
import { retriedOnDeadlock } from '../src/jobs/pgboss-queue.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { waitFor } from './helpers/process.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const logger = pino({ level: 'silent' });
const fast = { pollIntervalMs: 50, pollingIntervalSeconds: 0.5, maintenanceIntervalSeconds: 1, jobTimeoutSeconds: 30 };

let database: TestDatabase;
let sequelize: Sequelize;
let queue: JobQueue;

beforeAll(async () => {
  database = await createTestDatabase();
  sequelize = await openDatabase(database.url, logger);
  await migrate(sequelize, logger);
  queue = createJobQueue(database.url, sequelize, logger, fast);
  await queue.start();
});

afterAll(async () => {
  await queue?.stop();
  await sequelize?.close();
  await database?.drop();
});

const settled = (name: string, id: string, states: JobRecord['state'][] = ['completed', 'dead']) =>
  waitFor(
    async () => {
      const job = await queue.get(name, id);
      return job && states.includes(job.state) ? job : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100, what: `job ${id} to reach ${states.join(' or ')}` },
  );

describe('running jobs', () => {
  it('runs a job to completion, keeping its output, and says so to the enqueuer', async () => {
    await queue.register('echo', async (data) => ({ echoed: data }));
    const id = await queue.enqueue('echo', { municipio: 3550308 });
    expect((await queue.get('echo', id))?.state).toMatch(/^(queued|running|completed)$/);
    const job = await settled('echo', id);
    expect(job).toMatchObject({ id, name: 'echo', state: 'completed', attempts: 1, output: { echoed: { municipio: 3550308 } }, error: null });
  });

  it('enqueues many jobs at once (more than one insert holds), each run once with its own data, with its retry policy', async () => {
    const seen: number[] = [];
    let failedOnce = false;
    await queue.register(
      'batch',
      async (data) => {
        const { n } = data as { n: number };
        // One job fails its first try: the batch's jobs take the kind's retry policy.
        if (n === 7 && !failedOnce) {
          failedOnce = true;
          throw new Error('first try of 7');
        }
        seen.push(n);
        return { n };
      },
      { retryLimit: 1, retryDelaySeconds: 1, backoff: false },
    );
    const count = 1_205;
    const ids = await queue.enqueueMany('batch', Array.from({ length: count }, (_, n) => ({ n })));
    expect(ids).toHaveLength(count);
    expect(new Set(ids).size).toBe(count);
    // The whole batch first: job 7's retry may wait behind it, longer than one job's 30 s on a slow machine.
    await waitFor(() => (seen.length >= count ? true : undefined), { timeoutMs: 100_000, intervalMs: 100, what: `${count} batch jobs` });
    expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: count }, (_, n) => n));
    const seventh = await settled('batch', ids[7]!);
    expect(seventh).toMatchObject({ state: 'completed', attempts: 2, output: { n: 7 } });
    expect(await queue.get('batch', ids[1_204]!)).toMatchObject({ state: 'completed', output: { n: 1_204 } });
  }, 150_000);

  it('retries a failing job until it succeeds, showing the failure in between', async () => {
    let calls = 0;
    await queue.register(
      'flaky',
      async () => {
        calls += 1;
        if (calls < 3) throw new Error(`provider timeout ${calls}`);
        return { calls };
      },
      { retryLimit: 3, retryDelaySeconds: 1, backoff: false },
    );
    const id = await queue.enqueue('flaky', {});
    const failedOnce = await settled('flaky', id, ['failed', 'completed']);
    expect(failedOnce.state).toBe('failed');
    expect(failedOnce.error).toMatch(/provider timeout/);
    const job = await settled('flaky', id);
    expect(job).toMatchObject({ state: 'completed', attempts: 3, output: { calls: 3 } });
  });

  it('marks a job dead after its last try, keeping the reason', async () => {
    await queue.register(
      'doomed',
      async () => {
        throw new Error('the elections panel refused the token');
      },
      { retryLimit: 1, retryDelaySeconds: 1, backoff: false },
    );
    const id = await queue.enqueue('doomed', {});
    const job = await settled('doomed', id);
    expect(job).toMatchObject({ state: 'dead', attempts: 2 });
    expect(job.error).toMatch(/refused the token/);
  });

  it('waits longer before each retry with backoff', async () => {
    const tries: number[] = [];
    await queue.register(
      'backing-off',
      async () => {
        tries.push(Date.now());
        if (tries.length < 3) throw new Error('not yet');
      },
      { retryLimit: 3, retryDelaySeconds: 1, backoff: true },
    );
    const id = await queue.enqueue('backing-off', {});
    await settled('backing-off', id);
    const [first, second, third] = tries as [number, number, number];
    expect(second - first).toBeGreaterThanOrEqual(900);
    expect(third - second).toBeGreaterThan(second - first);
  });

  it('counts jobs by state', async () => {
    const stats = await queue.stats();
    expect(stats.failed).toBeGreaterThanOrEqual(1); // the dead job above
    expect(stats.queued).toBeGreaterThanOrEqual(0);
    expect(stats.running).toBeGreaterThanOrEqual(0);
  });
});

describe('surviving a crash', () => {
  const children: ChildProcess[] = [];
  let dir = '';

  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function worker(notes: string, enqueue: boolean): { child: ChildProcess; output: () => string } {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/job-worker.ts', database.url, notes, ...(enqueue ? ['enqueue'] : [])], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    return { child, output: () => output };
  }

  it('runs a job to completion after its process is killed in the middle of it and restarted', async () => {
    dir = mkdtempSync(join(tmpdir(), 'palanque-jobs-'));
    const notes = join(dir, 'notes.txt');
    writeFileSync(notes, '');
    const read = () => readFileSync(notes, 'utf8');

    const first = worker(notes, true);
    const { id } = await waitFor(() => /\{"id":"[^"]+"\}/.exec(first.output())?.[0], { timeoutMs: 30_000, what: 'the job id', output: first.output })
      .then((line) => JSON.parse(line) as { id: string });
    await waitFor(() => (read().includes(`start ${first.child.pid}`) ? true : undefined), { timeoutMs: 30_000, what: 'the job to start', output: read });
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    expect(read()).not.toContain('done');

    const second = worker(notes, false);
    await waitFor(() => (read().includes(`done ${second.child.pid}`) ? true : undefined), {
      timeoutMs: 45_000,
      what: 'the restarted process to finish the job',
      output: () => `${read()}\n${second.output()}`,
    });
    const job = await settled('slow-note', id);
    expect(job).toMatchObject({ state: 'completed', output: { finishedBy: second.child.pid } });
    expect(job.attempts).toBeGreaterThanOrEqual(2);
  }, 90_000);
});

describe('stopping', () => {
  it('waits for a poll under way, so closing the database right after it logs no failure', async () => {
    const lines: string[] = [];
    const capturing = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    for (let round = 0; round < 8; round += 1) {
      const connection = await openDatabase(database.url, logger);
      const own = createJobQueue(database.url, connection, capturing, { ...fast, pollIntervalMs: 1 });
      await own.start();
      await own.register(`idle-${round}`, async () => undefined);
      // Stop at a different point of the polling loop each round.
      await new Promise((resolve) => setTimeout(resolve, round * 3));
      await own.stop();
      await connection.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(lines.filter((line) => line.includes('job polling failed'))).toEqual([]);
  }, 60_000);
});

describe('creating queues on PostgreSQL', () => {
  const deadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01' });

  it('runs the creation again when PostgreSQL aborted it to break a deadlock', async () => {
    let calls = 0;
    const created = await retriedOnDeadlock(async () => {
      calls += 1;
      if (calls === 1) throw deadlock();
      return 'created';
    });
    expect([created, calls]).toEqual(['created', 2]);
  });

  it('gives up after three deadlocks, and never retries another error', async () => {
    let calls = 0;
    await expect(retriedOnDeadlock(async () => { calls += 1; throw deadlock(); })).rejects.toMatchObject({ code: '40P01' });
    expect(calls).toBe(3);
    calls = 0;
    await expect(retriedOnDeadlock(async () => { calls += 1; throw Object.assign(new Error('no'), { code: '42P01' }); })).rejects.toThrow('no');
    expect(calls).toBe(1);
  });
});
