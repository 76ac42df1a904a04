/**
 * Consent that can be shown (issue 42, section 5), against the real app and the stateful msw mock:
 * - a consent has a kind (given, or read from its source's words), and the kinds that need it carry
 *   evidence; a bought or third-party list, by its kind or its words, is 422 `consent_source_not_allowed`
 *   (Lei 9.504/1997 arts. 57-B III and 57-E §1º), on createContact and on each line of an import, a line
 *   updating a stored contact included;
 * - migration 0036 reads stored free-text sources into kinds, keeps the text, and marks a bought list so,
 *   which then counts as no consent (`consent_missing`);
 * - the msw mock refuses the same consents with the same rules (packages/rules/src/consent-sources.ts, shared).
 * Runs on SQLite, or PostgreSQL with TEST_DATABASE_URL.
 */
import { setupServer } from 'msw/node';
import { pino } from 'pino';
import { QueryTypes, type Sequelize } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consentKindFromText, judgeConsent, saysThirdParty } from '@palanque/rules/consent-sources';
import { createApiClient, login, PalanqueApiError, unwrap } from '../sdk/index.js';
import { createStatefulHandlers, DEFAULT_BASE_URL, DEFAULT_MOCK_PASSWORD } from '../sdk/msw.js';
import { openDatabase } from '../src/db/database.js';
import { createMigrator } from '../src/db/migrator.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { request, type Result } from './helpers/http.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

let app: TestApp;
let owner: TestUser;
let entity: number;
let sequence = 0;
/** A fresh Brazilian mobile number, as a person writes it, and in E.164. */
function freshNumber(): { e164: string; written: string } {
  sequence += 1;
  const subscriber = `9986${String(sequence).padStart(5, '0')}`;
  return { e164: `+5521${subscriber}`, written: `(21) ${subscriber.slice(0, 5)}-${subscriber.slice(5)}` };
}

const addContact = (consent: Record<string, unknown> | null, phone = freshNumber().written): Promise<Result> =>
  request(app.baseUrl, 'POST', '/api/contacts/', owner.headers, { entity_id: entity, phone, consent });

async function importCsv(csv: string): Promise<Result> {
  const response = await fetch(`${app.baseUrl}/api/contacts/import/?entity_id=${entity}`, { method: 'POST', headers: { ...owner.headers, 'Content-Type': 'text/csv' }, body: csv });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
}

const rulesOf = (result: Result) => (result.body.error.details as Json[]).map((detail) => [detail.field, detail.rule]);

beforeAll(async () => {
  app = await startTestApp();
  await createAdmin(app);
  owner = await createUser(app);
  entity = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
});

afterAll(async () => {
  await app?.close();
});

describe('the words of a source', () => {
  it('finds a bought or third-party list however it is written', () => {
    for (const text of [
      'Lista comprada',
      'LISTA COMPRADA EM 2024',
      'comprei de um fornecedor',
      'Base adquirida',
      'Contatos de terceiros',
      'lista de terceiro',
      'Cedida pelo sindicato',
      'Parceiro da campanha',
      'parceiros',
      'Bought list',
      'purchased from a broker',
      'third party list',
      'Third-party data',
      'mailing alugado',
    ]) {
      expect(saysThirdParty(text), text).toBe(true);
    }
    for (const text of ['Ficha de voluntários', 'Formulário do site', 'Comício de 20/08', 'Respondeu SMS', 'Compromisso assinado', 'Cadastro no comitê', 'Site']) {
      expect(saysThirdParty(text), text).toBe(false);
    }
  });

  it('reads a kind from the words, bought lists first, never the kinds that need evidence', () => {
    expect(consentKindFromText('Ficha de voluntários do comício')).toBe('event');
    expect(consentKindFromText('Ficha de voluntários')).toBe('form');
    expect(consentKindFromText('Formulário')).toBe('form');
    expect(consentKindFromText('Site')).toBe('form');
    expect(consentKindFromText('Comício')).toBe('event');
    expect(consentKindFromText('Respondeu SMS com a palavra-chave')).toBe('inbound_message');
    expect(consentKindFromText('Lista comprada no comício')).toBe('purchased_list');
    expect(consentKindFromText('Contatos de terceiros')).toBe('third_party_list');
    expect(consentKindFromText('Instituto Exemplo')).toBeUndefined();
    expect(consentKindFromText('Pedido por telefone')).toBeUndefined();
  });

  it('judges a consent: every problem named', () => {
    expect(judgeConsent({ source: 'Site' })).toEqual({ kind: 'form', problems: [] });
    expect(judgeConsent({ kind: 'purchased_list', source: 'Site' }).problems.map((problem) => [problem.field, problem.rule])).toEqual([['kind', 'consent_source_not_allowed']]);
    expect(judgeConsent({ kind: 'manual_with_evidence', source: 'Telefone', evidence: 'comprada de parceiro' }).problems.map((problem) => [problem.field, problem.rule])).toEqual([['evidence', 'consent_source_not_allowed']]);
    expect(judgeConsent({ kind: 'import_with_proof', source: 'Arquivo do comitê' }).problems.map((problem) => problem.rule)).toEqual(['consent_evidence_required']);
    expect(judgeConsent({ source: 'Instituto Exemplo' }).problems.map((problem) => problem.rule)).toEqual(['consent_kind_required']);
  });
});

