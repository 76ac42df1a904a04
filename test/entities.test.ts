/**
 * Entities through the real app and the contract validator (responses are validated too): adding and
 * updating a candidate with every field and its nested records in tables of their own (addEntity), the
 * rules beyond the schema with one field-level detail each, the CPF unique per team, listing the
 * caller's entities by team and type, 30 per page (listEntities), and reading one (getEntity).
 * One app per file, with the municipality list loaded. Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { formatCpf, generateCpf } from '@brazilian-utils/brazilian-utils';
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maskedRecord } from '../src/entities/personal-data.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { loadSpec, tryResolvePointer } from './helpers/spec.js';
import { expectError, request } from './helpers/http.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

let app: TestApp;
const call = (method: 'GET' | 'POST', path: string, headers: Record<string, string> = {}, body?: unknown) =>
  request(app.baseUrl, method, path, headers, body);
let owner: TestUser;
let operator: TestUser;
let viewer: TestUser;
let stranger: TestUser;
let admin: TestUser;

const get = (path: string, headers: Record<string, string> = {}) => call('GET', path, headers);
const post = (path: string, headers: Record<string, string>, body: unknown) => call('POST', path, headers, body);

/** Age in whole years today of someone born on `date` (YYYY-MM-DD), as the server computes it. */
function ageToday(date: string): number {
  const born = new Date(`${date}T00:00:00Z`);
  const today = new Date();
  const years = today.getUTCFullYear() - born.getUTCFullYear();
  const before = today.getUTCMonth() < born.getUTCMonth() || (today.getUTCMonth() === born.getUTCMonth() && today.getUTCDate() < born.getUTCDate());
  return before ? years - 1 : years;
}

/** The contract's example candidate, with `idade` kept consistent with today's date. */
function exampleCandidate(): Json {
  const example = tryResolvePointer(loadSpec(), '#/components/examples/NewCandidateEntity') as { value: Json } | undefined;
  if (!example) throw new Error('components/examples/NewCandidateEntity is missing from the spec');
  const body = structuredClone(example.value);
  body.idade = ageToday(body.data_nascimento);
  return body;
}

/** A valid, formatted CPF that no other test uses. */
const freshCpf = () => formatCpf(generateCpf());

/** The example with its own CPF, so one owner can create it many times. */
function candidate(changes: Json = {}): Json {
  return { ...exampleCandidate(), cpf: freshCpf(), ...changes };
}

async function create(user: TestUser, body: Json, tp = 'candidato'): Promise<Json> {
  const result = await post(`/api/entidade/add/?tp=${tp}`, user.headers, body);
  expect(result.status, result.text).toBe(201);
  return result.body.data;
}

async function addMember(entityId: number, user: TestUser, role: 'admin' | 'operator' | 'viewer'): Promise<void> {
  await app.entities.models.Member.create({ entity_id: entityId, user_id: user.user.id, role, added_at: new Date() });
}

async function rows(sql: string, replacements: Record<string, unknown>): Promise<Array<Record<string, unknown>>> {
  return app.sequelize.query(sql, { replacements, type: QueryTypes.SELECT });
}

/** The number a `SELECT COUNT(*) AS count` answers (a string on PostgreSQL). */
async function count(sql: string, replacements: Record<string, unknown>): Promise<number> {
  const [row] = await rows(sql, replacements);
  return Number(row?.count);
}

beforeAll(async () => {
  app = await startTestApp({ withMunicipalities: true });
  owner = await createUser(app, { first_name: 'Carla', last_name: 'Dona' });
  operator = await createUser(app, { first_name: 'Otávio', last_name: 'Operador' });
  viewer = await createUser(app, { first_name: 'Vera', last_name: 'Leitora' });
  stranger = await createUser(app, { first_name: 'Sérgio', last_name: 'Estranho' });
  admin = await createAdmin(app, { first_name: 'Ada', last_name: 'Admin' });
});

afterAll(async () => {
  await app?.close();
});

