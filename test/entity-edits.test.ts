/**
 * Issue 17, "no lost edits": an update of an entity changes only what it names (a field sent as null
 * clears it), the nested records keep their identity, the entity's ETag changes on every write and an
 * If-Match naming an older version is refused with 409 edit_conflict, every entity says when and by whom
 * it was written last, and a body that is valid JSON but not an object is 422, not 400.
 * Through the real app and the contract validator; on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { formatCpf, generateCpf } from '@brazilian-utils/brazilian-utils';
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request, type Result } from './helpers/http.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

let app: TestApp;
let owner: TestUser;
let operator: TestUser;

const get = (path: string, headers: Record<string, string>) => request(app.baseUrl, 'GET', path, headers);
const post = (path: string, headers: Record<string, string>, body: unknown) => request(app.baseUrl, 'POST', path, headers, body);
const read = (id: number, user = owner) => get(`/api/entidade/data/?id=${id}`, user.headers);
const save = (body: Json, headers: Record<string, string> = {}, user = owner) => post('/api/entidade/add/', { ...user.headers, ...headers }, body);

async function rows(sql: string, replacements: Record<string, unknown>): Promise<Array<Record<string, unknown>>> {
  return app.sequelize.query(sql, { replacements, type: QueryTypes.SELECT });
}

/** A candidate with every kind of field: documents, codes, flags, lists and both nested lists. */
function fullCandidate(): Json {
  return {
    nome: 'Maria da Silva Santos',
    cpf: formatCpf(generateCpf()),
    nm_urna: 'Maria Santos',
    nr_urna: 13123,
    partido: '13',
    titulo_eleitor: '102345670183',
    genero: 'feminino',
    raca: 3,
    uf: 'SP',
    cidade: 'São Paulo',
    estado_disputa: 'SP',
    municipio_disputa: '3550308',
    email: 'contato@mariasantos.com.br',
    list_emails: ['imprensa@mariasantos.com.br'],
    reeleicao: false,
    partidosLegenda: ['PT', 'PV'],
    referencia_social: {
      tipo: 'candidato',
      nm: 'Maria Santos',
      origem_name: 'cadastro',
      social_network: [
        { nm_rede: 'instagram', id: '17841400000000001', username: 'mariasantos', link: 'https://www.instagram.com/mariasantos', exist_or_active: true },
        { nm_rede: 'youtube', id: 'UC123', username: 'mariasantos.tv' },
        { nm_rede: 'tiktok', username: 'maria.santos' },
      ],
    },
    marketshare: [
      { principal: true, marketshare: '23.5', tendency: 'up', notes: 'Datafolha', evaluations: 4 },
      { principal: false, marketshare: '19', tendency: 'down', notes: null, evaluations: 2 },
    ],
  };
}

async function created(body: Json = fullCandidate()): Promise<{ id: number; data: Json; etag: string }> {
  const answer = await save(body);
  expect(answer.status, answer.text).toBe(201);
  return { id: answer.body.data.id, data: answer.body.data, etag: answer.headers.get('etag')! };
}

/** The stored row ids of an entity's nested records, to prove an update kept (or replaced) them. */
async function nestedRowIds(entityId: number): Promise<{ shares: number[]; networks: Array<[string, number]> }> {
  const shares = await rows('SELECT id FROM marketshare_entries WHERE entity_id = :entityId ORDER BY position', { entityId });
  const networks = await rows(
    'SELECT e.nm_rede, e.id FROM social_network_entries e JOIN social_references r ON r.id = e.social_reference_id WHERE r.entity_id = :entityId ORDER BY e.position',
    { entityId },
  );
  return { shares: shares.map((row) => Number(row.id)), networks: networks.map((row) => [String(row.nm_rede), Number(row.id)]) };
}

/** What a write must not touch: the record without the fields every write changes. */
const unchangedPart = (data: Json) => ({ ...data, updated_at: undefined, updated_by: undefined });

beforeAll(async () => {
  app = await startTestApp({ withMunicipalities: true });
  owner = await createUser(app, { first_name: 'Carla', last_name: 'Dona' });
  operator = await createUser(app, { first_name: 'Otávio', last_name: 'Operador' });
});

