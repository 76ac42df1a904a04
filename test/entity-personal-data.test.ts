/**
 * Issue 18, item 9: an entity's personal data (LGPD) by team role. Owners, team admins and platform
 * admins read CPF, voter id, `raca` and the base address whole; operators and viewers read the CPF and
 * voter id masked, the CEP cut to its sector, and no `raca` or `endBase`. A masked value posted back is
 * "unchanged", for every role; an operator may not set, change or clear a field it cannot read whole.
 * Through the real app with response validation on; on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { formatCpf, generateCpf } from '@brazilian-utils/brazilian-utils';
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maskCep, maskCpf, maskedRecord, maskVoterId } from '../src/entities/personal-data.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';
import { loadSpec, resolvePointer, responseExample } from './helpers/spec.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

let app: TestApp;
let owner: TestUser;
let teamAdmin: TestUser;
let operator: TestUser;
let viewer: TestUser;
let platformAdmin: TestUser;
/** A platform admin whose membership in the team is only `viewer`: the platform role still counts. */
let platformAdminAsViewer: TestUser;

const read = (id: number, user: TestUser) => request(app.baseUrl, 'GET', `/api/entidade/data/?id=${id}`, user.headers);
const save = (body: Json, user: TestUser) => request(app.baseUrl, 'POST', '/api/entidade/add/', user.headers, body);

/** The example voter id '102345670183', with valid check digits; its mask shows its last four digits. */
const VOTER_ID = '102345670183';

function personalCandidate(): Json {
  return {
    nome: 'Maria da Silva Santos',
    cpf: formatCpf(generateCpf()),
    titulo_eleitor: VOTER_ID,
    raca: 3,
    genero: 'feminino',
    cepBase: '01310-100',
    paisBase: 'BR',
    estadoBase: 'SP',
    municipioBase: '3550308',
    endBase: 'Av. Paulista, 1000',
    cidade: 'São Paulo',
  };
}

/** A new entity of `owner`'s with every role in its team; returns its id and the posted body. */
async function teamEntity(body: Json = personalCandidate()): Promise<{ id: number; body: Json }> {
  const created = await save(body, owner);
  expect(created.status, created.text).toBe(201);
  const id = created.body.data.id as number;
  const members: Array<[TestUser, 'admin' | 'operator' | 'viewer']> = [[teamAdmin, 'admin'], [operator, 'operator'], [viewer, 'viewer'], [platformAdminAsViewer, 'viewer']];
  for (const [user, role] of members) await app.entities.models.Member.create({ entity_id: id, user_id: user.user.id, role, added_at: new Date() });
  return { id, body };
}

/** The personal columns as stored. */
async function storedPersonal(id: number): Promise<Json> {
  const [row] = await app.sequelize.query<Json>('SELECT cpf, titulo_eleitor, raca, "cepBase", "endBase" FROM entities WHERE id = :id', {
    replacements: { id },
    type: QueryTypes.SELECT,
  });
  return { ...row, raca: row.raca === null ? null : Number(row.raca) };
}

const whole = (body: Json) => ({ cpf: body.cpf, titulo_eleitor: body.titulo_eleitor, raca: body.raca, cepBase: body.cepBase, endBase: body.endBase });

beforeAll(async () => {
  app = await startTestApp({ withMunicipalities: true });
  owner = await createUser(app, { first_name: 'Carla', last_name: 'Dona' });
  teamAdmin = await createUser(app, { first_name: 'Ana', last_name: 'Administradora' });
  operator = await createUser(app, { first_name: 'Otávio', last_name: 'Operador' });
  viewer = await createUser(app, { first_name: 'Vera', last_name: 'Leitora' });
  platformAdmin = await createAdmin(app, { first_name: 'Paula', last_name: 'Plataforma' });
  platformAdminAsViewer = await createAdmin(app, { first_name: 'Pedro', last_name: 'Plataforma' });
});

afterAll(async () => {
  await app?.close();
});

