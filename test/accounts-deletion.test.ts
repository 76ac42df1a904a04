/**
 * deleteMyAccount (issue 21, LGPD erasure): a user deletes their own account with the current password
 * and `confirm: "DELETE"`. A wrong password or confirmation changes nothing; a deletion erases the
 * personal fields (read in the raw row), revokes every key, keeps the audit rows under the pseudonym,
 * frees the address for a new sign-up, and refuses a later reactivation. Owned entities go to the
 * longest-standing admin, block the deletion when their team has members but no admin, and go with the
 * account when it was alone in their team. On SQLite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import { QueryTypes } from 'sequelize';
import { describe, expect, it } from 'vitest';
import type { TeamRole } from '../src/entities/models.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { appsClosedAfterEach, type TestApp } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';
import { confirmationTokenIn } from './helpers/mail.js';

const start = appsClosedAfterEach();

const post = (app: TestApp, headers: Record<string, string>, path: string, body: unknown) => request(app.baseUrl, 'POST', path, headers, body);
const deleteAccount = (app: TestApp, who: TestUser, body: Record<string, unknown> = {}) =>
  post(app, who.headers, '/api/auth/delete_account/', { current_password: who.password, confirm: 'DELETE', ...body });

/** The users row as stored, every column. */
async function rawUser(app: TestApp, id: number): Promise<Record<string, unknown>> {
  const [row] = await app.sequelize.query<Record<string, unknown>>('SELECT * FROM users WHERE id = ?', { replacements: [id], type: QueryTypes.SELECT });
  return row!;
}

async function count(app: TestApp, sql: string, values: unknown[]): Promise<number> {
  const [row] = await app.sequelize.query<{ total: number | string }>(sql, { replacements: values, type: QueryTypes.SELECT });
  return Number(row!.total);
}

/** An entity owned by `owner`, through the API. */
async function ownedEntity(app: TestApp, owner: TestUser, nome: string): Promise<number> {
  const created = await post(app, owner.headers, '/api/entidade/add/?tp=candidato', { nome });
  expect(created.status, created.text).toBe(201);
  return created.body.data.id as number;
}

/** Adds a member straight into the team (how they join is another feature's business), added at `addedAt`. */
async function addMember(app: TestApp, entityId: number, member: TestUser, role: TeamRole, addedAt: Date): Promise<void> {
  await app.entities.models.Member.create({ entity_id: entityId, user_id: member.user.id, role, added_at: addedAt });
}

describe('deleteMyAccount refusals', () => {
  it('answers 401 for a wrong password and 422 without the word DELETE, and changes nothing', async () => {
    const app = await start();
    const carlos = await createUser(app, { username: 'carlos.pereira', email: 'carlos.pereira@palanque.app', first_name: 'Carlos', phone: '+5511987654321' });
    const before = await rawUser(app, carlos.user.id);

    const wrong = await deleteAccount(app, carlos, { current_password: 'not his password at all' });
    expectError(wrong, 401, 'invalid_credentials');
    expect(wrong.body.error.details).toEqual([expect.objectContaining({ field: 'current_password', rule: 'current_password' })]);
    const unconfirmed = await deleteAccount(app, carlos, { confirm: 'delete' });
    expectError(unconfirmed, 422, 'validation_failed');
    expect(unconfirmed.body.error.details).toEqual([expect.objectContaining({ field: 'confirm' })]);
    expectError(await post(app, carlos.headers, '/api/auth/delete_account/', { current_password: carlos.password }), 422, 'validation_failed');
    expectError(await post(app, {}, '/api/auth/delete_account/', { current_password: carlos.password, confirm: 'DELETE' }), 401, 'unauthorized');

    expect(await rawUser(app, carlos.user.id)).toEqual(before);
    expect((await request(app.baseUrl, 'GET', '/api/auth/profile/', carlos.headers)).status).toBe(200);
    // The wrong password counted as a failed login, as change_email's does.
    const events = await app.accounts.audit.page({ userId: carlos.user.id }, 1, 50);
    expect(events.rows.map((event) => event.event)).toEqual(['login_failed']);
  });
});

