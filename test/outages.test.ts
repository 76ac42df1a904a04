/**
 * An outage is a 503, never a 401 or a 500 (issue 41, part 3), through the real app:
 * - the key table unreachable answers 503 `service_unavailable` with Retry-After (not 401, and no SQL),
 *   logged at error with its cause, and counted as a 5xx;
 * - a request whose write waits behind a lock held by another connection meets its deadline
 *   (REQUEST_DEADLINE_MS): its statement is cancelled, its transaction rolled back, the client gets 503,
 *   and the same Idempotency-Key sent again applies the write exactly once;
 * - the probes: /livez, and /readyz with the database, the migrations and Redis;
 * - on PostgreSQL (TEST_DATABASE_URL's server, or the local one, whatever the run): a connection killed by
 *   pg_terminate_backend answers 503, the statement timeout (DB_STATEMENT_TIMEOUT_MS) cancels pg_sleep on
 *   Sequelize's pool and the Reader, and ends a request held by a lock in 503 with its transaction rolled back.
 * The general tests run on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { ConnectionRefusedError, DatabaseError, QueryTypes } from 'sequelize';
import { pino } from 'pino';
import sqlite3 from 'sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { Deadline, withinDeadline } from '../src/db/deadlines.js';
import { openDatabase } from '../src/db/database.js';
import { isOutage, jobQueueError } from '../src/db/outages.js';
import { readerOf } from '../src/db/reader.js';
import { translateOutage } from '../src/http/errors.js';
import { createUser, type TestUser } from './helpers/accounts.js';
import { appsClosedAfterEach, type TestApp } from './helpers/app.js';
import { createPostgresDatabase, createTestDatabase, type TestDatabase } from './helpers/database.js';
import { expectError, request, type Result } from './helpers/http.js';

const POSTGRES_SERVER = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const METRICS_TOKEN = 'metrics-token-of-the-outage-tests';
const startApp = appsClosedAfterEach();
const silent = pino({ level: 'silent' });

const databases: TestDatabase[] = [];
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  await Promise.all(databases.splice(0).map((database) => database.drop()));
});

async function postgresDatabase(): Promise<TestDatabase> {
  const database = await createPostgresDatabase(POSTGRES_SERVER);
  databases.push(database);
  return database;
}

/** No driver text in an answer: no SQL, no table, no host, no stack. */
function expectNoInternals(result: Result): void {
  expect(result.text).not.toMatch(/api_tokens|relation|SELECT|SQLITE|sqlite|postgres|127\.0\.0\.1|\bat \S+:\d+/i);
}

function expectOutage(result: Result): void {
  expectError(result, 503, 'service_unavailable');
  expect(Number(result.headers.get('retry-after'))).toBeGreaterThan(0);
  expectNoInternals(result);
}