afterAll(async () => {
  await app?.close();
});

describe('a partial update keeps what it does not name', () => {
  it('changes only the e-mail when only nome and email are sent (the issue\'s report)', async () => {
    const { id, data } = await created();
    const answer = await save({ id, nome: data.nome, email: 'novo@mariasantos.com.br' });
    expect(answer.status, answer.text).toBe(200);
    expect(unchangedPart(answer.body.data)).toEqual(unchangedPart({ ...data, email: 'novo@mariasantos.com.br' }));
    // The nested rows are the same rows, not recreated ones.
    const after = await read(id);
    expect(after.body.data.marketshare.map((share: Json) => share.id)).toEqual(data.marketshare.map((share: Json) => share.id));
    expect(after.body.data.referencia_social.id).toBe(data.referencia_social.id);
  });

  it('clears a field sent as null and keeps the others', async () => {
    const { id, data } = await created();
    const answer = await save({ id, nome: data.nome, cpf: null, nr_urna: null, list_emails: null, genero: null });
    expect(answer.status, answer.text).toBe(200);
    const stored = answer.body.data;
    expect(stored).not.toHaveProperty('cpf');
    expect(stored).not.toHaveProperty('list_emails');
    expect(stored).not.toHaveProperty('genero');
    expect(stored.nr_urna).toBeNull();
    expect(stored).toMatchObject({ nm_urna: 'Maria Santos', titulo_eleitor: '102345670183', raca: 3, municipio_disputa: '3550308' });
    const [row] = await rows('SELECT cpf, genero, raca FROM entities WHERE id = :id', { id });
    expect(row).toEqual({ cpf: null, genero: null, raca: 3 });
  });

  it('still requires nome, and still judges the fields it names (422 naming them)', async () => {
    const { id } = await created();
    const missing = await save({ id, email: 'x@y.com.br' });
    expectError(missing, 422, 'validation_failed');
    expect(missing.body.error.details).toEqual([expect.objectContaining({ field: 'nome', rule: 'required' })]);
    const badCpf = await save({ id, nome: 'Maria', cpf: '111.111.111-12' });
    expectError(badCpf, 422, 'validation_failed');
    expect(badCpf.body.error.details).toEqual([expect.objectContaining({ field: 'cpf', rule: 'cpf_check_digits', value: '111.111.111-12' })]);
  });

  it('judges a pair of fields on the entity as it will be when the update names one of them', async () => {
    const { id } = await created({ ...fullCandidate(), data_nascimento: '1978-05-14', idade: undefined });
    // The stored birth date makes an age of 20 wrong.
    const age = await save({ id, nome: 'Maria', idade: 20 });
    expectError(age, 422, 'validation_failed');
    expect(age.body.error.details).toEqual([expect.objectContaining({ field: 'idade', rule: 'consistent_age', value: 20 })]);
    // The stored party (13) makes ballot number 45123 wrong.
    const ballot = await save({ id, nome: 'Maria', nr_urna: 45123 });
    expect(ballot.body.error.details).toEqual([expect.objectContaining({ field: 'nr_urna', rule: 'party_prefix' })]);
    // The stored state of dispute (SP) does not hold Rio de Janeiro (3304557).
    const town = await save({ id, nome: 'Maria', municipio_disputa: '3304557' });
    expect(town.body.error.details).toEqual([expect.objectContaining({ field: 'municipio_disputa', rule: 'in_state' })]);
    // An update that names neither field of a pair is not held to it, even when the stored age went stale.
    await app.sequelize.query('UPDATE entities SET idade = 1 WHERE id = :id', { replacements: { id } });
    const email = await save({ id, nome: 'Maria', email: 'nova@mariasantos.com.br' });
    expect(email.status, email.text).toBe(200);
  });

  it('posts back what getEntity returned unchanged, read-only fields included, and they are ignored', async () => {
    const { id } = await created();
    const loaded = (await read(id)).body.data;
    const rowsBefore = await nestedRowIds(id);
    const posted = await save({ ...loaded, tp: 'partido', updated_at: '2001-01-01T00:00:00Z', updated_by: { id: 999999, display_name: 'Ninguém' } }, {}, owner);
    expect(posted.status, posted.text).toBe(200);
    expect(posted.body.data.tp).toBe('candidato');
    expect(posted.body.data.updated_by).toEqual({ id: owner.user.id, display_name: 'Carla Dona' });
    expect(new Date(posted.body.data.updated_at).getTime()).toBeGreaterThan(new Date('2020-01-01').getTime());
    expect(unchangedPart(posted.body.data)).toEqual(unchangedPart(loaded));
    // No nested row was recreated.
    expect(await nestedRowIds(id)).toEqual(rowsBefore);
  });
});

