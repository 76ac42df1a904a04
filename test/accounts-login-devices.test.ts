/**
 * Trusted devices at login (issue 41: "no one can keep a user out of their account"). Proves, with the
 * attack that kept an owner out (failing logins at the name from ever new addresses, sent through
 * X-Forwarded-For under TRUST_PROXY, each one re-arming the delay the moment its Retry-After ends):
 * that the owner with the device token an earlier login answered logs in on the first try every time,
 * and so does the owner with the token of an unlock mail, while a login with neither, from a new address,
 * still meets the delay; that a device token is answered back when presented (no new rows per login),
 * capped per user, bound to its account, judged by its own failures only and invalidated after 5 of them,
 * never valid as an API key, and stored as a hash; that the unlock request answers the same for any name
 * and mails one token a minute at most, which works once; and that a password change, a password reset
 * (by mail, or palanque user set-password), the end of every session and the account's deletion revoke
 * every device token.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { setPasswordTask } from '../cli/admin/tasks.js';
import { startTestApp, testAccountSettings, type TestApp, type TestAppOptions } from './helpers/app.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { readMails, recipients, SETTLE_MS, sleep, waitForMails } from './helpers/mail.js';
import { lockSubjects, type LoginLockSettings } from '../src/accounts/login-lock.js';
import type { LoginDeviceSettings } from '../src/accounts/login-devices.js';
import { secretHash } from '../src/accounts/secrets.js';
import * as loginDevicesMigration from '../src/db/migrations/0031-login-devices.js';

const apps: TestApp[] = [];
/** An app whose client address is taken from X-Forwarded-For (the tests play the attacker's many addresses). */
async function start(lock: Partial<LoginLockSettings> = {}, devices: Partial<LoginDeviceSettings> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const accounts = { loginLock: { ...testAccountSettings.loginLock, ...lock }, loginDevices: devices };
  const app = await startTestApp({ ...options, accounts, config: { trustProxy: 'loopback', ...options.config } });
  apps.push(app);
  return app;
}
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

/** A new documentation-range address per call: the attacker never runs out of them. */
let addressSequence = 0;
function freshAddress(): string {
  addressSequence += 1;
  return `203.0.${Math.floor(addressSequence / 250) % 250}.${(addressSequence % 250) + 1}`;
}

