/**
 * What a request may carry (issue 41, section 5), on SQLite or, with TEST_DATABASE_URL, PostgreSQL:
 * - every integer of a request has its column's bounds: an id past them is 422 (a body) or 400 (a
 *   parameter) naming the field, the rule and the value, never the database's out-of-range error (a 500
 *   on PostgreSQL) or a lookup that finds nothing (a 404 on SQLite);
 * - our own bodies hold well-formed text: a NUL or a lone UTF-16 surrogate is 422 with the rule `unicode`,
 *   naming the field, and nothing is stored; in a provider's delivery such a character becomes U+FFFD
 *   and the delivery is kept (a receipt applied, a reply or a message in the inbox, a removal recorded);
 * - date-time query parameters take their colons unencoded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureOf } from '../src/simulators/sms-provider.js';
import { requestRemoval, signedRequest, SocialnetSimulator } from '../src/simulators/socialnet.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { defaultAppConfig, startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';
import { recipientSource, storeCampaign } from './helpers/sms.js';

const APP_SECRET = 'input-hardening-app-secret-0123456789';
const PAGE_ID = '104857600000041';
const ACCOUNT = `AC${'41a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2'}`;
const TOKEN = '41b3c4d5e6f70812a3b4c5d6e7f80941';
const SENDER = '+5511940024141';

const network = new SocialnetSimulator(APP_SECRET);
const voters = recipientSource('+5521984');
let app: TestApp;
let admin: TestUser;
let owner: TestUser;
let entityId: number;
let credentialId: number;

/** A request whose body is sent exactly as written (JSON escapes and numbers no JavaScript value holds). */
const postRaw = (path: string, caller: TestUser, body: string) => request(app.baseUrl, 'POST', path, caller.headers, body);

beforeAll(async () => {
  await network.start();
  app = await startTestApp({ withJobs: true, selfPublicUrl: true, config: { socialnet: { ...defaultAppConfig.socialnet, appSecret: APP_SECRET } }, socialnetGraphUrl: network.url });
  admin = await createAdmin(app);
  owner = await createUser(app);
  entityId = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
  const added = await request(app.baseUrl, 'POST', '/api/sms/add_credential/', admin.headers, { name: 'Campanha', account_id: ACCOUNT, sender_id: SENDER, secret: TOKEN, entity_id: entityId });
  expect(added.status, added.text).toBe(201);
  credentialId = added.body.data.id;
});

afterAll(async () => {
  await app?.close();
  await network.stop();
});

describe('integers within their columns', () => {
  it('an id past int4 in a body is 422 naming the field, the rule and the value', async () => {
    const result = await postRaw('/api/strategy/approve_pending_scenario_requests/', owner, '{"selectedMonitorId": 99999999999999999999, "scenarios_list": [1]}');
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toEqual([{ location: 'body', field: 'selectedMonitorId', rule: 'maximum', message: expect.any(String), value: 1e20 }]);
  });

  it('so is one just past it, in an array of a body', async () => {
    const result = await postRaw('/api/strategy/reject_pending_scenario_requests/', owner, '{"selectedMonitorId": 1, "scenarios_list": [2147483648]}');
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toEqual([{ location: 'body', field: 'scenarios_list.0', rule: 'maximum', message: expect.any(String), value: 2147483648 }]);
  });

  it('the largest int4 is a valid id that names nothing (404), not a database error', async () => {
    const result = await postRaw('/api/strategy/approve_pending_scenario_requests/', owner, '{"selectedMonitorId": 2147483647, "scenarios_list": [2147483647]}');
    expectError(result, 404, 'not_found');
  });

  it('a query or path parameter past int4 is 400 naming it', async () => {
    const query = await request(app.baseUrl, 'GET', '/api/auth/audit_events/?user_id=2147483648', admin.headers);
    expectError(query, 400, 'bad_request');
    expect(query.body.error.details).toEqual([expect.objectContaining({ location: 'query', field: 'user_id', rule: 'maximum' })]);
    const path = await request(app.baseUrl, 'GET', '/api/sms/campaigns/99999999999999999999/', admin.headers);
    expectError(path, 400, 'bad_request');
    expect(path.body.error.details).toEqual([expect.objectContaining({ location: 'path', field: 'campaign_id', rule: 'maximum' })]);
  });
});

describe('text in our own bodies', () => {
  const bookmarks = async () => (await request(app.baseUrl, 'GET', '/api/research/get_user_research_bookmarks/', owner.headers)).body.data as Array<{ title: string }>;

  it.each([
    ['a lone high surrogate', '"Pesquisa \\ud800x"'],
    ['a lone low surrogate', '"\\udc00 Pesquisa"'],
    ['a NUL', '"Pesquisa\\u0000"'],
  ])('%s is 422 with the rule unicode, and nothing is stored', async (_what, title) => {
    const result = await postRaw('/api/research/add_research_bookmark/', owner, `{"url": "https://exemplo.com.br/pesquisa", "title": ${title}}`);
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toEqual([{ location: 'body', field: 'title', rule: 'unicode', message: expect.any(String) }]);
    expect(await bookmarks()).toEqual([]);
  });

  it('names a nested field by its dotted path', async () => {
    const result = await postRaw('/api/account/', admin, '{"sync_sm": {"elections_token": "pnl_\\ud83d"}}');
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toEqual([{ location: 'body', field: 'sync_sm.elections_token', rule: 'unicode', message: expect.any(String) }]);
  });

  it('keeps a surrogate pair (an emoji) as sent', async () => {
    const result = await postRaw('/api/research/add_research_bookmark/', owner, '{"url": "https://exemplo.com.br/emoji", "title": "Pesquisa \\ud83d\\uddf3\\ufe0f"}');
    expect(result.status, result.text).toBe(201);
    expect((await bookmarks()).map((bookmark) => bookmark.title)).toEqual(['Pesquisa 🗳️']);
  });

  it('names at most 20 fields, and says how many more there were', async () => {
    const keywords = Array.from({ length: 30 }, (_, i) => `"palavra ${i} \\udfff"`).join(', ');
    const result = await postRaw('/api/monitor_social/add_monitor/', owner, `{"entity_id": ${entityId}, "name": "Monitor", "keywords": [${keywords}]}`);
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toHaveLength(20);
    expect(result.body.error.details[0]).toMatchObject({ field: 'keywords.0', rule: 'unicode' });
    expect(result.body.error.message).toContain('10 more');
  });
});

