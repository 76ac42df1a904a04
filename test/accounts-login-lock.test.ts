/**
 * The login lock against password guessing, and the password re-check (POST /check/credential/).
 * Proves that failures count against the identifier as typed (trimmed and case-folded), never against
 * the account it names: from one address an identifier is locked after 5 failures, with a 429
 * login_locked and a Retry-After that even the right password cannot get past, while from other
 * addresses its owner meets a delay of seconds at most, doubling with each failure up to a cap; that an
 * account's e-mail and username are separate identifiers, so the lock is no oracle of which names share
 * an account; that an address has a budget across identifiers against spraying, high enough for an
 * office; that an unknown name is counted exactly like a real one; that refused attempts do not extend
 * the lock; that a login clears its identifier's failures but not the address's; that parallel right
 * passwords wait for the checks before them instead of being refused, while parallel guesses cannot
 * pass an open lock; that GET /api/check/login_attempt/ reports the caller's address budget; that
 * instances sharing a database share the lock; that the re-check only confirms the caller's own
 * password and counts toward the same lock; and that failures are stored without the attempted
 * passwords or names.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startTestApp, testAccountSettings, type TestApp, type TestAppOptions } from './helpers/app.js';
import { createTestDatabase } from './helpers/database.js';
import { createAdmin, createUser } from './helpers/accounts.js';
import { lockSubjects, type LoginLockSettings } from '../src/accounts/login-lock.js';
import * as loginFailuresPending from '../src/db/migrations/0017-login-failures-pending.js';

const WINDOW_SECONDS = 15 * 60;

const apps: TestApp[] = [];
const cleanups: Array<() => Promise<void>> = [];
/** An app whose client address is taken from X-Forwarded-For (the tests play many clients). */
async function start(options: TestAppOptions = {}, lock: Partial<LoginLockSettings> = {}): Promise<TestApp> {
  const accounts = { ...options.accounts, loginLock: { ...testAccountSettings.loginLock, ...lock } };
  const app = await startTestApp({ ...options, accounts, config: { trustProxy: 'loopback', ...options.config } });
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

/** Stores settled failures of a subject directly, as if checks had failed at `at`. */
async function recordFailures(app: TestApp, subject: string, count: number, at = new Date()): Promise<void> {
  await app.accounts.models.LoginFailure.bulkCreate(Array.from({ length: count }, () => ({ subject, failed_at: at, pending: false })));
}

/** Sends `count` wrong passwords for one name, each from its own fresh address unless one is given. */
async function failLogins(app: TestApp, name: string, count: number, address?: string): Promise<void> {
  for (let i = 0; i < count; i += 1) await expectError(await login(app, name, `wrong-password-${i}`, address), 401, 'invalid_credentials');
}

describe('one identifier from one address', () => {
  it('is locked for the window after 5 failures, even against the right password; other names from there are not', async () => {
    const app = await start();
    const [ana, bruno] = [await createUser(app), await createUser(app)];
    const address = freshAddress();
    await failLogins(app, ana.user.username, 5, address);
    const seconds = await expectLocked(await login(app, ana.user.username, ana.password, address));
    expect(seconds).toBeGreaterThan(WINDOW_SECONDS - 60);
    // The address itself is far from its budget: someone else in the same office logs in.
    await expectLoggedIn(await login(app, bruno.user.username, bruno.password, address), bruno.user.id);
  });

  it('counts a name trimmed and case-folded as one identifier', async () => {
    const app = await start();
    const [ana, bruno] = [await createUser(app), await createUser(app)];
    const address = freshAddress();
    const name = ana.user.username;
    for (const typed of [name, ` ${name}`, name.toUpperCase(), `${name}\t`, `  ${name.toUpperCase()}  `]) {
      await expectError(await login(app, typed, 'wrong-password', address), 401, 'invalid_credentials');
    }
    await expectLocked(await login(app, name, ana.password, address));
    await expectLocked(await login(app, ` ${name.toUpperCase()} `, ana.password, address));
    // One identifier, one count: five failures, not five identifiers with one each.
    expect(await app.accounts.models.LoginFailure.count({ where: { subject: lockSubjects.identifier(name) } })).toBe(5);
    expect(await app.accounts.models.LoginFailure.count({ where: { subject: lockSubjects.identifierFromAddress(name.toUpperCase(), address) } })).toBe(5);
    await expectLoggedIn(await login(app, bruno.user.username, bruno.password, address), bruno.user.id);
  });

  it('answers 401 with the same message for a wrong password and for a name with no account', async () => {
    const app = await start();
    const ana = await createUser(app);
    const wrong = await expectError(await login(app, ana.user.username, 'wrong-password'), 401, 'invalid_credentials');
    const unknown = await expectError(await login(app, 'nobody.here', 'wrong-password'), 401, 'invalid_credentials');
    expect(unknown.error).toEqual(wrong.error);
  });
});

describe('one identifier from many addresses', () => {
  it('never locks its owner (an admin) out for minutes: after 5 failures from 5 addresses, a delay of seconds at most', async () => {
    const app = await start();
    const admin = await createAdmin(app);
    await failLogins(app, admin.user.username, 5);
    // From a sixth address: in at once, or after a Retry-After of a second (the first delay).
    const first = await login(app, admin.user.username, admin.password, freshAddress());
    if (first.status === 429) {
      const seconds = await expectLocked(first, 1);
      await sleep(seconds * 1000);
      await expectLoggedIn(await login(app, admin.user.username, admin.password, freshAddress()), admin.user.id);
    } else {
      await expectLoggedIn(first, admin.user.id);
    }
  });

  it('doubles the wait with each failure past the limit, up to LOGIN_MAX_DELAY_SECONDS, with Retry-After in seconds', async () => {
    const app = await start({}, { maxDelayMs: 20_000 });
    const ana = await createUser(app);
    const subject = lockSubjects.identifier(ana.user.email);
    // The 5th failure imposes a second (the test of the owner above); from the 6th on, each doubles it.
    await recordFailures(app, subject, 5);
    const expected = [2, 4, 8, 16, 20, 20];
    for (const seconds of expected) {
      await recordFailures(app, subject, 1);
      // The right password from a new address: delayed, not locked, and the refusal is not counted. The
      // wait runs from the latest failure, a moment ago, so at most a second of it has gone by.
      const left = await expectLocked(await login(app, ana.user.email, ana.password, freshAddress()), 20);
      expect([seconds - 1, seconds]).toContain(left);
    }
    expect(await app.accounts.models.LoginFailure.count({ where: { subject } })).toBe(5 + expected.length);
  });

  it('counts a name with no account exactly like a real one, so the lock reveals nothing', async () => {
    const app = await start();
    const ana = await createUser(app);
    // Each name is tried from an address of its own, then from many addresses.
    const names = { real: ana.user.username, ghost: 'ghost.account' };
    const addresses = { real: freshAddress(), ghost: freshAddress() };
    const statuses = { real: [] as number[], ghost: [] as number[] };
    const firstSent = { real: 0, ghost: 0 };
    for (let i = 0; i < 5; i += 1) {
      for (const who of ['real', 'ghost'] as const) {
        if (i === 0) firstSent[who] = Date.now();
        const response = await login(app, names[who], `wrong-password-${i}`, addresses[who]);
        statuses[who].push(response.status);
        await expectError(response, 401, 'invalid_credentials');
      }
    }
    expect(statuses.ghost).toEqual(statuses.real);

    // Then both refuse even the right password (any password for the ghost) from that address, in the
    // same words, with a Retry-After of what is left of the window since the first failure, rounded up.
    const locked = { real: { body: {} as ErrorBody, seconds: 0 }, ghost: { body: {} as ErrorBody, seconds: 0 } };
    for (const who of ['real', 'ghost'] as const) {
      const response = await login(app, who === 'real' ? names.real : names.ghost.toUpperCase(), who === 'real' ? ana.password : 'any-password', addresses[who]);
      const answered = Date.now();
      const seconds = await expectLocked(response.clone());
      expect(seconds).toBeGreaterThanOrEqual(Math.floor(WINDOW_SECONDS - (answered - firstSent[who]) / 1000));
      locked[who] = { body: await response.json(), seconds };
    }
    const wording = (body: ErrorBody) => ({ ...body.error, message: body.error.message.replace(/\d+/, 'N') });
    expect(wording(locked.ghost.body)).toEqual(wording(locked.real.body));
    // From elsewhere, both meet the same delay rule: the same rows were counted for each.
    const rows = async (name: string) => app.accounts.models.LoginFailure.count({ where: { subject: lockSubjects.identifier(name) } });
    expect(await rows(names.ghost)).toBe(await rows(names.real));
  });
});

describe('no lock oracle', () => {
  it("failures on an e-mail never make a username answer 429, whether or not they name the same account", async () => {
    const app = await start();
    const [ana, bruno, carla] = [await createUser(app), await createUser(app), await createUser(app)];
    const address = freshAddress();
    // Ana's e-mail and Bruno's e-mail are locked from this address and delayed everywhere...
    for (const email of [ana.user.email, bruno.user.email]) {
      await failLogins(app, email, 5, address);
      await expectLocked(await login(app, email, 'wrong-password', address));
    }
    // ...and a guess at a username from the same address gets the same answer, whether it is Ana's
    // (same account as a locked e-mail) or Carla's (no relation): the lock does not link the two.
    const same = await expectError(await login(app, ana.user.username, 'wrong-password', address), 401, 'invalid_credentials');
    const unrelated = await expectError(await login(app, carla.user.username, 'wrong-password', address), 401, 'invalid_credentials');
    expect(same.error).toEqual(unrelated.error);
    // Ana logs in by username at once; the other way round, Dora's username failures leave her e-mail open.
    await expectLoggedIn(await login(app, ana.user.username, ana.password, address), ana.user.id);
    const dora = await createUser(app);
    const elsewhere = freshAddress();
    await failLogins(app, dora.user.username, 5, elsewhere);
    await expectLocked(await login(app, dora.user.username, dora.password, elsewhere));
    await expectLoggedIn(await login(app, dora.user.email.toUpperCase(), dora.password, elsewhere), dora.user.id);
  });
});

describe('one address across identifiers', () => {
  it('has a budget of LOGIN_ADDRESS_MAX_FAILURES against spraying, high enough for an office', async () => {
    const app = await start({}, { addressMaxFailures: 12 });
    const [ana, bruno] = [await createUser(app), await createUser(app)];
    const address = freshAddress();
    // One password sprayed over many names, existing or not: one failure each, so no name is locked.
    const sprayed = [ana.user.email, bruno.user.username, ...Array.from({ length: 9 }, (_, i) => `ghost.${i}`)];
    for (const name of sprayed) await expectError(await login(app, name, 'Senha123!', address), 401, 'invalid_credentials');
    // 11 failures: an office behind the address still logs in...
    await expectLoggedIn(await login(app, ana.user.username, ana.password, address), ana.user.id);
    // ...until the 12th: then the address is locked for every name, for the window.
    await expectError(await login(app, 'ghost.last', 'Senha123!', address), 401, 'invalid_credentials');
    const seconds = await expectLocked(await login(app, bruno.user.email, bruno.password, address));
    expect(seconds).toBeGreaterThan(WINDOW_SECONDS - 60);
    // No name reached a limit: from another address both log in.
    await expectLoggedIn(await login(app, bruno.user.email, bruno.password, freshAddress()), bruno.user.id);
    await expectLoggedIn(await login(app, ana.user.email, ana.password, freshAddress()), ana.user.id);
  });

  it('allows 100 failures by default', async () => {
    const app = await start();
    const ana = await createUser(app);
    const address = freshAddress();
    await recordFailures(app, lockSubjects.address(address), 98);
    await expectError(await login(app, 'ghost.99', 'x', address), 401, 'invalid_credentials');
    await expectLoggedIn(await login(app, ana.user.username, ana.password, address), ana.user.id);
    await expectError(await login(app, 'ghost.100', 'x', address), 401, 'invalid_credentials');
    await expectLocked(await login(app, ana.user.username, ana.password, address));
  });
});

describe('checks in flight', () => {
  it('lets right passwords in at once from one address, more of them than the limit: they wait for the checks before them', async () => {
    // A costlier hash keeps the checks in flight together (at the tests' cheap cost each ends at once),
    // and a limit of 2 stays below the checks SQLite lets run at once (argon2 shares libuv's 4 threads).
    const app = await start({ accounts: { passwordHashCost: 18 } }, { maxFailures: 2 });
    const ana = await createUser(app);
    const address = freshAddress();
    const responses = await Promise.all(Array.from({ length: 8 }, () => login(app, ana.user.username, ana.password, address)));
    for (const response of responses) await expectLoggedIn(response, ana.user.id);
    expect(await app.accounts.models.LoginFailure.count()).toBe(0);
  });

  it('checks no more than the limit of passwords when guesses arrive in parallel, from one address or many', async () => {
    const app = await start();
    const ana = await createUser(app);
    const address = freshAddress();
    for (const from of [() => address, freshAddress]) {
      const name = from === freshAddress ? ana.user.email : ana.user.username;
      const responses = await Promise.all(Array.from({ length: 12 }, (_, i) => login(app, name, `parallel-guess-${i}`, from())));
      const statuses = responses.map((response) => response.status).sort();
      for (const response of responses) await response.body?.cancel();
      // Every guess beyond the limit must be refused unchecked, whatever the timing.
      expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(5);
      expect(statuses.every((status) => status === 401 || status === 429)).toBe(true);
      expect(await app.accounts.models.LoginFailure.count({ where: { subject: lockSubjects.identifier(name) } })).toBeLessThanOrEqual(5);
    }
    // Every check settled: none is left pending.
    expect(await app.accounts.models.LoginFailure.count({ where: { pending: true } })).toBe(0);
  });
});

describe('the window', () => {
  it('lets the right password in once the window has passed, however often a locked client retried', async () => {
    const app = await start({}, { maxFailures: 2, windowMs: 1500 });
    const [ana, warm] = [await createUser(app), await createUser(app)];
    const address = freshAddress();
    await expectLoggedIn(await login(app, warm.user.username, warm.password), warm.user.id); // first requests are slow
    const beforeFirst = Date.now();
    await expectError(await login(app, ana.user.username, 'wrong-password', address), 401, 'invalid_credentials');
    // The lock ends when the first failure (recorded between these two instants) leaves the window.
    const afterFirst = Date.now();
    await expectError(await login(app, ana.user.username, 'wrong-password', address), 401, 'invalid_credentials');
    // Retrying while locked, with wrong and right passwords, is refused and is not counted.
    for (const password of ['wrong-again', ana.password, 'wrong-once-more']) await expectLocked(await login(app, ana.user.username, password, address), 2);
    await sleep(Math.max(0, beforeFirst + 1000 - Date.now()));
    await expectLocked(await login(app, ana.user.username, 'late-wrong-guess', address), 2);
    expect(await app.accounts.models.LoginFailure.count({ where: { subject: lockSubjects.identifierFromAddress(ana.user.username, address) } })).toBe(2);
    // Had the retries counted, the lock would now last until about a window after the late one.
    await sleep(Math.max(0, afterFirst + 1500 + 100 - Date.now()));
    await expectLoggedIn(await login(app, ana.user.username, ana.password, address), ana.user.id);
  });

  // A window long enough that the three failing checks (slow on a loaded machine) all fall inside it.
  it('unlocks an address once the window has passed', async () => {
    const app = await start({}, { addressMaxFailures: 2, windowMs: 4000 });
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
  it("clears its identifier's failures, from its address and from elsewhere", async () => {
    const app = await start();
    const ana = await createUser(app);
    const address = freshAddress();
    for (const from of [() => address, freshAddress]) {
      for (let round = 0; round < 2; round += 1) {
        for (let i = 0; i < 4; i += 1) await expectError(await login(app, ana.user.username, 'wrong-password', from()), 401, 'invalid_credentials');
        await expectLoggedIn(await login(app, ana.user.username, ana.password, from()), ana.user.id);
      }
    }
    expect(await app.accounts.models.LoginFailure.count({ where: { subject: lockSubjects.identifier(ana.user.username) } })).toBe(0);
  });

  it("does not clear the address's failures", async () => {
    const app = await start({}, { addressMaxFailures: 6 });
    const [ana, bruno] = [await createUser(app), await createUser(app)];
    const address = freshAddress();
    await failLogins(app, ana.user.username, 4, address);
    await expectLoggedIn(await login(app, ana.user.username, ana.password, address), ana.user.id);
    expect((await loginAttempt(app, address)).attempts).toBe(4);
    await failLogins(app, bruno.user.username, 2, address);
    await expectLocked(await login(app, bruno.user.username, bruno.password, address));
    await expectLocked(await login(app, ana.user.username, ana.password, address));
    // Neither identifier reached a limit: elsewhere both log in.
    await expectLoggedIn(await login(app, bruno.user.username, bruno.password), bruno.user.id);
    await expectLoggedIn(await login(app, ana.user.username, ana.password), ana.user.id);
  });
});

describe('GET /api/check/login_attempt/', () => {
  it("reports the caller's address budget across identifiers: none, counted, locked, and another address unaffected", async () => {
    const app = await start();
    const address = freshAddress();
    const open = { attempts: 0, limit: 100, locked: false, retry_after_seconds: 0, window_seconds: WINDOW_SECONDS };
    expect(await loginAttempt(app, address)).toEqual(open);

    await expectError(await login(app, 'ghost.one', 'x', address), 401, 'invalid_credentials');
    await expectError(await login(app, 'ghost.two', 'x', address), 401, 'invalid_credentials');
    expect(await loginAttempt(app, address)).toEqual({ ...open, attempts: 2 });

    // A name locked from this address counts, but the address stays open: the answer is about the address.
    await failLogins(app, 'ghost.three', 5, address);
    await expectLocked(await login(app, 'ghost.three', 'x', address));
    expect(await loginAttempt(app, address)).toEqual({ ...open, attempts: 7 });

    await recordFailures(app, lockSubjects.address(address), 93);
    const locked = await loginAttempt(app, address);
    expect(locked).toMatchObject({ attempts: 100, limit: 100, locked: true, window_seconds: WINDOW_SECONDS });
    expect(locked.retry_after_seconds).toBeGreaterThan(WINDOW_SECONDS - 60);
    expect(locked.retry_after_seconds).toBeLessThanOrEqual(WINDOW_SECONDS);
    // A refused login does not add to the count.
    await expectLocked(await login(app, 'ghost.six', 'x', address));
    expect((await loginAttempt(app, address)).attempts).toBe(100);

    expect(await loginAttempt(app, freshAddress())).toEqual(open);
  });

  it('counts failures of the address only, not of the names tried from elsewhere', async () => {
    const app = await start();
    const ana = await createUser(app);
    await failLogins(app, ana.user.username, 5);
    const bystander = freshAddress();
    expect(await loginAttempt(app, bystander)).toMatchObject({ attempts: 0, locked: false });
  });
});

describe('instances sharing a database', () => {
  // Three app starts on one database: a minute under a busy CI (half of it on an idle machine).
  it('share the lock: failures on one instance lock the identifier on the other', async () => {
    const database = await createTestDatabase({ migrated: true });
    cleanups.push(() => database.drop());
    const one = await start({ database });
    const two = await start({ database });
    const ana = await createUser(one);
    const address = freshAddress();
    await failLogins(one, ana.user.username, 5, address);
    await expectLocked(await login(two, ana.user.username, ana.password, address));
    await expectLocked(await login(two, ana.user.username.toUpperCase(), ana.password, address));
    expect(await loginAttempt(two, address)).toMatchObject({ attempts: 5, locked: false });
    // A restarted instance on the same database still refuses.
    await one.close();
    apps.splice(apps.indexOf(one), 1);
    const three = await start({ database });
    await expectLocked(await login(three, ana.user.username, ana.password, address));
  }, 60_000);
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
    const count = (name: string) => app.accounts.models.LoginFailure.count({ where: { subject: lockSubjects.identifier(name) } });
    expect(await count(ana.user.username)).toBe(1);
    for (const name of [ana.user.email, bruno.user.username, bruno.user.email, 'nobody.here']) expect(await count(name)).toBe(0);
  });

  it('counts wrong passwords toward the login lock: then it and the login both answer 429', async () => {
    const app = await start();
    const ana = await createUser(app);
    const address = freshAddress();
    for (let i = 0; i < 5; i += 1) {
      await expectError(await checkCredential(app, ana.headers, { username: ana.user.username, password: `wrong-${i}` }, address), 401, 'invalid_credentials');
    }
    await expectLocked(await checkCredential(app, ana.headers, { username: ana.user.username, password: ana.password }, address));
    await expectLocked(await login(app, ana.user.username, ana.password, address));
    // The key itself stays valid: the lock is about password checks, not about the session.
    const me = await fetch(`${app.baseUrl}/api/usuario/${ana.user.id}/`, { headers: ana.headers });
    expect(me.status).toBe(200);
  });

  it('is refused while login failures lock the identifier it names from that address, and only that one', async () => {
    const app = await start();
    const ana = await createUser(app);
    const address = freshAddress();
    await failLogins(app, ana.user.email, 5, address);
    await expectLocked(await checkCredential(app, ana.headers, { username: ana.user.email, password: ana.password }, address));
    const byUsername = await checkCredential(app, ana.headers, { username: ana.user.username, password: ana.password }, address);
    expect(byUsername.status).toBe(200);
  });

  it('is refused from a locked address', async () => {
    const app = await start({}, { addressMaxFailures: 5 });
    const ana = await createUser(app);
    const address = freshAddress();
    for (let i = 0; i < 5; i += 1) await expectError(await login(app, `ghost.${i}`, 'x', address), 401, 'invalid_credentials');
    await expectLocked(await checkCredential(app, ana.headers, { username: ana.user.username, password: ana.password }, address));
    const elsewhere = await checkCredential(app, ana.headers, { username: ana.user.username, password: ana.password });
    expect(elsewhere.status).toBe(200);
  });
});

describe('storage of failures', () => {
  it('keeps digests of the names, addresses, times and outcomes only, never the attempted password or name', async () => {
    const app = await start();
    const ana = await createUser(app);
    const address = freshAddress();
    const secrets = ['Sup3r-Secret-Guess-7f3a', 'another-secret-guess-b29c'];
    await expectError(await login(app, ana.user.username, secrets[0]!, address), 401, 'invalid_credentials');
    await expectError(await login(app, 'Ghost.User', secrets[1]!, address), 401, 'invalid_credentials');
    await expectError(await checkCredential(app, ana.headers, { username: ana.user.username, password: secrets[1]! }, address), 401, 'invalid_credentials');

    const [rows] = (await app.sequelize.query('SELECT * FROM login_failures')) as [Array<Record<string, unknown>>, unknown];
    expect(rows).toHaveLength(9);
    for (const row of rows) expect(Object.keys(row).sort()).toEqual(['failed_at', 'id', 'pending', 'subject']);
    expect(rows.every((row) => !row.pending)).toBe(true);
    const subjects = (name: string) => [lockSubjects.identifierFromAddress(name, address), lockSubjects.identifier(name), lockSubjects.address(address)];
    expect(rows.map((row) => row.subject).sort()).toEqual([...subjects(ana.user.username), ...subjects('ghost.user'), ...subjects(ana.user.username)].sort());
    const dump = JSON.stringify(rows).toLowerCase();
    for (const typed of [...secrets, ana.user.username, 'ghost.user']) expect(dump).not.toContain(typed.toLowerCase());
  });
});

describe('migration 0017', () => {
  it('adds the pending column and drops the failures counted per account; down removes the column', async () => {
    const app = await start();
    const context = app.sequelize.getQueryInterface();
    const columns = async () => Object.keys(await context.describeTable('login_failures')).sort();
    expect(await columns()).toEqual(['failed_at', 'id', 'pending', 'subject']);
    await loginFailuresPending.down({ context });
    expect(await columns()).toEqual(['failed_at', 'id', 'subject']);
    const at = new Date();
    await context.bulkInsert('login_failures', [
      { subject: 'user:7', failed_at: at },
      { subject: 'login:someone', failed_at: at },
      { subject: 'ip:203.0.113.9', failed_at: at },
    ]);
    await loginFailuresPending.up({ context });
    const [rows] = (await app.sequelize.query('SELECT subject, pending FROM login_failures')) as [Array<{ subject: string; pending: unknown }>, unknown];
    expect(rows.map((row) => ({ subject: row.subject, pending: Boolean(row.pending) }))).toEqual([{ subject: 'ip:203.0.113.9', pending: false }]);
  });
});