function post(app: TestApp, path: string, body: Record<string, unknown>, headers: Record<string, string> = {}, address = freshAddress()) {
  return fetch(`${app.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': address, ...headers },
    body: JSON.stringify(body),
  });
}

interface Tokens {
  device_token?: string;
  unlock_token?: string;
}
const login = (app: TestApp, username: string, password: string, tokens: Tokens = {}, address = freshAddress()) =>
  post(app, '/api/auth/login', { username, password, ...tokens }, {}, address);

interface LoggedIn {
  token: string;
  device_token: string;
  user: { id: number };
}

async function expectLoggedIn(response: Response, userId: number): Promise<LoggedIn> {
  const body = await response.json();
  expect({ status: response.status, body }).toMatchObject({
    status: 200,
    body: { success: true, data: { token: expect.any(String), token_type: 'Token', user: { id: userId }, device_token: expect.stringMatching(/^plqd_[A-Za-z0-9_-]{43}$/) } },
  });
  return body.data as LoggedIn;
}

async function expectError(response: Response, status: number, code: string): Promise<{ error: { message: string } }> {
  const body = await response.json();
  expect({ status: response.status, code: body.error?.code }, JSON.stringify(body.error)).toEqual({ status, code });
  return body;
}

/** A 429 login_locked with a Retry-After in whole seconds; returns the seconds. */
async function expectDelayed(response: Response): Promise<number> {
  await expectError(response, 429, 'login_locked');
  const seconds = Number(response.headers.get('retry-after'));
  expect(seconds).toBeGreaterThan(0);
  return seconds;
}

/** Failures of the name from anywhere, as if the attacker's earlier guesses had failed now: the delay is armed at its longest. */
async function armDelay(app: TestApp, name: string, count = 12): Promise<void> {
  await app.accounts.models.LoginFailure.bulkCreate(Array.from({ length: count }, () => ({ subject: lockSubjects.identifier(name), failed_at: new Date(), pending: false })));
}

const deviceRows = (app: TestApp, userId: number) => app.accounts.models.LoginDevice.count({ where: { user_id: userId } });
const nameFailures = (app: TestApp, name: string) => app.accounts.models.LoginFailure.count({ where: { subject: lockSubjects.identifier(name) } });

/** Asks for an unlock mail for `name` and returns the token the mail to `owner` carries. */
async function unlockTokenFor(app: TestApp, owner: TestUser, name: string, mailsBefore = 0): Promise<string> {
  const response = await post(app, '/api/auth/unlock/', { username: name });
  expect(response.status).toBe(200);
  const mails = await waitForMails(app, mailsBefore + 1);
  const mail = mails.at(-1)!;
  expect(recipients(mail.email)).toEqual([owner.user.email]);
  return /Unlock token: (plqu_[A-Za-z0-9_-]+)/.exec(mail.email.text ?? '')![1]!;
}

describe('the attack that kept an owner out', () => {
  // Rounds in which the attacker waits out each Retry-After and fails again at once, re-arming the delay.
  it('lets the owner with a device token, or with an unlock token, in on the first try every time, while a login with neither still meets the delay', async () => {
    const app = await start({ maxDelayMs: 6000 });
    const ana = await createUser(app);
    const name = ana.user.username;
    // Before the attack, Ana logged in once from her laptop: it keeps the device token answered.
    const laptop = await expectLoggedIn(await login(app, name, ana.password), ana.user.id);

    // The attacker: five failures from five addresses start the delay on the name.
    for (let i = 0; i < 5; i += 1) await expectError(await login(app, name, `guess-${i}`), 401, 'invalid_credentials');
    const failuresBefore = await nameFailures(app, name);

    let mailed = 0;
    let usedUnlockToken: string | undefined;
    for (let round = 0; round < 4; round += 1) {
      // The attacker waits for the Retry-After it was given and fails again from a new address: re-armed
      // (2 s, 4 s, then 6 s, the cap set here).
      const waiting = await login(app, name, `guess-again-${round}`);
      if (waiting.status === 429) {
        await sleep((await expectDelayed(waiting)) * 1000);
        await expectError(await login(app, name, `guess-late-${round}`), 401, 'invalid_credentials');
      } else {
        await expectError(waiting, 401, 'invalid_credentials');
      }
      // Without a token, even Ana's right password from a new address meets the delay.
      await expectDelayed(await login(app, name, ana.password));
      // The unlock token of the round before worked once: sent again, it is ignored and the delay applies.
      if (usedUnlockToken) await expectDelayed(await login(app, name, ana.password, { unlock_token: usedUnlockToken }));
      // With the laptop's token, Ana is in on the first try, and the token is answered back.
      const again = await expectLoggedIn(await login(app, name, ana.password, { device_token: laptop.device_token }), ana.user.id);
      expect(again.device_token).toBe(laptop.device_token);
      // On a new phone, with the token of an unlock mail: in on the first try too, with a device token of its own.
      usedUnlockToken = await unlockTokenFor(app, ana, round % 2 === 0 ? name : ana.user.email, mailed);
      mailed += 1;
      const phone = await expectLoggedIn(await login(app, name, ana.password, { unlock_token: usedUnlockToken }), ana.user.id);
      expect(phone.device_token).not.toBe(laptop.device_token);
      // Let the next round mail again (one unlock mail a minute per account).
      await app.accounts.models.LoginDevice.update({ created_at: new Date(Date.now() - 3600_000) }, { where: { user_id: ana.user.id, kind: 'unlock' } });
    }
    // Trusted logins neither counted toward the lock nor cleared the attacker's failures.
    expect(await nameFailures(app, name)).toBeGreaterThanOrEqual(failuresBefore);
  }, 300_000);

  it("ignores another account's device token: the login is judged by the delay", async () => {
    const app = await start();
    const [ana, bruno] = [await createUser(app), await createUser(app)];
    const brunos = await expectLoggedIn(await login(app, bruno.user.username, bruno.password), bruno.user.id);
    await armDelay(app, ana.user.username);
    await expectDelayed(await login(app, ana.user.username, ana.password, { device_token: brunos.device_token }));
    await expectDelayed(await login(app, ana.user.username, ana.password, { device_token: 'plqd_made-up-token-0000000000000000000000000000' }));
    await expectDelayed(await login(app, ana.user.username, ana.password, { unlock_token: brunos.device_token }));
  });

  it('binds the token to the account, by either of its names, and ignores the address lock and the address budget', async () => {
    const app = await start({ addressMaxFailures: 3 });
    const ana = await createUser(app);
    const { device_token } = await expectLoggedIn(await login(app, ana.user.email, ana.password), ana.user.id);
    const office = freshAddress();
    // The office's address is locked by someone spraying names, and Ana's names are delayed everywhere.
    for (const ghost of ['ghost.a', 'ghost.b', 'ghost.c']) await expectError(await login(app, ghost, 'x', {}, office), 401, 'invalid_credentials');
    await armDelay(app, ana.user.username);
    await expectDelayed(await login(app, ana.user.username, ana.password, {}, office));
    await expectLoggedIn(await login(app, ana.user.username.toUpperCase(), ana.password, { device_token }, office), ana.user.id);
  });
});

describe('a device token', () => {
  it('is answered back when presented: a login loop does not pile up rows', async () => {
    const app = await start();
    const ana = await createUser(app);
    const first = await expectLoggedIn(await login(app, ana.user.username, ana.password), ana.user.id);
    for (let i = 0; i < 5; i += 1) {
      const next = await expectLoggedIn(await login(app, ana.user.username, ana.password, { device_token: first.device_token }), ana.user.id);
      expect(next.device_token).toBe(first.device_token);
    }
    expect(await deviceRows(app, ana.user.id)).toBe(1);
    // The audit log tells the logins judged by the token from the others.
    const { rows } = await app.accounts.audit.page({ event: 'login_succeeded', userId: ana.user.id }, 1, 10);
    expect(rows.map((row) => row.details)).toEqual([...Array.from({ length: 5 }, () => ({ with: 'device_token' })), {}]);
  });

  it('is capped per user: beyond the cap the least recently used goes', async () => {
    const app = await start({}, { perUser: 3 });
    const ana = await createUser(app);
    const issued: string[] = [];
    for (let i = 0; i < 5; i += 1) issued.push((await expectLoggedIn(await login(app, ana.user.username, ana.password), ana.user.id)).device_token);
    expect(new Set(issued).size).toBe(5);
    expect(await deviceRows(app, ana.user.id)).toBe(3);
    // The newest three still work as trusted devices; the two oldest do not.
    await armDelay(app, ana.user.username);
    for (const token of issued.slice(2)) await expectLoggedIn(await login(app, ana.user.username, ana.password, { device_token: token }), ana.user.id);
    for (const token of issued.slice(0, 2)) await expectDelayed(await login(app, ana.user.username, ana.password, { device_token: token }));
  });

  it("is judged by its own failures only, which do not count toward the lock, and dies after 5 of them", async () => {
    const app = await start();
    const ana = await createUser(app);
    const address = freshAddress();
    const { device_token } = await expectLoggedIn(await login(app, ana.user.username, ana.password, {}, address), ana.user.id);
    // Four wrong passwords with the token, then the right one: in, and the failures are cleared.
    for (let i = 0; i < 4; i += 1) await expectError(await login(app, ana.user.username, `typo-${i}`, { device_token }, address), 401, 'invalid_credentials');
    await expectLoggedIn(await login(app, ana.user.username, ana.password, { device_token }, address), ana.user.id);
    expect(await nameFailures(app, ana.user.username)).toBe(0);
    expect(await app.accounts.models.LoginFailure.count()).toBe(0);
    // Five in a row (a thief with the token guessing): the token is deleted.
    for (let i = 0; i < 5; i += 1) await expectError(await login(app, ana.user.username, `guess-${i}`, { device_token }, address), 401, 'invalid_credentials');
    expect(await deviceRows(app, ana.user.id)).toBe(0);
    expect(await nameFailures(app, ana.user.username)).toBe(0);
    // From then on its holder is judged like anyone: the lock counts, and the login answers a new token.
    await expectError(await login(app, ana.user.username, 'one-more', { device_token }, address), 401, 'invalid_credentials');
    expect(await nameFailures(app, ana.user.username)).toBe(1);
    const fresh = await expectLoggedIn(await login(app, ana.user.username, ana.password, { device_token }, address), ana.user.id);
    expect(fresh.device_token).not.toBe(device_token);
  });

  it('lets parallel guesses with one token pass no more than its 5 failures', async () => {
    const app = await start();
    const ana = await createUser(app);
    const { device_token } = await expectLoggedIn(await login(app, ana.user.username, ana.password), ana.user.id);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => login(app, ana.user.username, `parallel-${i}`, { device_token })));
    // Each is refused: 401, or 429 once the lock judges the name delayed.
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.every((status) => status === 401 || status === 429)).toBe(true);
    // The 401s the lock did not count were judged by the token: five at most, and the token is gone.
    const byToken = statuses.filter((status) => status === 401).length - (await nameFailures(app, ana.user.username));
    expect(byToken).toBeLessThanOrEqual(5);
    expect(await deviceRows(app, ana.user.id)).toBe(0);
  });

  it('is never valid as an API key', async () => {
    const app = await start();
    const ana = await createUser(app);
    const { device_token } = await expectLoggedIn(await login(app, ana.user.username, ana.password), ana.user.id);
    for (const scheme of ['Token', 'Bearer']) {
      const response = await fetch(`${app.baseUrl}/api/auth/profile/`, { headers: { Authorization: `${scheme} ${device_token}` } });
      await expectError(response, 401, 'unauthorized');
    }
    const logout = await post(app, '/api/auth/logout', {}, { Authorization: `Token ${device_token}` });
    await expectError(logout, 401, 'unauthorized');
    await expectError(await post(app, '/api/tokens/remove_token/', { token_key: device_token }), 404, 'not_found');
  });

  it('is stored as its SHA-256 only', async () => {
    const app = await start();
    const ana = await createUser(app);
    const { device_token } = await expectLoggedIn(await login(app, ana.user.username, ana.password), ana.user.id);
    const [rows] = (await app.sequelize.query('SELECT * FROM login_devices')) as [Array<Record<string, unknown>>, unknown];
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: 'device', token_hash: secretHash(device_token) });
    expect(JSON.stringify(rows)).not.toContain(device_token.slice(5, 30));
  });
});

describe('POST /api/auth/unlock/', () => {
  it('answers the same for a known name, an e-mail, an unknown name and an inactive account, and mails only the active owner', async () => {
    const app = await start();
    const [ana, gone] = [await createUser(app), await createUser(app)];
    await app.accounts.users.setActive(gone.user.id, false);
    const answers = [];
    for (const username of ['nobody.at.all', ana.user.username, 'ninguem@exemplo.com.br', gone.user.username]) {
      const response = await post(app, '/api/auth/unlock/', { username });
      const body = await response.json();
      answers.push({ status: response.status, data: body.data, message: body.message });
    }
    for (const answer of answers) expect(answer).toEqual({ status: 200, data: { status: 'unlock_requested', link_expires_in_seconds: 900 }, message: answers[0]!.message });
    await sleep(SETTLE_MS);
    const mails = await readMails(app);
    expect(mails.map((mail) => recipients(mail.email))).toEqual([[ana.user.email]]);
    expect(mails[0]!.email.text).not.toContain('unlock_token='); // no FRONTEND_UNLOCK_URL: the token alone
    expect(await app.accounts.models.LoginDevice.count({ where: { kind: 'unlock' } })).toBe(1);
  });

  it('mails at most one token a minute per account, links to FRONTEND_UNLOCK_URL, and the token dies after 15 minutes', async () => {
    const app = await start({}, {}, { config: { frontendUnlockUrl: 'https://app.palanque.app/entrar' } });
    const ana = await createUser(app);
    const token = await unlockTokenFor(app, ana, ana.user.username);
    expect((await readMails(app))[0]!.email.text).toContain(`https://app.palanque.app/entrar?unlock_token=${token}`);
    for (let i = 0; i < 3; i += 1) expect((await post(app, '/api/auth/unlock/', { username: ana.user.email })).status).toBe(200);
    await sleep(SETTLE_MS);
    expect(await readMails(app)).toHaveLength(1);
    // Past its lifetime it is ignored: the login is judged by the delay.
    await app.accounts.models.LoginDevice.update({ expires_at: new Date(Date.now() - 1000) }, { where: { kind: 'unlock' } });
    await armDelay(app, ana.user.username);
    await expectDelayed(await login(app, ana.user.username, ana.password, { unlock_token: token }));
  });

  it('refuses a body without a username with 422', async () => {
    const app = await start();
    const body = await expectError(await post(app, '/api/auth/unlock/', {}), 422, 'validation_failed');
    expect(JSON.stringify(body)).toContain('username');
  });
});

