/**
 * Only numbers that can receive an SMS (issue 42, section 4; packages/rules/src/phones.ts isBrazilianMobile),
 * and costs in the provider's currency priced by the segments it counts (section 7, last bullet;
 * src/simulators/sms-provider.ts):
 * - the preview and the send skip landlines, toll-free and foreign numbers as `not_mobile`, counted and
 *   the first named masked, in the preview, the create's answer and the campaign report; a list with no
 *   mobile number left is 422 `not_mobile`; only mobiles reach the provider;
 * - createContact refuses a landline (422 `not_mobile`), the import rejects its line (naming the rule,
 *   never the number); a landline stored before the rule reads `can_receive_sms: false` and a campaign to
 *   contacts skips it (none left: 422);
 * - the simulator counts segments as the provider does (GSM-7 160/153, UCS-2 70/67), reports them in
 *   `num_segments`, prices in BRL per segment by that count (an accented two-segment message is two), and
 *   the campaign report's cost carries that currency.
 * Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageRow } from '../src/messaging/models.js';
import { isBrazilianMobile } from '@palanque/rules/phones';
import { normalisedPhone } from '@palanque/rules/recipients';
import { segmentsOf, SmsProviderSimulator } from '../src/simulators/sms-provider.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request, type Result } from './helpers/http.js';
import { waitFor } from './helpers/process.js';
import { freshBody, recipientSource } from './helpers/sms.js';

const ACCOUNT = `AC${'4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b5e'}`;
const TOKEN = '2e3d4c5b6a79880f1e2d3c4b5a69781f';
const SENDER = '+5511940028922';

/** The issue's list: a São Paulo landline, a toll-free number and a number in the United States. */
const NOT_MOBILE = ['(11) 3222-1234', '0800 123 4567', '+1 202 555 0143'];
const NOT_MOBILE_MASKED = ['+55******1234', '+55******4567', '+1******0143'];

const provider = new SmsProviderSimulator();
let app: TestApp;
let admin: TestUser;
let owner: TestUser;
let entityId: number;
let credentialId: number;
/** Fresh Brazilian mobile numbers in E.164, this file's own. */
const mobiles = recipientSource('+5511973');

const call = (caller: TestUser, method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown) => request(app.baseUrl, method, path, caller.headers, body);
/** The details of a 422 `validation_failed`. */
function problemsOf(result: Result): Array<{ field: string; rule: string; message: string; value?: unknown }> {
  expectError(result, 422, 'validation_failed');
  return result.body.error.details;
}
const campaign = (list: string, mensagem = freshBody('Comício hoje')) => ({ titulo: 'Comício', credencial: credentialId, mensagem: { recipient_list_str: list, mensagem } });

async function messagesOf(campaignId: number): Promise<MessageRow[]> {
  return (await app.sms.models.Message.findAll({ where: { campaign_id: campaignId }, order: [['id', 'ASC']], raw: true })) as unknown as MessageRow[];
}

beforeAll(async () => {
  await provider.start();
  provider.addAccount(ACCOUNT, TOKEN);
  app = await startTestApp({ withJobs: true, selfPublicUrl: true, sms: { providerUrl: provider.url } });
  admin = await createAdmin(app);
  owner = await createUser(app);
  entityId = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
  const added = await call(admin, 'POST', '/api/sms/add_credential/', { name: 'Campanha', account_id: ACCOUNT, sender_id: SENDER, secret: TOKEN, entity_id: entityId });
  expect(added.status, added.text).toBe(201);
  credentialId = added.body.data.id;
  // Judged but not refused: these tests are about the numbers, not consent (a platform admin may relax it).
  const relaxed = await call(admin, 'PUT', `/api/sms/compliance/?entity_id=${entityId}`, { mode: 'warn' });
  expect(relaxed.status, relaxed.text).toBe(200);
});

afterAll(async () => {
  await app?.close();
  await provider.stop();
});