/** The count of answers of `status` in the app's metrics. */
async function answersCounted(app: TestApp, status: number): Promise<number> {
  const text = await (await fetch(`${app.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  return [...text.matchAll(new RegExp(`^palanque_http_requests_total\\{[^}]*status="${status}"[^}]*\\} (\\d+)`, 'gm'))].reduce((sum, match) => sum + Number(match[1]), 0);
}

const entityBody = (name: string) => ({ nome: name });
const addEntity = (app: TestApp, user: TestUser, name: string, key: string) =>
  request(app.baseUrl, 'POST', '/api/entidade/add/?tp=candidato', { ...user.headers, 'Idempotency-Key': key }, entityBody(name));

async function entitiesNamed(app: TestApp, name: string): Promise<number> {
  return app.entities.models.Entity.count({ where: { nome: name } });
}

/** Waits until `check` holds, polling. */
async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Another connection holds a lock the app's next write waits for: on PostgreSQL `LOCK TABLE <table>` in a
 * transaction (the write's earlier statements run, then it waits), on SQLite the file's write lock.
 * Returns the release.
 */
async function holdWriteLock(database: TestDatabase, table: string): Promise<() => Promise<void>> {
  if (database.dialect === 'postgres') {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await client.query('BEGIN');
    await client.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    return async () => {
      await client.query('ROLLBACK');
      await client.end();
    };
  }
  const file = database.url.slice('sqlite:'.length);
  const connection = await new Promise<sqlite3.Database>((resolve, reject) => {
    const opened = new sqlite3.Database(file, (error) => (error ? reject(error) : resolve(opened)));
  });
  const exec = (sql: string) => new Promise<void>((resolve, reject) => connection.exec(sql, (error) => (error ? reject(error) : resolve())));
  await exec('BEGIN IMMEDIATE');
  return async () => {
    await exec('ROLLBACK');
    await new Promise<void>((resolve) => connection.close(() => resolve()));
  };
}

describe('the key table unreachable', () => {
  it('answers 503 service_unavailable with Retry-After, not 401 with SQL; logs the cause at error and counts a 5xx', async () => {
    const app = await startApp({ config: { metricsToken: METRICS_TOKEN } });
    const user = await createUser(app);
    expect((await request(app.baseUrl, 'GET', '/api/entidade/', user.headers)).status).toBe(200);
    const before = await answersCounted(app, 503);

    await app.sequelize.query('ALTER TABLE api_tokens RENAME TO api_tokens_away');
    try {
      // A read the read lane would serve, and a write through the whole pipeline: the same answer.
      for (const result of [
        await request(app.baseUrl, 'GET', '/api/entidade/', user.headers),
        await request(app.baseUrl, 'POST', '/api/entidade/add/?tp=candidato', user.headers, entityBody('Nunca')),
      ]) {
        expectOutage(result);
        expect(result.headers.get('www-authenticate')).toBeNull();
      }
      const failures = app.logs.filter((line) => line.msg === 'request failed' && line.level === 50);
      expect(failures.length).toBeGreaterThanOrEqual(2);
      expect(JSON.stringify(failures[0]!.err)).toMatch(/api_tokens/); // the cause, in the log only
      expect((await answersCounted(app, 503)) - before).toBe(2);
      expect(await answersCounted(app, 401)).toBe(0);
    } finally {
      await app.sequelize.query('ALTER TABLE api_tokens_away RENAME TO api_tokens');
    }
    // Back: the same key works, nobody was logged out.
    expect((await request(app.baseUrl, 'GET', '/api/entidade/', user.headers)).status).toBe(200);
    // A wrong key is still a 401.
    expectError(await request(app.baseUrl, 'GET', '/api/entidade/', { Authorization: 'Token plq_wrong' }), 401, 'unauthorized');
  });

  it('answers 503 on the read lane too (responses not validated, as in production)', async () => {
    const app = await startApp({ config: { validateResponses: false } });
    const user = await createUser(app);
    expect((await request(app.baseUrl, 'GET', '/api/entidade/', user.headers)).status).toBe(200);
    await app.sequelize.query('ALTER TABLE api_tokens RENAME TO api_tokens_away');
    try {
      expectOutage(await request(app.baseUrl, 'GET', '/api/entidade/', user.headers));
    } finally {
      await app.sequelize.query('ALTER TABLE api_tokens_away RENAME TO api_tokens');
    }
  });
});

describe('the request deadline (REQUEST_DEADLINE_MS)', () => {
  it('cancels a write held by a lock, rolls it back, answers 503, and the same Idempotency-Key then applies it exactly once', async () => {
    const database = await createTestDatabase({ migrated: true });
    databases.push(database);
    const deadlineMs = 1_500;
    const app = await startApp({ database, config: { requestDeadlineMs: deadlineMs } });
    const user = await createUser(app);
    // The key's first use writes when it was used (accounts/tokens.ts), before the deadline starts: done here, not under the lock.
    expect((await request(app.baseUrl, 'GET', '/api/entidade/', user.headers)).status).toBe(200);
    const name = `Prazo ${randomUUID().slice(0, 8)}`;
    const key = randomUUID();

    // entity_members is written after the entity row, in the same transaction (on SQLite the whole file is held).
    const release = await holdWriteLock(database, 'entity_members');
    let refused: Result;
    const started = Date.now();
    try {
      refused = await addEntity(app, user, name, key);
    } finally {
      await release();
    }
    expectOutage(refused);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(deadlineMs - 100);
    expect(took).toBeLessThan(deadlineMs + 15_000);
    // Rolled back: the entity row written before the wait is gone, and nothing was stored for the key.
    expect(await entitiesNamed(app, name)).toBe(0);

    const applied = await addEntity(app, user, name, key);
    expect(applied.status, applied.text).toBe(201);
    expect(applied.headers.get('idempotent-replayed')).toBeNull();
    const replayed = await addEntity(app, user, name, key);
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.data.id).toBe(applied.body.data.id);
    expect(await entitiesNamed(app, name)).toBe(1);
    expect(app.logs.some((line) => line.level === 50)).toBe(true);
  });

  it('lets a request that finishes in time answer as usual, and refuses nothing afterwards', async () => {
    const app = await startApp({ config: { requestDeadlineMs: 5_000 } });
    const user = await createUser(app);
    const created = await addEntity(app, user, 'A tempo', randomUUID());
    expect(created.status, created.text).toBe(201);
  });
});

describe('statements under a deadline (db/deadlines.ts)', () => {
  it('refuses what a request would start once its deadline passed, but always lets a rollback run', async () => {
    const database = await createTestDatabase({ migrated: true });
    databases.push(database);
    const sequelize = await openDatabase(database.url, silent);
    cleanups.push(() => sequelize.close());
    const deadline = new Deadline();
    let settled = false;
    await withinDeadline(deadline, async () => {
      await sequelize.query('SELECT 1');
      const transaction = await sequelize.transaction();
      await sequelize.query('SELECT 1', { transaction });
      deadline.expire();
      const refused = await sequelize.query('SELECT 1').catch((error: unknown) => error);
      expect((refused as Error).name).toBe('DeadlineExceededError');
      expect(isOutage(refused)).toBe(true);
      expect(translateOutage(refused, {} as never)?.status).toBe(503);
      await expect(sequelize.query('SELECT 1', { transaction })).rejects.toThrow(/deadline/);
      // The transaction is open: not settled until it ends, and its rollback runs.
      void deadline.settled().then(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(settled).toBe(false);
      await transaction.rollback();
    });
    await deadline.settled();
    expect(settled).toBe(true);
    // Outside the request, work goes on.
    await expect(sequelize.query('SELECT 1')).resolves.toBeDefined();
  });
});

describe('the probes', () => {
  it('/livez is 200 without reading anything; /readyz is 200 with each check, then 503 when the database is gone', async () => {
    const database = await createTestDatabase({ migrated: true });
    databases.push(database);
    const app = await startApp({ database });
    const live = await request(app.baseUrl, 'GET', '/livez');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'live' });

    const ready = await request(app.baseUrl, 'GET', '/readyz');
    expect(ready.status, ready.text).toBe(200);
    expect(ready.headers.get('cache-control')).toBe('no-store');
    expect(ready.body).toEqual({
      status: 'ready',
      checks: { database: { state: 'ok', latency_ms: expect.any(Number) }, migrations: { state: 'ok', latency_ms: expect.any(Number) } },
    });
    // No key needed, and not an operation of the contract: the validator never sees them.
    expect((await fetch(`${app.baseUrl}/readyz`, { method: 'HEAD' })).status).toBe(200);

    // A migration this build knows is missing: not ready. A newer schema's extra migration is fine.
    await app.sequelize.query(`INSERT INTO migrations (name) VALUES ('9999-from-the-next-release')`);
    const [rows] = await app.sequelize.query('SELECT name FROM migrations ORDER BY name DESC');
    const last = (rows as Array<{ name: string }>).find((row) => row.name !== '9999-from-the-next-release')!.name;
    await app.sequelize.query(`DELETE FROM migrations WHERE name = '${last}'`);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // the answer is kept a second
    const behind = await request(app.baseUrl, 'GET', '/readyz');
    expect(behind.status).toBe(503);
    expect(behind.body.checks.migrations).toMatchObject({ state: 'behind', missing: 1 });
    await app.sequelize.query(`INSERT INTO migrations (name) VALUES ('${last}')`);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await request(app.baseUrl, 'GET', '/readyz')).status).toBe(200);

    // The database gone.
    await makeDatabaseUnreachable(app, database);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const gone = await request(app.baseUrl, 'GET', '/readyz');
    expect(gone.status).toBe(503);
    expect(gone.body.status).toBe('not_ready');
    expect(['failing', 'timeout']).toContain(gone.body.checks.database.state);
    expectNoInternals(gone);
    expect(gone.text).not.toContain(database.url);
    expect((await request(app.baseUrl, 'GET', '/livez')).status).toBe(200);
    expect(app.logs.some((line) => line.level === 50 && String(line.msg).startsWith('not ready'))).toBe(true);
  });

  it('/readyz reports Redis when it is configured, without failing on it (the API serves without Redis)', async () => {
    const down = new Redis('redis://127.0.0.1:9', { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => null });
    down.on('error', () => undefined);
    cleanups.push(async () => down.disconnect());
    const withoutRedis = await startApp({ redis: down });
    const answer = await request(withoutRedis.baseUrl, 'GET', '/readyz');
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.checks.redis).toEqual({ state: expect.stringMatching(/^(failing|timeout)$/), required: false });
    expect(answer.body.checks.database.state).toBe('ok');

    const up = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
    await up.connect();
    cleanups.push(() => up.quit());
    const withRedis = await startApp({ redis: up });
    const ready = await request(withRedis.baseUrl, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.checks.redis).toMatchObject({ state: 'ok', required: false });
  });
});

/** SQLite: no connection can be had (as when the file cannot be opened). PostgreSQL: connections are refused and the open ones ended. */
async function makeDatabaseUnreachable(app: TestApp, database: TestDatabase): Promise<void> {
  if (database.dialect === 'sqlite') {
    const manager = app.sequelize.connectionManager as unknown as { getConnection: (options?: unknown) => Promise<unknown> };
    const getConnection = manager.getConnection;
    manager.getConnection = () => Promise.reject(Object.assign(new Error('SQLITE_CANTOPEN: unable to open database file'), { code: 'SQLITE_CANTOPEN' }));
    cleanups.push(async () => void (manager.getConnection = getConnection));
    return;
  }
  const name = new URL(database.url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: POSTGRES_SERVER });
  await admin.connect();
  await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
  await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
  await admin.end();
  cleanups.push(async () => {
    const again = new pg.Client({ connectionString: POSTGRES_SERVER });
    await again.connect();
    await again.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    await again.end();
  });
}

describe('on PostgreSQL', () => {
  it('a connection killed by pg_terminate_backend under a request answers 503, not 500', async () => {
    const database = await postgresDatabase();
    const app = await startApp({ database });
    const user = await createUser(app);
    const release = await holdWriteLock(database, 'entity_members');
    try {
      const pending = addEntity(app, user, 'Cortada', randomUUID());
      const admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
      cleanups.push(() => admin.end());
      let killed = 0;
      await until(async () => {
        const { rows } = await admin.query(
          `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`,
        );
        killed += rows.length;
        return killed > 0;
      }, 'the request to wait for the lock');
      expectOutage(await pending);
    } finally {
      await release();
    }
    expect(await entitiesNamed(app, 'Cortada')).toBe(0);
  });

  it('the statement timeout cancels a long statement on the pool and on the Reader (57014: an outage)', async () => {
    const database = await postgresDatabase();
    const sequelize = await openDatabase(database.url, silent, { statementTimeoutMs: 300 });
    cleanups.push(() => sequelize.close());
    // Not a setting of the session (a transaction pooler would refuse it as a startup parameter, or pass it
    // on to other clients): each statement is cancelled by the client (db/deadlines.ts).
    const [setting] = await sequelize.query<{ statement_timeout: string }>('SHOW statement_timeout', { type: QueryTypes.SELECT });
    expect(setting!.statement_timeout).toBe('0');
    for (const run of [() => sequelize.query('SELECT pg_sleep(5)'), () => readerOf(sequelize).row('SELECT pg_sleep(5)')]) {
      const started = Date.now();
      const error = await run().then(() => undefined, (failure: unknown) => failure);
      expect(Date.now() - started).toBeLessThan(4_000);
      expect(isOutage(error)).toBe(true);
      expect(translateOutage(error, {} as never)?.status).toBe(503);
    }
  });

  it('the statement timeout ends a write held by a lock in 503, rolled back; the retry applies it once', async () => {
    const database = await postgresDatabase();
    // The app's own pool is opened by the test helper without a timeout: the database's default stands in for it.
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    await admin.query(`ALTER DATABASE ${new URL(database.url).pathname.slice(1)} SET statement_timeout = '1000ms'`);
    await admin.end();
    const app = await startApp({ database, config: { requestDeadlineMs: 60_000 } });
    const user = await createUser(app);
    const key = randomUUID();
    const release = await holdWriteLock(database, 'entity_members');
    let refused: Result;
    try {
      refused = await addEntity(app, user, 'Sem tempo', key);
    } finally {
      await release();
    }
    expectOutage(refused);
    expect(await entitiesNamed(app, 'Sem tempo')).toBe(0);
    expect((await addEntity(app, user, 'Sem tempo', key)).status).toBe(201);
    expect((await addEntity(app, user, 'Sem tempo', key)).headers.get('idempotent-replayed')).toBe('true');
    expect(await entitiesNamed(app, 'Sem tempo')).toBe(1);
  });
});

describe('on SQLite', () => {
  it('the statement timeout interrupts a statement that runs too long (SQLITE_INTERRUPT: an outage)', async () => {
    // Whatever the run, an SQLite file.
    const folder = await mkdtemp(join(tmpdir(), 'palanque-outage-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const sequelize = await openDatabase(`sqlite:${join(folder, 'slow.sqlite')}`, silent, { statementTimeoutMs: 300 });
    cleanups.push(() => sequelize.close());
    const started = Date.now();
    const error = await sequelize
      .query('WITH RECURSIVE counter(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM counter) SELECT count(*) FROM counter')
      .then(() => undefined, (failure: unknown) => failure);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(String((error as Error).message)).toMatch(/interrupt/i);
    expect(isOutage(error)).toBe(true);
  });
});

describe('which failures are outages (db/outages.ts)', () => {
  const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
  it('the database or the queue out of reach, a cancelled statement: yes; a constraint, a missing table, a provider down: no', () => {
    expect(isOutage(new ConnectionRefusedError(withCode('connect ECONNREFUSED', 'ECONNREFUSED')))).toBe(true);
    expect(isOutage(new DatabaseError(withCode('read ECONNRESET', 'ECONNRESET') as never))).toBe(true);
    expect(isOutage(new DatabaseError(withCode('terminating connection due to administrator command', '57P01') as never))).toBe(true);
    expect(isOutage(new DatabaseError(withCode('too many connections', '53300') as never))).toBe(true);
    expect(isOutage(withCode('SQLITE_BUSY: database is locked', 'SQLITE_BUSY'))).toBe(true);
    expect(isOutage(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isOutage(jobQueueError(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')))).toBe(true);
    expect(isOutage(jobQueueError(withCode('duplicate key', '23505')))).toBe(false);
    expect(isOutage(new DatabaseError(withCode('relation "x" does not exist', '42P01') as never))).toBe(false);
    expect(isOutage(new DatabaseError(withCode('violates foreign key constraint', '23503') as never))).toBe(false);
    // An HTTP client's failure (fetch wraps it as `cause`) says nothing of the database.
    expect(isOutage(new TypeError('fetch failed', { cause: withCode('socket hang up', 'ECONNRESET') }))).toBe(false);
    expect(isOutage(withCode('connect ECONNREFUSED 10.0.0.9:443', 'ECONNREFUSED'))).toBe(false);
  });
});

describe('the configuration', () => {
  it('takes DB_STATEMENT_TIMEOUT_MS and REQUEST_DEADLINE_MS (10 s and 30 s by default, 0 for none) and refuses nonsense', () => {
    expect(loadConfig({})).toMatchObject({ dbStatementTimeoutMs: 10_000, requestDeadlineMs: 30_000 });
    expect(loadConfig({ DB_STATEMENT_TIMEOUT_MS: '0', REQUEST_DEADLINE_MS: '0' })).toMatchObject({ dbStatementTimeoutMs: 0, requestDeadlineMs: 0 });
    expect(() => loadConfig({ DB_STATEMENT_TIMEOUT_MS: '5' })).toThrow(/DB_STATEMENT_TIMEOUT_MS/);
    expect(() => loadConfig({ REQUEST_DEADLINE_MS: 'soon' })).toThrow(/REQUEST_DEADLINE_MS/);
  });
});
