/**
 * Synthetic content and automated replies (issue 42, section 8; packages/rules/src/synthetic-content.ts) through the HTTP
 * API with the provider simulator and a real job queue:
 * - a campaign declaring synthetic content (`synthetic_content: { technology }`) must label it in its
 *   message (Res. TSE 23.610/2019 art. 9-B): `synthetic_content_label` is a warning under `warn`, a 422
 *   naming the message and the technology under `enforce`, and the declaration is kept in the report;
 * - a declared deepfake is refused under every mode, the preview included (art. 9-C §1º);
 * - the label rule itself: the phrases, accents and case, the technology's name, the first 160 characters;
 * - Palanque answers nobody by itself: a voter's message, an opt-out keyword and an opt-out in free text
 *   queue no message back (art. 9-B §3º: no automated interlocutor).
 * On SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasSyntheticLabel, LABEL_WITHIN, syntheticLabel } from '@palanque/rules/synthetic-content';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request, type Result } from './helpers/http.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ACCOUNT = `AC${'8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e'}`;
const AUTH_TOKEN = '1b2c3d4e5f60718293a4b5c6d7e8f901';
const SENDER = '+5511940029933';
const FOOTER = 'Campanha Maria Santos 13. Para sair, responda SAIR';
const SEND = '/api/sms/list_credentials/';
const PREVIEW = '/api/sms/campaigns/preview/';
const VOTER = '+5511987650101';

const provider = new SmsProviderSimulator();
let app: TestApp;
let platformAdmin: TestUser;
let owner: TestUser;
let entityId: number;
let credentialId: number;

const call = (caller: TestUser, method: 'GET' | 'POST' | 'PUT' | 'PATCH', path: string, body?: unknown) => request(app.baseUrl, method, path, caller.headers, body);
const campaign = (mensagem: string, synthetic?: Json) => ({
  titulo: 'Praça nova',
  credencial: credentialId,
  ...(synthetic ? { synthetic_content: synthetic } : {}),
  mensagem: { mensagem, recipient_list_str: VOTER },
});
const LABELLED = `${syntheticLabel('Midjourney')} Veja a praça: palanque.app/p/42`;
const UNLABELLED = 'Veja como a praça pode ficar: palanque.app/p/42';

async function setMode(mode: 'off' | 'warn' | 'enforce'): Promise<void> {
  // A platform admin may set every mode (relaxing one is theirs to decide).
  const answer = await call(platformAdmin, 'PUT', `/api/sms/compliance/?entity_id=${entityId}`, { mode, window: null });
  expect(answer.status, answer.text).toBe(200);
}

/** The details of a 422, as `field:rule`. */
function refused(answer: Result): string[] {
  expectError(answer, 422, 'validation_failed');
  return answer.body.error.details.map((detail: Json) => `${detail.field}:${detail.rule}`);
}

const rulesOf = (warnings: Json[] | undefined) => (warnings ?? []).map((warning) => warning.rule);

beforeAll(async () => {
  await provider.start();
  provider.addAccount(ACCOUNT, AUTH_TOKEN);
  app = await startTestApp({ withJobs: true, selfPublicUrl: true, sms: { providerUrl: provider.url } });
  platformAdmin = await createAdmin(app);
  owner = await createUser(app);
  entityId = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
  const added = await call(platformAdmin, 'POST', '/api/sms/add_credential/', { name: 'Campanha', account_id: ACCOUNT, sender_id: SENDER, secret: AUTH_TOKEN, entity_id: entityId });
  expect(added.status, added.text).toBe(201);
  credentialId = added.body.data.id;
  const footer = await call(owner, 'PATCH', `/api/sms/credentials/${credentialId}/`, { footer: FOOTER });
  expect(footer.status, footer.text).toBe(200);
  const now = new Date();
  await app.sms.models.Contact.create({
    entity_id: entityId,
    phone: VOTER,
    name: null,
    consent_source: 'formulário do site',
    consent_given_at: now,
    consent_text: 'Aceito receber mensagens da campanha.',
    created_by: owner.user.id,
    created_at: now,
    updated_at: now,
  });
});

