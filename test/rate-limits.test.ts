/**
 * The contract's 429 on every operation: budgets per operation group and per client, the RateLimit
 * headers, who pays (the address, until an API key authenticates and pays from its own budget), budgets
 * shared by several instances through Redis, and no outage when Redis is down.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { DEFAULT_BUDGETS, groupOf, rateLimits, type RateLimitBudgets } from '../src/http/rate-limits.js';
import { MemoryBudgets } from '../src/http/rate-limit-stores.js';
import { freePort } from './helpers/process.js';
import { createUser } from './helpers/accounts.js';
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

  it('limits the municipality list fast path too', async () => {
    const app = await start({ config: { rateLimits: budgets({ read: { points: 2, seconds: 60 } }) } });
    const served = [await fetch(`${app.baseUrl}/api/municipios/`), await fetch(`${app.baseUrl}/api/municipios/`, { method: 'HEAD' })];
    expect(served.map((answer) => answer.status)).toEqual([200, 200]);
    // The fast path's answers carry the headers the contract declares on every response.
    expect(served.map((answer) => answer.headers.get('ratelimit-policy'))).toEqual(['2;w=60', '2;w=60']);
    expect(served.map((answer) => answer.headers.get('ratelimit'))).toEqual([expect.stringMatching(/^limit=2, remaining=1, reset=\d+$/), expect.stringMatching(/^limit=2, remaining=0, reset=\d+$/)]);
    const refused = await fetch(`${app.baseUrl}/api/municipios/`);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: { code: 'rate_limited' } });
  });

  it('gives checkEmail a budget of its own, 10 a minute per address by default, apart from the logins', async () => {
    const app = await start({ config: { rateLimits: budgets({ auth: { points: 20, seconds: 60 }, checkEmail: DEFAULT_BUDGETS.checkEmail }) } });
    const checkEmail = (n: number) => fetch(`${app.baseUrl}/api/check/email/?email=${encodeURIComponent(`pessoa.${n}@exemplo.com.br`)}`);
    const answers = [];
    for (let n = 0; n < 10; n += 1) answers.push(await checkEmail(n));
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200));
    expect(answers.map((answer) => answer.headers.get('ratelimit-policy'))).toEqual(Array(10).fill('10;w=60'));
    const refused = await checkEmail(10);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ error: { code: 'rate_limited' } });
    // The logins' budget was not touched, and does not pay for it.
    const login = await fetch(`${app.baseUrl}/api/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username: 'ana.souza', password: 'segredo' }) });
    expect(login.status).not.toBe(429);
    expect(login.headers.get('ratelimit')).toMatch(/^limit=20, remaining=19, /);
    expect((await checkEmail(11)).status).toBe(429);
  });

  it('puts each operation in its group', () => {
    expect(groupOf('login', 'POST')).toBe('auth');
    expect(groupOf('checkLoginAttempt', 'GET')).toBe('auth');
    expect(groupOf('checkEmail', 'GET')).toBe('checkEmail');
    expect(groupOf('receiveSmsDeliveryReceipt', 'POST')).toBe('callback');
    expect(groupOf('verifySocialnetSubscription', 'GET')).toBe('callback');
    expect(groupOf('listMunicipalities', 'GET')).toBe('read');
    expect(groupOf('addEntity', 'POST')).toBe('write');
    expect(groupOf(undefined, 'DELETE')).toBe('write');
  });
});

describe('whose budget pays: the address until a key authenticates', () => {
  const BOOKMARKS = '/api/research/get_user_research_bookmarks/';
  const remainingOf = (response: Response) => /remaining=(\d+)/.exec(response.headers.get('ratelimit') ?? '')?.[1];
  let junk = 0;
  const junkKey = () => ({ Authorization: `Token junk-${(junk += 1)}` });

  it('charges an operation without ApiKeyAuth to the address, whatever key comes with it', async () => {
    const app = await start({ config: { rateLimits: budgets({ auth: { points: 2, seconds: 60 }, checkEmail: { points: 3, seconds: 60 } }) } });
    const real = await createUser(app);
    const checkEmail = (headers: Record<string, string>) => fetch(`${app.baseUrl}/api/check/email/?email=joana.lima@exemplo.com.br`, { headers });
    const resetPassword = (headers: Record<string, string>) => fetch(`${app.baseUrl}/api/auth/generate_new_pass?email=joana.lima@exemplo.com.br`, { headers });
    const answers = [await checkEmail(junkKey()), await resetPassword(junkKey()), await checkEmail(real.headers), await resetPassword(real.headers), await checkEmail({})];
    expect(answers.map((answer) => answer.status)).not.toContain(429);
    expect(answers.map(remainingOf)).toEqual(['2', '1', '1', '0', '0']);
    for (const [refused, limit] of [
      [await checkEmail(junkKey()), 3],
      [await resetPassword(junkKey()), 2],
      [await checkEmail(real.headers), 3],
      [await resetPassword({}), 2],
    ] as const) {
      expect(refused.status).toBe(429);
      expect(refused.headers.get('ratelimit')).toMatch(new RegExp(`^limit=${limit}, remaining=0, reset=\\d+$`));
      expect(await refused.json()).toMatchObject({ error: { code: 'rate_limited' } });
    }
  });

  it('counts keys that fail to authenticate against the address, and refuses a spent address before looking its keys up', async () => {
    const app = await start({ config: { rateLimits: budgets({ read: { points: 3, seconds: 60 } }) } });
    const real = await createUser(app);
    const lookups = vi.spyOn(app.accounts.tokens, 'authenticate');
    const failures = [
      await fetch(`${app.baseUrl}${BOOKMARKS}`, { headers: junkKey() }),
      await fetch(`${app.baseUrl}${BOOKMARKS}`, { headers: { Authorization: 'Bearer junk-again' } }),
      await fetch(`${app.baseUrl}${BOOKMARKS}`),
    ];
    expect(failures.map((answer) => answer.status)).toEqual([401, 401, 401]);
    expect(failures.map(remainingOf)).toEqual(['2', '1', '0']);
    expect(lookups).toHaveBeenCalledTimes(2); // once per request, though the rate limiter and the security handler both ask

    for (const headers of [junkKey(), junkKey(), {}, real.headers]) {
      const refused = await fetch(`${app.baseUrl}${BOOKMARKS}`, { headers });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('ratelimit')).toMatch(/^limit=3, remaining=0, reset=\d+$/);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    }
    // A guessed key is refused like any other: a spent address gets no answer about its keys.
    expect(lookups).toHaveBeenCalledTimes(2);
  });

  it('gives each authenticated key a budget of its own, which its address does not pay', async () => {
    const app = await start({ config: { rateLimits: budgets({ read: { points: 2, seconds: 60 } }) } });
    const [ana, carlos] = [await createUser(app), await createUser(app)];
    const secondKeyOfAna = (await app.accounts.tokens.issue(ana.user.id)).key;
    expect((await fetch(`${app.baseUrl}${BOOKMARKS}`, { headers: junkKey() })).status).toBe(401); // the address: 1 of 2 left

    for (const headers of [ana.headers, carlos.headers, { Authorization: `Bearer ${secondKeyOfAna}` }]) {
      const answers = [await fetch(`${app.baseUrl}${BOOKMARKS}`, { headers }), await fetch(`${app.baseUrl}${BOOKMARKS}`, { headers })];
      expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
      expect(answers.map((answer) => answer.headers.get('ratelimit-policy'))).toEqual(['2;w=60', '2;w=60']);
      expect(answers.map(remainingOf)).toEqual(['1', '0']);
      const refused = await fetch(`${app.baseUrl}${BOOKMARKS}`, { headers });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('ratelimit')).toMatch(/^limit=2, remaining=0, reset=\d+$/);
    }

    // Nine authenticated requests (three refused) later, the address still has the one point the junk key left.
    const anonymous = await fetch(`${app.baseUrl}/api/municipios/?codigo_uf=53`);
    expect(anonymous.status).toBe(200);
    expect(remainingOf(anonymous)).toBe('0');
    expect((await fetch(`${app.baseUrl}/api/municipios/?codigo_uf=53`)).status).toBe(429);
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

describe('the memory store', () => {
  it('opens a window at the first charge, refuses past the budget with the time left, and starts afresh when it closes', async () => {
    const store = new MemoryBudgets(2, 1);
    const first = store.consume('ip:a');
    expect(first).toMatchObject({ remainingPoints: 1, consumedPoints: 1, isFirstInDuration: true });
    expect(first.msBeforeNext).toBeGreaterThan(900);
    expect(store.consume('ip:a')).toMatchObject({ remainingPoints: 0, consumedPoints: 2 });
    expect(() => store.consume('ip:a')).toThrow(RateLimiterRes);
    expect(store.consume('ip:b').remainingPoints).toBe(1); // every id has its own window
    store.refund('ip:a');
    store.refund('ip:a');
    expect(store.consume('ip:a').consumedPoints).toBe(2); // two points back, one spent again
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(store.consume('ip:a')).toMatchObject({ remainingPoints: 1, consumedPoints: 1, isFirstInDuration: true });
  });

  it('is bounded: past its size the least recently charged id is forgotten, not the busiest', () => {
    const store = new MemoryBudgets(1, 60, 2);
    store.consume('ip:busy');
    store.consume('ip:quiet');
    expect(() => store.consume('ip:busy')).toThrow(RateLimiterRes); // still counted, and now the most recent
    store.consume('ip:new'); // a third id: 'ip:quiet' goes
    expect(() => store.consume('ip:busy')).toThrow(RateLimiterRes);
    expect(store.consume('ip:quiet').isFirstInDuration).toBe(true);
  });

  it('lets a request without a key to check through in the same tick (no promise to wait for)', () => {
    const limit = rateLimits({ budgets: budgets({ read: { points: 5, seconds: 60 } }), routes: [] });
    const headers = new Map<string, string>();
    const res = { setHeader: (name: string, value: string) => headers.set(name, value) };
    const next = vi.fn();
    const req = { method: 'GET', path: '/api/municipios/', ip: '192.0.2.7', get: () => undefined };
    void limit(req as never, res as never, next);
    expect(next).toHaveBeenCalledWith(); // before this test yields: a store answering through a promise fails here
    expect(headers.get('RateLimit')).toMatch(/^limit=5, remaining=4, reset=60$/);
  });
});
