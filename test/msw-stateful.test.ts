/**
 * The stateful mock (sdk/mock/) through the SDK on msw/node: what a test writes is there when it
 * reads, with the server's statuses, messages and error model; reset() goes back to the seed; operations
 * it does not keep fall through to the example handlers. Also checks that sdk/msw-fixtures.json is fixtures/.
 */
import { readFile } from 'node:fs/promises';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient, login, logout, PalanqueApiError, unwrap, type PalanqueClient } from '../sdk/index.js';
import { createStatefulHandlers, DEFAULT_BASE_URL, DEFAULT_MOCK_PASSWORD } from '../sdk/msw.js';
import contract from '../sdk/openapi.json' with { type: 'json' };
import { EXPORT_SECTIONS } from '../src/accounts/data-export.js';
import { mswFixturesPath, mswFixturesText } from '../sdk/scripts/bundle-fixtures.js';

const mock = createStatefulHandlers();
const server = setupServer(...mock.handlers);
let api: PalanqueClient;

/** Every answer of the stateful handlers in this file, checked against the contract at the end. */
const answers: Array<Promise<{ method: string; path: string; status: number; body: unknown }>> = [];
server.events.on('response:mocked', ({ request, response }) => {
  const clone = response.clone();
  // A CSV (exportSmsCampaignMessages) is kept as text: only JSON bodies are checked against a schema below.
  const json = (response.headers.get('content-type') ?? '').includes('json');
  answers.push(clone.text().then((text) => ({ method: request.method.toLowerCase(), path: new URL(request.url).pathname, status: response.status, body: text && json ? JSON.parse(text) : text || undefined })));
});

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
beforeEach(async () => {
  api = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
  await login(api, 'carlos.pereira', DEFAULT_MOCK_PASSWORD);
});
afterEach(() => mock.reset());
afterAll(() => server.close());

/** The error a call throws (the SDK throws PalanqueApiError for an answer that is not 2xx). */
async function failure(call: Promise<unknown>): Promise<PalanqueApiError> {
  const error = await call.then(() => undefined, (caught: unknown) => caught);
  if (!(error instanceof PalanqueApiError)) throw new Error(`expected a PalanqueApiError, got ${String(error)}`);
  return error;
}

