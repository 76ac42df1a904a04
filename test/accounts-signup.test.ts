/**
 * Addresses confirmed through a mailed link (issue 21). Sign-up: who may sign up (SIGNUP), the pending
 * sign-up that becomes an account only through the single-use link, the login's answer meanwhile, the
 * resend throttle. A user's change of address: the current password, the link to the new address, the
 * old one told. In both, nothing tells whether an address has an account (the same answer, a mail to the
 * owner of a taken address, no change to that account). On SQLite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import { describe, expect, it } from 'vitest';
import type { SignUpMode } from '../src/accounts/settings.js';
import { createUser } from './helpers/accounts.js';
import { appsClosedAfterEach, type TestApp } from './helpers/app.js';
import { expectError, request, type Result } from './helpers/http.js';
import { readMails, recipients, SETTLE_MS, sleep, waitForMails, type Mail } from './helpers/mail.js';

const start = appsClosedAfterEach();

const PASSWORD = 'ipê amarelo na praça da matriz';

function startWith(mode: SignUpMode, extra: { linkLifetimeMs?: number; resendIntervalMs?: number; frontendVerifyUrl?: string } = {}) {
  const signUp = { mode, linkLifetimeMs: extra.linkLifetimeMs ?? 48 * 3600_000, resendIntervalMs: extra.resendIntervalMs ?? 60_000 };
  return start({ accounts: { signUp }, config: { frontendVerifyUrl: extra.frontendVerifyUrl } });
}

function signUp(app: TestApp, body: Record<string, unknown>): Promise<Result> {
  return request(app.baseUrl, 'POST', '/api/auth/signup/', {}, { username: 'rafael.costa', email: 'rafael.costa@exemplo.com.br', password: PASSWORD, ...body });
}

const logIn = (app: TestApp, username: string, password: string) => request(app.baseUrl, 'POST', '/api/auth/login', {}, { username, password });

/** The confirmation link of a mail, and its token. */
function linkIn(mail: Mail): { url: URL; token: string } {
  const found = /(https?:\/\/\S+verify_email\S*|https:\/\/app\.palanque\.app\S*)/.exec(mail.email.text ?? '');
  if (!found) throw new Error(`no confirmation link in: ${mail.email.text}`);
  const url = new URL(found[1]!);
  return { url, token: url.searchParams.get('token')! };
}

const confirm = (app: TestApp, token: string) => request(app.baseUrl, 'GET', `/api/auth/verify_email/?token=${encodeURIComponent(token)}`, {});

