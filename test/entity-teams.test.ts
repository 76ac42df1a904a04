/**
 * Teams of entities through the real app and the contract validator (responses are validated too): who
 * is in a team (listOperators), the invite form's e-mail check (checkOperatorEmail), inviting and removing
 * members by role (addOperator, removeOperator; invitations in detail: team-invitations.test.ts), what each role may do with the entity, guardianship
 * links between the caller's entities (manageGuardianship), and teammates as chat contacts and visible
 * profiles (listChatContacts, getUser).
 * One app per file. Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';
import { joinTeam } from './helpers/teams.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
type Role = 'admin' | 'operator' | 'viewer';

let app: TestApp;
const call = (method: 'GET' | 'POST', path: string, headers: Record<string, string> = {}, body?: unknown) =>
  request(app.baseUrl, method, path, headers, body);
let platformAdmin: TestUser;

const get = (path: string, headers: Record<string, string> = {}) => call('GET', path, headers);
const post = (path: string, headers: Record<string, string>, body: unknown) => call('POST', path, headers, body);

interface Team {
  owner: TestUser;
  id: number;
}

/** A new owner with a new entity (through the store, for speed). */
async function newTeam(nome = 'Maria Santos', tp: 'candidato' | 'concorrente' | 'partido' = 'candidato', owner?: TestUser): Promise<Team> {
  const who = owner ?? (await createUser(app));
  return { owner: who, id: await app.entities.store.create(tp, who.user.id, { nome }) };
}

/** Puts a user in a team directly (the tests of addOperator go through HTTP). */
async function join(entityId: number, user: TestUser, role: Role): Promise<void> {
  await app.entities.models.Member.create({ entity_id: entityId, user_id: user.user.id, role, added_at: new Date() });
}

async function memberRows(entityId: number): Promise<Array<{ user_id: number; role: string }>> {
  const rows = await app.sequelize.query<{ user_id: number; role: string }>('SELECT user_id, role FROM entity_members WHERE entity_id = :entityId ORDER BY id', {
    replacements: { entityId },
    type: QueryTypes.SELECT,
  });
  return rows.map((row) => ({ user_id: Number(row.user_id), role: row.role }));
}

const displayNameOf = (user: TestUser) => `${user.user.first_name} ${user.user.last_name}`.trim();

const addOperator = (caller: TestUser, body: Json) => post('/api/operators/add_operator/', caller.headers, body);
const removeOperator = (caller: TestUser, body: Json) => post('/api/operators/remove_operator/', caller.headers, body);
const checkEmail = (caller: TestUser, email: string, entityId: number) =>
  get(`/api/operators/check_operator_email/?${new URLSearchParams({ email, entity_id: String(entityId) })}`, caller.headers);

beforeAll(async () => {
  app = await startTestApp();
  platformAdmin = await createAdmin(app, { first_name: 'Ada', last_name: 'Plataforma' });
});

afterAll(async () => {
  await app?.close();
});

