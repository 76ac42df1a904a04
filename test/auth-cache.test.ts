/**
 * The key cache (AUTH_CACHE_SECONDS, src/accounts/key-cache.ts), on the test database (SQLite, or
 * PostgreSQL with TEST_DATABASE_URL): a key used a moment ago is answered without a database query; an
 * entry lives at most its lifetime and never past its key's expiry; what it holds of the user is only
 * identity and flags; every revocation (logout, removeToken, a password reset, a deactivation) is
 * honoured at once by the instance that made it, even for a key it had cached; a lookup racing a
 * revocation does not put the key back. Then the revocation channels (src/accounts/revocations.ts) on
 * Redis and PostgreSQL: a revocation published by one cache reaches another within a second, a listener
 * that lost its connection empties its cache once back, and the admin CLI's one-off notice arrives too.
 * Across real server processes: test/scale-out.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import type { Sequelize } from 'sequelize';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KeyCache, decodeRevocation, encodeRevocation, type Authenticated, type RevocationChannel } from '../src/accounts/key-cache.js';
import { publishRevocation, redisRevocationChannel, revocationChannel } from '../src/accounts/revocations.js';
import { secretHash } from '../src/accounts/secrets.js';
import { openDatabase } from '../src/db/database.js';
import { readerOf } from '../src/db/reader.js';
import { createLogger } from '../src/logger.js';
import { appsClosedAfterEach, startTestApp, type TestApp } from './helpers/app.js';
import { createUser } from './helpers/accounts.js';
import { createPostgresDatabase, type TestDatabase } from './helpers/database.js';
import { request } from './helpers/http.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const POSTGRES_SERVER = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** Long enough that no entry expires during a test unless the test means it to. */
const LONG_CACHE_MS = 60_000;

const logger = createLogger('silent');
const auth = (key: string) => ({ Authorization: `Token ${key}` });
/** An ApiKeyAuth operation whose handler reads nothing: any query it causes is the key's lookup. */
const ONLINE = '/api/controle/system_is_online/';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ accounts: { keyCacheMs: LONG_CACHE_MS } });
});

afterAll(async () => {
  await app?.close();
});

const startExtraApp = appsClosedAfterEach();

/** The SQL `work` sends to the tables a key lookup reads (api_tokens, users), through Sequelize or its Reader. */
async function keyQueriesDuring(target: TestApp, work: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const note = (sql: string | undefined) => {
    if (sql && /\b(api_tokens|users)\b/.test(sql)) seen.push(sql);
  };
  const record = (_options: unknown, query: { sql?: string }) => note(query.sql);
  // The key's lookup reads through the Reader (src/db/reader.ts), which Sequelize's hooks do not see.
  const reader = readerOf(target.sequelize);
  const { rows, row } = reader;
  reader.rows = (sql, values) => (note(sql), rows(sql, values));
  reader.row = (sql, values) => (note(sql), row(sql, values));
  target.sequelize.addHook('afterQuery', 'count-key-queries', record as never);
  try {
    await work();
  } finally {
    target.sequelize.removeHook('afterQuery', 'count-key-queries');
    Object.assign(reader, { rows, row });
  }
  return seen;
}

async function online(target: TestApp, key: string): Promise<number> {
  return (await request(target.baseUrl, 'GET', ONLINE, auth(key))).status;
}