describe('deleteMyAccount', () => {
  it('erases the personal fields, revokes every key and keeps the audit rows under a pseudonym', async () => {
    const app = await start();
    const admin = await createAdmin(app);
    const carlos = await createUser(app, { username: 'carlos.pereira', email: 'carlos.pereira@palanque.app', first_name: 'Carlos', last_name: 'Pereira', phone: '+5511987654321' });
    // A second key from a login, a failed login, a bookmark, a pending change of address.
    const loggedIn = await post(app, {}, '/api/auth/login', { username: 'carlos.pereira', password: carlos.password });
    expect(loggedIn.status).toBe(200);
    const second = { Authorization: `Token ${loggedIn.body.data.token}` };
    expectError(await post(app, {}, '/api/auth/login', { username: 'carlos.pereira', password: 'not his password at all' }), 401, 'invalid_credentials');
    expect((await post(app, carlos.headers, '/api/research/add_research_bookmark/', { title: 'Pesquisa Datafolha', url: 'https://pesquisa.exemplo.com.br/sp' })).status).toBe(201);
    expect((await post(app, carlos.headers, '/api/auth/change_email/', { new_email: 'carlos@exemplo.com.br', current_password: carlos.password })).status).toBe(200);
    await expect.poll(() => count(app, 'SELECT COUNT(*) AS total FROM pending_email_changes WHERE user_id = ?', [carlos.user.id]), { timeout: 5_000 }).toBe(1);
    // An audit row whose details name his address (as a colleague's event may): scrubbed.
    await app.accounts.models.AuditEvent.create({ occurred_at: new Date(), event: 'keys_revoked', actor_id: carlos.user.id, user_id: carlos.user.id, address: null, details: JSON.stringify({ reason: 'test', to: 'carlos.pereira@palanque.app' }) });

    const deleted = await deleteAccount(app, carlos);
    expect(deleted.status, deleted.text).toBe(200);
    const pseudonym = deleted.body.data.username as string;
    expect(pseudonym).toMatch(/^excluido-[0-9a-f]{8}$/);
    expect(deleted.body.data).toMatchObject({ deleted: true, keys_revoked: 2, teams_left: 0, entities_handed_over: [], entities_deleted: [] });

    const row = await rawUser(app, carlos.user.id);
    expect(row).toMatchObject({ id: carlos.user.id, username: pseudonym, username_key: pseudonym, email: `${pseudonym}@excluido.invalid`, first_name: '', last_name: '', phone: null });
    expect(Boolean(row.is_active)).toBe(false);
    expect(row.deleted_at).not.toBeNull();
    expect(row.password_hash).not.toBe(carlos.user.password_hash);
    expect(JSON.stringify(row)).not.toMatch(/carlos|pereira|98765/i);

    // Every key is dead; the old names log in as any wrong login does.
    expectError(await request(app.baseUrl, 'GET', '/api/auth/profile/', carlos.headers), 401, 'unauthorized');
    expectError(await request(app.baseUrl, 'GET', '/api/auth/profile/', second), 401, 'unauthorized');
    expect(await count(app, 'SELECT COUNT(*) AS total FROM api_tokens WHERE user_id = ? AND revoked_at IS NULL', [carlos.user.id])).toBe(0);
    // The login lock forgot the failures of his names.
    const failures = await app.sequelize.query<{ subject: string }>('SELECT subject FROM login_failures', { type: QueryTypes.SELECT });
    expect(failures.filter((failure) => failure.subject.startsWith('pair:') || failure.subject.startsWith('name:'))).toEqual([]);
    for (const name of ['carlos.pereira', 'carlos.pereira@palanque.app', pseudonym]) {
      expectError(await post(app, {}, '/api/auth/login', { username: name, password: carlos.password }), 401, 'invalid_credentials');
    }

    // His own records are gone.
    expect(await count(app, 'SELECT COUNT(*) AS total FROM research_bookmarks WHERE user_id = ?', [carlos.user.id])).toBe(0);
    expect(await count(app, 'SELECT COUNT(*) AS total FROM pending_email_changes WHERE user_id = ?', [carlos.user.id])).toBe(0);

    // The audit log keeps his events, under the same id, scrubbed of his address.
    const events = (await app.accounts.audit.page({ userId: carlos.user.id }, 1, 50)).rows;
    expect(events.map((event) => event.event)).toEqual(expect.arrayContaining(['login_succeeded', 'login_failed', 'email_change_requested', 'account_deleted']));
    expect(events.find((event) => event.event === 'account_deleted')).toMatchObject({ event: 'account_deleted', actor_id: carlos.user.id, user_id: carlos.user.id, details: { keys_revoked: 2, teams_left: 0, entities_handed_over: 0, entities_deleted: 0 } });
    expect(JSON.stringify(events)).not.toContain('carlos.pereira@palanque.app');
    expect(events.find((event) => event.details.reason === 'test')?.details.to).toBe('[removido]');

    // Admins see the pseudonym, and that it was deleted; nobody brings it back.
    const seen = await request(app.baseUrl, 'GET', `/api/usuario/${carlos.user.id}/`, admin.headers);
    expect(seen.status, seen.text).toBe(200);
    expect(seen.body.data).toMatchObject({ id: carlos.user.id, username: pseudonym, first_name: '', last_name: '', phone: null, is_active: false, deleted_at: deleted.body.data.deleted_at });
    const listed = await request(app.baseUrl, 'GET', '/api/auth/account', admin.headers);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data.results.find((user: { id: number }) => user.id === carlos.user.id)).toMatchObject({ username: pseudonym, deleted_at: deleted.body.data.deleted_at });
    expect(listed.body.data.results.find((user: { id: number }) => user.id === admin.user.id).deleted_at).toBeNull();
    const reactivated = await post(app, admin.headers, `/api/auth/account/${carlos.user.id}/reactivate/`, {});
    expectError(reactivated, 409, 'conflict');
    expect(reactivated.body.error.details).toEqual([expect.objectContaining({ field: 'user_id', rule: 'account_deleted' })]);
    expect(Boolean((await rawUser(app, carlos.user.id)).is_active)).toBe(false);
  });

  it('deletes the invitations to the address, and keeps the ones the user sent under the pseudonym', async () => {
    const app = await start();
    const carlos = await createUser(app);
    const maria = await createUser(app);
    const hisEntity = await ownedEntity(app, carlos, 'Entidade do Carlos');
    const herEntity = await ownedEntity(app, maria, 'Entidade da Maria');
    // Carlos invites Maria's team's future member; Maria invites Carlos.
    expect((await post(app, maria.headers, '/api/operators/add_operator/', { entity_id: herEntity, email: carlos.user.email, role: 'viewer' })).status).toBe(201);
    const sent = await post(app, carlos.headers, '/api/operators/add_operator/', { entity_id: hisEntity, email: 'convidado@exemplo.com.br', role: 'viewer' });
    expect(sent.status).toBe(201);
    // Alone in his team, his entity goes with him; make Maria its admin so it stays, invitation and all.
    await addMember(app, hisEntity, maria, 'admin', new Date());
    expect((await deleteAccount(app, carlos)).status).toBe(200);

    expect(await count(app, 'SELECT COUNT(*) AS total FROM team_invitations WHERE email = ?', [carlos.user.email])).toBe(0);
    const kept = await request(app.baseUrl, 'GET', `/api/operators/invitations/?entity_id=${hisEntity}`, maria.headers);
    expect(kept.body.data.results).toEqual([expect.objectContaining({ id: sent.body.data.id, invited_by: { id: carlos.user.id, display_name: expect.stringMatching(/^Conta excluída [0-9a-f]{8}$/) } })]);
  });

  it('frees the address: a new sign-up with it works', async () => {
    const app = await start({ accounts: { signUp: { mode: 'open', linkLifetimeMs: 48 * 3600_000, resendIntervalMs: 60_000 } } });
    const carlos = await createUser(app, { username: 'carlos.pereira', email: 'carlos.pereira@palanque.app' });
    expect((await deleteAccount(app, carlos)).status).toBe(200);

    const available = await request(app.baseUrl, 'GET', '/api/check/email/?email=carlos.pereira@palanque.app', {});
    expect(available.body.data.available).toBe(true);
    const password = 'ipê amarelo na praça da matriz';
    const signedUp = await post(app, {}, '/api/auth/signup/', { username: 'carlos.pereira', email: 'carlos.pereira@palanque.app', password });
    expect(signedUp.status, signedUp.text).toBe(200);
    const token = await confirmationTokenIn(app.mailDir, 'carlos.pereira@palanque.app');
    const confirmed = await request(app.baseUrl, 'GET', `/api/auth/verify_email/?token=${token}`, {});
    expect(confirmed.status, confirmed.text).toBe(200);
    const loggedIn = await post(app, {}, '/api/auth/login', { username: 'carlos.pereira', password });
    expect(loggedIn.status, loggedIn.text).toBe(200);
    expect(loggedIn.body.data.user.id).not.toBe(carlos.user.id);
  });
});