describe('POST /api/entidade/add/ (addEntity): creating', () => {
  it('creates the example candidate (201) and getEntity returns every field exactly as posted', async () => {
    const body = candidate();
    const created = await post('/api/entidade/add/?tp=candidato', owner.headers, body);
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ success: true, message: expect.any(String), request_id: created.headers.get('x-request-id') });
    const id = created.body.data.id;
    expect(id).toEqual(expect.any(Number));

    const read = await get(`/api/entidade/data/?id=${id}`, owner.headers);
    expect(read.status, read.text).toBe(200);
    const stored = read.body.data;
    expect(stored).toEqual(created.body.data);

    // Every scalar field, one by one, as posted.
    const { referencia_social: reference, marketshare, ...scalars } = body;
    expect(Object.keys(scalars).length).toBeGreaterThan(35);
    for (const [field, value] of Object.entries(scalars)) expect(stored[field], field).toEqual(value);
    expect(Object.keys(stored).sort()).toEqual([...Object.keys(body), 'id', 'tp', 'updated_at', 'updated_by'].sort());
    // The read-only fields: the type, when and by whom it was written last.
    expect(stored).toMatchObject({ tp: 'candidato', updated_by: { id: owner.user.id, display_name: 'Carla Dona' } });
    expect(Date.now() - new Date(stored.updated_at).getTime()).toBeLessThan(60_000);

    // The nested records come back with ids of their own.
    const referenceId = stored.referencia_social.id;
    expect(referenceId).toEqual(expect.any(Number));
    expect(stored.referencia_social).toEqual({
      ...reference,
      id: referenceId,
      social_network: reference.social_network.map((entry: Json) => ({ ...entry, referencia_social: referenceId })),
    });
    expect(stored.marketshare).toEqual(marketshare.map((share: Json) => ({ ...share, id: expect.any(Number) })));
  });

  it('keeps the nested records in their own tables, not as text on the entity', async () => {
    const body = candidate({
      marketshare: [
        { principal: true, marketshare: '23.5', tendency: 'up', notes: 'Datafolha', evaluations: 4 },
        { principal: false, marketshare: '19', tendency: 'down', notes: null, evaluations: 2 },
      ],
    });
    body.referencia_social.social_network.push({ nm_rede: 'youtube', username: 'mariasantos.tv', link: 'https://www.youtube.com/@mariasantos', exist_or_active: false, last_full_evaluation_date: '2026-11-20T03:00:00.000Z' });
    const { id } = await create(owner, body);

    const references = await rows('SELECT * FROM social_references WHERE entity_id = :id', { id });
    expect(references).toHaveLength(1);
    expect(references[0]).toMatchObject({ tipo: 'candidato', nm: 'Maria Santos', origem_name: 'cadastro' });

    const entries = await rows('SELECT * FROM social_network_entries WHERE social_reference_id = :ref ORDER BY position', { ref: references[0]!.id });
    expect(entries.map((entry) => [entry.position, entry.nm_rede, entry.username, entry.profile_id])).toEqual([
      [0, 'instagram', 'mariasantos', '17841400000000001'],
      [1, 'youtube', 'mariasantos.tv', null],
    ]);
    expect(entries.map((entry) => Boolean(entry.exist_or_active))).toEqual([true, false]);

    const shares = await rows('SELECT * FROM marketshare_entries WHERE entity_id = :id ORDER BY position', { id });
    expect(shares.map((share) => [share.marketshare, share.tendency, share.notes, share.evaluations, Boolean(share.principal)])).toEqual([
      ['23.5', 'up', 'Datafolha', 4, true],
      ['19', 'down', null, 2, false],
    ]);

    const read = await get(`/api/entidade/data/?id=${id}`, owner.headers);
    expect(read.body.data.referencia_social.social_network[1]).toEqual({
      nm_rede: 'youtube',
      username: 'mariasantos.tv',
      link: 'https://www.youtube.com/@mariasantos',
      exist_or_active: false,
      last_full_evaluation_date: '2026-11-20T03:00:00.000Z',
      referencia_social: references[0]!.id,
    });
    expect(read.body.data.marketshare.map((share: Json) => share.id)).toEqual(shares.map((share) => share.id));
  });

  it('creates a minimal entity of each type given by tp (candidato by default)', async () => {
    for (const tp of ['concorrente', 'partido']) {
      const created = await create(owner, { nome: `Só o nome (${tp})` }, tp);
      expect(created).toEqual({
        id: expect.any(Number),
        nome: `Só o nome (${tp})`,
        nr_urna: null,
        municipioBase: null,
        marketshare: [],
        tp,
        updated_at: expect.any(String),
        updated_by: { id: owner.user.id, display_name: 'Carla Dona' },
      });
      const [row] = await rows('SELECT tp, owner_id FROM entities WHERE id = :id', { id: created.id });
      expect(row).toEqual({ tp, owner_id: owner.user.id });
    }
    const untyped = await post('/api/entidade/add/', owner.headers, { nome: 'Sem tipo' });
    expect(untyped.status, untyped.text).toBe(201);
    const [row] = await rows('SELECT tp FROM entities WHERE id = :id', { id: untyped.body.data.id });
    expect(row!.tp).toBe('candidato');
    // The creator is the owner of the new team.
    const members = await rows('SELECT user_id, role FROM entity_members WHERE entity_id = :id', { id: untyped.body.data.id });
    expect(members).toEqual([{ user_id: owner.user.id, role: 'owner' }]);
  });
});