describe('a key used a moment ago', () => {
  it('is answered without asking the database', async () => {
    const ana = await createUser(app);
    const first = await keyQueriesDuring(app, async () => expect(await online(app, ana.key)).toBe(200));
    expect(first.length).toBeGreaterThan(0);
    const again = await keyQueriesDuring(app, async () => {
      for (let i = 0; i < 5; i += 1) expect(await online(app, ana.key)).toBe(200);
    });
    expect(again).toEqual([]);
  });

  it('is looked up every time with AUTH_CACHE_SECONDS=0', async () => {
    const uncached = await startExtraApp({ accounts: { keyCacheMs: 0 } });
    const ana = await createUser(uncached);
    expect(await online(uncached, ana.key)).toBe(200);
    const again = await keyQueriesDuring(uncached, async () => expect(await online(uncached, ana.key)).toBe(200));
    expect(again.length).toBeGreaterThan(0);
  });

  it('is looked up again once its entry has lived AUTH_CACHE_SECONDS', async () => {
    // Long enough for the two calls below on a loaded machine (1.5 s once passed before the second).
    const lifetimeMs = 5_000;
    const shortCache = await startExtraApp({ accounts: { keyCacheMs: lifetimeMs } });
    const ana = await createUser(shortCache);
    expect(await online(shortCache, ana.key)).toBe(200);
    const cachedBy = Date.now(); // the key's entry was made before this moment
    expect(await keyQueriesDuring(shortCache, () => online(shortCache, ana.key))).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, cachedBy + lifetimeMs - Date.now()) + 100));
    expect((await keyQueriesDuring(shortCache, () => online(shortCache, ana.key))).length).toBeGreaterThan(0);
  });

  it('is refused once the key expires, although it was cached', async () => {
    // Long enough for the first calls under CI's load (a 2 s key once expired before its first use there).
    const shortKeys = await startExtraApp({ accounts: { keyCacheMs: LONG_CACHE_MS, tokenLifetimeMs: 6_000 } });
    const ana = await createUser(shortKeys);
    expect(await online(shortKeys, ana.key)).toBe(200);
    expect(await keyQueriesDuring(shortKeys, () => online(shortKeys, ana.key))).toEqual([]);
    // Then past the moment the key expires, whatever the first calls took.
    const { expiresAt } = (await shortKeys.accounts.tokens.authenticate(ana.key))!;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt.getTime() - Date.now()) + 100));
    expect(await online(shortKeys, ana.key)).toBe(401);
  });

  it('carries only who its user is and what the platform lets them do', async () => {
    const ana = await createUser(app, { is_admin: true });
    const found = (await app.accounts.tokens.authenticate(ana.key))!;
    const cached = (await app.accounts.tokens.authenticate(ana.key))!;
    expect(cached).toBe(app.accounts.keyCache.lookup(secretHash(ana.key), new Date()));
    for (const caller of [found, cached]) {
      expect(caller.user).toEqual({ id: ana.user.id, username: ana.user.username, is_admin: true, is_active: true });
      expect(caller.expiresAt.getTime()).toBeGreaterThan(Date.now());
    }
    // Shared by every request with the key: no handler can change it for the others.
    expect(Object.isFrozen(cached) && Object.isFrozen(cached.user)).toBe(true);
  });

  it('does not stand in for the stored password: checkCredential checks the current one', async () => {
    const ana = await createUser(app);
    expect(await online(app, ana.key)).toBe(200);
    const newPassword = `outra-senha-${randomBytes(4).toString('hex')}`;
    const hash = (await app.accounts.users.create({ username: `tmp.${randomBytes(4).toString('hex')}`, email: `${randomBytes(4).toString('hex')}@exemplo.com.br`, password: newPassword })).password_hash;
    await app.accounts.users.setPasswordHash(ana.user.id, hash);
    const check = (password: string) => request(app.baseUrl, 'POST', '/check/credential/', auth(ana.key), { username: ana.user.username, password });
    expect((await check(ana.password)).status).toBe(401);
    const confirmed = await check(newPassword);
    expect(confirmed.status, confirmed.text).toBe(200);
  });
});

