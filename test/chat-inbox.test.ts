/**
 * The chat inbox (issue 24; src/chat/) against the SMS provider simulator over loopback:
 * - a voter's reply that is not an opt-out keyword becomes a conversation of the entity whose credential
 *   received it, linked to its contact; a copy delivered again is one message;
 * - an operator's answer is sent through the provider by the send job, once, and its receipts move its
 *   status; an opted-out number is refused whatever the compliance mode;
 * - read marks, assignment, who may do what (viewers read, strangers see nothing);
 * - the polling cursor: every change after a cursor once, across two instances on one database, with a
 *   long poll woken by a change.
 * Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';
import { waitFor } from './helpers/process.js';
import { freshBody, recipientSource, keepWarnMode } from './helpers/sms.js';

const ACCOUNT = `AC${'7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d'}`;
const TOKEN = '2a3b4c5d6e7f80912a3b4c5d6e7f8091';
const SENDER = '+5511940027711';

const provider = new SmsProviderSimulator();
let app: TestApp;
let team: { entityId: number; credentialId: number; owner: TestUser; operator: TestUser; viewer: TestUser; stranger: TestUser };
const voters = recipientSource('+5521985');

const get = (caller: TestUser, path: string) => request(app.baseUrl, 'GET', path, caller.headers);
const post = (caller: TestUser, path: string, body?: unknown, headers: Record<string, string> = {}) => request(app.baseUrl, 'POST', path, { ...caller.headers, ...headers }, body);
const webhookUrl = () => `${app.baseUrl}/api/webhook/provider_sms/`;
const write = (from: string, body: string, sid?: string) => provider.sendReply(webhookUrl(), { accountSid: ACCOUNT, from, to: SENDER, body, sid });

interface ConversationView {
  id: number;
  participant: string;
  unread_count: number;
  contact: { id: number; name: string | null } | null;
  assignee: { id: number } | null;
  last_message: { text: string } | null;
}

async function conversationWith(caller: TestUser, voter: string): Promise<ConversationView | undefined> {
  const listed = await get(caller, `/api/chat/conversations/?entity_id=${team.entityId}`);
  expect(listed.status, listed.text).toBe(200);
  return (listed.body.data.results as ConversationView[]).find((conversation) => conversation.participant === voter);
}

beforeAll(async () => {
  await provider.start();
  provider.addAccount(ACCOUNT, TOKEN);
  app = await startTestApp({ withJobs: true, selfPublicUrl: true, sms: { providerUrl: provider.url } });
  const admin = await createAdmin(app);
  const [owner, operator, viewer, stranger] = await Promise.all([createUser(app), createUser(app), createUser(app), createUser(app)]);
  const entityId = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
  await keepWarnMode(app, entityId);
  for (const [member, role] of [[operator, 'operator'], [viewer, 'viewer']] as const) {
    await app.entities.models.Member.create({ entity_id: entityId, user_id: member.user.id, role, added_at: new Date() });
  }
  const added = await request(app.baseUrl, 'POST', '/api/sms/add_credential/', admin.headers, { name: 'Campanha', account_id: ACCOUNT, sender_id: SENDER, secret: TOKEN, entity_id: entityId });
  expect(added.status, added.text).toBe(201);
  team = { entityId, credentialId: added.body.data.id, owner, operator, viewer, stranger };
});

afterAll(async () => {
  await app?.close();
  await provider.stop();
});

describe('a voter writes, the team answers', () => {
  let voter: string;
  let conversationId: number;

  it('makes a reply a conversation of the entity, with its contact, once per provider message', async () => {
    voter = voters(1)[0]!;
    const contact = await post(team.owner, '/api/contacts/', { entity_id: team.entityId, phone: voter, name: 'Ana Souza', consent: { source: 'formulário', given_at: '2026-09-01T12:00:00Z', text: 'Aceito receber mensagens.' } });
    expect(contact.status, contact.text).toBe(201);
    const first = await write(voter, 'Onde vai ser o comício?', 'SMchatfirst0001');
    expect(first.status).toBe(200);
    expect(((await first.json()) as { data: { opted_out: boolean } }).data.opted_out).toBe(false);
    expect((await write(voter, 'Onde vai ser o comício?', 'SMchatfirst0001')).status).toBe(200); // the provider's retry
    expect((await write(voter, 'E a que horas?')).status).toBe(200);

    const conversation = await conversationWith(team.owner, voter);
    expect(conversation).toMatchObject({ unread_count: 2, contact: { id: contact.body.data.id, name: 'Ana Souza' }, assignee: null, last_message: { text: 'E a que horas?' } });
    conversationId = conversation!.id;
    const thread = await get(team.viewer, `/api/chat/conversations/${conversationId}/messages/`);
    expect(thread.status, thread.text).toBe(200);
    expect(thread.body.data.results.map((message: { direction: string; text: string; status: string }) => [message.direction, message.text, message.status])).toEqual([
      ['in', 'Onde vai ser o comício?', 'received'],
      ['in', 'E a que horas?', 'received'],
    ]);
    // Operators and viewers read the number masked; strangers see nothing.
    expect((await conversationWith(team.viewer, `+55*******${voter.slice(-4)}`))?.id).toBe(conversationId);
    expectError(await get(team.stranger, `/api/chat/conversations/?entity_id=${team.entityId}`), 404, 'not_found');
    expectError(await get(team.stranger, `/api/chat/conversations/${conversationId}/messages/`), 404, 'not_found');
  });

  it("sends an operator's answer through the provider once, follows its receipts, and marks the conversation read", async () => {
    const text = freshBody('Sábado, às 18h, na Praça da Sé.');
    const headers = { 'Idempotency-Key': randomUUID() };
    const answered = await post(team.operator, `/api/chat/conversations/${conversationId}/messages/`, { text }, headers);
    expect(answered.status, answered.text).toBe(201);
    expect(answered.body.data).toMatchObject({ direction: 'out', text, sent_by: { id: team.operator.user.id } });
    // A retry of the same request is the same reply, not a second one.
    const retried = await post(team.operator, `/api/chat/conversations/${conversationId}/messages/`, { text }, headers);
    expect(retried.body.data.id).toBe(answered.body.data.id);

    const sent = await waitFor(() => provider.messages.filter((message) => message.to === voter).find((message) => message.body === text), { timeoutMs: 15_000, intervalMs: 100, what: 'the reply at the provider' });
    expect(provider.messages.filter((message) => message.to === voter).filter((message) => message.body === text)).toHaveLength(1);
    // The provider holds the message a moment before Palanque records the id it answered with; a receipt
    // in between names a message Palanque does not know yet (404), as a real provider's could.
    await waitFor(async () => ((await app.sms.models.Message.count({ where: { provider_sid: sent.sid } })) === 1 ? true : undefined), {
      timeoutMs: 15_000,
      intervalMs: 50,
      what: "the provider's id of the reply recorded",
    });
    expect((await provider.sendReceipt(sent.sid, 'delivered')).status).toBe(200);
    const thread = await get(team.owner, `/api/chat/conversations/${conversationId}/messages/`);
    expect(thread.body.data.results.at(-1)).toMatchObject({ id: answered.body.data.id, direction: 'out', status: 'delivered' });
    expect(await conversationWith(team.owner, voter)).toMatchObject({ unread_count: 0, last_message: { text } });
  });

  it('lets viewers read but not answer or assign, and assigns to members who may answer', async () => {
    expectError(await post(team.viewer, `/api/chat/conversations/${conversationId}/messages/`, { text: 'Oi' }), 403, 'forbidden');
    expectError(await post(team.viewer, `/api/chat/conversations/${conversationId}/assign/`, { assignee_id: team.operator.user.id }), 403, 'forbidden');
    const refused = await post(team.owner, `/api/chat/conversations/${conversationId}/assign/`, { assignee_id: team.viewer.user.id });
    expectError(refused, 422, 'validation_failed');
    expect(refused.body.error.details[0]).toMatchObject({ field: 'assignee_id', rule: 'team_member_who_may_reply', value: team.viewer.user.id });
    const assigned = await post(team.owner, `/api/chat/conversations/${conversationId}/assign/`, { assignee_id: team.operator.user.id });
    expect(assigned.status, assigned.text).toBe(200);
    expect(assigned.body.data.assignee).toMatchObject({ id: team.operator.user.id });
    const mine = await get(team.operator, `/api/chat/conversations/?entity_id=${team.entityId}&assignee_id=${team.operator.user.id}`);
    expect(mine.body.data.results.map((conversation: ConversationView) => conversation.id)).toEqual([conversationId]);
    expectError(await post(team.owner, `/api/chat/conversations/${conversationId}/messages/`, { text: '' }), 422, 'validation_failed');
  });

  it('never writes to a number that opted out, whatever the compliance mode', async () => {
    expect((await write(voter, 'SAIR')).status).toBe(200);
    const sentBefore = provider.messages.filter((message) => message.to === voter).length;
    for (const mode of ['off', 'enforce'] as const) {
      // Relaxing to off is a platform admin's decision (issue 42): the mode is written as one would set it.
      await app.sms.models.Compliance.upsert({ entity_id: team.entityId, mode, window_starts_on: null, window_ends_on: null, updated_by: null, updated_at: new Date() });
      const refused = await post(team.operator, `/api/chat/conversations/${conversationId}/messages/`, { text: 'Ainda está aí?' });
      expectError(refused, 422, 'validation_failed');
      expect(refused.body.error.details[0]).toMatchObject({ field: 'conversation_id', rule: 'not_opted_out' });
    }
    expect(provider.messages.filter((message) => message.to === voter)).toHaveLength(sentBefore);
  });
});

describe('the polling cursor', () => {
  let other: TestApp;

  beforeAll(async () => {
    // A second instance on the same database, as behind a load balancer.
    other = await startTestApp({ database: app.database, sms: { providerUrl: provider.url } });
  });
  afterAll(async () => {
    await other?.close();
  });

  const changes = (target: TestApp, caller: TestUser, query: string) => request(target.baseUrl, 'GET', `/api/chat/changes/?entity_id=${team.entityId}${query}`, caller.headers);

  it('answers every change after a cursor exactly once, whichever instance answers', async () => {
    const start = await changes(app, team.viewer, '');
    expect(start.status, start.text).toBe(200);
    expect(start.body.data).toMatchObject({ changes: [], more: false });
    let cursor: string = start.body.data.cursor;

    const someone = voters(1)[0]!;
    const texts = Array.from({ length: 5 }, (_, index) => `Mensagem ${index + 1}`);
    const seen: string[] = [];
    for (const [index, text] of texts.entries()) {
      expect((await write(someone, text)).status).toBe(200);
      // Alternate instances, and ask twice with the same cursor sometimes: the answers agree.
      const answer = await changes(index % 2 === 0 ? other : app, team.viewer, `&cursor=${cursor}`);
      expect(answer.status, answer.text).toBe(200);
      if (index === 2) expect((await changes(app, team.viewer, `&cursor=${cursor}`)).body.data.changes).toEqual(answer.body.data.changes);
      seen.push(...answer.body.data.changes.map((change: { kind: string; message: { text: string } }) => `${change.kind}:${change.message.text}`));
      cursor = answer.body.data.cursor;
    }
    expect(seen).toEqual(texts.map((text) => `message:${text}`));
    expect((await changes(other, team.viewer, `&cursor=${cursor}`)).body.data).toMatchObject({ changes: [], cursor });
    expectError(await changes(app, team.stranger, `&cursor=${cursor}`), 404, 'not_found');
    expectError(await changes(app, team.viewer, '&cursor=abc'), 400, 'bad_request');
    expectError(await changes(app, team.viewer, '&cursor=1&wait=26'), 400, 'bad_request');
  });

  it('waits for a change when there is none (a long poll), woken by one committed on another instance', async () => {
    const cursor = (await changes(app, team.owner, '')).body.data.cursor as string;
    const started = Date.now();
    const waiting = changes(app, team.owner, `&cursor=${cursor}&wait=20`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const conversation = (await request(other.baseUrl, 'GET', `/api/chat/conversations/?entity_id=${team.entityId}`, team.owner.headers)).body.data.results[0] as ConversationView;
    const read = await request(other.baseUrl, 'POST', `/api/chat/conversations/${conversation.id}/read/`, team.owner.headers);
    expect(read.status, read.text).toBe(200);
    const answer = await waiting;
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.data.changes.map((change: { kind: string; conversation: { id: number } }) => [change.kind, change.conversation.id])).toEqual([['read', conversation.id]]);
    expect(Date.now() - started).toBeLessThan(10_000);
    // With nothing new, a short wait ends empty with the same cursor.
    const empty = await changes(app, team.owner, `&cursor=${answer.body.data.cursor}&wait=1`);
    expect(empty.body.data).toMatchObject({ changes: [], cursor: answer.body.data.cursor });
  });
});
