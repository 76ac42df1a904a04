/**
 * Opting out the way people write, and opt-outs that outlive the erasure of the contact (issue 42,
 * section 3), against the real app and the provider simulator on loopback:
 * - a signed reply in the voter's own words ("não quero mais receber") opts the number out, recorded
 *   with the phrase it was read as; an ordinary answer holding the same words does not;
 * - a team member who may send opts a number out by hand (optOutSmsNumber), or the number of a
 *   conversation (optOutConversation); viewers may not (403), strangers learn nothing (404);
 * - every opt-out of an entity is also a suppression: HMAC-SHA256 of the number under the entity's own
 *   random key, sealed with SECRETS_KEY; erasing the contact removes the number (its opt-out row
 *   included) and keeps the suppression, so a list pasted later skips it, counted in the preview and in
 *   the campaign's report; an opt-out written before migration 0034 survives the erasure too.
 * Lei 9.504/1997 art. 57-G (48 hours to remove); LGPD art. 8 §5º (withdraw consent at any time).
 * Runs on SQLite, or PostgreSQL with TEST_DATABASE_URL.
 */
import { createHash, createHmac } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request, type Result } from './helpers/http.js';
import { recipientSource } from './helpers/sms.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const ACCOUNT = `AC${'7'.repeat(32)}`;
const ACCOUNT_B = `AC${'8'.repeat(32)}`;
const TOKEN = 'token-of-the-suppression-tests';
const TOKEN_B = 'token-of-the-suppression-test2';
const SENDER = '+5511940030001';
const SENDER_B = '+5511940030002';
const source = recipientSource('+5521987');
/** `count` fresh mobile numbers, each unique within the run. */
const fresh = (count: number) => source(count) as string[] & { 0: string; 1: string };

const provider = new SmsProviderSimulator();
let app: TestApp;
let admin: TestUser;
let owner: TestUser;
let operator: TestUser;
let viewer: TestUser;
let stranger: TestUser;
let ownerB: TestUser;
let entity: number;
let entityB: number;
let credential: number;
let credentialB: number;

const call = (caller: TestUser, method: 'GET' | 'POST', path: string, body?: unknown) => request(app.baseUrl, method, path, caller.headers, body);

