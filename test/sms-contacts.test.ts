/**
 * An entity's contacts and the consent each gave (issue 23), against the real app:
 * - add, read, list (by tag, a page at a time), remove; one contact per number and entity, however the
 *   number is written (409);
 * - numbers and names whole for the owner, admins and platform admins, masked for operators and viewers;
 *   operators and viewers may not add, import, remove or erase (403), strangers learn nothing (404);
 * - the CSV import: Portuguese or English columns, commas or semicolons, Latin-1; rejected lines with
 *   their line and reason (a bad number, a bad date, a date in the future, a consent half given, a
 *   repeated number, too many cells, a stray quote); a header it cannot read refused whole; a second
 *   import of the same file changes nothing; a later one updates and adds tags; gzip; a body too large
 *   (413 by its Content-Length; cut as it streams, the lines before the cut imported);
 * - the erasure at the person's request: the contact goes, its number is masked in the entity's messages
 *   (one handed to the SMS simulator, one still queued, which is canceled) and replies, not in another
 *   entity's; a message in flight refuses it whole (409); the audit log records it without the number.
 * Runs on SQLite, or PostgreSQL with TEST_DATABASE_URL.
 */
import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import iconv from 'iconv-lite';
import { consentDateOf, ContactImportTooLarge, importContacts } from '../src/messaging/contact-import.js';
import { nameInitials, normalisedTag } from '../src/messaging/contacts.js';
import type { JobAttempt } from '../src/jobs/index.js';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request, type Result } from './helpers/http.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const ACCOUNT = `AC${'7'.repeat(32)}`;
const TOKEN = 'token-of-the-contacts-test-01';
const SENDER = '+5511940030001';
const OTHER_ACCOUNT = `AC${'8'.repeat(32)}`;
const OTHER_SENDER = '+5511940030002';

const provider = new SmsProviderSimulator();
let app: TestApp;
let admin: TestUser;
let owner: TestUser;
let teamAdmin: TestUser;
let operator: TestUser;
let viewer: TestUser;
let stranger: TestUser;
let otherOwner: TestUser;
let entity: number;
let otherEntity: number;
let credential: number;
let otherCredential: number;

let sequence = 0;
/** A fresh Brazilian mobile number: E.164 and as a person writes it. */
function freshNumber(): { e164: string; written: string } {
  sequence += 1;
  const subscriber = `9987${String(sequence).padStart(5, '0')}`;
  return { e164: `+5521${subscriber}`, written: `(21) ${subscriber.slice(0, 5)}-${subscriber.slice(5)}` };
}

const call = (caller: TestUser, method: 'GET' | 'POST', path: string, body?: unknown) => request(app.baseUrl, method, path, caller.headers, body);

