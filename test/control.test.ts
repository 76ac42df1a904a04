/**
 * Status checks and the API root through the real app and the contract validator (responses validated
 * too): the liveness answer for any caller with a key, the admins' backend status (healthy, and degraded
 * by each failing dependency, still 200), and the root with its absolute links and the deployment's
 * assistants. Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobStats } from '../src/jobs/queue.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, type Result } from './helpers/http.js';

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

async function get(baseUrl: string, path: string, headers: Record<string, string> = {}): Promise<Result> {
  const response = await fetch(baseUrl + path, { headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
}

/** How the test makes a dependency of the status misbehave. */
type Behaviour = 'works' | 'fails' | 'hangs';
const hang = () => new Promise<never>(() => {});

/** The default deployment: municipalities loaded, every link local, no assistants, no published documentation (the server's own page). */
let app: TestApp;
let admin: TestUser;
let user: TestUser;
let jobCounts: JobStats = { queued: 0, running: 0, failed: 0 };

/** A deployment behind a public address and /v1, with assistants and documentation, no municipalities, and a status whose dependencies fail on demand. */
let deployed: TestApp;
let deployedAdmin: TestUser;
let deployedUser: TestUser;
let database: Behaviour = 'works';
let jobs: Behaviour = 'works';

const ASSISTANTS = [
  { id: 'estrategista', name: 'Estrategista', description: 'Sugere pautas a partir das métricas dos monitores.' },
  { id: 'revisor', name: 'Revisor', description: '' },
];

beforeAll(async () => {
  app = await startTestApp({ withMunicipalities: true, status: { jobStats: async () => jobCounts } });
  admin = await createAdmin(app);
  user = await createUser(app);

  deployed = await startTestApp({
    config: { basePath: '/v1', publicUrl: 'https://api.palanque.app', assistants: ASSISTANTS, docsUrl: 'https://palanque.app/docs/api' },
    status: {
      timeoutMs: 200,
      pingDatabase: async () => {
        if (database === 'fails') throw new Error('connection refused');
        if (database === 'hangs') await hang();
        await deployed.sequelize.query('SELECT 1');
      },
      jobStats: async () => {
        if (jobs === 'fails') throw new Error('pg-boss is not started');
        if (jobs === 'hangs') await hang();
        return { queued: 0, running: 0, failed: 0 };
      },
    },
  });
  deployedAdmin = await createAdmin(deployed);
  deployedUser = await createUser(deployed);
});

afterAll(async () => {
  await app?.close();
  await deployed?.close();
});

describe('systemIsOnline', () => {
  it('answers online with the server time to any caller with a key', async () => {
    for (const caller of [user, admin]) {
      const before = Date.now();
      const result = await get(app.baseUrl, '/api/controle/system_is_online/', caller.headers);
      expect(result.status, result.text).toBe(200);
      expect(result.body).toEqual({ success: true, data: { online: true, time: expect.any(String) }, message: 'Online.', request_id: result.headers.get('x-request-id') });
      expect(Date.parse(result.body.data.time)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(result.body.data.time)).toBeLessThanOrEqual(Date.now() + 1000);
    }
  });

  it('answers 401 without a valid key', async () => {
    expectError(await get(app.baseUrl, '/api/controle/system_is_online/'), 401, 'unauthorized');
    expectError(await get(app.baseUrl, '/api/controle/system_is_online/', { Authorization: 'Token plq_unknown' }), 401, 'unauthorized');
  });
});

