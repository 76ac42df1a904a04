/**
 * Issue 21, the data subject's rights (LGPD) for a recorded person who is not a user: platform admins
 * erase or correct an entity's personal data at the person's request. Erasure clears the fields and
 * their values in the entity's edit history; correction checks the values by addEntity's rules; both
 * move the entity's version on and are recorded in the history and the audit log (never a value).
 * Through the real app with response validation on; on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { formatCpf, generateCpf } from '@brazilian-utils/brazilian-utils';
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const ERASE = '/api/entidade/personal_data/erase/';
const CORRECT = '/api/entidade/personal_data/correct/';
const VOTER_ID = '102345670183';

let app: TestApp;
let owner: TestUser;
let platformAdmin: TestUser;

const save = (body: Json, user: TestUser) => request(app.baseUrl, 'POST', '/api/entidade/add/', user.headers, body);
const read = (id: number, user: TestUser) => request(app.baseUrl, 'GET', `/api/entidade/data/?id=${id}`, user.headers);
const historyOf = (id: number) => request(app.baseUrl, 'GET', `/api/entidade/history/?id=${id}`, owner.headers);
const auditOf = (event: string) => request(app.baseUrl, 'GET', `/api/auth/audit_events/?event=${event}`, platformAdmin.headers);

/** A competitor recorded by `owner`'s team, with every personal field; returns its id, CPF and version. */
async function recordedPerson(): Promise<{ id: number; cpf: string; etag: string }> {
  const cpf = formatCpf(generateCpf());
  const created = await save(
    { nome: 'João Carlos Ferreira', nm_urna: 'João Ferreira', cpf, titulo_eleitor: VOTER_ID, raca: 2, cepBase: '01310-100', endBase: 'Av. Paulista, 1000' },
    owner,
  );
  expect(created.status, created.text).toBe(201);
  return { id: created.body.data.id, cpf, etag: created.headers.get('etag')! };
}

beforeAll(async () => {
  app = await startTestApp({ withMunicipalities: true });
  owner = await createUser(app, { first_name: 'Carla', last_name: 'Dona' });
  platformAdmin = await createAdmin(app, { first_name: 'Paula', last_name: 'Plataforma' });
});
afterAll(async () => {
  await app?.close();
});

describe('POST /api/entidade/personal_data/erase/ (erasePersonalData)', () => {
  it('erases the fields on the entity and in its edit history, and moves its version on', async () => {
    const { id, cpf, etag } = await recordedPerson();
    const newCpf = formatCpf(generateCpf());
    expect((await save({ id, nome: 'João Carlos Ferreira', cpf: newCpf }, owner)).status).toBe(200);

    const erased = await request(app.baseUrl, 'POST', ERASE, platformAdmin.headers, { entity_id: id, fields: ['cpf', 'titulo_eleitor'], reason: 'LGPD-2026-0042' });
    expect(erased.status, erased.text).toBe(200);
    expect(erased.body.data).toEqual({ entity_id: id, fields: ['cpf', 'titulo_eleitor'], version: 3, history_rows_redacted: 2 });
    expect(erased.headers.get('etag')).toBe('"3"');
    expect(etag).toBe('"1"');

    const stored = (await read(id, owner)).body.data;
    expect(stored.cpf).toBeUndefined();
    expect(stored.titulo_eleitor).toBeUndefined();
    // What stays: the other personal fields, the name.
    expect(stored).toMatchObject({ nome: 'João Carlos Ferreira', raca: 2, cepBase: '01310-100', endBase: 'Av. Paulista, 1000' });

    const listed = await historyOf(id);
    expect(listed.status, listed.text).toBe(200);
    for (const value of [cpf, newCpf, VOTER_ID]) expect(listed.text).not.toContain(value);
    const [erasure, update, creation] = listed.body.data.results as Json[];
    expect(erasure).toMatchObject({ action: 'personal_data_erased', actor: { id: platformAdmin.user.id } });
    expect(erasure.changes).toEqual([
      { field: 'cpf', before: '[erased]', after: null },
      { field: 'titulo_eleitor', before: '[erased]', after: null },
    ]);
    expect(update.changes).toEqual([{ field: 'cpf', before: '[erased]', after: '[erased]' }]);
    expect(creation.changes).toContainEqual({ field: 'cpf', before: null, after: '[erased]' });
    expect(creation.changes).toContainEqual({ field: 'raca', before: null, after: 2 });
    const inTable = await app.sequelize.query<Json>('SELECT changes FROM edit_history WHERE entity_id = :id', { replacements: { id }, type: QueryTypes.SELECT });
    expect(JSON.stringify(inTable)).not.toContain(newCpf);

    const audited = await auditOf('personal_data_erased');
    expect(audited.body.data.results[0]).toMatchObject({ actor_id: platformAdmin.user.id, details: { entity_id: id, fields: 'cpf,titulo_eleitor', reason: 'LGPD-2026-0042' } });
    expect(audited.text).not.toContain(newCpf);
  });

  it('erases every personal field when none is named', async () => {
    const { id } = await recordedPerson();
    const erased = await request(app.baseUrl, 'POST', ERASE, platformAdmin.headers, { entity_id: id, reason: 'LGPD-2026-0044' });
    expect(erased.status, erased.text).toBe(200);
    expect(erased.body.data.fields).toEqual(['cpf', 'titulo_eleitor', 'raca', 'cepBase', 'endBase']);
    const stored = (await read(id, owner)).body.data;
    for (const field of ['cpf', 'titulo_eleitor', 'raca', 'cepBase', 'endBase']) expect(stored[field]).toBeUndefined();
    expect(stored.nome).toBe('João Carlos Ferreira');
  });

  it('is for platform admins only, and names what is wrong', async () => {
    const { id } = await recordedPerson();
    expectError(await request(app.baseUrl, 'POST', ERASE, owner.headers, { entity_id: id, reason: 'LGPD-1' }), 403, 'forbidden');
    expectError(await request(app.baseUrl, 'POST', ERASE, {}, { entity_id: id, reason: 'LGPD-1' }), 401, 'unauthorized');
    const missing = await request(app.baseUrl, 'POST', ERASE, platformAdmin.headers, { entity_id: 999_999, reason: 'LGPD-1' });
    expectError(missing, 404, 'not_found');
    expect(missing.body.error.details[0]).toMatchObject({ location: 'body', field: 'entity_id', rule: 'existing_entity' });
    const invalid = await request(app.baseUrl, 'POST', ERASE, platformAdmin.headers, { entity_id: id, fields: ['nome'] });
    expectError(invalid, 422, 'validation_failed');
    const fields = (invalid.body.error.details as Json[]).map((detail) => detail.field);
    expect(fields).toEqual(expect.arrayContaining(['reason']));
    expectError(await request(app.baseUrl, 'POST', ERASE, platformAdmin.headers, { entity_id: id, reason: '   ' }), 422, 'validation_failed');
    // Nothing was erased by the refused requests.
    expect((await read(id, owner)).body.data.titulo_eleitor).toBe(VOTER_ID);
  });
});