describe('POST /api/entidade/add/ (addEntity): updating', () => {
  it('updates with the id (200): sent lists become the lists, entries without an id are new ones', async () => {
    const body = candidate({
      marketshare: [
        { principal: true, marketshare: '23.5', tendency: 'up', notes: null, evaluations: 4 },
        { principal: false, marketshare: '21', tendency: 'stable', notes: 'Quaest', evaluations: 1 },
      ],
    });
    const { id } = await create(owner, body);
    expect(await rows('SELECT id FROM marketshare_entries WHERE entity_id = :id', { id })).toHaveLength(2);
    const [oldReference] = await rows('SELECT id FROM social_references WHERE entity_id = :id', { id });

    const changed = {
      ...body,
      id,
      nome: 'Maria da Silva Santos Oliveira',
      cidade: 'Campinas',
      municipio_disputa: '3509502',
      marketshare: [{ principal: true, marketshare: '27', tendency: 'up', notes: 'Nova pesquisa', evaluations: 5 }],
      referencia_social: { tipo: 'candidato', nm: 'Maria', social_network: [{ nm_rede: 'tiktok', username: 'maria.santos' }] },
    };
    const updated = await post('/api/entidade/add/', owner.headers, changed);
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.data.id).toBe(id);
    expect(updated.body.data).toMatchObject({ nome: 'Maria da Silva Santos Oliveira', cidade: 'Campinas', municipio_disputa: '3509502' });

    const shares = await rows('SELECT marketshare, notes FROM marketshare_entries WHERE entity_id = :id', { id });
    expect(shares).toEqual([{ marketshare: '27', notes: 'Nova pesquisa' }]);
    const references = await rows('SELECT id, nm, origem_name FROM social_references WHERE entity_id = :id', { id });
    expect(references).toHaveLength(1);
    // The same reference, updated: origem_name was not sent, so it kept its value.
    expect(references[0]).toMatchObject({ id: oldReference!.id, nm: 'Maria', origem_name: 'cadastro' });
    const entries = await rows('SELECT nm_rede FROM social_network_entries WHERE social_reference_id = :ref', { ref: references[0]!.id });
    expect(entries).toEqual([{ nm_rede: 'tiktok' }]);

    const read = await get(`/api/entidade/data/?id=${id}`, owner.headers);
    expect(read.body.data).toEqual(updated.body.data);
    expect(read.body.data.marketshare).toEqual([{ id: expect.any(Number), principal: true, marketshare: '27', tendency: 'up', notes: 'Nova pesquisa', evaluations: 5 }]);
    expect(read.body.data.referencia_social).toEqual({
      id: references[0]!.id,
      tipo: 'candidato',
      nm: 'Maria',
      origem_name: 'cadastro',
      social_network: [{ nm_rede: 'tiktok', username: 'maria.santos', last_full_evaluation_date: null, referencia_social: references[0]!.id }],
    });

    // Exactly one entity: the update did not create another.
    expect(await count('SELECT COUNT(*) AS count FROM entities WHERE cpf = :cpf', { cpf: body.cpf })).toBe(1);
  });

  it('takes back what getEntity returned (load, change, post back) and stores it unchanged', async () => {
    const { id } = await create(owner, candidate());
    const loaded = (await get(`/api/entidade/data/?id=${id}`, owner.headers)).body.data;
    const posted = await post('/api/entidade/add/', owner.headers, { ...loaded, ocupacao: 999 });
    expect(posted.status, posted.text).toBe(200);
    const reread = (await get(`/api/entidade/data/?id=${id}`, owner.headers)).body.data;
    // Everything as it was, nested ids included, but the change and when it was made.
    expect({ ...reread, updated_at: loaded.updated_at }).toEqual({ ...loaded, ocupacao: 999 });
    expect(reread).toEqual(posted.body.data);
  });

  it('clears the fields sent as null, and the nested records sent as null', async () => {
    const body = candidate();
    const { id } = await create(owner, body);
    const cleared = Object.fromEntries(Object.keys(body).filter((field) => field !== 'nome').map((field) => [field, null]));
    const updated = await post('/api/entidade/add/', owner.headers, { ...cleared, id, nome: 'Só o nome agora' });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.data).toEqual({
      id,
      nome: 'Só o nome agora',
      nr_urna: null,
      municipioBase: null,
      marketshare: [],
      tp: 'candidato',
      updated_at: expect.any(String),
      updated_by: { id: owner.user.id, display_name: 'Carla Dona' },
    });
    expect(await rows('SELECT id FROM marketshare_entries WHERE entity_id = :id', { id })).toEqual([]);
    expect(await rows('SELECT id FROM social_references WHERE entity_id = :id', { id })).toEqual([]);
  });

  it('lets an operator of the team update (200) but answers 403 to a viewer and 404 to a stranger', async () => {
    const body = candidate();
    const { id } = await create(owner, body);
    await addMember(id, operator, 'operator');
    await addMember(id, viewer, 'viewer');

    // An operator posts back the record as it read it: personal data masked or left out.
    const byOperator = await post('/api/entidade/add/', operator.headers, { ...maskedRecord(body), id, nm_urna: 'Maria do Povo' });
    expect(byOperator.status, byOperator.text).toBe(200);
    expect(byOperator.body.data.nm_urna).toBe('Maria do Povo');

    expectError(await post('/api/entidade/add/', viewer.headers, { ...body, id, nm_urna: 'Vera esteve aqui' }), 403, 'forbidden');
    const hidden = await post('/api/entidade/add/', stranger.headers, { ...body, id, nm_urna: 'Sérgio esteve aqui' });
    expectError(hidden, 404, 'not_found');
    expect(hidden.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'id' })]);
    expect(hidden.text).not.toContain('Maria');

    // Nothing the refused callers sent was stored.
    const read = await get(`/api/entidade/data/?id=${id}`, owner.headers);
    expect(read.body.data.nm_urna).toBe('Maria do Povo');
  });

  it('answers 404 for the id of no entity, alike for a platform admin', async () => {
    const missing = await post('/api/entidade/add/', owner.headers, { id: 2147483647, nome: 'Fantasma' });
    expectError(missing, 404, 'not_found');
    expect(missing.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'id' })]);
    expectError(await post('/api/entidade/add/', admin.headers, { id: 2147483647, nome: 'Fantasma' }), 404, 'not_found');
    expect(await rows('SELECT id FROM entities WHERE nome = :nome', { nome: 'Fantasma' })).toEqual([]);
  });

  it('lets a platform admin update any entity (200)', async () => {
    const { id } = await create(owner, { nome: 'Para o admin' });
    const updated = await post('/api/entidade/add/', admin.headers, { id, nome: 'Corrigido pelo admin' });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.data.nome).toBe('Corrigido pelo admin');
  });
});

