/**
 * Logins, API keys and their revocation, over HTTP against the real app: login by username or e-mail
 * (case-insensitively) hands out a fresh, random, prefixed key with the configured lifetime; wrong
 * credentials get one answer and cost the same work whether or not the account exists; inactive
 * accounts, expired, revoked and made-up keys are refused; logout and remove_token revoke exactly one
 * key; the database keeps only hashes (of keys and passwords: argon2id), and weaker password hashes
 * (scrypt from earlier releases, argon2id below the current cost) are upgraded at the next successful
 * password check. The hashes themselves are tested in accounts-passwords.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryTypes } from 'sequelize';
import type { ApiTokenRow } from '../src/accounts/models.js';
import { loadConfig } from '../src/config.js';
import { hashPassword, verifyPassword } from '../src/accounts/passwords.js';
import { appsClosedAfterEach, startTestApp, testAccountSettings, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/accounts.js';
import { legacyScryptHash } from './helpers/legacy-passwords.js';

/** Not a whole number of hours or days, so a lifetime taken from anywhere else would show. */
const TOKEN_LIFETIME_MS = 2 * 3600_000 + 17 * 60_000 + 13_000;
/** Tests here fail many logins from 127.0.0.1; the login lock is tested elsewhere. */
const NO_LOCK = { maxFailures: 100_000, addressMaxFailures: 100_000, maxDelayMs: 1000, windowMs: 15 * 60_000 };
/** PASSWORD_HASH_COST as deployed (OWASP's argon2id parameters), where the tests' cheap cost would hide something. */
const DEFAULT_HASH_COST = loadConfig({}).accounts.passwordHashCost;

let app: TestApp;
let ana: TestUser;

beforeAll(async () => {
  app = await startTestApp({ accounts: { tokenLifetimeMs: TOKEN_LIFETIME_MS, loginLock: NO_LOCK } });
  ana = await createUser(app, { username: 'ana.souza', email: 'ana.souza@exemplo.com.br', first_name: 'Ana', last_name: 'Souza' });
});

afterAll(async () => {
  await app?.close();
});

/** Apps with special settings, closed after each test. */
const startExtraApp = appsClosedAfterEach();

interface Answer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

