/**
 * The login lock against password guessing, and the password re-check (POST /check/credential/).
 * Proves that failed password checks lock an account (username or e-mail alike) and an address for the
 * window, with a 429 login_locked and a Retry-After that even the right password cannot get past; that
 * an unknown name locks exactly like a real one; that refused attempts do not extend the lock; that a
 * login clears the account's failures but not the address's; that GET /api/check/login_attempt/ reports
 * the caller's state; that instances sharing a database share the lock; that the re-check only confirms
 * the caller's own password and counts toward the same lock; and that failures are stored without the
 * attempted passwords.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestAppOptions } from './helpers/app.js';
import { createTestDatabase } from './helpers/database.js';
import { createUser } from './helpers/accounts.js';

const WINDOW_SECONDS = 15 * 60;

const apps: TestApp[] = [];
const cleanups: Array<() => Promise<void>> = [];
/** An app whose client address is taken from X-Forwarded-For (the tests play many clients). */
async function start(options: TestAppOptions = {}): Promise<TestApp> {
  const app = await startTestApp({ ...options, config: { trustProxy: 'loopback', ...options.config } });
  apps.push(app);
  return app;
}
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A new documentation-range address per call, so that only the subject a test means to lock counts. */
let addressSequence = 0;
function freshAddress(): string {
  addressSequence += 1;
  return `198.51.${Math.floor(addressSequence / 250) % 250}.${(addressSequence % 250) + 1}`;
}

function login(app: TestApp, username: string, password: string, address = freshAddress()) {
  return fetch(`${app.baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': address },
    body: JSON.stringify({ username, password }),
  });
}

function checkCredential(app: TestApp, headers: Record<string, string>, body: Record<string, unknown>, address = freshAddress()) {
  return fetch(`${app.baseUrl}/check/credential/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': address, ...headers },
    body: JSON.stringify(body),
  });
}

async function loginAttempt(app: TestApp, address: string) {
  const response = await fetch(`${app.baseUrl}/api/check/login_attempt/`, { headers: { 'X-Forwarded-For': address } });
  expect(response.status).toBe(200);
  const body = await response.json();
  expect(body).toMatchObject({ success: true, message: expect.any(String), request_id: expect.any(String) });
  return body.data as { attempts: number; limit: number; locked: boolean; retry_after_seconds: number; window_seconds: number };
}

interface ErrorBody {
  success: false;
  error: { code: string; message: string; details: unknown[] };
  request_id: string;
}

/** Asserts an answer in the error model with this status and code. */
async function expectError(response: Response, status: number, code: string): Promise<ErrorBody> {
  const body = (await response.json()) as ErrorBody;
  expect({ status: response.status, code: body.error?.code }).toEqual({ status, code });
  expect(body).toMatchObject({ success: false, error: { code, message: expect.any(String), details: expect.any(Array) }, request_id: expect.any(String) });
  return body;
}

/** Asserts a 429 login_locked with a Retry-After of whole seconds in (0, maxSeconds]; returns the seconds. */
async function expectLocked(response: Response, maxSeconds = WINDOW_SECONDS): Promise<number> {
  const body = await expectError(response, 429, 'login_locked');
  const header = response.headers.get('retry-after');
  expect(header).toMatch(/^\d+$/);
  const seconds = Number(header);
  expect(seconds).toBeGreaterThan(0);
  expect(seconds).toBeLessThanOrEqual(maxSeconds);
  expect(body.error.message).toContain(`${seconds} seconds`);
  return seconds;
}