describe('createContact', () => {
  it('stores the kind given or read from the source, and the evidence', async () => {
    const read = await addContact({ source: 'Ficha de voluntários', given_at: '2026-08-20T19:30:00-03:00' });
    expect(read.status, read.text).toBe(201);
    expect(read.body.data.consent).toEqual({ kind: 'form', source: 'Ficha de voluntários', given_at: '2026-08-20T22:30:00.000Z', text: null, evidence: null });
    const typed = await addContact({ kind: 'manual_with_evidence', source: 'Pedido por telefone ao comitê', given_at: '2026-08-22T10:00:00-03:00', evidence: 'Gravação, protocolo 2026-0815' });
    expect(typed.status, typed.text).toBe(201);
    expect(typed.body.data.consent).toMatchObject({ kind: 'manual_with_evidence', evidence: 'Gravação, protocolo 2026-0815' });
    const again = await request(app.baseUrl, 'GET', `/api/contacts/${typed.body.data.id}/`, owner.headers);
    expect(again.body.data.consent).toMatchObject({ kind: 'manual_with_evidence', evidence: 'Gravação, protocolo 2026-0815' });
  });

  it('refuses a bought or third-party list, by its kind or its words (422 consent_source_not_allowed), and stores nothing', async () => {
    for (const consent of [
      { kind: 'purchased_list', source: 'Fornecedor X', given_at: '2026-08-20T12:00:00Z' },
      { kind: 'third_party_list', source: 'Sindicato', given_at: '2026-08-20T12:00:00Z' },
      { source: 'Lista comprada', given_at: '2026-08-20T12:00:00Z' },
      { kind: 'form', source: 'Formulário de parceiro', given_at: '2026-08-20T12:00:00Z' },
      { kind: 'form', source: 'bought list', given_at: '2026-08-20T12:00:00Z' },
      { kind: 'import_with_proof', source: 'Planilha', given_at: '2026-08-20T12:00:00Z', evidence: 'adquirida de terceiros' },
    ]) {
      const number = freshNumber();
      const refused = await addContact(consent, number.written);
      expect(refused.status, JSON.stringify(consent)).toBe(422);
      expect(rulesOf(refused).map(([, rule]) => rule), JSON.stringify(consent)).toContain('consent_source_not_allowed');
      expect(refused.body.error.details.find((detail: Json) => detail.rule === 'consent_source_not_allowed').message).toMatch(/57-B III/);
      const [stored] = await app.sequelize.query('SELECT id FROM contacts WHERE phone = ?', { replacements: [number.e164], type: QueryTypes.SELECT });
      expect(stored).toBeUndefined();
    }
  });

  it('needs a kind the words do not give, and evidence for the kinds that need it', async () => {
    expect(rulesOf(await addContact({ source: 'Instituto Exemplo', given_at: '2026-08-20T12:00:00Z' }))).toEqual([['consent.kind', 'consent_kind_required']]);
    expect(rulesOf(await addContact({ kind: 'manual_with_evidence', source: 'Pedido por telefone', given_at: '2026-08-20T12:00:00Z' }))).toEqual([['consent.evidence', 'consent_evidence_required']]);
    expect(rulesOf(await addContact({ kind: 'import_with_proof', source: 'Planilha do comitê', given_at: '2026-08-20T12:00:00Z', evidence: '  ' }))).toEqual([['consent.evidence', 'consent_evidence_required']]);
    const unknown = await addContact({ kind: 'rumour', source: 'Site', given_at: '2026-08-20T12:00:00Z' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.details[0].field).toMatch(/^consent\.kind/);
  });
});

describe('importContacts', () => {
  it('rejects each line whose consent is refused, names its column and rule, and imports the others', async () => {
    const [good, bought, partner, withKind, noEvidence, unknownKind, unreadable] = Array.from({ length: 7 }, freshNumber);
    const csv = [
      'telefone,consentimento_origem,consentimento_data,consentimento_tipo,consentimento_prova',
      `${good!.written},Ficha de voluntários,20/08/2026,,`,
      `${bought!.written},Lista comprada,20/08/2026,,`,
      `${partner!.written},Enviada por parceiro,20/08/2026,form,`,
      `${withKind!.written},Planilha do comitê,20/08/2026,import_with_proof,Fichas assinadas no arquivo do comitê`,
      `${noEvidence!.written},Planilha do comitê,20/08/2026,import_with_proof,`,
      `${unknownKind!.written},Site,20/08/2026,boato,`,
      `${unreadable!.written},Instituto Exemplo,20/08/2026,,`,
    ].join('\n');
    const imported = await importCsv(csv);
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body.data).toMatchObject({ rows: 7, inserted: 2, rejected: 5 });
    const reasons = Object.fromEntries((imported.body.data.rejections as Json[]).map((rejection) => [rejection.line, rejection.reason]));
    expect(reasons[3]).toMatch(/^consentimento_origem: consent_source_not_allowed: .*57-B III/);
    expect(reasons[4]).toMatch(/^consentimento_origem: consent_source_not_allowed/);
    expect(reasons[6]).toMatch(/^consentimento_prova: consent_evidence_required/);
    expect(reasons[7]).toMatch(/^consentimento_tipo: not one of form, event/);
    expect(reasons[8]).toMatch(/^consentimento_tipo: consent_kind_required/);
    // A reason never quotes the line's values.
    expect(Object.values(reasons).join(' ')).not.toMatch(/comprada|parceiro|Instituto/);
    const stored = await app.sequelize.query<{ phone: string; consent_kind: string; consent_evidence: string | null }>('SELECT phone, consent_kind, consent_evidence FROM contacts WHERE phone IN (?, ?) ORDER BY phone', {
      replacements: [good!.e164, withKind!.e164],
      type: QueryTypes.SELECT,
    });
    expect(stored.map((row) => [row.phone, row.consent_kind, row.consent_evidence]).sort()).toEqual(
      [
        [good!.e164, 'form', null],
        [withKind!.e164, 'import_with_proof', 'Fichas assinadas no arquivo do comitê'],
      ].sort(),
    );
  });

  it('a line that would update a stored contact with a bought list is rejected, and the stored consent stays', async () => {
    const number = freshNumber();
    expect((await addContact({ source: 'Comício', given_at: '2026-08-20T12:00:00Z' }, number.written)).status).toBe(201);
    const later = await importCsv(`phone,consent_source,consent_given_at\n${number.e164},Purchased list,2026-08-25\n`);
    expect(later.body.data).toMatchObject({ rows: 1, updated: 0, rejected: 1 });
    const [row] = await app.sequelize.query<{ consent_source: string; consent_kind: string }>('SELECT consent_source, consent_kind FROM contacts WHERE phone = ?', { replacements: [number.e164], type: QueryTypes.SELECT });
    expect(row).toEqual({ consent_source: 'Comício', consent_kind: 'event' });
  });
});