async function call(target: TestApp, method: string, path: string, options: { json?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const hasBody = options.json !== undefined || options.raw !== undefined;
  const response = await fetch(`${target.baseUrl}${path}`, {
    method,
    headers: { ...(hasBody ? { 'Content-Type': 'application/json' } : {}), ...options.headers },
    ...(hasBody ? { body: options.raw ?? JSON.stringify(options.json) } : {}),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined, text };
}

const login = (username: string, password: string, target = app, headers: Record<string, string> = {}) =>
  call(target, 'POST', '/api/auth/login', { json: { username, password }, headers });

/** GET /api/usuario/{own id}/: the ApiKeyAuth operation used to try keys. */
const profile = (userId: number, authorization?: string, target = app) =>
  call(target, 'GET', `/api/usuario/${userId}/`, { headers: authorization === undefined ? {} : { Authorization: authorization } });

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

/** Asserts the error model, with a request id that matches the header. */
function expectError(answer: Answer, status: number, code: string): void {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.body).toMatchObject({ success: false, error: { code, message: expect.any(String), details: expect.any(Array) } });
  expect(answer.body.request_id).toMatch(/.+/);
  expect(answer.body.request_id).toBe(answer.headers.get('x-request-id'));
}

function expectUnauthorized(answer: Answer): void {
  expectError(answer, 401, 'unauthorized');
  expect(answer.headers.get('www-authenticate')).toMatch(/^Token\b/);
}

async function rowsOf(target: TestApp, table: string): Promise<Array<Record<string, unknown>>> {
  return target.sequelize.query(`SELECT * FROM ${table}`, { type: QueryTypes.SELECT });
}

/** Every table of the database, as text, one entry per row (to look for secrets at rest). */
async function everyRowAsText(target: TestApp): Promise<Array<{ table: string; row: string }>> {
  const tables = (await target.sequelize.getQueryInterface().showAllTables()) as unknown as Array<string | { tableName: string }>;
  const found: Array<{ table: string; row: string }> = [];
  for (const entry of tables) {
    const table = typeof entry === 'string' ? entry : entry.tableName;
    for (const row of await rowsOf(target, `"${table}"`)) {
      const text = Object.values(row)
        .map((value) => (Buffer.isBuffer(value) ? value.toString('utf8') : value instanceof Date ? value.toISOString() : String(value)))
        .join('\u0000');
      found.push({ table, row: text });
    }
  }
  return found;
}

describe('POST /api/auth/login', () => {
  it('logs in by username, case-insensitively, with a fresh key of the configured lifetime', async () => {
    const before = Date.now();
    const answer = await login('ANA.Souza', ana.password);
    const after = Date.now();
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ success: true, message: expect.any(String), request_id: answer.headers.get('x-request-id') });
    const { data } = answer.body;
    expect(data.token_type).toBe('Token');
    // plq_ and at least 160 bits: 27 base64url characters carry 162.
    expect(data.token).toMatch(/^plq_[A-Za-z0-9_-]{27,}$/);
    const expiresAt = Date.parse(data.expires_at);
    expect(expiresAt).toBeGreaterThanOrEqual(before + TOKEN_LIFETIME_MS - 1000);
    expect(expiresAt).toBeLessThanOrEqual(after + TOKEN_LIFETIME_MS + 1000);
    expect(data.user).toMatchObject({ id: ana.user.id, username: 'ana.souza', email: 'ana.souza@exemplo.com.br', is_active: true });
    // The key works.
    expect((await profile(ana.user.id, `Token ${data.token}`)).status).toBe(200);
  });

  it('logs in by e-mail, case-insensitively', async () => {
    const answer = await login('  Ana.Souza@EXEMPLO.com.BR', ana.password);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.data.user.id).toBe(ana.user.id);
    expect(answer.body.data.token).toMatch(/^plq_[A-Za-z0-9_-]{27,}$/);
  });

  it('gives every login its own key', async () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 3; i += 1) {
      const answer = await login('ana.souza', ana.password);
      expect(answer.status).toBe(200);
      tokens.add(answer.body.data.token);
    }
    expect(tokens.size).toBe(3);
    for (const token of tokens) expect((await profile(ana.user.id, `Token ${token}`)).status).toBe(200);
  });

  it('answers the user without any password hash, and records the login time', async () => {
    const { user, password } = await createUser(app);
    expect((await app.accounts.users.byId(user.id))!.last_login).toBeNull();
    const before = Date.now();
    const answer = await login(user.username, password);
    const after = Date.now();
    expect(answer.status).toBe(200);
    for (const field of Object.keys(answer.body.data.user)) expect(field).not.toMatch(/pass|hash|key|secret/i);
    expect(answer.text).not.toContain('$argon2id$');
    expect(answer.text).not.toContain(password);

    const stored = (await app.accounts.users.byId(user.id))!;
    expect(stored.last_login).not.toBeNull();
    const lastLogin = new Date(stored.last_login!).getTime();
    expect(lastLogin).toBeGreaterThanOrEqual(before - 1000);
    expect(lastLogin).toBeLessThanOrEqual(after + 1000);
    expect(Date.parse(answer.body.data.user.last_login)).toBe(lastLogin);
  });

  it('answers a wrong password and an unknown user identically: 401 invalid_credentials', async () => {
    const wrong = await login('ana.souza', 'not-her-password');
    const unknown = await login('nobody.here', 'not-her-password');
    const unknownEmail = await login('nobody@exemplo.com.br', 'not-her-password');
    for (const answer of [wrong, unknown, unknownEmail]) expectError(answer, 401, 'invalid_credentials');
    expect(unknown.body.error).toEqual(wrong.body.error);
    expect(unknownEmail.body.error).toEqual(wrong.body.error);
    expect(wrong.text).not.toContain('not-her-password');
  });

  it('answers 422 validation_failed naming a missing or empty password, without echoing it', async () => {
    const missing = await call(app, 'POST', '/api/auth/login', { json: { username: 'ana.souza' } });
    expectError(missing, 422, 'validation_failed');
    expect(missing.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'password' })]);

    const empty = await login('ana.souza', '');
    expectError(empty, 422, 'validation_failed');
    expect(empty.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'password' })]);
    expect(empty.body.error.details[0]).not.toHaveProperty('value');

    const noUsername = await call(app, 'POST', '/api/auth/login', { json: { password: ana.password } });
    expectError(noUsername, 422, 'validation_failed');
    expect(noUsername.body.error.details.map((detail: { field: string }) => detail.field)).toEqual(['username']);
    expect(noUsername.text).not.toContain(ana.password);
  });

  it('answers 400 to a body that is not JSON', async () => {
    const answer = await call(app, 'POST', '/api/auth/login', { raw: '{"username": "ana.souza", "password": ' });
    expectError(answer, 400, 'bad_request');
    expect(answer.body.error.details).toEqual([expect.objectContaining({ location: 'body', rule: 'json' })]);
  });

  it('refuses the right password of an inactive account with 403, and a wrong one with the usual 401', async () => {
    const inactive = await createUser(app, { is_active: false });
    const right = await login(inactive.user.username, inactive.password);
    expectError(right, 403, 'account_inactive');
    expect(right.text).not.toContain('plq_');

    const wrong = await login(inactive.user.username, 'not-the-password');
    expectError(wrong, 401, 'invalid_credentials');
    const unknown = await login('nobody.at.all', 'not-the-password');
    expect(wrong.body.error).toEqual(unknown.body.error);
  });
});