describe('POST /api/entidade/add/ (addEntity): rules beyond the schema', () => {
  const cases: Array<[string, Json, string, string]> = [
    ['bad CPF check digits', { cpf: '529.982.247-26' }, 'cpf', 'cpf_check_digits'],
    ['bad voter id check digits', { titulo_eleitor: '102345670184' }, 'titulo_eleitor', 'voter_id_check_digits'],
    ['a birth date in the future', { data_nascimento: '2099-01-01', idade: undefined }, 'data_nascimento', 'in_past'],
    ['an age that does not match the birth date', { idade: 30 }, 'idade', 'consistent_age'],
    // A date is in the past once its day is over: today's date is not (compared in UTC, as the server does).
    ['a birth date of today', { data_nascimento: new Date().toISOString().slice(0, 10), idade: 0 }, 'data_nascimento', 'in_past'],
    ['an unknown state', { uf: 'XX' }, 'uf', 'known_state'],
    ['an unknown state of dispute', { estado_disputa: 'ZZ' }, 'estado_disputa', 'known_state'],
    ['an unknown municipality code', { municipio_disputa: '3599999' }, 'municipio_disputa', 'known_municipality'],
    ['an unknown base municipality code', { municipioBase: '1999999' }, 'municipioBase', 'known_municipality'],
    ['a municipality outside estado_disputa', { municipio_disputa: '3304557' }, 'municipio_disputa', 'in_state'],
    ['a non-http image_url', { image_url: 'ftp://x.y/z' }, 'image_url', 'http_url'],
    ['an unknown party acronym', { partidosLegenda: ['PT', 'PCdoB', 'PV', 'PXYZ'] }, 'partidosLegenda.3', 'registered_party'],
    ['a ballot number without the party prefix', { nr_urna: 45123 }, 'nr_urna', 'party_prefix'],
  ];

  it.each(cases)('answers 422 for %s, naming the field and rule', async (_what, changes, field, rule) => {
    const body = candidate(changes);
    const result = await post('/api/entidade/add/', owner.headers, body);
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toEqual([expect.objectContaining({ location: 'body', field, rule, message: expect.any(String) })]);
    expect(await rows('SELECT id FROM entities WHERE cpf = :cpf', { cpf: body.cpf })).toEqual([]);
  });

  it('echoes the offending value in the detail', async () => {
    const result = await post('/api/entidade/add/', owner.headers, candidate({ municipio_disputa: '3304557' }));
    expect(result.body.error.details[0].value).toBe('3304557');
  });

  it('names a non-http social-network link by its path', async () => {
    const body = candidate();
    body.referencia_social.social_network[0].link = 'ftp://www.instagram.com/mariasantos';
    const result = await post('/api/entidade/add/', owner.headers, body);
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toEqual([expect.objectContaining({ field: 'referencia_social.social_network.0.link', rule: 'http_url' })]);
  });

  it('lists every problem at once', async () => {
    const body = candidate({ cpf: '111.444.777-36', titulo_eleitor: '102345670184', uf: 'XX', image_url: 'ftp://x.y/z', nr_urna: 45123, partidosLegenda: ['PXYZ'], municipio_disputa: '3304557' });
    const result = await post('/api/entidade/add/', owner.headers, body);
    expectError(result, 422, 'validation_failed');
    const found = result.body.error.details.map((detail: Json) => `${detail.field}:${detail.rule}`).sort();
    expect(found).toEqual(
      ['cpf:cpf_check_digits', 'titulo_eleitor:voter_id_check_digits', 'uf:known_state', 'image_url:http_url', 'nr_urna:party_prefix', 'partidosLegenda.0:registered_party', 'municipio_disputa:in_state'].sort(),
    );
    for (const detail of result.body.error.details) expect(detail.location).toBe('body');
  });

  it('answers 422 for schema violations: missing nome, unformatted CPF', async () => {
    const { nome: _nome, ...withoutName } = candidate();
    const missing = await post('/api/entidade/add/', owner.headers, withoutName);
    expectError(missing, 422, 'validation_failed');
    expect(missing.body.error.details).toContainEqual(expect.objectContaining({ location: 'body', field: 'nome' }));

    const unformatted = await post('/api/entidade/add/', owner.headers, candidate({ cpf: '52998224725' }));
    expectError(unformatted, 422, 'validation_failed');
    expect(unformatted.body.error.details).toContainEqual(expect.objectContaining({ location: 'body', field: 'cpf' }));
    expect(await rows('SELECT id FROM entities WHERE cpf = :cpf', { cpf: '52998224725' })).toEqual([]);
  });
});

