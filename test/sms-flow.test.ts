/**
 * An SMS campaign end to end against the provider simulator over loopback, with a real job queue: an
 * admin adds a credential, a team operator sends a campaign, the jobs hand each message to the
 * simulator, its signed receipts move the messages forward (never back), and a reply of SAIR opts the
 * number out of the next campaign. Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { request } from './helpers/http.js';
import { waitFor } from './helpers/process.js';
import { keepWarnMode } from './helpers/sms.js';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const ACCOUNT = `AC${'0f3b9c2d1e4a5b6c7d8e9f0a1b2c3d4e'}`;
const AUTH_TOKEN = '9f8e7d6c5b4a39281706f5e4d3c2b1a0';

const provider = new SmsProviderSimulator();
let app: TestApp;
let admin: TestUser;
let operator: TestUser;
let credentialId: number;

const post = (caller: TestUser, path: string, body: unknown) => request(app.baseUrl, 'POST', path, caller.headers, body);

async function messagesOf(campaignId: number): Promise<Array<{ recipient: string; status: string; provider_sid: string | null }>> {
  return (await app.sms.models.Message.findAll({ where: { campaign_id: campaignId }, order: [['id', 'ASC']], raw: true })) as unknown as Array<{
    recipient: string;
    status: string;
    provider_sid: string | null;
  }>;
}

beforeAll(async () => {
  await provider.start();
  provider.addAccount(ACCOUNT, AUTH_TOKEN);
  app = await startTestApp({ withJobs: true, selfPublicUrl: true, sms: { providerUrl: provider.url } });
  admin = await createAdmin(app);
  operator = await createUser(app);
  const entityId = await app.entities.store.create('candidato', admin.user.id, { nome: 'Maria Santos' });
  await keepWarnMode(app, entityId);
  await app.entities.models.Member.create({ entity_id: entityId, user_id: operator.user.id, role: 'operator', added_at: new Date() });
  const added = await post(admin, '/api/sms/add_credential/', { name: 'Campanha', account_id: ACCOUNT, sender_id: '11940028922', secret: AUTH_TOKEN, entity_id: entityId });
  expect(added.status, added.text).toBe(201);
  expect((added.body as Json).data).toMatchObject({ sender_id: '+5511940028922', entity_id: entityId, provider: 'provider' });
  expect(JSON.stringify(added.body)).not.toContain(AUTH_TOKEN);
  credentialId = (added.body as Json).data.id;
});

afterAll(async () => {
  await app?.close();
  await provider.stop();
});

it('sends a campaign through the provider, applies its receipts in order only, and honours an opt-out', async () => {
  const listed = await request(app.baseUrl, 'GET', '/api/sms/list_credentials/', operator.headers);
  expect((listed.body as Json).data.map((credential: Json) => credential.id)).toEqual([credentialId]);

  const sent = await post(operator, '/api/sms/list_credentials/', {
    titulo: 'Lembrete',
    credencial: credentialId,
    mensagem: { recipient_list_str: '21998765432, 12345;\n(11)91234-5678 abc', mensagem: 'Vote no dia 6!' },
  });
  // Invalid entries are listed and nothing is sent.
  expect(sent.status).toBe(422);
  expect((sent.body as Json).error.details.map((detail: Json) => [detail.message, detail.value])).toEqual([
    ['entry 2 is not a valid phone number', '12345'],
    ['entry 4 is not a valid phone number', 'abc'],
  ]);

  const campaign = await post(operator, '/api/sms/list_credentials/', {
    titulo: 'Lembrete',
    credencial: credentialId,
    mensagem: { recipient_list_str: '21998765432, +5521998765432;\n(11)91234-5678', mensagem: 'Vote no dia 6!' },
  });
  expect(campaign.status, campaign.text).toBe(201);
  const data = (campaign.body as Json).data;
  expect(data).toMatchObject({ titulo: 'Lembrete', credencial: credentialId, accepted: 2, rejected: 1, opted_out_skipped: 0, encoding: 'GSM-7', segments: 1, state: 'sending' });

  const handed = await waitFor(async () => {
    const messages = await messagesOf(data.id);
    return messages.every((message) => message.provider_sid) ? messages : undefined;
  }, { timeoutMs: 15_000, what: 'both messages handed to the provider', intervalMs: 100 });
  expect(handed.map((message) => message.recipient)).toEqual(['+5521998765432', '+5511912345678']);
  // Each message is a job of its own, queued together: workers may hand them over in either order.
  expect(provider.messages.map((message) => [message.to, message.from, message.body]).sort()).toEqual([
    ['+5511912345678', '+5511940028922', 'Vote no dia 6!'],
    ['+5521998765432', '+5511940028922', 'Vote no dia 6!'],
  ]);
  expect(provider.messages[0]!.statusCallback).toBe(`${app.baseUrl}/api/callback/provider_sms/`);

  const sid = handed[0]!.provider_sid!;
  const delivered = await provider.sendReceipt(sid, 'delivered');
  expect(delivered.status).toBe(200);
  expect(((await delivered.json()) as Json).data).toEqual({ message_sid: sid, status: 'delivered', applied: true });
  const late = await provider.sendReceipt(sid, 'sent');
  expect(((await late.json()) as Json).data).toEqual({ message_sid: sid, status: 'delivered', applied: false });
  const forged = await provider.sendReceipt(sid, 'failed', { signature: 'bm90IHRoZSBzaWduYXR1cmU=' });
  expect(forged.status).toBe(403);
  expect((await messagesOf(data.id))[0]!.status).toBe('delivered');

  const reply = await provider.sendReply(`${app.baseUrl}/api/webhook/provider_sms/`, { accountSid: ACCOUNT, from: '+5511912345678', to: '+5511940028922', body: ' sair ' });
  expect(reply.status, await reply.clone().text()).toBe(200);
  expect(((await reply.json()) as Json).data).toMatchObject({ from: '+5511912345678', opted_out: true });

  const next = await post(operator, '/api/sms/list_credentials/', {
    titulo: 'Segundo',
    credencial: credentialId,
    mensagem: { recipient_list_str: '21998765432 11912345678', mensagem: 'Ação!' },
  });
  expect((next.body as Json).data).toMatchObject({ accepted: 1, opted_out_skipped: 1, encoding: 'UCS-2' });
});

it('retries a provider failure that may pass, and fails a message the provider refuses for good', async () => {
  // The scripted failures must meet this test's message, not one still queued by the test before.
  await waitFor(async () => ((await app.sms.models.Message.count({ where: { status: 'queued' } })) === 0 ? true : undefined), {
    timeoutMs: 15_000,
    what: 'earlier messages to leave the queue',
    intervalMs: 100,
  });
  const attemptsBefore = provider.attempts;
  provider.failNext({ status: 503, code: 20503, message: 'Service unavailable' }, { status: 400, code: 21211, message: "The 'To' number is not valid" });
  const campaign = await post(admin, '/api/sms/list_credentials/', {
    titulo: 'Falhas',
    credencial: credentialId,
    mensagem: { recipient_list_str: '21912340001', mensagem: 'Teste' },
  });
  expect(campaign.status, campaign.text).toBe(201);
  const [message] = await waitFor(async () => {
    const messages = await messagesOf((campaign.body as Json).data.id);
    return messages[0]!.status === 'queued' ? undefined : messages;
  }, { timeoutMs: 30_000, what: 'the message to leave the queue', intervalMs: 200 });
  // First try: 503 (retried after a delay); second: 400 21211 (permanent).
  expect(message).toMatchObject({ status: 'failed', provider_sid: null });
  const row = (await app.sms.models.Message.findOne({ where: { campaign_id: (campaign.body as Json).data.id }, raw: true })) as unknown as Json;
  expect(row.error_code).toBe('21211');
  expect(provider.attempts - attemptsBefore).toBe(2);
});
