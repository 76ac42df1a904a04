/**
 * Scale-out: three real server processes (`node --import tsx src/server.ts`, as `npm start` runs the
 * build) on three ports, started together on one fresh PostgreSQL database and one Redis, as a load
 * balancer would see them. Always on PostgreSQL (TEST_DATABASE_URL's server, or the local one), since
 * several instances need a database they can share. It shows that:
 * - a key issued by one instance works on the others, and a logout on one is honoured by all;
 * - a key cached by one instance (AUTH_CACHE_SECONDS, long here) and revoked through another (a logout, a
 *   password reset, the admin CLI's set-password, a user's own revocation or password change) is refused
 *   by the first within one second;
 * - a POST retried on another instance with the same Idempotency-Key is replayed, not run again,
 *   and the same key sent to all three at once runs once;
 * - rate-limit budgets are spent across instances (Redis, under a key prefix of this file's own);
 * - jobs enqueued by one instance run once, whichever instance's worker takes them;
 * - a municipality created on one instance reaches the in-memory lists of the others;
 * - killing one instance (SIGKILL) in the middle of a stream of creates loses no accepted record.
 * First, in process, the start-up steps that instances starting together run at the same moment.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrator.js';
import { createJobQueue } from '../src/jobs/index.js';
import { createLogger } from '../src/logger.js';
import { importMunicipalities } from '../src/municipalities/import.js';
import { SHARED_MUNICIPIOS, SHARED_MUNICIPIOS_SHA256 } from './helpers/app.js';
import { createPostgresDatabase, type TestDatabase } from './helpers/database.js';
import { request, type Result } from './helpers/http.js';
import { startInstance as startServerInstance, tearDownCluster, type Instance } from './helpers/instances.js';
import { waitFor } from './helpers/process.js';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const POSTGRES_SERVER = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const RATE_LIMIT_PREFIX = `palanque-test-scale-${randomBytes(4).toString('hex')}`;
const ADMIN = { username: 'admin.escala', password: 'uma-senha-bem-longa-para-testes' };
const READ_BUDGET = 30;

const SMS_ACCOUNT = `AC${'5e4d3c2b1a09f8e7d6c5b4a392817060'}`;
const SMS_AUTH_TOKEN = 'b1a0f9e8d7c6b5a4938271605f4e3d2c';

const provider = new SmsProviderSimulator();
let database: TestDatabase;
let db: pg.Client;
let redis: Redis;
let instances: Instance[] = [];
let adminKey: string;

/** Starts `src/server.ts` as a process with the shared configuration; resolves once it answers HTTP. */
function startInstance(name: string, databaseUrl: string): Promise<Instance> {
  return startServerInstance(name, {
    databaseUrl,
    env: {
      REDIS_URL,
      RATE_LIMIT_PREFIX,
      RATE_LIMIT_AUTH: '200/60',
      RATE_LIMIT_READ: `${READ_BUDGET}/60`,
      RATE_LIMIT_WRITE: '2000/60',
      MUNICIPIOS_REFRESH_SECONDS: '1',
      // Far longer than the second a revocation may take: only the revocation notices can explain a refusal.
      AUTH_CACHE_SECONDS: '30',
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      SMS_PROVIDER_URL: provider.url,
    },
  });
}

const allOutput = () => instances.map((instance) => instance.output()).join('\n');
const auth = (key: string) => ({ Authorization: `Token ${key}` });

async function login(instance: Instance): Promise<string> {
  const answer = await request(instance.baseUrl, 'POST', '/api/auth/login', {}, ADMIN);
  expect(answer.status, `${answer.text}\n${allOutput()}`).toBe(200);
  return answer.body.data.token as string;
}

/** The system check with `key`: an ApiKeyAuth operation that reads nothing else. */
const online = (instance: Instance, key: string) => request(instance.baseUrl, 'GET', '/api/controle/system_is_online/', auth(key));

