/**
 * The electoral rules of SMS campaigns (issue 23) through the HTTP API, with the provider simulator and a
 * real job queue: an entity's compliance mode and propaganda window (typed, or from the election of the
 * court candidacy it is linked to, second round included), a credential's footer (set, checked, sent at
 * the end of every message and counted in its segments), the preview, and each rule
 * (`consent_missing`, `footer_missing`, `outside_campaign_window`) under `off`, `warn` and `enforce`, for
 * a pasted list and for a campaign to the entity's contacts by tag. Contacts are written through the
 * models. On SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { loadCourtSample, linkEntity, CANDIDACIES, ELECTIONS } from './helpers/court-data.js';
import { expectError, request, type Result } from './helpers/http.js';
import { waitFor } from './helpers/process.js';
import { brasiliaDay } from '../src/brasilia-time.js';
import { lastSundayOfOctober } from '../src/messaging/compliance.js';
import { defineCourtModels } from '../src/elections/tse/models.js';
import { courtReferenceOf } from '../src/elections/tse/reference.js';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ACCOUNT = `AC${'5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d'}`;
const AUTH_TOKEN = '0a1b2c3d4e5f60718293a4b5c6d7e8f9';
const FOOTER = 'Campanha Maria Santos 13. Para sair, responda SAIR';
const FRONT_END = 'https://app.palanque.test';
const COMPLIANCE = '/api/sms/compliance/';
const SEND = '/api/sms/list_credentials/';
const PREVIEW = '/api/sms/campaigns/preview/';

/** Numbers of the campaigns: the contacts' and a stranger's. */
const ANA = '+5511987650001';
const BIA = '+5511987650002';
const CAIO = '+5511987650003';
const STRANGER = '+5521987650009';

const provider = new SmsProviderSimulator();
let app: TestApp;
let platformAdmin: TestUser;
let owner: TestUser;
let teamAdmin: TestUser;
let operator: TestUser;
let viewer: TestUser;
let outsider: TestUser;
let entityId: number;
let credentialId: number;

const call = (caller: TestUser, method: 'GET' | 'POST' | 'PUT' | 'PATCH', path: string, body?: unknown) => request(app.baseUrl, method, path, caller.headers, body);
const settingsOf = (caller: TestUser, id = entityId) => call(caller, 'GET', `${COMPLIANCE}?entity_id=${id}`);
const setSettings = (caller: TestUser, body: unknown, id = entityId) => call(caller, 'PUT', `${COMPLIANCE}?entity_id=${id}`, body);
const patchCredential = (caller: TestUser, id: number, body: unknown) => call(caller, 'PATCH', `/api/sms/credentials/${id}/`, body);
const campaign = (mensagem: Json, credencial = credentialId) => ({ titulo: 'Convite', credencial, mensagem: { mensagem: 'Reunião no comitê às 19h.', ...mensagem } });
const toList = (...numbers: string[]) => campaign({ recipient_list_str: numbers.join('\n') });