describe('GET /api/operators/get_operators/ (listOperators)', () => {
  let team: Team;
  let ana: TestUser;
  let bruno: TestUser;
  let caio: TestUser;

  beforeAll(async () => {
    // The owner's name sorts last: the owner still comes first.
    team = await newTeam('Entidade da equipe', 'candidato', await createUser(app, { first_name: 'Zé', last_name: 'Último' }));
    caio = await createUser(app, { first_name: 'Caio', last_name: 'Viewer' });
    bruno = await createUser(app, { first_name: 'Bruno', last_name: 'Operador' });
    ana = await createUser(app, { first_name: 'Ana', last_name: 'Admin' });
    await join(team.id, caio, 'viewer');
    await join(team.id, bruno, 'operator');
    await join(team.id, ana, 'admin');
  });

  it('lists the team, owner first and then by name, with every Operator field', async () => {
    const result = await get(`/api/operators/get_operators/?id=${team.id}`, team.owner.headers);
    expect(result.status, result.text).toBe(200);
    expect(result.body).toMatchObject({ success: true, request_id: result.headers.get('x-request-id') });
    expect(result.body.data.map((member: Json) => [member.user_id, member.role])).toEqual([
      [team.owner.user.id, 'owner'],
      [ana.user.id, 'admin'],
      [bruno.user.id, 'operator'],
      [caio.user.id, 'viewer'],
    ]);
    expect(result.body.data[2]).toEqual({
      id: expect.any(Number),
      entity_id: team.id,
      user_id: bruno.user.id,
      username: bruno.user.username,
      display_name: 'Bruno Operador',
      // Bruno has not shared his contact with the team.
      email: null,
      role: 'operator',
      added_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
  });

  it('shows a member\'s e-mail only to themself and platform admins, until they share it with the team', async () => {
    const emailsSeenBy = async (reader: TestUser) =>
      Object.fromEntries((await get(`/api/operators/get_operators/?id=${team.id}`, reader.headers)).body.data.map((member: Json) => [member.user_id, member.email]));
    expect(await emailsSeenBy(caio)).toEqual({ [team.owner.user.id]: null, [ana.user.id]: null, [bruno.user.id]: null, [caio.user.id]: caio.user.email });
    expect(Object.values(await emailsSeenBy(platformAdmin))).toEqual(expect.arrayContaining([team.owner.user.email, ana.user.email, bruno.user.email, caio.user.email]));

    const shared = await post('/api/auth/profile/', bruno.headers, { contact_visible_to_team: true });
    expect(shared.status, shared.text).toBe(200);
    expect(shared.body.data.contact_visible_to_team).toBe(true);
    expect((await emailsSeenBy(caio))[bruno.user.id]).toBe(bruno.user.email);
    expect((await emailsSeenBy(team.owner))[bruno.user.id]).toBe(bruno.user.email);
    await post('/api/auth/profile/', bruno.headers, { contact_visible_to_team: false });
    expect((await emailsSeenBy(caio))[bruno.user.id]).toBeNull();
  });

  it('filters by role with tp', async () => {
    for (const [role, user] of [['owner', team.owner], ['admin', ana], ['operator', bruno], ['viewer', caio]] as const) {
      const result = await get(`/api/operators/get_operators/?id=${team.id}&tp=${role}`, team.owner.headers);
      expect(result.status, result.text).toBe(200);
      expect(result.body.data.map((member: Json) => member.user_id)).toEqual([user.user.id]);
    }
  });

  it('lets any member read it, the viewer included, and a platform admin', async () => {
    // The same team for every reader; only the e-mails they may see differ (the next test).
    const withoutEmails = (members: Json[]) => members.map(({ email: _email, ...member }) => member);
    const full = withoutEmails((await get(`/api/operators/get_operators/?id=${team.id}`, team.owner.headers)).body.data);
    for (const reader of [caio, bruno, ana, platformAdmin]) {
      const result = await get(`/api/operators/get_operators/?id=${team.id}`, reader.headers);
      expect(result.status, result.text).toBe(200);
      expect(withoutEmails(result.body.data)).toEqual(full);
    }
  });

  it('answers a stranger 404, as for an entity that does not exist', async () => {
    const stranger = await createUser(app);
    const hidden = await get(`/api/operators/get_operators/?id=${team.id}`, stranger.headers);
    expectError(hidden, 404, 'not_found');
    expect(hidden.body.error.details).toEqual([expect.objectContaining({ location: 'query', field: 'id' })]);
    expect(hidden.text).not.toContain(ana.user.email);
    expectError(await get('/api/operators/get_operators/?id=2147483600', team.owner.headers), 404, 'not_found');
  });

  it('answers 400 without an id or for an unknown role, and 401 without a key', async () => {
    const missing = await get('/api/operators/get_operators/', team.owner.headers);
    expectError(missing, 400, 'bad_request');
    expect(missing.body.error.details).toContainEqual(expect.objectContaining({ location: 'query', field: 'id' }));
    const badRole = await get(`/api/operators/get_operators/?id=${team.id}&tp=chefe`, team.owner.headers);
    expectError(badRole, 400, 'bad_request');
    expect(badRole.body.error.details).toContainEqual(expect.objectContaining({ location: 'query', field: 'tp' }));
    expectError(await get(`/api/operators/get_operators/?id=abc`, team.owner.headers), 400, 'bad_request');
    expectError(await get(`/api/operators/get_operators/?id=${team.id}`), 401, 'unauthorized');
  });
});

describe('GET /api/operators/check_operator_email/ (checkOperatorEmail)', () => {
  let team: Team;
  let teamAdmin: TestUser;
  let operator: TestUser;
  let viewer: TestUser;
  let outsider: TestUser;

  beforeAll(async () => {
    team = await newTeam();
    teamAdmin = await createUser(app);
    operator = await createUser(app);
    viewer = await createUser(app);
    outsider = await createUser(app);
    await join(team.id, teamAdmin, 'admin');
    await join(team.id, operator, 'operator');
    await join(team.id, viewer, 'viewer');
  });

  it('tells the owner whether the address is in the team or invited, never whether it has an account', async () => {
    const nobody = { user_exists: null, already_in_team: false, role: null, invited: false, invitation: null, can_invite: true };
    const unknown = await checkEmail(team.owner, 'ninguem@exemplo.com.br', team.id);
    expect(unknown.status, unknown.text).toBe(200);
    expect(unknown.body.data).toEqual({ email: 'ninguem@exemplo.com.br', ...nobody });
    // A user outside the team is answered exactly as an address without an account.
    const invitable = await checkEmail(team.owner, outsider.user.email, team.id);
    expect(invitable.body.data).toEqual({ email: outsider.user.email, ...nobody });

    const member = await checkEmail(team.owner, operator.user.email, team.id);
    expect(member.body.data).toEqual({ ...nobody, email: operator.user.email, already_in_team: true, role: 'operator', can_invite: false });

    const self = await checkEmail(team.owner, team.owner.user.email, team.id);
    expect(self.body.data).toMatchObject({ already_in_team: true, role: 'owner', can_invite: false });

    // The e-mail is compared as normalised.
    const shouting = await checkEmail(team.owner, viewer.user.email.toUpperCase(), team.id);
    expect(shouting.body.data).toMatchObject({ email: viewer.user.email, already_in_team: true, role: 'viewer' });
  });

  it('shows an open invitation, which then cannot be sent again', async () => {
    const invitee = 'convidada.check@exemplo.com.br';
    const sent = await addOperator(team.owner, { entity_id: team.id, email: invitee, role: 'viewer' });
    expect(sent.status, sent.text).toBe(201);
    const check = await checkEmail(team.owner, invitee, team.id);
    expect(check.body.data).toEqual({
      email: invitee,
      user_exists: null,
      already_in_team: false,
      role: null,
      invited: true,
      invitation: { id: sent.body.data.id, role: 'viewer', expires_at: sent.body.data.expires_at },
      can_invite: false,
    });
  });

  it('tells a platform admin whether an active account has the address; a team admin gets null', async () => {
    const inactive = await createUser(app, { is_active: false });
    const expected: Array<[string, boolean]> = [
      [operator.user.email, true],
      [outsider.user.email, true],
      [inactive.user.email, false],
      ['ninguem@exemplo.com.br', false],
    ];
    for (const [email, exists] of expected) {
      expect((await checkEmail(platformAdmin, email, team.id)).body.data.user_exists).toBe(exists);
      expect((await checkEmail(teamAdmin, email, team.id)).body.data.user_exists).toBeNull();
    }
    const result = await checkEmail(teamAdmin, operator.user.email, team.id);
    expect(result.body.data).toMatchObject({ already_in_team: true, role: 'operator' });
  });

  it('answers 403 to an operator and a viewer, 404 to a stranger', async () => {
    expectError(await checkEmail(operator, outsider.user.email, team.id), 403, 'forbidden');
    expectError(await checkEmail(viewer, outsider.user.email, team.id), 403, 'forbidden');
    const hidden = await checkEmail(outsider, operator.user.email, team.id);
    expectError(hidden, 404, 'not_found');
    expect(hidden.body.error.details).toEqual([expect.objectContaining({ location: 'query', field: 'entity_id' })]);
    expect(hidden.text).not.toContain('operator');
  });

  it('answers 400 when a parameter is missing or malformed, and 401 without a key', async () => {
    const noEmail = await get(`/api/operators/check_operator_email/?entity_id=${team.id}`, team.owner.headers);
    expectError(noEmail, 400, 'bad_request');
    expect(noEmail.body.error.details).toContainEqual(expect.objectContaining({ location: 'query', field: 'email' }));
    const noEntity = await get(`/api/operators/check_operator_email/?email=${encodeURIComponent(outsider.user.email)}`, team.owner.headers);
    expectError(noEntity, 400, 'bad_request');
    expect(noEntity.body.error.details).toContainEqual(expect.objectContaining({ location: 'query', field: 'entity_id' }));
    expectError(await get('/api/operators/check_operator_email/', team.owner.headers), 400, 'bad_request');
    const badEmail = await checkEmail(team.owner, 'not-an-email', team.id);
    expectError(badEmail, 400, 'bad_request');
    expect(badEmail.body.error.details).toContainEqual(expect.objectContaining({ location: 'query', field: 'email' }));
    expectError(await get(`/api/operators/check_operator_email/?email=a%40b.com&entity_id=${team.id}`), 401, 'unauthorized');
  });
});

describe('POST /api/operators/add_operator/ (addOperator: an invitation)', () => {
  it('lets the owner invite a viewer, an operator and an admin (201); each joins only by accepting', async () => {
    const team = await newTeam();
    const invited: Array<[TestUser, Role]> = [
      [await createUser(app), 'viewer'],
      [await createUser(app), 'operator'],
      [await createUser(app), 'admin'],
    ];
    for (const [user, role] of invited) {
      const result = await addOperator(team.owner, { entity_id: team.id, email: user.user.email, role });
      expect(result.status, result.text).toBe(201);
      expect(result.body).toMatchObject({ success: true, request_id: result.headers.get('x-request-id') });
      expect(result.body.data).toEqual({
        id: expect.any(Number),
        entity_id: team.id,
        entity_name: 'Maria Santos',
        email: user.user.email,
        role,
        state: 'pending',
        invited_by: { id: team.owner.user.id, display_name: displayNameOf(team.owner) },
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
        expires_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
        answered_at: null,
      });
    }
    // Nobody is in the team before accepting.
    expect(await memberRows(team.id)).toEqual([{ user_id: team.owner.user.id, role: 'owner' }]);
    for (const [user] of invited) {
      const mine = await get('/api/operators/invitations/mine/', user.headers);
      expect(mine.body.data).toHaveLength(1);
      const accepted = await post('/api/operators/invitations/accept/', user.headers, { id: mine.body.data[0].id });
      expect(accepted.status, accepted.text).toBe(200);
    }
    expect(await memberRows(team.id)).toEqual([
      { user_id: team.owner.user.id, role: 'owner' },
      ...invited.map(([user, role]) => ({ user_id: user.user.id, role })),
    ]);
    const listed = await get(`/api/operators/get_operators/?id=${team.id}`, team.owner.headers);
    expect(listed.body.data).toHaveLength(4);
  });

  it('answers 200 with the same invitation for the same address and role again, 409 for another role or a member', async () => {
    const team = await newTeam();
    const joana = await createUser(app);
    const first = await addOperator(team.owner, { entity_id: team.id, email: joana.user.email, role: 'operator' });
    expect(first.status, first.text).toBe(201);
    const again = await addOperator(team.owner, { entity_id: team.id, email: joana.user.email.toUpperCase(), role: 'operator' });
    expect(again.status, again.text).toBe(200);
    expect(again.body.data).toEqual(first.body.data);

    const otherRole = await addOperator(team.owner, { entity_id: team.id, email: joana.user.email, role: 'viewer' });
    expectError(otherRole, 409, 'conflict');
    expect(otherRole.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'email', rule: 'no_open_invitation' })]);

    // The owner, and anyone in the team, cannot be invited: they already have a role.
    const owner = await addOperator(team.owner, { entity_id: team.id, email: team.owner.user.email, role: 'admin' });
    expectError(owner, 409, 'conflict');
    expect(owner.body.error.details).toEqual([expect.objectContaining({ rule: 'not_in_team' })]);
  });

  it('answers the same for an address without an account, an inactive account and an active one', async () => {
    const team = await newTeam();
    const inactive = await createUser(app, { is_active: false });
    const active = await createUser(app);
    const shapes = [];
    for (const email of ['ninguem.convidado@exemplo.com.br', inactive.user.email, active.user.email]) {
      const result = await addOperator(team.owner, { entity_id: team.id, email, role: 'viewer' });
      expect(result.status, result.text).toBe(201);
      const { id: _id, email: _email, created_at: _created, expires_at: _expires, ...rest } = result.body.data;
      shapes.push([Object.keys(result.body.data).sort(), rest, result.body.message.replace(email, '<address>')]);
    }
    expect(shapes[1]).toEqual(shapes[0]);
    expect(shapes[2]).toEqual(shapes[0]);
    expect(await memberRows(team.id)).toHaveLength(1);
  });

  it('lets a team admin add an operator but not another admin (403)', async () => {
    const team = await newTeam();
    const teamAdmin = await createUser(app);
    await join(team.id, teamAdmin, 'admin');
    const operator = await createUser(app);
    const added = await addOperator(teamAdmin, { entity_id: team.id, email: operator.user.email, role: 'operator' });
    expect(added.status, added.text).toBe(201);
    const wouldBeAdmin = await createUser(app);
    expectError(await addOperator(teamAdmin, { entity_id: team.id, email: wouldBeAdmin.user.email, role: 'admin' }), 403, 'forbidden');
    expect((await get(`/api/operators/invitations/?entity_id=${team.id}`, team.owner.headers)).body.data.results.map((row: Json) => row.email)).toEqual([operator.user.email]);
  });

  it('lets a platform admin outside the team add an admin (201)', async () => {
    const team = await newTeam();
    const user = await createUser(app);
    const result = await addOperator(platformAdmin, { entity_id: team.id, email: user.user.email, role: 'admin' });
    expect(result.status, result.text).toBe(201);
    expect(result.body.data.role).toBe('admin');
  });

  it('answers 403 to an operator and a viewer, 404 to a stranger', async () => {
    const team = await newTeam();
    const operator = await createUser(app);
    const viewer = await createUser(app);
    await join(team.id, operator, 'operator');
    await join(team.id, viewer, 'viewer');
    const candidate = await createUser(app);
    for (const caller of [operator, viewer]) {
      expectError(await addOperator(caller, { entity_id: team.id, email: candidate.user.email, role: 'viewer' }), 403, 'forbidden');
    }
    const stranger = await createUser(app);
    const hidden = await addOperator(stranger, { entity_id: team.id, email: stranger.user.email, role: 'viewer' });
    expectError(hidden, 404, 'not_found');
    expect(hidden.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'entity_id' })]);
    expectError(await addOperator(team.owner, { entity_id: 2147483600, email: candidate.user.email, role: 'viewer' }), 404, 'not_found');
    expect(await memberRows(team.id)).toHaveLength(3);
    expect(await app.entities.invitations.openCount(team.id)).toBe(0);
  });

  it('answers 422 for role owner, a missing field or a malformed e-mail, and 401 without a key', async () => {
    const team = await newTeam();
    const user = await createUser(app);
    const owner = await addOperator(team.owner, { entity_id: team.id, email: user.user.email, role: 'owner' });
    expectError(owner, 422, 'validation_failed');
    expect(owner.body.error.details).toContainEqual(expect.objectContaining({ location: 'body', field: 'role' }));
    for (const field of ['entity_id', 'email', 'role']) {
      const body: Json = { entity_id: team.id, email: user.user.email, role: 'viewer' };
      delete body[field];
      const missing = await addOperator(team.owner, body);
      expectError(missing, 422, 'validation_failed');
      expect(missing.body.error.details).toContainEqual(expect.objectContaining({ location: 'body', field }));
    }
    expectError(await addOperator(team.owner, { entity_id: team.id, email: 'nao-e-email', role: 'viewer' }), 422, 'validation_failed');
    expect(await app.entities.invitations.openCount(team.id)).toBe(0);
    expectError(await post('/api/operators/add_operator/', {}, { entity_id: team.id, email: user.user.email, role: 'viewer' }), 401, 'unauthorized');
  });
});

