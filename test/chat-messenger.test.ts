/**
 * The messenger channel of the chat inbox (issue 24; src/chat/messenger/) against the social network's
 * simulator over loopback (src/simulators/socialnet.ts): the webhook's signed deliveries bring people's
 * messages, the send API takes the team's answers.
 * - Pages: connected by the entity's owner and admins (token never shown), in one inbox only,
 *   disconnected; strangers see none.
 * - A person's message lands in the inbox once (a delivery replayed or a message delivered again is not
 *   stored twice), an answer reaches the network once with the Page's token, its delivery event marks
 *   it delivered, and the cursor announces each step.
 * - The network's rules and failures: an answer outside the 24-hour window is refused before sending; a
 *   refusal is `failed` with the network's code; a rate limit is tried again; a send whose answer was
 *   lost is `outcome_unknown` and never sent again, as is one whose run died after claiming it.
 * Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliver, SocialnetSimulator } from '../src/simulators/socialnet.js';
import { createUser, type TestUser } from './helpers/accounts.js';
import { defaultAppConfig, startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';
import { waitFor } from './helpers/process.js';

const APP_SECRET = 'messenger-test-app-secret-0123456789';
const PAGE_ID = '104857600000001';
const PAGE_TOKEN = 'EAAGtestPageToken0001';

const network = new SocialnetSimulator(APP_SECRET);
let app: TestApp;
let team: { entityId: number; owner: TestUser; operator: TestUser; viewer: TestUser; stranger: TestUser };
let people = 0;
/** A new person's page-scoped id. */
const newPerson = () => `65432109876${String((people += 1)).padStart(5, '0')}`;

const get = (caller: TestUser, path: string) => request(app.baseUrl, 'GET', path, caller.headers);
const post = (caller: TestUser, path: string, body?: unknown, headers: Record<string, string> = {}) => request(app.baseUrl, 'POST', path, { ...caller.headers, ...headers }, body);
const answer = (caller: TestUser, conversationId: number, text: string) =>
  post(caller, `/api/chat/conversations/${conversationId}/messages/`, { text }, { 'Idempotency-Key': randomUUID() });

interface MessageView {
  id: number;
  direction: string;
  text: string;
  status: string;
  error_code: string | null;
}

async function conversationOf(person: string): Promise<{ id: number; channel: string; page_id: string | null; participant: string; unread_count: number; credential_id: number | null }> {
  const listed = await get(team.operator, `/api/chat/conversations/?entity_id=${team.entityId}`);
  expect(listed.status, listed.text).toBe(200);
  const found = listed.body.data.results.find((conversation: { participant: string }) => conversation.participant === person);
  expect(found, `a conversation with ${person}`).toBeDefined();
  return found;
}

async function thread(conversationId: number): Promise<MessageView[]> {
  const read = await get(team.owner, `/api/chat/conversations/${conversationId}/messages/`);
  expect(read.status, read.text).toBe(200);
  return read.body.data.results;
}

/** Waits until the answer's status is no longer `queued` or `sending`, and returns it. */
function settled(conversationId: number, messageId: number): Promise<MessageView> {
  return waitFor(
    async () => {
      const found = (await thread(conversationId)).find((message) => message.id === messageId);
      return found && !['queued', 'sending'].includes(found.status) ? found : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 100, what: `answer ${messageId} settled` },
  );
}

/** A person who wrote once, and their conversation. */
async function personWhoWrote(text = 'Qual é o horário da carreata?', at?: Date): Promise<{ person: string; conversationId: number }> {
  const person = newPerson();
  const written = await network.writeToPage(app.baseUrl, { pageId: PAGE_ID, senderId: person, text, at });
  expect(written.status, written.text).toBe(200);
  return { person, conversationId: (await conversationOf(person)).id };
}

beforeAll(async () => {
  await network.start();
  network.connectPage(PAGE_ID, PAGE_TOKEN);
  app = await startTestApp({
    withJobs: true,
    config: { socialnet: { ...defaultAppConfig.socialnet, appSecret: APP_SECRET } },
    socialnetGraphUrl: network.url,
  });
  const [owner, operator, viewer, stranger] = await Promise.all([createUser(app), createUser(app), createUser(app), createUser(app)]);
  const entityId = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
  for (const [member, role] of [[operator, 'operator'], [viewer, 'viewer']] as const) {
    await app.entities.models.Member.create({ entity_id: entityId, user_id: member.user.id, role, added_at: new Date() });
  }
  team = { entityId, owner, operator, viewer, stranger };
});