describe('which numbers can receive an SMS', () => {
  it('only Brazilian mobiles: landlines, toll-free, premium and foreign numbers (mobiles included) cannot', () => {
    for (const mobile of ['(11) 98765-4321', '+55 21 99876-5432', '61999999999', '+5569999999999']) expect(isBrazilianMobile(normalisedPhone(mobile)!), mobile).toBe(true);
    for (const other of [...NOT_MOBILE, '(21) 2555-0000', '+55 61 3333-4444', '0300 123 4567', '+351 912 345 678', '+44 7911 123456']) {
      expect(isBrazilianMobile(normalisedPhone(other)!), other).toBe(false);
    }
    expect(isBrazilianMobile('+55*******4321')).toBe(false);
  });
});

describe('a campaign to numbers that are not mobiles', () => {
  it("previews the issue's list as 422 not_mobile: nothing could be sent", async () => {
    const refused = await call(owner, 'POST', '/api/sms/campaigns/preview/', campaign(NOT_MOBILE.join(', ')));
    const [detail] = problemsOf(refused);
    expect(detail).toMatchObject({ field: 'mensagem.recipient_list_str', rule: 'not_mobile', value: 3 });
    for (const masked of NOT_MOBILE_MASKED) expect(detail!.message).toContain(masked);
    const sent = await call(owner, 'POST', '/api/sms/list_credentials/', campaign(NOT_MOBILE.join('\n')));
    expect(problemsOf(sent).map((problem) => problem.rule)).toContain('not_mobile');
    expect(await app.sms.models.Campaign.count({ where: { credential_id: credentialId, accepted: 0 } })).toBe(0);
  });

  it('skips them beside a mobile, counted and named masked, in the preview, the answer and the report; only the mobile is sent', async () => {
    const [mobile] = mobiles(1);
    const list = [...NOT_MOBILE, mobile!].join('\n');
    const preview = await call(owner, 'POST', '/api/sms/campaigns/preview/', campaign(list));
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body.data).toMatchObject({ messages: 1, not_mobile_skipped: 3, not_mobile_examples: NOT_MOBILE_MASKED, opted_out_skipped: 0, rejected: 0 });

    const body = freshBody('Comício hoje');
    const sent = await call(owner, 'POST', '/api/sms/list_credentials/', campaign(list, body));
    expect(sent.status, sent.text).toBe(201);
    expect(sent.body.data).toMatchObject({ accepted: 1, not_mobile_skipped: 3, not_mobile_examples: NOT_MOBILE_MASKED });
    const campaignId = sent.body.data.id as number;
    const report = await call(owner, 'GET', `/api/sms/campaigns/${campaignId}/`);
    expect(report.status, report.text).toBe(200);
    expect(report.body.data).toMatchObject({ accepted: 1, not_mobile_skipped: 3, not_mobile_examples: NOT_MOBILE_MASKED });
    const listed = await call(owner, 'GET', `/api/sms/campaigns/?entity_id=${entityId}`);
    expect(listed.body.data.results.find((found: { id: number }) => found.id === campaignId)).toMatchObject({ not_mobile_skipped: 3 });

    expect((await messagesOf(campaignId)).map((message) => message.recipient)).toEqual([mobile]);
    await waitFor(async () => provider.messages.some((message) => message.body === body) || undefined, { timeoutMs: 15_000, intervalMs: 100, what: 'the message at the provider' });
    expect(provider.messages.filter((message) => message.body === body).map((message) => message.to)).toEqual([mobile]);
  });

  it('reports 0 and no examples for a campaign of mobiles only', async () => {
    const preview = await call(owner, 'POST', '/api/sms/campaigns/preview/', campaign(mobiles(2).join('\n')));
    expect(preview.body.data).toMatchObject({ messages: 2, not_mobile_skipped: 0, not_mobile_examples: [] });
  });
});