describe('the masks', () => {
  it('shows the middle six digits of a CPF, as the issue asks', () => {
    expect(maskCpf('529.982.247-25')).toBe('***.982.247-**');
  });

  it('shows the last four digits of a voter id (its state code and check digits)', () => {
    expect(maskVoterId('102345670183')).toBe('********0183');
  });

  it('keeps the five digits of a CEP that name its sector, formatted or not', () => {
    expect(maskCep('01310-100')).toBe('01310-***');
    expect(maskCep('01310100')).toBe('01310-***');
  });

  it('makes of the spec\'s whole example exactly its maskedForViewer example, in the patterns the spec declares', () => {
    const wholeExample: Json = responseExample('/api/entidade/data/', 'get', '200', 'candidate');
    const maskedExample: Json = responseExample('/api/entidade/data/', 'get', '200', 'maskedForViewer');
    expect(maskedRecord(wholeExample.data)).toEqual(maskedExample.data);
    const spec: Json = loadSpec();
    const patternOf = (name: string) => new RegExp((resolvePointer(spec, `#/components/schemas/${name}`) as Json).pattern);
    expect(maskedExample.data.cpf).toMatch(patternOf('MaskedCpf'));
    expect(maskedExample.data.titulo_eleitor).toMatch(patternOf('MaskedVoterId'));
    expect(maskedExample.data.cepBase).toMatch(patternOf('MaskedCep'));
    expect(wholeExample.data.cpf).not.toMatch(patternOf('MaskedCpf'));
  });
});

describe('getEntity and the addEntity answer, by role', () => {
  it('shows the owner, a team admin and a platform admin every personal field whole', async () => {
    const { id, body } = await teamEntity();
    for (const user of [owner, teamAdmin, platformAdmin, platformAdminAsViewer]) {
      const answer = await read(id, user);
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body.data, user.user.username).toMatchObject({ ...whole(body), paisBase: 'BR', estadoBase: 'SP', municipioBase: '3550308' });
    }
  });

  it('shows an operator and a viewer the CPF and voter id masked, the CEP cut to its sector, and no raca or endBase', async () => {
    const { id, body } = await teamEntity();
    const [, middle, rest] = /^[0-9]{3}\.([0-9]{3})\.([0-9]{3})-[0-9]{2}$/.exec(body.cpf)!;
    for (const user of [operator, viewer]) {
      const answer = await read(id, user);
      expect(answer.status, answer.text).toBe(200);
      const data = answer.body.data;
      expect(data.cpf).toBe(`***.${middle}.${rest}-**`);
      expect(data.titulo_eleitor).toBe('********0183');
      expect(data.cepBase).toBe('01310-***');
      expect(data).not.toHaveProperty('raca');
      expect(data).not.toHaveProperty('endBase');
      // The rest of the base address, and everything else, is whole.
      expect(data).toMatchObject({ paisBase: 'BR', estadoBase: 'SP', municipioBase: '3550308', genero: 'feminino', nome: body.nome });
      expect(answer.text).not.toContain(body.cpf);
      expect(answer.text).not.toContain(VOTER_ID);
      expect(answer.text).not.toContain('Paulista');
    }
  });

  it('masks the addEntity answer for the role of the caller who wrote', async () => {
    const { id, body } = await teamEntity();
    const byOperator = await save({ id, nome: 'Maria S. Santos' }, operator);
    expect(byOperator.status, byOperator.text).toBe(200);
    expect(byOperator.body.data.cpf).toBe(maskCpf(body.cpf));
    expect(byOperator.body.data).not.toHaveProperty('raca');
    expect(byOperator.body.data).not.toHaveProperty('endBase');
    for (const user of [teamAdmin, platformAdmin]) {
      const answer = await save({ id, nome: 'Maria Santos' }, user);
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body.data).toMatchObject(whole(body));
    }
    // The creator owns the new entity: its 201 answer is whole.
    const created = await save(personalCandidate(), operator);
    expect(created.status, created.text).toBe(201);
    expect(created.body.data).toMatchObject({ raca: 3, titulo_eleitor: VOTER_ID, endBase: 'Av. Paulista, 1000' });
  });

  it('answers the same ETag to every role: the version, which says nothing about the values', async () => {
    const { id } = await teamEntity();
    const tags = await Promise.all([owner, operator, viewer].map(async (user) => (await read(id, user)).headers.get('etag')));
    expect(new Set(tags).size).toBe(1);
  });

  it('leaves out nothing that was not stored: an entity without personal data reads the same for everyone', async () => {
    const created = await save({ nome: 'Sem documentos' }, owner);
    const id = created.body.data.id as number;
    await app.entities.models.Member.create({ entity_id: id, user_id: viewer.user.id, role: 'viewer', added_at: new Date() });
    const seen = (await read(id, viewer)).body.data;
    expect({ ...seen, updated_at: undefined }).toEqual({ ...created.body.data, updated_at: undefined });
  });
});

