/**
 * The front end's view of the API, written once on the SDK and run, with the same assertions, against
 * every backend a front-end developer may point a base URL at: the stateful msw handlers, the sandbox,
 * the real server (SQLite and PostgreSQL), and for its stateless part the Prism mock. A behaviour that
 * differs between backends fails here, so switching the base URL changes nothing else.
 *
 * Each test file calls `frontEndScenarios` with a backend; see test/scenarios-*.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, login, PalanqueApiError, unwrap, type PalanqueClient } from '../../sdk/index.js';

export interface RunningBackend {
  baseUrl: string;
  /** A platform admin's username and password (creating SMS credentials takes one). */
  admin: { username: string; password: string };
  /** A registered user who is in none of the admin's teams. */
  newcomer: { username: string; email: string; password: string };
  /**
   * The token of the confirmation link mailed to `email` after a sign-up (a backend with state takes
   * sign-ups from anyone, as SIGNUP=open does; the mock says what its mail would hold).
   */
  confirmationToken?(email: string): Promise<string>;
  close(): Promise<void>;
}

export interface ScenarioBackend {
  name: string;
  start(): Promise<RunningBackend>;
  /** A mock that remembers nothing (Prism): only the scenarios that need no state run. */
  stateless?: boolean;
}

/** Registers the scenarios for one backend. */
export function frontEndScenarios(backend: ScenarioBackend): void {
  describe(`the front end's scenarios on ${backend.name}`, () => {
    let running: RunningBackend;
    let api: PalanqueClient;

    beforeAll(async () => {
      running = await backend.start();
      api = createApiClient({ baseUrl: running.baseUrl, retry: false });
      await login(api, running.admin.username, running.admin.password);
    });

    afterAll(async () => {
      await running?.close();
    });

    describe('what any backend answers, a mock without state included', () => {
      it('logs in: a key and the user', async () => {
        const anonymous = createApiClient({ baseUrl: running.baseUrl, retry: false });
        const session = await login(anonymous, running.admin.username, running.admin.password);
        expect(session.token).toMatch(/\S{8,}/);
        expect(anonymous.token).toBe(session.token);
        expect(session.user).toEqual(expect.objectContaining({ username: expect.any(String), email: expect.stringContaining('@') }));
      });

      it('lists the entities, then reads one of them in the shape addEntity takes, with its ETag', async () => {
        const page = unwrap(await api.GET('/api/entidade/'));
        expect(page.results.length).toBeGreaterThan(0);
        const [first] = page.results;
        const { data, response } = await api.GET('/api/entidade/data/', { params: { query: { id: String(first!.id) } } });
        expect(data!.data.nome).toEqual(expect.any(String));
        expect(response.headers.get('ETag')).toMatch(/^"\d+"$/);
      });

      it('answers 401 unauthorized in the error model without a key', async () => {
        const anonymous = createApiClient({ baseUrl: running.baseUrl, retry: false });
        const error = await failure(anonymous.GET('/api/entidade/'));
        expect([error.status, error.code]).toEqual([401, 'unauthorized']);
        expect(error.message).not.toBe('');
      });

      it('answers 422 validation_failed naming the field when a required one is missing', async () => {
        const error = await failure(api.POST('/api/entidade/add/', { body: { nm_urna: 'Sem Nome' } as never }));
        expect([error.status, error.code]).toEqual([422, 'validation_failed']);
        expect(error.details.map((detail) => detail.field)).toContain('nome');
      });
    });

    // Registered only where there is state to keep: a mock without it has nothing to show here.
    if (!backend.stateless) describe('what a backend with state answers', () => {
      const suffix = Math.random().toString(36).slice(2, 8);
      let entityId: number;
      let etag: string;

      it('creates an entity (201), which the list and a read then show', async () => {
        const { data, response } = await api.POST('/api/entidade/add/', { body: { nome: `Candidata ${suffix}`, nm_urna: `Candidata ${suffix}`, email: `candidata.${suffix}@exemplo.com.br` } });
        expect(response.status).toBe(201);
        entityId = data!.data.id;
        const names = await entityNames(api);
        expect(names).toContain(`Candidata ${suffix}`);
        const read = await api.GET('/api/entidade/data/', { params: { query: { id: String(entityId) } } });
        expect(read.data!.data).toEqual(expect.objectContaining({ nome: `Candidata ${suffix}`, email: `candidata.${suffix}@exemplo.com.br` }));
        etag = read.response.headers.get('ETag')!;
      });

      it('updates one field and keeps the others; the old ETag is then 409 edit_conflict', async () => {
        const { response } = await api.POST('/api/entidade/add/', { body: { id: entityId, nome: `Candidata ${suffix}`, nm_urna: 'Nome Novo' }, headers: { 'If-Match': etag } });
        expect(response.status).toBe(200);
        const read = unwrap(await api.GET('/api/entidade/data/', { params: { query: { id: String(entityId) } } }));
        expect(read).toEqual(expect.objectContaining({ nm_urna: 'Nome Novo', email: `candidata.${suffix}@exemplo.com.br` }));
        const error = await failure(api.POST('/api/entidade/add/', { body: { id: entityId, nome: 'Outra' }, headers: { 'If-Match': etag } }));
        expect([error.status, error.code]).toEqual([409, 'edit_conflict']);
      });

      it('answers 404 not_found for an entity that does not exist', async () => {
        const error = await failure(api.GET('/api/entidade/data/', { params: { query: { id: '999999' } } }));
        expect([error.status, error.code]).toEqual([404, 'not_found']);
      });

      it('signs up, is told to confirm the address at login, confirms it through the mailed link, then logs in', async () => {
        const anonymous = createApiClient({ baseUrl: running.baseUrl, retry: false });
        const volunteer = { username: `voluntaria.${suffix}`, email: `voluntaria.${suffix}@exemplo.com.br`, password: 'ipê amarelo na praça da matriz', first_name: 'Rita' };
        const accepted = unwrap(await anonymous.POST('/api/auth/signup/', { body: volunteer }));
        expect(accepted).toEqual(expect.objectContaining({ status: 'confirmation_sent', email: volunteer.email }));
        // The sign-up is recorded after the answer (so its timing tells nothing): the mail says it is there.
        if (!running.confirmationToken) throw new Error(`${backend.name} cannot tell a sign-up's confirmation token`);
        const token = await running.confirmationToken(volunteer.email);
        const early = await failure(login(anonymous, volunteer.username, volunteer.password));
        expect([early.status, early.code]).toEqual([403, 'email_not_verified']);
        const confirmed = unwrap(await anonymous.GET('/api/auth/verify_email/', { params: { query: { token } } }));
        expect(confirmed).toEqual({ status: 'account_activated', username: volunteer.username, email: volunteer.email });
        const session = await login(anonymous, volunteer.username, volunteer.password);
        expect(session.user).toEqual(expect.objectContaining({ username: volunteer.username, first_name: 'Rita', is_active: true }));
        const again = await failure(anonymous.GET('/api/auth/verify_email/', { params: { query: { token } } }));
        expect([again.status, again.code]).toEqual([400, 'invalid_token']);
      });

      it('invites a user to the team, who accepts and joins; lists and removes them', async () => {
        const invited = await api.POST('/api/operators/add_operator/', { body: { entity_id: entityId, email: running.newcomer.email, role: 'operator' } });
        expect(invited.response.status).toBe(201);
        expect(invited.data!.data).toEqual(expect.objectContaining({ email: running.newcomer.email, role: 'operator', state: 'pending' }));
        const pending = unwrap(await api.GET('/api/operators/invitations/', { params: { query: { entity_id: String(entityId), state: 'pending' } } }));
        expect(pending.results.map((invitation) => invitation.id)).toContain(invited.data!.data.id);
        // Not in the team before accepting.
        const before = unwrap(await api.GET('/api/operators/get_operators/', { params: { query: { id: String(entityId) } } }));
        expect(before.map((operator) => operator.username)).not.toContain(running.newcomer.username);

        const newcomer = createApiClient({ baseUrl: running.baseUrl, retry: false });
        await login(newcomer, running.newcomer.username, running.newcomer.password);
        const mine = unwrap(await newcomer.GET('/api/operators/invitations/mine/'));
        expect(mine.map((invitation) => invitation.id)).toContain(invited.data!.data.id);
        const accepted = unwrap(await newcomer.POST('/api/operators/invitations/accept/', { body: { id: invited.data!.data.id } }));
        expect(accepted).toEqual(expect.objectContaining({ entity_id: entityId, role: 'operator' }));
        const operators = unwrap(await api.GET('/api/operators/get_operators/', { params: { query: { id: String(entityId) } } }));
        const joined = operators.find((operator) => operator.username === running.newcomer.username);
        expect(joined).toEqual(expect.objectContaining({ role: 'operator' }));
        const removed = await api.POST('/api/operators/remove_operator/', { body: { entity_id: entityId, user_id: joined!.user_id } });
        expect(removed.response.status).toBe(200);
        const after = unwrap(await api.GET('/api/operators/get_operators/', { params: { query: { id: String(entityId) } } }));
        expect(after.map((operator) => operator.username)).not.toContain(running.newcomer.username);
      });

      it('lets a manager withdraw an invitation, and the invitee decline one', async () => {
        const first = unwrap(await api.POST('/api/operators/add_operator/', { body: { entity_id: entityId, email: running.newcomer.email, role: 'viewer' } }));
        const withdrawn = unwrap(await api.POST('/api/operators/invitations/withdraw/', { body: { entity_id: entityId, id: first.id } }));
        expect(withdrawn.state).toBe('withdrawn');
        const second = unwrap(await api.POST('/api/operators/add_operator/', { body: { entity_id: entityId, email: running.newcomer.email, role: 'viewer' } }));
        const newcomer = createApiClient({ baseUrl: running.baseUrl, retry: false });
        await login(newcomer, running.newcomer.username, running.newcomer.password);
        expect(unwrap(await newcomer.POST('/api/operators/invitations/decline/', { body: { id: second.id } })).state).toBe('declined');
        const late = await failure(newcomer.POST('/api/operators/invitations/accept/', { body: { id: first.id } }));
        expect([late.status, late.code]).toEqual([409, 'conflict']);
      });

      it('saves a research bookmark, lists and removes it', async () => {
        const url = `https://pesquisa.exemplo.com.br/${suffix}`;
        const saved = await api.POST('/api/research/add_research_bookmark/', { body: { title: `Pesquisa ${suffix}`, url } });
        expect(saved.response.status).toBe(201);
        const id = saved.data!.data.id;
        expect(await bookmarkUrls(api)).toContain(url);
        const removed = await api.POST('/api/research/remove_research_bookmark/', { body: { id } });
        expect(removed.response.status).toBe(200);
        expect(await bookmarkUrls(api)).not.toContain(url);
        const again = await failure(api.POST('/api/research/remove_research_bookmark/', { body: { id } }));
        expect([again.status, again.code]).toEqual([404, 'not_found']);
      });

      it('requests a news source, which the public list then shows as requested', async () => {
        const url = `https://noticias-${suffix}.exemplo.com.br/`;
        const requested = await api.POST('/api/news/request_font/', { body: { name: `Notícias ${suffix}`, url } });
        expect(requested.response.status).toBe(201);
        expect(requested.data!.data).toEqual(expect.objectContaining({ status: 'requested' }));
        const listed = unwrap(await api.GET('/api/news/get_requested_fonts/'));
        expect(listed.map((source) => source.url)).toContain(url);
      });

      it('adds an SMS credential, listed without its secret; the same account and sender again is 409 conflict', async () => {
        const credential = { name: `Campanha ${suffix}`, account_id: `AC${randomHex(32)}`, sender_id: '+5511912345678', secret: `segredo-de-teste-${suffix}`, entity_id: entityId };
        const added = await api.POST('/api/sms/add_credential/', { body: credential });
        expect(added.response.status).toBe(201);
        const listed = unwrap(await api.GET('/api/sms/list_credentials/'));
        const found = listed.find((item) => item.id === added.data!.data.id);
        expect(found).toEqual(expect.objectContaining({ name: credential.name }));
        expect(JSON.stringify(listed)).not.toContain(credential.secret);
        const error = await failure(api.POST('/api/sms/add_credential/', { body: credential }));
        expect([error.status, error.code]).toEqual([409, 'conflict']);
      });
    });
  });
}

/** The PalanqueApiError a call throws (the SDK throws for every answer that is not 2xx). */
async function failure(call: Promise<unknown>): Promise<PalanqueApiError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof PalanqueApiError) return error;
    throw error;
  }
  throw new Error('the call succeeded; an error answer was expected');
}

function randomHex(length: number): string {
  return Array.from({ length }, () => Math.floor(Math.random() * 16).toString(16)).join('');
}

async function entityNames(api: PalanqueClient): Promise<string[]> {
  const names: string[] = [];
  for (let page = 1; ; page += 1) {
    const { results, links } = unwrap(await api.GET('/api/entidade/', { params: { query: { page } } }));
    names.push(...results.map((entity) => entity.nome));
    if (!links.next) return names;
  }
}

async function bookmarkUrls(api: PalanqueClient): Promise<string[]> {
  return unwrap(await api.GET('/api/research/get_user_research_bookmarks/')).map((bookmark) => bookmark.url);
}