describe('signUp on an open server', () => {
  it('mails a single-use link; the account exists, active, only once it is opened', async () => {
    const app = await startWith('open');
    const accepted = await signUp(app, { email: 'Rafael.Costa@Exemplo.com.br', first_name: 'Rafael', phone: '(11) 98765-4321' });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.data).toEqual({ status: 'confirmation_sent', email: 'rafael.costa@exemplo.com.br', link_expires_in_seconds: 172800 });

    const [mail] = await waitForMails(app, 1);
    expect(recipients(mail!.email)).toEqual(['rafael.costa@exemplo.com.br']);
    expect(mail!.email.subject).toBe('Palanque: confirm your e-mail address');
    const { url, token } = linkIn(mail!);
    expect(`${url.origin}${url.pathname}`).toBe(`${app.baseUrl}/api/auth/verify_email/`);
    expect(await app.accounts.users.byLoginName('rafael.costa')).toBeUndefined();

    // Before the confirmation, the right password is told to confirm first; a wrong one is just wrong.
    expectError(await logIn(app, 'rafael.costa', PASSWORD), 403, 'email_not_verified');
    expectError(await logIn(app, 'rafael.costa@exemplo.com.br', PASSWORD), 403, 'email_not_verified');
    expectError(await logIn(app, 'rafael.costa', 'not the password at all'), 401, 'invalid_credentials');

    const confirmed = await confirm(app, token);
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body.data).toEqual({ status: 'account_activated', username: 'rafael.costa', email: 'rafael.costa@exemplo.com.br' });
    const account = await app.accounts.users.byLoginName('rafael.costa');
    expect(account).toMatchObject({ first_name: 'Rafael', phone: '+5511987654321' });
    expect([Boolean(account!.is_active), Boolean(account!.is_admin)]).toEqual([true, false]); // SQLite's raw rows hold 1 and 0

    const loggedIn = await logIn(app, 'rafael.costa', PASSWORD);
    expect(loggedIn.status, loggedIn.text).toBe(200);
    // Single use.
    const again = await confirm(app, token);
    expectError(again, 400, 'invalid_token');
    expect(again.body.error.details[0]).toMatchObject({ location: 'query', field: 'token', rule: 'valid_confirmation_token' });
  });

  it('answers a taken address exactly as a free one, mails its owner instead, and changes nothing', async () => {
    const app = await startWith('open');
    const owner = await createUser(app, { username: 'ana.souza', email: 'ana.souza@exemplo.com.br' });
    const free = await signUp(app, { username: 'pessoa.nova', email: 'pessoa.nova@exemplo.com.br' });
    const taken = await signUp(app, { username: 'outra.pessoa', email: 'Ana.Souza@exemplo.com.br' });
    expect(taken.status).toBe(free.status);
    const withoutRequest = (result: Result) => ({ ...result.body, request_id: undefined, data: { ...result.body.data, email: undefined } });
    expect(withoutRequest(taken)).toEqual(withoutRequest(free));

    const mails = await waitForMails(app, 2);
    const toOwner = mails.find((mail) => recipients(mail.email).includes('ana.souza@exemplo.com.br'))!;
    expect(toOwner.email.subject).toBe('Palanque: someone tried to sign up with your address');
    expect(toOwner.email.text).toContain('username ana.souza');
    expect(toOwner.email.text).not.toMatch(/verify_email|token/);
    // No sign-up is pending for the address, and the account is as it was.
    expectError(await logIn(app, 'outra.pessoa', PASSWORD), 401, 'invalid_credentials');
    expect((await logIn(app, 'ana.souza', owner.password)).status).toBe(200);
    expect(await app.accounts.models.PendingSignUp.count({ where: { email: 'ana.souza@exemplo.com.br' } })).toBe(0);
  });

  it('takes as long for a taken address as for a free one', async () => {
    const app = await startWith('open');
    await createUser(app, { username: 'ana.souza', email: 'ana.souza@exemplo.com.br' });
    const timeOf = async (body: Record<string, unknown>) => {
      const started = performance.now();
      expect((await signUp(app, body)).status).toBe(200);
      const elapsed = performance.now() - started;
      await sleep(30); // the work after the answer is done before the next one
      return elapsed;
    };
    const free: number[] = [];
    const taken: number[] = [];
    for (let round = 0; round < 12; round += 1) {
      free.push(await timeOf({ username: `livre.${round}`, email: `livre.${round}@exemplo.com.br` }));
      taken.push(await timeOf({ username: `tentativa.${round}`, email: 'ana.souza@exemplo.com.br' }));
    }
    // Each round's pair ran back to back, so a burst of load from other test files (CI runs them in
    // parallel: answers of 6 ms become 15) slows both of a pair: the median of the pairs' ratios is what
    // the code does, where the ratio of the two medians of 8 once read 0.48 under CI's load.
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
    const ratio = median(taken.map((time, round) => time / free[round]!));
    const shown = `median ratio ${ratio.toFixed(2)}; ms taken ${taken.map((time) => time.toFixed(0)).join(' ')}, free ${free.map((time) => time.toFixed(0)).join(' ')}`;
    expect(ratio, shown).toBeGreaterThan(0.5);
    expect(ratio, shown).toBeLessThan(2);
  });

  it('refuses a taken username (409), a username held by a pending sign-up of another address, and a weak password (422)', async () => {
    const app = await startWith('open');
    await createUser(app, { username: 'ana.souza' });
    const taken = await signUp(app, { username: 'Ana.Souza' });
    expectError(taken, 409, 'conflict');
    expect(taken.body.error.details[0]).toMatchObject({ location: 'body', field: 'username', rule: 'unique', value: 'Ana.Souza' });

    expect((await signUp(app, { username: 'rafael.costa', email: 'rafael.costa@exemplo.com.br' })).status).toBe(200);
    await waitForMails(app, 1);
    expectError(await signUp(app, { username: 'rafael.costa', email: 'outro.rafael@exemplo.com.br' }), 409, 'conflict');

    const weak = await signUp(app, { username: 'joana.lima.2026', email: 'joana.lima@exemplo.com.br', password: 'Joana.Lima.2026' });
    expectError(weak, 422, 'validation_failed');
    expect(weak.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'password', rule: 'account_name' })]);
    const common = await signUp(app, { username: 'joana.lima', password: 'qwerty123456', phone: '123' });
    expect(common.body.error.details.map((detail: { field: string; rule: string }) => `${detail.field}:${detail.rule}`).sort()).toEqual(['password:common_password', 'phone:phone_number']);
    expectError(await signUp(app, { username: 'joana@lima' }), 422, 'validation_failed');
  });

  it('lets a new sign-up of the same address replace an unconfirmed one, whose link stops working', async () => {
    const app = await startWith('open');
    expect((await signUp(app, { username: 'primeiro.nome' })).status).toBe(200);
    const [first] = await waitForMails(app, 1);
    expect((await signUp(app, { username: 'segundo.nome' })).status).toBe(200);
    const second = (await waitForMails(app, 2))[1]!;

    expectError(await confirm(app, linkIn(first!).token), 400, 'invalid_token');
    expect((await confirm(app, linkIn(second).token)).body.data.username).toBe('segundo.nome');
    expect(await app.accounts.users.byLoginName('primeiro.nome')).toBeUndefined();
    // The address now has an account: a later sign-up with it only warns the owner.
    expect((await signUp(app, { username: 'terceiro.nome' })).status).toBe(200);
    const [warning] = (await waitForMails(app, 3)).slice(2);
    expect(warning!.email.subject).toBe('Palanque: someone tried to sign up with your address');
  });

  it('links to the front-end confirmation page when FRONTEND_VERIFY_URL is set', async () => {
    const app = await startWith('open', { frontendVerifyUrl: 'https://app.palanque.app/confirmar-email?lang=pt' });
    await signUp(app, {});
    const { url, token } = linkIn((await waitForMails(app, 1))[0]!);
    expect(`${url.origin}${url.pathname}`).toBe('https://app.palanque.app/confirmar-email');
    expect(url.searchParams.get('lang')).toBe('pt');
    expect((await confirm(app, token)).status).toBe(200);
  });

  it('refuses an expired link, and the housekeeping removes its sign-up (and frees its username)', async () => {
    const app = await startWith('open', { linkLifetimeMs: 300 });
    await signUp(app, {});
    const { token } = linkIn((await waitForMails(app, 1))[0]!);
    await sleep(400);
    expectError(await confirm(app, token), 400, 'invalid_token');
    expectError(await logIn(app, 'rafael.costa', PASSWORD), 401, 'invalid_credentials');
    expect(await app.accounts.purgeExpired()).toBeGreaterThanOrEqual(1);
    expect(await app.accounts.models.PendingSignUp.count()).toBe(0);
    expect((await signUp(app, { email: 'outra@exemplo.com.br' })).status).toBe(200);
  });

  it('answers a missing or malformed token 400', async () => {
    const app = await startWith('open');
    expectError(await request(app.baseUrl, 'GET', '/api/auth/verify_email/', {}), 400, 'bad_request');
    expectError(await confirm(app, 'nao-e-um-token'), 400, 'invalid_token');
  });
});

