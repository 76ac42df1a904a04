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

      it("sends an SMS campaign and cancels it at once; the entity's list, its report, its per-recipient statuses and their CSV show it", async () => {
        const credential = unwrap(
          await api.POST('/api/sms/add_credential/', { body: { name: `Relatórios ${suffix}`, account_id: `AC${randomHex(32)}`, sender_id: '+5511912340000', secret: `segredo-de-teste-${suffix}`, entity_id: entityId } }),
        );
        // A new entity is in enforce (issue 42) and these numbers have no consent: the platform admin relaxes it to warn.
        unwrap(await api.PUT('/api/sms/compliance/', { params: { query: { entity_id: String(entityId) } }, body: { mode: 'warn' } }));
        const sent = await api.POST('/api/sms/list_credentials/', {
          body: { titulo: `Caminhada ${suffix}`, credencial: credential.id, mensagem: { recipient_list_str: '(21) 98765-0001\n21 98765-0002', mensagem: 'Caminhada no sábado às 9h' } },
        });
        expect(sent.response.status).toBe(201);
        const onCampaign = { params: { path: { campaign_id: sent.data!.data.id } } };
        // Canceled before its messages can be delivered: those not handed to the provider yet are not sent.
        const canceled = unwrap(await api.POST('/api/sms/campaigns/{campaign_id}/cancel/', onCampaign));
        expect(canceled).toEqual(expect.objectContaining({ id: sent.data!.data.id, state: 'canceled', entity_id: entityId, finished_at: expect.any(String), canceled_by: expect.objectContaining({ id: expect.any(Number) }) }));
        const counted = Object.values(canceled.messages).reduce((sum, count) => sum + count, 0);
        expect(counted).toBe(2);
        const again = await failure(api.POST('/api/sms/campaigns/{campaign_id}/cancel/', onCampaign));
        expect([again.status, again.code]).toEqual([409, 'conflict']);

        const listed = unwrap(await api.GET('/api/sms/campaigns/', { params: { query: { entity_id: String(entityId), state: 'canceled' } } }));
        expect(listed.results.map((campaign) => campaign.id)).toEqual([sent.data!.data.id]);
        expect(unwrap(await api.GET('/api/sms/campaigns/{campaign_id}/', onCampaign))).toEqual(expect.objectContaining({ titulo: `Caminhada ${suffix}`, accepted: 2, state: 'canceled' }));
        const messages = unwrap(await api.GET('/api/sms/campaigns/{campaign_id}/messages/', onCampaign));
        expect(messages.results.map((message) => message.recipient)).toEqual(['+5521987650001', '+5521987650002']);
        const csv = await api.GET('/api/sms/campaigns/{campaign_id}/messages/export/', { ...onCampaign, parseAs: 'text' });
        expect(csv.response.headers.get('Content-Type')).toMatch(/^text\/csv/);
        expect((csv.data as string).split('\r\n').slice(0, 3).map((line) => line.split(',')[1])).toEqual(['recipient', '+5521987650001', '+5521987650002']);
        const error = await failure(api.GET('/api/sms/campaigns/{campaign_id}/', { params: { path: { campaign_id: 2_000_000_000 } } }));
        expect([error.status, error.code]).toEqual([404, 'not_found']);
      });

      it("sets a credential's footer and the entity's compliance, previews a campaign to its contacts, and sees an enforced send refused", async () => {
        const entity = { params: { query: { entity_id: String(entityId) } } };
        // Under warn, which only a platform admin may set since issue 42 (a new entity starts in enforce).
        unwrap(await api.PUT('/api/sms/compliance/', { ...entity, body: { mode: 'warn' } }));
        expect(unwrap(await api.GET('/api/sms/compliance/', entity))).toEqual(expect.objectContaining({ entity_id: entityId, mode: 'warn', window: null }));
        const credential = unwrap(
          await api.POST('/api/sms/add_credential/', { body: { name: `Rodapé ${suffix}`, account_id: `AC${randomHex(32)}`, sender_id: '+5511912349999', secret: `segredo-de-teste-${suffix}`, entity_id: entityId } }),
        );
        expect(credential.footer).toBeNull();
        const footer = `Candidata ${suffix}. Para sair, responda SAIR`;
        const refused = await failure(api.PATCH('/api/sms/credentials/{credential_id}/', { params: { path: { credential_id: credential.id } }, body: { footer: `Candidata ${suffix}` } }));
        expect([refused.status, refused.details[0]?.rule]).toEqual([422, 'opt_out_keyword']);
        expect(unwrap(await api.PATCH('/api/sms/credentials/{credential_id}/', { params: { path: { credential_id: credential.id } }, body: { footer } })).footer).toBe(footer);

        const tag = `apoio-${suffix}`;
        const contact = await api.POST('/api/contacts/', { body: { entity_id: entityId, phone: '(21) 98765-1111', consent: { source: 'Comício', given_at: '2026-08-22T20:00:00-03:00' }, tags: [tag] } });
        expect(contact.response.status).toBe(201);
        const toContacts = { titulo: `Convite ${suffix}`, credencial: credential.id, mensagem: { mensagem: 'Comício sábado às 18h', contatos: { tags: [tag] } } };
        const preview = unwrap(await api.POST('/api/sms/campaigns/preview/', { body: toContacts }));
        expect(preview).toEqual(expect.objectContaining({ text: `Comício sábado às 18h\n${footer}`, footer, messages: 1, compliance: { mode: 'warn', warnings: [], would_refuse: false } }));
        const toList = { ...toContacts, mensagem: { mensagem: 'Comício sábado às 18h', recipient_list_str: '(21) 98765-1111, (21) 98765-2222' } };
        const listed = unwrap(await api.POST('/api/sms/campaigns/preview/', { body: toList }));
        expect(listed.compliance.warnings).toEqual([expect.objectContaining({ rule: 'consent_missing', numbers: 1, examples: ['+55*******2222'] })]);

        // A window that closed, enforced: the send is refused naming the rule, and nothing is sent.
        const enforced = unwrap(await api.PUT('/api/sms/compliance/', { ...entity, body: { mode: 'enforce', window: { starts_on: '2024-08-16', ends_on: '2024-10-05' } } }));
        expect(enforced.effective_window).toEqual({ starts_on: '2024-08-16', ends_on: '2024-10-05', spans: [{ round: 1, starts_on: '2024-08-16', ends_on: '2024-10-05' }], source: 'typed', election: null, calendar_election_id: null });
        const error = await failure(api.POST('/api/sms/list_credentials/', { body: toContacts }));
        expect([error.status, error.code, error.details.map((detail) => detail.rule)]).toEqual([422, 'validation_failed', ['outside_campaign_window']]);
        expect(unwrap(await api.GET('/api/sms/campaigns/', entity)).results.map((campaign) => campaign.titulo)).not.toContain(`Convite ${suffix}`);
        await api.DELETE('/api/contacts/{contact_id}/', { params: { path: { contact_id: contact.data!.data.id } } });
      });

      it("keeps an entity's contacts: adds one with consent, imports a CSV (a bad line reported), lists by tag, removes and erases", async () => {
        const entity = { params: { query: { entity_id: String(entityId) } } };
        const added = await api.POST('/api/contacts/', {
          body: { entity_id: entityId, phone: '(21) 98765-4321', name: 'Mariana Souza', consent: { source: 'Ficha de voluntários', given_at: '2026-08-20T19:30:00-03:00' }, tags: ['Voluntários'] },
        });
        expect(added.response.status).toBe(201);
        expect(added.data!.data).toEqual(expect.objectContaining({ phone: '+5521987654321', consent: expect.objectContaining({ source: 'Ficha de voluntários', text: null }), tags: ['voluntários'] }));
        const repeat = await failure(api.POST('/api/contacts/', { body: { entity_id: entityId, phone: '+55 21 98765-4321' } }));
        expect([repeat.status, repeat.code, repeat.details[0]?.rule]).toEqual([409, 'conflict', 'unique_per_entity']);

        // The file goes as it is, with its own media type.
        const csv = 'telefone;nome;consentimento_origem;consentimento_data;tags\n(21) 99876-0002;Paulo Lima;Site;21/08/2026;zona norte|voluntários\n1234;Errado;;;\n';
        const report = unwrap(await api.POST('/api/contacts/import/', { ...entity, body: csv, bodySerializer: (body: unknown) => body as string, headers: { 'Content-Type': 'text/csv' } }));
        expect(report).toEqual({ entity_id: entityId, rows: 2, inserted: 1, updated: 0, unchanged: 0, rejected: 1, rejections: [{ line: 3, reason: 'telefone: not a valid phone number' }] });
        const volunteers = unwrap(await api.GET('/api/contacts/', { params: { query: { entity_id: String(entityId), tag: 'VOLUNTÁRIOS' } } }));
        expect(volunteers.results.map((contact) => contact.phone)).toEqual(['+5521987654321', '+5521998760002']);
        const paulo = volunteers.results[1]!;
        expect(paulo).toEqual(expect.objectContaining({ name: 'Paulo Lima', consent: expect.objectContaining({ given_at: '2026-08-21T03:00:00.000Z' }), tags: ['voluntários', 'zona norte'] }));
        expect(unwrap(await api.GET('/api/contacts/{contact_id}/', { params: { path: { contact_id: paulo.id } } })).name).toBe('Paulo Lima');

        expect(unwrap(await api.DELETE('/api/contacts/{contact_id}/', { params: { path: { contact_id: paulo.id } } }))).toEqual({ id: paulo.id, entity_id: entityId, removed: true });
        const erased = unwrap(await api.POST('/api/contacts/{contact_id}/erase/', { params: { path: { contact_id: added.data!.data.id } }, body: { reason: `LGPD-${suffix}` } }));
        expect(erased).toEqual({ id: added.data!.data.id, entity_id: entityId, erased: true, messages_masked: 0, messages_canceled: 0, replies_masked: 0, suppression_kept: false });
        expect(unwrap(await api.GET('/api/contacts/', entity)).count).toBe(0);
        const gone = await failure(api.GET('/api/contacts/{contact_id}/', { params: { path: { contact_id: paulo.id } } }));
        expect([gone.status, gone.code]).toEqual([404, 'not_found']);
      });

      it("opens an entity's inbox: a voter's question is answered and marked read, and the changes after a cursor show both", async () => {
        // Every backend with state opens with a voter's question in one of its entities' inboxes.
        const inbox = await firstConversation(api);
        expect(inbox, 'a conversation in some inbox').toBeDefined();
        const { entityId: inboxEntity, conversation } = inbox!;
        expect(conversation).toEqual(expect.objectContaining({ channel: 'sms', unread_count: expect.any(Number), last_message: expect.objectContaining({ direction: 'in' }) }));
        const entity = { params: { query: { entity_id: String(inboxEntity) } } };
        const { cursor } = unwrap(await api.GET('/api/chat/changes/', entity));
        const onConversation = { params: { path: { conversation_id: conversation.id } } };
        const text = `O comício é sábado, às 18h (${suffix}).`;
        const answer = unwrap(await api.POST('/api/chat/conversations/{conversation_id}/messages/', { ...onConversation, body: { text } }));
        expect(answer).toEqual(expect.objectContaining({ direction: 'out', text, sent_by: expect.objectContaining({ display_name: expect.any(String) }) }));
        const thread = unwrap(await api.GET('/api/chat/conversations/{conversation_id}/messages/', onConversation));
        expect(thread.results.at(-1)).toEqual(expect.objectContaining({ id: answer.id, direction: 'out' }));
        expect(unwrap(await api.POST('/api/chat/conversations/{conversation_id}/read/', onConversation)).unread_count).toBe(0);
        // After the cursor: the answer first (a backend that sends it adds its status changes).
        const changes = unwrap(await api.GET('/api/chat/changes/', { params: { query: { entity_id: String(inboxEntity), cursor } } }));
        expect(changes.changes[0]).toEqual(expect.objectContaining({ kind: 'message', message: expect.objectContaining({ id: answer.id }) }));
        expect(changes.cursor).not.toBe(cursor);
      });

      it("connects a messenger Page to an entity's inbox, lists it without its token, and disconnects it", async () => {
        const pageId = `1048576${Math.floor(Math.random() * 1e9)}`;
        const token = `EAAG${randomHex(24)}`;
        const connected = await api.POST('/api/chat/messenger/pages/', { body: { entity_id: entityId, page_id: pageId, name: `Página ${suffix}`, access_token: token } });
        expect(connected.response.status).toBe(201);
        expect(connected.data!.data).toEqual(expect.objectContaining({ page_id: pageId, entity_id: entityId, connected_by: expect.objectContaining({ display_name: expect.any(String) }) }));
        const listed = await api.GET('/api/chat/messenger/pages/', { params: { query: { entity_id: String(entityId) } } });
        expect(listed.data!.data.map((page) => page.page_id)).toContain(pageId);
        expect(JSON.stringify(listed.data)).not.toContain(token);
        const onPage = { params: { path: { page_id: pageId } } };
        expect(unwrap(await api.DELETE('/api/chat/messenger/pages/{page_id}/', onPage)).page_id).toBe(pageId);
        const gone = await failure(api.DELETE('/api/chat/messenger/pages/{page_id}/', onPage));
        expect([gone.status, gone.code]).toEqual([404, 'not_found']);
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

/** The first conversation of the first entity (of those the caller lists) whose inbox has one. */
async function firstConversation(api: PalanqueClient) {
  for (let page = 1; ; page += 1) {
    const { results, links } = unwrap(await api.GET('/api/entidade/', { params: { query: { page } } }));
    for (const entity of results) {
      const [conversation] = unwrap(await api.GET('/api/chat/conversations/', { params: { query: { entity_id: String(entity.id) } } })).results;
      if (conversation) return { entityId: entity.id, conversation };
    }
    if (!links.next) return undefined;
  }
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