describe('contacts', () => {
  it('refuses a landline, a toll-free and a foreign number as a contact (422 not_mobile) and takes a mobile', async () => {
    for (const phone of NOT_MOBILE) {
      const [detail] = problemsOf(await call(owner, 'POST', '/api/contacts/', { entity_id: entityId, phone }));
      expect(detail).toMatchObject({ field: 'phone', rule: 'not_mobile', value: phone });
    }
    const [mobile] = mobiles(1);
    const added = await call(owner, 'POST', '/api/contacts/', { entity_id: entityId, phone: mobile });
    expect(added.status, added.text).toBe(201);
    expect(added.body.data).toMatchObject({ phone: mobile, can_receive_sms: true });
  });

  it('rejects the line of a landline in an import, naming the rule and not the number, and imports the mobile', async () => {
    const [mobile] = mobiles(1);
    const response = await fetch(`${app.baseUrl}/api/contacts/import/?entity_id=${entityId}`, {
      method: 'POST',
      headers: { ...owner.headers, 'Content-Type': 'text/csv' },
      body: `telefone;nome\n(11) 3222-1234;Comitê\n${mobile};Ana\n0800 123 4567;Central\n`,
    });
    const report = ((await response.json()) as { data: { inserted: number; rejected: number; rejections: Array<{ line: number; reason: string }> } }).data;
    expect(response.status).toBe(200);
    expect(report).toMatchObject({ inserted: 1, rejected: 2 });
    expect(report.rejections.map((rejection) => rejection.line)).toEqual([2, 4]);
    for (const { reason } of report.rejections) {
      expect(reason).toContain('telefone');
      expect(reason).toContain('not_mobile');
      expect(reason).not.toContain('3222');
    }
  });

  it('flags a landline stored before the rule, skips it in a campaign to contacts, and refuses an audience of landlines only', async () => {
    const now = new Date();
    const stored = { entity_id: entityId, name: null, consent_source: null, consent_given_at: null, consent_text: null, created_by: owner.user.id, created_at: now, updated_at: now };
    const landline = await app.sms.models.Contact.create({ ...stored, phone: '+551132221234' });
    const landlineId = Number(landline.get('id'));
    await app.sms.models.ContactTag.create({ contact_id: landlineId, tag: 'fixos' });
    const [mobile] = mobiles(1);
    const added = await call(owner, 'POST', '/api/contacts/', { entity_id: entityId, phone: mobile, tags: ['comite'] });
    await app.sms.models.ContactTag.create({ contact_id: landlineId, tag: 'comite' });

    const read = await call(owner, 'GET', `/api/contacts/${landlineId}/`);
    expect(read.status, read.text).toBe(200);
    expect(read.body.data).toMatchObject({ phone: '+551132221234', can_receive_sms: false });
    const page = await call(owner, 'GET', `/api/contacts/?entity_id=${entityId}&tag=comite`);
    expect(page.body.data.results.map((contact: { id: number; can_receive_sms: boolean }) => [contact.id, contact.can_receive_sms])).toEqual([
      [landlineId, false],
      [added.body.data.id, true],
    ]);

    const toContacts = (tags: string[]) => ({ titulo: 'Comitê', credencial: credentialId, mensagem: { contatos: { tags }, mensagem: freshBody('Reunião no comitê') } });
    const sent = await call(owner, 'POST', '/api/sms/list_credentials/', toContacts(['comite']));
    expect(sent.status, sent.text).toBe(201);
    expect(sent.body.data).toMatchObject({ accepted: 1, not_mobile_skipped: 1, not_mobile_examples: ['+55******1234'] });
    expect((await messagesOf(sent.body.data.id)).map((message) => [message.recipient, message.contact_id])).toEqual([[mobile, added.body.data.id]]);

    const [detail] = problemsOf(await call(owner, 'POST', '/api/sms/campaigns/preview/', toContacts(['fixos'])));
    expect(detail).toMatchObject({ field: 'mensagem.contatos', rule: 'not_mobile', value: 1 });
  });
});

