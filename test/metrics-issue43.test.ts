/**
 * GET /metrics after doing the things it counts (issue 43 §4): an SMS sent and one failed through the
 * provider simulator, a webhook try that fails for good, a job waiting for its retry, a 429, scrapes and
 * probes under their own operation label, Redis up or the rate limits in memory, the Reader's and the
 * job queue's pools, and the build. The server's own wiring (serve.ts) is checked on a started server:
 * the build's version and commit, and the start-up warning of settings that limit one another.
 * Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { SERVICE_VERSION } from '../src/control/service.js';
import { loggerOptions } from '../src/logger.js';
import { startServer, type RunningServer } from '../src/serve.js';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { appsClosedAfterEach, startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { request } from './helpers/http.js';
import { keepWarnMode } from './helpers/sms.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const TOKEN = 'metrics-token-for-issue-43';
const ACCOUNT = `AC${'43aa9c2d1e4a5b6c7d8e9f0a1b2c3d4e'}`;
const AUTH_TOKEN = '43bb7d6c5b4a39281706f5e4d3c2b1a0';
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

async function scrape(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  expect(response.status).toBe(200);
  return response.text();
}

/** The value of one sample, `name{labels}` written as Prometheus writes it (labels in their order), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`);
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = match[2] ? match[2].split(/,(?=[a-zA-Z_]\w*=")/) : [];
    if (wanted.every((pair) => present.includes(pair))) return Number(match[3]);
  }
  return undefined;
}

/** A webhook receiver that always answers 500. */
async function failingReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(500, { 'content-type': 'text/plain' }).end('down'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the metrics of an app that did things', () => {
  const provider = new SmsProviderSimulator();
  let receiver: Awaited<ReturnType<typeof failingReceiver>>;
  let app: TestApp;
  let admin: TestUser;
  let owner: TestUser;
  let entityId: number;

  beforeAll(async () => {
    await provider.start();
    provider.addAccount(ACCOUNT, AUTH_TOKEN);
    receiver = await failingReceiver();
    app = await startTestApp({
      withJobs: true,
      selfPublicUrl: true,
      sms: { providerUrl: provider.url },
      // One try only: the failure is final at once.
      webhooks: { retries: 0 },
      config: { metricsToken: TOKEN, rateLimits: { auth: undefined, read: undefined, write: undefined, callback: undefined, checkEmail: { points: 1, seconds: 60 } } },
    });
    admin = await createAdmin(app);
    owner = await createUser(app);
    entityId = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
    await keepWarnMode(app, entityId);
  });

  afterAll(async () => {
    await app?.close();
    await provider.stop();
    await receiver?.close();
  });

  it('labels scrapes and probes by their own name, and only unknown paths unmatched', async () => {
    await scrape(app.baseUrl);
    expect((await fetch(`${app.baseUrl}/livez`)).status).toBe(200);
    await (await fetch(`${app.baseUrl}/readyz`)).arrayBuffer();
    expect((await fetch(`${app.baseUrl}/no/such/path/issue43`)).status).toBe(404);
    const text = await scrape(app.baseUrl);
    expect(sample(text, 'palanque_http_requests_total', { operation: 'metrics', method: 'GET', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'palanque_http_requests_total', { operation: 'livez', method: 'GET', status: '200' })).toBe(1);
    expect(sample(text, 'palanque_http_requests_total', { operation: 'readyz', method: 'GET' })).toBe(1);
    // The unknown path alone is unmatched: neither the scrapes nor the probes.
    expect(sample(text, 'palanque_http_requests_total', { operation: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    expect(sample(text, 'palanque_http_requests_total', { operation: 'unmatched', status: '200' })).toBeUndefined();
  });

  it('counts SMS sent and failed by provider (and outcome)', async () => {
    const added = await request(app.baseUrl, 'POST', '/api/sms/add_credential/', admin.headers, { name: 'Campanha', account_id: ACCOUNT, sender_id: '11940028922', secret: AUTH_TOKEN, entity_id: entityId });
    expect(added.status, added.text).toBe(201);
    // One call refused for good (a 400): whichever message meets it fails, the other is sent.
    provider.failNext({ status: 400, code: 21211, message: "The 'To' number is not valid" });
    const campaign = await request(app.baseUrl, 'POST', '/api/sms/list_credentials/', owner.headers, {
      titulo: 'Métricas',
      credencial: (added.body as Json).data.id,
      mensagem: { recipient_list_str: '21998764301\n21998764302', mensagem: 'Vote no dia 6!' },
    });
    expect(campaign.status, campaign.text).toBe(201);
    await expect
      .poll(async () => {
        const text = await scrape(app.baseUrl);
        return [sample(text, 'palanque_sms_sent_total', { provider: 'provider' }), sample(text, 'palanque_sms_failed_total', { provider: 'provider', outcome: 'refused' })];
      }, { timeout: 20_000, interval: 200 })
      .toEqual([1, 1]);
  });

  it('counts a failed webhook try, final when no retry follows', async () => {
    const registered = await request(app.baseUrl, 'POST', '/api/webhooks/endpoints/', owner.headers, { entity_id: entityId, url: receiver.url, event_types: ['monitor.alert'] });
    expect(registered.status, registered.text).toBe(201);
    const test = await request(app.baseUrl, 'POST', `/api/webhooks/endpoints/${(registered.body as Json).data.id}/test/`, owner.headers);
    expect(test.status, test.text).toBe(201);
    await expect.poll(async () => sample(await scrape(app.baseUrl), 'palanque_webhook_delivery_failures_total', { final: 'true' }), { timeout: 15_000, interval: 200 }).toBe(1);
  });

  it('shows each queue with its depth and its oldest waiting job, and the pools', async () => {
    const queue = 'metrics.issue43';
    await app.jobs!.register(queue, async () => {
      throw new Error('fails once, then waits ten minutes for its retry');
    }, { retryLimit: 1, retryDelaySeconds: 600, backoff: false });
    await app.jobs!.enqueue(queue, {});
    // Its one try fails at once; then it waits for its retry.
    await expect
      .poll(async () => {
        const scraped = await scrape(app.baseUrl);
        return [sample(scraped, 'palanque_job_queue_depth', { queue }), sample(scraped, 'palanque_job_queue_running', { queue })];
      }, { timeout: 15_000, interval: 200 })
      .toEqual([1, 0]);
    const scraped = await scrape(app.baseUrl);
    expect(sample(scraped, 'palanque_job_queue_oldest_age_seconds', { queue })).toBeGreaterThan(0);
    // A registered queue with nothing waiting is there, at 0.
    expect(sample(scraped, 'palanque_job_queue_depth', { queue: 'webhook-delivery' })).toBe(0);
    expect(sample(scraped, 'palanque_job_queue_oldest_age_seconds', { queue: 'webhook-delivery' })).toBe(0);
    expect(sample(scraped, 'palanque_db_reader_connections', { state: 'max' })).toBeGreaterThanOrEqual(1);
    expect(sample(scraped, 'palanque_db_reader_connections', { state: 'in_flight' })).toBeGreaterThanOrEqual(0);
    // pg-boss keeps a pool of its own; the table runner uses the database's connection.
    if (onPostgres) expect(sample(scraped, 'palanque_job_pool_connections', { state: 'size' })).toBeGreaterThanOrEqual(1);
    else expect(sample(scraped, 'palanque_job_pool_connections', { state: 'size' })).toBeUndefined();
  });

  it('counts 429s by the budget that was spent, and says the budgets are in memory without Redis', async () => {
    const ask = () => fetch(`${app.baseUrl}/api/check/email/?email=ana%40exemplo.com.br`);
    expect((await ask()).status).not.toBe(429);
    expect((await ask()).status).toBe(429);
    const text = await scrape(app.baseUrl);
    expect(sample(text, 'palanque_rate_limited_total', { budget: 'checkEmail' })).toBe(1);
    expect(sample(text, 'palanque_rate_limits_in_memory')).toBe(1);
    expect(sample(text, 'palanque_redis_up')).toBeUndefined();
  });
});

describe('Redis in the metrics', () => {
  const startApp = appsClosedAfterEach();
  const clients: Redis[] = [];

  afterAll(() => {
    for (const client of clients) client.disconnect();
  });

  it('is up, and the budgets are counted there', async () => {
    const redis = new Redis('redis://127.0.0.1:6379', { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    clients.push(redis);
    await new Promise<void>((resolve, reject) => redis.once('ready', resolve).once('error', reject));
    const app = await startApp({ redis, rateLimitPrefix: `test:metrics43:${Date.now()}`, config: { metricsToken: TOKEN } });
    const text = await scrape(app.baseUrl);
    expect(sample(text, 'palanque_redis_up')).toBe(1);
    expect(sample(text, 'palanque_rate_limits_in_memory')).toBe(0);
  });

  it('is down, and the budgets fall back to memory', async () => {
    // Nothing listens on port 1: the client never becomes ready.
    const redis = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: () => 1_000 });
    redis.on('error', () => undefined);
    clients.push(redis);
    const app = await startApp({ redis, config: { metricsToken: TOKEN } });
    const text = await scrape(app.baseUrl);
    expect(sample(text, 'palanque_redis_up')).toBe(0);
    expect(sample(text, 'palanque_rate_limits_in_memory')).toBe(1);
  });
});

describe('a started server (serve.ts)', () => {
  const lines: Array<Record<string, unknown>> = [];
  let database: TestDatabase;
  let server: RunningServer | undefined;

  beforeAll(async () => {
    database = await createTestDatabase({ migrated: true });
    const logger = pino(loggerOptions('info'), new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    }));
    const config = loadConfig({
      DATABASE_URL: database.url,
      PORT: '0',
      METRICS_TOKEN: TOKEN,
      GIT_COMMIT: 'ABC1234DEF',
      SMS_MAX_RECIPIENTS: '100000',
      ADMIN_PASSWORD: 'uma-senha-bem-longa-para-testes',
      // No municipality list: the server starts without one.
      MUNICIPIOS_SOURCE: join(tmpdir(), `no-municipalities-issue43-${process.pid}.csv`),
    });
    server = await startServer(config, logger);
  });

  afterAll(async () => {
    await server?.shutdown('test over');
    await database?.drop();
  });

  it('reports its build: package version, GIT_COMMIT and Node', async () => {
    const text = await scrape(server!.url);
    expect(sample(text, 'palanque_build_info', { version: SERVICE_VERSION, commit: 'abc1234def', node: process.version })).toBe(1);
    // The queues it registered, each there even when empty.
    expect(sample(text, 'palanque_job_queue_depth', { queue: 'webhook-delivery' })).toBe(0);
  });

  it('warns at start that a pasted list cannot reach SMS_MAX_RECIPIENTS', () => {
    const warning = lines.find((line) => line.level === 40 && String(line.msg).startsWith('SMS_MAX_RECIPIENTS is 100000'));
    expect(warning?.msg).toMatch(/carries about 13333 numbers at most .*only campaigns to contacts \(mensagem\.contatos\) reach 100000/);
  });
});