/** Asks `instance` with `key` every 50 ms until it answers 401; fails if it still accepts the key after one second. */
async function refusedWithinOneSecond(instance: Instance, key: string): Promise<void> {
  const started = Date.now();
  for (;;) {
    const answer = await online(instance, key);
    if (answer.status === 401) {
      expect(answer.body.error.code).toBe('unauthorized');
      return;
    }
    expect(answer.status, `${instance.name}: ${answer.text}`).toBe(200);
    if (Date.now() - started > 1_000) expect.fail(`${instance.name} still accepts a key revoked ${Date.now() - started} ms ago`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The admin CLI (`palanque`, as tsx runs it) on the shared database and Redis; stdin gets `input`. */
function adminCli(args: string[], input: string): Promise<{ code: number | null; output: string }> {
  const env = { ...process.env, DATABASE_URL: database.url, REDIS_URL, RATE_LIMIT_PREFIX, PASSWORD_HASH_COST: '12', LOG_LEVEL: 'warn' };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/palanque.ts', ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
    child.stdin.end(input);
  });
}

async function count(sql: string, values: unknown[] = []): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM (${sql}) AS counted`, values);
  return rows[0]!.n;
}

describe('start-up steps run by several instances at once on one new database', () => {
  it('migrates once and imports the municipality list once, the others finding it done', async () => {
    const fresh = await createPostgresDatabase(POSTGRES_SERVER);
    const logger = createLogger('silent');
    const connections = await Promise.all([openDatabase(fresh.url, logger), openDatabase(fresh.url, logger), openDatabase(fresh.url, logger)]);
    try {
      const migrated = await Promise.all(connections.map((sequelize) => migrate(sequelize, logger)));
      const applied = migrated.flat();
      expect(applied.length).toBeGreaterThan(0);
      expect(new Set(applied).size).toBe(applied.length);
      expect(migrated.filter((names) => names.length > 0)).toHaveLength(1);

      const reports = await Promise.all(
        connections.map((sequelize) => importMunicipalities(sequelize, { source: SHARED_MUNICIPIOS, sha256: SHARED_MUNICIPIOS_SHA256 })),
      );
      expect(reports.map((report) => [report.inserted, report.unchanged]).sort()).toEqual([
        [0, 5570],
        [0, 5570],
        [5570, 0],
      ]);
    } finally {
      await Promise.all(connections.map((sequelize) => sequelize.close()));
      await fresh.drop();
    }
  });

  it('waits for the migrations of another instance however long they take: DB_STATEMENT_TIMEOUT_MS does not bound them', async () => {
    const fresh = await createPostgresDatabase(POSTGRES_SERVER);
    // Another instance migrating: it holds the migrations' lock four times the statement timeout.
    const other = new pg.Client({ connectionString: fresh.url });
    await other.connect();
    let instance: Instance | undefined;
    try {
      await other.query(`SELECT pg_advisory_lock(hashtext('palanque:migrations'))`);
      const starting = startServerInstance('patient', { databaseUrl: fresh.url, env: { DB_STATEMENT_TIMEOUT_MS: '500', ADMIN_PASSWORD: ADMIN.password } });
      starting.catch(() => undefined); // awaited below, once the lock is released
      // Released only once the new instance has waited on it three times the statement timeout.
      await waitFor(
        async () => ((await other.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)).rowCount ? true : undefined),
        { timeoutMs: 60_000, intervalMs: 50, what: 'the new instance to wait on the migrations lock' },
      );
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await other.query(`SELECT pg_advisory_unlock(hashtext('palanque:migrations'))`);
      instance = await starting;
      expect((await request(instance.baseUrl, 'GET', '/api/municipios/?page=2')).status).toBe(200);
    } finally {
      await other.end();
      if (instance && !instance.exited()) {
        instance.child.kill('SIGTERM');
        await instance.exit;
      }
      await fresh.drop();
    }
  }, 150_000);

  it('creates the job queues once, without deadlocking, when several instances register them at once', async () => {
    const fresh = await createPostgresDatabase(POSTGRES_SERVER);
    const logger = createLogger('silent');
    const connections = await Promise.all([0, 1, 2].map(() => openDatabase(fresh.url, logger)));
    const queues = connections.map((sequelize) => createJobQueue(fresh.url, sequelize, logger));
    try {
      await Promise.all(queues.map((queue) => queue.start()));
      const names = ['first-queue', 'second-queue', 'third-queue', 'fourth-queue'];
      await Promise.all(
        queues.map(async (queue) => {
          for (const name of names) await queue.register(name, async () => undefined);
        }),
      );
      const [listed] = (await connections[0]!.query(`SELECT name FROM pgboss.queue WHERE name LIKE '%-queue' ORDER BY name`)) as [Array<{ name: string }>, unknown];
      expect(listed.map((row) => row.name)).toEqual([...names].sort());
    } finally {
      await Promise.all(queues.map((queue) => queue.stop()));
      await Promise.all(connections.map((sequelize) => sequelize.close()));
      await fresh.drop();
    }
  });
});

describe('three instances, one database, one Redis', () => {
  beforeAll(async () => {
    await provider.start();
    provider.addAccount(SMS_ACCOUNT, SMS_AUTH_TOKEN);
    redis = new Redis(REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
    await redis.connect();
    database = await createPostgresDatabase(POSTGRES_SERVER);
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    // All three at once on the empty database, as a deployment that starts its replicas together: they
    // migrate, import the municipality list and create the first admin without tripping over each other.
    const started = await Promise.allSettled(['A', 'B', 'C'].map((name) => startInstance(name, database.url)));
    instances = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failed = started.flatMap((result) => (result.status === 'rejected' ? [String(result.reason)] : []));
    if (failed.length > 0) throw new Error(failed.join('\n'));
    adminKey = await login(instances[0]!);
  }, 120_000);

  afterAll(async () => {
    await tearDownCluster({ instances, db, database, redis, rateLimitPrefix: RATE_LIMIT_PREFIX });
    await provider.stop();
  });

  it('started together on an empty database: each migration once, one municipality list that all serve, one first admin', async () => {
    for (const instance of instances) expect(instance.exited(), instance.output()).toBe(false);
    expect(await count(`SELECT name FROM migrations`)).toBeGreaterThan(0);
    expect(await count(`SELECT name FROM migrations GROUP BY name HAVING count(*) > 1`)).toBe(0);
    expect(await count(`SELECT codigo_ibge FROM municipalities`)).toBe(5570);
    expect(await count(`SELECT id FROM users`)).toBe(1);
    for (const instance of instances) {
      const list = await request(instance.baseUrl, 'GET', '/api/municipios/?page=186');
      expect(list.status, `${instance.name}: ${list.text}\n${instance.output()}`).toBe(200);
      expect(list.body).toMatchObject({ count: 5570, total_pages: 186 });
    }
  });

  it('honours on every instance a key issued by one, and a logout made on another', async () => {
    const [a, b, c] = instances as [Instance, Instance, Instance];
    const key = await login(a);
    for (const instance of [a, b, c]) {
      const online = await request(instance.baseUrl, 'GET', '/api/controle/system_is_online/', auth(key));
      expect(online.status, `${instance.name}: ${online.text}`).toBe(200);
    }
    // Each instance now has the key in its cache.
    const logout = await request(b.baseUrl, 'POST', '/api/auth/logout', auth(key));
    expect(logout.status, logout.text).toBe(200);
    expect(logout.body.data.revoked).toBe(true);
    // At once where it was revoked; within a second elsewhere (Redis carries the notice).
    const refused = await online(b, key);
    expect(refused.status, refused.text).toBe(401);
    expect(refused.body.error.code).toBe('unauthorized');
    for (const instance of [a, c]) await refusedWithinOneSecond(instance, key);
  });

  it('refuses within a second, on the instances that cached them, the keys a password reset on another revoked', async () => {
    const [a, b, c] = instances as [Instance, Instance, Instance];
    const username = `reset.${randomBytes(3).toString('hex')}`;
    const created = await adminCli(['user', 'create', '--username', username, '--email', `${username}@exemplo.com.br`, '--password-stdin'], 'uma-senha-para-o-reset\n');
    expect(created.code, created.output).toBe(0);
    const login = await request(c.baseUrl, 'POST', '/api/auth/login', {}, { username, password: 'uma-senha-para-o-reset' });
    expect(login.status, login.text).toBe(200);
    const key = login.body.data.token as string;
    for (const instance of [b, c]) expect((await online(instance, key)).status).toBe(200);

    // A reset token as the e-mail would carry it (the mail itself is tested in accounts-password-reset).
    const token = randomBytes(24).toString('base64url');
    await db.query(`INSERT INTO password_reset_tokens (user_id, token_hash, created_at, expires_at) VALUES ($1, $2, now(), now() + interval '10 minutes')`, [
      login.body.data.user.id,
      createHash('sha256').update(token).digest('hex'),
    ]);
    const reset = await request(a.baseUrl, 'GET', `/api/auth/generate_new_pass?${new URLSearchParams({ email: `${username}@exemplo.com.br`, token })}`);
    expect(reset.status, reset.text).toBe(200);
    for (const instance of [b, c]) await refusedWithinOneSecond(instance, key);
  });

  it("refuses within a second, on every instance, the keys revoked by the admin CLI's set-password", async () => {
    const [a, b, c] = instances as [Instance, Instance, Instance];
    const username = `cli.${randomBytes(3).toString('hex')}`;
    const created = await adminCli(['user', 'create', '--username', username, '--email', `${username}@exemplo.com.br`, '--password-stdin'], 'a-primeira-senha-longa\n');
    expect(created.code, created.output).toBe(0);
    const login = await request(a.baseUrl, 'POST', '/api/auth/login', {}, { username, password: 'a-primeira-senha-longa' });
    expect(login.status, login.text).toBe(200);
    const key = login.body.data.token as string;
    for (const instance of [a, b, c]) expect((await online(instance, key)).status).toBe(200);

    // The CLI writes the database directly, then publishes the revocation on the servers' channel.
    const changed = await adminCli(['user', 'set-password', username, '--password-stdin'], 'a-segunda-senha-longa\n');
    expect(changed.code, changed.output).toBe(0);
    expect(changed.output).toContain('1 key(s) revoked');
    for (const instance of [a, b, c]) await refusedWithinOneSecond(instance, key);
  });

  it("refuses within a second, on every instance, a key its user revoked and the keys a password change on another revoked", async () => {
    const [a, b, c] = instances as [Instance, Instance, Instance];
    const username = `self.${randomBytes(3).toString('hex')}`;
    const created = await adminCli(['user', 'create', '--username', username, '--email', `${username}@exemplo.com.br`, '--password-stdin'], 'a-primeira-senha-longa\n');
    expect(created.code, created.output).toBe(0);
    const logIn = async (instance: Instance, password: string) => {
      const answer = await request(instance.baseUrl, 'POST', '/api/auth/login', {}, { username, password });
      expect(answer.status, answer.text).toBe(200);
      return answer.body.data.token as string;
    };
    const [phone, laptop, tablet] = [await logIn(a, 'a-primeira-senha-longa'), await logIn(b, 'a-primeira-senha-longa'), await logIn(c, 'a-primeira-senha-longa')];
    for (const key of [phone, laptop, tablet]) for (const instance of [a, b, c]) expect((await online(instance, key)).status).toBe(200);

    // The phone revokes the laptop's key by its id, on instance A.
    const sessions = (await request(a.baseUrl, 'GET', '/api/auth/sessions/', auth(phone))).body.data.results as Array<{ id: number; created_at: string; current: boolean }>;
    const laptopId = sessions.filter((session) => !session.current).sort((x, y) => x.id - y.id)[0]!.id;
    expect((await request(a.baseUrl, 'POST', `/api/auth/sessions/${laptopId}/revoke/`, auth(phone))).status).toBe(200);
    for (const instance of [a, b, c]) await refusedWithinOneSecond(instance, laptop);

    // The phone changes the password on instance B: the tablet's key goes everywhere, the phone's stays.
    const change = await request(b.baseUrl, 'POST', '/api/auth/change_password/', auth(phone), { current_password: 'a-primeira-senha-longa', new_password: 'a-segunda-senha-longa' });
    expect(change.status, change.text).toBe(200);
    expect(change.body.data).toEqual({ changed: true, keys_revoked: 1 });
    for (const instance of [a, b, c]) await refusedWithinOneSecond(instance, tablet);
    for (const instance of [a, b, c]) expect((await online(instance, phone)).status).toBe(200);
  });

  it('replays on another instance a POST retried with the same Idempotency-Key, and creates one record', async () => {
    const [a, b, c] = instances as [Instance, Instance, Instance];
    const nome = `Candidata Replay ${randomBytes(4).toString('hex')}`;
    const headers = { ...auth(adminKey), 'Idempotency-Key': `scale-out-${randomBytes(8).toString('hex')}` };
    const first = await request(a.baseUrl, 'POST', '/api/entidade/add/', headers, { nome });
    expect(first.status, first.text).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    for (const instance of [b, c]) {
      const retried = await request(instance.baseUrl, 'POST', '/api/entidade/add/', headers, { nome });
      expect(retried.status, `${instance.name}: ${retried.text}`).toBe(201);
      expect(retried.headers.get('idempotent-replayed')).toBe('true');
      expect(retried.text).toBe(first.text);
    }
    expect(await count(`SELECT id FROM entities WHERE nome = $1`, [nome])).toBe(1);

    // Without the key, the same body is a new entity: the count above is the idempotency's doing.
    const again = await request(b.baseUrl, 'POST', '/api/entidade/add/', auth(adminKey), { nome });
    expect(again.status, again.text).toBe(201);
    expect(again.body.data.id).not.toBe(first.body.data.id);
    expect(await count(`SELECT id FROM entities WHERE nome = $1`, [nome])).toBe(2);
  });

  it('runs once a POST sent with one Idempotency-Key to all three instances at the same moment', async () => {
    const nome = `Candidata Corrida ${randomBytes(4).toString('hex')}`;
    const headers = { ...auth(adminKey), 'Idempotency-Key': `scale-out-${randomBytes(8).toString('hex')}` };
    const answers = await Promise.all(instances.map((instance) => request(instance.baseUrl, 'POST', '/api/entidade/add/', headers, { nome })));
    const ran = answers.filter((answer) => answer.status === 201 && answer.headers.get('idempotent-replayed') === null);
    expect(ran, answers.map((answer) => `${answer.status} ${answer.text}`).join('\n')).toHaveLength(1);
    for (const answer of answers) {
      if (answer === ran[0]) continue;
      // Each other copy either waited for nothing (still running: 409) or came after (replayed).
      if (answer.status === 409) expect(answer.body.error.code).toBe('idempotency_key_in_flight');
      else {
        expect(answer.status, answer.text).toBe(201);
        expect(answer.headers.get('idempotent-replayed')).toBe('true');
        expect(answer.text).toBe(ran[0]!.text);
      }
    }
    expect(await count(`SELECT id FROM entities WHERE nome = $1`, [nome])).toBe(1);
  });

  it('spends one rate-limit budget across the instances, through Redis', async () => {
    const key = await login(instances[0]!);
    const path = '/api/research/get_user_research_bookmarks/';
    for (let i = 0; i < READ_BUDGET; i += 1) {
      const instance = instances[i % 3]!;
      const read = await request(instance.baseUrl, 'GET', path, auth(key));
      expect(read.status, `${instance.name}: ${read.text}`).toBe(200);
      expect(read.headers.get('ratelimit-policy')).toBe(`${READ_BUDGET};w=60`);
      // One counter: the remaining budget goes down by one whichever instance answers.
      expect(read.headers.get('ratelimit'), instance.name).toMatch(new RegExp(`^limit=${READ_BUDGET}, remaining=${READ_BUDGET - 1 - i}, reset=\\d+$`));
    }
    for (const instance of instances) {
      const refused = await request(instance.baseUrl, 'GET', path, auth(key));
      expect(refused.status, `${instance.name}: ${refused.text}`).toBe(429);
      expect(refused.body.error.code).toBe('rate_limited');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.headers.get('ratelimit')).toMatch(new RegExp(`^limit=${READ_BUDGET}, remaining=0, reset=\\d+$`));
    }
    // Another client's budget is its own.
    const other = await request(instances[2]!.baseUrl, 'GET', path, auth(adminKey));
    expect(other.status, other.text).toBe(200);
    // The counters live under this deployment's RATE_LIMIT_PREFIX.
    expect((await redis.keys(`${RATE_LIMIT_PREFIX}:read:*`)).length).toBeGreaterThanOrEqual(2);
  });

  it('shows on every instance a municipality created on one (each checks the table every MUNICIPIOS_REFRESH_SECONDS)', async () => {
    const [a, b, c] = instances as [Instance, Instance, Instance];
    const path = '/api/municipios/?codigo_uf=53';
    const key = await login(a);
    const before = await request(c.baseUrl, 'GET', path, auth(key));
    expect(before.status, before.text).toBe(200);
    const created = await request(a.baseUrl, 'POST', '/api/municipios/', auth(adminKey), {
      codigo_ibge: 5399999,
      nome: 'Vila Nova do Planalto',
      latitude: -15.79,
      longitude: -47.88,
      capital: false,
      codigo_uf: 53,
    });
    expect(created.status, created.text).toBe(201);
    for (const instance of [b, c]) {
      let last: Result | undefined;
      await waitFor(
        async () => {
          last = await request(instance.baseUrl, 'GET', path, auth(key));
          return last.status === 200 && (last.body.results as Json[]).some((municipality) => municipality.codigo_ibge === 5399999) ? true : undefined;
        },
        { timeoutMs: 12_000, intervalMs: 500, what: `${instance.name} to list the new municipality`, output: () => `${last?.status} ${last?.text}\n${instance.output()}` },
      );
      expect(last!.body.count).toBe(before.body.count + 1);
    }
  });

  it('runs the jobs enqueued by one instance once each, on whichever instance takes them', async () => {
    const [a, b, c] = instances as [Instance, Instance, Instance];
    const entity = await request(a.baseUrl, 'POST', '/api/entidade/add/', auth(adminKey), { nome: 'Maria Santos' });
    expect(entity.status, entity.text).toBe(201);
    const credential = await request(b.baseUrl, 'POST', '/api/sms/add_credential/', auth(adminKey), {
      name: 'Campanha',
      account_id: SMS_ACCOUNT,
      sender_id: '11940028922',
      secret: SMS_AUTH_TOKEN,
      entity_id: entity.body.data.id,
    });
    expect(credential.status, credential.text).toBe(201);
    // The jobs are under test here, not the electoral rules: the platform admin relaxes the new entity to warn.
    const relaxed = await request(a.baseUrl, 'PUT', `/api/sms/compliance/?entity_id=${entity.body.data.id}`, auth(adminKey), { mode: 'warn', window: null });
    expect(relaxed.status, relaxed.text).toBe(200);

    const recipients = Array.from({ length: 12 }, (_, i) => `+55219123400${String(i + 10)}`);
    const text = `Vote no dia 6! ${randomBytes(3).toString('hex')}`;
    const campaign = await request(c.baseUrl, 'POST', '/api/sms/list_credentials/', auth(adminKey), {
      titulo: 'Escala',
      credencial: credential.body.data.id,
      mensagem: { recipient_list_str: recipients.join('\n'), mensagem: text },
    });
    expect(campaign.status, campaign.text).toBe(201);
    expect(campaign.body.data.accepted).toBe(recipients.length);
    const campaignId = campaign.body.data.id as number;

    // Every message handed to the provider, then no send job left that could still run.
    await waitFor(
      async () => ((await count(`SELECT id FROM sms_messages WHERE campaign_id = $1 AND provider_sid IS NULL`, [campaignId])) === 0 ? true : undefined),
      { timeoutMs: 45_000, intervalMs: 200, what: 'every message to reach the provider', output: allOutput },
    );
    await waitFor(
      async () => ((await count(`SELECT id FROM pgboss.job WHERE name IN ('sms-send', 'sms-campaign-send') AND state IN ('created', 'retry', 'active')`)) === 0 ? true : undefined),
      { timeoutMs: 45_000, intervalMs: 200, what: 'every sending job to finish', output: allOutput },
    );

    const received = provider.messages.filter((message) => message.body === text);
    expect(received.map((message) => message.to).sort()).toEqual([...recipients].sort());
    expect(provider.attempts).toBe(recipients.length);
    const { rows } = await db.query<{ provider_sid: string }>(`SELECT provider_sid FROM sms_messages WHERE campaign_id = $1`, [campaignId]);
    expect(rows.map((row) => row.provider_sid).sort()).toEqual(received.map((message) => message.sid).sort());
    // One batch job sends the campaign's 12 messages (messaging/campaign-sending.ts); none needed a job of its own.
    expect(await count(`SELECT id FROM pgboss.job WHERE name = 'sms-campaign-send' AND state = 'completed'`)).toBe(1);
    expect(await count(`SELECT id FROM pgboss.job WHERE name = 'sms-send'`)).toBe(0);
  });

  it('loses no accepted record when one instance is killed in the middle of a stream of creates', async () => {
    const [a, b, c] = instances as [Instance, Instance, Instance];
    const key = await login(a);
    const run = randomBytes(4).toString('hex');
    const total = 150;
    const killAfterAccepted = 40;
    interface Outcome {
      i: number;
      instance: Instance;
      url: string;
      /** Sent once C was known dead (its exit seen), so it cannot have reached it. */
      sentAfterDeath: boolean;
      result?: Result;
      error?: string;
    }
    const outcomes: Outcome[] = [];
    let accepted = 0;
    let killed = false;
    let dead = false;
    void c.exit.then(() => (dead = true));
    let next = 0;

    // Six clients, each sending its requests one after another, round-robin over the three instances.
    const client = async () => {
      for (let i = next++; i < total; i = next++) {
        const instance = instances[i % 3]!;
        const outcome: Outcome = { i, instance, url: `https://pesquisas.exemplo.com.br/escala/${run}/${i}`, sentAfterDeath: dead };
        outcomes.push(outcome);
        try {
          outcome.result = await request(instance.baseUrl, 'POST', '/api/research/add_research_bookmark/', auth(key), { title: `Pesquisa ${i}`, url: outcome.url });
          if (outcome.result.status >= 200 && outcome.result.status < 300) accepted += 1;
        } catch (error) {
          outcome.error = String((error as Error).cause ?? error);
        }
        if (!killed && accepted >= killAfterAccepted) {
          killed = true;
          c.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 6 }, client));
    expect(await c.exit).toEqual({ code: null, signal: 'SIGKILL' });

    const byInstance = (instance: Instance) => outcomes.filter((outcome) => outcome.instance === instance);
    const isAccepted = (outcome: Outcome) => outcome.result !== undefined && outcome.result.status >= 200 && outcome.result.status < 300;
    // The run did what it claims: C took creates before it died and refused those sent after.
    expect(byInstance(c).filter(isAccepted).length).toBeGreaterThan(0);
    const afterKill = byInstance(c).filter((outcome) => outcome.sentAfterDeath);
    expect(afterKill.length).toBeGreaterThan(0);
    for (const outcome of afterKill) expect(outcome.error, JSON.stringify(outcome.result?.text)).toBeDefined();
    // The survivors never noticed.
    for (const outcome of [...byInstance(a), ...byInstance(b)]) expect(outcome.result?.status, outcome.error ?? outcome.result?.text).toBe(201);

    const acceptedOutcomes = outcomes.filter(isAccepted);
    for (const survivor of [a, b]) {
      const listed = await request(survivor.baseUrl, 'GET', '/api/research/get_user_research_bookmarks/', auth(key));
      expect(listed.status, listed.text).toBe(200);
      const stored = new Map<number, string>((listed.body.data as Json[]).map((bookmark) => [bookmark.id, bookmark.url]));
      const missing = acceptedOutcomes.filter((outcome) => stored.get(outcome.result!.body.data.id) !== outcome.url);
      expect(missing.map((outcome) => `${outcome.instance.name} #${outcome.i}`), survivor.name).toEqual([]);
    }
    // And nothing was stored twice (each address at most once, whatever happened to unanswered requests).
    expect(await count(`SELECT url FROM research_bookmarks WHERE url LIKE $1 GROUP BY url HAVING count(*) > 1`, [`%/escala/${run}/%`])).toBe(0);
  }, 60_000);

  it('stops the survivors cleanly on SIGTERM', async () => {
    const survivors = instances.filter((instance) => !instance.exited());
    expect(survivors.map((instance) => instance.name)).toEqual(['A', 'B']);
    for (const instance of survivors) instance.child.kill('SIGTERM');
    for (const instance of survivors) expect(await instance.exit, instance.output()).toEqual({ code: 0, signal: null });
  });
});
