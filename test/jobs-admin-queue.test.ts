/**
 * The admins' view of the job queue on the configured database (the embedded runner on SQLite, pg-boss on
 * PostgreSQL): purging the waiting jobs whose data matches (a canceled campaign's sends), leaving the
 * running, finished and other jobs.
 */
import { pino } from 'pino';
import type { Sequelize } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrator.js';
import { createJobQueue, type JobQueue } from '../src/jobs/index.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { waitFor } from './helpers/process.js';

const logger = pino({ level: 'silent' });
const fast = { pollIntervalMs: 50, pollingIntervalSeconds: 0.5, maintenanceIntervalSeconds: 1, jobTimeoutSeconds: 30 };

let database: TestDatabase;
let sequelize: Sequelize;
let queue: JobQueue;
/** A queue that runs no job (the api role): what it enqueues waits. */
let enqueuer: JobQueue;

beforeAll(async () => {
  database = await createTestDatabase();
  sequelize = await openDatabase(database.url, logger);
  await migrate(sequelize, logger);
  queue = createJobQueue(database.url, sequelize, logger, fast);
  await queue.start();
  enqueuer = createJobQueue(database.url, sequelize, logger, { ...fast, runJobs: false });
  await enqueuer.start();
});

afterAll(async () => {
  await enqueuer?.stop();
  await queue?.stop();
  await sequelize?.close();
  await database?.drop();
});

describe('purging waiting jobs', () => {
  it('deletes only the waiting jobs of that kind whose data matches every field, numbers matching their text', async () => {
    // Registered on a queue that runs nothing (pg-boss needs the queue to exist): every job waits.
    for (const name of ['purge-send', 'purge-other']) await enqueuer.register(name, async () => undefined);
    const campaign7 = await enqueuer.enqueueMany('purge-send', [{ campaign_id: 7, message_id: 1 }, { campaign_id: 7, message_id: 2 }, { campaign_id: '7', message_id: 3 }]);
    const campaign8 = await enqueuer.enqueue('purge-send', { campaign_id: 8, message_id: 4 });
    const otherKind = await enqueuer.enqueue('purge-other', { campaign_id: 7 });
    expect(await queue.purgeQueued('purge-send', { campaign_id: 7, message_id: 2 })).toBe(1);
    expect(await queue.purgeQueued('purge-send', { campaign_id: '7' })).toBe(2);
    expect(await queue.purgeQueued('purge-send', { campaign_id: 7 })).toBe(0);
    for (const id of campaign7) expect(await queue.get('purge-send', id)).toBeUndefined();
    expect((await queue.get('purge-send', campaign8))?.state).toBe('queued');
    expect((await queue.get('purge-other', otherKind))?.state).toBe('queued');
  });

  it('leaves a completed job', async () => {
    await queue.register('purge-done', async () => ({ ok: true }));
    const id = await queue.enqueue('purge-done', { campaign_id: 9 });
    await waitFor(async () => ((await queue.get('purge-done', id))?.state === 'completed' ? true : undefined), { timeoutMs: 20_000, intervalMs: 100, what: 'the job to complete' });
    expect(await queue.purgeQueued('purge-done', { campaign_id: 9 })).toBe(0);
    expect((await queue.get('purge-done', id))?.state).toBe('completed');
  });
});

describe('counting, listing and retrying', () => {
  it('counts jobs by kind and state, lists a kind\'s jobs in a state, and retries a dead job once more', async () => {
    let healed = false;
    await queue.register('admin-flaky', async (data) => {
      if (!healed) throw new Error('the provider is down');
      return { sent: data };
    }, { retryLimit: 0, retryDelaySeconds: 1, backoff: false });
    const id = await queue.enqueue('admin-flaky', { message_id: 41 });
    const dead = await waitFor(async () => {
      const job = await queue.get('admin-flaky', id);
      return job?.state === 'dead' ? job : undefined;
    }, { timeoutMs: 20_000, intervalMs: 100, what: 'the job to die' });
    expect(dead.error).toBe('the provider is down');

    expect(await queue.counts()).toContainEqual({ name: 'admin-flaky', state: 'dead', jobs: 1 });
    const listed = await queue.list('admin-flaky', 'dead', 10);
    expect(listed).toMatchObject([{ id, name: 'admin-flaky', state: 'dead', attempts: 1, data: { message_id: 41 }, error: 'the provider is down' }]);
    expect(await queue.list('admin-flaky', 'completed', 10)).toEqual([]);

    expect(await queue.retry('admin-flaky', 'c0ffee00-0000-4000-8000-000000000000')).toBe(false);
    healed = true;
    expect(await queue.retry('admin-flaky', id)).toBe(true);
    expect(await queue.retry('admin-flaky', id)).toBe(false); // no longer dead
    const done = await waitFor(async () => {
      const job = await queue.get('admin-flaky', id);
      return job?.state === 'completed' ? job : undefined;
    }, { timeoutMs: 20_000, intervalMs: 100, what: 'the retried job to complete' });
    expect(done.output).toEqual({ sent: { message_id: 41 } });
    expect(await queue.counts()).toContainEqual({ name: 'admin-flaky', state: 'completed', jobs: 1 });
  });
});

describe('ids that name no job', () => {
  it('finds no job and retries none for an id that is not one the queue gives', async () => {
    await queue.register('admin-ids', async () => undefined);
    expect(await queue.get('admin-ids', 'not-a-uuid')).toBeUndefined();
    expect(await queue.retry('admin-ids', 'not-a-uuid')).toBe(false);
  });
});