describe('resendSignUpConfirmation', () => {
  it('mails a new link at most once an interval, kills the old one, and answers the same for any address', async () => {
    // Long enough that the first resend comes sooner on a loaded machine, short enough to wait out.
    const app = await startWith('open', { resendIntervalMs: 2_500 });
    await signUp(app, {});
    const [first] = await waitForMails(app, 1);
    const resend = (email: string) => request(app.baseUrl, 'POST', '/api/auth/signup/resend/', {}, { email });

    // Too soon: the same answer, no mail.
    const tooSoon = await resend('rafael.costa@exemplo.com.br');
    expect(tooSoon.status).toBe(200);
    expect(tooSoon.body.data).toEqual({ status: 'confirmation_sent', email: 'rafael.costa@exemplo.com.br', link_expires_in_seconds: 172800 });
    await sleep(SETTLE_MS);
    expect(await readMails(app)).toHaveLength(1);

    await sleep(2_500);
    expect((await resend('Rafael.Costa@exemplo.com.br')).status).toBe(200);
    const second = (await waitForMails(app, 2))[1]!;
    expectError(await confirm(app, linkIn(first!).token), 400, 'invalid_token');

    // An address with no sign-up, and one with an account: the same answer, and nothing sent.
    const owner = await createUser(app, { email: 'ana.souza@exemplo.com.br' });
    for (const email of ['ninguem@exemplo.com.br', owner.user.email]) {
      const answer = await resend(email);
      expect(answer.status).toBe(200);
      expect(answer.body.message).toBe(tooSoon.body.message);
    }
    await sleep(SETTLE_MS);
    expect(await readMails(app)).toHaveLength(2);
    expect((await confirm(app, linkIn(second).token)).status).toBe(200);
  });
});