/** The day `days` after today in Brasília, YYYY-MM-DD. */
function dayFromToday(days: number): string {
  const date = new Date(`${brasiliaDay()}T12:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

/** The rules of a 422's details, as `field:rule`. */
function rulesRefused(answer: Result): string[] {
  expectError(answer, 422, 'validation_failed');
  return answer.body.error.details.map((detail: Json) => `${detail.field}:${detail.rule}`);
}

/** Sets the mode as a platform admin: relaxing it to `warn` or `off` is their decision (issue 42). */
async function setMode(mode: 'off' | 'warn' | 'enforce', window: Json | null = null, id = entityId): Promise<void> {
  const answer = await setSettings(platformAdmin, { mode, window }, id);
  expect(answer.status, answer.text).toBe(200);
}

async function setFooter(footer: string | null, id = credentialId): Promise<void> {
  const answer = await patchCredential(owner, id, { footer });
  expect(answer.status, answer.text).toBe(200);
}

async function addContact(phone: string, { consent, tags = [] }: { consent: boolean; tags?: string[] }, entity = entityId): Promise<number> {
  const now = new Date();
  const row = await app.sms.models.Contact.create({
    entity_id: entity,
    phone,
    name: null,
    consent_source: consent ? 'formulário do site' : null,
    consent_given_at: consent ? now : null,
    consent_text: consent ? 'Aceito receber mensagens da campanha.' : null,
    created_by: owner.user.id,
    created_at: now,
    updated_at: now,
  });
  const id = Number(row.get('id'));
  for (const tag of tags) await app.sms.models.ContactTag.create({ contact_id: id, tag });
  return id;
}

async function historyOf(id = entityId): Promise<Json[]> {
  const answer = await call(owner, 'GET', `/api/entidade/history/?id=${id}`);
  expect(answer.status, answer.text).toBe(200);
  return answer.body.data.results;
}

async function campaignCount(): Promise<number> {
  return app.sms.models.Campaign.count();
}

beforeAll(async () => {
  await provider.start();
  provider.addAccount(ACCOUNT, AUTH_TOKEN);
  app = await startTestApp({ withJobs: true, selfPublicUrl: true, sms: { providerUrl: provider.url }, config: { corsOrigins: [FRONT_END] } });
  await loadCourtSample(app.sequelize);
  courtReferenceOf(app.sequelize).invalidate();
  // A supplementary election under way (issue 42): its propaganda span holds the days around today, so a
  // typed window around today lies inside a legal span for an entity with no election of its own.
  await app.sequelize.getQueryInterface().bulkInsert('election_calendar', [
    {
      title: 'Eleição Suplementar de teste', year: Number(dayFromToday(40).slice(0, 4)), scope: 'municipal', supplementary: true, uf: 'SP', municipality_ibge: 3509502,
      registration_deadline: dayFromToday(-20), propaganda_starts_on: dayFromToday(-10), first_round_on: dayFromToday(40), second_round_on: null, certification_on: dayFromToday(60),
      sources: JSON.stringify({ registration_deadline: 'test', propaganda_starts_on: 'test', first_round_on: 'test', second_round_on: 'test', certification_on: 'test' }), updated_at: new Date(), updated_by: null,
    },
  ]);
  platformAdmin = await createAdmin(app);
  [owner, teamAdmin, operator, viewer, outsider] = await Promise.all([createUser(app), createUser(app), createUser(app), createUser(app), createUser(app)]);
  entityId = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
  for (const [member, role] of [[teamAdmin, 'admin'], [operator, 'operator'], [viewer, 'viewer']] as const) {
    await app.entities.models.Member.create({ entity_id: entityId, user_id: member.user.id, role, added_at: new Date() });
  }
  const added = await call(platformAdmin, 'POST', '/api/sms/add_credential/', { name: 'Campanha', account_id: ACCOUNT, sender_id: '11940028922', secret: AUTH_TOKEN, entity_id: entityId });
  expect(added.status, added.text).toBe(201);
  expect(added.body.data.footer).toBeNull();
  credentialId = added.body.data.id;
  await addContact(ANA, { consent: true, tags: ['voluntarios'] });
  await addContact(BIA, { consent: false, tags: ['voluntarios', 'doadores'] });
  await addContact(CAIO, { consent: true, tags: ['doadores'] });
});

afterAll(async () => {
  await app?.close();
  await provider.stop();
});

describe('getSmsCompliance and setSmsCompliance', () => {
  it('reads the default, enforce with no window (issue 42), for every role of the team, and 404 for a stranger', async () => {
    for (const caller of [owner, operator, viewer, platformAdmin]) {
      const answer = await settingsOf(caller);
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body.data).toEqual({ entity_id: entityId, mode: 'enforce', window: null, effective_window: null, updated_at: null, updated_by: null });
    }
    expectError(await settingsOf(outsider), 404, 'not_found');
  });

  it('lets the owner and admins set the mode and a typed window, recorded in the history; operators and viewers may not', async () => {
    expectError(await setSettings(operator, { mode: 'off' }), 403, 'forbidden');
    expectError(await setSettings(viewer, { mode: 'off' }), 403, 'forbidden');
    expectError(await setSettings(outsider, { mode: 'off' }), 404, 'not_found');

    const set = await setSettings(teamAdmin, { mode: 'enforce', window: { starts_on: '2026-08-16', ends_on: '2026-10-03' } });
    expect(set.status, set.text).toBe(200);
    expect(set.body.data).toMatchObject({
      entity_id: entityId,
      mode: 'enforce',
      window: { starts_on: '2026-08-16', ends_on: '2026-10-03' },
      effective_window: { starts_on: '2026-08-16', ends_on: '2026-10-03', spans: [{ starts_on: '2026-08-16', ends_on: '2026-10-03', round: 1 }], source: 'typed', election: null, calendar_election_id: null },
      updated_by: teamAdmin.user.id,
    });
    // What was read can be sent back: the read-only fields are ignored. The same settings change nothing.
    const again = await setSettings(owner, set.body.data);
    expect(again.status, again.text).toBe(200);
    const changes = (await historyOf()).filter((row) => row.subject === 'sms_compliance');
    expect(changes).toEqual([
      expect.objectContaining({
        action: 'updated',
        subject_id: null,
        actor: expect.objectContaining({ id: teamAdmin.user.id }),
        // The mode was `enforce` already: the default (issue 42).
        changes: [
          { field: 'window_starts_on', before: null, after: '2026-08-16' },
          { field: 'window_ends_on', before: null, after: '2026-10-03' },
        ],
      }),
    ]);

    // A window left out is removed.
    await setMode('warn');
    expect((await settingsOf(viewer)).body.data).toMatchObject({ mode: 'warn', window: null, effective_window: null });
  });

  it('refuses a window that ends before it starts, a mode not of the three, and an unknown field', async () => {
    expect(rulesRefused(await setSettings(owner, { mode: 'warn', window: { starts_on: '2026-08-16', ends_on: '2026-08-01' } }))).toEqual(['window.ends_on:window_order']);
    expect(rulesRefused(await setSettings(owner, { mode: 'strict' }))).toEqual(['mode:enum']);
    expect(rulesRefused(await setSettings(owner, { mode: 'warn', window: { starts_on: '2026-02-30', ends_on: '2026-10-03' } }))).toEqual(['window.starts_on:real_date']);
    expect(rulesRefused(await setSettings(owner, { mode: 'warn', modo: 'off' }))).toEqual(['modo:additionalProperties']);
    expect((await settingsOf(owner)).body.data.mode).toBe('warn');
  });
});

describe('the propaganda window of an entity linked to a court candidacy', () => {
  let linked: number;

  beforeAll(async () => {
    linked = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria da Silva Santos' });
  });

  it('ends on the eve of the second round for a candidate in it, the first voting day left out (issue 42): the calendar\'s day until the court\'s data holds that round', async () => {
    // Maria, mayor of São Paulo 2024, 2º TURNO; the sample holds the first round only.
    await linkEntity(app.sequelize, linked, CANDIDACIES.maria);
    const lawDay = lastSundayOfOctober(2024);
    expect(lawDay).toBe('2024-10-27');
    expect((await settingsOf(owner, linked)).body.data.effective_window).toEqual({
      starts_on: '2024-08-16',
      ends_on: '2024-10-26',
      spans: [
        { starts_on: '2024-08-16', ends_on: '2024-10-05', round: 1 },
        { starts_on: '2024-10-07', ends_on: '2024-10-26', round: 2 },
      ],
      source: 'election',
      election: { cd_eleicao: null, ano: 2024, nr_turno: 2, ds_eleicao: null, dt_eleicao: '2024-10-27' },
      calendar_election_id: expect.any(Number),
    });

    await defineCourtModels(app.sequelize).Election.create({
      cd_eleicao: 620, ano: 2024, cd_tipo_eleicao: 2, nr_turno: 2, ds_eleicao: 'Eleições Municipais 2024 - 2º turno', dt_eleicao: '2024-10-27', tp_abrangencia: 'MUNICIPAL', updated_at: new Date(),
    });
    courtReferenceOf(app.sequelize).invalidate();
    expect((await settingsOf(owner, linked)).body.data.effective_window).toMatchObject({
      ends_on: '2024-10-26',
      election: { cd_eleicao: 620, nr_turno: 2, ds_eleicao: 'Eleições Municipais 2024 - 2º turno', dt_eleicao: '2024-10-27' },
    });
  });

  it('ends on the eve of the first round for a candidate not in the second; a typed window must lie inside it and narrows it', async () => {
    // João D'Ávila, councillor of São Paulo 2024, elected in the first round.
    await linkEntity(app.sequelize, linked, CANDIDACIES.joaoDavila);
    expect(rulesRefused(await setSettings(owner, { mode: 'enforce', window: { starts_on: dayFromToday(-1), ends_on: dayFromToday(30) } }, linked))).toEqual(['window:outside_legal_window']);
    const answer = await setSettings(owner, { mode: 'enforce', window: { starts_on: '2024-09-01', ends_on: '2024-10-05' } }, linked);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.data.effective_window).toEqual({
      starts_on: '2024-09-01',
      ends_on: '2024-10-05',
      spans: [{ starts_on: '2024-09-01', ends_on: '2024-10-05', round: 1 }],
      source: 'typed',
      election: { cd_eleicao: ELECTIONS.municipal2024, ano: 2024, nr_turno: 1, ds_eleicao: 'Eleições Municipais 2024', dt_eleicao: '2024-10-06' },
      calendar_election_id: expect.any(Number),
    });
    await setSettings(owner, { mode: 'enforce', window: null }, linked);
    expect((await settingsOf(owner, linked)).body.data.effective_window).toMatchObject({ source: 'election', starts_on: '2024-08-16', ends_on: '2024-10-05' });
  });

  it('refuses a send after the vote under enforce, naming the window, the day and the election being over', async () => {
    await linkEntity(app.sequelize, linked, CANDIDACIES.joaoDavila);
    const added = await call(platformAdmin, 'POST', '/api/sms/add_credential/', { name: 'João', account_id: ACCOUNT, sender_id: '11940028933', secret: AUTH_TOKEN, entity_id: linked, footer: 'João 50123. Responda PARE para sair' });
    expect(added.status, added.text).toBe(201);
    await app.sms.models.Contact.create({ entity_id: linked, phone: ANA, name: null, consent_source: 'evento', consent_given_at: new Date(), consent_text: null, created_by: owner.user.id, created_at: new Date(), updated_at: new Date() });
    const before = await campaignCount();
    const refused = await call(owner, 'POST', SEND, { ...toList(ANA), credencial: added.body.data.id });
    expect(rulesRefused(refused)).toEqual(['credencial:outside_campaign_window', 'credencial:election_over']);
    expect(refused.body.error.details[0]).toMatchObject({ value: brasiliaDay(), message: expect.stringContaining('2024-08-16 to 2024-10-05 (the election voting on 2024-10-06') });
    expect(refused.body.error.details[1]).toMatchObject({ value: '2024-10-06', message: expect.stringContaining('Eleições Municipais 2024') });
    expect(await campaignCount()).toBe(before);
  });
});

describe('the footer of a credential', () => {
  it('is set by the owner and admins of its entity, checked for an opt-out keyword, and recorded in the history', async () => {
    expectError(await patchCredential(operator, credentialId, { footer: FOOTER }), 403, 'forbidden');
    expectError(await patchCredential(viewer, credentialId, { footer: FOOTER }), 403, 'forbidden');
    expectError(await patchCredential(outsider, credentialId, { footer: FOOTER }), 404, 'not_found');
    expectError(await patchCredential(owner, 999999, { footer: FOOTER }), 404, 'not_found');
    const noWayOut = await patchCredential(owner, credentialId, { footer: 'Campanha Maria Santos 13' });
    expect(rulesRefused(noWayOut)).toEqual(['footer:opt_out_keyword']);

    const updated = await patchCredential(teamAdmin, credentialId, { footer: `  ${FOOTER} ` });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.data).toMatchObject({ id: credentialId, footer: FOOTER, sender_id: '+5511940028922', entity_id: entityId });
    const listed = await call(operator, 'GET', '/api/sms/list_credentials/');
    expect(listed.body.data.find((credential: Json) => credential.id === credentialId).footer).toBe(FOOTER);
    const rows = (await historyOf()).filter((row) => row.subject === 'sms_credential' && row.action === 'updated');
    expect(rows[0]).toMatchObject({ subject_id: credentialId, changes: [{ field: 'footer', before: null, after: FOOTER }] });
  });

  it('takes the credential back as listed, refusing a field that cannot change, and null removes the footer', async () => {
    const listed = (await call(owner, 'GET', '/api/sms/list_credentials/')).body.data.find((credential: Json) => credential.id === credentialId);
    const sentBack = await patchCredential(owner, credentialId, { ...listed, name: 'Campanha Maria' });
    expect(sentBack.status, sentBack.text).toBe(200);
    expect(sentBack.body.data).toMatchObject({ name: 'Campanha Maria', footer: FOOTER });
    expect(rulesRefused(await patchCredential(owner, credentialId, { sender_id: '+5511940028999' }))).toEqual(['sender_id:immutable']);
    expect(rulesRefused(await patchCredential(owner, credentialId, { name: '  ' }))).toEqual(['name:not_blank']);
    await setFooter(null);
    expect((await patchCredential(owner, credentialId, {})).body.data.footer).toBeNull();
  });

  it('is platform admins\' only on a credential without an entity, and given when a credential is added', async () => {
    const refused = await call(platformAdmin, 'POST', '/api/sms/add_credential/', { name: 'Geral', account_id: ACCOUNT, sender_id: '11940028944', secret: AUTH_TOKEN, footer: 'Palanque' });
    expect(rulesRefused(refused)).toEqual(['footer:opt_out_keyword']);
    const added = await call(platformAdmin, 'POST', '/api/sms/add_credential/', { name: 'Geral', account_id: ACCOUNT, sender_id: '11940028944', secret: AUTH_TOKEN, footer: 'Palanque. STOP para sair' });
    expect(added.status, added.text).toBe(201);
    expect(added.body.data.footer).toBe('Palanque. STOP para sair');
    expectError(await patchCredential(owner, added.body.data.id, { footer: null }), 404, 'not_found');
    const cleared = await patchCredential(platformAdmin, added.body.data.id, { footer: null });
    expect(cleared.body.data.footer).toBeNull();
  });

  it('answers a front end\'s preflight for PATCH and PUT', async () => {
    for (const method of ['PATCH', 'PUT']) {
      const preflight = await fetch(`${app.baseUrl}/api/sms/credentials/${credentialId}/`, {
        method: 'OPTIONS',
        headers: { Origin: FRONT_END, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': 'authorization, content-type' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-methods')?.split(',')).toContain(method);
    }
  });
});

describe('previewSmsCampaign', () => {
  it('shows the text with the footer, its segments and the messages, and sends nothing', async () => {
    await setMode('warn');
    await setFooter(FOOTER);
    // 150 GSM-7 characters: one segment alone, two with the footer.
    const body = 'A'.repeat(150);
    const before = { campaigns: await campaignCount(), sent: provider.messages.length };
    const answer = await call(operator, 'POST', PREVIEW, campaign({ mensagem: body, recipient_list_str: `${ANA}, ${CAIO}, ${ANA}` }));
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.data).toEqual({
      text: `${body}\n${FOOTER}`,
      footer: FOOTER,
      encoding: 'GSM-7',
      segments: 2,
      messages: 2,
      rejected: 1,
      opted_out_skipped: 0,
      not_mobile_skipped: 0,
      not_mobile_examples: [],
      total_segments: 4,
      compliance: { mode: 'warn', warnings: [], would_refuse: false },
    });
    expect(await campaignCount()).toBe(before.campaigns);
    expect(provider.messages.length).toBe(before.sent);
  });

  it('lists the rules broken, and under enforce says the send would be refused', async () => {
    await setFooter(null);
    const preview = async () => (await call(operator, 'POST', PREVIEW, toList(ANA, STRANGER))).body.data.compliance;
    expect(await preview()).toEqual({
      mode: 'warn',
      warnings: [
        { rule: 'consent_missing', message: `1 of 2 numbers has no consent on record as a contact of entity ${entityId}: +55*******0009`, numbers: 1, examples: ['+55*******0009'] },
        { rule: 'footer_missing', message: `credential ${credentialId} has no footer identifying the sender and offering a way out (updateSmsCredential sets one)` },
      ],
      would_refuse: false,
    });
    await setMode('enforce');
    expect(await preview()).toMatchObject({ mode: 'enforce', would_refuse: true });
    await setMode('off');
    // Judged under off too, never refused (issue 42).
    expect(await preview()).toMatchObject({ mode: 'off', warnings: [{ rule: 'consent_missing' }, { rule: 'footer_missing' }], would_refuse: false });
    await setMode('warn');
  });

  it('refuses what the send refuses: the caller\'s credentials only, and a body naming both audiences', async () => {
    expectError(await call(viewer, 'POST', PREVIEW, toList(ANA)), 403, 'forbidden');
    expectError(await call(owner, 'POST', PREVIEW, { ...toList(ANA), credencial: 999999 }), 404, 'not_found');
    // Outside the credential's team, the answer is a missing credential's: a stranger learns no id.
    const stranger = await call(outsider, 'POST', PREVIEW, toList(ANA));
    const missing = await call(outsider, 'POST', PREVIEW, { ...toList(ANA), credencial: credentialId + 10_000 });
    expectError(stranger, 404, 'not_found');
    expectError(missing, 404, 'not_found');
    expect(stranger.body.error.message.replace(String(credentialId), 'N')).toBe(missing.body.error.message.replace(String(credentialId + 10_000), 'N'));
    // The preview names the compliance rules broken beside the body's problems (issue 42): the credential has no footer here.
    expect(rulesRefused(await call(owner, 'POST', PREVIEW, campaign({ recipient_list_str: ANA, contatos: {} })))).toEqual(['mensagem.contatos:one_audience', 'credencial:footer_missing']);
    expect(rulesRefused(await call(owner, 'POST', PREVIEW, campaign({})))).toEqual(['mensagem.recipient_list_str:required', 'credencial:footer_missing']);
  });
});

describe('sendSmsCampaign judged by the compliance mode', () => {
  it('sends a pasted list under off with the rules it breaks recorded, and under warn lists each rule it breaks', async () => {
    await setFooter(null);
    await setMode('off');
    const off = await call(operator, 'POST', SEND, toList(STRANGER));
    expect(off.status, off.text).toBe(201);
    // Judged under off too, never refused (issue 42).
    expect(off.body.data.warnings.map((warning: Json) => warning.rule)).toEqual(['consent_missing', 'footer_missing']);

    // A typed window that closed: all three rules broken.
    await setMode('warn', { starts_on: '2026-08-16', ends_on: '2026-10-03' });
    const warned = await call(operator, 'POST', SEND, toList(ANA, STRANGER));
    expect(warned.status, warned.text).toBe(201);
    expect(warned.body.data.warnings.map((warning: Json) => warning.rule)).toEqual(['consent_missing', 'footer_missing', 'outside_campaign_window']);
    expect(warned.body.data.warnings[2]).toEqual({
      rule: 'outside_campaign_window',
      message: `today, ${brasiliaDay()} in Brasília, is outside the propaganda window of entity ${entityId}: 2026-08-16 to 2026-10-03 (the window typed for it; voting days are never open, Lei 9.504/1997 art. 39 §5º)`,
      day: brasiliaDay(),
      window: { starts_on: '2026-08-16', ends_on: '2026-10-03', spans: [{ starts_on: '2026-08-16', ends_on: '2026-10-03', round: 1 }], source: 'typed', election: null, calendar_election_id: null },
    });
    expect(warned.body.message).toContain('3 compliance warnings');
    // Kept with the campaign (a replay of the request answers them again).
    const row = (await app.sms.models.Campaign.findByPk(warned.body.data.id, { raw: true })) as unknown as Json;
    expect(JSON.parse(row.compliance)).toMatchObject({ mode: 'warn', warnings: [{ rule: 'consent_missing' }, { rule: 'footer_missing' }, { rule: 'outside_campaign_window' }] });
  });

  it('refuses under enforce each rule broken, naming what and when, and sends nothing', async () => {
    const before = await campaignCount();
    await setMode('enforce', { starts_on: '2026-08-16', ends_on: '2026-10-03' });
    const all = await call(operator, 'POST', SEND, toList(ANA, STRANGER));
    expect(rulesRefused(all)).toEqual(['mensagem.recipient_list_str:consent_missing', 'credencial:footer_missing', 'credencial:outside_campaign_window']);
    expect(all.body.error.message).toContain(`entity ${entityId} enforces`);
    expect(all.body.error.details[0]).toMatchObject({ value: 1, message: expect.stringContaining('+55*******0009') });
    expect(JSON.stringify(all.body)).not.toContain(STRANGER);

    // One rule at a time.
    await setMode('enforce', { starts_on: dayFromToday(-1), ends_on: dayFromToday(30) });
    expect(rulesRefused(await call(operator, 'POST', SEND, toList(ANA, STRANGER)))).toEqual(['mensagem.recipient_list_str:consent_missing', 'credencial:footer_missing']);
    await setFooter(FOOTER);
    expect(rulesRefused(await call(operator, 'POST', SEND, toList(ANA, STRANGER)))).toEqual(['mensagem.recipient_list_str:consent_missing']);
    await setMode('enforce', { starts_on: '2026-08-16', ends_on: '2026-10-03' });
    expect(rulesRefused(await call(operator, 'POST', SEND, toList(ANA)))).toEqual(['credencial:outside_campaign_window']);
    await setFooter(null);
    await setMode('enforce', { starts_on: dayFromToday(-1), ends_on: dayFromToday(30) });
    expect(rulesRefused(await call(operator, 'POST', SEND, toList(ANA)))).toEqual(['credencial:footer_missing']);
    expect(await campaignCount()).toBe(before);

    // Within the window, to a number with consent, with a footer: it goes.
    await setFooter(FOOTER);
    const sent = await call(operator, 'POST', SEND, toList(ANA));
    expect(sent.status, sent.text).toBe(201);
    expect(sent.body.data.warnings).toBeUndefined();
  });

  it('sends to the contacts with a tag, with the footer at the end of each message, and judges their consent', async () => {
    await setMode('warn', { starts_on: dayFromToday(-1), ends_on: dayFromToday(30) });
    await setFooter(FOOTER);
    const sent = await call(operator, 'POST', SEND, campaign({ contatos: { tags: [' Voluntarios '] } }));
    expect(sent.status, sent.text).toBe(201);
    expect(sent.body.data).toMatchObject({ accepted: 2, rejected: 0, opted_out_skipped: 0, encoding: 'UCS-2', segments: 2 });
    // Bia is a volunteer with no consent on record.
    expect(sent.body.data.warnings).toEqual([{ rule: 'consent_missing', message: `1 of 2 numbers has no consent on record as a contact of entity ${entityId}: +55*******0002`, numbers: 1, examples: ['+55*******0002'] }]);
    const id = sent.body.data.id;
    const row = (await app.sms.models.Campaign.findByPk(id, { raw: true })) as unknown as Json;
    expect(row).toMatchObject({ footer: FOOTER, audience: JSON.stringify({ tags: ['voluntarios'] }), body: 'Reunião no comitê às 19h.' });
    const messages = (await app.sms.models.Message.findAll({ where: { campaign_id: id }, order: [['id', 'ASC']], raw: true })) as unknown as Json[];
    const contacts = (await app.sms.models.Contact.findAll({ where: { entity_id: entityId }, raw: true })) as unknown as Json[];
    const contactOf = (phone: string) => contacts.find((contact) => contact.phone === phone)!.id;
    expect(messages.map((message) => [message.recipient, message.contact_id])).toEqual([[ANA, contactOf(ANA)], [BIA, contactOf(BIA)]]);

    const sids = await waitFor(async () => {
      const rows = (await app.sms.models.Message.findAll({ where: { campaign_id: id }, raw: true })) as unknown as Json[];
      return rows.every((message) => message.provider_sid) ? rows.map((message) => message.provider_sid) : undefined;
    }, { timeoutMs: 15_000, what: 'the messages handed to the provider', intervalMs: 100 });
    const handed = provider.messages.filter((message) => sids.includes(message.sid));
    expect(handed.map((message) => [message.to, message.body]).sort()).toEqual([
      [ANA, `Reunião no comitê às 19h.\n${FOOTER}`],
      [BIA, `Reunião no comitê às 19h.\n${FOOTER}`],
    ]);
  });

  it('refuses contacts with a credential without an entity, a tag nobody has, and a message too long with the footer', async () => {
    const general = (await call(platformAdmin, 'GET', '/api/sms/list_credentials/')).body.data.find((credential: Json) => credential.entity_id === null);
    expect(rulesRefused(await call(platformAdmin, 'POST', SEND, campaign({ contatos: {} }, general.id)))).toEqual(['mensagem.contatos:entity_credential']);
    expect(rulesRefused(await call(operator, 'POST', SEND, campaign({ contatos: { tags: ['ninguém'] } })))).toEqual(['mensagem.contatos:not_blank']);
    expect(rulesRefused(await call(operator, 'POST', SEND, campaign({ recipient_list_str: ANA, mensagem: 'x'.repeat(1590) })))).toEqual(['mensagem.mensagem:max_length_with_footer']);
    // All the contacts, without tags: opted-out numbers are left out and counted.
    await app.sms.optOuts.record([entityId], CAIO, { source: 'reply', keyword: 'SAIR' });
    const preview = await call(operator, 'POST', PREVIEW, campaign({ contatos: {} }));
    expect(preview.body.data).toMatchObject({ messages: 2, opted_out_skipped: 1 });
  });

  it('judges nothing for a credential without an entity, and keeps the seed\'s campaign working under warn', async () => {
    const general = (await call(platformAdmin, 'GET', '/api/sms/list_credentials/')).body.data.find((credential: Json) => credential.entity_id === null);
    const sent = await call(platformAdmin, 'POST', SEND, { ...toList(STRANGER), credencial: general.id });
    expect(sent.status, sent.text).toBe(201);
    expect(sent.body.data.warnings).toBeUndefined();

    await setMode('warn', null);
    await setFooter(null);
    const seed = await call(operator, 'POST', SEND, { titulo: 'Lembrete', credencial: credentialId, mensagem: { recipient_list_str: '+5511987654321, (21)99876-5432; 31988887777', mensagem: 'Vote no dia 6!' } });
    expect(seed.status, seed.text).toBe(201);
    expect(seed.body.data).toMatchObject({ accepted: 3, state: 'sending', warnings: [{ rule: 'consent_missing', numbers: 3 }, { rule: 'footer_missing' }] });
  });
});