afterAll(async () => {
  await app?.close();
  await network.stop();
});

describe('Pages', () => {
  it("connects a Page to the entity's inbox for its owner, never shows its token, and keeps it in one inbox", async () => {
    const page = { entity_id: team.entityId, page_id: PAGE_ID, name: 'Maria Santos 13', access_token: 'an-old-token' };
    expectError(await post(team.operator, '/api/chat/messenger/pages/', page), 403, 'forbidden');
    expectError(await post(team.stranger, '/api/chat/messenger/pages/', page), 404, 'not_found');
    const connected = await post(team.owner, '/api/chat/messenger/pages/', page);
    expect(connected.status, connected.text).toBe(201);
    expect(connected.body.data).toMatchObject({ page_id: PAGE_ID, entity_id: team.entityId, name: 'Maria Santos 13', connected_by: { id: team.owner.user.id } });
    // A renewed token: the same Page again replaces it.
    const renewed = await post(team.owner, '/api/chat/messenger/pages/', { ...page, access_token: PAGE_TOKEN });
    expect(renewed.status, renewed.text).toBe(200);
    expect(renewed.text).not.toContain(PAGE_TOKEN);
    const stored = await app.sequelize.query<{ access_token_sealed: string }>('SELECT access_token_sealed FROM messenger_pages', { type: QueryTypes.SELECT });
    expect(JSON.stringify(stored)).not.toContain(PAGE_TOKEN);

    const listed = await get(team.viewer, `/api/chat/messenger/pages/?entity_id=${team.entityId}`);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data.map((listedPage: { page_id: string }) => listedPage.page_id)).toEqual([PAGE_ID]);
    expect(listed.text).not.toContain(PAGE_TOKEN);
    expectError(await get(team.stranger, `/api/chat/messenger/pages/?entity_id=${team.entityId}`), 404, 'not_found');

    // Another entity cannot take it.
    const otherEntity = await app.entities.store.create('candidato', team.stranger.user.id, { nome: 'Outro Candidato' });
    const taken = await post(team.stranger, '/api/chat/messenger/pages/', { ...page, entity_id: otherEntity });
    expectError(taken, 422, 'validation_failed');
    expect(taken.body.error.details[0]).toMatchObject({ field: 'page_id', rule: 'not_connected_elsewhere' });
    expectError(await request(app.baseUrl, 'DELETE', `/api/chat/messenger/pages/${PAGE_ID}/`, team.stranger.headers), 404, 'not_found');
    expectError(await request(app.baseUrl, 'DELETE', `/api/chat/messenger/pages/${PAGE_ID}/`, team.operator.headers), 403, 'forbidden');
  });
});