async function remove(caller: TestUser, id: number): Promise<Result> {
  const response = await fetch(`${app.baseUrl}/api/contacts/${id}/`, { method: 'DELETE', headers: caller.headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
}

/** POSTs a CSV file to importContacts. */
async function importCsv(caller: TestUser, entityId: number, csv: string | Buffer, contentType = 'text/csv', headers: Record<string, string> = {}): Promise<Result> {
  const response = await fetch(`${app.baseUrl}/api/contacts/import/?entity_id=${entityId}`, {
    method: 'POST',
    headers: { ...caller.headers, 'Content-Type': contentType, ...headers },
    body: typeof csv === 'string' ? csv : new Uint8Array(csv),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
}

async function addContact(caller: TestUser, fields: Record<string, unknown>): Promise<Result> {
  return call(caller, 'POST', '/api/contacts/', { entity_id: entity, ...fields });
}

async function listAll(caller: TestUser, entityId: number, tag?: string): Promise<Json[]> {
  const results: Json[] = [];
  for (let page = 1; ; page += 1) {
    const listed = await call(caller, 'GET', `/api/contacts/?entity_id=${entityId}&page=${page}${tag ? `&tag=${encodeURIComponent(tag)}` : ''}`);
    expect(listed.status, listed.text).toBe(200);
    results.push(...listed.body.data.results);
    if (!listed.body.data.links.next) return results;
  }
}

/** A campaign of the entity with one queued message per number, as createCampaign stores it; its message ids. */
async function storedCampaign(credentialId: number, entityId: number, recipients: string[], body = 'Vote no dia 6!'): Promise<number[]> {
  const now = new Date();
  const row = await app.sms.models.Campaign.create({
    titulo: 'Lembrete', credential_id: credentialId, body, encoding: 'GSM-7', segments: 1, accepted: recipients.length, rejected: 0, opted_out_skipped: 0,
    created_by: owner.user.id, created_at: now, jobs_enqueued_at: now, entity_id: entityId, state: 'sending',
  });
  const ids: number[] = [];
  for (const recipient of recipients) ids.push(Number((await app.sms.models.Message.create({ campaign_id: Number(row.get('id')), recipient, status: 'queued', updated_at: now })).get('id')));
  return ids;
}

const messageRow = async (id: number) => (await app.sms.models.Message.findByPk(id, { raw: true })) as unknown as { recipient: string; status: string; provider_sid: string | null };
const attempt: JobAttempt = { id: 'x', attempt: 1, lastAttempt: false };

beforeAll(async () => {
  await provider.start();
  provider.addAccount(ACCOUNT, TOKEN);
  provider.addAccount(OTHER_ACCOUNT, TOKEN);
  app = await startTestApp({ sms: { providerUrl: provider.url } });
  admin = await createAdmin(app);
  owner = await createUser(app);
  teamAdmin = await createUser(app);
  operator = await createUser(app);
  viewer = await createUser(app);
  stranger = await createUser(app);
  otherOwner = await createUser(app);
  entity = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
  otherEntity = await app.entities.store.create('candidato', otherOwner.user.id, { nome: 'João Pereira' });
  for (const [member, role] of [[teamAdmin, 'admin'], [operator, 'operator'], [viewer, 'viewer']] as const) {
    await app.entities.models.Member.create({ entity_id: entity, user_id: member.user.id, role, added_at: new Date() });
  }
  const added = await call(admin, 'POST', '/api/sms/add_credential/', { name: 'Maria', account_id: ACCOUNT, sender_id: SENDER, secret: TOKEN, entity_id: entity });
  expect(added.status, added.text).toBe(201);
  credential = added.body.data.id;
  const other = await call(admin, 'POST', '/api/sms/add_credential/', { name: 'João', account_id: OTHER_ACCOUNT, sender_id: OTHER_SENDER, secret: TOKEN, entity_id: otherEntity });
  expect(other.status, other.text).toBe(201);
  otherCredential = other.body.data.id;
});

afterAll(async () => {
  await app?.close();
  await provider.stop();
});

// ---------------------------------------------------------------------------------------------------
describe('contacts: add, read, list, remove', () => {
  it('adds a contact with its consent and tags, the number however written, and reads it back', async () => {
    const number = freshNumber();
    const added = await addContact(owner, {
      phone: number.written,
      name: '  Mariana   Souza ',
      consent: { source: 'Ficha de voluntários do comício', given_at: '2026-08-20T19:30:00-03:00', text: 'Aceito receber mensagens.' },
      tags: ['Voluntários', ' zona   SUL ', 'voluntários'],
    });
    expect(added.status, added.text).toBe(201);
    expect(added.body.data).toEqual({
      id: expect.any(Number),
      entity_id: entity,
      phone: number.e164,
      name: 'Mariana   Souza',
      // Issue 42: the kind read from the source's words (a sheet at a rally: an event), no evidence.
      consent: { kind: 'event', source: 'Ficha de voluntários do comício', given_at: '2026-08-20T22:30:00.000Z', text: 'Aceito receber mensagens.', evidence: null },
      tags: ['voluntários', 'zona sul'],
      // Issue 42: a Brazilian mobile, which an SMS reaches.
      can_receive_sms: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const read = await call(teamAdmin, 'GET', `/api/contacts/${added.body.data.id}/`);
    expect(read.status, read.text).toBe(200);
    expect(read.body.data).toEqual(added.body.data);

    // Another way of writing the same number is the same contact.
    const again = await addContact(owner, { phone: number.e164.replace('+55', '+55 ') });
    expectError(again, 409, 'conflict');
    expect(again.body.error.details).toEqual([expect.objectContaining({ field: 'phone', rule: 'unique_per_entity', value: number.e164 })]);
    // Another entity may have it.
    expect((await call(otherOwner, 'POST', '/api/contacts/', { entity_id: otherEntity, phone: number.written })).status).toBe(201);
  });

  it('a contact without consent has none on record; bad fields are 422 naming each', async () => {
    const bare = await addContact(teamAdmin, { phone: freshNumber().written, name: null, consent: null });
    expect(bare.status, bare.text).toBe(201);
    expect(bare.body.data).toMatchObject({ name: null, consent: null, tags: [] });

    const invalid = await addContact(owner, { phone: '1234', consent: { source: ' ', given_at: '2099-01-01T00:00:00Z' }, tags: ['  '] });
    expectError(invalid, 422, 'validation_failed');
    expect(invalid.body.error.details.map((detail: Json) => [detail.field, detail.rule])).toEqual([
      ['phone', 'phone_number'],
      ['consent.source', 'not_blank'],
      ['consent.given_at', 'not_in_future'],
      ['tags.0', 'not_blank'],
    ]);
    const unknownField = await addContact(owner, { phone: freshNumber().written, email: 'x@y.z' });
    expectError(unknownField, 422, 'validation_failed');
    expect(unknownField.body.error.details).toEqual([expect.objectContaining({ field: 'email', rule: 'additionalProperties' })]);
  });

  it('lists by id, 50 a page, filtered by a tag as stored', async () => {
    const csv = ['telefone,tags', ...Array.from({ length: 55 }, (_, index) => `${freshNumber().written},${index % 2 === 0 ? 'Pares' : 'ímpares'}`)].join('\n');
    const before = (await listAll(otherOwner, otherEntity)).length;
    const imported = await importCsv(otherOwner, otherEntity, csv);
    expect(imported.status, imported.text).toBe(200);
    const first = await call(otherOwner, 'GET', `/api/contacts/?entity_id=${otherEntity}`);
    expect(first.body.data).toMatchObject({ count: before + 55, total_pages: 2 });
    expect(first.body.data.results).toHaveLength(50);
    const ids = first.body.data.results.map((contact: Json) => contact.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(first.body.data.links.next).toContain('page=2');
    const paired = await call(otherOwner, 'GET', `/api/contacts/?entity_id=${otherEntity}&tag=${encodeURIComponent('  PARES ')}`);
    expect(paired.status, paired.text).toBe(200);
    expect(paired.body.data.count).toBe(28);
    expect(paired.body.data.results.every((contact: Json) => contact.tags.includes('pares'))).toBe(true);
    expect(paired.body.data.links).toEqual({ next: null, previous: null });
    expectError(await call(otherOwner, 'GET', `/api/contacts/?entity_id=${otherEntity}&page=3`), 404, 'not_found');
    expectError(await call(otherOwner, 'GET', `/api/contacts/?entity_id=${otherEntity}&tag=%20`), 400, 'bad_request');
  });

  it('removes a contact (again is 404); its past messages keep the number', async () => {
    const number = freshNumber();
    const added = await addContact(owner, { phone: number.written });
    const [messageId] = await storedCampaign(credential, entity, [number.e164]);
    await app.sms.models.Message.update({ contact_id: added.body.data.id, status: 'delivered' }, { where: { id: messageId } });
    const removed = await remove(owner, added.body.data.id);
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body.data).toEqual({ id: added.body.data.id, entity_id: entity, removed: true });
    expectError(await call(owner, 'GET', `/api/contacts/${added.body.data.id}/`), 404, 'not_found');
    expectError(await remove(owner, added.body.data.id), 404, 'not_found');
    expect(await messageRow(messageId!)).toMatchObject({ recipient: number.e164, contact_id: null });
  });
});

// ---------------------------------------------------------------------------------------------------
describe('who may do what', () => {
  let contactId: number;
  let number: { e164: string; written: string };
  beforeAll(async () => {
    number = freshNumber();
    const added = await addContact(owner, { phone: number.written, name: 'Maria da Silva Santos', consent: { source: 'Site', given_at: '2026-08-01T12:00:00Z' }, tags: ['site'] });
    contactId = added.body.data.id;
  });

  it('owner, team admins and platform admins read the number and name whole; operators and viewers masked', async () => {
    for (const caller of [owner, teamAdmin, admin]) {
      const read = await call(caller, 'GET', `/api/contacts/${contactId}/`);
      expect(read.body.data, read.text).toMatchObject({ phone: number.e164, name: 'Maria da Silva Santos' });
    }
    const masked = `+55*******${number.e164.slice(-4)}`;
    for (const caller of [operator, viewer]) {
      const read = await call(caller, 'GET', `/api/contacts/${contactId}/`);
      expect(read.body.data, read.text).toMatchObject({ phone: masked, name: 'M. d. S. S.', consent: { source: 'Site', given_at: '2026-08-01T12:00:00.000Z', text: null }, tags: ['site'] });
      const listed = await listAll(caller, entity, 'site');
      expect(listed).toEqual([expect.objectContaining({ id: contactId, phone: masked, name: 'M. d. S. S.' })]);
      expect(JSON.stringify(await listAll(caller, entity))).not.toContain(number.e164.slice(3));
    }
  });

  it('operators and viewers may not add, import, remove or erase (403)', async () => {
    for (const caller of [operator, viewer]) {
      expectError(await addContact(caller, { phone: freshNumber().written }), 403, 'forbidden');
      expectError(await importCsv(caller, entity, `telefone\n${freshNumber().written}\n`), 403, 'forbidden');
      expectError(await remove(caller, contactId), 403, 'forbidden');
      expectError(await call(caller, 'POST', `/api/contacts/${contactId}/erase/`, { reason: 'LGPD-1' }), 403, 'forbidden');
    }
    expect((await call(owner, 'GET', `/api/contacts/${contactId}/`)).status).toBe(200);
  });

  it('strangers get 404 everywhere, naming neither the entity nor the contact', async () => {
    const listed = await call(stranger, 'GET', `/api/contacts/?entity_id=${entity}`);
    expectError(listed, 404, 'not_found');
    expectError(await call(stranger, 'POST', '/api/contacts/', { entity_id: entity, phone: freshNumber().written }), 404, 'not_found');
    expectError(await importCsv(stranger, entity, `telefone\n${freshNumber().written}\n`), 404, 'not_found');
    for (const answer of [
      await call(stranger, 'GET', `/api/contacts/${contactId}/`),
      await remove(stranger, contactId),
      await call(stranger, 'POST', `/api/contacts/${contactId}/erase/`, { reason: 'LGPD-1' }),
      await call(stranger, 'GET', '/api/contacts/999999/'),
    ]) {
      expectError(answer, 404, 'not_found');
      expect(answer.body.error.message).toMatch(/^There is no contact \d+ in your teams' entities\.$/);
      expect(answer.body.error.details).toEqual([expect.objectContaining({ location: 'path', field: 'contact_id', rule: 'in_your_teams' })]);
    }
    expectError(await call(owner, 'GET', '/api/contacts/abc/'), 400, 'bad_request');
  });
});

// ---------------------------------------------------------------------------------------------------
describe('the CSV import', () => {
  it('imports a file, rejecting each bad line with its line and reason, and a second import changes nothing', async () => {
    const [good, english, repeated, tagged, badDate, future, halfConsent, extraCells, stray] = Array.from({ length: 9 }, freshNumber);
    const lines = [
      'Telefone,Nome,Consentimento_Origem,Consentimento_Data,Consentimento_Texto,Tags',
      `${good!.written},Ana Lima,Ficha de voluntários,20/08/2026,"Aceito receber, com prazer, as mensagens.",voluntarios|Zona Sul`,
      `${english!.e164},Bruno Dias,Site,2026-08-21T10:00:00Z,,`,
      '12345,Número errado,,,,',
      `${badDate!.written},Carla,Site,31/02/2026,,`,
      `${repeated!.written},Primeira vez,,,,"a;b"`,
      '',
      `${future!.written},Daniel,Site,01/01/2099,,`,
      `${repeated!.e164},Segunda vez,,,,`,
      `${halfConsent!.written},Elisa,Site,,,`,
      `${extraCells!.written},Fábio,,,,,sobra`,
      `${tagged!.written},,,,,`,
      `${stray!.written},Gi"lda,,,,`,
      ',,,,,',
    ];
    const first = await importCsv(owner, entity, lines.join('\r\n') + '\r\n');
    expect(first.status, first.text).toBe(200);
    expect(first.body.data).toEqual({
      entity_id: entity,
      rows: 11,
      inserted: 4,
      updated: 0,
      unchanged: 0,
      rejected: 7,
      rejections: [
        { line: 4, reason: 'telefone: not a valid phone number' },
        { line: 5, reason: expect.stringMatching(/^consentimento_data: not a date/) },
        { line: 8, reason: 'consentimento_data: in the future' },
        { line: 9, reason: 'telefone: repeats the number of line 6' },
        { line: 10, reason: 'consentimento_data: missing, and a consent needs it (with its origin)' },
        { line: 11, reason: 'the line has 7 cells; the header names 6 columns' },
        { line: 13, reason: expect.stringMatching(/^the line is not valid CSV/) },
      ],
    });
    expect(first.body.message).toBe('11 lines: 4 inserted, 0 updated, 0 unchanged, 7 rejected.');
    // No reason repeats a value of the line.
    for (const { reason } of first.body.data.rejections) expect(reason).not.toMatch(/12345|Carla|Daniel|Elisa|Fábio|Gi"lda|\d{4}-\d{4}/);

    const contacts = await listAll(owner, entity);
    expect(contacts.find((contact) => contact.phone === good!.e164)).toMatchObject({
      name: 'Ana Lima',
      consent: { source: 'Ficha de voluntários', given_at: '2026-08-20T03:00:00.000Z', text: 'Aceito receber, com prazer, as mensagens.' },
      tags: ['voluntarios', 'zona sul'],
    });
    expect(contacts.find((contact) => contact.phone === english!.e164)).toMatchObject({ name: 'Bruno Dias', consent: { given_at: '2026-08-21T10:00:00.000Z', text: null } });
    expect(contacts.find((contact) => contact.phone === repeated!.e164)).toMatchObject({ name: 'Primeira vez', tags: ['a', 'b'], consent: null });

    const second = await importCsv(owner, entity, lines.join('\r\n') + '\r\n');
    expect(second.body.data, second.text).toMatchObject({ rows: 11, inserted: 0, updated: 0, unchanged: 4, rejected: 7 });
    expect(await listAll(owner, entity)).toEqual(contacts);
  });

  it('reads on past a very long line, and reports a quote left open at the end', async () => {
    const [after, unclosed] = [freshNumber(), freshNumber()];
    const csv = `telefone,nome\n${freshNumber().written},"${'x'.repeat(70_000)}"\n${after.written},Depois\n${unclosed.written},"Aberta\n`;
    const imported = await importCsv(owner, entity, csv);
    expect(imported.body.data, imported.text.slice(0, 500)).toMatchObject({
      rows: 3,
      inserted: 1,
      rejected: 2,
      rejections: [
        { line: 2, reason: 'nome: longer than 200 characters' },
        { line: 4, reason: 'the line is not valid CSV: a quoted cell is never closed' },
      ],
    });
    expect((await listAll(owner, entity)).some((contact) => contact.phone === after.e164)).toBe(true);
  });

  it('a later file updates names and consent, adds tags and keeps what its empty cells do not say', async () => {
    const number = freshNumber();
    await importCsv(owner, entity, `telefone,nome,consentimento_origem,consentimento_data,tags\n${number.written},Helena,Evento,2026-08-16,evento\n`);
    const later = await importCsv(owner, entity, `phone,consent_source,consent_given_at,consent_text,tags\n${number.e164},Formulário,2026-08-30 18:00,Aceito.,"zona norte, evento"\n`);
    expect(later.body.data, later.text).toMatchObject({ rows: 1, inserted: 0, updated: 1, unchanged: 0, rejected: 0 });
    const [contact] = (await listAll(owner, entity, 'zona norte')).filter((found) => found.phone === number.e164);
    expect(contact).toMatchObject({ name: 'Helena', consent: { source: 'Formulário', given_at: '2026-08-30T21:00:00.000Z', text: 'Aceito.' }, tags: ['evento', 'zona norte'] });
  });

  it("reads a spreadsheet's semicolons and Latin-1, and a byte order mark", async () => {
    const number = freshNumber();
    const latin1 = iconv.encode(`TELEFONE;NOME;TAGS\n${number.written};José Conceição;Ação, São João\n`, 'latin1');
    const imported = await importCsv(owner, entity, latin1, 'text/csv; charset=ISO-8859-1');
    expect(imported.body.data, imported.text).toMatchObject({ inserted: 1, rejected: 0 });
    const withBom = freshNumber();
    const bom = await importCsv(owner, entity, `\uFEFFtelefone;nome\n${withBom.written};Ana; com ponto e vírgula\n`, 'text/csv; charset=utf-8');
    expect(bom.body.data.rejections, bom.text).toEqual([{ line: 2, reason: 'the line has 3 cells; the header names 2 columns' }]);
    const contacts = await listAll(owner, entity, 'são joão');
    expect(contacts).toEqual([expect.objectContaining({ phone: number.e164, name: 'José Conceição', tags: ['ação', 'são joão'] })]);
  });

  it('refuses a header it cannot read before writing anything (422), and a charset it does not take (415)', async () => {
    const number = freshNumber();
    const misspelled = await importCsv(owner, entity, `nome,consentimento_orgem,nome\nAna,Site,Ana\n`);
    expectError(misspelled, 422, 'validation_failed');
    expect(misspelled.body.error.details.map((detail: Json) => [detail.field, detail.rule])).toEqual([
      ['telefone', 'required_column'],
      ['consentimento_orgem', 'known_column'],
      ['nome', 'unique_column'],
    ]);
    expect(misspelled.body.error.message).toBe("The file's header is not one the import reads: nothing was imported.");
    const empty = await importCsv(owner, entity, '');
    expectError(empty, 422, 'validation_failed');
    expect(empty.body.error.details).toEqual([expect.objectContaining({ rule: 'header' })]);
    expectError(await importCsv(owner, entity, `telefone\n${number.written}\n`, 'text/csv; charset=utf-16'), 415, 'unsupported_media_type');
    const json = await importCsv(owner, entity, JSON.stringify({ telefone: number.written }), 'application/json');
    expect(json.status, json.text).toBe(415);
    expect((await listAll(owner, entity)).some((contact) => contact.phone === number.e164)).toBe(false);
  });

  it('ignores an Idempotency-Key: the body is streamed, and a retry imports again', async () => {
    const key = { 'Idempotency-Key': `import-${Date.now()}` };
    const [one, two] = [freshNumber(), freshNumber()];
    const first = await importCsv(owner, entity, `telefone\n${one.written}\n`, 'text/csv', key);
    const second = await importCsv(owner, entity, `telefone\n${one.written}\n${two.written}\n`, 'text/csv', key);
    expect(first.body.data, first.text).toMatchObject({ inserted: 1 });
    expect(second.body.data, second.text).toMatchObject({ inserted: 1, unchanged: 1 });
    expect(second.headers.get('idempotent-replayed')).toBeNull();
  });

  it('refuses a body whose Content-Length is over 32 MiB before reading it (413)', async () => {
    const answer = await new Promise<{ status: number; body: Json }>((resolve, reject) => {
      const outgoing = httpRequest(`${app.baseUrl}/api/contacts/import/?entity_id=${entity}`, {
        method: 'POST',
        headers: { ...owner.headers, 'Content-Type': 'text/csv', 'Content-Length': String(33 * 1024 * 1024) },
      });
      outgoing.on('response', (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => {
          resolve({ status: response.statusCode!, body: JSON.parse(text) });
          outgoing.destroy();
        });
      });
      outgoing.on('error', (error) => (error.message.includes('socket hang up') || (error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(error)));
      outgoing.write('telefone\n');
    });
    expect(answer.status).toBe(413);
    expect(answer.body.error).toMatchObject({ code: 'payload_too_large', details: [expect.objectContaining({ rule: 'max_size' })] });
  });

  it('reads a gzip-compressed file, and refuses one that is not what its Content-Encoding says (400) or an unknown encoding (415)', async () => {
    const number = freshNumber();
    const compressed = gzipSync(Buffer.from(`telefone,nome\n${number.written},Comprimido\n`));
    const imported = await importCsv(owner, entity, compressed, 'text/csv', { 'Content-Encoding': 'gzip' });
    expect(imported.body.data, imported.text).toMatchObject({ inserted: 1 });
    const broken = await importCsv(owner, entity, `telefone\n${freshNumber().written}\n`, 'text/csv', { 'Content-Encoding': 'gzip' });
    expectError(broken, 400, 'bad_request');
    expect(broken.body.error.details).toEqual([expect.objectContaining({ field: 'Content-Encoding', rule: 'content_encoding' })]);
    expectError(await importCsv(owner, entity, compressed, 'text/csv', { 'Content-Encoding': 'compress' }), 415, 'unsupported_media_type');
  });

  it('cuts a body past its limit as it streams: the lines before the cut stay imported, and say which', async () => {
    const numbers = Array.from({ length: 8 }, freshNumber);
    const text = ['telefone', ...numbers.map((number) => number.written)].join('\n') + '\n';
    // Fed in small chunks, as a network would, and cut after about half of it.
    const chunks = text.match(/[\s\S]{1,16}/g)!.map((chunk) => Buffer.from(chunk));
    const cut = importContacts(app.sms.models, Readable.from(chunks), { entityId: entity, createdBy: owner.user.id, charset: 'utf8', maxBytes: Math.floor(text.length / 2) });
    const error = await cut.then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(ContactImportTooLarge);
    const lastLine = (error as ContactImportTooLarge).lastLine;
    expect(lastLine).toBeGreaterThan(1);
    const stored = new Set((await listAll(owner, entity)).map((contact) => contact.phone));
    expect(numbers.map((number) => stored.has(number.e164))).toEqual(numbers.map((_, index) => index + 2 <= lastLine));
  });

  it('reads consent dates as people write them', () => {
    expect(consentDateOf('20/08/2026')?.toISOString()).toBe('2026-08-20T03:00:00.000Z');
    expect(consentDateOf('2026-08-20')?.toISOString()).toBe('2026-08-20T03:00:00.000Z');
    expect(consentDateOf('2026-08-20T19:30')?.toISOString()).toBe('2026-08-20T22:30:00.000Z');
    expect(consentDateOf('2026-08-20T19:30:00+0000')?.toISOString()).toBe('2026-08-20T19:30:00.000Z');
    for (const bad of ['31/02/2026', '2026-13-01', '20-08-2026', 'ontem', '2026-08-20T25:00']) expect(consentDateOf(bad), bad).toBeUndefined();
    expect(normalisedTag('  Zona   SUL ')).toBe('zona sul');
    expect(nameInitials('Maria da Silva')).toBe('M. d. S.');
  });
});

// ---------------------------------------------------------------------------------------------------
describe('the erasure at the person\'s request', () => {
  it("masks the number in the entity's messages and replies, cancels what was not sent, and records it without the number", async () => {
    const number = freshNumber();
    const bystander = freshNumber();
    const added = await addContact(owner, { phone: number.written, name: 'Irene Matos', tags: ['lgpd'] });
    const contactId = added.body.data.id;
    const [sent, queuedForBystander] = await storedCampaign(credential, entity, [number.e164, bystander.e164], 'Reunião hoje às 19h');
    const [waiting] = await storedCampaign(credential, entity, [number.e164]);
    const [ofOtherEntity] = await storedCampaign(otherCredential, otherEntity, [number.e164]);
    // One message goes to the provider (the simulator) for real.
    expect((await app.sms.send(sent!, attempt)).status).not.toBe('failed');
    expect((await messageRow(sent!)).provider_sid).toMatch(/^SM/);
    await app.sms.models.Reply.create({ message_sid: `SM${Date.now()}`, account_id: ACCOUNT, sender: number.e164, recipient: SENDER, body: 'Quem é?', received_at: new Date() });
    const replyToOther = await app.sms.models.Reply.create({ message_sid: `SM${Date.now()}b`, account_id: OTHER_ACCOUNT, sender: number.e164, recipient: OTHER_SENDER, body: 'Oi', received_at: new Date() });

    const blank = await call(owner, 'POST', `/api/contacts/${contactId}/erase/`, { reason: '   ' });
    expectError(blank, 422, 'validation_failed');
    expect(blank.body.error.details).toEqual([expect.objectContaining({ field: 'reason', rule: 'not_blank' })]);

    const erased = await call(teamAdmin, 'POST', `/api/contacts/${contactId}/erase/`, { reason: 'LGPD-2026-0107' });
    expect(erased.status, erased.text).toBe(200);
    expect(erased.body.data).toEqual({ id: contactId, entity_id: entity, erased: true, messages_masked: 1, messages_canceled: 1, replies_masked: 1, suppression_kept: false });
    expect(erased.body.message).toBe(`Contact ${contactId} was erased; its number was removed from 2 messages and 1 reply.`);

    const masked = `+55*******${number.e164.slice(-4)}`;
    expect(await messageRow(sent!)).toMatchObject({ recipient: masked, status: expect.not.stringMatching(/^(queued|canceled)$/) });
    expect(await messageRow(waiting!)).toMatchObject({ recipient: masked, status: 'canceled' });
    expect(await messageRow(queuedForBystander!)).toMatchObject({ recipient: bystander.e164, status: 'queued' });
    expect(await messageRow(ofOtherEntity!)).toMatchObject({ recipient: number.e164, status: 'queued' });
    expect(await app.sms.models.Reply.count({ where: { sender: number.e164 } })).toBe(1);
    expect((await app.sms.models.Reply.findByPk(Number(replyToOther.get('id')), { raw: true }) as Json).sender).toBe(number.e164);
    // The canceled message is never sent.
    expect(await app.sms.send(waiting!, attempt)).toEqual({ status: 'canceled' });
    expect(provider.messages.filter((message) => message.to === number.e164)).toHaveLength(1);

    expectError(await call(owner, 'GET', `/api/contacts/${contactId}/`), 404, 'not_found');
    expectError(await call(owner, 'POST', `/api/contacts/${contactId}/erase/`, { reason: 'LGPD-2026-0107' }), 404, 'not_found');
    expect(await app.sms.models.ContactTag.count({ where: { contact_id: contactId } })).toBe(0);

    const audit = await call(admin, 'GET', '/api/auth/audit_events/?event=contact_erased');
    expect(audit.status, audit.text).toBe(200);
    const event = audit.body.data.results.find((row: Json) => row.details.contact_id === contactId);
    expect(event).toMatchObject({ event: 'contact_erased', actor_id: teamAdmin.user.id, details: { entity_id: entity, contact_id: contactId, reason: 'LGPD-2026-0107', messages_masked: 1, messages_canceled: 1, replies_masked: 1 } });
    expect(JSON.stringify(event)).not.toMatch(new RegExp(`${number.e164.slice(3)}|Irene`));
  });

  it('erases nothing while a message to the number is being handed to the provider (409), and all once it settled', async () => {
    const number = freshNumber();
    const contactId = (await addContact(owner, { phone: number.written })).body.data.id;
    const [inFlight, waiting] = await storedCampaign(credential, entity, [number.e164, number.e164]);
    await app.sms.models.Message.update({ send_attempts: 1, last_attempt_at: new Date() }, { where: { id: inFlight } });

    const refused = await call(owner, 'POST', `/api/contacts/${contactId}/erase/`, { reason: 'LGPD-2026-0108' });
    expectError(refused, 409, 'conflict');
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'contact_id', rule: 'messages_in_flight', value: contactId })]);
    expect(await messageRow(waiting!)).toMatchObject({ recipient: number.e164, status: 'queued' });
    expect((await call(owner, 'GET', `/api/contacts/${contactId}/`)).status).toBe(200);

    await app.sms.models.Message.update({ status: 'failed' }, { where: { id: inFlight } });
    const erased = await call(owner, 'POST', `/api/contacts/${contactId}/erase/`, { reason: 'LGPD-2026-0108' });
    expect(erased.body.data, erased.text).toMatchObject({ messages_masked: 1, messages_canceled: 1, replies_masked: 0 });
  });
});