describe('equal work for unknown users', () => {
  it('takes as long for an unknown username as for a wrong password', async () => {
    // The highest cost (152 MiB, several times the rest of a login's work), so that skipping the hash shows.
    const slow = await startExtraApp({ accounts: { passwordHashCost: 20, loginLock: NO_LOCK } });
    const real = await createUser(slow);
    const time = async (username: string): Promise<number> => {
      const started = performance.now();
      const answer = await login(username, 'wrong-password', slow);
      const elapsed = performance.now() - started;
      expect(answer.status).toBe(401);
      return elapsed;
    };
    // Load from other work (CI runs test files in parallel) only ever adds time, and has slowed every known-name
    // login of a round while an unknown-name one ran in a quiet moment. So the typical unknown-name login (the
    // median) is held against the fastest known-name one: lenient to load, yet a login that skipped the hash
    // would still answer in a few milliseconds against the hash's hundred or more.
    const fastest = (values: number[]) => Math.min(...values);
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

    // Warm up both paths (connection, decoy hash, query plans), then alternate to share any drift.
    await time(real.user.username);
    await time('nobody.timing');
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      known.push(await time(real.user.username));
      unknown.push(await time(`nobody.timing.${i}`));
    }
    // Without the decoy hash an unknown name would skip the argon2id check and answer several times faster.
    expect(median(unknown), `unknown ${unknown.map(Math.round)} vs known ${known.map(Math.round)} ms`).toBeGreaterThanOrEqual(0.5 * fastest(known));
  }, 60_000);
});

