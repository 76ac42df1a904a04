/**
 * Behind PgBouncer in transaction mode (issue 43; docs/operations.md, "Behind a transaction pooler"):
 * each transaction of a client may run on another server connection, and PgBouncer refuses startup
 * parameters it does not know. The server must work there: its Reader, its statement bounds, the
 * migrations' and the job queue's locks, and (without Redis) the key revocations, whose LISTEN connects
 * to PostgreSQL itself (DATABASE_DIRECT_URL).
 *
 * Needs TEST_PGBOUNCER_URL, a PgBouncer in transaction mode in front of TEST_DATABASE_URL's server
 * (or the local one), with a `*` database line so that it reaches the databases created here: .ci/run
 * starts one (`npm run test:pooler`). Not part of `npm test`, which has no pooler.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import postgres from 'postgres';
import { QueryTypes, type Sequelize } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { isOutage } from '../../src/db/outages.js';
import { createJobQueue } from '../../src/jobs/index.js';
import { readerOf } from '../../src/db/reader.js';
import { createLogger } from '../../src/logger.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/database.js';
import { request } from '../helpers/http.js';
import { startInstance, tearDownCluster, type Instance } from '../helpers/instances.js';

const POSTGRES_SERVER = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const POOLER = process.env.TEST_PGBOUNCER_URL;
const ADMIN = { username: 'admin.pooler', password: 'uma-senha-bem-longa-para-testes' };
const silent = createLogger('silent');

let database: TestDatabase;
/** The test database, through the pooler. */
let pooledUrl: string;

/** `url`'s database, reached through the pooler. */
function throughPooler(url: string): string {
  if (!POOLER) throw new Error('TEST_PGBOUNCER_URL must name a PgBouncer in transaction mode in front of the test PostgreSQL server (.ci/run starts one)');
  const pooled = new URL(POOLER);
  pooled.pathname = new URL(url).pathname;
  return pooled.toString();
}

beforeAll(async () => {
  database = await createPostgresDatabase(POSTGRES_SERVER);
  pooledUrl = throughPooler(database.url);
});

afterAll(async () => {
  await database?.drop();
});

