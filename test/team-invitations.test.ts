/**
 * Team invitations (issue 21): addOperator invites an address, and the person joins only by accepting.
 * The invitee's side (listMyInvitations, acceptInvitation, declineInvitation), the managers' side
 * (listTeamInvitations, withdrawInvitation), expiry, the limit of open invitations, the mail (a note to an
 * account holder, a sign-up link to anyone else, which admits the sign-up under SIGNUP=invite), the audit
 * events, and the enumeration checks (the same answer and similar timing with or without an account).
 * On SQLite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import { describe, expect, it } from 'vitest';
import { createUser, type TestUser } from './helpers/accounts.js';
import { appsClosedAfterEach, type TestApp } from './helpers/app.js';
import { expectError, request, type Result } from './helpers/http.js';
import { confirmationTokenIn, readMails, recipients, SETTLE_MS, sleep, waitForMails } from './helpers/mail.js';
import { invite } from './helpers/teams.js';
import { INVITATIONS_KEPT_AFTER_EXPIRY_MS } from '../src/entities/invitations.js';

const start = appsClosedAfterEach();

const call = (app: TestApp, method: 'GET' | 'POST', path: string, caller?: TestUser, body?: unknown): Promise<Result> =>
  request(app.baseUrl, method, path, caller?.headers ?? {}, body);
const mine = (app: TestApp, caller: TestUser) => call(app, 'GET', '/api/operators/invitations/mine/', caller);
const accept = (app: TestApp, caller: TestUser, id: number) => call(app, 'POST', '/api/operators/invitations/accept/', caller, { id });
const decline = (app: TestApp, caller: TestUser, id: number) => call(app, 'POST', '/api/operators/invitations/decline/', caller, { id });
const withdraw = (app: TestApp, caller: TestUser, entityId: number, id: number) => call(app, 'POST', '/api/operators/invitations/withdraw/', caller, { entity_id: entityId, id });
const teamInvitations = (app: TestApp, caller: TestUser, entityId: number, state?: string) =>
  call(app, 'GET', `/api/operators/invitations/?entity_id=${entityId}${state ? `&state=${state}` : ''}`, caller);

async function newTeam(app: TestApp, nome = 'Maria da Silva Santos'): Promise<{ owner: TestUser; id: number }> {
  const owner = await createUser(app, { first_name: 'Carlos', last_name: 'Pereira' });
  return { owner, id: await app.entities.store.create('candidato', owner.user.id, { nome }) };
}

async function roleIn(app: TestApp, entityId: number, userId: number): Promise<string | undefined> {
  const row = (await app.entities.models.Member.findOne({ where: { entity_id: entityId, user_id: userId }, raw: true })) as { role: string } | null;
  return row?.role;
}

async function auditEvents(app: TestApp, event: string): Promise<Array<{ actor_id: number | null; user_id: number | null; details: Record<string, unknown> }>> {
  const rows = (await app.accounts.models.AuditEvent.findAll({ where: { event }, order: [['id', 'ASC']], raw: true })) as unknown as Array<{ actor_id: number | null; user_id: number | null; details: string }>;
  return rows.map((row) => ({ actor_id: row.actor_id, user_id: row.user_id, details: JSON.parse(row.details) }));
}

describe('an invitation to a user with an account', () => {
  it('is mailed, listed to the invitee, and accepted: the invitee joins with its role', async () => {
    const app = await start();
    const team = await newTeam(app);
    const joana = await createUser(app, { first_name: 'Joana', last_name: 'Lima' });
    const sent = await invite(app.baseUrl, team.owner, joana, team.id, 'operator');
    expect(sent.status, sent.text).toBe(201);

    const [mail] = await waitForMails(app, 1);
    expect(recipients(mail!.email)).toEqual([joana.user.email]);
    expect(mail!.email.subject).toBe('Palanque: invitation to the team of Maria da Silva Santos');
    expect(mail!.email.text).toContain('Carlos Pereira invited you');
    expect(mail!.email.text).toContain('Log in to Palanque');
    expect(mail!.email.text).not.toMatch(/signup|invitation=/);

    const listed = await mine(app, joana);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data).toEqual([sent.body.data]);
    expect(await roleIn(app, team.id, joana.user.id)).toBeUndefined();

    const accepted = await accept(app, joana, sent.body.data.id);
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.data).toMatchObject({ entity_id: team.id, user_id: joana.user.id, role: 'operator', display_name: 'Joana Lima' });
    expect(await roleIn(app, team.id, joana.user.id)).toBe('operator');
    // She now reads the entity; the invitation is closed, and a retry of the accept answers the same membership.
    expect((await call(app, 'GET', `/api/entidade/data/?id=${team.id}`, joana)).status).toBe(200);
    expect((await mine(app, joana)).body.data).toEqual([]);
    const retried = await accept(app, joana, sent.body.data.id);
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body.data.id).toBe(accepted.body.data.id);
    const history = await teamInvitations(app, team.owner, team.id);
    expect(history.body.data.results).toEqual([expect.objectContaining({ id: sent.body.data.id, state: 'accepted', answered_at: expect.any(String) })]);

    // The team's edit history: the invitation, then the member it brought in (newest first).
    const teamHistory = await call(app, 'GET', `/api/entidade/history/?id=${team.id}&subject=team`, team.owner);
    expect(teamHistory.body.data.results.map((row: { action: string; actor: { id: number } | null; changes: unknown }) => [row.action, row.actor?.id, row.changes])).toEqual([
      ['member_added', joana.user.id, [{ field: 'invitation', before: null, after: sent.body.data.id }, { field: 'role', before: null, after: 'operator' }]],
      ['invited', team.owner.user.id, [{ field: 'invitation', before: null, after: sent.body.data.id }, { field: 'role', before: null, after: 'operator' }]],
    ]);
    expect(teamHistory.text).not.toContain(joana.user.email);
    expect(await auditEvents(app, 'invitation_sent')).toEqual([{ actor_id: team.owner.user.id, user_id: null, details: { entity_id: team.id, invitation_id: sent.body.data.id, role: 'operator' } }]);
    expect(await auditEvents(app, 'invitation_accepted')).toEqual([expect.objectContaining({ actor_id: joana.user.id, user_id: joana.user.id })]);
    expect(await auditEvents(app, 'team_member_added')).toEqual([
      { actor_id: joana.user.id, user_id: joana.user.id, details: { entity_id: team.id, role: 'operator', invitation_id: sent.body.data.id, invited_by: team.owner.user.id } },
    ]);
  });

  it('can be declined: the invitee stays out, and can no longer accept it', async () => {
    const app = await start();
    const team = await newTeam(app);
    const joana = await createUser(app);
    const sent = await invite(app.baseUrl, team.owner, joana, team.id, 'viewer');
    const declined = await decline(app, joana, sent.body.data.id);
    expect(declined.status, declined.text).toBe(200);
    expect(declined.body.data).toMatchObject({ id: sent.body.data.id, state: 'declined', answered_at: expect.any(String) });
    expect((await decline(app, joana, sent.body.data.id)).body.data.state).toBe('declined');

    const late = await accept(app, joana, sent.body.data.id);
    expectError(late, 409, 'conflict');
    expect(late.body.error.details).toEqual([expect.objectContaining({ field: 'id', rule: 'open_invitation', message: 'is declined' })]);
    expect(await roleIn(app, team.id, joana.user.id)).toBeUndefined();
    expect((await teamInvitations(app, team.owner, team.id, 'declined')).body.data.results).toHaveLength(1);
    expect(await auditEvents(app, 'invitation_declined')).toHaveLength(1);
    // Declined, the address may be invited again.
    expect((await invite(app.baseUrl, team.owner, joana, team.id, 'viewer')).status).toBe(201);
  });

  it('expires: after its lifetime it can be neither accepted nor declined, and shows as expired', async () => {
    const app = await start({ invitations: { lifetimeMs: 300, maxOpenPerEntity: 20 } });
    const team = await newTeam(app);
    const joana = await createUser(app);
    const sent = await invite(app.baseUrl, team.owner, joana, team.id, 'operator');
    await sleep(400);
    expect((await mine(app, joana)).body.data).toEqual([]);
    const late = await accept(app, joana, sent.body.data.id);
    expectError(late, 409, 'conflict');
    expect(late.body.error.details[0]).toMatchObject({ rule: 'open_invitation', message: 'is expired' });
    expectError(await decline(app, joana, sent.body.data.id), 409, 'conflict');
    expect(await roleIn(app, team.id, joana.user.id)).toBeUndefined();
    const listed = await teamInvitations(app, team.owner, team.id, 'expired');
    expect(listed.body.data.results).toEqual([expect.objectContaining({ id: sent.body.data.id, state: 'expired', answered_at: null })]);
    expect((await teamInvitations(app, team.owner, team.id, 'pending')).body.data.results).toEqual([]);
    // An expired invitation does not block a new one.
    expect((await invite(app.baseUrl, team.owner, joana, team.id, 'operator')).status).toBe(201);
  });

  it('is purged by the housekeeping once it expired more than 90 days ago, answered or not; newer ones stay', async () => {
    const app = await start();
    const team = await newTeam(app);
    const [joana, pedro] = [await createUser(app), await createUser(app)];
    const old = await invite(app.baseUrl, team.owner, joana, team.id, 'operator');
    expect((await accept(app, joana, old.body.data.id)).status).toBe(200);
    const recent = await invite(app.baseUrl, team.owner, pedro, team.id, 'viewer');
    const expiredLongAgo = new Date(Date.now() - INVITATIONS_KEPT_AFTER_EXPIRY_MS - 60_000);
    await app.entities.models.Invitation.update({ expires_at: expiredLongAgo }, { where: { id: old.body.data.id } });
    expect(await app.entities.invitations.purgeExpired()).toBe(1);
    const left = (await app.entities.models.Invitation.findAll({ raw: true })) as unknown as Array<{ id: number }>;
    expect(left.map((row) => row.id)).toEqual([recent.body.data.id]);
    // The member it brought in stays.
    expect(await roleIn(app, team.id, joana.user.id)).toBe('operator');
  });

  it('is only the invitee’s: anyone else gets 404, and the one who sent it cannot accept it', async () => {
    const app = await start();
    const team = await newTeam(app);
    const joana = await createUser(app);
    const other = await createUser(app);
    const sent = await invite(app.baseUrl, team.owner, joana, team.id, 'operator');
    for (const caller of [other, team.owner]) {
      const refused = await accept(app, caller, sent.body.data.id);
      expectError(refused, 404, 'not_found');
      expect(refused.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'id', rule: 'existing_invitation' })]);
      expectError(await decline(app, caller, sent.body.data.id), 404, 'not_found');
      expect((await mine(app, caller)).body.data).toEqual([]);
    }
    expectError(await accept(app, joana, 2147483600), 404, 'not_found');
    expectError(await call(app, 'POST', '/api/operators/invitations/accept/', joana, {}), 422, 'validation_failed');
    expectError(await call(app, 'POST', '/api/operators/invitations/accept/', undefined, { id: sent.body.data.id }), 401, 'unauthorized');
    expect((await accept(app, joana, sent.body.data.id)).status).toBe(200);
  });

  it('follows the address: after an e-mail change the invitation to the old one is not the user’s', async () => {
    const app = await start();
    const team = await newTeam(app);
    const joana = await createUser(app);
    const sent = await invite(app.baseUrl, team.owner, joana, team.id, 'viewer');
    await app.accounts.models.User.update({ email: 'joana.nova@exemplo.com.br' }, { where: { id: joana.user.id } });
    expectError(await accept(app, joana, sent.body.data.id), 404, 'not_found');
  });
});

describe('managing invitations', () => {
  it('lets the owner and admins withdraw one; only the owner an invitation to admin', async () => {
    const app = await start();
    const team = await newTeam(app);
    const teamAdmin = await createUser(app);
    await app.entities.models.Member.create({ entity_id: team.id, user_id: teamAdmin.user.id, role: 'admin', added_at: new Date() });
    const joana = await createUser(app);
    const marcos = await createUser(app);
    const toOperator = await invite(app.baseUrl, team.owner, joana, team.id, 'operator');
    const toAdmin = await invite(app.baseUrl, team.owner, marcos, team.id, 'admin');

    expectError(await withdraw(app, teamAdmin, team.id, toAdmin.body.data.id), 403, 'forbidden');
    const withdrawn = await withdraw(app, teamAdmin, team.id, toOperator.body.data.id);
    expect(withdrawn.status, withdrawn.text).toBe(200);
    expect(withdrawn.body.data).toMatchObject({ state: 'withdrawn', answered_at: expect.any(String) });
    expect((await withdraw(app, teamAdmin, team.id, toOperator.body.data.id)).body.data.state).toBe('withdrawn');
    expect((await withdraw(app, team.owner, team.id, toAdmin.body.data.id)).status).toBe(200);

    const late = await accept(app, joana, toOperator.body.data.id);
    expectError(late, 409, 'conflict');
    expect(late.body.error.details[0].message).toBe('is withdrawn');
    expect(await auditEvents(app, 'invitation_withdrawn')).toHaveLength(2);
    const actions = (await call(app, 'GET', `/api/entidade/history/?id=${team.id}&subject=team`, team.owner)).body.data.results.map((row: { action: string }) => row.action);
    expect(actions).toEqual(['invitation_withdrawn', 'invitation_withdrawn', 'invited', 'invited']);
    // An accepted invitation cannot be withdrawn.
    const again = await invite(app.baseUrl, team.owner, joana, team.id, 'operator');
    await accept(app, joana, again.body.data.id);
    expectError(await withdraw(app, team.owner, team.id, again.body.data.id), 409, 'conflict');
  });

  it('answers 403 to operators and viewers, 404 to strangers and for another entity’s invitation', async () => {
    const app = await start();
    const team = await newTeam(app);
    const other = await newTeam(app, 'Outra Entidade');
    const operator = await createUser(app);
    await app.entities.models.Member.create({ entity_id: team.id, user_id: operator.user.id, role: 'operator', added_at: new Date() });
    const stranger = await createUser(app);
    const joana = await createUser(app);
    const sent = await invite(app.baseUrl, team.owner, joana, team.id, 'viewer');

    expectError(await teamInvitations(app, operator, team.id), 403, 'forbidden');
    expectError(await withdraw(app, operator, team.id, sent.body.data.id), 403, 'forbidden');
    expectError(await invite(app.baseUrl, operator, stranger, team.id, 'viewer'), 403, 'forbidden');
    expectError(await teamInvitations(app, stranger, team.id), 404, 'not_found');
    expectError(await withdraw(app, stranger, team.id, sent.body.data.id), 404, 'not_found');
    // The other entity's owner cannot reach this invitation through their own entity.
    const crossed = await withdraw(app, other.owner, other.id, sent.body.data.id);
    expectError(crossed, 404, 'not_found');
    expect(crossed.body.error.details[0]).toMatchObject({ field: 'id', rule: 'existing_invitation' });
    expectError(await call(app, 'GET', '/api/operators/invitations/', team.owner), 400, 'bad_request');
    expect((await teamInvitations(app, team.owner, team.id)).body.data.results).toEqual([expect.objectContaining({ state: 'pending' })]);
  });

  it('keeps at most TEAM_MAX_OPEN_INVITATIONS open per entity; a withdrawal frees a place', async () => {
    const app = await start({ invitations: { lifetimeMs: 7 * 86_400_000, maxOpenPerEntity: 2 } });
    const team = await newTeam(app);
    const address = (n: number) => ({ user: { email: `convite.${n}@exemplo.com.br` } }) as TestUser;
    const first = await invite(app.baseUrl, team.owner, address(1), team.id, 'viewer');
    expect((await invite(app.baseUrl, team.owner, address(2), team.id, 'viewer')).status).toBe(201);
    const third = await invite(app.baseUrl, team.owner, address(3), team.id, 'viewer');
    expectError(third, 409, 'conflict');
    expect(third.body.error.details).toEqual([expect.objectContaining({ field: 'entity_id', rule: 'max_open_invitations', value: team.id })]);
    const check = await call(app, 'GET', `/api/operators/check_operator_email/?email=convite.3%40exemplo.com.br&entity_id=${team.id}`, team.owner);
    expect(check.body.data).toMatchObject({ invited: false, can_invite: false });
    // A retry of an open invitation is no new invitation: it is answered even at the limit.
    expect((await invite(app.baseUrl, team.owner, address(1), team.id, 'viewer')).status).toBe(200);
    await withdraw(app, team.owner, team.id, first.body.data.id);
    expect((await invite(app.baseUrl, team.owner, address(3), team.id, 'viewer')).status).toBe(201);
  });

  it('counts parallel invitations honestly: never more open than the limit', async () => {
    const app = await start({ invitations: { lifetimeMs: 7 * 86_400_000, maxOpenPerEntity: 3 } });
    const team = await newTeam(app);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, n) => invite(app.baseUrl, team.owner, { user: { email: `paralelo.${n}@exemplo.com.br` } } as TestUser, team.id, 'viewer')),
    );
    expect(results.filter((result) => result.status === 201)).toHaveLength(3);
    expect(results.filter((result) => result.status === 409)).toHaveLength(5);
    expect(await app.entities.invitations.openCount(team.id)).toBe(3);
  });

  it('pages an entity’s invitations, newest first, keeping the filter in the links', async () => {
    const app = await start({ invitations: { lifetimeMs: 7 * 86_400_000, maxOpenPerEntity: 100 } });
    const team = await newTeam(app);
    for (let n = 0; n < 52; n += 1) await invite(app.baseUrl, team.owner, { user: { email: `pagina.${n}@exemplo.com.br` } } as TestUser, team.id, 'viewer');
    const first = await teamInvitations(app, team.owner, team.id, 'pending');
    expect(first.body.data).toMatchObject({ count: 52, total_pages: 2 });
    expect(first.body.data.results).toHaveLength(50);
    expect(first.body.data.results[0].email).toBe('pagina.51@exemplo.com.br');
    const next = new URL(first.body.data.links.next);
    expect(Object.fromEntries(next.searchParams)).toEqual({ entity_id: String(team.id), state: 'pending', page: '2' });
    const second = await call(app, 'GET', next.pathname + next.search, team.owner);
    expect(second.body.data.results.map((row: { email: string }) => row.email)).toEqual(['pagina.1@exemplo.com.br', 'pagina.0@exemplo.com.br']);
  });
});

describe('an invitation to an address without an account', () => {
  it('carries a sign-up link that admits that address under SIGNUP=invite; the new user then accepts', async () => {
    const app = await start({ accounts: { signUp: { mode: 'invite', linkLifetimeMs: 3600_000, resendIntervalMs: 60_000 } }, config: { frontendSignUpUrl: 'https://app.palanque.app/cadastro' } });
    const team = await newTeam(app);
    const email = 'rafael.costa@exemplo.com.br';
    const sent = await invite(app.baseUrl, team.owner, { user: { email } } as TestUser, team.id, 'operator');
    expect(sent.status, sent.text).toBe(201);
    const [mail] = await waitForMails(app, 1);
    expect(recipients(mail!.email)).toEqual([email]);
    const link = new URL(/(https:\/\/app\.palanque\.app\/cadastro\S+)/.exec(mail!.email.text ?? '')![1]!);
    expect(link.searchParams.get('email')).toBe(email);
    const token = link.searchParams.get('invitation')!;

    const signUp = (body: Record<string, unknown>) =>
      request(app.baseUrl, 'POST', '/api/auth/signup/', {}, { username: 'rafael.costa', email, password: 'ipê amarelo na praça da matriz', ...body });
    // Without it, with another address or a made-up token: refused.
    expectError(await signUp({}), 403, 'invitation_required');
    expectError(await signUp({ invitation: token, email: 'outra@exemplo.com.br' }), 403, 'invitation_required');
    expectError(await signUp({ invitation: 'inventado' }), 403, 'invitation_required');
    const admitted = await signUp({ invitation: token });
    expect(admitted.status, admitted.text).toBe(200);
    const verified = await request(app.baseUrl, 'GET', `/api/auth/verify_email/?token=${encodeURIComponent(await confirmationTokenIn(app.mailDir, email))}`);
    expect(verified.status, verified.text).toBe(200);

    const login = await request(app.baseUrl, 'POST', '/api/auth/login', {}, { username: 'rafael.costa', password: 'ipê amarelo na praça da matriz' });
    expect(login.status, login.text).toBe(200);
    const rafael = { headers: { Authorization: `Token ${login.body.data.token}` } } as unknown as TestUser;
    const open = await mine(app, rafael);
    expect(open.body.data).toEqual([expect.objectContaining({ id: sent.body.data.id, state: 'pending' })]);
    expect((await accept(app, rafael, sent.body.data.id)).status).toBe(200);
    expect((await call(app, 'GET', `/api/operators/get_operators/?id=${team.id}`, rafael)).body.data.map((member: { role: string }) => member.role)).toEqual(['owner', 'operator']);
  });

  it('stops admitting a sign-up once withdrawn', async () => {
    const app = await start({ accounts: { signUp: { mode: 'invite', linkLifetimeMs: 3600_000, resendIntervalMs: 60_000 } } });
    const team = await newTeam(app);
    const email = 'retirada@exemplo.com.br';
    const sent = await invite(app.baseUrl, team.owner, { user: { email } } as TestUser, team.id, 'viewer');
    const [mail] = await waitForMails(app, 1);
    // Without FRONTEND_SIGNUP_URL the mail gives the token for signUp's `invitation`.
    const token = /"invitation": "([^"]+)"/.exec(mail!.email.text ?? '')![1]!;
    await withdraw(app, team.owner, team.id, sent.body.data.id);
    const refused = await request(app.baseUrl, 'POST', '/api/auth/signup/', {}, { username: 'retirada', email, password: 'ipê amarelo na praça da matriz', invitation: token });
    expectError(refused, 403, 'invitation_required');
  });

  it('mails nobody at a deactivated account, with the same answer', async () => {
    const app = await start();
    const team = await newTeam(app);
    const inactive = await createUser(app, { is_active: false });
    expect((await invite(app.baseUrl, team.owner, inactive, team.id, 'viewer')).status).toBe(201);
    await sleep(SETTLE_MS);
    expect(await readMails(app)).toHaveLength(0);
  });

  it('takes as long for an address with an account as for one without', async () => {
    const app = await start({ invitations: { lifetimeMs: 7 * 86_400_000, maxOpenPerEntity: 100 } });
    const team = await newTeam(app);
    const timeOf = async (email: string) => {
      const started = performance.now();
      expect((await invite(app.baseUrl, team.owner, { user: { email } } as TestUser, team.id, 'viewer')).status).toBe(201);
      const elapsed = performance.now() - started;
      await sleep(30); // the mail after the answer is written before the next one
      return elapsed;
    };
    const accounts: string[] = [];
    for (let n = 0; n < 10; n += 1) accounts.push((await createUser(app)).user.email);
    const free: number[] = [];
    const taken: number[] = [];
    for (let round = 0; round < 10; round += 1) {
      free.push(await timeOf(`sem.conta.${round}@exemplo.com.br`));
      taken.push(await timeOf(accounts[round]!));
    }
    // Load from other work (CI runs test files side by side) only ever adds time, to either side in any
    // round. So each side's typical answer (its median) is held against the other side's fastest: lenient
    // to load, yet an answer that did the account's work first (a mail, a lookup more) on one side only
    // would make that side several times slower than the other's fastest.
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
    const shown = `with an account ${taken.map(Math.round)} ms, without ${free.map(Math.round)} ms`;
    expect(median(taken), shown).toBeGreaterThanOrEqual(0.5 * Math.min(...free));
    expect(median(free), shown).toBeGreaterThanOrEqual(0.5 * Math.min(...taken));
  });
});