describe('POST /api/operators/remove_operator/ (removeOperator)', () => {
  it('lets the owner remove a member (200), who then loses access to the entity', async () => {
    const team = await newTeam('Entidade que some');
    const operator = await createUser(app);
    await join(team.id, operator, 'operator');
    expect((await get(`/api/entidade/data/?id=${team.id}`, operator.headers)).status).toBe(200);

    const result = await removeOperator(team.owner, { entity_id: team.id, user_id: operator.user.id });
    expect(result.status, result.text).toBe(200);
    expect(result.body).toEqual({ success: true, data: { removed: true }, message: expect.any(String), request_id: result.headers.get('x-request-id') });
    expect(await memberRows(team.id)).toEqual([{ user_id: team.owner.user.id, role: 'owner' }]);

    expectError(await get(`/api/entidade/data/?id=${team.id}`, operator.headers), 404, 'not_found');
    expectError(await post('/api/entidade/add/', operator.headers, { id: team.id, nome: 'Ainda posso?' }), 404, 'not_found');
    const listed = await get('/api/entidade/', operator.headers);
    expect(listed.body.data.results).toEqual([]);

    // Removing again: the user is no longer in the team.
    const again = await removeOperator(team.owner, { entity_id: team.id, user_id: operator.user.id });
    expectError(again, 404, 'not_found');
    expect(again.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'user_id' })]);
  });

  it('lets any member leave by removing themself, a viewer included', async () => {
    const team = await newTeam();
    const viewer = await createUser(app);
    const teamAdmin = await createUser(app);
    await join(team.id, viewer, 'viewer');
    await join(team.id, teamAdmin, 'admin');
    for (const leaving of [viewer, teamAdmin]) {
      const result = await removeOperator(leaving, { entity_id: team.id, user_id: leaving.user.id });
      expect(result.status, result.text).toBe(200);
      expectError(await get(`/api/entidade/data/?id=${team.id}`, leaving.headers), 404, 'not_found');
    }
    expect(await memberRows(team.id)).toEqual([{ user_id: team.owner.user.id, role: 'owner' }]);
  });

  it('lets a team admin remove an operator but not another admin (403); the owner may', async () => {
    const team = await newTeam();
    const adminA = await createUser(app);
    const adminB = await createUser(app);
    const operator = await createUser(app);
    await join(team.id, adminA, 'admin');
    await join(team.id, adminB, 'admin');
    await join(team.id, operator, 'operator');

    expect((await removeOperator(adminA, { entity_id: team.id, user_id: operator.user.id })).status).toBe(200);
    expectError(await removeOperator(adminA, { entity_id: team.id, user_id: adminB.user.id }), 403, 'forbidden');
    expect((await memberRows(team.id)).map((row) => row.user_id)).toContain(adminB.user.id);
    const byOwner = await removeOperator(team.owner, { entity_id: team.id, user_id: adminB.user.id });
    expect(byOwner.status, byOwner.text).toBe(200);
    expect(await memberRows(team.id)).toEqual([
      { user_id: team.owner.user.id, role: 'owner' },
      { user_id: adminA.user.id, role: 'admin' },
    ]);
  });

  it('answers 403 to an operator or viewer removing someone else', async () => {
    const team = await newTeam();
    const operator = await createUser(app);
    const viewer = await createUser(app);
    await join(team.id, operator, 'operator');
    await join(team.id, viewer, 'viewer');
    expectError(await removeOperator(operator, { entity_id: team.id, user_id: viewer.user.id }), 403, 'forbidden');
    expectError(await removeOperator(viewer, { entity_id: team.id, user_id: operator.user.id }), 403, 'forbidden');
    expect(await memberRows(team.id)).toHaveLength(3);
  });

  it('never removes the owner (409), whoever asks', async () => {
    const team = await newTeam();
    const teamAdmin = await createUser(app);
    await join(team.id, teamAdmin, 'admin');
    for (const caller of [team.owner, teamAdmin, platformAdmin]) {
      const result = await removeOperator(caller, { entity_id: team.id, user_id: team.owner.user.id });
      expectError(result, 409, 'conflict');
      expect(result.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'user_id' })]);
    }
    expect(await memberRows(team.id)).toHaveLength(2);
  });

  it('answers 404 for a user not in the team and for a stranger; 422 for a missing field; 401 without a key', async () => {
    const team = await newTeam();
    const member = await createUser(app);
    await join(team.id, member, 'viewer');
    const notMember = await createUser(app);
    const absent = await removeOperator(team.owner, { entity_id: team.id, user_id: notMember.user.id });
    expectError(absent, 404, 'not_found');
    expect(absent.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'user_id' })]);

    // A stranger learns nothing: 404 on the entity, whether they name a member or themself.
    for (const userId of [member.user.id, notMember.user.id]) {
      const hidden = await removeOperator(notMember, { entity_id: team.id, user_id: userId });
      expectError(hidden, 404, 'not_found');
      expect(hidden.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'entity_id' })]);
    }
    expect(await memberRows(team.id)).toHaveLength(2);

    const missing = await removeOperator(team.owner, { entity_id: team.id });
    expectError(missing, 422, 'validation_failed');
    expect(missing.body.error.details).toContainEqual(expect.objectContaining({ location: 'body', field: 'user_id' }));
    expectError(await post('/api/operators/remove_operator/', {}, { entity_id: team.id, user_id: member.user.id }), 401, 'unauthorized');
  });
});

