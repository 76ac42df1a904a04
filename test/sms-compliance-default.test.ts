/**
 * The safe path is the default (issue 42, section 2) through the HTTP API: a new entity is in `enforce`,
 * so the seed's send of pasted numbers without consent is 422 `consent_missing` before anything is
 * queued; relaxing the mode to `warn` or `off` is a platform admin's decision (403
 * `platform_admin_to_relax` for the owner), audited and in the entity's history; a campaign sent under
 * `warn` or `off` keeps its warnings in its report (under `off` it is judged all the same); a campaign
 * declared non-electoral (Lei 9.504/1997 art. 36-A) may go outside the window, its declaration in its
 * report, while consent and the footer still apply; the preview names every problem at once. And
 * migration 0033: every entity that existed before it keeps `warn`, an explicit row, and it says so in
 * its log. On SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { QueryTypes, type Sequelize } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import { createMigrator } from '../src/db/migrator.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { expectError, request, type Result } from './helpers/http.js';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ACCOUNT = `AC${'7c6b5a4d3e2f1a0b9c8d7e6f5a4b3c2d'}`;
const AUTH_TOKEN = '1b2c3d4e5f60718293a4b5c6d7e8f90a';
const FOOTER = 'Campanha Maria Santos 13. Para sair, responda SAIR';
const COMPLIANCE = '/api/sms/compliance/';
const SEND = '/api/sms/list_credentials/';
const PREVIEW = '/api/sms/campaigns/preview/';
/** A legal propaganda span that closed long ago (2024's first round): a send today is outside it. */
const CLOSED_WINDOW = { starts_on: '2024-08-16', ends_on: '2024-10-05' };
const DECLARATION = 'Convite para audiência pública sobre o plano diretor; não pede votos.';

const CONSENTED = '+5511987730001';
const STRANGER = '+5521987730009';

const provider = new SmsProviderSimulator();
let app: TestApp;
let platformAdmin: TestUser;
let owner: TestUser;
let operator: TestUser;

const call = (caller: TestUser, method: 'GET' | 'POST' | 'PUT' | 'PATCH', path: string, body?: unknown) => request(app.baseUrl, method, path, caller.headers, body);
const settingsOf = (entityId: number) => call(owner, 'GET', `${COMPLIANCE}?entity_id=${entityId}`);
const setSettings = (caller: TestUser, entityId: number, body: unknown) => call(caller, 'PUT', `${COMPLIANCE}?entity_id=${entityId}`, body);
const campaign = (credencial: number, numbers: string, extra: Json = {}) => ({ titulo: 'Convite', credencial, mensagem: { recipient_list_str: numbers, mensagem: 'Reunião no comitê às 19h.' }, ...extra });

function rulesOf(answer: Result): string[] {
  return answer.body.error.details.map((detail: Json) => `${detail.field}:${detail.rule}`);
}

/** A new entity of the owner, with the operator in its team and a credential (footer set unless told). */
async function newEntity(footer: string | null = FOOTER): Promise<{ entityId: number; credentialId: number }> {
  const entityId = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
  await app.entities.models.Member.create({ entity_id: entityId, user_id: operator.user.id, role: 'operator', added_at: new Date() });
  const sender = `119400${String(entityId).padStart(5, '0')}`;
  const added = await call(platformAdmin, 'POST', '/api/sms/add_credential/', { name: `Campanha ${entityId}`, account_id: ACCOUNT, sender_id: sender, secret: AUTH_TOKEN, entity_id: entityId, ...(footer ? { footer } : {}) });
  expect(added.status, added.text).toBe(201);
  const now = new Date();
  await app.sms.models.Contact.create({
    entity_id: entityId, phone: CONSENTED, name: null, consent_source: 'formulário do site', consent_given_at: now, consent_text: 'Aceito receber mensagens da campanha.', created_by: owner.user.id, created_at: now, updated_at: now,
  } as never);
  return { entityId, credentialId: added.body.data.id };
}

beforeAll(async () => {
  await provider.start();
  provider.addAccount(ACCOUNT, AUTH_TOKEN);
  app = await startTestApp({ withJobs: true, selfPublicUrl: true, sms: { providerUrl: provider.url } });
  platformAdmin = await createAdmin(app);
  [owner, operator] = await Promise.all([createUser(app), createUser(app)]);
});

afterAll(async () => {
  await app?.close();
  await provider.stop();
});

describe('a new entity starts in enforce', () => {
  it('reads enforce, the default, and the seed\'s send of pasted numbers without consent is 422 consent_missing with nothing queued', async () => {
    const { entityId, credentialId } = await newEntity();
    expect((await settingsOf(entityId)).body.data).toMatchObject({ mode: 'enforce', updated_at: null, updated_by: null });
    const before = await app.sms.models.Campaign.count();
    // The seed's body: titulo, credencial, mensagem { recipient_list_str, mensagem }.
    const refused = await call(operator, 'POST', SEND, campaign(credentialId, `${STRANGER}, (21) 98773-0008`));
    expectError(refused, 422, 'validation_failed');
    expect(rulesOf(refused)).toContain('mensagem.recipient_list_str:consent_missing');
    expect(await app.sms.models.Campaign.count()).toBe(before);
    // Numbers with consent, a footer, no window: it goes.
    const sent = await call(operator, 'POST', SEND, campaign(credentialId, CONSENTED));
    expect(sent.status, sent.text).toBe(201);
    expect(sent.body.data.warnings).toBeUndefined();
  });
});