describe('migration 0036', () => {
  let database: TestDatabase;
  let sequelize: Sequelize;
  const logger = pino({ level: 'silent' });

  beforeAll(async () => {
    database = await createTestDatabase();
    sequelize = await openDatabase(database.url, logger);
    const migrator = createMigrator(sequelize, logger);
    const pending = (await migrator.pending()).map((migration) => migration.name);
    const before = pending[pending.indexOf('0036-contact-consent-retention') - 1]!;
    await migrator.up({ to: before });
    const queryInterface = sequelize.getQueryInterface();
    const now = new Date();
    await queryInterface.bulkInsert('users', [{ id: 1, username: 'ana', username_key: 'ana', email: 'ana@exemplo.com.br', first_name: '', last_name: '', password_hash: 'x', is_admin: true, is_active: true, date_joined: now }]);
    await queryInterface.bulkInsert('entities', [{ id: 1, tp: 'candidato', owner_id: 1, nome: 'Entidade 1', created_at: now, updated_at: now }]);
    const contact = (id: number, source: string | null) => ({ id, entity_id: 1, phone: `+552199870000${id}`, name: null, consent_source: source, consent_given_at: source ? now : null, consent_text: null, created_by: 1, created_at: now, updated_at: now });
    await queryInterface.bulkInsert('contacts', [contact(1, 'Ficha de voluntários'), contact(2, 'Comício'), contact(3, 'Lista comprada'), contact(4, 'Instituto Exemplo'), contact(5, null), contact(6, 'contatos de terceiros')]);
    await migrator.up();
  });

  afterAll(async () => {
    await sequelize?.close();
    await database?.drop();
  });

  it('reads a kind from each stored source where its words name one, keeps the text, and marks bought lists', async () => {
    const rows = await sequelize.query<{ id: number; consent_source: string | null; consent_kind: string | null }>('SELECT id, consent_source, consent_kind FROM contacts ORDER BY id', { type: QueryTypes.SELECT });
    expect(rows.map((row) => [Number(row.id), row.consent_source, row.consent_kind])).toEqual([
      [1, 'Ficha de voluntários', 'form'],
      [2, 'Comício', 'event'],
      [3, 'Lista comprada', 'purchased_list'],
      [4, 'Instituto Exemplo', null],
      [5, null, null],
      [6, 'contatos de terceiros', 'third_party_list'],
    ]);
  });
});