describe('accounts', () => {
  it('logs a fixture user in with the demo password, and refuses another password with 401 invalid_credentials', async () => {
    const anonymous = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    const session = await login(anonymous, 'ana.souza', DEFAULT_MOCK_PASSWORD);
    expect(session).toMatchObject({ token_type: 'Token', user: { id: 1, username: 'ana.souza', is_admin: true } });
    const error = await failure(login(anonymous, 'ana.souza', 'wrong-password-123'));
    expect(error).toMatchObject({ status: 401, code: 'invalid_credentials', message: 'Invalid username or password.' });
  });

  it('answers 401 without a key, and with a key revoked by logout', async () => {
    const anonymous = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    expect(await failure(anonymous.GET('/api/entidade/'))).toMatchObject({ status: 401, code: 'unauthorized' });
    const key = api.token!;
    await logout(api);
    const revoked = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false, token: key });
    expect(await failure(revoked.GET('/api/entidade/'))).toMatchObject({ status: 401, code: 'unauthorized', message: 'The API key is invalid, expired or revoked. Log in again.' });
  });

  it("lists the caller's sessions, revokes one, and changes the password revoking the others", async () => {
    const laptop = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(laptop, 'carlos.pereira', DEFAULT_MOCK_PASSWORD);
    const sessions = unwrap(await api.GET('/api/auth/sessions/')).results;
    expect(sessions).toHaveLength(2);
    expect(sessions.filter((session) => session.current)).toHaveLength(1);
    const other = sessions.find((session) => !session.current)!;
    expect(unwrap(await api.POST('/api/auth/sessions/{session_id}/revoke/', { params: { path: { session_id: other.id } } }))).toEqual({ revoked: true });
    expect(await failure(laptop.GET('/api/entidade/'))).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(await failure(api.POST('/api/auth/sessions/{session_id}/revoke/', { params: { path: { session_id: other.id } } }))).toMatchObject({ status: 404, code: 'not_found' });

    await login(laptop, 'carlos.pereira', DEFAULT_MOCK_PASSWORD);
    const short = await failure(api.POST('/api/auth/change_password/', { body: { current_password: DEFAULT_MOCK_PASSWORD, new_password: 'curta' } }));
    expect(short).toMatchObject({ status: 422, code: 'validation_failed', details: [expect.objectContaining({ field: 'new_password', rule: 'min_length' })] });
    const wrong = await failure(api.POST('/api/auth/change_password/', { body: { current_password: 'not-the-password', new_password: 'uma senha nova e comprida' } }));
    expect(wrong).toMatchObject({ status: 401, code: 'invalid_credentials' });
    const changed = unwrap(await api.POST('/api/auth/change_password/', { body: { current_password: DEFAULT_MOCK_PASSWORD, new_password: 'uma senha nova e comprida' } }));
    expect(changed).toEqual({ changed: true, keys_revoked: 1 });
    expect(await failure(laptop.GET('/api/entidade/'))).toMatchObject({ status: 401 });
    expect(await failure(login(laptop, 'carlos.pereira', DEFAULT_MOCK_PASSWORD))).toMatchObject({ status: 401 });
    await login(laptop, 'carlos.pereira', 'uma senha nova e comprida');
  });

  it("keeps the admins' operations on accounts: create, deactivate (keys revoked, no login), reactivate, end sessions", async () => {
    const admin = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(admin, 'ana.souza', DEFAULT_MOCK_PASSWORD);
    const created = unwrap(await admin.POST('/api/auth/account', { body: { username: 'rita.alves', email: 'Rita.Alves@exemplo.com.br', password: 'a senha da rita aqui' } }));
    expect(created).toMatchObject({ username: 'rita.alves', email: 'rita.alves@exemplo.com.br', is_active: true, is_admin: false });
    expect(await failure(admin.POST('/api/auth/account', { body: { username: 'outra', email: 'rita.alves@exemplo.com.br' } }))).toMatchObject({ status: 409, code: 'conflict' });
    expect(await failure(api.POST('/api/auth/account', { body: { username: 'outra', email: 'outra@exemplo.com.br' } }))).toMatchObject({ status: 403, code: 'forbidden' });
    const rita = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(rita, 'rita.alves', 'a senha da rita aqui');

    const onRita = { params: { path: { user_id: created.id } } };
    expect(unwrap(await admin.POST('/api/auth/account/{user_id}/deactivate/', onRita))).toMatchObject({ is_active: false });
    expect(await failure(rita.GET('/api/auth/profile/'))).toMatchObject({ status: 401 });
    expect(await failure(login(rita, 'rita.alves', 'a senha da rita aqui'))).toMatchObject({ status: 403, code: 'account_inactive' });
    expect(await failure(admin.POST('/api/auth/account/{user_id}/deactivate/', { params: { path: { user_id: 1 } } }))).toMatchObject({ status: 409, code: 'conflict' });
    expect(unwrap(await admin.POST('/api/auth/account/{user_id}/reactivate/', onRita))).toMatchObject({ is_active: true });
    await login(rita, 'rita.alves', 'a senha da rita aqui');
    expect(unwrap(await admin.POST('/api/auth/account/{user_id}/end_sessions/', onRita))).toEqual({ keys_revoked: 1 });
    expect(await failure(rita.GET('/api/auth/profile/'))).toMatchObject({ status: 401 });
    expect(await failure(admin.POST('/api/auth/account/{user_id}/end_sessions/', { params: { path: { user_id: 999999 } } }))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('signs up (the same answer for a taken address, 403 at login until verifyEmail gets the token), then changes the address', async () => {
    const anonymous = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    const volunteer = { username: 'rafael.costa', email: 'Rafael.Costa@exemplo.com.br', password: 'ipê amarelo na praça da matriz' };
    const accepted = unwrap(await anonymous.POST('/api/auth/signup/', { body: volunteer }));
    expect(accepted).toEqual({ status: 'confirmation_sent', email: 'rafael.costa@exemplo.com.br', link_expires_in_seconds: 172800 });
    const taken = unwrap(await anonymous.POST('/api/auth/signup/', { body: { ...volunteer, username: 'outra.pessoa', email: 'ana.souza@palanque.app' } }));
    expect(taken.status).toBe('confirmation_sent');
    expect(mock.confirmationToken('ana.souza@palanque.app')).toBeUndefined();
    expect(await failure(anonymous.POST('/api/auth/signup/', { body: { ...volunteer, username: 'ana.souza' } }))).toMatchObject({ status: 409, code: 'conflict' });
    expect(await failure(login(anonymous, 'rafael.costa', volunteer.password))).toMatchObject({ status: 403, code: 'email_not_verified' });

    const first = mock.confirmationToken('rafael.costa@exemplo.com.br')!;
    unwrap(await anonymous.POST('/api/auth/signup/resend/', { body: { email: volunteer.email } }));
    const token = mock.confirmationToken(volunteer.email)!;
    expect(token).not.toBe(first);
    expect(await failure(anonymous.GET('/api/auth/verify_email/', { params: { query: { token: first } } }))).toMatchObject({ status: 400, code: 'invalid_token' });
    expect(unwrap(await anonymous.GET('/api/auth/verify_email/', { params: { query: { token } } }))).toEqual({ status: 'account_activated', username: 'rafael.costa', email: 'rafael.costa@exemplo.com.br' });
    await login(anonymous, 'rafael.costa', volunteer.password);
    expect(unwrap(await anonymous.GET('/api/auth/profile/'))).toMatchObject({ username: 'rafael.costa', is_active: true });

    // Then a change of address, confirmed from the new one.
    expect(await failure(anonymous.POST('/api/auth/change_email/', { body: { new_email: 'rafa@exemplo.com.br', current_password: 'not the password' } }))).toMatchObject({ status: 401, code: 'invalid_credentials' });
    unwrap(await anonymous.POST('/api/auth/change_email/', { body: { new_email: 'rafa@exemplo.com.br', current_password: volunteer.password } }));
    expect(unwrap(await anonymous.GET('/api/auth/profile/')).email).toBe('rafael.costa@exemplo.com.br');
    const change = mock.confirmationToken('rafa@exemplo.com.br')!;
    expect(unwrap(await anonymous.GET('/api/auth/verify_email/', { params: { query: { token: change } } }))).toEqual({ status: 'email_changed', username: 'rafael.costa', email: 'rafa@exemplo.com.br' });
    expect(unwrap(await anonymous.GET('/api/auth/profile/')).email).toBe('rafa@exemplo.com.br');
  });

  it('deletes the caller\'s account: its key stops working, the address is free, and it cannot be reactivated', async () => {
    const admin = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(admin, 'ana.souza', DEFAULT_MOCK_PASSWORD);
    const created = unwrap(await admin.POST('/api/auth/account', { body: { username: 'rita.alves', email: 'rita.alves@exemplo.com.br', password: 'a senha da rita aqui' } }));
    const rita = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(rita, 'rita.alves', 'a senha da rita aqui');
    expect(await failure(rita.POST('/api/auth/delete_account/', { body: { current_password: 'not the password', confirm: 'DELETE' } }))).toMatchObject({ status: 401, code: 'invalid_credentials' });
    const deleted = unwrap(await rita.POST('/api/auth/delete_account/', { body: { current_password: 'a senha da rita aqui', confirm: 'DELETE' } }));
    expect(deleted).toMatchObject({ deleted: true, username: expect.stringMatching(/^excluido-[0-9a-f]{8}$/), keys_revoked: 1, entities_deleted: [] });
    expect(await failure(rita.GET('/api/auth/profile/'))).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(await failure(login(rita, 'rita.alves', 'a senha da rita aqui'))).toMatchObject({ status: 401, code: 'invalid_credentials' });
    const onRita = { params: { path: { user_id: created.id } } };
    expect(unwrap(await admin.GET('/api/usuario/{user_id}/', onRita))).toMatchObject({ username: deleted.username, first_name: '', is_active: false, deleted_at: deleted.deleted_at });
    expect(await failure(admin.POST('/api/auth/account/{user_id}/reactivate/', onRita))).toMatchObject({ status: 409, code: 'conflict' });
    const anonymous = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    unwrap(await anonymous.POST('/api/auth/signup/', { body: { username: 'rita.alves', email: 'rita.alves@exemplo.com.br', password: 'uma senha nova da rita' } }));
    expect(mock.confirmationToken('rita.alves@exemplo.com.br')).toBeDefined();
  });

  it("exports the caller's data with the server's sections: sessions, teams and bookmarks filled", async () => {
    const exported = unwrap(await api.GET('/api/auth/my_data/'));
    expect(exported.account.username).toBe('carlos.pereira');
    expect(Object.fromEntries(Object.entries(exported.sections).map(([name, section]) => [name, section.source]))).toEqual(
      Object.fromEntries(Object.entries(EXPORT_SECTIONS).map(([name, section]) => [name, section.table])),
    );
    expect(exported.sections.sessions!.rows).toHaveLength(1);
    expect(exported.sections.memberships!.rows.length).toBeGreaterThan(0);
  });

  it("reads the caller's profile and changes its name and phone, refusing a number that is too short", async () => {
    expect(unwrap(await api.GET('/api/auth/profile/'))).toMatchObject({ username: 'carlos.pereira' });
    const updated = unwrap(await api.POST('/api/auth/profile/', { body: { last_name: 'Pereira da Silva', phone: '(11) 98765-4321' } }));
    expect(updated).toMatchObject({ username: 'carlos.pereira', last_name: 'Pereira da Silva', phone: '+5511987654321' });
    expect(unwrap(await api.GET('/api/auth/profile/'))).toMatchObject({ last_name: 'Pereira da Silva', phone: '+5511987654321' });
    const refused = await failure(api.POST('/api/auth/profile/', { body: { phone: '1234' } }));
    expect(refused).toMatchObject({ status: 422, code: 'validation_failed', details: [expect.objectContaining({ field: 'phone', rule: 'phone_number' })] });
  });
});

describe('entities', () => {
  it('shows a created entity in the list and the get, answering 201 with its version', async () => {
    const created = await api.POST('/api/entidade/add/', { body: { nome: 'Ana Paula Ribeiro', nm_urna: 'Ana Paula' } });
    expect(created.response.status).toBe(201);
    expect(created.response.headers.get('ETag')).toBe('"1"');
    const entity = unwrap(created);
    expect(created.data).toMatchObject({ success: true, message: `Entity ${entity.id} created.`, request_id: expect.any(String) });
    expect(entity).toMatchObject({ nome: 'Ana Paula Ribeiro', tp: 'candidato', updated_by: { id: 2, display_name: 'Carlos Pereira' } });

    const list = unwrap(await api.GET('/api/entidade/'));
    expect(list.results.map((row) => row.id)).toEqual([12, 13, 14, entity.id]);
    expect(list.results.at(-1)).toMatchObject({ nome: 'Ana Paula Ribeiro', nm_urna: 'Ana Paula', role: 'owner' });
    expect(unwrap(await api.GET('/api/entidade/data/', { params: { query: { id: String(entity.id) } } }))).toMatchObject({ id: entity.id, nome: 'Ana Paula Ribeiro' });
  });

  it('updates only what the body names: a field left out keeps its value, null clears one, marketshare by id', async () => {
    const before = unwrap(await api.GET('/api/entidade/data/', { params: { query: { id: '12' } } }));
    const share = before.marketshare![0]!;
    const updated = await api.POST('/api/entidade/add/', { body: { id: 12, nome: 'Maria Santos da Silva', email: null, marketshare: [{ id: share.id, marketshare: '25.0' }] } });
    expect(updated.response.status).toBe(200);
    expect(updated.response.headers.get('ETag')).toBe('"2"');
    const after = unwrap(await api.GET('/api/entidade/data/', { params: { query: { id: '12' } } }));
    expect(after).toMatchObject({ nome: 'Maria Santos da Silva', nm_urna: before.nm_urna, cpf: before.cpf });
    expect(after).not.toHaveProperty('email');
    expect(after.marketshare).toEqual([{ ...share, marketshare: '25.0' }]);
  });

  it('answers 409 edit_conflict to a stale If-Match, and 422 naming an unknown marketshare id', async () => {
    await api.POST('/api/entidade/add/', { body: { id: 12, nome: 'Maria' }, params: { header: { 'If-Match': '"1"' } } });
    const stale = await failure(api.POST('/api/entidade/add/', { body: { id: 12, nome: 'Maria' }, params: { header: { 'If-Match': '"1"' } } }));
    expect(stale).toMatchObject({ status: 409, code: 'edit_conflict' });
    expect(stale.details[0]).toMatchObject({ location: 'header', field: 'If-Match', rule: 'current_version', value: '"1"' });
    const unknown = await failure(api.POST('/api/entidade/add/', { body: { id: 12, nome: 'Maria', marketshare: [{ id: 999_999, marketshare: '1' }] } }));
    expect(unknown).toMatchObject({ status: 422, code: 'validation_failed', details: [{ field: 'marketshare.0.id', rule: 'existing_entry' }] });
  });

  it('answers 404 for an entity outside the caller\'s teams, naming the parameter', async () => {
    const error = await failure(api.GET('/api/entidade/data/', { params: { query: { id: '999' } } }));
    expect(error).toMatchObject({ status: 404, code: 'not_found', message: 'There is no entity 999 in your teams.' });
    expect(error.details).toEqual([{ location: 'query', field: 'id', rule: 'in_your_teams', message: 'must be an entity of one of your teams', value: 999 }]);
  });

  it('answers 422 naming a field of a body that breaks the contract', async () => {
    // @ts-expect-error nome is required
    const error = await failure(api.POST('/api/entidade/add/', { body: { nm_urna: 'Sem nome' } }));
    expect(error).toMatchObject({ status: 422, code: 'validation_failed' });
    expect(error.details).toContainEqual(expect.objectContaining({ location: 'body', field: 'nome', rule: 'required' }));
  });

  it("records an edit in the entity's history, and lets a platform admin erase and correct personal data", async () => {
    const before = unwrap(await api.GET('/api/entidade/data/', { params: { query: { id: '12' } } }));
    unwrap(await api.POST('/api/entidade/add/', { body: { id: 12, nome: before.nome, nm_urna: 'Maria do Povo' } }));
    const history = unwrap(await api.GET('/api/entidade/history/', { params: { query: { id: '12' } } }));
    expect(history.results[0]).toMatchObject({ subject: 'entity', action: 'updated', actor: { id: 2, display_name: 'Carlos Pereira' }, changes: [{ field: 'nm_urna', before: before.nm_urna, after: 'Maria do Povo' }] });
    const refused = await failure(api.POST('/api/entidade/personal_data/erase/', { body: { entity_id: 12, fields: ['cpf'], reason: 'LGPD-1' } }));
    expect(refused).toMatchObject({ status: 403, code: 'forbidden' });

    const admin = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(admin, 'ana.souza', DEFAULT_MOCK_PASSWORD);
    const erased = await admin.POST('/api/entidade/personal_data/erase/', { body: { entity_id: 12, fields: ['cpf'], reason: 'LGPD-1' } });
    expect(unwrap(erased)).toMatchObject({ entity_id: 12, fields: ['cpf'], version: 3, history_rows_redacted: 0 });
    expect(erased.response.headers.get('ETag')).toBe('"3"');
    expect(unwrap(await api.GET('/api/entidade/data/', { params: { query: { id: '12' } } }))).not.toHaveProperty('cpf');
    const corrected = unwrap(await admin.POST('/api/entidade/personal_data/correct/', { body: { entity_id: 12, changes: { nm_urna: 'Maria' }, reason: 'LGPD-2' } }));
    expect(corrected).toMatchObject({ fields: ['nm_urna'], version: 4 });
    const actions = unwrap(await api.GET('/api/entidade/history/', { params: { query: { id: '12' } } })).results.map((row) => row.action);
    expect(actions).toEqual(['personal_data_corrected', 'personal_data_erased', 'updated']);
  });

  it("creates an entity from a demo candidacy (the court's personal data for admins only), links and unlinks one, 409 for a second link", async () => {
    const created = unwrap(await api.POST('/api/entidade/from_candidacy/', { params: { query: { tp: 'concorrente' } }, body: { candidacy_id: 502 } }));
    expect(created).toMatchObject({ nome: 'JOÃO CARLOS FERREIRA', nr_urna: 45, partido: '45', position: 'prefeito', candidacy_id: 502, candidacy: { id: 502, sit_tot_turno: { code: 6, label: '2º TURNO' } } });
    expect(created).not.toHaveProperty('cpf');
    expect(await failure(api.POST('/api/entidade/from_candidacy/', { body: { candidacy_id: 502 } }))).toMatchObject({ status: 409, code: 'conflict', details: [expect.objectContaining({ field: 'candidacy_id', rule: 'unique_in_team' })] });
    expect(await failure(api.POST('/api/entidade/from_candidacy/', { body: { candidacy_id: 999999 } }))).toMatchObject({ status: 404, code: 'not_found' });
    const admin = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(admin, 'ana.souza', DEFAULT_MOCK_PASSWORD);
    expect(unwrap(await admin.POST('/api/entidade/from_candidacy/', { body: { candidacy_id: 502 } }))).toMatchObject({ cpf: '111.444.777-35' });

    const linked = unwrap(await api.POST('/api/entidade/add/', { body: { id: 12, nome: 'Maria da Silva Santos', candidacy_id: 501 } }));
    expect(linked.candidacy).toMatchObject({ id: 501, cargo: { cd_cargo: 11, ds_cargo: 'PREFEITO' }, situacao_candidatura: { code: 12, label: 'APTO' } });
    expect(unwrap(await api.GET('/api/entidade/')).results.find((row) => row.id === 12)!.candidacy).toEqual(linked.candidacy);
    expect(await failure(api.POST('/api/entidade/add/', { body: { id: 13, nome: 'João', candidacy_id: 501 } }))).toMatchObject({ status: 409, code: 'conflict' });
    expect(await failure(api.POST('/api/entidade/add/', { body: { id: 13, nome: 'João', candidacy_id: 999999 } }))).toMatchObject({ status: 422, details: [expect.objectContaining({ rule: 'existing_candidacy' })] });
    const unlinked = unwrap(await api.POST('/api/entidade/add/', { body: { id: 12, nome: 'Maria da Silva Santos', candidacy_id: null } }));
    expect(unlinked).not.toHaveProperty('candidacy');
  });

  it('forgets every write on reset()', async () => {
    unwrap(await api.POST('/api/entidade/add/', { body: { nome: 'Temporária' } }));
    mock.reset();
    await login(api, 'carlos.pereira', DEFAULT_MOCK_PASSWORD); // keys are forgotten too
    expect(unwrap(await api.GET('/api/entidade/')).results.map((row) => row.id)).toEqual([12, 13, 14]);
  });
});

describe('operators', () => {
  it('invites (201), and the invitee joins by accepting; another role is 409; removes them', async () => {
    const invited = await api.POST('/api/operators/add_operator/', { body: { entity_id: 12, email: 'joana.lima@exemplo.com.br', role: 'operator' } });
    expect(invited.response.status).toBe(201);
    const invitation = unwrap(invited);
    expect(invitation).toMatchObject({ entity_id: 12, entity_name: 'Maria da Silva Santos', email: 'joana.lima@exemplo.com.br', role: 'operator', state: 'pending', invited_by: { display_name: 'Carlos Pereira' } });
    // Not in the team until she accepts.
    const before = unwrap(await api.GET('/api/operators/get_operators/', { params: { query: { id: '12' } } }));
    expect(before.map((member) => member.username)).toEqual(['carlos.pereira', 'marcos.oliveira']);
    const again = await api.POST('/api/operators/add_operator/', { body: { entity_id: 12, email: 'joana.lima@exemplo.com.br', role: 'operator' } });
    expect(again.response.status).toBe(200);
    expect(await failure(api.POST('/api/operators/add_operator/', { body: { entity_id: 12, email: 'joana.lima@exemplo.com.br', role: 'viewer' } }))).toMatchObject({ status: 409, code: 'conflict' });

    const joana = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(joana, 'joana.lima', DEFAULT_MOCK_PASSWORD);
    expect(unwrap(await joana.GET('/api/operators/invitations/mine/')).map((open) => open.id)).toEqual([invitation.id]);
    const joined = await joana.POST('/api/operators/invitations/accept/', { body: { id: invitation.id } });
    expect(joined.data).toMatchObject({ message: 'Joana Lima is now operator of Maria da Silva Santos.', data: { user_id: 7, role: 'operator' } });
    const members = unwrap(await api.GET('/api/operators/get_operators/', { params: { query: { id: '12' } } }));
    expect(members.map((member) => member.username)).toEqual(['carlos.pereira', 'joana.lima', 'marcos.oliveira']);
    const listed = unwrap(await api.GET('/api/operators/invitations/', { params: { query: { entity_id: '12', state: 'accepted' } } }));
    expect(listed.results.map((row) => row.id)).toEqual([invitation.id]);
    expect(await failure(api.POST('/api/operators/add_operator/', { body: { entity_id: 12, email: 'joana.lima@exemplo.com.br', role: 'operator' } }))).toMatchObject({ status: 409, details: [{ rule: 'not_in_team' }] });

    expect(unwrap(await api.POST('/api/operators/remove_operator/', { body: { entity_id: 12, user_id: 7 } }))).toEqual({ removed: true });
    const removedAgain = await failure(api.POST('/api/operators/remove_operator/', { body: { entity_id: 12, user_id: 7 } }));
    expect(removedAgain).toMatchObject({ status: 404, message: 'User 7 is not in this team.' });
  });

  it('starts with the demo\'s open invitation, which a manager lists', async () => {
    const listed = unwrap(await api.GET('/api/operators/invitations/', { params: { query: { entity_id: '12', state: 'pending' } } }));
    expect(listed.results).toEqual([expect.objectContaining({ email: 'rafael.costa@exemplo.com.br', role: 'viewer', state: 'pending', invited_by: { id: 2, display_name: 'Carlos Pereira' } })]);
  });

  it('lets the invitee decline and a manager withdraw; a closed invitation cannot be accepted', async () => {
    const first = unwrap(await api.POST('/api/operators/add_operator/', { body: { entity_id: 12, email: 'joana.lima@exemplo.com.br', role: 'viewer' } }));
    const joana = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(joana, 'joana.lima', DEFAULT_MOCK_PASSWORD);
    expect(unwrap(await joana.POST('/api/operators/invitations/decline/', { body: { id: first.id } })).state).toBe('declined');
    expect(await failure(joana.POST('/api/operators/invitations/accept/', { body: { id: first.id } }))).toMatchObject({ status: 409, details: [{ rule: 'open_invitation', message: 'is declined' }] });
    const second = unwrap(await api.POST('/api/operators/add_operator/', { body: { entity_id: 12, email: 'joana.lima@exemplo.com.br', role: 'viewer' } }));
    expect(unwrap(await api.POST('/api/operators/invitations/withdraw/', { body: { entity_id: 12, id: second.id } })).state).toBe('withdrawn');
    expect(unwrap(await joana.GET('/api/operators/invitations/mine/'))).toEqual([]);
    expect(await failure(joana.POST('/api/operators/invitations/accept/', { body: { id: 999 } }))).toMatchObject({ status: 404, details: [{ rule: 'existing_invitation' }] });
  });
});

describe('bookmarks, news sources, monitors and SMS credentials', () => {
  it('saves a bookmark (201), lists it, removes it, and 404s the removed one', async () => {
    const saved = await api.POST('/api/research/add_research_bookmark/', { body: { title: 'Pesquisa', url: 'https://www.exemplo.com.br/p' } });
    expect(saved.response.status).toBe(201);
    const { id } = unwrap(saved);
    expect(unwrap(await api.GET('/api/research/get_user_research_bookmarks/')).map((bookmark) => bookmark.id)).toEqual([20, 21, id]);
    expect(unwrap(await api.POST('/api/research/remove_research_bookmark/', { body: { id } }))).toEqual({ id, removed: true });
    expect(await failure(api.POST('/api/research/remove_research_bookmark/', { body: { id } }))).toMatchObject({ status: 404, message: `You have no bookmark ${id}.` });
  });

  it('requests a news source (201), shows it in the public list, and 409s the same address', async () => {
    const requested = await api.POST('/api/news/request_font/', { body: { name: 'Diário do Litoral', url: 'https://diariodolitoral.com.br/' } });
    expect(requested.response.status).toBe(201);
    expect(unwrap(await api.GET('/api/news/get_requested_fonts/')).map((source) => source.name)).toContain('Diário do Litoral');
    const again = await failure(api.POST('/api/news/request_font/', { body: { name: 'Diário', url: 'http://www.diariodolitoral.com.br' } }));
    expect(again).toMatchObject({ status: 409, code: 'conflict', details: [{ field: 'url', rule: 'unique_source' }] });
  });

  it('creates a monitor for an entity (201) and reads it back', async () => {
    const created = await api.POST('/api/monitor_social/add_monitor/', { body: { entity_id: 13, name: 'João — imprensa', keywords: ['João Ferreira'] } });
    expect(created.response.status).toBe(201);
    const { id } = unwrap(created);
    expect(unwrap(await api.GET('/api/monitor_social/data/', { params: { query: { id_monitor: String(id) } } }))).toMatchObject([{ id, entity_id: 13, keywords: ['João Ferreira'] }]);
  });

  it('adds an SMS credential as an admin (201), lists it, and refuses a non-admin (403)', async () => {
    expect(await failure(api.POST('/api/sms/add_credential/', { body: { name: 'X', account_id: 'AC0f3b9c2d1e4a5b6c7d8e9f0a1b2c3d4e', sender_id: '+5511999990000', secret: 's'.repeat(32), entity_id: 12 } }))).toMatchObject({ status: 403 });
    const admin = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(admin, 'ana.souza', DEFAULT_MOCK_PASSWORD);
    const added = await admin.POST('/api/sms/add_credential/', { body: { name: 'Campanha Maria — 2', account_id: 'AC0f3b9c2d1e4a5b6c7d8e9f0a1b2c3d4e', sender_id: '+5511940028923', secret: 's'.repeat(32), entity_id: 12 } });
    expect(added.response.status).toBe(201);
    expect(unwrap(await api.GET('/api/sms/list_credentials/')).map((credential) => credential.id)).toEqual([3, unwrap(added).id]);
  });

  it("sends an SMS campaign, lists and reads it with its counts, masks its numbers for an operator, exports them as CSV, and cancels it", async () => {
    const seeded = unwrap(await api.GET('/api/sms/campaigns/{campaign_id}/', { params: { path: { campaign_id: 77 } } }));
    expect(seeded).toMatchObject({ entity_id: 12, state: 'sending', sent_by: { id: expect.any(Number), display_name: 'Carlos Pereira' }, messages: { delivered: 2, sent: 1 }, cost: [] });
    // Entity 12 is in enforce, the default (issue 42), and these numbers have no consent: the platform admin relaxes it to warn.
    const admin = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(admin, 'ana.souza', DEFAULT_MOCK_PASSWORD);
    unwrap(await admin.PUT('/api/sms/compliance/', { params: { query: { entity_id: '12' } }, body: { mode: 'warn' } }));
    const sent = await api.POST('/api/sms/list_credentials/', { body: { titulo: 'Caminhada', credencial: 3, mensagem: { recipient_list_str: '(11) 98765-0001, 11 98765-0002', mensagem: 'Caminhada no sábado às 9h' } } });
    expect(sent.response.status).toBe(201);
    const { id } = unwrap(sent);
    const listed = unwrap(await api.GET('/api/sms/campaigns/', { params: { query: { entity_id: '12' } } }));
    expect(listed.results.map((campaign) => campaign.id)).toEqual([id, 77]);
    expect(unwrap(await api.GET('/api/sms/campaigns/', { params: { query: { entity_id: '12', state: 'canceled' } } })).count).toBe(0);
    const onCampaign = { params: { path: { campaign_id: id } } };
    expect(unwrap(await api.GET('/api/sms/campaigns/{campaign_id}/messages/', onCampaign)).results.map((message) => [message.recipient, message.status])).toEqual([
      ['+5511987650001', 'queued'],
      ['+5511987650002', 'queued'],
    ]);
    const operator = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(operator, 'marcos.oliveira', DEFAULT_MOCK_PASSWORD);
    expect(unwrap(await operator.GET('/api/sms/campaigns/{campaign_id}/messages/', onCampaign)).results.map((message) => message.recipient)).toEqual(['+55*******0001', '+55*******0002']);
    const csv = await fetch(`${DEFAULT_BASE_URL}/api/sms/campaigns/${id}/messages/export/`, { headers: { Authorization: `Token ${operator.token}` } });
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect((await csv.text()).split('\r\n').map((line) => line.split(',')[1])).toEqual(['recipient', '+55*******0001', '+55*******0002', undefined]);

    const canceled = unwrap(await operator.POST('/api/sms/campaigns/{campaign_id}/cancel/', onCampaign));
    expect(canceled).toMatchObject({ state: 'canceled', canceled_by: { display_name: 'Marcos Oliveira' }, messages: { queued: 0, canceled: 2 } });
    expect(await failure(api.POST('/api/sms/campaigns/{campaign_id}/cancel/', onCampaign))).toMatchObject({ status: 409, code: 'conflict', details: [expect.objectContaining({ rule: 'cancelable_state', value: 'canceled' })] });
    const stranger = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(stranger, 'joana.lima', DEFAULT_MOCK_PASSWORD);
    expect(await failure(stranger.GET('/api/sms/campaigns/{campaign_id}/', onCampaign))).toMatchObject({ status: 404, code: 'not_found', details: [expect.objectContaining({ field: 'campaign_id' })] });
  });

  it('lets the operations it does not keep fall through to the example handlers', async () => {
    const { data, response } = await api.GET('/api/municipios/');
    expect(response.status).toBe(200);
    expect(data?.count).toBe(5570);
  });
});

describe('contacts and consent', () => {
  it('adds a contact (201, 409 for its number again), imports a CSV with a rejected line, masks it for an operator, removes, and erases it from the messages too', async () => {
    const added = await api.POST('/api/contacts/', { body: { entity_id: 12, phone: '(11) 98765-4321', name: 'Mariana Souza', consent: { source: 'Site', given_at: '2026-08-20T12:00:00Z' }, tags: ['Zona  Sul'] } });
    expect(added.response.status).toBe(201);
    expect(unwrap(added)).toMatchObject({ entity_id: 12, phone: '+5511987654321', consent: { source: 'Site', given_at: '2026-08-20T12:00:00.000Z', text: null }, tags: ['zona sul'] });
    expect(await failure(api.POST('/api/contacts/', { body: { entity_id: 12, phone: '11 98765-4321' } }))).toMatchObject({ status: 409, code: 'conflict', details: [expect.objectContaining({ rule: 'unique_per_entity' })] });
    expect(await failure(api.POST('/api/contacts/', { body: { entity_id: 12, phone: '1234' } }))).toMatchObject({ status: 422, details: [expect.objectContaining({ field: 'phone', rule: 'phone_number' })] });

    const csv = 'telefone,nome,consentimento_origem,consentimento_data,tags\n11 98765-4321,,Evento,20/08/2026,evento\n(11) 98765-0002,Paulo Lima,,,\n(11) 98765-0002,De novo,,,\n1234,,,,\n';
    const report = unwrap(await api.POST('/api/contacts/import/', { params: { query: { entity_id: '12' } }, body: csv, bodySerializer: (body: unknown) => body as string, headers: { 'Content-Type': 'text/csv' } }));
    expect(report).toEqual({
      entity_id: 12,
      rows: 4,
      inserted: 1,
      updated: 1,
      unchanged: 0,
      rejected: 2,
      rejections: [
        { line: 4, reason: 'telefone: repeats the number of line 3' },
        { line: 5, reason: 'telefone: not a valid phone number' },
      ],
    });
    const bad = await failure(api.POST('/api/contacts/import/', { params: { query: { entity_id: '12' } }, body: 'nome\nAna\n', bodySerializer: (body: unknown) => body as string, headers: { 'Content-Type': 'text/csv' } }));
    expect(bad).toMatchObject({ status: 422, details: [expect.objectContaining({ field: 'telefone', rule: 'required_column' })] });

    const operator = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(operator, 'marcos.oliveira', DEFAULT_MOCK_PASSWORD);
    const seen = unwrap(await operator.GET('/api/contacts/', { params: { query: { entity_id: '12', tag: 'EVENTO' } } }));
    expect(seen.results).toEqual([expect.objectContaining({ id: unwrap(added).id, phone: '+55*******4321', name: 'M. S.', tags: ['evento', 'zona sul'] })]);
    expect(await failure(operator.DELETE('/api/contacts/{contact_id}/', { params: { path: { contact_id: unwrap(added).id } } }))).toMatchObject({ status: 403, code: 'forbidden' });
    const stranger = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(stranger, 'joana.lima', DEFAULT_MOCK_PASSWORD);
    expect(await failure(stranger.GET('/api/contacts/{contact_id}/', { params: { path: { contact_id: unwrap(added).id } } }))).toMatchObject({ status: 404, details: [expect.objectContaining({ field: 'contact_id', rule: 'in_your_teams' })] });

    const all = unwrap(await api.GET('/api/contacts/', { params: { query: { entity_id: '12' } } }));
    const paulo = all.results.find((contact) => contact.name === 'Paulo Lima')!;
    expect(unwrap(await api.DELETE('/api/contacts/{contact_id}/', { params: { path: { contact_id: paulo.id } } }))).toEqual({ id: paulo.id, entity_id: 12, removed: true });
    const erased = unwrap(await api.POST('/api/contacts/{contact_id}/erase/', { params: { path: { contact_id: unwrap(added).id } }, body: { reason: 'LGPD-1' } }));
    // The demo campaign 77 delivered a message to this number: it keeps only the masked form.
    expect(erased).toEqual({ id: unwrap(added).id, entity_id: 12, erased: true, messages_masked: 1, messages_canceled: 0, replies_masked: 0, suppression_kept: false });
    const recipients = unwrap(await api.GET('/api/sms/campaigns/{campaign_id}/messages/', { params: { path: { campaign_id: 77 } } })).results.map((message) => message.recipient);
    expect(recipients).toContain('+55*******4321');
    expect(recipients).not.toContain('+5511987654321');
    expect(unwrap(await api.GET('/api/contacts/', { params: { query: { entity_id: '12' } } })).count).toBe(0);
  });
});

describe('the chat inbox', () => {
  it("starts with the demo voter's question, answers it, assigns and reads it, and the cursor shows each change once", async () => {
    const listed = unwrap(await api.GET('/api/chat/conversations/', { params: { query: { entity_id: '12' } } }));
    expect(listed.results).toHaveLength(1);
    const [conversation] = listed.results;
    expect(conversation).toMatchObject({ participant: '+5511987654321', unread_count: 1, assignee: null, last_message: { direction: 'in', text: 'Onde vai ser o próximo comício?', status: 'received' } });
    const cursor = unwrap(await api.GET('/api/chat/changes/', { params: { query: { entity_id: '12' } } })).cursor;

    const reply = unwrap(await api.POST('/api/chat/conversations/{conversation_id}/messages/', { params: { path: { conversation_id: conversation!.id } }, body: { text: 'Sábado, às 18h.' } }));
    expect(reply).toMatchObject({ direction: 'out', text: 'Sábado, às 18h.', status: 'queued', sent_by: { display_name: 'Carlos Pereira' } });
    const assigned = unwrap(await api.POST('/api/chat/conversations/{conversation_id}/assign/', { params: { path: { conversation_id: conversation!.id } }, body: { assignee_id: 3 } }));
    expect(assigned).toMatchObject({ unread_count: 0, assignee: { id: 3 } });
    const changes = unwrap(await api.GET('/api/chat/changes/', { params: { query: { entity_id: '12', cursor } } }));
    expect(changes.changes.map((change) => [change.kind, change.message?.text ?? null])).toEqual([
      ['message', 'Sábado, às 18h.'],
      ['assigned', null],
    ]);
    expect(unwrap(await api.GET('/api/chat/changes/', { params: { query: { entity_id: '12', cursor: changes.cursor } } })).changes).toEqual([]);
    const thread = unwrap(await api.GET('/api/chat/conversations/{conversation_id}/messages/', { params: { path: { conversation_id: conversation!.id } } }));
    expect(thread.results.map((message) => message.direction)).toEqual(['in', 'out']);
    const outsider = await failure(api.POST('/api/chat/conversations/{conversation_id}/assign/', { params: { path: { conversation_id: conversation!.id } }, body: { assignee_id: 1 } }));
    expect(outsider).toMatchObject({ status: 422, details: [expect.objectContaining({ field: 'assignee_id', rule: 'team_member_who_may_reply' })] });
  });
});

describe('the messenger Pages', () => {
  it("connects a Page to the owner's entity (201, then 200 renewing it), lists it without its token, refuses an operator, and disconnects it", async () => {
    const page = { entity_id: 12, page_id: '104857600000001', name: 'Maria Santos 13', access_token: 'EAAGmockPageToken' };
    const connected = await api.POST('/api/chat/messenger/pages/', { body: page });
    expect(connected.response.status).toBe(201);
    expect(connected.data!.data).toMatchObject({ page_id: page.page_id, entity_id: 12, connected_by: { display_name: 'Carlos Pereira' } });
    expect((await api.POST('/api/chat/messenger/pages/', { body: { ...page, name: 'Renomeada' } })).response.status).toBe(200);
    const listed = unwrap(await api.GET('/api/chat/messenger/pages/', { params: { query: { entity_id: '12' } } }));
    expect(listed.map((item) => [item.page_id, item.name])).toEqual([[page.page_id, 'Renomeada']]);
    expect(JSON.stringify(listed)).not.toContain(page.access_token);

    const operator = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(operator, 'marcos.oliveira', DEFAULT_MOCK_PASSWORD);
    expect(await failure(operator.POST('/api/chat/messenger/pages/', { body: page }))).toMatchObject({ status: 403, code: 'forbidden' });
    const onPage = { params: { path: { page_id: page.page_id } } };
    expect(await failure(operator.DELETE('/api/chat/messenger/pages/{page_id}/', onPage))).toMatchObject({ status: 403, code: 'forbidden' });
    expect(unwrap(await api.DELETE('/api/chat/messenger/pages/{page_id}/', onPage)).page_id).toBe(page.page_id);
    expect(await failure(api.DELETE('/api/chat/messenger/pages/{page_id}/', onPage))).toMatchObject({ status: 404, details: [expect.objectContaining({ field: 'page_id' })] });
  });
});

describe('monitor alert rules and notifications', () => {
  it("starts with the demo's alert rules (none breached: the mock keeps no metrics), adds one (201), 422s a bad threshold and network, 403s a viewer, removes one", async () => {
    const rules = unwrap(await api.GET('/api/monitor_social/alert_rules/', { params: { query: { monitor_id: '5' } } }));
    expect(rules.map((rule) => [rule.kind, rule.network, rule.threshold, rule.breached])).toEqual([
      ['mentions_spike', 'instagram', 1.15, false],
      ['profile_inactive', null, 3, false],
    ]);
    const added = await api.POST('/api/monitor_social/alert_rules/', { body: { monitor_id: 5, kind: 'followers_drop', network: 'instagram', threshold: 5 } });
    expect(added.response.status).toBe(201);
    const rule = unwrap(added);
    expect(rule).toMatchObject({ monitor_id: 5, kind: 'followers_drop', breached: false, last_fired_at: null });
    const bad = await failure(api.POST('/api/monitor_social/alert_rules/', { body: { monitor_id: 5, kind: 'profile_inactive', network: 'tiktok', threshold: 2.5 } }));
    expect(bad).toMatchObject({ status: 422, details: [{ field: 'threshold', rule: 'threshold_for_kind' }, { field: 'network', rule: 'monitored_network', value: 'tiktok' }] });

    const joana = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(joana, 'joana.lima', DEFAULT_MOCK_PASSWORD);
    expect(await failure(joana.GET('/api/monitor_social/alert_rules/', { params: { query: { monitor_id: '5' } } }))).toMatchObject({ status: 404, details: [{ field: 'monitor_id', rule: 'in_your_teams' }] });
    expect(await failure(joana.DELETE('/api/monitor_social/alert_rules/{rule_id}/', { params: { path: { rule_id: rule.id } } }))).toMatchObject({ status: 404, details: [{ field: 'rule_id' }] });

    expect(unwrap(await api.DELETE('/api/monitor_social/alert_rules/{rule_id}/', { params: { path: { rule_id: rule.id } } }))).toMatchObject({ id: rule.id });
    expect(unwrap(await api.GET('/api/monitor_social/alert_rules/', { params: { query: { monitor_id: '5' } } }))).toHaveLength(2);
  });

  it('notifies the invitee who has an account, and keeps what they read: one, then all', async () => {
    const joana = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(joana, 'joana.lima', DEFAULT_MOCK_PASSWORD);
    expect(unwrap(await joana.GET('/api/notifications/unread_count/'))).toEqual({ unread: 0 });
    const first = unwrap(await api.POST('/api/operators/add_operator/', { body: { entity_id: 12, email: 'joana.lima@exemplo.com.br', role: 'operator' } }));
    const second = unwrap(await api.POST('/api/operators/add_operator/', { body: { entity_id: 13, email: 'joana.lima@exemplo.com.br', role: 'viewer' } }));

    const page = unwrap(await joana.GET('/api/notifications/'));
    expect(page).toMatchObject({ count: 2, unread: 2, total_pages: 1 });
    // The newest first.
    expect(page.results.map((notice) => [notice.type, notice.subject, notice.entity_id])).toEqual([
      ['invitation_received', { kind: 'invitation', id: second.id }, 13],
      ['invitation_received', { kind: 'invitation', id: first.id }, 12],
    ]);
    expect(page.results[1]!.body).toBe('Carlos Pereira convidou você para a equipe de Maria da Silva Santos como operator. Aceite ou recuse em Convites.');
    // Nobody else's.
    expect(unwrap(await api.GET('/api/notifications/')).count).toBe(0);
    expect(await failure(api.POST('/api/notifications/{notification_id}/read/', { params: { path: { notification_id: page.results[0]!.id } } }))).toMatchObject({ status: 404, details: [{ field: 'notification_id', rule: 'yours' }] });

    const read = unwrap(await joana.POST('/api/notifications/{notification_id}/read/', { params: { path: { notification_id: page.results[1]!.id } } }));
    expect(read.read_at).not.toBeNull();
    expect(unwrap(await joana.GET('/api/notifications/', { params: { query: { unread_only: true } } })).results.map((notice) => notice.id)).toEqual([page.results[0]!.id]);
    expect(unwrap(await joana.POST('/api/notifications/read_all/'))).toEqual({ marked: 1, unread: 0 });
    expect(unwrap(await joana.GET('/api/notifications/unread_count/'))).toEqual({ unread: 0 });
  });
});

describe('SMS compliance, footers and the preview', () => {
  it("sets an entity's mode and typed window (owner and admins), a credential's footer, and previews a campaign with its warnings", async () => {
    const settings = { params: { query: { entity_id: '12' } } };
    // Entity 12 runs for mayor, linked to no candidacy of the mock; its `disputa_eleitoral` names the court's 2024
    // municipal election (619): its window is that election's first-round span (issue 42), as the server's calendar gives it.
    const read = unwrap(await api.GET('/api/sms/compliance/', settings));
    expect(read).toMatchObject({ entity_id: 12, mode: 'enforce', window: null, updated_at: null, updated_by: null });
    expect(read.effective_window).toMatchObject({ source: 'election', spans: [{ starts_on: '2024-08-16', ends_on: '2024-10-05', round: 1 }] });
    // A typed window over a voting day is refused (outside_legal_window).
    expect(await failure(api.PUT('/api/sms/compliance/', { ...settings, body: { mode: 'enforce', window: { starts_on: '2024-09-01', ends_on: '2024-10-06' } } }))).toMatchObject({
      status: 422,
      details: [expect.objectContaining({ field: 'window', rule: 'outside_legal_window' })],
    });
    const operator = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(operator, 'marcos.oliveira', DEFAULT_MOCK_PASSWORD);
    expect(await failure(operator.PUT('/api/sms/compliance/', { ...settings, body: { mode: 'off' } }))).toMatchObject({ status: 403, code: 'forbidden' });
    expect(await failure(api.PUT('/api/sms/compliance/', { ...settings, body: { mode: 'warn', window: { starts_on: '2026-08-16', ends_on: '2026-08-01' } } }))).toMatchObject({
      status: 422,
      details: [expect.objectContaining({ field: 'window.ends_on', rule: 'window_order' })],
    });
    const set = unwrap(await api.PUT('/api/sms/compliance/', { ...settings, body: { mode: 'enforce', window: { starts_on: '2024-08-20', ends_on: '2024-09-30' } } }));
    expect(set).toMatchObject({ mode: 'enforce', effective_window: { starts_on: '2024-08-20', ends_on: '2024-09-30', source: 'typed', election: { ano: 2024, dt_eleicao: '2024-10-06' } } });

    const credential = { params: { path: { credential_id: 3 } } };
    expect(await failure(operator.PATCH('/api/sms/credentials/{credential_id}/', { ...credential, body: { footer: 'Maria 13. Responda SAIR' } }))).toMatchObject({ status: 403 });
    expect(await failure(api.PATCH('/api/sms/credentials/{credential_id}/', { ...credential, body: { footer: 'Maria 13' } }))).toMatchObject({ status: 422, details: [expect.objectContaining({ rule: 'opt_out_keyword' })] });
    expect(unwrap(await api.PATCH('/api/sms/credentials/{credential_id}/', { ...credential, body: { footer: null } }))).toMatchObject({ id: 3, footer: null });

    const campaign = { titulo: 'Convite', credencial: 3, mensagem: { recipient_list_str: '(11) 98765-0001, 11987650001', mensagem: 'Reunião às 19h' } };
    const preview = unwrap(await operator.POST('/api/sms/campaigns/preview/', { body: campaign }));
    expect(preview).toMatchObject({ text: 'Reunião às 19h', footer: null, messages: 1, rejected: 1, compliance: { mode: 'enforce', would_refuse: true } });
    expect(preview.compliance.warnings.map((warning) => warning.rule)).toEqual(['consent_missing', 'footer_missing', 'outside_campaign_window', 'election_over']);
    expect(preview.compliance.warnings[0]).toMatchObject({ numbers: 1, examples: ['+55*******0001'] });
    const history = unwrap(await api.GET('/api/entidade/history/', { params: { query: { id: '12' } } })).results;
    expect(history.map((row) => [row.subject, row.action])).toEqual(expect.arrayContaining([['sms_compliance', 'updated'], ['sms_credential', 'updated']]));
  });
});

describe("the electoral court's demo data", () => {
  it('lists the elections, offices, parties and code tables of the demo data', async () => {
    expect(unwrap(await api.GET('/api/elections/')).map((election) => election.cd_eleicao)).toEqual([619, 544, 546]);
    expect(unwrap(await api.GET('/api/elections/', { params: { query: { abrangencia: 'MUNICIPAL' } } })).map((election) => election.ds_eleicao)).toEqual(['Eleições Municipais 2024']);
    expect(unwrap(await api.GET('/api/elections/offices/'))).toContainEqual({ cd_cargo: 11, ds_cargo: 'PREFEITO', ballot_digits: 2 });
    const parties = unwrap(await api.GET('/api/elections/parties/', { params: { query: { cd_eleicao: 619 } } }));
    expect(parties.federacoes).toContainEqual({ nr_federacao: 1, sg_federacao: 'FE BRASIL', nm_federacao: 'Federação Brasil da Esperança - FE BRASIL', partidos: [13, 43, 65] });
    expect(await failure(api.GET('/api/elections/parties/', { params: { query: { cd_eleicao: 999 } } }))).toMatchObject({ status: 404, code: 'not_found', details: [expect.objectContaining({ field: 'cd_eleicao' })] });
    expect(unwrap(await api.GET('/api/elections/codes/', { params: { query: { table: 'genero' } } }))).toEqual({ genero: [{ code: 2, label: 'MASCULINO' }, { code: 4, label: 'FEMININO' }] });
  });

  it('searches candidacies as the server does: name without accents, party acronym, municipality, 400 naming a bad filter', async () => {
    const ids = async (query: Record<string, string | number>) => unwrap(await api.GET('/api/elections/candidacies/', { params: { query: query as never } })).results.map((result) => result.id);
    expect(await ids({ nome: 'joao davila' })).toEqual([503]);
    expect(await ids({ nome: 'maria' })).toEqual([507, 501]);
    expect(await ids({ partido: 'psdb' })).toEqual([502, 506, 504]);
    expect(await ids({ cd_eleicao: 619, cd_cargo: 11, codigo_ibge: 3550308 })).toEqual([502, 501]);
    const page = unwrap(await api.GET('/api/elections/candidacies/', { params: { query: { uf: 'SP', cd_eleicao: 619 } } }));
    expect(page).toMatchObject({ count: 4, total_pages: 1, links: { next: null, previous: null } });
    expect(await failure(api.GET('/api/elections/candidacies/', { params: { query: { partido: 'PXT' } } }))).toMatchObject({ status: 400, code: 'bad_request', details: [expect.objectContaining({ field: 'partido', rule: 'known_party' })] });
    expect(await failure(api.GET('/api/elections/candidacies/', { params: { query: { page: 2 } } }))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('masks a candidacy\'s personal data for everyone but platform admins, and answers 304 to its ETag', async () => {
    expect(unwrap(await api.GET('/api/elections/candidacy/', { params: { query: { id: 501 } } }))).toMatchObject({ cpf: '***.982.247-**', titulo_eleitor: '********0183', personal_data: 'masked' });
    expect(unwrap(await api.GET('/api/elections/candidacy/', { params: { query: { id: 501 } } }))).not.toHaveProperty('cor_raca');
    const admin = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(admin, 'ana.souza', DEFAULT_MOCK_PASSWORD);
    expect(unwrap(await admin.GET('/api/elections/candidacy/', { params: { query: { id: 501 } } }))).toMatchObject({ cpf: '529.982.247-25', cor_raca: { code: 3, label: 'PARDA' }, personal_data: 'whole' });
    expect(await failure(api.GET('/api/elections/candidacy/', { params: { query: { id: 99999 } } }))).toMatchObject({ status: 404, code: 'not_found', details: [expect.objectContaining({ field: 'id', rule: 'existing_candidacy' })] });

    const headers = { Authorization: `Token ${api.token}` };
    const first = await fetch(`${DEFAULT_BASE_URL}/api/elections/candidacy/?id=501`, { headers });
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^W\/"/);
    const again = await fetch(`${DEFAULT_BASE_URL}/api/elections/candidacy/?id=501`, { headers: { ...headers, 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    const asAdmin = await fetch(`${DEFAULT_BASE_URL}/api/elections/candidacy/?id=501`, { headers: { Authorization: `Token ${admin.token}`, 'If-None-Match': etag } });
    expect(asAdmin.status).toBe(200); // the whole view is another representation
  });
});

describe('the answers', () => {
  it("every answer of this file's calls has a status the operation declares and a body of that status's schema", async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormats as unknown as (instance: Ajv2020) => void)(ajv);
    ajv.addSchema(contract as object, 'contract');
    const paths = (contract as { paths: Record<string, Record<string, { responses: Record<string, { $ref?: string; content?: Record<string, { schema: object }> }> }>> }).paths;
    const checked = await Promise.all(answers);
    expect(checked.length).toBeGreaterThan(40);
    for (const { method, path, status, body } of checked) {
      const template = Object.keys(paths).find((candidate) => new RegExp(`^${candidate.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path) && paths[candidate]![method]);
      expect(template, `${method} ${path}`).toBeDefined();
      let response = paths[template!]![method]!.responses[String(status)];
      expect(response, `${method} ${path} answered ${status}, which it does not declare`).toBeDefined();
      if (response!.$ref) response = ajv.getSchema(`contract${response!.$ref}`)?.schema as typeof response;
      const schema = response!.content?.['application/json']?.schema;
      if (!schema) continue;
      const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\//g, '"$ref":"contract#/')));
      expect(validate(body), `${method} ${path} ${status}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
  });
});

describe('sdk/msw-fixtures.json', () => {
  it('is fixtures/ (run `npm run generate` after changing them)', async () => {
    expect(await readFile(mswFixturesPath, 'utf8')).toBe(mswFixturesText());
  });
});