describe('revocation', () => {
  /** The device token of a login of the owner. */
  async function trusted(app: TestApp, owner: TestUser): Promise<string> {
    return (await expectLoggedIn(await login(app, owner.user.username, owner.password), owner.user.id)).device_token;
  }

  it('a password change deletes every device token of the account', async () => {
    const app = await start();
    const ana = await createUser(app);
    const token = await trusted(app, ana);
    const newPassword = 'uma-senha-nova-bem-longa-42';
    const changed = await post(app, '/api/auth/change_password/', { current_password: ana.password, new_password: newPassword }, ana.headers);
    expect(changed.status).toBe(200);
    expect(await deviceRows(app, ana.user.id)).toBe(0);
    // Then an attacker delays her name: the old token no longer lets her past.
    await armDelay(app, ana.user.username);
    await expectDelayed(await login(app, ana.user.username, newPassword, { device_token: token }));
  });

  it('a completed password reset deletes every device and unlock token of the account', async () => {
    const app = await start();
    const ana = await createUser(app);
    const token = await trusted(app, ana);
    const unlock = await unlockTokenFor(app, ana, ana.user.username);
    const resetToken = 'reset-token-for-the-device-test-000000000000';
    const now = new Date();
    await app.accounts.models.PasswordReset.create({ user_id: ana.user.id, token_hash: secretHash(resetToken), created_at: now, expires_at: new Date(now.getTime() + 600_000) });
    const reset = await fetch(`${app.baseUrl}/api/auth/generate_new_pass?email=${encodeURIComponent(ana.user.email)}&token=${resetToken}`);
    expect(reset.status).toBe(200);
    expect(await deviceRows(app, ana.user.id)).toBe(0);
    await armDelay(app, ana.user.username);
    const newPassword = /new password is:\s+(\S+)/.exec((await waitForMails(app, 2)).at(-1)!.email.text ?? '')![1]!;
    await expectDelayed(await login(app, ana.user.username, newPassword, { device_token: token }));
    await expectDelayed(await login(app, ana.user.username, newPassword, { unlock_token: unlock }));
  });

  it("an admin's end of every session (log out everywhere) and a deactivation delete every device token", async () => {
    const app = await start();
    const [admin, ana, bruno] = [await createAdmin(app), await createUser(app), await createUser(app)];
    const token = await trusted(app, ana);
    await armDelay(app, ana.user.username);
    expect((await post(app, `/api/auth/account/${ana.user.id}/end_sessions/`, {}, admin.headers)).status).toBe(200);
    expect(await deviceRows(app, ana.user.id)).toBe(0);
    await expectDelayed(await login(app, ana.user.username, ana.password, { device_token: token }));

    await expectLoggedIn(await login(app, bruno.user.username, bruno.password), bruno.user.id);
    expect((await post(app, `/api/auth/account/${bruno.user.id}/deactivate/`, {}, admin.headers)).status).toBe(200);
    expect(await deviceRows(app, bruno.user.id)).toBe(0);
  });

  it('palanque user set-password deletes every device token of the account, unless --keep-sessions', async () => {
    const app = await start();
    const ana = await createUser(app);
    await trusted(app, ana);
    const output = { json: true, envelope: false, stdout: new PassThrough(), stderr: new PassThrough() };
    await setPasswordTask(ana.user.username, { databaseUrl: app.database.url, generatePassword: true, keepSessions: true }, output);
    expect(await deviceRows(app, ana.user.id)).toBe(1);
    await setPasswordTask(ana.user.username, { databaseUrl: app.database.url, generatePassword: true }, output);
    expect(await deviceRows(app, ana.user.id)).toBe(0);
  });

  it("the account's deletion deletes every device and unlock token", async () => {
    const app = await start();
    const ana = await createUser(app);
    await trusted(app, ana);
    await unlockTokenFor(app, ana, ana.user.username);
    expect(await deviceRows(app, ana.user.id)).toBe(2);
    const deleted = await post(app, '/api/auth/delete_account/', { current_password: ana.password, confirm: 'DELETE' }, ana.headers);
    expect(deleted.status).toBe(200);
    expect(await deviceRows(app, ana.user.id)).toBe(0);
  });

  it("the account's export lists its devices, never their tokens", async () => {
    const app = await start();
    const ana = await createUser(app);
    const { device_token } = await expectLoggedIn(await login(app, ana.user.username, ana.password), ana.user.id);
    const exported = await fetch(`${app.baseUrl}/api/auth/my_data/`, { headers: ana.headers });
    const body = await exported.json();
    expect(body.data.sections.login_devices).toEqual({
      source: 'login_devices.user_id',
      rows: [{ kind: 'device', created_at: expect.any(String), last_used_at: expect.any(String), expires_at: expect.any(String) }],
    });
    expect(JSON.stringify(body)).not.toContain(device_token);
    expect(JSON.stringify(body)).not.toContain(secretHash(device_token));
  });
});

describe('migration 0031', () => {
  it('creates login_devices, and down drops it', async () => {
    const app = await start();
    const context = app.sequelize.getQueryInterface();
    const columns = async () => Object.keys(await context.describeTable('login_devices')).sort();
    expect(await columns()).toEqual(['created_at', 'expires_at', 'failures', 'id', 'kind', 'last_used_at', 'token_hash', 'user_id']);
    await loginDevicesMigration.down({ context });
    await expect(context.describeTable('login_devices')).rejects.toThrow();
    await loginDevicesMigration.up({ context });
    expect(await columns()).toEqual(['created_at', 'expires_at', 'failures', 'id', 'kind', 'last_used_at', 'token_hash', 'user_id']);
  });
});