describe('nested entries keep their identity', () => {
  it('matches marketshare entries by id: changed in place, new without id, removed when left out', async () => {
    const { id, data } = await created();
    const [first, second] = data.marketshare as Json[];
    const answer = await save({
      id,
      nome: data.nome,
      marketshare: [{ id: second.id, marketshare: '21' }, { marketshare: '5', tendency: 'stable' }],
    });
    expect(answer.status, answer.text).toBe(200);
    const shares = answer.body.data.marketshare as Json[];
    expect(shares).toHaveLength(2);
    // The second entry, moved first, changed in place: its other fields kept their values.
    expect(shares[0]).toEqual({ ...second, marketshare: '21' });
    expect(shares[1]).toEqual({ id: expect.any(Number), marketshare: '5', tendency: 'stable', notes: null });
    expect([first.id, second.id]).not.toContain(shares[1].id);
    expect(await rows('SELECT id FROM marketshare_entries WHERE id = :removed', { removed: first.id })).toEqual([]);
  });

  it('answers 422 for a marketshare id that is not one of the entity\'s, and changes nothing', async () => {
    const { id, data } = await created();
    const other = await created();
    const foreignId = other.data.marketshare[0].id;
    const answer = await save({ id, nome: 'Outro nome', marketshare: [{ id: data.marketshare[0].id, marketshare: '1' }, { id: foreignId, marketshare: '2' }] });
    expectError(answer, 422, 'validation_failed');
    expect(answer.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'marketshare.1.id', rule: 'existing_entry', value: foreignId })]);
    const after = (await read(id)).body.data;
    expect(after.nome).toBe(data.nome);
    expect(after.marketshare).toEqual(data.marketshare);
    expect((await read(other.id)).body.data.marketshare).toEqual(other.data.marketshare);
  });

  it('matches social-network entries by (nm_rede, id): kept rows, partial fields, removals, new ones', async () => {
    const { id, data } = await created();
    const before = await nestedRowIds(id);
    const [instagram, , tiktok] = data.referencia_social.social_network as Json[];
    const answer = await save({
      id,
      nome: data.nome,
      referencia_social: {
        social_network: [
          { nm_rede: 'tiktok', username: 'maria.santos.oficial' },
          { nm_rede: 'instagram', id: '17841400000000001', exist_or_active: false },
          // Same network, another profile id: another entry.
          { nm_rede: 'youtube', id: 'UC999', username: 'maria.canal2' },
        ],
      },
    });
    expect(answer.status, answer.text).toBe(200);
    const reference = answer.body.data.referencia_social;
    // The reference kept its id and the fields not sent.
    expect(reference).toMatchObject({ id: data.referencia_social.id, tipo: 'candidato', nm: 'Maria Santos', origem_name: 'cadastro' });
    expect(reference.social_network).toEqual([
      { ...tiktok, username: 'maria.santos.oficial' },
      { ...instagram, exist_or_active: false },
      { nm_rede: 'youtube', id: 'UC999', username: 'maria.canal2', last_full_evaluation_date: null, referencia_social: data.referencia_social.id },
    ]);
    const after = await nestedRowIds(id);
    const rowOf = (ids: Array<[string, number]>, network: string) => ids.find(([name]) => name === network)![1];
    expect(rowOf(after.networks, 'tiktok')).toBe(rowOf(before.networks, 'tiktok'));
    expect(rowOf(after.networks, 'instagram')).toBe(rowOf(before.networks, 'instagram'));
    // The old youtube profile (UC123) was left out: removed; UC999 is a new row.
    expect(rowOf(after.networks, 'youtube')).not.toBe(rowOf(before.networks, 'youtube'));
  });

  it('leaves both lists alone when an update omits them, and removes them when sent as null or []', async () => {
    const { id } = await created();
    const before = await nestedRowIds(id);
    expect((await save({ id, nome: 'Maria', referencia_social: { nm: 'Maria S.' } })).status).toBe(200);
    expect(await nestedRowIds(id)).toEqual(before);
    expect((await read(id)).body.data.referencia_social.nm).toBe('Maria S.');

    const cleared = await save({ id, nome: 'Maria', marketshare: [], referencia_social: null });
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body.data.marketshare).toEqual([]);
    expect(cleared.body.data).not.toHaveProperty('referencia_social');
    expect(await nestedRowIds(id)).toEqual({ shares: [], networks: [] });
  });
});

