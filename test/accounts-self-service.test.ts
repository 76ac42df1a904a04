/**
 * A user's own account over HTTP (issue 21): the profile (name and phone), changing the password with
 * the current one (the password rules, the login lock, every other key revoked, a notice mailed) and the
 * list of one's own keys with their devices, any of which can be revoked; and the platform admins'
 * operations on an account (create, deactivate, reactivate, end its sessions). On SQLite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import { describe, expect, it } from 'vitest';
import { passwordProblem } from '../src/accounts/password-policy.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { appsClosedAfterEach, type TestApp } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';
import { recipients, waitForMails } from './helpers/mail.js';

const start = appsClosedAfterEach();

const NEW_PASSWORD = 'cerrado em flor na seca de agosto';

async function logIn(app: TestApp, username: string, password: string, device?: string) {
  const headers: Record<string, string> = device ? { 'User-Agent': device } : {};
  return request(app.baseUrl, 'POST', '/api/auth/login', headers, { username, password });
}

function changePassword(app: TestApp, user: Pick<TestUser, 'headers'>, body: Record<string, unknown>) {
  return request(app.baseUrl, 'POST', '/api/auth/change_password/', user.headers, body);
}

describe('the password rules', () => {
  it('weigh length, refuse the common passwords and the account name, and take any characters', () => {
    expect(passwordProblem('curta demais')).toBeUndefined(); // 12 characters, spaces welcome
    expect(passwordProblem('curta dema')?.rule).toBe('min_length');
    // An emoji is one character, as a person counts it: 11 here (17 UTF-16 units).
    expect(passwordProblem('🗳🗳🗳🗳🗳🗳votos')?.rule).toBe('min_length');
    expect(passwordProblem('🗳🗳🗳🗳🗳🗳 votos')).toBeUndefined();
    expect(passwordProblem('x'.repeat(257))?.rule).toBe('max_length');
    expect(passwordProblem('qwerty123456')?.rule).toBe('common_password');
    expect(passwordProblem('QAZWSXEDCRFV')?.rule).toBe('common_password');
    expect(passwordProblem('ana.souza.2026', { username: 'Ana.Souza.2026' })?.rule).toBe('account_name');
    expect(passwordProblem('ana.souza.palanque', { email: 'ana.souza.palanque@exemplo.com.br' })?.rule).toBe('account_name');
    expect(passwordProblem('sem números nem símbolos')).toBeUndefined();
    expect(passwordProblem('dezesseis chars', {}, 16)?.rule).toBe('min_length');
  });
});

describe('changePassword', () => {
  it('changes the password, revokes every other key of the account and keeps the one that asked', async () => {
    const app = await start();
    const ana = await createUser(app);
    const laptop = (await logIn(app, ana.user.username, ana.password)).body.data.token as string;
    const stranger = await createUser(app);

    const changed = await changePassword(app, ana, { current_password: ana.password, new_password: NEW_PASSWORD });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.data).toEqual({ changed: true, keys_revoked: 1 });

    expect((await request(app.baseUrl, 'GET', '/api/auth/sessions/', ana.headers)).status).toBe(200);
    expectError(await request(app.baseUrl, 'GET', '/api/auth/sessions/', { Authorization: `Token ${laptop}` }), 401, 'unauthorized');
    expect((await request(app.baseUrl, 'GET', '/api/auth/sessions/', stranger.headers)).status).toBe(200);
    expectError(await logIn(app, ana.user.username, ana.password), 401, 'invalid_credentials');
    expect((await logIn(app, ana.user.username, NEW_PASSWORD)).status).toBe(200);

    const [notice] = await waitForMails(app, 1);
    expect(recipients(notice!.email)).toEqual([ana.user.email]);
    expect(notice!.email.subject).toBe('Palanque: your password was changed');
    expect(notice!.email.text).not.toContain(NEW_PASSWORD);
  });

  it('refuses a wrong current password with 401 naming the field, counted by the login lock', async () => {
    const app = await start({ accounts: { loginLock: { maxFailures: 2, addressMaxFailures: 100, maxDelayMs: 30_000, windowMs: 60_000 } } });
    const ana = await createUser(app);
    const wrong = await changePassword(app, ana, { current_password: 'não é a senha atual', new_password: NEW_PASSWORD });
    expectError(wrong, 401, 'invalid_credentials');
    expect(wrong.body.error.details).toEqual([expect.objectContaining({ field: 'current_password', rule: 'current_password' })]);
    expect(wrong.headers.get('www-authenticate')).toBe('Token realm="palanque"');
    expectError(await changePassword(app, ana, { current_password: 'também não é ela', new_password: NEW_PASSWORD }), 401, 'invalid_credentials');
    // Two failures of the username from this address: even the right password waits now, here and at login.
    expectError(await changePassword(app, ana, { current_password: ana.password, new_password: NEW_PASSWORD }), 429, 'login_locked');
    expectError(await logIn(app, ana.user.username, ana.password), 429, 'login_locked');
    // Nothing changed: the key still works.
    expect((await request(app.baseUrl, 'GET', '/api/auth/sessions/', ana.headers)).status).toBe(200);
  });

  it('refuses a new password that breaks a rule with 422 naming the rule, and changes nothing', async () => {
    const app = await start({ accounts: { passwordMinLength: 14 } });
    const ana = await createUser(app, { username: 'ana.souza.campanha' });
    const other = (await logIn(app, ana.user.username, ana.password)).body.data.token as string;
    const cases: Array<[string, string]> = [
      ['treze letras.', 'min_length'], // 13 characters under PASSWORD_MIN_LENGTH=14
      ['1qaz2wsx3edc4rfv', 'common_password'],
      ['Ana.Souza.Campanha', 'account_name'],
      [ana.password, 'different_from_current'],
    ];
    for (const [newPassword, rule] of cases) {
      const refused = await changePassword(app, ana, { current_password: ana.password, new_password: newPassword });
      expectError(refused, 422, 'validation_failed');
      expect(refused.body.error.details, newPassword).toEqual([expect.objectContaining({ location: 'body', field: 'new_password', rule })]);
    }
    const missing = await changePassword(app, ana, { new_password: NEW_PASSWORD });
    expectError(missing, 422, 'validation_failed');
    expect(missing.body.error.details).toEqual([expect.objectContaining({ field: 'current_password', rule: 'required' })]);
    // The other key still works and the password is the old one.
    expect((await request(app.baseUrl, 'GET', '/api/auth/sessions/', { Authorization: `Token ${other}` })).status).toBe(200);
    expect((await logIn(app, ana.user.username, ana.password)).status).toBe(200);
  });

  it('keeps nothing of the request for an idempotent replay: its body holds passwords', async () => {
    const app = await start();
    const ana = await createUser(app);
    const headers = { ...ana.headers, 'Idempotency-Key': 'troca-de-senha-1' };
    const body = { current_password: ana.password, new_password: NEW_PASSWORD };
    expect((await request(app.baseUrl, 'POST', '/api/auth/change_password/', headers, body)).status).toBe(200);
    const retry = await request(app.baseUrl, 'POST', '/api/auth/change_password/', headers, body);
    expectError(retry, 401, 'invalid_credentials');
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('listMySessions and revokeMySession', () => {
  it("lists the caller's live keys with their devices, never a key, and marks the current one", async () => {
    const app = await start();
    const ana = await createUser(app);
    const phone = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) Mobile Safari/537.36';
    const phoneKey = (await logIn(app, ana.user.username, ana.password, phone)).body.data.token as string;
    const laptopKey = (await logIn(app, ana.user.email, ana.password, 'x'.repeat(300))).body.data.token as string;
    const revokedKey = (await logIn(app, ana.user.username, ana.password)).body.data.token as string;
    await request(app.baseUrl, 'POST', '/api/auth/logout', { Authorization: `Token ${revokedKey}` });
    const carlos = await createUser(app);

    const listed = await request(app.baseUrl, 'GET', '/api/auth/sessions/', { Authorization: `Token ${phoneKey}` });
    expect(listed.status, listed.text).toBe(200);
    const sessions = listed.body.data.results as Array<Record<string, unknown>>;
    // The key createUser issued, the phone's and the laptop's; the logged-out one is gone.
    expect(listed.body.data.count).toBe(3);
    expect(sessions.map((session) => session.device)).toEqual(['x'.repeat(200), phone, null]);
    expect(sessions.map((session) => session.current)).toEqual([false, true, false]);
    expect(sessions[0]).toEqual({ id: expect.any(Number), device: 'x'.repeat(200), created_at: expect.any(String), last_used_at: null, expires_at: expect.any(String), current: false });
    for (const key of [phoneKey, laptopKey, revokedKey]) expect(listed.text).not.toContain(key);
    // Someone else's list holds only their own key.
    const theirs = await request(app.baseUrl, 'GET', '/api/auth/sessions/', carlos.headers);
    expect(theirs.body.data.results).toEqual([expect.objectContaining({ current: true })]);
    expectError(await request(app.baseUrl, 'GET', '/api/auth/sessions/?page=2', carlos.headers), 404, 'not_found');
  });

  it("revokes one of the caller's keys by id; someone else's id is 404 like an unknown one", async () => {
    const app = await start();
    const ana = await createUser(app);
    const laptopKey = (await logIn(app, ana.user.username, ana.password, 'Firefox on the office laptop')).body.data.token as string;
    const carlos = await createUser(app);
    const list = async (user: TestUser) => (await request(app.baseUrl, 'GET', '/api/auth/sessions/', user.headers)).body.data.results as Array<{ id: number; device: string | null }>;
    const laptop = (await list(ana)).find((session) => session.device === 'Firefox on the office laptop')!;
    const carlosKeyId = (await list(carlos))[0]!.id;

    const notYours = await request(app.baseUrl, 'POST', `/api/auth/sessions/${carlosKeyId}/revoke/`, ana.headers);
    expectError(notYours, 404, 'not_found');
    expect(notYours.body.error.details).toEqual([expect.objectContaining({ location: 'path', field: 'session_id', rule: 'own_live_session' })]);
    expect((await request(app.baseUrl, 'GET', '/api/auth/sessions/', carlos.headers)).status).toBe(200);

    const revoked = await request(app.baseUrl, 'POST', `/api/auth/sessions/${laptop.id}/revoke/`, ana.headers);
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body.data).toEqual({ revoked: true });
    expectError(await request(app.baseUrl, 'GET', '/api/auth/sessions/', { Authorization: `Token ${laptopKey}` }), 401, 'unauthorized');
    expectError(await request(app.baseUrl, 'POST', `/api/auth/sessions/${laptop.id}/revoke/`, ana.headers), 404, 'not_found');
    expect((await list(ana)).map((session) => session.id)).not.toContain(laptop.id);
    expectError(await request(app.baseUrl, 'POST', '/api/auth/sessions/0/revoke/', ana.headers), 400, 'bad_request');
  });
});

describe('getMyProfile and updateMyProfile', () => {
  it("reads the caller's own account and changes only the fields the body names", async () => {
    const app = await start();
    const ana = await createUser(app, { first_name: 'Ana', last_name: 'Souza', phone: '+5521998765432' });
    const own = await request(app.baseUrl, 'GET', '/api/auth/profile/', ana.headers);
    expect(own.status, own.text).toBe(200);
    expect(own.body.data).toMatchObject({ id: ana.user.id, username: ana.user.username, email: ana.user.email, first_name: 'Ana', phone: '+5521998765432' });

    const renamed = await request(app.baseUrl, 'POST', '/api/auth/profile/', ana.headers, { last_name: '  Souza Lima ', phone: '(11) 98765-4321' });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.data).toMatchObject({ first_name: 'Ana', last_name: 'Souza Lima', phone: '+5511987654321' });
    const foreign = await request(app.baseUrl, 'POST', '/api/auth/profile/', ana.headers, { phone: '+351 912 345 678' });
    expect(foreign.body.data).toMatchObject({ last_name: 'Souza Lima', phone: '+351912345678' });
    const cleared = await request(app.baseUrl, 'POST', '/api/auth/profile/', ana.headers, { phone: null });
    expect(cleared.body.data).toMatchObject({ first_name: 'Ana', last_name: 'Souza Lima', phone: null });
    expect(await app.accounts.users.byId(ana.user.id)).toMatchObject({ last_name: 'Souza Lima', phone: null });
  });

  it('refuses a phone that cannot exist and a field it does not change (the e-mail), changing nothing', async () => {
    const app = await start();
    const ana = await createUser(app, { first_name: 'Ana', phone: '+5521998765432' });
    for (const phone of ['(11) 1234', '21 0000-0000', 'telefone']) {
      const refused = await request(app.baseUrl, 'POST', '/api/auth/profile/', ana.headers, { first_name: 'Outra', phone });
      expectError(refused, 422, 'validation_failed');
      expect(refused.body.error.details, phone).toEqual([{ location: 'body', field: 'phone', rule: 'phone_number', message: expect.any(String), value: phone }]);
    }
    const email = await request(app.baseUrl, 'POST', '/api/auth/profile/', ana.headers, { email: 'outra@exemplo.com.br' });
    expectError(email, 422, 'validation_failed');
    expect(email.body.error.details).toEqual([expect.objectContaining({ field: 'email', rule: 'additionalProperties' })]);
    expect(await app.accounts.users.byId(ana.user.id)).toMatchObject({ first_name: 'Ana', phone: '+5521998765432', email: ana.user.email });
    expectError(await request(app.baseUrl, 'GET', '/api/auth/profile/'), 401, 'unauthorized');
  });
});

describe("the admins' operations on an account", () => {
  it('creates an account with a password the admin chose, following the password rules', async () => {
    const app = await start();
    const admin = await createAdmin(app);
    const body = { username: 'joana.lima', email: 'Joana.Lima@Exemplo.com.br', first_name: 'Joana', phone: '(21) 99876-5432', password: 'uma senha escolhida pelo admin' };
    const weak = await request(app.baseUrl, 'POST', '/api/auth/account', admin.headers, { ...body, username: 'joana@lima', password: 'qwerty123456' });
    expectError(weak, 422, 'validation_failed');
    expect(weak.body.error.details.map((detail: { field: string; rule: string }) => [detail.field, detail.rule])).toEqual([
      ['username', 'username'],
      ['password', 'common_password'],
    ]);
    const created = await request(app.baseUrl, 'POST', '/api/auth/account', admin.headers, body);
    expect(created.status, created.text).toBe(201);
    expect(created.body.data).toMatchObject({ username: 'joana.lima', email: 'joana.lima@exemplo.com.br', phone: '+5521998765432', is_admin: false, is_active: true });
    expect(created.text).not.toContain(body.password);
    expect((await logIn(app, 'joana.lima', body.password)).status).toBe(200);

    const taken = await request(app.baseUrl, 'POST', '/api/auth/account', admin.headers, { ...body, username: 'Joana.Lima', email: 'outra.joana@exemplo.com.br' });
    expectError(taken, 409, 'conflict');
    expect(taken.body.error.details).toEqual([expect.objectContaining({ field: 'username', rule: 'unique' })]);
    const sameMailbox = await request(app.baseUrl, 'POST', '/api/auth/account', admin.headers, { ...body, username: 'joana.2', email: 'JOANA.LIMA@exemplo.com.br' });
    expectError(sameMailbox, 409, 'conflict');
    expect(sameMailbox.body.error.details).toEqual([expect.objectContaining({ field: 'email', rule: 'unique', value: 'joana.lima@exemplo.com.br' })]);
    expectError(await request(app.baseUrl, 'POST', '/api/auth/account', (await createUser(app)).headers, { ...body, username: 'outra', email: 'outra@exemplo.com.br' }), 403, 'forbidden');
  });

  it('creates an account without a password: its owner gets a link by mail, and through it a password nobody else saw', async () => {
    const app = await start();
    const admin = await createAdmin(app);
    const created = await request(app.baseUrl, 'POST', '/api/auth/account', admin.headers, { username: 'bia.santos', email: 'bia.santos@exemplo.com.br' });
    expect(created.status, created.text).toBe(201);
    expect(created.body.message).toContain('a link to get a password was mailed to bia.santos@exemplo.com.br');
    const [welcome] = await waitForMails(app, 1);
    expect(recipients(welcome!.email)).toEqual(['bia.santos@exemplo.com.br']);
    expect(welcome!.email.subject).toBe('Palanque: your new account');
    const link = new URL(/(https?:\/\/\S+\/api\/auth\/generate_new_pass\?\S+)/.exec(welcome!.email.text ?? '')![1]!);
    expect((await request(app.baseUrl, 'GET', link.pathname + link.search)).status).toBe(200);
    const [, passwordMail] = await waitForMails(app, 2);
    const password = /Your new password is:\s+(\S+)/.exec(passwordMail!.email.text ?? '')![1]!;
    expect((await logIn(app, 'bia.santos', password)).status).toBe(200);
  });

  it('deactivates an account (its keys revoked, no login), reactivates it (a new login works, the old keys stay dead)', async () => {
    const app = await start();
    const admin = await createAdmin(app);
    const carlos = await createUser(app);
    const laptop = (await logIn(app, carlos.user.username, carlos.password)).body.data.token as string;

    const deactivated = await request(app.baseUrl, 'POST', `/api/auth/account/${carlos.user.id}/deactivate/`, admin.headers);
    expect(deactivated.status, deactivated.text).toBe(200);
    expect(deactivated.body.data).toMatchObject({ id: carlos.user.id, is_active: false });
    expect(deactivated.body.message).toBe(`User ${carlos.user.id} was deactivated; 2 keys were revoked.`);
    for (const key of [carlos.key, laptop]) expectError(await request(app.baseUrl, 'GET', '/api/auth/profile/', { Authorization: `Token ${key}` }), 401, 'unauthorized');
    expectError(await logIn(app, carlos.user.username, carlos.password), 403, 'account_inactive');
    // Again: nothing changes, the same answer.
    expect((await request(app.baseUrl, 'POST', `/api/auth/account/${carlos.user.id}/deactivate/`, admin.headers)).body.data.is_active).toBe(false);

    const reactivated = await request(app.baseUrl, 'POST', `/api/auth/account/${carlos.user.id}/reactivate/`, admin.headers);
    expect(reactivated.status, reactivated.text).toBe(200);
    expect(reactivated.body.data).toMatchObject({ id: carlos.user.id, is_active: true });
    expectError(await request(app.baseUrl, 'GET', '/api/auth/profile/', carlos.headers), 401, 'unauthorized');
    expect((await logIn(app, carlos.user.username, carlos.password)).status).toBe(200);
  });

  it("ends every session of a user, who stays active and logs in again", async () => {
    const app = await start();
    const admin = await createAdmin(app);
    const carlos = await createUser(app);
    const laptop = (await logIn(app, carlos.user.username, carlos.password)).body.data.token as string;
    const ended = await request(app.baseUrl, 'POST', `/api/auth/account/${carlos.user.id}/end_sessions/`, admin.headers);
    expect(ended.status, ended.text).toBe(200);
    expect(ended.body.data).toEqual({ keys_revoked: 2 });
    for (const key of [carlos.key, laptop]) expectError(await request(app.baseUrl, 'GET', '/api/auth/profile/', { Authorization: `Token ${key}` }), 401, 'unauthorized');
    expect((await logIn(app, carlos.user.username, carlos.password)).status).toBe(200);
    expect((await request(app.baseUrl, 'GET', '/api/auth/profile/', admin.headers)).status).toBe(200);
  });

  it('refuses a non-admin (403), an unknown user (404) and an admin deactivating themself (409)', async () => {
    const app = await start();
    const admin = await createAdmin(app);
    const carlos = await createUser(app);
    const bia = await createUser(app);
    for (const action of ['deactivate', 'reactivate', 'end_sessions']) {
      expectError(await request(app.baseUrl, 'POST', `/api/auth/account/${bia.user.id}/${action}/`, carlos.headers), 403, 'forbidden');
      const unknown = await request(app.baseUrl, 'POST', `/api/auth/account/2000000000/${action}/`, admin.headers);
      expectError(unknown, 404, 'not_found');
      expect(unknown.body.error.details).toEqual([expect.objectContaining({ field: 'user_id', rule: 'existing_user', value: 2000000000 })]);
    }
    const yourself = await request(app.baseUrl, 'POST', `/api/auth/account/${admin.user.id}/deactivate/`, admin.headers);
    expectError(yourself, 409, 'conflict');
    expect(yourself.body.error.details).toEqual([expect.objectContaining({ field: 'user_id', rule: 'not_yourself' })]);
    // Nothing happened to anyone.
    for (const user of [admin, carlos, bia]) expect((await request(app.baseUrl, 'GET', '/api/auth/profile/', user.headers)).status).toBe(200);
  });
});