describe('a person writes to the Page, the team answers', () => {
  it('lands in the inbox once: a retried message and a replayed delivery are not stored again', async () => {
    const person = newPerson();
    const { cursor } = (await get(team.operator, `/api/chat/changes/?entity_id=${team.entityId}`)).body.data;
    const written = await network.writeToPage(app.baseUrl, { pageId: PAGE_ID, senderId: person, text: 'Qual é o horário da carreata?' });
    expect(written.status, written.text).toBe(200);
    expect(written.body.data).toMatchObject({ messages: 1, ignored: 0, duplicate: false });
    // The network delivering the same message again (same mid, another delivery), and a replay of the first delivery.
    const again = await network.writeToPage(app.baseUrl, { pageId: PAGE_ID, senderId: person, text: 'Qual é o horário da carreata?', mid: written.mid, at: new Date(Date.now() + 1) });
    expect(again.body.data).toMatchObject({ messages: 0, ignored: 1 });
    const replayed = await deliver(app.baseUrl, APP_SECRET, written.delivery);
    expect(replayed.body.data).toMatchObject({ messages: 0, duplicate: true });

    const conversation = await conversationOf(person);
    expect(conversation).toMatchObject({ channel: 'messenger', page_id: PAGE_ID, credential_id: null, participant: person, unread_count: 1 });
    expect((await thread(conversation.id)).map((message) => [message.direction, message.text, message.status])).toEqual([['in', 'Qual é o horário da carreata?', 'received']]);
    const changes = await get(team.operator, `/api/chat/changes/?entity_id=${team.entityId}&cursor=${cursor}`);
    expect(changes.body.data.changes).toHaveLength(1);
    expect(changes.body.data.changes[0]).toMatchObject({ kind: 'message', conversation: { id: conversation.id }, message: { text: 'Qual é o horário da carreata?' } });
  });

  it("sends an operator's answer through the send API once, with the Page's token, and its delivery event marks it delivered", async () => {
    const { person, conversationId } = await personWhoWrote();
    const text = 'A carreata sai às 9h da Praça da Sé.';
    const headers = { 'Idempotency-Key': randomUUID() };
    const answered = await post(team.operator, `/api/chat/conversations/${conversationId}/messages/`, { text }, headers);
    expect(answered.status, answered.text).toBe(201);
    expect(answered.body.data).toMatchObject({ direction: 'out', text, status: 'queued', sent_by: { id: team.operator.user.id } });
    const retried = await post(team.operator, `/api/chat/conversations/${conversationId}/messages/`, { text }, headers);
    expect(retried.body.data.id).toBe(answered.body.data.id);

    expect(await settled(conversationId, answered.body.data.id)).toMatchObject({ status: 'sent', error_code: null });
    const sent = network.sent.filter((message) => message.recipientId === person);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ pageId: PAGE_ID, text, messagingType: 'RESPONSE' });

    const { cursor } = (await get(team.operator, `/api/chat/changes/?entity_id=${team.entityId}`)).body.data;
    const receipt = await network.deliverReceipts(app.baseUrl, [sent[0]!.mid]);
    expect(receipt.body.data).toMatchObject({ deliveries: 1 });
    expect((await thread(conversationId)).at(-1)).toMatchObject({ id: answered.body.data.id, status: 'delivered' });
    const changes = await get(team.operator, `/api/chat/changes/?entity_id=${team.entityId}&cursor=${cursor}`);
    expect(changes.body.data.changes.map((change: { kind: string; message: { id: number } }) => [change.kind, change.message.id])).toEqual([['status', answered.body.data.id]]);
  });

  it('marks answers delivered by the watermark when the delivery event has no mids', async () => {
    const { person, conversationId } = await personWhoWrote();
    const answered = await answer(team.owner, conversationId, 'Obrigado pela mensagem!');
    expect(await settled(conversationId, answered.body.data.id)).toMatchObject({ status: 'sent' });
    const mid = network.sent.find((message) => message.recipientId === person)!.mid;
    expect((await network.deliverReceipts(app.baseUrl, [mid], { withoutMids: true })).body.data).toMatchObject({ deliveries: 1 });
    expect((await thread(conversationId)).at(-1)).toMatchObject({ status: 'delivered' });
  });

  it('lets viewers read and not answer, and strangers see nothing', async () => {
    const { conversationId } = await personWhoWrote();
    expectError(await answer(team.viewer, conversationId, 'Olá'), 403, 'forbidden');
    expectError(await answer(team.stranger, conversationId, 'Olá'), 404, 'not_found');
    expect((await get(team.viewer, `/api/chat/conversations/${conversationId}/messages/`)).status).toBe(200);
  });
});