async function reply(from: string, body: string, accountSid = ACCOUNT, to = SENDER): Promise<Result> {
  const response = await provider.sendReply(`${app.baseUrl}/api/webhook/provider_sms/`, { accountSid, from, to, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
}

const preview = (caller: TestUser, credencial: number, numbers: string[]) =>
  call(caller, 'POST', '/api/sms/campaigns/preview/', { titulo: 'Lembrete', credencial, mensagem: { recipient_list_str: numbers.join(', '), mensagem: 'Comício sábado às 18h.' } });

async function optOutsOf(entityId: number): Promise<Json[]> {
  const listed = await call(owner, 'GET', `/api/sms/list_opt_outs/?entity_id=${entityId}`);
  expect(listed.status, listed.text).toBe(200);
  return (listed.body as Json).data.results;
}

const query = <Row extends object>(sql: string, replacements: unknown[] = []) => app.sequelize.query<Row>(sql, { type: QueryTypes.SELECT, replacements });

beforeAll(async () => {
  await provider.start();
  provider.addAccount(ACCOUNT, TOKEN);
  provider.addAccount(ACCOUNT_B, TOKEN_B);
  app = await startTestApp({ withJobs: true, selfPublicUrl: true, sms: { providerUrl: provider.url } });
  admin = await createAdmin(app);
  [owner, operator, viewer, stranger, ownerB] = [await createUser(app), await createUser(app), await createUser(app), await createUser(app), await createUser(app)];
  entity = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
  entityB = await app.entities.store.create('candidato', ownerB.user.id, { nome: 'João Pereira' });
  for (const [member, role] of [
    [operator, 'operator'],
    [viewer, 'viewer'],
  ] as const) {
    await app.entities.models.Member.create({ entity_id: entity, user_id: member.user.id, role, added_at: new Date() });
  }
  const add = async (name: string, account: string, sender: string, secret: string, entityId: number) => {
    const added = await request(app.baseUrl, 'POST', '/api/sms/add_credential/', admin.headers, { name, account_id: account, sender_id: sender, secret, entity_id: entityId, footer: 'Maria Santos 13. Responda SAIR para não receber.' });
    expect(added.status, added.text).toBe(201);
    return (added.body as Json).data.id as number;
  };
  credential = await add('Maria', ACCOUNT, SENDER, TOKEN, entity);
  credentialB = await add('João', ACCOUNT_B, SENDER_B, TOKEN_B, entityB);
  // The electoral rules are other tests' business: these campaigns are judged by none.
  for (const id of [entity, entityB]) await app.sms.models.Compliance.upsert({ entity_id: id, mode: 'off', window_starts_on: null, window_ends_on: null, updated_by: admin.user.id, updated_at: new Date() } as never);
});

afterAll(async () => {
  await app?.close();
  await provider.stop();
});

describe("a reply in the voter's own words opts out (LGPD art. 8 §5º; Lei 9.504 art. 57-G)", () => {
  it('"não quero mais receber" opts the number out, with the phrase it was read as; the next campaign skips it', async () => {
    const [number, other] = fresh(2);
    const answer = await reply(number, 'Não quero mais receber essas mensagens!');
    expect(answer.status, answer.text).toBe(200);
    expect((answer.body as Json).data).toMatchObject({ from: number, opted_out: true });
    expect((await optOutsOf(entity)).find((row) => row.phone === number)).toMatchObject({ phone: number, keyword: null, source: 'reply', phrase: 'no_longer_receive' });

    const previewed = await preview(operator, credential, [number, other]);
    expect(previewed.status, previewed.text).toBe(200);
    expect((previewed.body as Json).data).toMatchObject({ messages: 1, opted_out_skipped: 1 });
  });

  it.each(['SAIR por favor', 'me tira dessa lista', 'pare de mandar', 'para de me mandar mensagem'])('"%s" opts out too', async (text) => {
    const [number] = fresh(1);
    expect(((await reply(number, text)).body as Json).data.opted_out).toBe(true);
    expect((await preview(operator, credential, [number])).body.data).toMatchObject({ messages: 0, opted_out_skipped: 1 });
  });

  it.each(['não vou sair de casa', 'quero parar no comitê', 'pode mandar mais informações'])('"%s" does not: it reaches the inbox', async (text) => {
    const [number] = fresh(1);
    expect(((await reply(number, text)).body as Json).data.opted_out).toBe(false);
    expect((await preview(operator, credential, [number])).body.data).toMatchObject({ messages: 1, opted_out_skipped: 0 });
    const [conversation] = await query<{ id: number }>('SELECT id FROM conversations WHERE entity_id = ? AND participant = ?', [entity, number]);
    expect(conversation).toBeDefined();
  });
});

describe('opting a number out by hand (optOutSmsNumber)', () => {
  it('an operator opts a number out as people write it (201), again changes nothing (200); later campaigns skip it', async () => {
    const [number, other] = fresh(2);
    const written = `(${number.slice(3, 5)}) ${number.slice(5, 10)}-${number.slice(10)}`;
    const first = await call(operator, 'POST', '/api/sms/opt_outs/', { entity_id: entity, phone: written });
    expect(first.status, first.text).toBe(201);
    expect((first.body as Json).data).toMatchObject({ phone: number, keyword: null, source: 'manual', phrase: null });
    const again = await call(owner, 'POST', '/api/sms/opt_outs/', { entity_id: entity, phone: number });
    expect(again.status, again.text).toBe(200);
    expect((again.body as Json).data.opted_out_at).toBe((first.body as Json).data.opted_out_at);
    const [row] = await query<{ created_by: number }>('SELECT created_by FROM sms_opt_outs WHERE entity_id = ? AND phone = ?', [entity, number]);
    expect(Number(row!.created_by)).toBe(operator.user.id);

    expect((await preview(owner, credential, [number, other])).body.data).toMatchObject({ messages: 1, opted_out_skipped: 1 });
    // Another entity's campaigns are not its business.
    expect((await preview(ownerB, credentialB, [number])).body.data).toMatchObject({ messages: 1, opted_out_skipped: 0 });
  });

  it('a viewer may not (403), a stranger learns nothing (404), an unreadable number is 422 phone_number', async () => {
    const [number] = fresh(1);
    expectError(await call(viewer, 'POST', '/api/sms/opt_outs/', { entity_id: entity, phone: number }), 403, 'forbidden');
    expectError(await call(stranger, 'POST', '/api/sms/opt_outs/', { entity_id: entity, phone: number }), 404, 'not_found');
    const bad = await call(owner, 'POST', '/api/sms/opt_outs/', { entity_id: entity, phone: '12345' });
    expectError(bad, 422, 'validation_failed');
    expect((bad.body as Json).error.details).toEqual([expect.objectContaining({ field: 'phone', rule: 'phone_number', value: '12345' })]);
    expect(await query('SELECT id FROM sms_opt_outs WHERE phone = ?', [number])).toEqual([]);
  });
});

describe("opting a conversation's number out (optOutConversation)", () => {
  it('an operator opts out the number of a conversation, read masked; the conversation can no longer be answered', async () => {
    const [number] = fresh(1);
    await reply(number, 'Quem te deu meu número? Não autorizei.');
    const [conversation] = await query<{ id: number }>('SELECT id FROM conversations WHERE entity_id = ? AND participant = ?', [entity, number]);
    expect(conversation).toBeDefined();
    const id = Number(conversation!.id);

    expectError(await call(viewer, 'POST', `/api/chat/conversations/${id}/opt_out/`), 403, 'forbidden');
    expectError(await call(stranger, 'POST', `/api/chat/conversations/${id}/opt_out/`), 404, 'not_found');
    const opted = await call(operator, 'POST', `/api/chat/conversations/${id}/opt_out/`);
    expect(opted.status, opted.text).toBe(201);
    expect((opted.body as Json).data).toMatchObject({ phone: `+55*******${number.slice(-4)}`, source: 'conversation', keyword: null });
    const again = await call(owner, 'POST', `/api/chat/conversations/${id}/opt_out/`);
    expect(again.status, again.text).toBe(200);
    expect((again.body as Json).data.phone).toBe(number);

    const answered = await call(operator, 'POST', `/api/chat/conversations/${id}/messages/`, { text: 'Tudo bem!' });
    expectError(answered, 422, 'validation_failed');
    expect((answered.body as Json).error.details[0]).toMatchObject({ rule: 'not_opted_out' });
    expect((await preview(owner, credential, [number])).body.data).toMatchObject({ messages: 0, opted_out_skipped: 1 });
  });
});

describe('a suppression outlives the erasure of the contact', () => {
  async function contactOf(entityId: number, phone: string): Promise<number> {
    const now = new Date();
    const created = await app.sms.models.Contact.create({ entity_id: entityId, phone, name: 'Ana Souza', consent_source: 'formulário', consent_given_at: now, created_by: owner.user.id, created_at: now, updated_at: now } as never);
    return Number(created.get('id'));
  }

  it('erasing an opted-out contact removes the number everywhere and keeps a keyed hash: a pasted list still skips it, in the preview and the report', async () => {
    const [number, other] = fresh(2);
    const contactId = await contactOf(entity, number);
    expect(((await reply(number, 'me tira dessa lista')).body as Json).data.opted_out).toBe(true);

    const erased = await call(owner, 'POST', `/api/contacts/${contactId}/erase/`, { reason: 'LGPD-2026-0042' });
    expect(erased.status, erased.text).toBe(200);
    expect((erased.body as Json).data).toMatchObject({ erased: true, suppression_kept: true });

    // The number is gone from the opt-outs (and the list), and from every table that held it.
    expect(await query('SELECT id FROM sms_opt_outs WHERE phone = ?', [number])).toEqual([]);
    expect((await optOutsOf(entity)).map((row) => row.phone)).not.toContain(number);
    expect(await query('SELECT id FROM contacts WHERE phone = ?', [number])).toEqual([]);
    expect(await query('SELECT id FROM sms_replies WHERE sender = ?', [number])).toEqual([]);

    // What stays is a keyed hash: neither the number nor its plain SHA-256.
    const suppressions = await query<{ phone_hash: string; source: string }>('SELECT phone_hash, source FROM sms_suppressions WHERE entity_id = ?', [entity]);
    const hashes = suppressions.map((row) => row.phone_hash);
    expect(hashes.some((hash) => hash.includes(number.slice(1)))).toBe(false);
    expect(hashes).not.toContain(createHash('sha256').update(number).digest('hex'));
    const [key] = await query<{ key_sealed: string }>('SELECT key_sealed FROM sms_suppression_keys WHERE entity_id = ?', [entity]);
    expect(key!.key_sealed).toMatch(/^v1\./);

    const previewed = await preview(operator, credential, [number, other]);
    expect((previewed.body as Json).data).toMatchObject({ messages: 1, opted_out_skipped: 1 });
    const sent = await call(operator, 'POST', '/api/sms/list_credentials/', { titulo: 'Depois', credencial: credential, mensagem: { recipient_list_str: `${number}, ${other}`, mensagem: 'Comício sábado.' } });
    expect(sent.status, sent.text).toBe(201);
    expect((sent.body as Json).data).toMatchObject({ accepted: 1, opted_out_skipped: 1 });
    const report = await call(operator, 'GET', `/api/sms/campaigns/${(sent.body as Json).data.id}/`);
    expect(report.status, report.text).toBe(200);
    expect((report.body as Json).data).toMatchObject({ opted_out_skipped: 1, messages: expect.objectContaining({ opted_out: 1 }) });
    // Alone it is 422, as an opted-out number is.
    const alone = await call(operator, 'POST', '/api/sms/list_credentials/', { titulo: 'Só ele', credencial: credential, mensagem: { recipient_list_str: number, mensagem: 'Oi' } });
    expectError(alone, 422, 'validation_failed');
    expect((alone.body as Json).error.details).toEqual([expect.objectContaining({ rule: 'not_opted_out' })]);
  });

  it('an opt-out written before migration 0034 (no suppression) survives the erasure too', async () => {
    const [number] = fresh(1);
    const contactId = await contactOf(entity, number);
    await app.sms.models.OptOut.create({ entity_id: entity, phone: number, keyword: null, opted_out_at: new Date('2026-10-02T18:05:00Z') } as never);
    const erased = await call(owner, 'POST', `/api/contacts/${contactId}/erase/`, { reason: 'LGPD-2026-0043' });
    expect((erased.body as Json).data, erased.text).toMatchObject({ suppression_kept: true });
    expect(await query('SELECT id FROM sms_opt_outs WHERE phone = ?', [number])).toEqual([]);
    expect((await preview(owner, credential, [number])).body.data).toMatchObject({ messages: 0, opted_out_skipped: 1 });
  });

  it('a contact that never opted out is erased without a suppression', async () => {
    const [number] = fresh(1);
    const contactId = await contactOf(entity, number);
    const before = await query('SELECT id FROM sms_suppressions');
    const erased = await call(owner, 'POST', `/api/contacts/${contactId}/erase/`, { reason: 'LGPD-2026-0044' });
    expect((erased.body as Json).data, erased.text).toMatchObject({ suppression_kept: false });
    expect(await query('SELECT id FROM sms_suppressions')).toHaveLength(before.length);
    expect((await preview(owner, credential, [number])).body.data).toMatchObject({ messages: 1, opted_out_skipped: 0 });
  });

  it('each entity hashes with its own key: the same number gives two unrelated hashes, neither an unkeyed HMAC', async () => {
    const [number] = fresh(1);
    await call(owner, 'POST', '/api/sms/opt_outs/', { entity_id: entity, phone: number });
    await call(ownerB, 'POST', '/api/sms/opt_outs/', { entity_id: entityB, phone: number });
    const rows = await query<{ entity_id: number; phone_hash: string }>('SELECT entity_id, phone_hash FROM sms_suppressions WHERE entity_id IN (?, ?)', [entity, entityB]);
    const ofA = new Set(rows.filter((row) => Number(row.entity_id) === entity).map((row) => row.phone_hash));
    const ofB = new Set(rows.filter((row) => Number(row.entity_id) === entityB).map((row) => row.phone_hash));
    expect([...ofA].some((hash) => ofB.has(hash))).toBe(false);
    const keys = await query<{ key_sealed: string }>('SELECT key_sealed FROM sms_suppression_keys WHERE entity_id IN (?, ?)', [entity, entityB]);
    expect(keys).toHaveLength(2);
    expect(ofB.has(createHmac('sha256', '').update(number).digest('hex'))).toBe(false);
  });
});