describe('a revocation on the instance that makes it', () => {
  it('refuses at once the key a logout revoked, and only that key', async () => {
    const ana = await createUser(app);
    const { key: phone } = await app.accounts.tokens.issue(ana.user.id);
    for (const key of [ana.key, phone]) expect(await online(app, key)).toBe(200);
    const logout = await request(app.baseUrl, 'POST', '/api/auth/logout', auth(phone));
    expect(logout.status, logout.text).toBe(200);
    expect(await online(app, phone)).toBe(401);
    expect(await online(app, ana.key)).toBe(200);
  });

  it('refuses at once the key removeToken revoked', async () => {
    const ana = await createUser(app);
    const { key: lostPhone } = await app.accounts.tokens.issue(ana.user.id);
    expect(await online(app, lostPhone)).toBe(200);
    const removed = await request(app.baseUrl, 'POST', '/api/tokens/remove_token/', auth(ana.key), { token_key: lostPhone });
    expect(removed.status, removed.text).toBe(200);
    expect(await online(app, lostPhone)).toBe(401);
    expect(await online(app, ana.key)).toBe(200);
  });

  it('refuses at once every key of a user whose password was reset', async () => {
    const ana = await createUser(app);
    const { key: phone } = await app.accounts.tokens.issue(ana.user.id);
    for (const key of [ana.key, phone]) expect(await online(app, key)).toBe(200);
    const token = randomBytes(24).toString('base64url');
    await app.accounts.models.PasswordReset.create({ user_id: ana.user.id, token_hash: secretHash(token), created_at: new Date(), expires_at: new Date(Date.now() + 600_000) });
    const reset = await request(app.baseUrl, 'GET', `/api/auth/generate_new_pass?${new URLSearchParams({ email: ana.user.email, token })}`);
    expect(reset.status, reset.text).toBe(200);
    for (const key of [ana.key, phone]) expect(await online(app, key)).toBe(401);
  });

  it('refuses at once the keys of a deactivated user, and leaves other users cached', async () => {
    const [ana, bruno] = [await createUser(app), await createUser(app)];
    for (const key of [ana.key, bruno.key]) expect(await online(app, key)).toBe(200);
    await app.accounts.users.setActive(ana.user.id, false);
    expect(await online(app, ana.key)).toBe(401);
    expect(await keyQueriesDuring(app, async () => expect(await online(app, bruno.key)).toBe(200))).toEqual([]);
  });
});

/** A key's holder, the key expiring `expiresInMs` after `from` (by default, the moment of the call). */
const holder = (tokenId: number, userId: number, expiresInMs = 60_000, from = new Date()): Authenticated => ({
  user: { id: userId, username: `user${userId}`, is_admin: false, is_active: true },
  tokenId,
  expiresAt: new Date(from.getTime() + expiresInMs),
});