describe('relaxing the mode is a platform admin\'s decision', () => {
  it('refuses the owner 403 naming the rule, lets a platform admin, audited and in the history; the owner may tighten again', async () => {
    const { entityId } = await newEntity();
    for (const mode of ['warn', 'off']) {
      const refused = await setSettings(owner, entityId, { mode });
      expectError(refused, 403, 'forbidden');
      expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'mode', rule: 'platform_admin_to_relax', value: mode })]);
    }
    expect((await settingsOf(entityId)).body.data.mode).toBe('enforce');
    // The owner may set enforce (nothing relaxed), with a window.
    const tightened = await setSettings(owner, entityId, { mode: 'enforce', window: CLOSED_WINDOW });
    expect(tightened.status, tightened.text).toBe(200);

    const relaxed = await setSettings(platformAdmin, entityId, { mode: 'warn', window: CLOSED_WINDOW });
    expect(relaxed.status, relaxed.text).toBe(200);
    expect(relaxed.body.data).toMatchObject({ mode: 'warn', updated_by: platformAdmin.user.id });
    const events = (await app.accounts.audit.page({ event: 'sms_compliance_relaxed' }, 1, 50)).rows.filter((event) => event.details.entity_id === entityId);
    expect(events).toEqual([expect.objectContaining({ actor_id: platformAdmin.user.id, details: { entity_id: entityId, from: 'enforce', to: 'warn' } })]);
    const history = await call(owner, 'GET', `/api/entidade/history/?id=${entityId}`);
    expect(history.body.data.results.filter((row: Json) => row.subject === 'sms_compliance')[0]).toMatchObject({
      actor: { id: platformAdmin.user.id },
      changes: [{ field: 'mode', before: 'enforce', after: 'warn' }],
    });

    // Under warn, the owner may change the window (no relaxing), and tighten back to enforce; warn to off is the admin's again.
    expect((await setSettings(owner, entityId, { mode: 'warn' })).status).toBe(200);
    expectError(await setSettings(owner, entityId, { mode: 'off' }), 403, 'forbidden');
    expect((await setSettings(owner, entityId, { mode: 'enforce' })).status).toBe(200);
    expect((await app.accounts.audit.page({ event: 'sms_compliance_relaxed' }, 1, 50)).rows.filter((event) => event.details.entity_id === entityId)).toHaveLength(1);
  });
});

describe('the report of a campaign sent under warn or off', () => {
  it('keeps the warnings under warn, and under off judges all the same and records them, never refusing', async () => {
    const { entityId, credentialId } = await newEntity(null);
    for (const mode of ['warn', 'off'] as const) {
      expect((await setSettings(platformAdmin, entityId, { mode, window: CLOSED_WINDOW })).status).toBe(200);
      const sent = await call(operator, 'POST', SEND, campaign(credentialId, `${CONSENTED}, ${STRANGER}`));
      expect(sent.status, sent.text).toBe(201);
      const rules = ['consent_missing', 'footer_missing', 'outside_campaign_window'];
      expect(sent.body.data.warnings.map((warning: Json) => warning.rule)).toEqual(rules);
      const report = await call(owner, 'GET', `/api/sms/campaigns/${sent.body.data.id}/`);
      expect(report.status, report.text).toBe(200);
      expect(report.body.data.warnings.map((warning: Json) => warning.rule)).toEqual(rules);
      expect(report.body.data.non_electoral_declaration).toBeUndefined();
    }
  });
});

describe('a campaign declared non-electoral (Lei 9.504/1997 art. 36-A)', () => {
  it('goes outside the window under enforce, its declaration recorded and in its report; consent and the footer still apply', async () => {
    const { entityId, credentialId } = await newEntity();
    expect((await setSettings(owner, entityId, { mode: 'enforce', window: CLOSED_WINDOW })).status).toBe(200);
    const outside = await call(operator, 'POST', SEND, campaign(credentialId, CONSENTED));
    expectError(outside, 422, 'validation_failed');
    expect(rulesOf(outside)).toContain('credencial:outside_campaign_window');

    const declared = await call(operator, 'POST', SEND, campaign(credentialId, CONSENTED, { declaracao_nao_eleitoral: `  ${DECLARATION} ` }));
    expect(declared.status, declared.text).toBe(201);
    const report = await call(owner, 'GET', `/api/sms/campaigns/${declared.body.data.id}/`);
    expect(report.status, report.text).toBe(200);
    expect(report.body.data.non_electoral_declaration).toEqual({ text: DECLARATION, declared_by: { id: operator.user.id, display_name: expect.any(String) }, declared_at: expect.any(String) });
    expect(Math.abs(Date.parse(report.body.data.non_electoral_declaration.declared_at) - Date.now())).toBeLessThan(60_000);

    // Consent still applies, and the declaration does not excuse it.
    const stranger = await call(operator, 'POST', SEND, campaign(credentialId, STRANGER, { declaracao_nao_eleitoral: DECLARATION }));
    expectError(stranger, 422, 'validation_failed');
    expect(rulesOf(stranger)).toEqual(['mensagem.recipient_list_str:consent_missing']);
    // A blank declaration is no declaration.
    expect(rulesOf(await call(operator, 'POST', SEND, campaign(credentialId, CONSENTED, { declaracao_nao_eleitoral: '   ' })))).toEqual(['declaracao_nao_eleitoral:not_blank']);
  });

  it('keeps the footer rule: without a footer it is refused under enforce', async () => {
    const { credentialId } = await newEntity(null);
    const refused = await call(operator, 'POST', SEND, campaign(credentialId, CONSENTED, { declaracao_nao_eleitoral: DECLARATION }));
    expectError(refused, 422, 'validation_failed');
    expect(rulesOf(refused)).toEqual(['credencial:footer_missing']);
  });
});