async function expectLoggedIn(response: Response, userId: number): Promise<void> {
  const body = await response.json();
  expect({ status: response.status, body }).toMatchObject({
    status: 200,
    body: { success: true, data: { token: expect.any(String), token_type: 'Token', user: { id: userId } }, request_id: expect.any(String) },
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('per account', () => {
  it('locks an account after 5 failures from different addresses, even against the right password', async () => {
    const app = await start();
    const ana = await createUser(app);
    for (let i = 0; i < 5; i += 1) await expectError(await login(app, ana.user.username, 'wrong-password'), 401, 'invalid_credentials');
    await expectLocked(await login(app, ana.user.username, ana.password));
    // The username in another case and the e-mail name the same account, so they meet the same lock.
    await expectLocked(await login(app, ana.user.username.toUpperCase(), ana.password));
    await expectLocked(await login(app, ana.user.email, ana.password));
    // Another account is not affected.
    const bruno = await createUser(app);
    await expectLoggedIn(await login(app, bruno.user.username, bruno.password), bruno.user.id);
  });

  it('counts failures by e-mail and by username against one lock', async () => {
    const app = await start();
    const ana = await createUser(app);
    for (let i = 0; i < 5; i += 1) {
      const name = i % 2 === 0 ? ana.user.email.toUpperCase() : ana.user.username;
      await expectError(await login(app, name, 'wrong-password'), 401, 'invalid_credentials');
    }
    await expectLocked(await login(app, ana.user.email, ana.password));
    await expectLocked(await login(app, ana.user.username, ana.password));
  });

  it('answers 401 with the same message for a wrong password and for a name with no account', async () => {
    const app = await start();
    const ana = await createUser(app);
    const wrong = await expectError(await login(app, ana.user.username, 'wrong-password'), 401, 'invalid_credentials');
    const unknown = await expectError(await login(app, 'nobody.here', 'wrong-password'), 401, 'invalid_credentials');
    expect(unknown.error).toEqual(wrong.error);
  });

  it('checks no more than the limit of passwords when guesses arrive in parallel', async () => {
    const app = await start();
    const ana = await createUser(app);
    const responses = await Promise.all(Array.from({ length: 12 }, (_, i) => login(app, ana.user.username, `parallel-guess-${i}`)));
    const statuses = responses.map((response) => response.status).sort();
    for (const response of responses) await response.body?.cancel();
    // Every guess beyond the limit must be refused unchecked, whatever the timing.
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(5);
    expect(statuses.every((status) => status === 401 || status === 429)).toBe(true);
    expect(await app.accounts.models.LoginFailure.count({ where: { subject: `user:${ana.user.id}` } })).toBeLessThanOrEqual(5);
  });
});

describe('per address', () => {
  it('locks an address after failures spread over names, existing or not, for every other user', async () => {
    const app = await start();
    const [ana, bruno, carla] = [await createUser(app), await createUser(app), await createUser(app)];
    const address = freshAddress();
    const names = [ana.user.username, bruno.user.email, 'ghost.one', 'ghost.two@exemplo.com.br', ana.user.username];
    for (const name of names) await expectError(await login(app, name, 'wrong-password', address), 401, 'invalid_credentials');
    await expectLocked(await login(app, carla.user.username, carla.password, address));
    // No account reached its limit: the same user from another address logs in.
    await expectLoggedIn(await login(app, carla.user.username, carla.password, freshAddress()), carla.user.id);
    await expectLoggedIn(await login(app, ana.user.username, ana.password, freshAddress()), ana.user.id);
    // The address is still locked (a login elsewhere does not clear it).
    await expectLocked(await login(app, bruno.user.username, bruno.password, address));
  });
});

describe('unknown names', () => {
  it('locks a name with no account exactly like an account, so the lock reveals nothing', async () => {
    const app = await start();
    const ana = await createUser(app);
    // The two are tried in turns, each from fresh addresses, so that only the name counts.
    const names = { real: ana.user.username, ghost: 'ghost.account' };
    const statuses = { real: [] as number[], ghost: [] as number[] };
    const firstSent = { real: 0, ghost: 0 };
    for (let i = 0; i < 5; i += 1) {
      for (const who of ['real', 'ghost'] as const) {
        if (i === 0) firstSent[who] = Date.now();
        const response = await login(app, names[who], `wrong-password-${i}`);
        statuses[who].push(response.status);
        await expectError(response, 401, 'invalid_credentials');
      }
    }
    expect(statuses.ghost).toEqual(statuses.real);

    // Then both refuse even the right password (any password for the ghost), in the same words, with a
    // Retry-After of what is left of the window since the first failure, rounded up.
    const locked = { real: { body: {} as ErrorBody, seconds: 0 }, ghost: { body: {} as ErrorBody, seconds: 0 } };
    for (const who of ['real', 'ghost'] as const) {
      const response = await login(app, who === 'real' ? names.real : names.ghost.toUpperCase(), who === 'real' ? ana.password : 'any-password');
      const answered = Date.now();
      const seconds = await expectLocked(response.clone());
      expect(seconds).toBeGreaterThanOrEqual(Math.floor(WINDOW_SECONDS - (answered - firstSent[who]) / 1000));
      locked[who] = { body: await response.json(), seconds };
    }
    const wording = (body: ErrorBody) => ({ ...body.error, message: body.error.message.replace(/\d+/, 'N') });
    expect(wording(locked.ghost.body)).toEqual(wording(locked.real.body));
  });
});

describe('the window', () => {
  it('lets the right password in once the window has passed, however often a locked client retried', async () => {
    const app = await start({ accounts: { loginLock: { maxFailures: 2, windowMs: 1500 } } });
    const [ana, warm] = [await createUser(app), await createUser(app)];
    await expectLoggedIn(await login(app, warm.user.username, warm.password), warm.user.id); // first requests are slow
    const beforeFirst = Date.now();
    await expectError(await login(app, ana.user.username, 'wrong-password'), 401, 'invalid_credentials');
    // The lock ends when the first failure (recorded between these two instants) leaves the window.
    const afterFirst = Date.now();
    await expectError(await login(app, ana.user.username, 'wrong-password'), 401, 'invalid_credentials');
    // Retrying while locked, with wrong and right passwords, is refused and is not counted.
    for (const password of ['wrong-again', ana.password, 'wrong-once-more']) await expectLocked(await login(app, ana.user.username, password), 2);
    await sleep(Math.max(0, beforeFirst + 1000 - Date.now()));
    await expectLocked(await login(app, ana.user.username, 'late-wrong-guess'), 2);
    expect(await app.accounts.models.LoginFailure.count({ where: { subject: `user:${ana.user.id}` } })).toBe(2);
    // Had the retries counted, the lock would now last until about a window after the late one.
    await sleep(Math.max(0, afterFirst + 1500 + 100 - Date.now()));
    await expectLoggedIn(await login(app, ana.user.username, ana.password), ana.user.id);
  });

  // A window long enough that the three failing checks (slow on a loaded machine) all fall inside it.
  it('unlocks an address once the window has passed', async () => {
    const app = await start({ accounts: { loginLock: { maxFailures: 2, windowMs: 4000 } } });
    const ana = await createUser(app);
    const address = freshAddress();
    await expectError(await login(app, 'ghost.a', 'x', address), 401, 'invalid_credentials');
    const afterFirst = Date.now();
    await expectError(await login(app, 'ghost.b', 'x', address), 401, 'invalid_credentials');
    await expectLocked(await login(app, ana.user.username, ana.password, address), 4);
    expect(await loginAttempt(app, address)).toMatchObject({ attempts: 2, limit: 2, locked: true, window_seconds: 4 });
    // After the first failure leaves the window (the second may not have yet): one attempt left, not locked.
    await sleep(Math.max(0, afterFirst + 4000 + 100 - Date.now()));
    expect(await loginAttempt(app, address)).toMatchObject({ limit: 2, locked: false, retry_after_seconds: 0, window_seconds: 4 });
    await expectLoggedIn(await login(app, ana.user.username, ana.password, address), ana.user.id);
  });
});

describe('a successful login', () => {
  it("clears the account's failures", async () => {
    const app = await start();
    const ana = await createUser(app);
    for (let i = 0; i < 4; i += 1) await expectError(await login(app, ana.user.username, 'wrong-password'), 401, 'invalid_credentials');
    await expectLoggedIn(await login(app, ana.user.username, ana.password), ana.user.id);
    for (let i = 0; i < 4; i += 1) await expectError(await login(app, ana.user.username, 'wrong-password'), 401, 'invalid_credentials');
    await expectLoggedIn(await login(app, ana.user.username, ana.password), ana.user.id);
  });

  it("does not clear the address's failures", async () => {
    const app = await start();
    const [ana, bruno] = [await createUser(app), await createUser(app)];
    const address = freshAddress();
    for (let i = 0; i < 4; i += 1) await expectError(await login(app, ana.user.username, 'wrong-password', address), 401, 'invalid_credentials');
    await expectLoggedIn(await login(app, ana.user.username, ana.password, address), ana.user.id);
    expect((await loginAttempt(app, address)).attempts).toBe(4);
    await expectError(await login(app, bruno.user.username, 'wrong-password', address), 401, 'invalid_credentials');
    await expectLocked(await login(app, bruno.user.username, bruno.password, address));
    await expectLocked(await login(app, ana.user.username, ana.password, address));
    // Each account has one failure at most: elsewhere both log in.
    await expectLoggedIn(await login(app, bruno.user.username, bruno.password), bruno.user.id);
    await expectLoggedIn(await login(app, ana.user.username, ana.password), ana.user.id);
  });
});

describe('GET /api/check/login_attempt/', () => {
  it("reports the caller's address: none, counted, locked, and another address unaffected", async () => {
    const app = await start();
    const address = freshAddress();
    expect(await loginAttempt(app, address)).toEqual({ attempts: 0, limit: 5, locked: false, retry_after_seconds: 0, window_seconds: WINDOW_SECONDS });

    await expectError(await login(app, 'ghost.one', 'x', address), 401, 'invalid_credentials');
    await expectError(await login(app, 'ghost.two', 'x', address), 401, 'invalid_credentials');
    expect(await loginAttempt(app, address)).toEqual({ attempts: 2, limit: 5, locked: false, retry_after_seconds: 0, window_seconds: WINDOW_SECONDS });

    for (let i = 0; i < 3; i += 1) await expectError(await login(app, `ghost.more${i}`, 'x', address), 401, 'invalid_credentials');
    const locked = await loginAttempt(app, address);
    expect(locked).toMatchObject({ attempts: 5, limit: 5, locked: true, window_seconds: WINDOW_SECONDS });
    expect(locked.retry_after_seconds).toBeGreaterThan(0);
    expect(locked.retry_after_seconds).toBeLessThanOrEqual(WINDOW_SECONDS);
    // A refused login does not add to the count.
    await expectLocked(await login(app, 'ghost.six', 'x', address));
    expect((await loginAttempt(app, address)).attempts).toBe(5);

    expect(await loginAttempt(app, freshAddress())).toEqual({ attempts: 0, limit: 5, locked: false, retry_after_seconds: 0, window_seconds: WINDOW_SECONDS });
  });

  it('counts failures of the address only, not of the accounts tried from elsewhere', async () => {
    const app = await start();
    const ana = await createUser(app);
    for (let i = 0; i < 5; i += 1) await expectError(await login(app, ana.user.username, 'wrong-password'), 401, 'invalid_credentials');
    const bystander = freshAddress();
    expect(await loginAttempt(app, bystander)).toMatchObject({ attempts: 0, locked: false });
  });
});

describe('instances sharing a database', () => {
  it('share the lock: failures on one instance lock the account on the other', async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const one = await start({ database });
    const two = await start({ database });
    const ana = await createUser(one);
    const address = freshAddress();
    for (let i = 0; i < 5; i += 1) await expectError(await login(one, ana.user.username, 'wrong-password', address), 401, 'invalid_credentials');
    await expectLocked(await login(two, ana.user.username, ana.password));
    await expectLocked(await login(two, ana.user.email, ana.password));
    expect(await loginAttempt(two, address)).toMatchObject({ attempts: 5, locked: true });
    // A restarted instance on the same database still refuses.
    await one.close();
    apps.splice(apps.indexOf(one), 1);
    const three = await start({ database });
    await expectLocked(await login(three, ana.user.username, ana.password));
  });
});

describe('POST /check/credential/', () => {
  it("confirms the caller's own password by username or e-mail, in any case", async () => {
    const app = await start();
    const ana = await createUser(app);
    for (const username of [ana.user.username, ana.user.username.toUpperCase(), ana.user.email, ana.user.email.toUpperCase()]) {
      const before = Date.now();
      const response = await checkCredential(app, ana.headers, { username, password: ana.password });
      const body = await response.json();
      expect({ status: response.status, body }).toMatchObject({
        status: 200,
        body: { success: true, data: { valid: true, checked_at: expect.any(String) }, message: expect.any(String), request_id: expect.any(String) },
      });
      const checkedAt = Date.parse(body.data.checked_at);
      expect(checkedAt).toBeGreaterThanOrEqual(before - 1000);
      expect(checkedAt).toBeLessThanOrEqual(Date.now() + 1000);
    }
  });

  it('answers 401 to a wrong password, 403 to another user, 401 without a key and 422 without a password', async () => {
    const app = await start();
    const [ana, bruno] = [await createUser(app), await createUser(app)];
    await expectError(await checkCredential(app, ana.headers, { username: ana.user.username, password: 'wrong-password' }), 401, 'invalid_credentials');

    const forbidden = await expectError(await checkCredential(app, ana.headers, { username: bruno.user.username, password: bruno.password }), 403, 'forbidden');
    expect(forbidden.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'username' })]);
    await expectError(await checkCredential(app, ana.headers, { username: bruno.user.email, password: bruno.password }), 403, 'forbidden');
    await expectError(await checkCredential(app, ana.headers, { username: 'nobody.here', password: 'x' }), 403, 'forbidden');

    await expectError(await checkCredential(app, {}, { username: ana.user.username, password: ana.password }), 401, 'unauthorized');
    await expectError(await checkCredential(app, { Authorization: 'Token not-a-real-key-000000000000000000' }, { username: ana.user.username, password: ana.password }), 401, 'unauthorized');

    const missing = await expectError(await checkCredential(app, ana.headers, { username: ana.user.username }), 422, 'validation_failed');
    expect(JSON.stringify(missing.error.details)).toContain('password');

    // None of the refusals above except the one wrong password counted toward the lock.
    expect(await app.accounts.models.LoginFailure.count({ where: { subject: `user:${ana.user.id}` } })).toBe(1);
    expect(await app.accounts.models.LoginFailure.count({ where: { subject: `user:${bruno.user.id}` } })).toBe(0);
  });

  it('counts wrong passwords toward the login lock: then it and the login both answer 429', async () => {
    const app = await start();
    const ana = await createUser(app);
    for (let i = 0; i < 5; i += 1) {
      await expectError(await checkCredential(app, ana.headers, { username: ana.user.username, password: `wrong-${i}` }), 401, 'invalid_credentials');
    }
    await expectLocked(await checkCredential(app, ana.headers, { username: ana.user.username, password: ana.password }));
    await expectLocked(await login(app, ana.user.username, ana.password));
    // The key itself stays valid: the lock is about password checks, not about the session.
    const me = await fetch(`${app.baseUrl}/api/usuario/${ana.user.id}/`, { headers: ana.headers });
    expect(me.status).toBe(200);
  });

  it('is refused while login failures lock the account', async () => {
    const app = await start();
    const ana = await createUser(app);
    for (let i = 0; i < 5; i += 1) await expectError(await login(app, ana.user.email, 'wrong-password'), 401, 'invalid_credentials');
    await expectLocked(await checkCredential(app, ana.headers, { username: ana.user.username, password: ana.password }));
  });

  it('is refused from a locked address', async () => {
    const app = await start();
    const ana = await createUser(app);
    const address = freshAddress();
    for (let i = 0; i < 5; i += 1) await expectError(await login(app, `ghost.${i}`, 'x', address), 401, 'invalid_credentials');
    await expectLocked(await checkCredential(app, ana.headers, { username: ana.user.username, password: ana.password }, address));
    const elsewhere = await checkCredential(app, ana.headers, { username: ana.user.username, password: ana.password });
    expect(elsewhere.status).toBe(200);
  });
});