describe('basicStatus', () => {
  it('reports ok to an admin: database reachable and timed, job counts, municipalities, uptime and version', async () => {
    jobCounts = { queued: 3, running: 1, failed: 2 };
    const result = await get(app.baseUrl, '/api/controle/basic_status/', admin.headers);
    expect(result.status, result.text).toBe(200);
    expect(result.body).toEqual({
      success: true,
      data: {
        status: 'ok',
        version: VERSION,
        uptime_seconds: expect.any(Number),
        database: { reachable: true, dialect: app.database.dialect, latency_ms: expect.any(Number) },
        // Failed jobs are reported, but do not degrade the status.
        jobs: { queued: 3, running: 1, failed: 2 },
        municipalities_loaded: 5570,
      },
      message: 'All systems operational.',
      request_id: result.headers.get('x-request-id'),
    });
    expect(Number.isInteger(result.body.data.uptime_seconds)).toBe(true);
    expect(result.body.data.uptime_seconds).toBeLessThanOrEqual(Math.ceil(process.uptime()));
    expect(result.body.data.database.latency_ms).toBeGreaterThanOrEqual(0);
    expect(result.body.data.database.latency_ms).toBeLessThan(2000);
  });

  it('answers 403 to a user who is not an admin and 401 without a valid key', async () => {
    expectError(await get(app.baseUrl, '/api/controle/basic_status/', user.headers), 403, 'forbidden');
    expectError(await get(app.baseUrl, '/api/controle/basic_status/'), 401, 'unauthorized');
  });

  it('reports degraded, still 200, when no municipalities are loaded', async () => {
    database = 'works';
    jobs = 'works';
    const result = await get(deployed.baseUrl, '/v1/api/controle/basic_status/', deployedAdmin.headers);
    expect(result.status, result.text).toBe(200);
    expect(result.body.data).toMatchObject({ status: 'degraded', database: { reachable: true }, jobs: { queued: 0, running: 0, failed: 0 }, municipalities_loaded: 0 });
    expect(result.body.message).toBe('Degraded: no municipalities are loaded.');
  });

  it.each([
    ['fails', 'connection refused'],
    ['hangs', 'no answer within 200 ms'],
  ] as const)('reports the database unreachable when it %s, and logs why', async (behaviour, reason) => {
    database = behaviour;
    jobs = 'works';
    try {
      const started = Date.now();
      const result = await get(deployed.baseUrl, '/v1/api/controle/basic_status/', deployedAdmin.headers);
      expect(result.status, result.text).toBe(200);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(result.body.data).toMatchObject({
        status: 'degraded',
        database: { reachable: false, dialect: deployed.database.dialect, latency_ms: null },
        jobs: { queued: 0, running: 0, failed: 0 },
      });
      expect(result.body.message).toBe('Degraded: the database does not answer; no municipalities are loaded.');
      const logged = deployed.logs.find((line) => line.msg === 'status check failed' && line.check === 'database' && (line.err as { message?: string })?.message === reason);
      expect(logged).toBeDefined();
    } finally {
      database = 'works';
    }
  });

  it.each(['fails', 'hangs'] as const)('reports jobs null when the job queue %s', async (behaviour) => {
    database = 'works';
    jobs = behaviour;
    try {
      const result = await get(deployed.baseUrl, '/v1/api/controle/basic_status/', deployedAdmin.headers);
      expect(result.status, result.text).toBe(200);
      expect(result.body.data).toMatchObject({ status: 'degraded', database: { reachable: true }, jobs: null });
      expect(result.body.message).toBe('Degraded: the job queue cannot be read; no municipalities are loaded.');
    } finally {
      jobs = 'works';
    }
  });
});

describe('getApiRoot', () => {
  const COLLECTIONS = {
    entities: '/api/entidade/',
    monitors: '/api/monitor_social/data/',
    research_bookmarks: '/api/research/get_user_research_bookmarks/',
    news_sources: '/api/news/get_requested_fonts/',
    municipalities: '/api/municipios/',
  };
  const ADMIN_COLLECTIONS = { users: '/api/auth/account', status: '/api/controle/basic_status/' };
  const absolute = (base: string, paths: Record<string, string>) => Object.fromEntries(Object.entries(paths).map(([name, path]) => [name, base + path]));

  it('tells a user the service, its version, who they are and where the collections are', async () => {
    const result = await get(app.baseUrl, '/', user.headers);
    expect(result.status, result.text).toBe(200);
    expect(result.body).toEqual({
      success: true,
      data: {
        service: 'Palanque API',
        version: VERSION,
        user: { id: user.user.id, username: user.user.username, is_admin: false },
        // The server's own documentation page where the deployment publishes none; no assistants where it configured none.
        links: { ...absolute(app.baseUrl, COLLECTIONS), documentation: `${app.baseUrl}/docs` },
        assistants: [],
      },
      message: `Welcome to Palanque, ${user.user.username}.`,
      request_id: result.headers.get('x-request-id'),
    });
  });

  it('gives admins the user list and the status too; every link leads to an operation', async () => {
    const result = await get(app.baseUrl, '/', admin.headers);
    expect(result.status, result.text).toBe(200);
    expect(result.body.data.user).toEqual({ id: admin.user.id, username: admin.user.username, is_admin: true });
    expect(result.body.data.links).toEqual(absolute(app.baseUrl, { ...COLLECTIONS, ...ADMIN_COLLECTIONS, documentation: '/docs' }));
    for (const link of Object.values(result.body.data.links) as string[]) {
      const followed = await fetch(link, { headers: admin.headers });
      // 501 is an operation of the contract not implemented yet; never an unknown path or method.
      expect([200, 501], `${link} answered ${followed.status}`).toContain(followed.status);
    }
  });

  it('uses the public address and base path, links the documentation and lists the configured assistants', async () => {
    const result = await get(deployed.baseUrl, '/v1/', deployedUser.headers);
    expect(result.status, result.text).toBe(200);
    expect(result.body.data.links).toEqual({
      ...absolute('https://api.palanque.app/v1', COLLECTIONS),
      documentation: 'https://palanque.app/docs/api',
    });
    expect(result.body.data.assistants).toEqual(ASSISTANTS);
    const asAdmin = await get(deployed.baseUrl, '/v1/', deployedAdmin.headers);
    expect(asAdmin.body.data.links).toEqual({
      ...absolute('https://api.palanque.app/v1', { ...COLLECTIONS, ...ADMIN_COLLECTIONS }),
      documentation: 'https://palanque.app/docs/api',
    });
  });

  it('answers 401 without a valid key', async () => {
    expectError(await get(app.baseUrl, '/'), 401, 'unauthorized');
    expectError(await get(deployed.baseUrl, '/v1/', { Authorization: 'Token plq_unknown' }), 401, 'unauthorized');
  });
});