describe('posting a masked record back', () => {
  it('leaves the stored values whole when an operator posts back what it read, with a change', async () => {
    const { id, body } = await teamEntity();
    const loaded = (await read(id, operator)).body.data;
    const posted = await save({ ...loaded, cidade: 'Campinas' }, operator);
    expect(posted.status, posted.text).toBe(200);
    expect(posted.body.data).toMatchObject({ cidade: 'Campinas', cpf: loaded.cpf, titulo_eleitor: loaded.titulo_eleitor, cepBase: '01310-***' });
    // As the owner sees it, and in the database.
    expect((await read(id, owner)).body.data).toMatchObject({ ...whole(body), cidade: 'Campinas' });
    expect(await storedPersonal(id)).toEqual(whole(body));
  });

  it('treats a masked value posted by the owner or an admin as unchanged, not as an error', async () => {
    const { id, body } = await teamEntity();
    for (const user of [owner, teamAdmin, platformAdmin]) {
      const answer = await save({ id, nome: 'Maria', cpf: maskCpf(body.cpf), titulo_eleitor: maskVoterId(VOTER_ID), cepBase: '01310-***' }, user);
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body.data).toMatchObject(whole(body));
    }
    expect(await storedPersonal(id)).toEqual(whole(body));
  });

  it('answers an operator 403 for the stored value sent whole too, so that no answer confirms a guess', async () => {
    const { id, body } = await teamEntity();
    for (const [field, value] of [['cpf', body.cpf], ['titulo_eleitor', body.titulo_eleitor], ['raca', body.raca], ['endBase', body.endBase]] as const) {
      const right = await save({ id, nome: 'Maria', [field]: value }, operator);
      expectError(right, 403, 'forbidden');
      expect(right.body.error.details).toEqual([expect.objectContaining({ field, rule: 'whole_view_required' })]);
    }
    // A wrong guess gets the very same answer, but for the value it echoes.
    const wrong = await save({ id, nome: 'Maria', raca: body.raca === 1 ? 2 : 1 }, operator);
    const right = await save({ id, nome: 'Maria', raca: body.raca }, operator);
    expect(wrong.status).toBe(right.status);
    expect(wrong.body.error.message).toBe(right.body.error.message);
    expect(await storedPersonal(id)).toEqual(whole(body));
  });

  it('answers 422 to a masked value on a create: there is no stored value it could stand for', async () => {
    const answer = await save({ nome: 'Nova', cpf: '***.982.247-**', titulo_eleitor: '********0183' }, owner);
    expectError(answer, 422, 'validation_failed');
    expect(answer.body.error.details).toEqual([
      expect.objectContaining({ location: 'body', field: 'cpf', rule: 'whole_value', value: '***.982.247-**' }),
      expect.objectContaining({ location: 'body', field: 'titulo_eleitor', rule: 'whole_value', value: '********0183' }),
    ]);
  });

  it('still answers 422 to a value that is neither whole nor the mask', async () => {
    const { id } = await teamEntity();
    const answer = await save({ id, nome: 'Maria', cpf: '***.***.***-**' }, owner);
    expectError(answer, 422, 'validation_failed');
    expect(answer.body.error.details).toContainEqual(expect.objectContaining({ location: 'body', field: 'cpf' }));
  });
});

describe('an operator may not set, change or clear what it cannot read whole', () => {
  const changes: Array<[string, Json]> = [
    ['a new CPF', { cpf: formatCpf(generateCpf()) }],
    ['a cleared CPF', { cpf: null }],
    ['a new voter id', { titulo_eleitor: '004356870906' }],
    ['a raca', { raca: 1 }],
    ['a cleared raca', { raca: null }],
    ['a new CEP', { cepBase: '20040-020' }],
    ['a new endBase', { endBase: 'Rua da Assembleia, 10' }],
  ];

  it.each(changes)('answers 403 naming the field for %s, and changes nothing', async (_what, change) => {
    const { id, body } = await teamEntity();
    const [field] = Object.keys(change);
    const answer = await save({ id, nome: 'Maria, pelo operador', ...change }, operator);
    expectError(answer, 403, 'forbidden');
    expect(answer.body.error.details).toEqual([expect.objectContaining({ location: 'body', field, rule: 'whole_view_required' })]);
    expect(await storedPersonal(id)).toEqual(whole(body));
    expect((await read(id, owner)).body.data.nome).toBe(body.nome);
  });

  it('lets the owner and admins change them', async () => {
    const { id } = await teamEntity();
    const cpf = formatCpf(generateCpf());
    const byAdmin = await save({ id, nome: 'Maria', cpf, raca: 1, endBase: 'Rua da Assembleia, 10' }, teamAdmin);
    expect(byAdmin.status, byAdmin.text).toBe(200);
    expect(await storedPersonal(id)).toMatchObject({ cpf, raca: 1, endBase: 'Rua da Assembleia, 10' });
  });
});