describe('Authorization on an ApiKeyAuth operation', () => {
  it('accepts "Token <key>" and "Bearer <key>"', async () => {
    const token = await profile(ana.user.id, `Token ${ana.key}`);
    expect(token.status, token.text).toBe(200);
    expect(token.body).toMatchObject({ success: true, data: { id: ana.user.id, username: 'ana.souza' } });
    const bearer = await profile(ana.user.id, `Bearer ${ana.key}`);
    expect(bearer.status, bearer.text).toBe(200);
    expect(bearer.body.data.id).toBe(ana.user.id);
  });

  it.each<[string, () => string | undefined]>([
    ['no header', () => undefined],
    ['Basic credentials', () => `Basic ${Buffer.from(`ana.souza:${ana.password}`).toString('base64')}`],
    ['"Token" without a key', () => 'Token'],
    ['"Token " with a blank key', () => 'Token   '],
    ['a made-up key', () => `Token plq_${randomBytes(32).toString('base64url')}`],
    ['a live key without the scheme', () => ana.key],
  ])('answers 401 unauthorized with WWW-Authenticate to %s', async (_label, authorization) => {
    const answer = await profile(ana.user.id, authorization());
    expectUnauthorized(answer);
    expect(answer.text).not.toContain('ana.souza@');
  });

  it('refuses a key whose expiry has passed', async () => {
    const user = await createUser(app);
    expect((await profile(user.user.id, `Token ${user.key}`)).status).toBe(200);
    const [changed] = await app.accounts.models.ApiToken.update({ expires_at: new Date(Date.now() - 1000) }, { where: { key_hash: sha256Hex(user.key) } });
    expect(changed).toBe(1);
    expectUnauthorized(await profile(user.user.id, `Token ${user.key}`));
  });

  it('refuses a key that outlived a tiny lifetime', async () => {
    const shortLived = await startExtraApp({ accounts: { tokenLifetimeMs: 300 } });
    const user = await createUser(shortLived);
    const answer = await login(user.user.username, user.password, shortLived);
    expect(answer.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expectUnauthorized(await profile(user.user.id, `Token ${answer.body.data.token}`, shortLived));
  });

  it('refuses the live key of a user who became inactive', async () => {
    const user = await createUser(app);
    expect((await profile(user.user.id, `Token ${user.key}`)).status).toBe(200);
    await app.accounts.users.setActive(user.user.id, false);
    expectUnauthorized(await profile(user.user.id, `Token ${user.key}`));
  });
});

describe('POST /api/auth/logout', () => {
  it('revokes the presented key and only that one', async () => {
    const user = await createUser(app);
    const phone = (await login(user.user.username, user.password)).body.data.token as string;
    const logout = await call(app, 'POST', '/api/auth/logout', { headers: { Authorization: `Token ${phone}` } });
    expect(logout.status, logout.text).toBe(200);
    expect(logout.body).toMatchObject({ success: true, data: { revoked: true }, request_id: expect.any(String) });

    expectUnauthorized(await profile(user.user.id, `Token ${phone}`));
    expect((await profile(user.user.id, `Token ${user.key}`)).status).toBe(200);
    // Logging out again with the revoked key: it is no longer a key.
    expectUnauthorized(await call(app, 'POST', '/api/auth/logout', { headers: { Authorization: `Token ${phone}` } }));
    const row = (await app.accounts.models.ApiToken.findOne({ where: { key_hash: sha256Hex(phone) }, raw: true })) as ApiTokenRow | null;
    expect(row).not.toBeNull();
    expect(row!.revoked_at).not.toBeNull();
  });

  it('answers 401 without a key', async () => {
    expectUnauthorized(await call(app, 'POST', '/api/auth/logout'));
  });
});

describe('POST /api/tokens/remove_token/', () => {
  const removeToken = (json: unknown, headers: Record<string, string> = {}) => call(app, 'POST', '/api/tokens/remove_token/', { json, headers });

  it("revokes another device's key by its value, once", async () => {
    const user = await createUser(app);
    const lostPhone = (await login(user.user.username, user.password)).body.data.token as string;
    expect((await profile(user.user.id, `Token ${lostPhone}`)).status).toBe(200);

    const removed = await removeToken({ token_key: lostPhone });
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body).toMatchObject({ success: true, data: { revoked: true } });
    expectUnauthorized(await profile(user.user.id, `Token ${lostPhone}`));
    expect((await profile(user.user.id, `Token ${user.key}`)).status).toBe(200);

    const again = await removeToken({ token_key: lostPhone });
    expectError(again, 404, 'not_found');
    expect(again.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'token_key' })]);
    expect(again.text).not.toContain(lostPhone);
  });

  it('answers 404 not_found to an unknown or expired key', async () => {
    expectError(await removeToken({ token_key: `plq_${randomBytes(32).toString('base64url')}` }), 404, 'not_found');
    const user = await createUser(app);
    await app.accounts.models.ApiToken.update({ expires_at: new Date(Date.now() - 1000) }, { where: { key_hash: sha256Hex(user.key) } });
    expectError(await removeToken({ token_key: user.key }), 404, 'not_found');
  });

  it('answers 422 validation_failed without token_key, or with an empty one', async () => {
    for (const body of [{}, { token_key: '' }]) {
      const answer = await removeToken(body);
      expectError(answer, 422, 'validation_failed');
      expect(answer.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'token_key' })]);
    }
  });
});