describe('the preview names every problem at once', () => {
  it('lists an invalid number beside consent, footer and window, in one 422, whatever the mode', async () => {
    const { entityId, credentialId } = await newEntity(null);
    expect((await setSettings(owner, entityId, { mode: 'enforce', window: CLOSED_WINDOW })).status).toBe(200);
    const body = campaign(credentialId, `${CONSENTED}, ${STRANGER}, não é número`);
    for (const mode of ['enforce', 'warn'] as const) {
      if (mode === 'warn') expect((await setSettings(platformAdmin, entityId, { mode, window: CLOSED_WINDOW })).status).toBe(200);
      const preview = await call(operator, 'POST', PREVIEW, body);
      expectError(preview, 422, 'validation_failed');
      expect(rulesOf(preview)).toEqual([
        'mensagem.recipient_list_str:phone_number',
        'mensagem.recipient_list_str:consent_missing',
        'credencial:footer_missing',
        'credencial:outside_campaign_window',
      ]);
    }
    // Without the bad entry, the preview answers 200 with the same three rules as warnings.
    const fine = await call(operator, 'POST', PREVIEW, campaign(credentialId, `${CONSENTED}, ${STRANGER}`));
    expect(fine.status, fine.text).toBe(200);
    expect(fine.body.data.compliance.warnings.map((warning: Json) => warning.rule)).toEqual(['consent_missing', 'footer_missing', 'outside_campaign_window']);
  });
});

describe('migration 0033', () => {
  let database: TestDatabase;
  let sequelize: Sequelize;
  const lines: Json[] = [];
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => { lines.push(JSON.parse(String(chunk))); done(); } }));

  beforeAll(async () => {
    database = await createTestDatabase();
    sequelize = await openDatabase(database.url, pino({ level: 'silent' }));
    const migrator = createMigrator(sequelize, logger);
    const names = (await migrator.pending()).map((migration) => migration.name);
    await migrator.up({ to: names[names.indexOf('0033-sms-compliance-enforce-default') - 1]! });
    const queryInterface = sequelize.getQueryInterface();
    const now = new Date();
    await queryInterface.bulkInsert('users', [{ id: 1, username: 'ana', username_key: 'ana', email: 'ana@exemplo.com.br', first_name: '', last_name: '', password_hash: 'x', is_admin: true, is_active: true, date_joined: now }]);
    await queryInterface.bulkInsert('entities', [1, 2, 3].map((id) => ({ id, tp: 'candidato', owner_id: 1, nome: `Entidade ${id}`, created_at: now, updated_at: now })));
    // Entity 3 was set to enforce by its owner before: it keeps its row.
    await queryInterface.bulkInsert('sms_compliance', [{ entity_id: 3, mode: 'enforce', updated_by: 1, updated_at: now }]);
    await migrator.up({ to: '0033-sms-compliance-enforce-default' });
  }, 120_000);

  afterAll(async () => {
    await sequelize?.close();
    await database?.drop();
  });

  it('writes warn for every entity that existed without a row, keeps the rows that existed, and logs how many', async () => {
    const rows = await sequelize.query<{ entity_id: number; mode: string; updated_by: number | null }>('SELECT entity_id, mode, updated_by FROM sms_compliance ORDER BY entity_id', { type: QueryTypes.SELECT });
    expect(rows.map((row) => [Number(row.entity_id), row.mode, row.updated_by === null ? null : Number(row.updated_by)])).toEqual([
      [1, 'warn', null],
      [2, 'warn', null],
      [3, 'enforce', 1],
    ]);
    expect(lines.find((line) => line.migration === '0033-sms-compliance-enforce-default')).toMatchObject({ entities_kept_in_warn: 2, msg: expect.stringContaining('start in enforce') });
    const columns = await sequelize.getQueryInterface().describeTable('sms_campaigns');
    expect(columns).toHaveProperty('non_electoral_declaration');
  });
});