describe('what each role may do with the entity', () => {
  it('lets an operator and a team admin edit the entity (200), a viewer only read it (403 on edit)', async () => {
    const team = await newTeam('Nome original');
    const operator = await createUser(app);
    const teamAdmin = await createUser(app);
    const viewer = await createUser(app);
    await join(team.id, operator, 'operator');
    await join(team.id, teamAdmin, 'admin');
    await join(team.id, viewer, 'viewer');

    const byOperator = await post('/api/entidade/add/', operator.headers, { id: team.id, nome: 'Editado pelo operador' });
    expect(byOperator.status, byOperator.text).toBe(200);
    expect(byOperator.body.data.nome).toBe('Editado pelo operador');
    const byAdmin = await post('/api/entidade/add/', teamAdmin.headers, { id: team.id, nome: 'Editado pelo admin' });
    expect(byAdmin.status, byAdmin.text).toBe(200);

    expectError(await post('/api/entidade/add/', viewer.headers, { id: team.id, nome: 'Editado pela leitora' }), 403, 'forbidden');
    const read = await get(`/api/entidade/data/?id=${team.id}`, viewer.headers);
    expect(read.status, read.text).toBe(200);
    expect(read.body.data.nome).toBe('Editado pelo admin');
  });

  it('lets a platform admin outside the team edit the entity and manage its team', async () => {
    const team = await newTeam('Sob o admin');
    const edited = await post('/api/entidade/add/', platformAdmin.headers, { id: team.id, nome: 'Editado pela plataforma' });
    expect(edited.status, edited.text).toBe(200);
    const user = await createUser(app);
    await joinTeam(app.baseUrl, platformAdmin, user, team.id, 'operator');
    expect((await removeOperator(platformAdmin, { entity_id: team.id, user_id: user.user.id })).status).toBe(200);
  });

  // Platform admins "are treated as team admins of every entity" (src/entities/teams.ts): joining a team
  // with a lesser role must not take those rights away.
  it('keeps the platform-admin rights of an admin who is also a viewer of the team', async () => {
    const team = await newTeam('Admin como leitor');
    const admin = await createAdmin(app);
    await join(team.id, admin, 'viewer');
    const edited = await post('/api/entidade/add/', admin.headers, { id: team.id, nome: 'Editado pela plataforma' });
    expect(edited.status, edited.text).toBe(200);
    const user = await createUser(app);
    const added = await addOperator(admin, { entity_id: team.id, email: user.user.email, role: 'operator' });
    expect(added.status, added.text).toBe(201);
  });
});