describe('ETag and If-Match', () => {
  const etagOf = (answer: Result) => answer.headers.get('etag');

  it('answers an ETag with getEntity and addEntity that changes on every write', async () => {
    const { id, etag } = await created();
    expect(etag).toMatch(/^"[^"]+"$/);
    const first = await read(id);
    expect(etagOf(first)).toBe(etag);
    const updated = await save({ id, nome: 'Maria 2' });
    expect(etagOf(updated)).not.toBe(etag);
    expect(etagOf(await read(id))).toBe(etagOf(updated));
    // A write that changes no value is still a write.
    const again = await save({ id, nome: 'Maria 2' });
    expect(etagOf(again)).not.toBe(etagOf(updated));
  });

  it('refuses a write whose If-Match is stale with 409 edit_conflict naming the current version, changing nothing', async () => {
    const { id, etag } = await created();
    const other = await save({ id, nome: 'Maria, por outra pessoa' }, {}, owner);
    const current = etagOf(other)!;
    const stale = await save({ id, nome: 'Maria, versão velha', email: 'velha@exemplo.com.br' }, { 'If-Match': etag });
    expectError(stale, 409, 'edit_conflict');
    expect(stale.body.error.message).toContain(current);
    expect(stale.body.error.details).toEqual([
      { location: 'header', field: 'If-Match', rule: 'current_version', message: `must be the current version ${current}`, value: etag },
    ]);
    const after = await read(id);
    expect(after.body.data.nome).toBe('Maria, por outra pessoa');
    expect(after.body.data.email).toBe('contato@mariasantos.com.br');
    expect(etagOf(after)).toBe(current);

    // With the current version (alone, in a list, or *) the write goes through.
    const fresh = await save({ id, nome: 'Maria, atual' }, { 'If-Match': `"0", ${current}` });
    expect(fresh.status, fresh.text).toBe(200);
    const any = await save({ id, nome: 'Maria, qualquer' }, { 'If-Match': '*' });
    expect(any.status, any.text).toBe(200);
    // Without If-Match, as older clients send, the write goes through too.
    const plain = await save({ id, nome: 'Maria, sem If-Match' });
    expect(plain.status, plain.text).toBe(200);
  });

  it('lets exactly one of two writes made on the same version win', async () => {
    const { id, etag } = await created();
    const answers = await Promise.all(
      ['Primeira', 'Segunda', 'Terceira'].map((nome) => save({ id, nome, email: `${nome.toLowerCase()}@exemplo.com.br` }, { 'If-Match': etag })),
    );
    const won = answers.filter((answer) => answer.status === 200);
    expect(won, answers.map((answer) => answer.text).join('\n')).toHaveLength(1);
    for (const answer of answers.filter((candidate) => candidate !== won[0])) expectError(answer, 409, 'edit_conflict');
    const stored = (await read(id)).body.data;
    expect(stored.nome).toBe(won[0]!.body.data.nome);
    expect(stored.email).toBe(won[0]!.body.data.email);
  });

  it('answers 400 to If-Match on a create, or one that is not entity tags', async () => {
    const create = await save({ nome: 'Nova' }, { 'If-Match': '"1"' });
    expectError(create, 400, 'bad_request');
    expect(create.body.error.details).toEqual([expect.objectContaining({ location: 'header', field: 'If-Match', rule: 'update_only' })]);
    const { id } = await created();
    const malformed = await save({ id, nome: 'Maria' }, { 'If-Match': 'versão 1' });
    expectError(malformed, 400, 'bad_request');
    expect(malformed.body.error.details).toEqual([expect.objectContaining({ field: 'If-Match', rule: 'entity_tag', value: 'versão 1' })]);
  });

  it('treats a weak tag as never current (If-Match compares strongly)', async () => {
    const { id, etag } = await created();
    expectError(await save({ id, nome: 'Maria' }, { 'If-Match': `W/${etag}` }), 409, 'edit_conflict');
  });
});