describe("text in providers' deliveries is made well-formed, and the delivery kept", () => {
  it("an SMS receipt with a NUL in one of the provider's fields is applied", async () => {
    const [recipient] = voters(1);
    const { messageIds } = await storeCampaign(app, { credentialId, createdBy: admin.user.id, body: 'Olá', recipients: [recipient!] });
    const sid = `SM${'41'.repeat(16)}`;
    await app.sms.models.Message.update({ provider_sid: sid, status: 'sent' }, { where: { id: messageIds[0] } });
    const url = `${app.baseUrl}/api/callback/provider_sms/`;
    const form = { MessageSid: sid, MessageStatus: 'delivered', AccountSid: ACCOUNT, From: SENDER, To: recipient!, ApiVersion: '2010-04-01', ErrorMessage: 'ok\u0000' };
    const answer = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': signatureOf(TOKEN, url, form) },
      body: new URLSearchParams(form),
    });
    expect(answer.status, await answer.clone().text()).toBe(200);
    expect((await answer.json()).data).toMatchObject({ message_sid: sid, status: 'delivered', applied: true });
  });

  it("a voter's SMS reply with a NUL lands in the inbox with U+FFFD in its place", async () => {
    const [voter] = voters(1);
    const url = new URL(`${app.baseUrl}/api/webhook/provider_sms/`);
    for (const [name, value] of Object.entries({ MessageSid: `SM${'42'.repeat(16)}`, AccountSid: ACCOUNT, From: voter!, To: SENDER, Body: 'Oi\u0000 tudo bem?', NumMedia: '0' })) url.searchParams.set(name, value);
    const answer = await fetch(url, { headers: { 'X-Twilio-Signature': signatureOf(TOKEN, url.toString(), {}) } });
    expect(answer.status, await answer.text()).toBe(200);
    const listed = await request(app.baseUrl, 'GET', `/api/chat/conversations/?entity_id=${entityId}`, owner.headers);
    const conversation = listed.body.data.results.find((found: { participant: string }) => found.participant === voter);
    expect(conversation?.last_message?.text).toBe('Oi\uFFFD tudo bem?');
  });

  it("a person's message on the social network with a lone surrogate and a NUL lands in the inbox", async () => {
    const connected = await request(app.baseUrl, 'POST', '/api/chat/messenger/pages/', owner.headers, { entity_id: entityId, page_id: PAGE_ID, name: 'Maria Santos 13', access_token: 'EAAGinputHardening' });
    expect(connected.status, connected.text).toBe(201);
    const person = '6543210987641001';
    const written = await network.writeToPage(app.baseUrl, { pageId: PAGE_ID, senderId: person, text: 'Bom dia \ud800! At\u0000é logo' });
    expect(written.status, written.text).toBe(200);
    const listed = await request(app.baseUrl, 'GET', `/api/chat/conversations/?entity_id=${entityId}`, owner.headers);
    const conversation = listed.body.data.results.find((found: { participant: string }) => found.participant === person);
    expect(conversation?.last_message?.text).toBe('Bom dia \uFFFD! At\uFFFDé logo');
  });

  it('a data-removal notice with a NUL in a field the network added is recorded', async () => {
    const signed = signedRequest({ algorithm: 'HMAC-SHA256', issued_at: Math.floor(Date.now() / 1000), user_id: '41000000001' }, APP_SECRET);
    const result = await requestRemoval(app.baseUrl, APP_SECRET, {}, { signed_request: signed, locale: 'pt_BR\u0000' });
    expect(result.status, result.text).toBe(201);
  });
});

describe('date-time query parameters', () => {
  it('take their colons unencoded, as the free-text ones take theirs', async () => {
    for (const query of ['since=2026-11-01T00:00:00Z', 'until=2026-11-01T00:00:00Z', 'since=2020-01-01T00:00:00Z&until=2099-01-01T00:00:00.000Z']) {
      const result = await request(app.baseUrl, 'GET', `/api/auth/audit_events/?${query}`, admin.headers);
      expect(result.status, `${query}: ${result.text}`).toBe(200);
    }
    const encoded = await request(app.baseUrl, 'GET', '/api/auth/audit_events/?since=2026-11-01T00%3A00%3A00Z', admin.headers);
    expect(encoded.status, encoded.text).toBe(200);
    expectError(await request(app.baseUrl, 'GET', '/api/auth/audit_events/?since=ontem', admin.headers), 400, 'bad_request');
  });

  it('on the read lane too', async () => {
    const lane = await startTestApp({ config: { validateResponses: false }, database: app.database });
    try {
      const result = await request(lane.baseUrl, 'GET', '/api/auth/audit_events/?since=2026-11-01T00:00:00Z', admin.headers);
      expect(result.status, result.text).toBe(200);
    } finally {
      await lane.close();
    }
  });
});