describe('SIGNUP', () => {
  it('invite (the default) refuses a sign-up without an open invitation to the address, and sends nothing', async () => {
    const app = await start();
    for (const body of [{}, { invitation: 'convite-que-nao-existe' }]) {
      const refused = await signUp(app, body);
      expectError(refused, 403, 'invitation_required');
      expect(refused.body.error.details[0]).toMatchObject({ location: 'body', field: 'invitation', rule: 'open_invitation' });
    }
    await sleep(SETTLE_MS);
    expect(await readMails(app)).toHaveLength(0);
    expect(await app.accounts.models.PendingSignUp.count()).toBe(0);
  });

  it('closed refuses every sign-up', async () => {
    const app = await startWith('closed');
    expectError(await signUp(app, {}), 403, 'signup_closed');
  });
});

describe('changeMyEmail', () => {
  const changeEmail = (app: TestApp, headers: Record<string, string>, body: Record<string, unknown>) => request(app.baseUrl, 'POST', '/api/auth/change_email/', headers, body);

  it('moves the account once the new address confirms it, telling the old one when asked and when done', async () => {
    const app = await start();
    const ana = await createUser(app, { username: 'ana.souza', email: 'ana.souza@palanque.app' });
    const asked = await changeEmail(app, ana.headers, { new_email: 'Ana.Souza@Exemplo.com.br', current_password: ana.password });
    expect(asked.status, asked.text).toBe(200);
    expect(asked.body.data).toEqual({ status: 'confirmation_sent', email: 'ana.souza@exemplo.com.br', link_expires_in_seconds: 172800 });

    const mails = await waitForMails(app, 2);
    const link = mails.find((mail) => recipients(mail.email).includes('ana.souza@exemplo.com.br'));
    const notice = mails.find((mail) => recipients(mail.email).includes('ana.souza@palanque.app'));
    expect(mails.map((mail) => recipients(mail.email))).toEqual([['ana.souza@exemplo.com.br'], ['ana.souza@palanque.app']]);
    expect(notice!.email.text).toContain('ana.souza@exemplo.com.br');
    // Nothing changes before the confirmation.
    expect((await app.accounts.users.byId(ana.user.id))!.email).toBe('ana.souza@palanque.app');

    const confirmed = await confirm(app, linkIn(link!).token);
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body.data).toEqual({ status: 'email_changed', username: 'ana.souza', email: 'ana.souza@exemplo.com.br' });
    expect((await app.accounts.users.byId(ana.user.id))!.email).toBe('ana.souza@exemplo.com.br');
    expect((await logIn(app, 'ana.souza@exemplo.com.br', ana.password)).status).toBe(200);
    expectError(await logIn(app, 'ana.souza@palanque.app', ana.password), 401, 'invalid_credentials');
    const done = (await waitForMails(app, 3))[2]!;
    expect(recipients(done.email)).toEqual(['ana.souza@palanque.app']);
    expect(done.email.subject).toBe('Palanque: your e-mail address was changed');
    expectError(await confirm(app, linkIn(link!).token), 400, 'invalid_token');
  });

  it('needs the current password (through the login lock) and another address', async () => {
    const app = await start();
    const ana = await createUser(app);
    const wrong = await changeEmail(app, ana.headers, { new_email: 'nova@exemplo.com.br', current_password: 'not the password at all' });
    expectError(wrong, 401, 'invalid_credentials');
    expect(wrong.body.error.details[0]).toMatchObject({ location: 'body', field: 'current_password' });
    const same = await changeEmail(app, ana.headers, { new_email: ana.user.email.toUpperCase(), current_password: ana.password });
    expectError(same, 422, 'validation_failed');
    expect(same.body.error.details[0]).toMatchObject({ field: 'new_email', rule: 'different_from_current' });
    expectError(await changeEmail(app, {}, { new_email: 'nova@exemplo.com.br', current_password: ana.password }), 401, 'unauthorized');
    await sleep(SETTLE_MS);
    expect(await readMails(app)).toHaveLength(0);
  });

  it("answers the same for another account's address, tells that account's owner, and changes nothing", async () => {
    const app = await start();
    const ana = await createUser(app);
    const bruno = await createUser(app, { email: 'bruno@exemplo.com.br' });
    const free = await changeEmail(app, ana.headers, { new_email: 'livre@exemplo.com.br', current_password: ana.password });
    const taken = await changeEmail(app, ana.headers, { new_email: 'Bruno@exemplo.com.br', current_password: ana.password });
    expect(taken.status).toBe(free.status);
    expect(taken.body.message).toBe(free.body.message);
    const mails = await waitForMails(app, 3);
    const toBruno = mails.filter((mail) => recipients(mail.email).includes('bruno@exemplo.com.br'));
    expect(toBruno.map((mail) => mail.email.subject)).toEqual(['Palanque: someone tried to use your address']);
    expect(toBruno[0]!.email.text).not.toMatch(/verify_email|token/);
    expect((await app.accounts.users.byId(bruno.user.id))!.email).toBe('bruno@exemplo.com.br');
    expect(await app.accounts.models.PendingEmailChange.count({ where: { email: 'bruno@exemplo.com.br' } })).toBe(0);
  });

  it('keeps only the newest request: an older link stops working', async () => {
    const app = await start();
    const ana = await createUser(app);
    await changeEmail(app, ana.headers, { new_email: 'primeira@exemplo.com.br', current_password: ana.password });
    const first = (await waitForMails(app, 2)).find((mail) => recipients(mail.email).includes('primeira@exemplo.com.br'));
    await changeEmail(app, ana.headers, { new_email: 'segunda@exemplo.com.br', current_password: ana.password });
    const second = (await waitForMails(app, 4)).find((mail) => recipients(mail.email).includes('segunda@exemplo.com.br'))!;
    expectError(await confirm(app, linkIn(first!).token), 400, 'invalid_token');
    expect((await confirm(app, linkIn(second).token)).body.data.email).toBe('segunda@exemplo.com.br');
  });
});