describe('who wrote an entity last, and when', () => {
  it('records the operator who updated it, and the time', async () => {
    const { id, data } = await created();
    await app.entities.models.Member.create({ entity_id: id, user_id: operator.user.id, role: 'operator', added_at: new Date() });
    const answer = await save({ id, nome: data.nome, cidade: 'Campinas' }, {}, operator);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.data.updated_by).toEqual({ id: operator.user.id, display_name: 'Otávio Operador' });
    expect(new Date(answer.body.data.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(data.updated_at).getTime());
    const seen = (await read(id)).body.data;
    expect(seen).toMatchObject({ tp: 'candidato', updated_by: { id: operator.user.id } });
  });
});

describe('a body that is valid JSON but not an object', () => {
  it.each(['null', '123', '"x"', 'true'])('is 422 validation_failed naming the body: %s', async (raw) => {
    for (const [path, headers] of [
      ['/api/auth/login', {}],
      ['/api/entidade/add/', owner.headers],
    ] as const) {
      const answer = await post(path, headers, raw);
      expectError(answer, 422, 'validation_failed');
      expect(answer.body.error.details).toEqual([{ location: 'body', field: '', rule: 'type', message: 'must be object', value: JSON.parse(raw) }]);
    }
  });
});

describe('a create retried after its instance died between commit and answer', () => {
  it('answers the entity the first run made instead of creating a second one', async () => {
    const quick = await startTestApp({ withMunicipalities: true, idempotency: { abandonAfterMs: 200 } });
    try {
      const user = await createUser(quick);
      const headers = { ...user.headers, 'Idempotency-Key': 'create-once-after-a-crash' };
      const body = { nome: 'Candidata Retentada', cpf: formatCpf(generateCpf()) };
      const first = await request(quick.baseUrl, 'POST', '/api/entidade/add/', headers, body);
      expect(first.status, first.text).toBe(201);
      // What a crash after the commit leaves: the effect, and a claim that never got its answer.
      await quick.sequelize.query("UPDATE idempotency_keys SET state = 'in_flight', status_code = NULL, headers = NULL, body = NULL, created_at = :now", {
        replacements: { now: new Date() },
      });
      const blocked = await request(quick.baseUrl, 'POST', '/api/entidade/add/', headers, body);
      expectError(blocked, 409, 'idempotency_key_in_flight');
      await new Promise((resolve) => setTimeout(resolve, 300));

      const retried = await request(quick.baseUrl, 'POST', '/api/entidade/add/', headers, body);
      expect(retried.status, retried.text).toBe(201);
      expect(retried.body.data.id).toBe(first.body.data.id);
      expect(retried.headers.get('etag')).toBe(first.headers.get('etag'));
      const [row] = await quick.sequelize.query<{ n: number | string }>('SELECT COUNT(*) AS n FROM entities WHERE nome = :nome', {
        replacements: { nome: body.nome },
        type: QueryTypes.SELECT,
      });
      expect(Number(row!.n)).toBe(1);
      // And the answer is stored this time: a further retry is a plain replay.
      const replayed = await request(quick.baseUrl, 'POST', '/api/entidade/add/', headers, body);
      expect(replayed.headers.get('idempotent-replayed')).toBe('true');
      expect(replayed.body.data.id).toBe(first.body.data.id);
    } finally {
      await quick.close();
    }
  });
});