describe("the simulator's segments and prices", () => {
  it('counts segments as the provider does: GSM-7 160 then 153 each, extension characters twice, UCS-2 70 then 67', () => {
    expect(segmentsOf('a'.repeat(160))).toBe(1);
    expect(segmentsOf('a'.repeat(161))).toBe(2);
    expect(segmentsOf('a'.repeat(306))).toBe(2);
    expect(segmentsOf('a'.repeat(307))).toBe(3);
    expect(segmentsOf('€'.repeat(80))).toBe(1);
    expect(segmentsOf('€'.repeat(81))).toBe(2);
    // `ç` is not in the GSM alphabet (only `Ç` is): the message goes in UCS-2.
    expect(segmentsOf(`ç${'a'.repeat(69)}`)).toBe(1);
    expect(segmentsOf(`ç${'a'.repeat(70)}`)).toBe(2);
    expect(segmentsOf(`ç${'a'.repeat(133)}`)).toBe(2);
    expect(segmentsOf(`ç${'a'.repeat(134)}`)).toBe(3);
    // A surrogate pair is never split: 134 UTF-16 units, two segments of 67 if the emoji were cut, are three.
    expect(segmentsOf(`${'ã'.repeat(66)}😀${'a'.repeat(66)}`)).toBe(3);
  });

  it('prices an accented two-segment campaign as two segments, in BRL, and the report sums it in BRL', async () => {
    provider.reportPrices({ perSegment: '-0.08000' });
    try {
      const to = mobiles(2);
      // 100 characters with accents: UCS-2, two segments of 67 (the old simulator billed one: under 160 characters).
      const body = `${freshBody('Convite')} para a caminhada de sábado às 9h na praça, com a Maria Santos e a equipe da campanha!`.padEnd(100, '.');
      expect(segmentsOf(body)).toBe(2);
      const sent = await call(owner, 'POST', '/api/sms/list_credentials/', campaign(to.join('\n'), body));
      expect(sent.status, sent.text).toBe(201);
      expect(sent.body.data).toMatchObject({ encoding: 'UCS-2', segments: 2 });
      const campaignId = sent.body.data.id as number;
      const handed = await waitFor(async () => {
        const messages = await messagesOf(campaignId);
        return messages.every((message) => message.provider_sid) ? messages : undefined;
      }, { timeoutMs: 15_000, intervalMs: 100, what: 'both messages handed to the provider' });
      for (const message of handed) {
        expect((await provider.sendReceipt(message.provider_sid!, 'sent')).status).toBe(200);
        expect((await provider.sendReceipt(message.provider_sid!, 'delivered')).status).toBe(200);
      }
      const atProvider = provider.messages.filter((message) => message.body.startsWith(body.slice(0, 20)));
      expect(atProvider.map((message) => [message.segments, message.price])).toEqual([
        [2, { amount: '-0.16000', unit: 'BRL' }],
        [2, { amount: '-0.16000', unit: 'BRL' }],
      ]);
      const report = await call(owner, 'GET', `/api/sms/campaigns/${campaignId}/`);
      expect(report.body.data).toMatchObject({ state: 'completed', cost: [{ currency: 'BRL', amount: '0.32000', messages: 2 }] });
      const listed = await call(owner, 'GET', `/api/sms/campaigns/${campaignId}/messages/`);
      expect(listed.body.data.results.map((message: { price: string; price_unit: string }) => [message.price, message.price_unit])).toEqual([
        ['0.16000', 'BRL'],
        ['0.16000', 'BRL'],
      ]);
    } finally {
      provider.reportPrices(undefined);
    }
  });

  it("reports a message's segments and currency in its resource, as the provider's API does", async () => {
    const auth = `Basic ${Buffer.from(`${ACCOUNT}:${TOKEN}`).toString('base64')}`;
    const send = async (body: string) => {
      const response = await fetch(`${provider.url}/2010-04-01/Accounts/${ACCOUNT}/Messages.json`, {
        method: 'POST',
        headers: { Authorization: auth, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ To: mobiles(1)[0]!, From: SENDER, Body: body }),
      });
      expect(response.status).toBe(201);
      return (await response.json()) as { num_segments: string; price_unit: string; price: string | null };
    };
    expect(await send('Olá, tudo bem? Comício às 19h.')).toMatchObject({ num_segments: '1', price_unit: 'BRL', price: null });
    expect(await send('a'.repeat(200))).toMatchObject({ num_segments: '2', price_unit: 'BRL' });
    expect(await send('ã'.repeat(140))).toMatchObject({ num_segments: '3', price_unit: 'BRL' });
  });
});
