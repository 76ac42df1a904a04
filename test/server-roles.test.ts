/**
 * PALANQUE_ROLE (docs/operations.md, "Roles: api and worker"), with real server processes as
 * test/scale-out.test.ts starts them:
 * - on SQLite (the suite's first run), api and worker are refused at start with a line naming the setting;
 * - on PostgreSQL (the second run): an api instance on a database nobody migrated answers /readyz 503
 *   naming the missing migrations and migrates nothing; a worker migrates, creates the first admin and
 *   serves only /livez, /readyz and /metrics (404 elsewhere, in the error model); the api instance then
 *   becomes ready without a restart and serves the API; the campaign it accepts waits while no worker
 *   runs, and a worker sends it.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { knownMigrationNames } from '../src/db/migrator.js';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';
import { createPostgresDatabase, type TestDatabase } from './helpers/database.js';
import { request } from './helpers/http.js';
import { startInstance, tearDownCluster, type Instance } from './helpers/instances.js';
import { waitFor } from './helpers/process.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const POSTGRES_SERVER = process.env.TEST_DATABASE_URL;

if (!POSTGRES_SERVER) {
  describe('roles on SQLite', () => {
    it('accepts only all: the configuration names PALANQUE_ROLE for api and worker', () => {
      expect(loadConfig({ DATABASE_URL: 'sqlite:data/x.sqlite' }).role).toBe('all');
      for (const role of ['api', 'worker']) {
        expect(() => loadConfig({ DATABASE_URL: 'sqlite:data/x.sqlite', PALANQUE_ROLE: role })).toThrow(ConfigError);
        expect(() => loadConfig({ DATABASE_URL: 'sqlite:data/x.sqlite', PALANQUE_ROLE: role })).toThrow(/PALANQUE_ROLE: must be all on SQLite/);
      }
      expect(() => loadConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/x', PALANQUE_ROLE: 'both' })).toThrow(/PALANQUE_ROLE: must be one of all, api, worker/);
      expect(loadConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/x', PALANQUE_ROLE: 'worker', JOB_CONCURRENCY: '4' })).toMatchObject({ role: 'worker', jobConcurrency: 4 });
      expect(() => loadConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/x', JOB_CONCURRENCY: '0' })).toThrow(/JOB_CONCURRENCY/);
    });

    it('refuses to start a worker on SQLite, with one line saying why, and creates no database', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'palanque-role-'));
      try {
        const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
          cwd: root,
          env: { ...process.env, NODE_ENV: 'test', PORT: '0', DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`, PALANQUE_ROLE: 'worker' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
        expect(code, output).toBe(1);
        expect(output).toMatch(/PALANQUE_ROLE: must be all on SQLite \(worker needs PostgreSQL/);
        expect(output).not.toMatch(/listening/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 30_000);
  });
} else {
  describe('roles on PostgreSQL: an api instance and a worker', () => {
    const ADMIN = { username: 'admin.papeis', password: 'uma-senha-bem-longa-para-papeis' };
    const METRICS_TOKEN = 'metrics-token-para-os-papeis-0123456789';
    const SMS_ACCOUNT = `AC${'6e4d3c2b1a09f8e7d6c5b4a392817061'}`;
    const SMS_AUTH_TOKEN = 'c1a0f9e8d7c6b5a4938271605f4e3d2d';
    const provider = new SmsProviderSimulator();
    let database: TestDatabase;
    let db: pg.Client;
    const instances: Instance[] = [];
    let api: Instance;
    let worker: Instance;
    const env = (role: string) => ({ PALANQUE_ROLE: role, ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password, SMS_PROVIDER_URL: provider.url, METRICS_TOKEN, JOB_CONCURRENCY: '3' });
    const output = () => instances.map((instance) => instance.output()).join('\n');
    const count = async (sql: string, values: unknown[] = []) => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM (${sql}) AS counted`, values)).rows[0]!.n;

    beforeAll(async () => {
      await provider.start();
      provider.addAccount(SMS_ACCOUNT, SMS_AUTH_TOKEN);
      database = await createPostgresDatabase(POSTGRES_SERVER);
      db = new pg.Client({ connectionString: database.url });
      await db.connect();
      api = await startInstance('api', { databaseUrl: database.url, env: env('api') });
      instances.push(api);
    }, 120_000);

    afterAll(async () => {
      await tearDownCluster({ instances, db, database, redis: undefined, rateLimitPrefix: 'none' });
      await provider.stop();
    });

    it('an api instance on a database nobody migrated is not ready, names the missing migrations, and migrates nothing', async () => {
      const ready = await request(api.baseUrl, 'GET', '/readyz');
      expect(ready.status, ready.text).toBe(503);
      expect(ready.body).toMatchObject({ status: 'not_ready', checks: { database: { state: 'ok' }, migrations: { state: 'behind', missing: knownMigrationNames().length } } });
      expect(ready.body.checks.migrations.reason).toContain(knownMigrationNames()[0]);
      expect((await request(api.baseUrl, 'GET', '/livez')).status).toBe(200);
      const served = await request(api.baseUrl, 'GET', '/api/municipios/');
      expect(served.status).toBe(503);
      expect(served.body).toMatchObject({ success: false, error: { code: 'service_unavailable' } });
      // Still nothing a few polls later: no migrations table, no pg-boss schema, no tables.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(await count(`SELECT 1 FROM information_schema.tables WHERE table_schema IN ('public', 'pgboss')`)).toBe(0);
      expect(api.exited(), api.output()).toBe(false);
    }, 30_000);

    it('a worker migrates, creates the first admin and serves only /livez, /readyz and /metrics', async () => {
      worker = await startInstance('worker', { databaseUrl: database.url, env: env('worker') });
      instances.push(worker);
      await waitFor(async () => ((await request(worker.baseUrl, 'GET', '/readyz')).status === 200 ? true : undefined), { timeoutMs: 90_000, intervalMs: 200, what: 'the worker to be ready', output });
      expect(await count(`SELECT name FROM migrations`)).toBe(knownMigrationNames().length);
      expect(await count(`SELECT id FROM users WHERE username = $1`, [ADMIN.username])).toBe(1);
      expect((await request(worker.baseUrl, 'GET', '/livez')).status).toBe(200);
      const metrics = await fetch(`${worker.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toMatch(/^# HELP /m);
      for (const [method, path] of [['GET', '/api/controle/system_is_online/'], ['POST', '/api/auth/login'], ['GET', '/'], ['GET', '/docs']] as const) {
        const answer = await request(worker.baseUrl, method, path, {}, method === 'POST' ? ADMIN : undefined);
        expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(404);
        expect(answer.body).toMatchObject({ success: false, error: { code: 'not_found', details: [] }, request_id: expect.any(String) });
        expect(answer.body.error.message).toMatch(/PALANQUE_ROLE=worker/);
      }
    }, 120_000);

    it('the api instance becomes ready without a restart, and the campaign it accepts waits for a worker, which sends it', async () => {
      await waitFor(async () => ((await request(api.baseUrl, 'GET', '/readyz')).status === 200 ? true : undefined), { timeoutMs: 30_000, intervalMs: 20, what: 'the api instance to be ready', output });
      // A /readyz 200 means the API answers: no 503 in the gap while it starts its domains.
      const online = await request(api.baseUrl, 'GET', '/api/controle/system_is_online/');
      expect(online.status, online.text).not.toBe(503);
      const login = await request(api.baseUrl, 'POST', '/api/auth/login', {}, ADMIN);
      expect(login.status, login.text).toBe(200);
      const auth = { Authorization: `Token ${login.body.data.token}` };
      const entity = await request(api.baseUrl, 'POST', '/api/entidade/add/', auth, { nome: 'Maria Papéis' });
      expect(entity.status, entity.text).toBe(201);
      const credential = await request(api.baseUrl, 'POST', '/api/sms/add_credential/', auth, { name: 'Campanha', account_id: SMS_ACCOUNT, sender_id: '11940028922', secret: SMS_AUTH_TOKEN, entity_id: entity.body.data.id });
      expect(credential.status, credential.text).toBe(201);
      // The jobs are under test here, not the electoral rules: the platform admin relaxes the entity to warn.
      const relaxed = await request(api.baseUrl, 'PUT', `/api/sms/compliance/?entity_id=${entity.body.data.id}`, auth, { mode: 'warn', window: null });
      expect(relaxed.status, relaxed.text).toBe(200);
      const recipients = Array.from({ length: 4 }, (_, i) => `+55219123401${String(i + 10)}`);
      const text = `Vote no dia 6! ${randomBytes(3).toString('hex')}`;
      // The worker is gone: the api instance queues the campaign's jobs but runs none of them.
      worker.child.kill('SIGKILL');
      await worker.exit;
      const campaign = await request(api.baseUrl, 'POST', '/api/sms/list_credentials/', auth, { titulo: 'Papéis', credencial: credential.body.data.id, mensagem: { recipient_list_str: recipients.join('\n'), mensagem: text } });
      expect(campaign.status, campaign.text).toBe(201);
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      expect(provider.messages.filter((message) => message.body === text)).toHaveLength(0);
      expect(await count(`SELECT id FROM pgboss.job WHERE name LIKE 'sms%' AND state = 'created'`)).toBeGreaterThan(0);
      // A new worker sends them.
      const next = await startInstance('worker-2', { databaseUrl: database.url, env: env('worker') });
      instances.push(next);
      await waitFor(async () => (provider.messages.filter((message) => message.body === text).length === recipients.length ? true : undefined), { timeoutMs: 45_000, intervalMs: 200, what: 'the new worker to send every message', output });
      expect(api.exited(), output()).toBe(false);
    }, 120_000);
  });
}