describe('POST /api/entidade/add/ (addEntity): CPF per team, and request errors', () => {
  it('answers 409 for a CPF already registered in the same team, and allows it in another team', async () => {
    const cpf = freshCpf();
    const first = await create(owner, candidate({ cpf }));
    const again = await post('/api/entidade/add/?tp=concorrente', owner.headers, candidate({ cpf, nome: 'Outra Maria' }));
    expectError(again, 409, 'conflict');
    expect(again.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'cpf', rule: expect.any(String) })]);

    // A member of the first entity's team shares it: the same CPF is taken for them too.
    await addMember(first.id, operator, 'operator');
    expectError(await post('/api/entidade/add/', operator.headers, candidate({ cpf })), 409, 'conflict');

    // An unrelated user (another campaign) may register the same politician.
    const elsewhere = await post('/api/entidade/add/', stranger.headers, candidate({ cpf }));
    expect(elsewhere.status, elsewhere.text).toBe(201);
    expect(elsewhere.body.data.cpf).toBe(cpf);

    // Updating the entity that holds the CPF is not a conflict with itself.
    const self = await post('/api/entidade/add/', owner.headers, candidate({ cpf, id: first.id }));
    expect(self.status, self.text).toBe(200);
    const taken = await rows('SELECT owner_id FROM entities WHERE cpf = :cpf ORDER BY id', { cpf });
    expect(taken).toEqual([{ owner_id: owner.user.id }, { owner_id: stranger.user.id }]);
  });

  // A double-clicked form sends the same create twice at once: the check and the insert must not interleave.
  it('refuses all but one of parallel creates with the same CPF', async () => {
    const cpf = freshCpf();
    const results = await Promise.all(Array.from({ length: 5 }, () => post('/api/entidade/add/', owner.headers, { nome: 'Duplo clique', cpf })));
    expect(results.map((result) => result.status).sort()).toEqual([201, 409, 409, 409, 409]);
    expect(await count('SELECT COUNT(*) AS count FROM entities WHERE cpf = :cpf', { cpf })).toBe(1);
  });

  it('answers 409 when an update would take the CPF of another entity of the team', async () => {
    const a = await create(owner, candidate());
    const b = await create(owner, candidate());
    const result = await post('/api/entidade/add/', owner.headers, candidate({ id: b.id, cpf: a.cpf }));
    expectError(result, 409, 'conflict');
    expect((await get(`/api/entidade/data/?id=${b.id}`, owner.headers)).body.data.cpf).toBe(b.cpf);
  });

  it('answers 400 for an unknown tp and 401 without a key', async () => {
    const bad = await post('/api/entidade/add/?tp=eleitor', owner.headers, candidate());
    expectError(bad, 400, 'bad_request');
    expect(bad.body.error.details).toContainEqual(expect.objectContaining({ location: 'query', field: 'tp' }));
    const anonymous = await post('/api/entidade/add/', {}, candidate());
    expectError(anonymous, 401, 'unauthorized');
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Token/);
  });
});

