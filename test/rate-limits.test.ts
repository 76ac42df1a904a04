/**
 * The contract's 429 on every operation: budgets per operation group and per client, the RateLimit
 * headers, budgets shared by several instances through Redis, and no outage when Redis is down.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { groupOf, type RateLimitBudgets } from '../src/http/rate-limits.js';
import { freePort } from './helpers/process.js';
import { startTestApp, type TestApp, type TestAppOptions } from './helpers/app.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const budgets = (overrides: Partial<RateLimitBudgets>): RateLimitBudgets => ({
  auth: undefined,
  read: undefined,
  write: undefined,
  callback: undefined,
  ...overrides,
});

const apps: TestApp[] = [];
async function start(options: TestAppOptions): Promise<TestApp> {
  const app = await startTestApp({ withMunicipalities: true, ...options });
  apps.push(app);
  return app;
}
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

const login = (app: TestApp, headers: Record<string, string> = {}) =>
  fetch(`${app.baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify({ username: 'ana.souza', password: 'segredo' }),
  });

describe('budgets per group and client', () => {
  it('counts down in RateLimit, then answers 429 rate_limited with Retry-After in the error model', async () => {
    const app = await start({ config: { rateLimits: budgets({ auth: { points: 3, seconds: 60 } }) } });
    const remaining: Array<string | null> = [];
    for (let i = 0; i < 3; i += 1) {
      const response = await login(app);
      expect(response.status).not.toBe(429);
      expect(response.headers.get('ratelimit-policy')).toBe('3;w=60');
      remaining.push(response.headers.get('ratelimit'));
    }
    expect(remaining.map((value) => /remaining=(\d+)/.exec(value ?? '')?.[1])).toEqual(['2', '1', '0']);

    const refused = await login(app, { 'X-Request-Id': 'too-many-1' });
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('ratelimit')).toMatch(/^limit=3, remaining=0, reset=\d+$/);
    expect(await refused.json()).toEqual({
      success: false,
      error: { code: 'rate_limited', message: `Too many requests. Try again in ${retryAfter} seconds.`, details: [] },
      request_id: 'too-many-1',
    });
  });

  it('keeps groups apart: an exhausted auth budget leaves reads alone', async () => {
    const app = await start({ config: { rateLimits: budgets({ auth: { points: 1, seconds: 60 }, read: { points: 100, seconds: 60 } }) } });
    await login(app);
    expect((await login(app)).status).toBe(429);
    const read = await fetch(`${app.baseUrl}/api/municipios/?codigo_uf=53`);
    expect(read.status).toBe(200);
    expect(read.headers.get('ratelimit-policy')).toBe('100;w=60');
  });

  it('gives each API key its own budget, and clients without one share their address budget', async () => {
    const app = await start({ config: { rateLimits: budgets({ auth: { points: 1, seconds: 60 } }) } });
    expect((await login(app, { Authorization: 'Token key-of-ana' })).status).not.toBe(429);
    expect((await login(app, { Authorization: 'Token key-of-ana' })).status).toBe(429);
    expect((await login(app, { Authorization: 'Bearer key-of-carlos' })).status).not.toBe(429);
    expect((await login(app)).status).not.toBe(429);
    expect((await login(app)).status).toBe(429);
  });

  it('limits the municipality list fast path too', async () => {
    const app = await start({ config: { rateLimits: budgets({ read: { points: 2, seconds: 60 } }) } });
    expect((await fetch(`${app.baseUrl}/api/municipios/`)).status).toBe(200);
    expect((await fetch(`${app.baseUrl}/api/municipios/`, { method: 'HEAD' })).status).toBe(200);
    const refused = await fetch(`${app.baseUrl}/api/municipios/`);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: { code: 'rate_limited' } });
  });

  it('puts each operation in its group', () => {
    expect(groupOf('login', 'POST')).toBe('auth');
    expect(groupOf('checkEmail', 'GET')).toBe('auth');
    expect(groupOf('receiveSmsDeliveryReceipt', 'POST')).toBe('callback');
    expect(groupOf('verifySocialnetSubscription', 'GET')).toBe('callback');
    expect(groupOf('listMunicipalities', 'GET')).toBe('read');
    expect(groupOf('addEntity', 'POST')).toBe('write');
    expect(groupOf(undefined, 'DELETE')).toBe('write');
  });
});

describe('across instances', () => {
  let redis: Redis;
  const prefix = `palanque-test-rl-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    redis = new Redis(REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
    await redis.connect();
  });

  afterAll(async () => {
    if (!redis) return;
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('shares one budget between two instances through Redis', async () => {
    const config = { rateLimits: budgets({ auth: { points: 3, seconds: 60 } }) };
    const [first, second] = await Promise.all([
      start({ config, redis, rateLimitPrefix: prefix }),
      start({ config, redis, rateLimitPrefix: prefix }),
    ]);
    expect((await login(first)).status).not.toBe(429);
    expect((await login(second)).status).not.toBe(429);
    expect((await login(first)).status).not.toBe(429);
    expect((await login(second)).status).toBe(429);
    expect((await login(first)).status).toBe(429);
    expect((await redis.keys(`${prefix}:auth:*`)).length).toBe(1);
  });

  it('keeps serving, limited per instance, when Redis is down', async () => {
    const port = await freePort(); // nothing listens there
    const downRedis = new Redis(`redis://127.0.0.1:${port}`, { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: () => null });
    downRedis.on('error', () => {});
    try {
      const app = await start({ config: { rateLimits: budgets({ auth: { points: 2, seconds: 60 } }) }, redis: downRedis, rateLimitPrefix: prefix });
      expect((await login(app)).status).not.toBe(429);
      expect((await login(app)).status).not.toBe(429);
      expect((await login(app)).status).toBe(429);
    } finally {
      downRedis.disconnect();
    }
  });
});