describe("the network's rules and failures", () => {
  it('refuses an answer more than 24 hours after the person last wrote, before sending anything', async () => {
    const { person, conversationId } = await personWhoWrote('Oi', new Date(Date.now() - 25 * 3600_000));
    const refused = await answer(team.operator, conversationId, 'Desculpe a demora!');
    expectError(refused, 422, 'validation_failed');
    expect(refused.body.error.details[0]).toMatchObject({ field: 'conversation_id', rule: 'within_messaging_window' });
    expect(network.sent.filter((message) => message.recipientId === person)).toHaveLength(0);
  });

  it("records the network's refusal with its code, and tries a rate-limited send again", async () => {
    const refusedPerson = await personWhoWrote();
    network.failNext({ status: 400, code: 551, message: 'This person isn’t available right now.' });
    const refused = await answer(team.operator, refusedPerson.conversationId, 'Olá!');
    expect(await settled(refusedPerson.conversationId, refused.body.data.id)).toMatchObject({ status: 'failed', error_code: '551' });

    const limitedPerson = await personWhoWrote();
    network.failNext({ status: 400, code: 613, message: 'Calls to this api have exceeded the rate limit.' });
    const limited = await answer(team.operator, limitedPerson.conversationId, 'Olá de novo!');
    // The job queue spaces its tries (5 s before the second).
    const outcome = await settled(limitedPerson.conversationId, limited.body.data.id);
    expect(outcome).toMatchObject({ status: 'sent', error_code: null });
    expect(network.sent.filter((message) => message.recipientId === limitedPerson.person)).toHaveLength(1);
  });

  it('never sends again a message whose answer was lost: it is failed with outcome_unknown', async () => {
    const { person, conversationId } = await personWhoWrote();
    network.failNext({ reset: 'after_creating' });
    const answered = await answer(team.operator, conversationId, 'Até sábado!');
    expect(await settled(conversationId, answered.body.data.id)).toMatchObject({ status: 'failed', error_code: 'outcome_unknown' });
    // The person has it once, and nothing sends it again.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(network.sent.filter((message) => message.recipientId === person)).toHaveLength(1);
  });

  it('settles an answer claimed by a run that died as outcome_unknown, without sending it', async () => {
    const { person, conversationId } = await personWhoWrote();
    // An answer as a run leaves it when its process dies between the claim and the network's answer.
    const claimedLongAgo = new Date(Date.now() - 10 * 60_000);
    await app.sequelize.query("INSERT INTO conversation_messages (conversation_id, direction, body, status, updated_at, created_at) VALUES (?, 'out', 'Claimed, then the process died', 'sending', ?, ?)", {
      replacements: [conversationId, claimedLongAgo, claimedLongAgo],
    });
    const [inserted] = await app.sequelize.query<{ id: number }>("SELECT id FROM conversation_messages WHERE conversation_id = ? AND direction = 'out'", { replacements: [conversationId], type: QueryTypes.SELECT });
    expect(await app.inbox.messenger.enqueueStalledAnswers(60_000)).toBeGreaterThanOrEqual(1);
    expect(await settled(conversationId, inserted!.id)).toMatchObject({ status: 'failed', error_code: 'outcome_unknown' });
    expect(network.sent.filter((message) => message.recipientId === person)).toHaveLength(0);
  });

  it('keeps the conversations of a disconnected Page readable and refuses answers to them; its new messages are ignored', async () => {
    const { person, conversationId } = await personWhoWrote();
    const disconnected = await request(app.baseUrl, 'DELETE', `/api/chat/messenger/pages/${PAGE_ID}/`, team.owner.headers);
    expect(disconnected.status, disconnected.text).toBe(200);
    expect(disconnected.body.data).toMatchObject({ page_id: PAGE_ID });
    expectError(await request(app.baseUrl, 'DELETE', `/api/chat/messenger/pages/${PAGE_ID}/`, team.owner.headers), 404, 'not_found');

    const refused = await answer(team.operator, conversationId, 'Olá!');
    expectError(refused, 422, 'validation_failed');
    expect(refused.body.error.details[0]).toMatchObject({ rule: 'page_connected' });
    const later = await network.writeToPage(app.baseUrl, { pageId: PAGE_ID, senderId: person, text: 'Alguém aí?' });
    expect(later.body.data).toMatchObject({ messages: 0, ignored: 1 });
    expect((await thread(conversationId)).map((message) => message.text)).toEqual(['Qual é o horário da carreata?']);
  });

  it('refuses an unsigned messaging delivery, and checks its shape', async () => {
    const delivery = { object: 'page', entry: [{ id: PAGE_ID, time: Date.now(), messaging: [{ sender: { id: newPerson() }, recipient: { id: PAGE_ID }, timestamp: Date.now(), message: { mid: 'm_unsigned', text: 'Oi' } }] }] };
    expect((await deliver(app.baseUrl, APP_SECRET, delivery, { signature: null })).status).toBe(401);
    expect((await deliver(app.baseUrl, APP_SECRET, delivery, { signature: `sha256=${'0'.repeat(64)}` })).status).toBe(403);
    const malformed = await deliver(app.baseUrl, APP_SECRET, { object: 'page', entry: [{ id: PAGE_ID, time: Date.now(), messaging: [{ sender: {}, recipient: { id: PAGE_ID } }] }] });
    expectError(malformed, 422, 'validation_failed');
    expect(malformed.body.error.details[0]).toMatchObject({ field: 'entry.0.messaging.0.sender.id', rule: 'required' });
  });
});