describe('a stored bought list counts as no consent', () => {
  it('consent_missing names the number whose stored consent is of a refused kind', async () => {
    const [kept, bought] = [freshNumber(), freshNumber()];
    for (const number of [kept, bought]) expect((await addContact({ source: 'Comício', given_at: '2026-08-20T12:00:00Z' }, number.written)).status).toBe(201);
    // As migration 0036 marks a consent whose words said the list was bought.
    await app.sequelize.query("UPDATE contacts SET consent_kind = 'purchased_list', consent_source = 'Lista comprada' WHERE phone = ?", { replacements: [bought.e164] });
    const judged = await app.sms.compliance.judge({ entityId: entity, credentialId: 1, footer: 'Maria Santos 13. SAIR para não receber.', numbers: [kept.e164, bought.e164] });
    const missing = judged.warnings.find((warning: Json) => warning.rule === 'consent_missing') as Json;
    expect(missing).toMatchObject({ numbers: 1 });
  });
});

describe('the stateful msw mock applies the same rules', () => {
  const mock = createStatefulHandlers();
  const server = setupServer(...mock.handlers);
  beforeAll(() => server.listen({ onUnhandledRequest: 'bypass' }));
  afterAll(() => server.close());

  async function failure(call: Promise<unknown>): Promise<PalanqueApiError> {
    const error = await call.then(() => undefined, (caught: unknown) => caught);
    if (!(error instanceof PalanqueApiError)) throw new Error(`expected a PalanqueApiError, got ${String(error)}`);
    return error;
  }

  it('refuses a bought list on create and on an import line, reads a kind from the words, needs evidence', async () => {
    const api = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    await login(api, 'carlos.pereira', DEFAULT_MOCK_PASSWORD);
    const added = unwrap(await api.POST('/api/contacts/', { body: { entity_id: 12, phone: '(11) 98765-4321', consent: { source: 'Ficha de voluntários', given_at: '2026-08-20T12:00:00Z' } } }));
    expect(added.consent).toMatchObject({ kind: 'form', evidence: null });
    const bought = await failure(api.POST('/api/contacts/', { body: { entity_id: 12, phone: '(11) 98765-4322', consent: { source: 'Lista comprada', given_at: '2026-08-20T12:00:00Z' } } }));
    expect(bought).toMatchObject({ status: 422, details: [expect.objectContaining({ field: 'consent.source', rule: 'consent_source_not_allowed' })] });
    const byKind = await failure(api.POST('/api/contacts/', { body: { entity_id: 12, phone: '(11) 98765-4322', consent: { kind: 'third_party_list', source: 'Sindicato', given_at: '2026-08-20T12:00:00Z' } } }));
    expect(byKind).toMatchObject({ status: 422, details: [expect.objectContaining({ field: 'consent.kind', rule: 'consent_source_not_allowed' })] });
    const noEvidence = await failure(api.POST('/api/contacts/', { body: { entity_id: 12, phone: '(11) 98765-4322', consent: { kind: 'manual_with_evidence', source: 'Telefone', given_at: '2026-08-20T12:00:00Z' } } }));
    expect(noEvidence).toMatchObject({ status: 422, details: [expect.objectContaining({ field: 'consent.evidence', rule: 'consent_evidence_required' })] });
    const unreadable = await failure(api.POST('/api/contacts/', { body: { entity_id: 12, phone: '(11) 98765-4322', consent: { source: 'Instituto Exemplo', given_at: '2026-08-20T12:00:00Z' } } }));
    expect(unreadable).toMatchObject({ status: 422, details: [expect.objectContaining({ field: 'consent.kind', rule: 'consent_kind_required' })] });
    const csv = 'telefone,consentimento_origem,consentimento_data\n(11) 98765-0003,Comício,20/08/2026\n(11) 98765-0004,Comprei de um parceiro,20/08/2026\n';
    const report = unwrap(await api.POST('/api/contacts/import/', { params: { query: { entity_id: '12' } }, body: csv, bodySerializer: (body: unknown) => body as string, headers: { 'Content-Type': 'text/csv' } }));
    expect(report).toMatchObject({ rows: 2, inserted: 1, rejected: 1, rejections: [{ line: 3, reason: expect.stringMatching(/^consentimento_origem: consent_source_not_allowed/) }] });
    mock.reset();
  });
});