describe('secrets at rest', () => {
  it('keeps only the sha256 of a key and a salted argon2id hash of a password', async () => {
    const user = await createUser(app);
    const answer = await login(user.user.username, user.password);
    expect(answer.status).toBe(200);
    const key = answer.body.data.token as string;

    const tokens = await rowsOf(app, 'api_tokens');
    expect(tokens.length).toBeGreaterThan(0);
    for (const row of tokens) {
      for (const value of Object.values(row)) expect(String(value)).not.toContain(key);
    }
    const mine = tokens.filter((row) => row.key_hash === sha256Hex(key));
    expect(mine).toHaveLength(1);
    expect(Number(mine[0]!.user_id)).toBe(user.user.id);
    expect(String(mine[0]!.key_hash)).toMatch(/^[0-9a-f]{64}$/);

    const [stored] = await app.sequelize.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = :id', {
      type: QueryTypes.SELECT,
      replacements: { id: user.user.id },
    });
    expect(stored!.password_hash).toMatch(/^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(stored!.password_hash).not.toContain(user.password);
    // Nothing the app logged holds the password or the key.
    const logged = JSON.stringify(app.logs);
    expect(logged).not.toContain(user.password);
    expect(logged).not.toContain(key);
  });

  it('keeps no fast, unsalted digest of a request that carried a password (checkCredential with Idempotency-Key)', async () => {
    // A sha256 of `{"username":"…","password":"…"}` could be brute-forced at GPU speed, skipping scrypt.
    const user = await createUser(app);
    const body = JSON.stringify({ username: user.user.username, password: user.password });
    const answer = await call(app, 'POST', '/check/credential/', { raw: body, headers: { ...user.headers, 'Idempotency-Key': `confirm-${randomBytes(4).toString('hex')}` } });
    expect(answer.status, answer.text).toBe(200);
    const digests = ['', 'application/json\n'].flatMap((prefix) => {
      const digest = createHash('sha256').update(prefix + body).digest();
      return [digest.toString('hex'), digest.toString('base64'), digest.toString('base64url')];
    });
    for (const { table, row } of await everyRowAsText(app)) {
      expect(row, `a row of ${table}`).not.toContain(user.password);
      for (const digest of digests) expect(row, `a row of ${table} holds sha256 of the request body`).not.toContain(digest);
    }
  });
});