describe('KeyCache', () => {
  it('does not remember a lookup that began before a revocation', () => {
    const cache = new KeyCache({ ttlMs: LONG_CACHE_MS });
    const now = new Date();
    const mark = cache.mark();
    cache.forget({ userId: 1 }); // a logout lands while the database is being asked
    cache.remember('digest-a', holder(10, 1), mark, now);
    expect(cache.lookup('digest-a', now)).toBeUndefined();
    cache.remember('digest-a', holder(10, 1), cache.mark(), now);
    expect(cache.lookup('digest-a', now)).toMatchObject({ tokenId: 10 });
  });

  it('refuses a remembered key past its expiry', () => {
    const cache = new KeyCache({ ttlMs: LONG_CACHE_MS });
    const now = new Date();
    // Expiring 5 s after `now` itself: a clock read a millisecond later would leave the key valid at now + 5 s.
    cache.remember('digest-a', holder(10, 1, 5_000, now), cache.mark(), now);
    expect(cache.lookup('digest-a', now)).toBeDefined();
    expect(cache.lookup('digest-a', new Date(now.getTime() + 5_000))).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('drops the keys a revocation names: one by id, or all of a user', () => {
    const cache = new KeyCache({ ttlMs: LONG_CACHE_MS });
    const now = new Date();
    for (const [digest, tokenId, userId] of [['a1', 1, 1], ['a2', 2, 1], ['b3', 3, 2]] as const) cache.remember(digest, holder(tokenId, userId), cache.mark(), now);
    cache.forget({ tokenId: 1 });
    expect(['a1', 'a2', 'b3'].map((digest) => Boolean(cache.lookup(digest, now)))).toEqual([false, true, true]);
    cache.forget({ userId: 1 });
    expect(['a1', 'a2', 'b3'].map((digest) => Boolean(cache.lookup(digest, now)))).toEqual([false, false, true]);
  });

  it('keeps at most `max` keys, dropping the least recently used', () => {
    const cache = new KeyCache({ ttlMs: LONG_CACHE_MS, max: 2 });
    const now = new Date();
    cache.remember('a', holder(1, 1), cache.mark(), now);
    cache.remember('b', holder(2, 2), cache.mark(), now);
    cache.lookup('a', now);
    cache.remember('c', holder(3, 3), cache.mark(), now);
    expect(cache.size).toBe(2);
    expect(cache.lookup('b', now)).toBeUndefined();
    expect(cache.lookup('a', now)).toBeDefined();
  });

  it('remembers nothing with a lifetime of 0', () => {
    const cache = new KeyCache({ ttlMs: 0 });
    cache.remember('a', holder(1, 1), cache.mark(), new Date());
    expect(cache.lookup('a', new Date())).toBeUndefined();
  });

  it('reads back the notices it writes, and ignores anything else', () => {
    expect(decodeRevocation(encodeRevocation({ tokenId: 12 }))).toEqual({ tokenId: 12 });
    expect(decodeRevocation(encodeRevocation({ userId: 3 }))).toEqual({ userId: 3 });
    for (const junk of ['', 'null', '{}', '{"token":"12"}', '{"user":1.5}', '[1]', 'not json']) expect(decodeRevocation(junk), junk).toBeUndefined();
  });
});

/** Polls `done` every 20 ms for up to a second; the time it took. */
async function withinOneSecond(done: () => boolean): Promise<number> {
  const started = Date.now();
  while (!done()) {
    if (Date.now() - started > 1_000) throw new Error('not within one second');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return Date.now() - started;
}

interface ChannelCase {
  name: string;
  /** A channel as one server instance builds it. */
  open(): RevocationChannel;
  /** Waits until the connections `open` made can publish (a server's are long open before any logout). */
  publishersReady(): Promise<void>;
  /** The admin CLI's one-off notice, on the same channel. */
  publishOnce(userId: number): Promise<boolean>;
  /** Cuts the listeners' connections (each listener reconnects by itself). */
  cutListeners(): Promise<void>;
  setUp(): Promise<void>;
  tearDown(): Promise<void>;
}

describe.each<ChannelCase>([
  (() => {
    const prefix = `palanque-test-revocations-${randomBytes(4).toString('hex')}`;
    const connections: Redis[] = [];
    let sequelize: Sequelize;
    return {
      name: 'Redis',
      open() {
        // Named, so that cutting connections below cuts only this file's (the subscriber inherits the name).
        const redis = new Redis(REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectionName: prefix });
        connections.push(redis);
        return revocationChannel({ databaseUrl: 'sqlite::memory:', sequelize, redis, redisPrefix: prefix, logger })!;
      },
      async publishersReady() {
        // Opened without an offline queue, a connection still connecting refuses the PUBLISH (the notice is
        // logged and lost): under a loaded CI that raced the first revocation of a test.
        await Promise.all(connections.map((redis) => (redis.status === 'ready' ? undefined : once(redis, 'ready'))));
      },
      publishOnce: (userId) => publishRevocation({ databaseUrl: 'sqlite::memory:', sequelize, redisUrl: REDIS_URL, redisPrefix: prefix, logger }, { userId }),
      async cutListeners() {
        const admin = new Redis(REDIS_URL);
        try {
          const clients = String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')).split('\n');
          const ours = clients.filter((line) => line.includes(` name=${prefix} `)).map((line) => /\bid=(\d+)/.exec(line)![1]!);
          expect(ours).toHaveLength(2);
          for (const id of ours) await admin.call('CLIENT', 'KILL', 'ID', id);
        } finally {
          admin.disconnect();
        }
      },
      async setUp() {
        sequelize = await openDatabase('sqlite::memory:', logger);
      },
      async tearDown() {
        for (const redis of connections.splice(0)) redis.disconnect();
        await sequelize.close();
      },
    } satisfies ChannelCase;
  })(),
  (() => {
    let database: TestDatabase;
    let sequelize: Sequelize;
    return {
      name: 'PostgreSQL',
      open: () => revocationChannel({ databaseUrl: database.url, sequelize, redisPrefix: 'unused', logger })!,
      publishersReady: async () => undefined, // notices go through the server's open database pool
      publishOnce: (userId) => publishRevocation({ databaseUrl: database.url, sequelize, redisUrl: undefined, redisPrefix: 'unused', logger }, { userId }),
      async cutListeners() {
        await sequelize.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`);
      },
      async setUp() {
        database = await createPostgresDatabase(POSTGRES_SERVER);
        sequelize = await openDatabase(database.url, logger);
      },
      async tearDown() {
        await sequelize.close();
        await database.drop();
      },
    } satisfies ChannelCase;
  })(),
])('revocations through $name', (channelCase) => {
  const channels: RevocationChannel[] = [];
  let revoking: KeyCache;
  let elsewhere: KeyCache;

  beforeAll(async () => {
    await channelCase.setUp();
  });

  afterAll(async () => {
    await channelCase.tearDown();
  });

  afterEach(async () => {
    await Promise.all(channels.splice(0).map((channel) => channel.close()));
  });

  /** Two instances' caches, each listening on its own connection. */
  async function twoInstances(): Promise<void> {
    const [a, b] = [channelCase.open(), channelCase.open()];
    channels.push(a, b);
    revoking = new KeyCache({ ttlMs: LONG_CACHE_MS, channel: a, logger });
    elsewhere = new KeyCache({ ttlMs: LONG_CACHE_MS, channel: b, logger });
    await Promise.all([revoking.listen(), elsewhere.listen(), channelCase.publishersReady()]);
  }

  const cachedElsewhere = (digest: string, tokenId: number, userId: number) => elsewhere.remember(digest, holder(tokenId, userId), elsewhere.mark(), new Date());
  const has = (cache: KeyCache, digest: string) => cache.lookup(digest, new Date()) !== undefined;

  it('drops on another instance, within a second, a key revoked by id and the keys of a revoked user', async () => {
    await twoInstances();
    for (const [digest, tokenId, userId] of [['a1', 1, 1], ['a2', 2, 1], ['b3', 3, 2], ['c4', 4, 3]] as const) cachedElsewhere(digest, tokenId, userId);
    await revoking.revoke({ tokenId: 1 });
    await withinOneSecond(() => !has(elsewhere, 'a1'));
    expect(has(elsewhere, 'a2')).toBe(true);
    await revoking.revoke({ userId: 2 });
    await withinOneSecond(() => !has(elsewhere, 'b3'));
    expect(has(elsewhere, 'a2') && has(elsewhere, 'c4')).toBe(true);
  });

  it("carries the admin CLI's one-off notice to the listening instances", async () => {
    await twoInstances();
    cachedElsewhere('a1', 1, 7);
    expect(await channelCase.publishOnce(7)).toBe(true);
    await withinOneSecond(() => !has(elsewhere, 'a1'));
  });

  it('empties the cache of a listener whose connection was cut, once it is back (notices sent meanwhile are lost)', async () => {
    await twoInstances();
    cachedElsewhere('a1', 1, 1);
    await channelCase.cutListeners();
    await new Promise<void>((resolve, reject) => {
      const started = Date.now();
      const poll = setInterval(() => {
        if (!has(elsewhere, 'a1')) resolve(clearInterval(poll));
        else if (Date.now() - started > 5_000) reject(new Error('the cache was not emptied after the reconnection'));
      }, 20);
    });
    // Back to listening: a new notice arrives again.
    cachedElsewhere('b2', 2, 2);
    await withinOneSecond(() => {
      void revoking.revoke({ userId: 2 });
      return !has(elsewhere, 'b2');
    });
  });
});