describe('POST /api/entidade/personal_data/correct/ (correctPersonalData)', () => {
  it('sets the values, records them in the history and the audit log (no value there), and moves the version on', async () => {
    const { id, cpf } = await recordedPerson();
    const corrected = formatCpf(generateCpf());
    const answer = await request(app.baseUrl, 'POST', CORRECT, platformAdmin.headers, { entity_id: id, changes: { cpf: corrected, nm_urna: 'Joãozinho' }, reason: 'LGPD-2026-0043' });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.data).toEqual({ entity_id: id, fields: ['cpf', 'nm_urna'], version: 2 });
    expect(answer.headers.get('etag')).toBe('"2"');
    expect((await read(id, owner)).body.data).toMatchObject({ cpf: corrected, nm_urna: 'Joãozinho', raca: 2 });

    const [correction] = (await historyOf(id)).body.data.results as Json[];
    expect(correction).toMatchObject({ action: 'personal_data_corrected', actor: { id: platformAdmin.user.id } });
    expect(correction.changes).toEqual([
      { field: 'cpf', before: cpf, after: corrected },
      { field: 'nm_urna', before: 'João Ferreira', after: 'Joãozinho' },
    ]);
    const audited = await auditOf('personal_data_corrected');
    expect(audited.body.data.results[0]).toMatchObject({ actor_id: platformAdmin.user.id, details: { entity_id: id, fields: 'cpf,nm_urna', reason: 'LGPD-2026-0043' } });
    expect(audited.text).not.toContain(corrected);
  });

  it('checks the values with the rules of addEntity, and is for platform admins only', async () => {
    const { id, cpf } = await recordedPerson();
    const wrongDigits = await request(app.baseUrl, 'POST', CORRECT, platformAdmin.headers, { entity_id: id, changes: { cpf: '111.444.777-00' }, reason: 'LGPD-1' });
    expectError(wrongDigits, 422, 'validation_failed');
    expect(wrongDigits.body.error.details[0]).toMatchObject({ location: 'body', field: 'changes.cpf', rule: 'cpf_check_digits' });
    const otherField = await request(app.baseUrl, 'POST', CORRECT, platformAdmin.headers, { entity_id: id, changes: { partido: 'PT' }, reason: 'LGPD-1' });
    expectError(otherField, 422, 'validation_failed');
    expectError(await request(app.baseUrl, 'POST', CORRECT, platformAdmin.headers, { entity_id: id, changes: {}, reason: 'LGPD-1' }), 422, 'validation_failed');
    expectError(await request(app.baseUrl, 'POST', CORRECT, owner.headers, { entity_id: id, changes: { nm_urna: 'X' }, reason: 'LGPD-1' }), 403, 'forbidden');
    expectError(await request(app.baseUrl, 'POST', CORRECT, platformAdmin.headers, { entity_id: 999_999, changes: { nm_urna: 'X' }, reason: 'LGPD-1' }), 404, 'not_found');
    expect((await read(id, owner)).body.data).toMatchObject({ cpf, nm_urna: 'João Ferreira' });
  });
});