describe('storage of failures', () => {
  it('keeps subjects and times only, never the attempted password', async () => {
    const app = await start();
    const ana = await createUser(app);
    const address = freshAddress();
    const secrets = ['Sup3r-Secret-Guess-7f3a', 'another-secret-guess-b29c'];
    await expectError(await login(app, ana.user.username, secrets[0]!, address), 401, 'invalid_credentials');
    await expectError(await login(app, 'ghost.user', secrets[1]!, address), 401, 'invalid_credentials');
    await expectError(await checkCredential(app, ana.headers, { username: ana.user.username, password: secrets[1]! }, address), 401, 'invalid_credentials');

    const [rows] = (await app.sequelize.query('SELECT * FROM login_failures')) as [Array<Record<string, unknown>>, unknown];
    expect(rows).toHaveLength(6);
    for (const row of rows) expect(Object.keys(row).sort()).toEqual(['failed_at', 'id', 'subject']);
    expect(rows.map((row) => row.subject).sort()).toEqual(
      [`ip:${address}`, `ip:${address}`, `ip:${address}`, 'login:ghost.user', `user:${ana.user.id}`, `user:${ana.user.id}`].sort(),
    );
    const dump = JSON.stringify(rows).toLowerCase();
    for (const secret of secrets) expect(dump).not.toContain(secret.toLowerCase());
  });
});
