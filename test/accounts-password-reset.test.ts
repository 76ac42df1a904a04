/**
 * Password reset by e-mail, end to end over HTTP (GET /api/auth/generate_new_pass, POST
 * /api/auth/password_reset/validate_token) and the sign-up check GET /api/check/email/: the reset mail
 * reaches only real, active accounts and the answer never tells which; the token is single-use, expires,
 * is stored only as a hash and, once used, sets a new e-mailed password and closes every session.
 * Mail is read from the .eml files the app writes, parsed with postal-mime.
 */
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import type { Email } from 'postal-mime';
import { QueryTypes } from 'sequelize';
import { describe, expect, it } from 'vitest';
import { appsClosedAfterEach, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/accounts.js';
import { readMails, recipients, SETTLE_MS, sleep, waitForMails } from './helpers/mail.js';

const start = appsClosedAfterEach();

/** The token and the completion link of a reset mail. */
function resetMailContents(email: Email): { token: string; link: URL } {
  const text = email.text ?? '';
  const token = /Reset token: (\S+)/.exec(text)?.[1];
  const link = /(https?:\/\/\S+\/api\/auth\/generate_new_pass\?\S+)/.exec(text)?.[1];
  expect(token, `no token in:\n${text}`).toBeDefined();
  expect(link, `no link in:\n${text}`).toBeDefined();
  return { token: token!, link: new URL(link!) };
}

function newPasswordOf(email: Email): string {
  const password = /Your new password is:\s+(\S+)/.exec(email.text ?? '')?.[1];
  expect(password, `no password in:\n${email.text}`).toBeDefined();
  return password!;
}

async function json(response: Response): Promise<any> {
  return response.json();
}

const requestReset = (app: TestApp, email: string) => fetch(`${app.baseUrl}/api/auth/generate_new_pass?email=${encodeURIComponent(email)}`);
const completeReset = (app: TestApp, email: string, token: string) =>
  fetch(`${app.baseUrl}/api/auth/generate_new_pass?${new URLSearchParams({ email, token })}`);
const validate = (app: TestApp, body: Record<string, unknown>) =>
  fetch(`${app.baseUrl}/api/auth/password_reset/validate_token`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
const login = (app: TestApp, username: string, password: string) =>
  fetch(`${app.baseUrl}/api/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username, password }) });
const getSelf = (app: TestApp, user: TestUser, key: string) => fetch(`${app.baseUrl}/api/usuario/${user.user.id}/`, { headers: { Authorization: `Token ${key}` } });
const checkEmail = (app: TestApp, query: string) => fetch(`${app.baseUrl}/api/check/email/${query}`);

/** Asks for a reset of `user` and returns what the mail (the `nth` written so far) brought. */
async function resetTokenFor(app: TestApp, user: TestUser, nth = 1): Promise<{ token: string; link: URL; mail: Email }> {
  const response = await requestReset(app, user.user.email);
  expect(response.status).toBe(200);
  const mails = await waitForMails(app, nth);
  const mail = mails.at(-1)!.email;
  expect(recipients(mail)).toEqual([user.user.email]);
  return { ...resetMailContents(mail), mail };
}

function expectError(body: any, code: string) {
  expect(body).toMatchObject({ success: false, error: { code } });
  expect(typeof body.error.message).toBe('string');
  expect(Array.isArray(body.error.details)).toBe(true);
  expect(typeof body.request_id).toBe('string');
}

describe('starting a reset (GET /api/auth/generate_new_pass?email=)', () => {
  it('answers reset_requested and mails exactly one message with a token and a link to complete it', async () => {
    const app = await start();
    const ana = await createUser(app, { first_name: 'Ana' });
    const response = await requestReset(app, ana.user.email);
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body).toMatchObject({ success: true, data: { status: 'reset_requested' } });
    expect(typeof body.message).toBe('string');
    expect(typeof body.request_id).toBe('string');

    await waitForMails(app, 1);
    await sleep(SETTLE_MS);
    const mails = await readMails(app);
    expect(mails).toHaveLength(1);
    const mail = mails[0]!.email;
    expect(recipients(mail)).toEqual([ana.user.email]);
    expect(mail.from?.address).toBe('no-reply@palanque.app');
    expect(mail.subject).toBe('Palanque: password reset');
    expect(mail.text).toContain('Hello Ana');

    const { token, link } = resetMailContents(mail);
    expect(token.length).toBeGreaterThanOrEqual(32);
    expect(`${link.origin}${link.pathname}`).toBe(`${app.baseUrl}/api/auth/generate_new_pass`);
    expect(link.searchParams.get('email')).toBe(ana.user.email);
    expect(link.searchParams.get('token')).toBe(token);
    expect([...link.searchParams.keys()].sort()).toEqual(['email', 'token']);
  });

  it('builds the link on PUBLIC_URL, never on the Host header a client sends', async () => {
    const app = await start({ config: { publicUrl: 'https://api.palanque.app' } });
    const ana = await createUser(app);
    const forged = await fetch(`${app.baseUrl}/api/auth/generate_new_pass?email=${encodeURIComponent(ana.user.email)}`, { headers: { Host: 'attacker.example' } });
    expect(forged.status).toBe(200);
    const [mail] = await waitForMails(app, 1);
    const { link } = resetMailContents(mail!.email);
    expect(link.origin).toBe('https://api.palanque.app');
    expect(mail!.email.text).not.toContain('attacker.example');
  });

  it('links to the FRONTEND_RESET_URL page with email and token when set, so a mail scanner opening it spends nothing', async () => {
    const app = await start({ config: { frontendResetUrl: 'https://app.palanque.app/redefinir-senha?lang=pt' } });
    const ana = await createUser(app);
    expect((await requestReset(app, ana.user.email)).status).toBe(200);
    const [mail] = await waitForMails(app, 1);
    const text = mail!.email.text ?? '';
    const token = /Reset token: (\S+)/.exec(text)?.[1];
    const link = new URL(/(https:\/\/app\.palanque\.app\S+)/.exec(text)?.[1] ?? 'missing:');
    expect(`${link.origin}${link.pathname}`).toBe('https://app.palanque.app/redefinir-senha');
    expect(Object.fromEntries(link.searchParams)).toEqual({ lang: 'pt', email: ana.user.email, token });
    expect(text).not.toContain('/api/auth/generate_new_pass?');

    // Opening the page (a scanner's prefetch) calls nothing; the page's own call completes the reset.
    const completed = await completeReset(app, link.searchParams.get('email')!, link.searchParams.get('token')!);
    expect(completed.status).toBe(200);
  });

  it('answers an unknown e-mail exactly as a known one, and writes no mail for it', async () => {
    const app = await start();
    const ana = await createUser(app);
    const unknown = await requestReset(app, 'ninguem.aqui@exemplo.com.br');
    const unknownBody = await json(unknown);
    await sleep(SETTLE_MS);
    expect(await readdir(app.mailDir)).toEqual([]);

    const known = await requestReset(app, ana.user.email);
    const knownBody = await json(known);
    expect(unknown.status).toBe(known.status);
    const { request_id: unknownId, ...unknownRest } = unknownBody;
    const { request_id: knownId, ...knownRest } = knownBody;
    expect(unknownRest).toEqual(knownRest);
    expect(unknownId).not.toBe(knownId);

    // The known address gets its mail; the unknown one never got any.
    const mails = await waitForMails(app, 1);
    await sleep(SETTLE_MS);
    expect((await readMails(app)).map((mail) => recipients(mail.email))).toEqual([[ana.user.email]]);
    expect(mails).toHaveLength(1);
  });

  it('sends nothing to an inactive account, with the same answer', async () => {
    const app = await start();
    const inactive = await createUser(app, { is_active: false });
    const active = await createUser(app);
    const response = await requestReset(app, inactive.user.email);
    expect(response.status).toBe(200);
    const { request_id: _id, ...rest } = await json(response);
    expect(rest).toMatchObject({ success: true, data: { status: 'reset_requested' } });
    await sleep(SETTLE_MS);
    expect(await readdir(app.mailDir)).toEqual([]);

    await requestReset(app, active.user.email);
    await waitForMails(app, 1);
    await sleep(SETTLE_MS);
    expect((await readMails(app)).map((mail) => recipients(mail.email))).toEqual([[active.user.email]]);
    const rows = await app.sequelize.query<{ user_id: number }>('SELECT user_id FROM password_reset_tokens', { type: QueryTypes.SELECT });
    expect(rows.map((row) => Number(row.user_id))).toEqual([active.user.id]);
  });

  it("takes the e-mail's @ raw or encoded as %40", async () => {
    const app = await start();
    const ana = await createUser(app, { email: 'ana@exemplo.com.br' });
    const raw = await fetch(`${app.baseUrl}/api/auth/generate_new_pass?email=ana@exemplo.com.br`);
    expect(raw.status).toBe(200);
    expect((await json(raw)).data.status).toBe('reset_requested');
    await waitForMails(app, 1);

    const encoded = await fetch(`${app.baseUrl}/api/auth/generate_new_pass?email=ana%40exemplo.com.br`);
    expect(encoded.status).toBe(200);
    expect((await json(encoded)).data.status).toBe('reset_requested');
    const mails = await waitForMails(app, 2);
    expect(mails.map((mail) => recipients(mail.email))).toEqual([[ana.user.email], [ana.user.email]]);
    // Two different tokens, both usable.
    const [first, second] = mails.map((mail) => resetMailContents(mail.email).token);
    expect(first).not.toBe(second);
    for (const token of [first!, second!]) {
      expect((await json(await validate(app, { email: 'ana@exemplo.com.br', token }))).data.valid).toBe(true);
    }
  });

  it('finds the account whatever the case of the address', async () => {
    const app = await start();
    const ana = await createUser(app);
    const response = await requestReset(app, ana.user.email.toUpperCase());
    expect(response.status).toBe(200);
    const [mail] = await waitForMails(app, 1);
    expect(recipients(mail!.email)).toEqual([ana.user.email]);
  });
});

describe('checking a token (POST /api/auth/password_reset/validate_token)', () => {
  it('says valid with the expiry of the configured lifetime, without consuming the token', async () => {
    const lifetimeMs = 20 * 60_000;
    const app = await start({ accounts: { passwordResetLifetimeMs: lifetimeMs } });
    const ana = await createUser(app);
    const before = Date.now();
    const { token } = await resetTokenFor(app, ana);
    const after = Date.now();

    for (let check = 0; check < 2; check += 1) {
      const response = await validate(app, { email: ana.user.email, token });
      expect(response.status).toBe(200);
      const body = await json(response);
      expect(body).toMatchObject({ success: true, data: { valid: true } });
      const expiresAt = Date.parse(body.data.expires_at);
      expect(expiresAt).toBeGreaterThanOrEqual(before + lifetimeMs - 1000);
      expect(expiresAt).toBeLessThanOrEqual(after + lifetimeMs + 1000);
    }
    // Still usable after being checked twice.
    const completed = await completeReset(app, ana.user.email, token);
    expect(completed.status).toBe(200);
    expect((await json(completed)).data.status).toBe('password_sent');
  });

  it('says not valid for a wrong token, for the right token with another user\'s e-mail and for an unknown e-mail', async () => {
    const app = await start();
    const ana = await createUser(app);
    const carlos = await createUser(app);
    const { token } = await resetTokenFor(app, ana);
    const cases = [
      { email: ana.user.email, token: `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}` },
      { email: ana.user.email, token: 'not-a-token' },
      { email: carlos.user.email, token },
      { email: 'ninguem@exemplo.com.br', token },
    ];
    for (const pair of cases) {
      const response = await validate(app, pair);
      expect(response.status).toBe(200);
      const body = await json(response);
      expect(body, JSON.stringify(pair)).toMatchObject({ success: true, data: { valid: false, expires_at: null } });
    }
    // The right pair still is (the failed checks consumed nothing).
    expect((await json(await validate(app, { email: ana.user.email, token }))).data.valid).toBe(true);
  });

  it('answers 422 when a field is missing', async () => {
    const app = await start();
    for (const body of [{ email: 'ana@exemplo.com.br' }, { token: 'abc' }, {}]) {
      const response = await validate(app, body);
      expect(response.status, JSON.stringify(body)).toBe(422);
      expectError(await json(response), 'validation_failed');
    }
  });
});

describe('completing a reset (GET /api/auth/generate_new_pass?email=&token=)', () => {
  it('follows the mailed link: a new password by mail, the old one and every old key stop working', async () => {
    const app = await start();
    const ana = await createUser(app, { first_name: 'Ana' });
    const otherKey = (await app.accounts.tokens.issue(ana.user.id)).key;
    const bystander = await createUser(app);
    for (const key of [ana.key, otherKey]) expect((await getSelf(app, ana, key)).status).toBe(200);

    const { link } = await resetTokenFor(app, ana);
    const response = await fetch(link);
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body).toMatchObject({ success: true, data: { status: 'password_sent' } });

    const mails = await waitForMails(app, 2);
    expect(mails).toHaveLength(2);
    const passwordMail = mails[1]!.email;
    expect(recipients(passwordMail)).toEqual([ana.user.email]);
    expect(passwordMail.subject).toBe('Palanque: your new password');
    const password = newPasswordOf(passwordMail);
    expect(password).not.toBe(ana.password);
    expect(password).toHaveLength(20);

    const old = await login(app, ana.user.username, ana.password);
    expect(old.status).toBe(401);
    expectError(await json(old), 'invalid_credentials');

    const fresh = await login(app, ana.user.username, password);
    expect(fresh.status).toBe(200);
    const session = await json(fresh);
    expect(session.data.user.id).toBe(ana.user.id);
    // By e-mail too.
    expect((await login(app, ana.user.email, password)).status).toBe(200);

    for (const key of [ana.key, otherKey]) {
      const stale = await getSelf(app, ana, key);
      expect(stale.status).toBe(401);
      expectError(await json(stale), 'unauthorized');
    }
    expect((await getSelf(app, ana, session.data.token)).status).toBe(200);
    // Other users keep their sessions and passwords.
    expect((await getSelf(app, bystander, bystander.key)).status).toBe(200);
    expect((await login(app, bystander.user.username, bystander.password)).status).toBe(200);
  });

  it('works through the mailed link for an address with a + (the link encodes it, so it is not read as a space)', async () => {
    const app = await start();
    const ana = await createUser(app, { email: 'ana+palanque@exemplo.com.br' });
    const { link } = await resetTokenFor(app, ana);
    expect(link.searchParams.get('email')).toBe('ana+palanque@exemplo.com.br');
    const response = await fetch(link);
    expect(response.status).toBe(200);
    expect((await json(response)).data.status).toBe('password_sent');
    const mails = await waitForMails(app, 2);
    expect(recipients(mails[1]!.email)).toEqual(['ana+palanque@exemplo.com.br']);
    expect((await login(app, ana.user.username, newPasswordOf(mails[1]!.email))).status).toBe(200);
  });

  it('takes a token once: the second use is 400 invalid_token and changes nothing', async () => {
    const app = await start();
    const ana = await createUser(app);
    const { token } = await resetTokenFor(app, ana);
    expect((await completeReset(app, ana.user.email, token)).status).toBe(200);
    const mails = await waitForMails(app, 2);
    const password = newPasswordOf(mails[1]!.email);

    const again = await completeReset(app, ana.user.email, token);
    expect(again.status).toBe(400);
    const body = await json(again);
    expectError(body, 'invalid_token');
    expect(body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ location: 'query', field: 'token' })]));
    expect((await json(await validate(app, { email: ana.user.email, token }))).data).toEqual({ valid: false, expires_at: null });

    await sleep(SETTLE_MS);
    expect(await readMails(app)).toHaveLength(2);
    expect((await login(app, ana.user.username, password)).status).toBe(200);
  });

  it('kills the older outstanding tokens of the user with the one used', async () => {
    const app = await start();
    const ana = await createUser(app);
    const carlos = await createUser(app);
    const older = await resetTokenFor(app, ana, 1);
    const newer = await resetTokenFor(app, ana, 2);
    const carlosToken = await resetTokenFor(app, carlos, 3);
    expect(older.token).not.toBe(newer.token);
    for (const token of [older.token, newer.token]) {
      expect((await json(await validate(app, { email: ana.user.email, token }))).data.valid).toBe(true);
    }

    expect((await completeReset(app, ana.user.email, newer.token)).status).toBe(200);
    expect((await json(await validate(app, { email: ana.user.email, token: older.token }))).data).toEqual({ valid: false, expires_at: null });
    const late = await completeReset(app, ana.user.email, older.token);
    expect(late.status).toBe(400);
    expectError(await json(late), 'invalid_token');
    // Another user's outstanding token is not touched.
    expect((await json(await validate(app, { email: carlos.user.email, token: carlosToken.token }))).data.valid).toBe(true);
  });

  it('refuses a token with another user\'s e-mail, leaving both accounts as they were', async () => {
    const app = await start();
    const ana = await createUser(app);
    const carlos = await createUser(app);
    const { token } = await resetTokenFor(app, ana);
    const wrong = await completeReset(app, carlos.user.email, token);
    expect(wrong.status).toBe(400);
    expectError(await json(wrong), 'invalid_token');
    expect((await login(app, carlos.user.username, carlos.password)).status).toBe(200);
    expect((await getSelf(app, carlos, carlos.key)).status).toBe(200);
    expect((await json(await validate(app, { email: ana.user.email, token }))).data.valid).toBe(true);
  });

  it('refuses an expired token (400 invalid_token; validate says not valid) and keeps the password', async () => {
    const lifetimeMs = 1000;
    const app = await start({ accounts: { passwordResetLifetimeMs: lifetimeMs } });
    const ana = await createUser(app);
    const { token } = await resetTokenFor(app, ana);
    // The mailed token is the stored one, and it was given the configured lifetime.
    const [row] = await app.sequelize.query<{ token_hash: string; created_at: string; expires_at: string }>(
      'SELECT token_hash, created_at, expires_at FROM password_reset_tokens',
      { type: QueryTypes.SELECT },
    );
    expect(row!.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    const expiresAt = new Date(row!.expires_at).getTime();
    expect(expiresAt - new Date(row!.created_at).getTime()).toBe(lifetimeMs);

    await sleep(Math.max(0, expiresAt - Date.now()) + 300);
    expect((await json(await validate(app, { email: ana.user.email, token }))).data).toEqual({ valid: false, expires_at: null });
    const late = await completeReset(app, ana.user.email, token);
    expect(late.status).toBe(400);
    expectError(await json(late), 'invalid_token');
    await sleep(SETTLE_MS);
    expect(await readMails(app)).toHaveLength(1);
    expect((await login(app, ana.user.username, ana.password)).status).toBe(200);
    expect((await getSelf(app, ana, ana.key)).status).toBe(200);
  });
});

describe('completing a reset with the token alone (GET /api/auth/generate_new_pass?token=, as the seed allows)', () => {
  const completeWithToken = (app: TestApp, token: string) => fetch(`${app.baseUrl}/api/auth/generate_new_pass?${new URLSearchParams({ token })}`);

  it("sets and mails a new password to the token's account, and the token works once", async () => {
    const app = await start();
    const ana = await createUser(app);
    const carlos = await createUser(app);
    const { token } = await resetTokenFor(app, ana);
    const response = await completeWithToken(app, token);
    expect(response.status).toBe(200);
    expect((await json(response)).data).toEqual({ status: 'password_sent' });
    const mails = await waitForMails(app, 2);
    expect(recipients(mails[1]!.email)).toEqual([ana.user.email]);
    expect((await login(app, ana.user.username, newPasswordOf(mails[1]!.email))).status).toBe(200);
    expect((await getSelf(app, ana, ana.key)).status).toBe(401);
    // Nobody else's account moved.
    expect((await login(app, carlos.user.username, carlos.password)).status).toBe(200);

    const again = await completeWithToken(app, token);
    expect(again.status).toBe(400);
    const body = await json(again);
    expectError(body, 'invalid_token');
    expect(body.error.details).toEqual([expect.objectContaining({ location: 'query', field: 'token', rule: 'valid_reset_token' })]);
  });

  it('answers an unknown token 400 invalid_token and mails nothing', async () => {
    const app = await start();
    await createUser(app);
    const response = await completeWithToken(app, 'abc');
    expect(response.status).toBe(400);
    expectError(await json(response), 'invalid_token');
    await sleep(SETTLE_MS);
    expect(await readdir(app.mailDir)).toEqual([]);
  });
});

describe('malformed reset requests', () => {
  it('answers 400 bad_request naming email with neither email nor token', async () => {
    const app = await start();
    const response = await fetch(`${app.baseUrl}/api/auth/generate_new_pass`);
    expect(response.status).toBe(400);
    const body = await json(response);
    expectError(body, 'bad_request');
    expect(body.error.details).toEqual([expect.objectContaining({ location: 'query', field: 'email', rule: 'required', message: 'email is required without token' })]);
  });

  it('answers 400 bad_request for a malformed e-mail, with or without a token, and mails nothing', async () => {
    const app = await start();
    for (const query of ['email=not-an-email', 'email=ana%40', 'email=not-an-email&token=abc']) {
      const response = await fetch(`${app.baseUrl}/api/auth/generate_new_pass?${query}`);
      expect(response.status, query).toBe(400);
      const body = await json(response);
      expectError(body, 'bad_request');
      expect(body.error.details, query).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'email' })]));
    }
    await sleep(SETTLE_MS);
    expect(await readdir(app.mailDir)).toEqual([]);
  });
});

describe('storage', () => {
  it('keeps only a hash of the token: no column holds the token itself', async () => {
    const app = await start();
    const ana = await createUser(app);
    const { token } = await resetTokenFor(app, ana);
    const rows = await app.sequelize.query<Record<string, unknown>>('SELECT * FROM password_reset_tokens', { type: QueryTypes.SELECT });
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(Number(row.user_id)).toBe(ana.user.id);
    expect(row.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    for (const [column, value] of Object.entries(row)) {
      const text = value instanceof Date ? value.toISOString() : String(value);
      expect(text, column).not.toContain(token);
    }
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it('marks the token used when it is used', async () => {
    const app = await start();
    const ana = await createUser(app);
    const { token } = await resetTokenFor(app, ana);
    const usedAt = async () =>
      (await app.sequelize.query<{ used_at: unknown }>('SELECT used_at FROM password_reset_tokens', { type: QueryTypes.SELECT }))[0]!.used_at;
    expect(await usedAt()).toBeNull();
    expect((await completeReset(app, ana.user.email, token)).status).toBe(200);
    expect(await usedAt()).not.toBeNull();
  });
});

describe('is an e-mail free? (GET /api/check/email/)', () => {
  it('says a used address is not available and a free one is', async () => {
    const app = await start();
    const ana = await createUser(app);
    const used = await checkEmail(app, `?email=${encodeURIComponent(ana.user.email)}`);
    expect(used.status).toBe(200);
    expect(await json(used)).toMatchObject({ success: true, data: { email: ana.user.email, available: false } });

    const free = await checkEmail(app, '?email=joana.lima@exemplo.com.br');
    expect(free.status).toBe(200);
    expect(await json(free)).toMatchObject({ success: true, data: { email: 'joana.lima@exemplo.com.br', available: true } });
  });

  it('normalises the address: an upper-cased used address is not available and comes back lower-cased', async () => {
    const app = await start();
    const ana = await createUser(app, { email: 'ana.souza@exemplo.com.br' });
    for (const query of ['?email=ANA.SOUZA@EXEMPLO.COM.BR', '?email=Ana.Souza%40Exemplo.com.br']) {
      const response = await checkEmail(app, query);
      expect(response.status, query).toBe(200);
      expect((await json(response)).data, query).toEqual({ email: ana.user.email, available: false });
    }
    const free = await checkEmail(app, '?email=Joana.Lima@Exemplo.COM.br');
    expect((await json(free)).data).toEqual({ email: 'joana.lima@exemplo.com.br', available: true });
  });

  it('answers 400 bad_request when the address is missing or malformed', async () => {
    const app = await start();
    for (const query of ['', '?email=not-an-email', '?email=ana%40', '?email=']) {
      const response = await checkEmail(app, query);
      expect(response.status, query).toBe(400);
      const body = await json(response);
      expectError(body, 'bad_request');
      expect(body.error.details, query).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'email' })]));
    }
  });
});
