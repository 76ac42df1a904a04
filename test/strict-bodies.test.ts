/**
 * Strict request bodies (issue 19): a body the API owns refuses a field its schema does not list, with
 * 422 `validation_failed` naming each one (`rule` `additionalProperties`), and stores nothing; what the
 * API returns can be posted back as read (the read-only fields are accepted and ignored); the bodies
 * providers send stay open. Through the real app and the contract validator, on SQLite, or on
 * PostgreSQL with TEST_DATABASE_URL. The first block holds the spec itself to the rule, so a request
 * body added later is closed too.
 */
import { formatCpf, generateCpf } from '@brazilian-utils/brazilian-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliver } from '../src/simulators/socialnet.js';
import { createUser, type TestUser } from './helpers/accounts.js';
import { defaultAppConfig, startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request, type Result } from './helpers/http.js';
import { loadSpec, resolvePointer } from './helpers/spec.js';
import { joinTeam } from './helpers/teams.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const APP_SECRET = 'app-secret-of-the-social-network-0123';

/** The operations whose bodies providers write: open, as providers add fields without notice. */
const PROVIDER_BODIES = new Set(['receiveSmsDeliveryReceipt', 'receiveSocialnetEvents', 'receiveSocialnetRemoval']);

describe('the contract: every request body the API owns is closed', () => {
  const spec = loadSpec() as Json;
  const resolve = (schema: Json): Json => (schema && typeof schema === 'object' && '$ref' in schema ? resolve(resolvePointer(spec, schema.$ref)) : schema);

  /** Paths (`CandidateEntity.referencia_social.social_network[]`) of the object schemas under `schema` that accept any field. */
  function openObjects(schema: Json, where: string, seen = new Set<Json>()): string[] {
    const node = resolve(schema);
    if (!node || typeof node !== 'object' || seen.has(node)) return [];
    seen.add(node);
    const isObject = node.type === 'object' || (Array.isArray(node.type) && node.type.includes('object')) || node.properties !== undefined;
    const closed = node.additionalProperties === false || node.unevaluatedProperties === false;
    const own = isObject && !closed ? [where] : [];
    const nested = [
      ...Object.entries(node.properties ?? {}).flatMap(([name, property]) => openObjects(property, `${where}.${name}`, seen)),
      ...(node.items ? openObjects(node.items, `${where}[]`, seen) : []),
      ...['allOf', 'anyOf', 'oneOf'].flatMap((keyword) => (node[keyword] ?? []).flatMap((member: Json) => openObjects(member, where, seen))),
    ];
    return [...own, ...nested];
  }

  const owned: Array<[string, Json]> = [];
  const provided: Array<[string, Json]> = [];
  for (const item of Object.values(spec.paths) as Json[]) {
    for (const operation of Object.values(item) as Json[]) {
      const content = operation?.requestBody?.content ?? {};
      for (const [mediaType, media] of Object.entries(content) as Array<[string, Json]>) {
        if (mediaType === 'text/plain') continue;
        (PROVIDER_BODIES.has(operation.operationId) ? provided : owned).push([`${operation.operationId} ${mediaType}`, media.schema]);
      }
    }
  }

  it('finds the bodies to check', () => {
    expect(owned.length).toBeGreaterThan(20);
    expect(provided.map(([name]) => name.split(' ')[0]).sort()).toEqual([...PROVIDER_BODIES].sort());
  });

  it.each(owned)('%s refuses unknown fields at every depth', (_name, schema) => {
    expect(openObjects(schema, 'body')).toEqual([]);
  });

  it.each(provided)('%s stays open, and its schema says so', (_name, schema) => {
    expect(openObjects(schema, 'body')).toContain('body');
    expect(resolve(schema).description).toMatch(/Open/);
  });

  it('states the rule in the introduction', () => {
    expect(spec.info.description).toMatch(/## Request bodies/);
  });
});

describe('strict request bodies on the real app', () => {
  let app: TestApp;
  let owner: TestUser;
  let operator: TestUser;
  const call = (method: 'GET' | 'POST', path: string, user: TestUser, body?: unknown) => request(app.baseUrl, method, path, user.headers, body);

  /** An entity with nested records and personal data, as a form would first send it. */
  const newEntity = (changes: Json = {}): Json => ({
    nome: 'Maria da Silva Santos',
    nm_urna: 'Maria Santos',
    nr_urna: 13123,
    cpf: formatCpf(generateCpf()),
    raca: 3,
    referencia_social: {
      tipo: 'candidato',
      nm: 'Maria Santos',
      social_network: [{ nm_rede: 'instagram', username: 'mariasantos', link: 'https://www.instagram.com/mariasantos' }],
    },
    marketshare: [{ principal: true, marketshare: '23.5', tendency: 'up', notes: null, evaluations: 4 }],
    ...changes,
  });

  const entityCount = async (): Promise<number> => (await call('GET', '/api/entidade/', owner)).body.data.count;
  const read = async (id: number, user: TestUser = owner): Promise<Result> => call('GET', `/api/entidade/data/?id=${id}`, user);

  /** The answer is 422 validation_failed whose details name exactly these body fields, each as an unknown one. */
  function expectUnknownFields(result: Result, fields: string[]): void {
    expectError(result, 422, 'validation_failed');
    const details = result.body.error.details;
    expect(details.map((detail: Json) => detail.field).sort()).toEqual([...fields].sort());
    for (const detail of details) expect(detail).toMatchObject({ location: 'body', rule: 'additionalProperties', message: expect.any(String) });
  }

  beforeAll(async () => {
    app = await startTestApp({ config: { socialnet: { ...defaultAppConfig.socialnet, appSecret: APP_SECRET } } });
    [owner, operator] = await Promise.all([createUser(app), createUser(app)]);
  });

  afterAll(async () => {
    await app?.close();
  });

  it('refuses a misspelled field with 422 naming it and its value, and stores nothing', async () => {
    const before = await entityCount();
    const result = await call('POST', '/api/entidade/add/', owner, { nome: 'x', nm_urnaa: 'y' });
    expectUnknownFields(result, ['nm_urnaa']);
    expect(result.body.error.details[0]).toMatchObject({ field: 'nm_urnaa', value: 'y' });
    expect(await entityCount()).toBe(before);
  });

  it('names every unknown field, nested entries included', async () => {
    const body = newEntity({ nm_urnaa: 'y', apelido: 'Mari' });
    body.marketshare[0].notas = 'a typo of notes';
    body.referencia_social.social_network[0].usuario = 'mariasantos';
    const result = await call('POST', '/api/entidade/add/', owner, body);
    expectUnknownFields(result, ['nm_urnaa', 'apelido', 'marketshare.0.notas', 'referencia_social.social_network.0.usuario']);
  });

  it('leaves a stored entity unchanged when its update has an unknown field', async () => {
    const created = await call('POST', '/api/entidade/add/', owner, newEntity());
    expect(created.status, created.text).toBe(201);
    const id = created.body.data.id;
    expectUnknownFields(await call('POST', '/api/entidade/add/', owner, { id, nome: 'Outro Nome', nm_urnaa: 'Outra' }), ['nm_urnaa']);
    expect((await read(id)).body.data.nome).toBe('Maria da Silva Santos');
  });

  it('accepts a record read with getEntity posted back whole, read-only fields included, and changes nothing', async () => {
    const created = await call('POST', '/api/entidade/add/', owner, newEntity());
    const id = created.body.data.id;
    const record = (await read(id)).body.data;
    expect(record).toMatchObject({ id, tp: 'candidato', updated_at: expect.any(String), updated_by: { id: owner.user.id } });
    expect(record.marketshare[0].id).toEqual(expect.any(Number));
    expect(record.referencia_social).toMatchObject({ id: expect.any(Number), social_network: [{ referencia_social: record.referencia_social.id }] });

    const postedBack = await call('POST', '/api/entidade/add/', owner, record);
    expect(postedBack.status, postedBack.text).toBe(200);
    const { updated_at: _before, ...unchanged } = record;
    const { updated_at: _after, ...after } = (await read(id)).body.data;
    expect(after).toEqual(unchanged);
  });

  it('accepts a masked record posted back by an operator', async () => {
    const created = await call('POST', '/api/entidade/add/', owner, newEntity());
    const id = created.body.data.id;
    await joinTeam(app.baseUrl, owner, operator, id, 'operator');
    const masked = (await read(id, operator)).body.data;
    expect(masked.cpf).toMatch(/^\*{3}\./);
    const postedBack = await call('POST', '/api/entidade/add/', operator, { ...masked, nm_urna: 'Maria S.' });
    expect(postedBack.status, postedBack.text).toBe(200);
    expect((await read(id)).body.data).toMatchObject({ nm_urna: 'Maria S.', cpf: created.body.data.cpf, raca: 3 });
  });

  it('refuses unknown fields in the other bodies it owns', async () => {
    const created = await call('POST', '/api/entidade/add/', owner, newEntity());
    const id = created.body.data.id;
    const operatorBody = { entity_id: id, email: operator.user.email, role: 'viewer', papel: 'viewer' };
    expectUnknownFields(await call('POST', '/api/operators/add_operator/', owner, operatorBody), ['papel']);
    expect((await call('GET', `/api/operators/get_operators/?id=${id}`, owner)).body.data).toHaveLength(1);

    const source = { name: 'Jornal do Vale', url: 'https://jornaldovale.example/', nome: 'Jornal do Vale' };
    expectUnknownFields(await call('POST', '/api/news/request_font/', owner, source), ['nome']);
    expect((await call('GET', '/api/news/get_requested_fonts/', owner)).body.data).toEqual([]);

    const login = await request(app.baseUrl, 'POST', '/api/auth/login', {}, { username: owner.user.username, password: owner.password, remember: true });
    expectUnknownFields(login, ['remember']);
  });

  it('still accepts a provider callback with fields it does not declare', async () => {
    const delivery = {
      object: 'instagram',
      api_version: 'v21.0',
      entry: [{ id: '17841400000000009', time: Math.floor(Date.now() / 1000), uid: 'x', changes: [{ field: 'feed', value: { item: 'post' }, verb: 'add' }] }],
    };
    const result = await deliver(app.baseUrl, APP_SECRET, delivery);
    expect(result.status, result.text).toBe(200);
    expect(result.body.data).toMatchObject({ changes: 1, ignored: 1 });
  });
});
