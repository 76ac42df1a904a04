/**
 * The audit log of security events (issue 21): what each account event writes (who, whose, from where,
 * counts and reasons, never a secret nor a typed name), the admins' filtered, paginated read, and the
 * retention. On SQLite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import { describe, expect, it } from 'vitest';
import { createAdmin, createUser } from './helpers/accounts.js';
import { appsClosedAfterEach, type TestApp } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';
import { joinTeam } from './helpers/teams.js';

const start = appsClosedAfterEach();

type Event = { event: string; actor_id: number | null; user_id: number | null; address: string | null; details: Record<string, unknown> };

async function eventsOf(app: TestApp, headers: Record<string, string>, query = ''): Promise<Event[]> {
  const answer = await request(app.baseUrl, 'GET', `/api/auth/audit_events/${query}`, headers);
  expect(answer.status, answer.text).toBe(200);
  return answer.body.data.results as Event[];
}

describe('the audit log', () => {
  it("records logins, failures, locks, revocations, password changes and the admins' operations, without secrets", async () => {
    const app = await start({ accounts: { loginLock: { maxFailures: 2, addressMaxFailures: 100, maxDelayMs: 30_000, windowMs: 60_000 } } });
    const admin = await createAdmin(app);
    const carlos = await createUser(app, { username: 'carlos.pereira' });
    const login = (username: string, password: string) => request(app.baseUrl, 'POST', '/api/auth/login', {}, { username, password });

    expect((await login('carlos.pereira', carlos.password)).status).toBe(200);
    const newPassword = 'cerrado em flor na seca de agosto';
    expect((await request(app.baseUrl, 'POST', '/api/auth/change_password/', carlos.headers, { current_password: carlos.password, new_password: newPassword })).status).toBe(200);
    const typedByMistake = 'minha senha secreta digitada no campo errado';
    expectError(await login('carlos.pereira', 'wrong password one'), 401, 'invalid_credentials');
    expectError(await login(typedByMistake, 'wrong password two'), 401, 'invalid_credentials');
    expectError(await login('carlos.pereira', 'wrong password three'), 401, 'invalid_credentials');
    expectError(await login('carlos.pereira', newPassword), 429, 'login_locked');
    const onCarlos = `/api/auth/account/${carlos.user.id}`;
    expect((await request(app.baseUrl, 'POST', `${onCarlos}/deactivate/`, admin.headers)).status).toBe(200);
    expect((await request(app.baseUrl, 'POST', `${onCarlos}/reactivate/`, admin.headers)).status).toBe(200);
    expect((await request(app.baseUrl, 'POST', `${onCarlos}/end_sessions/`, admin.headers)).status).toBe(200);

    const answer = await request(app.baseUrl, 'GET', '/api/auth/audit_events/', admin.headers);
    const events = (answer.body.data.results as Event[]).slice().reverse(); // oldest first
    expect(events.map((event) => event.event)).toEqual([
      'login_succeeded',
      'password_changed',
      'login_failed',
      'login_failed',
      'login_failed',
      'login_locked',
      'account_deactivated',
      'account_reactivated',
      'keys_revoked',
    ]);
    expect(events[0]).toMatchObject({ actor_id: carlos.user.id, user_id: carlos.user.id, address: expect.stringContaining('127.0.0.1') });
    // A failure names the account when one has the name, and nothing else when none has.
    expect(events[1]).toMatchObject({ actor_id: carlos.user.id, user_id: carlos.user.id, details: { keys_revoked: 1 } });
    expect(events.slice(2, 5).map((event) => event.user_id)).toEqual([carlos.user.id, null, carlos.user.id]);
    expect(events[5]).toMatchObject({ user_id: carlos.user.id, details: { retry_after_seconds: expect.any(Number) } });
    expect(events[6]).toMatchObject({ actor_id: admin.user.id, user_id: carlos.user.id, details: { keys_revoked: 1 } });
    expect(events[8]).toMatchObject({ actor_id: admin.user.id, user_id: carlos.user.id, details: { reason: 'ended_by_admin', count: 0 } });
    for (const secret of [typedByMistake, carlos.password, newPassword, 'wrong password']) expect(answer.text).not.toContain(secret);
  });

  it('filters by event, user and time, pages with the filters kept, and is for platform admins only', async () => {
    const app = await start();
    const admin = await createAdmin(app);
    const ana = await createUser(app);
    const bruno = await createUser(app);
    for (const user of [ana, ana, bruno]) await request(app.baseUrl, 'POST', '/api/auth/login', {}, { username: user.user.username, password: user.password });
    const since = new Date().toISOString();
    await request(app.baseUrl, 'POST', '/api/auth/login', {}, { username: bruno.user.username, password: 'not the password at all' });

    expect((await eventsOf(app, admin.headers, '?event=login_succeeded')).map((event) => event.user_id)).toEqual([bruno.user.id, ana.user.id, ana.user.id]);
    expect((await eventsOf(app, admin.headers, `?user_id=${ana.user.id}`)).every((event) => event.user_id === ana.user.id)).toBe(true);
    expect(await eventsOf(app, admin.headers, `?since=${encodeURIComponent(since)}`)).toEqual([expect.objectContaining({ event: 'login_failed', user_id: bruno.user.id })]);
    expect(await eventsOf(app, admin.headers, `?until=${encodeURIComponent(since)}&event=login_failed`)).toEqual([]);

    for (let round = 0; round < 50; round += 1) await app.accounts.audit.record({ event: 'login_succeeded', userId: ana.user.id });
    const first = await request(app.baseUrl, 'GET', `/api/auth/audit_events/?event=login_succeeded&user_id=${ana.user.id}`, admin.headers);
    expect(first.body.data).toMatchObject({ count: 52, total_pages: 2 });
    const next = new URL(first.body.data.links.next);
    expect(Object.fromEntries(next.searchParams)).toEqual({ event: 'login_succeeded', user_id: String(ana.user.id), page: '2' });
    expectError(await request(app.baseUrl, 'GET', '/api/auth/audit_events/?page=3', admin.headers), 404, 'not_found');
    expectError(await request(app.baseUrl, 'GET', '/api/auth/audit_events/?event=anything', admin.headers), 400, 'bad_request');
    expectError(await request(app.baseUrl, 'GET', '/api/auth/audit_events/', ana.headers), 403, 'forbidden');
    expectError(await request(app.baseUrl, 'GET', '/api/auth/audit_events/', {}), 401, 'unauthorized');
  });

  it("records who added whom to which team with which role, and who removed them (a member leaving included)", async () => {
    const app = await start();
    const admin = await createAdmin(app);
    const owner = await createUser(app);
    const joana = await createUser(app);
    const post = (headers: Record<string, string>, path: string, body: unknown) => request(app.baseUrl, 'POST', path, headers, body);
    const entity = (await post(owner.headers, '/api/entidade/add/?tp=candidato', { nome: 'Maria da Silva Santos' })).body.data.id as number;
    await joinTeam(app.baseUrl, owner, joana, entity, 'operator');
    // Accepted again: nothing changes, nothing is recorded.
    const accepted = (await request(app.baseUrl, 'GET', `/api/operators/invitations/?entity_id=${entity}`, owner.headers)).body.data.results[0].id;
    expect((await post(joana.headers, '/api/operators/invitations/accept/', { id: accepted })).status).toBe(200);
    expect((await post(joana.headers, '/api/operators/remove_operator/', { entity_id: entity, user_id: joana.user.id })).status).toBe(200);

    const events = (await eventsOf(app, admin.headers, `?user_id=${joana.user.id}`)).filter((event) => event.event.startsWith('team_'));
    expect(events.reverse()).toEqual([
      // She joined by accepting the owner's invitation: she is the actor, the owner the inviter.
      expect.objectContaining({ event: 'team_member_added', actor_id: joana.user.id, user_id: joana.user.id, details: { entity_id: entity, role: 'operator', invitation_id: accepted, invited_by: owner.user.id } }),
      expect.objectContaining({ event: 'team_member_removed', actor_id: joana.user.id, user_id: joana.user.id, details: { entity_id: entity, role: 'operator' } }),
    ]);
  });

  it('forgets events older than the retention at the housekeeping', async () => {
    const app = await start({ accounts: { auditRetentionMs: 24 * 3600_000 } });
    const ana = await createUser(app);
    await app.accounts.audit.record({ event: 'login_succeeded', userId: ana.user.id }, new Date(Date.now() - 2 * 24 * 3600_000));
    await app.accounts.audit.record({ event: 'login_succeeded', userId: ana.user.id });
    await app.accounts.purgeExpired();
    expect(await app.accounts.models.AuditEvent.count()).toBe(1);
  });
});