describe('the pooler under test', () => {
  it('is PgBouncer: it refuses default_transaction_read_only as a startup parameter, as the Reader sent it before', async () => {
    const refusing = postgres(pooledUrl, { max: 1, connection: { default_transaction_read_only: true }, onnotice: () => undefined });
    try {
      await expect(refusing.unsafe('SELECT 1')).rejects.toThrow(/unsupported startup parameter: default_transaction_read_only/);
    } finally {
      await refusing.end({ timeout: 1 });
    }
  });

  it('pools by transaction: one client\'s statements run on several server connections', async () => {
    const clients = await Promise.all(Array.from({ length: 4 }, async () => {
      const client = new pg.Client({ connectionString: pooledUrl });
      await client.connect();
      return client;
    }));
    try {
      const seen = new Set<number>();
      for (let round = 0; round < 10; round += 1) {
        const pids = await Promise.all(clients.map(async (client) => (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.01)')).rows[0]!.pid));
        seen.add(pids[0]!);
      }
      expect(seen.size).toBeGreaterThan(1);
    } finally {
      await Promise.all(clients.map((client) => client.end()));
    }
  });
});

describe('the database layer through the pooler', () => {
  let sequelize: Sequelize;

  beforeAll(async () => {
    sequelize = await openDatabase(pooledUrl, silent, { statementTimeoutMs: 500, preparedStatements: false, readPoolMax: 4, poolMax: 4 });
    await sequelize.query('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    await sequelize.query("INSERT INTO notes VALUES (1, 'primeira'), (2, 'segunda')");
  });

  afterAll(async () => {
    await sequelize?.close();
  });

  it('the Reader connects, answers many different reads at once, and refuses writes', async () => {
    const reader = readerOf(sequelize);
    // Distinct texts, many at once on four connections: each a statement of its own.
    const answers = await Promise.all(
      Array.from({ length: 300 }, (_, index) => reader.row<{ id: number; n: number }>(`SELECT id, ${index} AS n FROM notes WHERE id = ?`, [1 + (index % 2)])),
    );
    expect(answers.map((answer) => [answer!.id, answer!.n])).toEqual(Array.from({ length: 300 }, (_, index) => [1 + (index % 2), index]));
    await expect(reader.rows("WITH changed AS (SELECT 1) UPDATE notes SET body = 'mudada' WHERE id = ?", [1])).rejects.toThrow(/read-only transaction/);
    await expect(reader.row("SELECT set_config('transaction_read_only', 'off', false)")).rejects.toThrow(/read-write/);
    const [row] = await sequelize.query<{ body: string }>('SELECT body FROM notes WHERE id = 1', { type: QueryTypes.SELECT });
    expect(row!.body).toBe('primeira');
  });

  it('bounds a statement of the pool and of the Reader by DB_STATEMENT_TIMEOUT_MS (57014: an outage), and the connections serve on', async () => {
    for (const run of [() => sequelize.query('SELECT pg_sleep(5)'), () => readerOf(sequelize).row('SELECT pg_sleep(5)')]) {
      const started = Date.now();
      const error = await run().then(() => undefined, (failure: unknown) => failure);
      expect(Date.now() - started).toBeLessThan(4_000);
      expect((error as { parent?: { code?: string }; code?: string }).parent?.code ?? (error as { code?: string }).code).toBe('57014');
      expect(isOutage(error)).toBe(true);
    }
    expect(await readerOf(sequelize).row<{ id: number }>('SELECT id FROM notes WHERE id = ?', [2])).toEqual({ id: 2 });
    const [row] = await sequelize.query<{ id: number }>('SELECT id FROM notes WHERE id = 2', { type: QueryTypes.SELECT });
    expect(row).toEqual({ id: 2 });
  });
});

describe('the job queue (pg-boss) through the pooler', () => {
  it('creates its schema and queues, and runs each job enqueued once', async () => {
    const sequelize = await openDatabase(pooledUrl, silent, { preparedStatements: false });
    const queue = createJobQueue(pooledUrl, sequelize, silent, { pollingIntervalSeconds: 0.5, maintenanceIntervalSeconds: 1 });
    try {
      await queue.start();
      const seen: number[] = [];
      await queue.register('pooler-check', async (data) => {
        seen.push((data as { n: number }).n);
      });
      await queue.enqueueMany('pooler-check', Array.from({ length: 15 }, (_, n) => ({ n })));
      await queue.enqueue('pooler-check', { n: 15 });
      await expect.poll(() => seen.length, { timeout: 20_000, interval: 100 }).toBe(16);
      expect([...seen].sort((x, y) => x - y)).toEqual(Array.from({ length: 16 }, (_, n) => n));
      await expect.poll(async () => (await queue.stats()).running + (await queue.stats()).queued, { timeout: 10_000 }).toBe(0);
    } finally {
      await queue.stop();
      await sequelize.close();
    }
  });
});

describe('two instances through the pooler, without Redis', () => {
  let instances: Instance[] = [];
  let db: pg.Client;

  const start = (name: string) =>
    startInstance(name, {
      databaseUrl: pooledUrl,
      env: {
        DATABASE_DIRECT_URL: database.url,
        DATABASE_PREPARED_STATEMENTS: 'false',
        DB_POOL_MAX: '5',
        DB_READ_POOL_MAX: '3',
        // As in production: the read lane, and no response validation (the CPU of a loaded CI machine).
        VALIDATE_RESPONSES: 'false',
        // Unprepared, each read with parameters takes two round trips (its types are asked first), and
        // PostgreSQL's timer runs from the first: an instance starved of CPU for 10 s by a loaded machine
        // (seen beside seven other suites on two cores) timed its reads out. The bound itself is tested above.
        DB_STATEMENT_TIMEOUT_MS: '30000',
        RATE_LIMIT_AUTH: '200/60',
        RATE_LIMIT_READ: '5000/60',
        RATE_LIMIT_WRITE: '2000/60',
        // Far longer than a revocation may take: only the LISTEN's notices can explain a refusal.
        AUTH_CACHE_SECONDS: '30',
        ADMIN_USERNAME: ADMIN.username,
        ADMIN_PASSWORD: ADMIN.password,
      },
    });

  beforeAll(async () => {
    // Both at once on the empty database: the migrations' and the job queues' locks, through the pooler.
    const started = await Promise.allSettled([start('A'), start('B')]);
    instances = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failed = started.flatMap((result) => (result.status === 'rejected' ? [String(result.reason)] : []));
    if (failed.length > 0) throw new Error(failed.join('\n'));
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
  }, 120_000);

  afterAll(async () => {
    await tearDownCluster({ instances, db, database: undefined, redis: undefined, rateLimitPrefix: '' });
  });

  const auth = (key: string) => ({ Authorization: `Token ${key}` });
  const output = () => instances.map((instance) => instance.output()).join('\n');

  async function login(instance: Instance): Promise<string> {
    const answer = await request(instance.baseUrl, 'POST', '/api/auth/login', {}, ADMIN);
    expect(answer.status, `${answer.text}\n${output()}`).toBe(200);
    return answer.body.data.token as string;
  }

  it('answer 140 authenticated calls, reads and writes, on both instances: no 401, no 500', async () => {
    const [a, b] = instances as [Instance, Instance];
    const key = await login(a);
    const run = randomBytes(3).toString('hex');
    const calls: Array<() => Promise<{ status: number; text: string }>> = [];
    for (let index = 0; index < 140; index += 1) {
      const instance = index % 2 === 0 ? a : b;
      if (index % 10 === 0) calls.push(() => request(instance.baseUrl, 'POST', '/api/entidade/add/', auth(key), { nome: `Entidade ${run} ${index}` }));
      else if (index % 3 === 0) calls.push(() => request(instance.baseUrl, 'GET', '/api/entidade/', auth(key)));
      else if (index % 3 === 1) calls.push(() => request(instance.baseUrl, 'GET', '/api/notifications/unread_count/', auth(key)));
      else calls.push(() => request(instance.baseUrl, 'GET', '/api/controle/system_is_online/', auth(key)));
    }
    const statuses: number[] = [];
    // Twenty at a time: each instance's pools are busy, and their transactions share the pooler's connections.
    for (let offset = 0; offset < calls.length; offset += 20) {
      const answers = await Promise.all(calls.slice(offset, offset + 20).map((call) => call()));
      for (const answer of answers) {
        expect([200, 201], `${answer.status} ${answer.text}\n${output()}`).toContain(answer.status);
        statuses.push(answer.status);
      }
    }
    expect(statuses).toHaveLength(140);
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM entities WHERE nome LIKE $1`, [`Entidade ${run} %`]);
    expect(rows[0]!.n).toBe(14);
    for (const instance of instances) expect(instance.exited(), instance.output()).toBe(false);
  });

  it('refuse within a second, on the other instance, a key logged out on one: the notice comes by LISTEN on DATABASE_DIRECT_URL', async () => {
    const [a, b] = instances as [Instance, Instance];
    const key = await login(a);
    // Both instances now hold the key in their caches (AUTH_CACHE_SECONDS: 30).
    for (const instance of [a, b]) expect((await request(instance.baseUrl, 'GET', '/api/controle/system_is_online/', auth(key))).status).toBe(200);
    const logout = await request(a.baseUrl, 'POST', '/api/auth/logout', auth(key));
    expect(logout.status, logout.text).toBe(200);
    const started = Date.now();
    for (;;) {
      const answer = await request(b.baseUrl, 'GET', '/api/controle/system_is_online/', auth(key));
      if (answer.status === 401) break;
      expect(answer.status, answer.text).toBe(200);
      if (Date.now() - started > 1_000) expect.fail(`B still accepts a key revoked ${Date.now() - started} ms ago\n${output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  it('started together on the empty database through the pooler: each migration once, one pg-boss schema', async () => {
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM (SELECT name FROM migrations GROUP BY name HAVING count(*) > 1) AS twice`);
    expect(rows[0]!.n).toBe(0);
    const { rows: versions } = await db.query<{ version: number }>(`SELECT version FROM pgboss.version`);
    expect(versions).toHaveLength(1);
    for (const instance of instances) expect(instance.exited(), instance.output()).toBe(false);
  });
});