afterAll(async () => {
  await app?.close();
  await provider.stop();
});

describe('the label rule (packages/rules/src/synthetic-content.ts)', () => {
  it('takes the phrases of art. 9-B with the technology, accents and case ignored, near the start', () => {
    expect(hasSyntheticLabel(syntheticLabel('Midjourney'), 'Midjourney')).toBe(true);
    expect(hasSyntheticLabel('CONTEUDO GERADO com midjourney. Veja!', 'Midjourney')).toBe(true);
    expect(hasSyntheticLabel('Conteúdo   alterado por IA (ElevenLabs): ouça o jingle', 'elevenlabs')).toBe(true);
    expect(hasSyntheticLabel('Conteúdo manipulado. Veja!', 'Midjourney')).toBe(false); // the technology unnamed
    expect(hasSyntheticLabel('Feito com Midjourney. Veja!', 'Midjourney')).toBe(false); // not said to be made or altered
    expect(hasSyntheticLabel(`${'x'.repeat(LABEL_WITHIN)} ${syntheticLabel('Midjourney')}`, 'Midjourney')).toBe(false); // buried
  });
});

describe('a campaign declaring synthetic content', () => {
  it('under warn: sends an unlabelled one with the warning naming the technology, and keeps the declaration in its report', async () => {
    await setMode('warn');
    const preview = await call(owner, 'POST', PREVIEW, campaign(UNLABELLED, { technology: 'Midjourney' }));
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body.data.compliance.warnings).toContainEqual(expect.objectContaining({ rule: 'synthetic_content_label', technology: 'Midjourney' }));

    const sent = await call(owner, 'POST', SEND, campaign(UNLABELLED, { technology: ' Midjourney ' }));
    expect(sent.status, sent.text).toBe(201);
    expect(sent.body.data.synthetic_content).toEqual({ technology: 'Midjourney' });
    expect(sent.body.data.warnings).toContainEqual(expect.objectContaining({ rule: 'synthetic_content_label', technology: 'Midjourney' }));
    const report = await call(owner, 'GET', `/api/sms/campaigns/${sent.body.data.id}/`);
    expect(report.status, report.text).toBe(200);
    expect(report.body.data.synthetic_content).toEqual({ technology: 'Midjourney' });
    expect(rulesOf(report.body.data.warnings)).toContain('synthetic_content_label');

    // Labelled: no such warning. Declaring nothing: the rule does not judge, and the report says nothing.
    const labelled = await call(owner, 'POST', SEND, campaign(LABELLED, { technology: 'Midjourney' }));
    expect(labelled.status, labelled.text).toBe(201);
    expect(rulesOf(labelled.body.data.warnings)).not.toContain('synthetic_content_label');
    const plain = await call(owner, 'POST', SEND, campaign(UNLABELLED));
    expect(plain.status, plain.text).toBe(201);
    expect(rulesOf(plain.body.data.warnings)).not.toContain('synthetic_content_label');
    expect(plain.body.data).not.toHaveProperty('synthetic_content');
    const plainReport = await call(owner, 'GET', `/api/sms/campaigns/${plain.body.data.id}/`);
    expect(plainReport.body.data).not.toHaveProperty('synthetic_content');
  });

  it('under enforce: refuses an unlabelled one naming the message and the technology, sends nothing; the label passes the rule', async () => {
    await setMode('enforce');
    const before = await app.sms.models.Campaign.count();
    const answer = await call(owner, 'POST', SEND, campaign(UNLABELLED, { technology: 'Midjourney' }));
    expect(refused(answer)).toContain('mensagem.mensagem:synthetic_content_label');
    expect(answer.body.error.details).toContainEqual(expect.objectContaining({ field: 'mensagem.mensagem', rule: 'synthetic_content_label', value: 'Midjourney' }));
    expect(await app.sms.models.Campaign.count()).toBe(before);
    // A label naming another technology is no label for this one.
    const other = await call(owner, 'POST', SEND, campaign(`${syntheticLabel('DALL-E')} Veja a praça`, { technology: 'Midjourney' }));
    expect(refused(other)).toContain('mensagem.mensagem:synthetic_content_label');

    const preview = await call(owner, 'POST', PREVIEW, campaign(LABELLED, { technology: 'Midjourney' }));
    expect(preview.status, preview.text).toBe(200);
    expect(rulesOf(preview.body.data.compliance.warnings)).not.toContain('synthetic_content_label');
    const unlabelledPreview = await call(owner, 'POST', PREVIEW, campaign(UNLABELLED, { technology: 'Midjourney' }));
    expect(unlabelledPreview.status, unlabelledPreview.text).toBe(200);
    expect(unlabelledPreview.body.data.compliance).toMatchObject({ mode: 'enforce', would_refuse: true });
    expect(rulesOf(unlabelledPreview.body.data.compliance.warnings)).toContain('synthetic_content_label');
    // A preview whose body has another problem names the label beside it (every problem at once).
    const broken = await call(owner, 'POST', PREVIEW, { ...campaign(UNLABELLED, { technology: 'Midjourney' }), mensagem: { mensagem: UNLABELLED, recipient_list_str: '12345' } });
    expect(refused(broken)).toEqual(expect.arrayContaining(['mensagem.recipient_list_str:phone_number', 'mensagem.mensagem:synthetic_content_label']));
  });

  it('refuses a declared deepfake under every mode, labelled or not, the preview included', async () => {
    for (const mode of ['off', 'warn', 'enforce'] as const) {
      await setMode(mode);
      const before = await app.sms.models.Campaign.count();
      for (const path of [SEND, PREVIEW]) {
        const answer = await call(owner, 'POST', path, campaign(LABELLED, { technology: 'Midjourney', deepfake: true }));
        expect(refused(answer), `${mode} ${path}`).toContain('synthetic_content.deepfake:deepfake_banned');
      }
      expect(await app.sms.models.Campaign.count()).toBe(before);
    }
    // `deepfake: false` is an ordinary declaration.
    await setMode('warn');
    const ordinary = await call(owner, 'POST', SEND, campaign(LABELLED, { technology: 'Midjourney', deepfake: false }));
    expect(ordinary.status, ordinary.text).toBe(201);
  });

  it('refuses a declaration that is not the contract (unknown field, no technology)', async () => {
    expect(refused(await call(owner, 'POST', SEND, campaign(LABELLED, { tecnologia: 'Midjourney' })))).toContain('synthetic_content.technology:required');
    expect(refused(await call(owner, 'POST', SEND, campaign(LABELLED, { technology: '' }))).some((rule) => rule.startsWith('synthetic_content.technology:'))).toBe(true);
  });
});

describe('no automated replies (art. 9-B §3º)', () => {
  it('answers no message by itself: a question, an opt-out keyword and an opt-out in free text queue nothing back', async () => {
    const webhook = `${app.baseUrl}/api/webhook/provider_sms/`;
    const voter = '+5521985550177';
    for (const body of ['Quem é o candidato?', 'não quero mais receber', 'SAIR']) {
      const delivered = await provider.sendReply(webhook, { accountSid: ACCOUNT, from: voter, to: SENDER, body });
      expect(delivered.status).toBe(200);
    }
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(provider.messages.filter((message) => message.to === voter)).toEqual([]);
    const outbound = await app.sequelize.query(`SELECT COUNT(*) AS n FROM sms_messages WHERE recipient = '${voter}'`, { plain: true });
    expect(Number((outbound as { n: unknown }).n)).toBe(0);
  });
});