describe('GET /api/entidade/ (listEntities)', () => {
  let lister: TestUser;
  let other: TestUser;
  let ownIds: number[];
  let sharedId: number;
  let foreignId: number;

  beforeAll(async () => {
    lister = await createUser(app);
    other = await createUser(app);
    ownIds = [];
    // 31 candidates and 3 competitors of the lister, made through the store for speed.
    for (let i = 1; i <= 31; i += 1) ownIds.push(await app.entities.store.create('candidato', lister.user.id, { nome: `Candidato ${i}` }));
    for (let i = 1; i <= 3; i += 1) ownIds.push(await app.entities.store.create('concorrente', lister.user.id, { nome: `Concorrente ${i}` }));
    // One of the other user's entities is shared with the lister as viewer; another is not.
    sharedId = await app.entities.store.create('partido', other.user.id, { nome: 'Partido compartilhado' });
    await addMember(sharedId, lister, 'viewer');
    foreignId = await app.entities.store.create('candidato', other.user.id, { nome: 'Candidato alheio' });
  });

  it("pages the caller's entities 30 at a time, ordered by id, each with the caller's role", async () => {
    const all = [...ownIds, sharedId].sort((a, b) => a - b);
    const first = await get('/api/entidade/', lister.headers);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ success: true, request_id: first.headers.get('x-request-id') });
    expect(first.body.data).toMatchObject({ count: 35, total_pages: 2, links: { previous: null, next: `${app.baseUrl}/api/entidade/?page=2` } });
    expect(first.body.data.results.map((entity: Json) => entity.id)).toEqual(all.slice(0, 30));

    const next = new URL(first.body.data.links.next);
    const second = await get(next.pathname + next.search, lister.headers);
    expect(second.status, second.text).toBe(200);
    expect(second.body.data).toMatchObject({ count: 35, total_pages: 2, links: { next: null, previous: `${app.baseUrl}/api/entidade/?page=1` } });
    expect(second.body.data.results.map((entity: Json) => entity.id)).toEqual(all.slice(30));

    const everything = [...first.body.data.results, ...second.body.data.results];
    expect(everything.map((entity: Json) => entity.id)).not.toContain(foreignId);
    const shared = everything.find((entity: Json) => entity.id === sharedId);
    expect(shared).toEqual({
      id: sharedId,
      tp: 'partido',
      nome: 'Partido compartilhado',
      nm_urna: null,
      nr_urna: null,
      partido: null,
      uf: null,
      cidade: null,
      image_url: null,
      role: 'viewer',
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      updated_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      candidacy: null,
    });
    expect(everything.filter((entity: Json) => entity.id !== sharedId).every((entity: Json) => entity.role === 'owner')).toBe(true);
  });

  it('shows the summary fields of a full entity', async () => {
    const someone = await createUser(app);
    const body = candidate();
    const { id } = await create(someone, body);
    const result = await get('/api/entidade/', someone.headers);
    expect(result.body.data.results).toEqual([
      expect.objectContaining({ id, tp: 'candidato', nome: body.nome, nm_urna: body.nm_urna, nr_urna: body.nr_urna, partido: body.partido, uf: body.uf, cidade: body.cidade, image_url: body.image_url, role: 'owner' }),
    ]);
  });

  it('filters by tp, and the page links keep the filter', async () => {
    const competitors = await get('/api/entidade/?tp=concorrente', lister.headers);
    expect(competitors.status, competitors.text).toBe(200);
    expect(competitors.body.data).toMatchObject({ count: 3, total_pages: 1, links: { next: null, previous: null } });
    expect(competitors.body.data.results.map((entity: Json) => [entity.tp, entity.nome])).toEqual([
      ['concorrente', 'Concorrente 1'],
      ['concorrente', 'Concorrente 2'],
      ['concorrente', 'Concorrente 3'],
    ]);

    const candidates = await get('/api/entidade/?tp=candidato', lister.headers);
    expect(candidates.body.data).toMatchObject({ count: 31, total_pages: 2 });
    const next = new URL(candidates.body.data.links.next);
    expect(next.origin).toBe(app.baseUrl);
    expect(next.pathname).toBe('/api/entidade/');
    expect(Object.fromEntries(next.searchParams)).toEqual({ tp: 'candidato', page: '2' });
    const second = await get(next.pathname + next.search, lister.headers);
    expect(second.body.data.results.map((entity: Json) => entity.nome)).toEqual(['Candidato 31']);
    const previous = new URL(second.body.data.links.previous);
    expect(Object.fromEntries(previous.searchParams)).toEqual({ tp: 'candidato', page: '1' });

    const parties = await get('/api/entidade/?tp=partido', lister.headers);
    expect(parties.body.data.results.map((entity: Json) => entity.id)).toEqual([sharedId]);
  });

  it('answers 404 for a page past the last, and 400 for a bad page or tp', async () => {
    const past = await get('/api/entidade/?page=3', lister.headers);
    expectError(past, 404, 'not_found');
    expect(past.body.error.details).toContainEqual(expect.objectContaining({ location: 'query', field: 'page' }));
    expectError(await get('/api/entidade/?tp=concorrente&page=2', lister.headers), 404, 'not_found');
    for (const query of ['page=0', 'page=abc', 'tp=eleitor']) {
      const bad = await get(`/api/entidade/?${query}`, lister.headers);
      expectError(bad, 400, 'bad_request');
      expect(bad.body.error.details).toContainEqual(expect.objectContaining({ location: 'query', field: query.split('=')[0] }));
    }
  });

  it('shows a platform admin every entity, as admin where not a member', async () => {
    const total = await count('SELECT COUNT(*) AS count FROM entities', {});
    const result = await get('/api/entidade/', admin.headers);
    expect(result.status, result.text).toBe(200);
    expect(total).toBeGreaterThan(40);
    expect(result.body.data.count).toBe(total);
    expect(result.body.data.total_pages).toBe(Math.ceil(total / 30));
    expect(result.body.data.results.every((entity: Json) => entity.role === 'admin')).toBe(true);

    // Where the admin is a member, the membership's role is shown.
    await addMember(foreignId, admin, 'viewer');
    const pages = result.body.data.total_pages;
    const seen: Json[] = [];
    for (let page = 1; page <= pages; page += 1) seen.push(...(await get(`/api/entidade/?page=${page}`, admin.headers)).body.data.results);
    expect(seen.find((entity) => entity.id === foreignId)?.role).toBe('viewer');
    expect(seen.find((entity) => entity.id === sharedId)?.role).toBe('admin');
  });

  it('shows a stranger an empty first page', async () => {
    const nobody = await createUser(app);
    const result = await get('/api/entidade/', nobody.headers);
    expect(result.status, result.text).toBe(200);
    expect(result.body.data).toEqual({ links: { next: null, previous: null }, count: 0, total_pages: 1, results: [] });
    expectError(await get('/api/entidade/?page=2', nobody.headers), 404, 'not_found');
  });

  it('answers 401 without a key', async () => {
    expectError(await get('/api/entidade/'), 401, 'unauthorized');
  });
});