describe('deleteMyAccount and the entities the user owns', () => {
  it("hands an entity to its longest-standing admin, and deletes one the user was alone in, with what hangs off it", async () => {
    const app = await start();
    const carlos = await createUser(app);
    const [newer, older, operator] = [await createUser(app), await createUser(app), await createUser(app)];
    const shared = await ownedEntity(app, carlos, 'Maria da Silva Santos');
    await addMember(app, shared, newer, 'admin', new Date('2026-05-01T00:00:00Z'));
    await addMember(app, shared, older, 'admin', new Date('2026-03-01T00:00:00Z'));
    await addMember(app, shared, operator, 'operator', new Date('2026-01-01T00:00:00Z'));
    const solo = await ownedEntity(app, carlos, 'João Pereira');
    const monitor = await post(app, carlos.headers, '/api/monitor_social/add_monitor/', { entity_id: solo, name: 'Redes do João', keywords: ['joão pereira'] });
    expect(monitor.status, monitor.text).toBe(201);
    // Its SMS credential and opt-outs would outlive it by ON DELETE SET NULL: deleted explicitly.
    const credential = await app.sms.models.Credential.create({ name: 'SMS do João', provider: 'twilio', account_id: 'AC0123', sender_id: '+5511900000000', secret_sealed: 'sealed', entity_id: solo, created_by: carlos.user.id, created_at: new Date() });
    await app.sms.models.OptOut.create({ entity_id: solo, phone: '+5511987654321', keyword: 'SAIR', opted_out_at: new Date() });
    // A team he is only a member of: he leaves it.
    const elsewhere = await ownedEntity(app, older, 'Partido Exemplo');
    await addMember(app, elsewhere, carlos, 'viewer', new Date('2026-04-01T00:00:00Z'));

    const deleted = await deleteAccount(app, carlos);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body.data).toMatchObject({ entities_handed_over: [shared], entities_deleted: [solo], teams_left: 3 });

    const entity = await app.entities.models.Entity.findByPk(shared, { raw: true });
    expect(entity).toMatchObject({ owner_id: older.user.id });
    const team = await app.sequelize.query<{ user_id: number; role: string }>('SELECT user_id, role FROM entity_members WHERE entity_id = ? ORDER BY user_id', { replacements: [shared], type: QueryTypes.SELECT });
    expect(team).toEqual(
      [
        { user_id: newer.user.id, role: 'admin' },
        { user_id: older.user.id, role: 'owner' },
        { user_id: operator.user.id, role: 'operator' },
      ].sort((a, b) => a.user_id - b.user_id),
    );
    const asOlder = await request(app.baseUrl, 'GET', `/api/entidade/data/?id=${shared}`, older.headers);
    expect(asOlder.status, asOlder.text).toBe(200);

    expect(await count(app, 'SELECT COUNT(*) AS total FROM entities WHERE id = ?', [solo])).toBe(0);
    expect(await count(app, 'SELECT COUNT(*) AS total FROM social_monitors WHERE entity_id = ?', [solo])).toBe(0);
    expect(await count(app, 'SELECT COUNT(*) AS total FROM sms_credentials WHERE id = ?', [credential.get('id')])).toBe(0);
    expect(await count(app, 'SELECT COUNT(*) AS total FROM sms_opt_outs', [])).toBe(0);
    expect(await count(app, 'SELECT COUNT(*) AS total FROM entity_members WHERE user_id = ?', [carlos.user.id])).toBe(0);
    expect(await count(app, 'SELECT COUNT(*) AS total FROM entity_member_counts WHERE user_id = ?', [carlos.user.id])).toBe(0);
    expect(await count(app, 'SELECT COUNT(*) AS total FROM entities WHERE owner_id = ?', [carlos.user.id])).toBe(0);
  });

  it('answers 409 no_successor naming the entities whose teams have members but no admin, and changes nothing', async () => {
    const app = await start();
    const carlos = await createUser(app, { first_name: 'Carlos' });
    const operator = await createUser(app);
    const withAdmin = await ownedEntity(app, carlos, 'Maria da Silva Santos');
    await addMember(app, withAdmin, await createUser(app), 'admin', new Date('2026-03-01T00:00:00Z'));
    const blocked = await ownedEntity(app, carlos, 'João Pereira');
    await addMember(app, blocked, operator, 'operator', new Date('2026-03-01T00:00:00Z'));
    const solo = await ownedEntity(app, carlos, 'Partido Exemplo');
    const before = await rawUser(app, carlos.user.id);

    const refused = await deleteAccount(app, carlos);
    expectError(refused, 409, 'conflict');
    expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'entities_owned', rule: 'no_successor', value: [blocked] })]);
    expect(refused.body.error.message).toContain('make a member admin first');

    expect(await rawUser(app, carlos.user.id)).toEqual(before);
    expect(await count(app, 'SELECT COUNT(*) AS total FROM entities WHERE owner_id = ?', [carlos.user.id])).toBe(3);
    expect(await count(app, 'SELECT COUNT(*) AS total FROM entities WHERE id = ?', [solo])).toBe(1);
    expect(await count(app, 'SELECT COUNT(*) AS total FROM entity_members WHERE user_id = ?', [carlos.user.id])).toBe(3);
    expect((await request(app.baseUrl, 'GET', '/api/auth/profile/', carlos.headers)).status).toBe(200);
    expect((await app.accounts.audit.page({ event: 'account_deleted' }, 1, 50)).total).toBe(0);

    // Once the operator is an admin, it goes through.
    await app.entities.models.Member.update({ role: 'admin' }, { where: { entity_id: blocked, user_id: operator.user.id } });
    const deleted = await deleteAccount(app, carlos);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body.data.entities_handed_over).toEqual([withAdmin, blocked]);
    expect(deleted.body.data.entities_deleted).toEqual([solo]);
  });
});