describe('GET /api/entidade/tutela/ (manageGuardianship)', () => {
  let team: Team;
  let competitorId: number;
  let partyId: number;
  const tutela = (caller: TestUser, query = '') => get(`/api/entidade/tutela/${query ? `?${query}` : ''}`, caller.headers);

  async function linkRows(): Promise<Array<{ tutor_id: number; ward_id: number }>> {
    const rows = await app.sequelize.query<{ tutor_id: number; ward_id: number }>(
      'SELECT tutor_id, ward_id FROM guardianship_links WHERE tutor_id = :tutor ORDER BY id',
      { replacements: { tutor: team.id }, type: QueryTypes.SELECT },
    );
    return rows.map((row) => ({ tutor_id: Number(row.tutor_id), ward_id: Number(row.ward_id) }));
  }

  beforeAll(async () => {
    team = await newTeam('Maria da Silva Santos');
    competitorId = await app.entities.store.create('concorrente', team.owner.user.id, { nome: 'João Carlos Ferreira' });
    partyId = await app.entities.store.create('partido', team.owner.user.id, { nome: 'Partido Exemplo Nacional' });
  });

  it('lists no links at first', async () => {
    const result = await tutela(team.owner);
    expect(result.status, result.text).toBe(200);
    expect(result.body).toEqual({ success: true, data: [], message: expect.any(String), request_id: result.headers.get('x-request-id') });
  });

  it('adds a link idempotently and answers the links afterwards', async () => {
    const first = await tutela(team.owner, `tutor=${team.id}&ward=${competitorId}&action=add`);
    expect(first.status, first.text).toBe(200);
    expect(first.body.data).toEqual([
      {
        id: expect.any(Number),
        tutor_id: team.id,
        tutor_nome: 'Maria da Silva Santos',
        ward_id: competitorId,
        ward_nome: 'João Carlos Ferreira',
        ward_tp: 'concorrente',
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      },
    ]);
    const second = await tutela(team.owner, `tutor=${team.id}&ward=${competitorId}&action=add`);
    expect(second.status, second.text).toBe(200);
    expect(second.body.data).toEqual(first.body.data);
    expect(await linkRows()).toEqual([{ tutor_id: team.id, ward_id: competitorId }]);

    const party = await tutela(team.owner, `tutor=${team.id}&ward=${partyId}&action=add`);
    expect(party.body.data.map((link: Json) => [link.ward_id, link.ward_tp])).toEqual([
      [competitorId, 'concorrente'],
      [partyId, 'partido'],
    ]);
    const listed = await tutela(team.owner);
    expect(listed.body.data).toEqual(party.body.data);
  });

  it('removes a link, and removing it again is fine', async () => {
    await tutela(team.owner, `tutor=${team.id}&ward=${competitorId}&action=add`);
    for (let i = 0; i < 2; i += 1) {
      const removed = await tutela(team.owner, `tutor=${team.id}&ward=${competitorId}&action=remove`);
      expect(removed.status, removed.text).toBe(200);
      expect(removed.body.data.map((link: Json) => link.ward_id)).not.toContain(competitorId);
    }
    expect((await linkRows()).map((row) => row.ward_id)).not.toContain(competitorId);
  });

  it('answers 400 when only some parameters are given, naming the missing ones', async () => {
    const before = await linkRows();
    const onlyTutor = await tutela(team.owner, `tutor=${team.id}`);
    expectError(onlyTutor, 400, 'bad_request');
    expect(onlyTutor.body.error.details.map((detail: Json) => detail.field).sort()).toEqual(['action', 'ward']);
    for (const detail of onlyTutor.body.error.details) expect(detail.location).toBe('query');
    const noAction = await tutela(team.owner, `tutor=${team.id}&ward=${competitorId}`);
    expectError(noAction, 400, 'bad_request');
    expect(noAction.body.error.details.map((detail: Json) => detail.field)).toEqual(['action']);
    expectError(await tutela(team.owner, `ward=${competitorId}&action=add`), 400, 'bad_request');
    expect(await linkRows()).toEqual(before);
  });

  it('answers 400 for an entity watching itself, an unknown action or a malformed id', async () => {
    const self = await tutela(team.owner, `tutor=${team.id}&ward=${team.id}&action=add`);
    expectError(self, 400, 'bad_request');
    expect(self.body.error.details).toContainEqual(expect.objectContaining({ location: 'query', field: 'ward' }));
    const bogus = await tutela(team.owner, `tutor=${team.id}&ward=${competitorId}&action=bogus`);
    expectError(bogus, 400, 'bad_request');
    expect(bogus.body.error.details).toContainEqual(expect.objectContaining({ location: 'query', field: 'action' }));
    expectError(await tutela(team.owner, `tutor=abc&ward=${competitorId}&action=add`), 400, 'bad_request');
    expect((await linkRows()).map((row) => row.ward_id)).not.toContain(team.id);
  });

  it('answers 404 for a tutor or ward outside the caller\'s teams', async () => {
    const foreign = await newTeam('Campanha alheia');
    const tutorOutside = await tutela(team.owner, `tutor=${foreign.id}&ward=${competitorId}&action=add`);
    expectError(tutorOutside, 404, 'not_found');
    expect(tutorOutside.body.error.details).toEqual([expect.objectContaining({ location: 'query', field: 'tutor' })]);
    const wardOutside = await tutela(team.owner, `tutor=${team.id}&ward=${foreign.id}&action=add`);
    expectError(wardOutside, 404, 'not_found');
    expect(wardOutside.body.error.details).toEqual([expect.objectContaining({ location: 'query', field: 'ward' })]);
    expect((await linkRows()).map((row) => row.ward_id)).not.toContain(foreign.id);
  });

  it('answers 403 to a viewer of the tutor, and lets an operator of the tutor change links', async () => {
    const viewer = await createUser(app);
    const operator = await createUser(app);
    for (const id of [team.id, competitorId]) {
      await join(id, viewer, 'viewer');
      await join(id, operator, 'operator');
    }
    expectError(await tutela(viewer, `tutor=${team.id}&ward=${competitorId}&action=add`), 403, 'forbidden');
    expect((await linkRows()).map((row) => row.ward_id)).not.toContain(competitorId);

    // The viewer still reads the team's links.
    const seen = await tutela(viewer);
    expect(seen.status, seen.text).toBe(200);
    expect(seen.body.data).toEqual((await tutela(team.owner)).body.data);

    const added = await tutela(operator, `tutor=${team.id}&ward=${competitorId}&action=add`);
    expect(added.status, added.text).toBe(200);
    expect(added.body.data.map((link: Json) => link.ward_id)).toContain(competitorId);
  });

  it("does not list links of another user's entities; a platform admin sees every link", async () => {
    const other = await newTeam('Outra campanha');
    const otherWard = await app.entities.store.create('concorrente', other.owner.user.id, { nome: 'Concorrente da outra' });
    const theirs = await tutela(other.owner, `tutor=${other.id}&ward=${otherWard}&action=add`);
    expect(theirs.body.data.map((link: Json) => [link.tutor_id, link.ward_id])).toEqual([[other.id, otherWard]]);

    const mine = await tutela(team.owner);
    expect(mine.body.data.length).toBeGreaterThan(0);
    expect(mine.body.data.every((link: Json) => link.tutor_id === team.id)).toBe(true);
    expect(mine.text).not.toContain('Outra campanha');

    const everything = await tutela(platformAdmin);
    expect(everything.status, everything.text).toBe(200);
    const tutors = everything.body.data.map((link: Json) => link.tutor_id);
    expect(tutors).toContain(other.id);
    expect(tutors).toContain(team.id);
  });

  it('answers 401 without a key', async () => {
    expectError(await get('/api/entidade/tutela/'), 401, 'unauthorized');
  });
});