describe('GET /api/entidade/data/ (getEntity)', () => {
  let entityId: number;
  let body: Json;

  beforeAll(async () => {
    body = candidate();
    ({ id: entityId } = await create(owner, body));
    await addMember(entityId, viewer, 'viewer');
    await addMember(entityId, operator, 'operator');
  });

  it('lets every member read it, the viewer included, and a platform admin (personal data masked for viewers and operators)', async () => {
    const asOwner = await get(`/api/entidade/data/?id=${entityId}`, owner.headers);
    expect(asOwner.status, asOwner.text).toBe(200);
    expect(asOwner.body.data).toMatchObject({ id: entityId, nome: body.nome, cpf: body.cpf });
    const asAdmin = await get(`/api/entidade/data/?id=${entityId}`, admin.headers);
    expect(asAdmin.body.data).toEqual(asOwner.body.data);
    // Issue 18, item 9 (test/entity-personal-data.test.ts): the rest of the record is the same.
    for (const reader of [viewer, operator]) {
      const result = await get(`/api/entidade/data/?id=${entityId}`, reader.headers);
      expect(result.status, result.text).toBe(200);
      expect(result.body.data).toEqual(maskedRecord(asOwner.body.data));
      expect(result.body.data.cpf).not.toBe(body.cpf);
    }
  });

  it('answers a stranger 404, with the same body as for an entity that does not exist', async () => {
    const headers = { ...stranger.headers, 'X-Request-Id': 'probe-entity' };
    const hidden = await get(`/api/entidade/data/?id=${entityId}`, headers);
    expectError(hidden, 404, 'not_found');
    expect(hidden.body.error.details).toEqual([expect.objectContaining({ location: 'query', field: 'id' })]);
    expect(hidden.text).not.toContain(body.nome);
    expect(hidden.text).not.toContain(body.cpf);

    const missingId = 2147483600;
    const missing = await get(`/api/entidade/data/?id=${missingId}`, headers);
    expectError(missing, 404, 'not_found');
    const normalise = (text: string, id: number) => text.replaceAll(String(id), '<id>');
    expect(normalise(missing.text, missingId)).toBe(normalise(hidden.text, entityId));
    // An admin gets the same answer for a missing entity.
    expect((await get(`/api/entidade/data/?id=${missingId}`, { ...admin.headers, 'X-Request-Id': 'probe-entity' })).text).toBe(missing.text);
  });

  it('answers 400 without an id or with a malformed one, and 401 without a key', async () => {
    const missing = await get('/api/entidade/data/', owner.headers);
    expectError(missing, 400, 'bad_request');
    expect(missing.body.error.details).toContainEqual(expect.objectContaining({ location: 'query', field: 'id' }));
    for (const id of ['abc', '0', '-1']) {
      const bad = await get(`/api/entidade/data/?id=${id}`, owner.headers);
      expectError(bad, 400, 'bad_request');
      expect(bad.body.error.details).toContainEqual(expect.objectContaining({ location: 'query', field: 'id' }));
    }
    expectError(await get(`/api/entidade/data/?id=${entityId}`), 401, 'unauthorized');
  });
});