describe('password hashes: stored, upgraded at the next successful check, never a 500', () => {
  const storedHashOf = async (target: TestApp, userId: number) => {
    const [row] = await target.sequelize.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = :id', {
      type: QueryTypes.SELECT,
      replacements: { id: userId },
    });
    return row!.password_hash;
  };
  const checkCredential = (user: TestUser, password: string) =>
    call(app, 'POST', '/check/credential/', { json: { username: user.user.username, password }, headers: user.headers });

  it("stores a new user's password as argon2id with OWASP's parameters (m=19456, t=2, p=1) at the default cost", async () => {
    const deployed = await startExtraApp({ accounts: { passwordHashCost: DEFAULT_HASH_COST } });
    const user = await createUser(deployed);
    expect(await storedHashOf(deployed, user.user.id)).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect((await login(user.user.username, user.password, deployed)).status).toBe(200);
  });

  it("replaces an earlier release's scrypt hash with argon2id at the next successful login, and not after a failed one", async () => {
    const user = await createUser(app);
    const scryptHash = await legacyScryptHash(user.password);
    await app.accounts.users.setPasswordHash(user.user.id, scryptHash);

    expectError(await login(user.user.username, 'wrong-password'), 401, 'invalid_credentials');
    expect(await storedHashOf(app, user.user.id)).toBe(scryptHash);

    const answer = await login(user.user.username, user.password);
    expect(answer.status, answer.text).toBe(200);
    const upgraded = await storedHashOf(app, user.user.id);
    expect(upgraded).toMatch(/^\$argon2id\$v=19\$m=608,t=2,p=1\$/);
    expect(await verifyPassword(user.password, upgraded, testAccountSettings.passwordHashCost)).toEqual({ valid: true, needsRehash: false });
    expect((await verifyPassword('wrong-password', upgraded, testAccountSettings.passwordHashCost)).valid).toBe(false);
    // It still logs in, without hashing again.
    expect((await login(user.user.username, user.password)).status).toBe(200);
    expect(await storedHashOf(app, user.user.id)).toBe(upgraded);
  });

  it('replaces a scrypt hash at a successful checkCredential too, and not after a failed one', async () => {
    const user = await createUser(app);
    const scryptHash = await legacyScryptHash(user.password);
    await app.accounts.users.setPasswordHash(user.user.id, scryptHash);
    expectError(await checkCredential(user, 'wrong-password'), 401, 'invalid_credentials');
    expect(await storedHashOf(app, user.user.id)).toBe(scryptHash);
    const answer = await checkCredential(user, user.password);
    expect(answer.status, answer.text).toBe(200);
    expect(await storedHashOf(app, user.user.id)).toMatch(/^\$argon2id\$v=19\$m=608,t=2,p=1\$/);
  });

  it('replaces an argon2id hash weaker than the current cost, and keeps one at the current cost', async () => {
    const user = await createUser(app);
    const current = await storedHashOf(app, user.user.id);
    expect((await login(user.user.username, user.password)).status).toBe(200);
    expect(await storedHashOf(app, user.user.id)).toBe(current);

    await app.accounts.users.setPasswordHash(user.user.id, await hashPassword(user.password, testAccountSettings.passwordHashCost - 2));
    expect(await storedHashOf(app, user.user.id)).toMatch(/^\$argon2id\$v=19\$m=152,/);
    expect((await login(user.user.username, user.password)).status).toBe(200);
    expect(await storedHashOf(app, user.user.id)).toMatch(/^\$argon2id\$v=19\$m=608,t=2,p=1\$/);
  });

  it('lets parallel logins of a scrypt account all in, leaving one working argon2id hash', async () => {
    const user = await createUser(app);
    await app.accounts.users.setPasswordHash(user.user.id, await legacyScryptHash(user.password));
    const answers = await Promise.all(Array.from({ length: 4 }, () => login(user.user.username, user.password)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    const upgraded = await storedHashOf(app, user.user.id);
    expect(upgraded).toMatch(/^\$argon2id\$/);
    expect((await verifyPassword(user.password, upgraded, testAccountSettings.passwordHashCost)).valid).toBe(true);
  });

  it('never lets a re-hash of the old password overwrite a password changed meanwhile', async () => {
    const user = await createUser(app);
    const verified = await legacyScryptHash(user.password);
    await app.accounts.users.setPasswordHash(user.user.id, verified);
    // The password changes between a login's check and its re-hash.
    const changed = await hashPassword('a-brand-new-password', testAccountSettings.passwordHashCost);
    await app.accounts.users.setPasswordHash(user.user.id, changed);
    const reHashed = await hashPassword(user.password, testAccountSettings.passwordHashCost);
    expect(await app.accounts.users.upgradePasswordHash(user.user.id, verified, reHashed)).toBe(false);
    expect(await storedHashOf(app, user.user.id)).toBe(changed);
    expect(await app.accounts.users.upgradePasswordHash(user.user.id, changed, reHashed)).toBe(true);
    expect(await storedHashOf(app, user.user.id)).toBe(reHashed);
  });

  it.each([
    ['empty', ''],
    ['not a hash', 'garbage'],
    ['argon2id without its parts', '$argon2id$v=19$m=608,t=2,p=1$xx$yy'],
    // (Hashes asking for unbounded memory or passes are refused by accounts-passwords' tests, with genuine
    // hashes just past the bounds: a row asking for terabytes here would take the test machine down if the bound broke.)
    ['argon2id of another variant', '$argon2d$v=19$m=608,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
    ['scrypt asking for N=2^99', '$scrypt$ln=99,r=8,p=1$c2FsdA==$AAAA'],
    ['another scheme', '$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW'],
  ])('answers 401 invalid_credentials, not 500, for an account whose stored hash is damaged: %s', async (_label, damaged) => {
    const user = await createUser(app);
    await app.accounts.users.setPasswordHash(user.user.id, damaged);
    expectError(await login(user.user.username, user.password), 401, 'invalid_credentials');
    expectError(await checkCredential(user, user.password), 401, 'invalid_credentials');
    expect(await storedHashOf(app, user.user.id)).toBe(damaged);
  });
});

describe('Idempotency-Key on login', () => {
  it('is accepted, but a login answer is never stored: a retry logs in again, and no table holds the key', async () => {
    // The contract: "The key is shown only in this answer; the server keeps only a hash of it."
    const user = await createUser(app);
    const idempotencyKey = { 'Idempotency-Key': `login-${randomBytes(4).toString('hex')}` };
    const first = await login(user.user.username, user.password, app, idempotencyKey);
    const again = await login(user.user.username, user.password, app, idempotencyKey);
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    const keys = [first.body.data.token as string, again.body.data.token as string];
    expect(keys[1]).not.toBe(keys[0]);
    // createUser's key and the two logins.
    expect(await app.accounts.models.ApiToken.count({ where: { user_id: user.user.id } })).toBe(3);
    const rows = await everyRowAsText(app);
    for (const key of keys) {
      // The scan does read api_tokens: the key's hash is there.
      expect(rows.some(({ table, row }) => table === 'api_tokens' && row.includes(sha256Hex(key)))).toBe(true);
      expect(rows.filter(({ row }) => row.includes(key)).map(({ table }) => table), 'tables holding a raw API key').toEqual([]);
    }
  });
});