describe('teammates: GET /api/account/ (listChatContacts) and GET /api/usuario/{id}/ (getUser)', () => {
  let owner: TestUser;
  let mateus: TestUser;
  let lonely: TestUser;
  let firstId: number;
  let secondId: number;

  beforeAll(async () => {
    owner = await createUser(app, { first_name: 'Olga', last_name: 'Dona' });
    mateus = await createUser(app, { first_name: 'Mateus', last_name: 'Colega' });
    lonely = await createUser(app, { first_name: 'Lúcio', last_name: 'Sozinho' });
    firstId = (await newTeam('Primeira campanha', 'candidato', owner)).id;
    secondId = (await newTeam('Segunda campanha', 'concorrente', owner)).id;
    await join(firstId, mateus, 'operator');
    await join(secondId, mateus, 'viewer');
  });

  const contactsOf = async (user: TestUser, query = '') => {
    const result = await get(`/api/account/${query}`, user.headers);
    expect(result.status, result.text).toBe(200);
    return result.body.data as Json[];
  };
  const byEntity = (a: Json, b: Json) => a.entity_id - b.entity_id;

  it('lists teammates with the teams they share (entity, name, their role), and the platform admins', async () => {
    const contacts = await contactsOf(owner);
    const mate = contacts.find((contact) => contact.user_id === mateus.user.id);
    expect({ ...mate, teams: [...mate.teams].sort(byEntity) }).toEqual({
      user_id: mateus.user.id,
      username: mateus.user.username,
      display_name: 'Mateus Colega',
      email: null, // not shared with the team
      is_admin: false,
      teams: [
        { entity_id: firstId, entity_name: 'Primeira campanha', role: 'operator' },
        { entity_id: secondId, entity_name: 'Segunda campanha', role: 'viewer' },
      ],
    });
    expect(contacts.find((contact) => contact.user_id === platformAdmin.user.id)).toMatchObject({ is_admin: true, teams: [] });
    expect(contacts.map((contact) => contact.user_id)).not.toContain(lonely.user.id);
    expect(contacts.map((contact) => contact.user_id)).not.toContain(owner.user.id);

    // Seen from the other side: the owner, with the owner's role.
    const fromMateus = await contactsOf(mateus);
    const theOwner = fromMateus.find((contact) => contact.user_id === owner.user.id);
    expect([...theOwner.teams].sort(byEntity)).toEqual([
      { entity_id: firstId, entity_name: 'Primeira campanha', role: 'owner' },
      { entity_id: secondId, entity_name: 'Segunda campanha', role: 'owner' },
    ]);

    // Someone in no team sees only the admins.
    expect((await contactsOf(lonely)).every((contact) => contact.is_admin)).toBe(true);
  });

  it('with only_team=true drops admins who share no team, but keeps one who does', async () => {
    const onlyTeam = await contactsOf(owner, '?only_team=true');
    expect(onlyTeam.map((contact) => contact.user_id)).toEqual([mateus.user.id]);

    const admin = await createAdmin(app, { first_name: 'Abel', last_name: 'Admin da equipe' });
    await join(firstId, admin, 'viewer');
    const withAdmin = await contactsOf(owner, '?only_team=true');
    expect(withAdmin.map((contact) => contact.user_id)).toEqual([admin.user.id, mateus.user.id]);
    expect(withAdmin[0]).toMatchObject({ is_admin: true, teams: [{ entity_id: firstId, entity_name: 'Primeira campanha', role: 'viewer' }] });
    expect(await contactsOf(lonely, '?only_team=true')).toEqual([]);
  });

  it("shows a teammate's profile (200) but not a stranger's (404)", async () => {
    const mate = await get(`/api/usuario/${mateus.user.id}/`, owner.headers);
    expect(mate.status, mate.text).toBe(200);
    // A teammate's profile: no e-mail, phone or last login until shared.
    expect(mate.body.data).toMatchObject({ id: mateus.user.id, username: mateus.user.username, email: null, phone: null, last_login: null });
    await post('/api/auth/profile/', mateus.headers, { phone: '(11) 98765-4321', contact_visible_to_team: true });
    const shared = (await get(`/api/usuario/${mateus.user.id}/`, owner.headers)).body.data;
    expect(shared).toMatchObject({ email: mateus.user.email, phone: '+5511987654321', last_login: null, contact_visible_to_team: true });
    expect((await contactsOf(owner)).find((contact) => contact.user_id === mateus.user.id)!.email).toBe(mateus.user.email);
    // Their own profile and a platform admin's view are whole.
    expect((await get(`/api/usuario/${mateus.user.id}/`, platformAdmin.headers)).body.data.email).toBe(mateus.user.email);
    await post('/api/auth/profile/', mateus.headers, { contact_visible_to_team: false });
    const back = await get(`/api/usuario/${owner.user.id}/`, mateus.headers);
    expect(back.status, back.text).toBe(200);
    expect(back.body.data.id).toBe(owner.user.id);

    const hidden = await get(`/api/usuario/${lonely.user.id}/`, owner.headers);
    expectError(hidden, 404, 'not_found');
    expect(hidden.text).not.toContain(lonely.user.email);
    expectError(await get(`/api/usuario/${owner.user.id}/`, lonely.headers), 404, 'not_found');
  });

  it('forgets a former teammate after removeOperator', async () => {
    const former = await createUser(app, { first_name: 'Fábio', last_name: 'Ex-colega' });
    await join(firstId, former, 'viewer');
    await join(secondId, former, 'operator');
    expect((await contactsOf(owner)).map((contact) => contact.user_id)).toContain(former.user.id);
    expect((await get(`/api/usuario/${former.user.id}/`, owner.headers)).status).toBe(200);

    // Out of one team: still a teammate through the other.
    expect((await removeOperator(owner, { entity_id: firstId, user_id: former.user.id })).status).toBe(200);
    const stillThere = (await contactsOf(owner)).find((contact) => contact.user_id === former.user.id);
    expect(stillThere.teams).toEqual([{ entity_id: secondId, entity_name: 'Segunda campanha', role: 'operator' }]);

    // Out of both: gone from contacts and profiles, both ways.
    expect((await removeOperator(owner, { entity_id: secondId, user_id: former.user.id })).status).toBe(200);
    expect((await contactsOf(owner)).map((contact) => contact.user_id)).not.toContain(former.user.id);
    expect((await contactsOf(former)).map((contact) => contact.user_id)).not.toContain(owner.user.id);
    expectError(await get(`/api/usuario/${former.user.id}/`, owner.headers), 404, 'not_found');
    expectError(await get(`/api/usuario/${owner.user.id}/`, former.headers), 404, 'not_found');
  });
});
