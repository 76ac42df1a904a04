/**
 * POST /api/municipios/ (createMunicipality) on the full list of 5,570: an admin adds a municipality and
 * the list (served from memory and from pre-rendered pages) shows it at once; the same record again is
 * a harmless 200, the same code with other fields a 409; the import's rules (code/state agreement, known
 * state, coordinates in range) are 422; only admins may create. Runs on SQLite, or on PostgreSQL with
 * TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Municipality } from '../src/municipalities/rules.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';

let app: TestApp;
const call = (method: 'GET' | 'POST', path: string, headers: Record<string, string> = {}, body?: unknown) =>
  request(app.baseUrl, method, path, headers, body);
let admin: TestUser;
let user: TestUser;

beforeAll(async () => {
  app = await startTestApp({ withMunicipalities: true });
  admin = await createAdmin(app);
  user = await createUser(app);
});

afterAll(async () => {
  await app?.close();
});

const create = (body: unknown, headers: Record<string, string> = admin.headers) => call('POST', '/api/municipios/', headers, body);

/** Every municipality of a state, through the public list (all pages). */
async function listState(uf: number): Promise<{ count: number; results: Municipality[] }> {
  const results: Municipality[] = [];
  let url: string | null = `${app.baseUrl}/api/municipios/?codigo_uf=${uf}`;
  let count = -1;
  while (url) {
    const response = await fetch(url);
    expect(response.status).toBe(200);
    const page = (await response.json()) as { count: number; links: { next: string | null }; results: Municipality[] };
    count = page.count;
    results.push(...page.results);
    url = page.links.next;
  }
  expect(results).toHaveLength(count);
  return { count, results };
}

async function totalCount(): Promise<number> {
  const response = await fetch(`${app.baseUrl}/api/municipios/`);
  return ((await response.json()) as { count: number }).count;
}

/** A 7-digit code of the state that is neither in the list nor in the database, counting down from the top. */
async function freeCode(uf: number): Promise<number> {
  const { results } = await listState(uf);
  const taken = new Set(results.map((m) => m.codigo_ibge));
  for (let code = uf * 100_000 + 99_990; code > uf * 100_000; code -= 1) {
    if (!taken.has(code) && !(await app.sequelize.query(`SELECT 1 FROM municipalities WHERE codigo_ibge = ${code}`, { plain: true }))) return code;
  }
  throw new Error(`no free code in state ${uf}`);
}

async function rowCount(): Promise<number> {
  const row = (await app.sequelize.query('SELECT COUNT(*) AS n FROM municipalities', { plain: true })) as { n: number | string };
  return Number(row.n);
}

describe('an admin creates a municipality', () => {
  it('answers 201 with the record, which the list serves at once', async () => {
    expect(await rowCount()).toBe(5570);
    const before = await listState(53);
    expect(before.count).toBe(1); // the Federal District: Brasília only
    const firstPage = await fetch(`${app.baseUrl}/api/municipios/?codigo_uf=53`);
    const etag = firstPage.headers.get('etag');
    expect(etag).toBeTruthy();
    const totalBefore = await totalCount();

    const code = await freeCode(53);
    const body: Municipality = { codigo_ibge: code, nome: "Águas Claras d'Oeste", latitude: -15.8403, longitude: -48.0262, capital: false, codigo_uf: 53 };
    const result = await create(body);
    expect(result.status, result.text).toBe(201);
    expect(result.body).toEqual({ success: true, data: body, message: expect.any(String), request_id: result.headers.get('x-request-id') });

    const after = await listState(53);
    expect(after.count).toBe(before.count + 1);
    expect(after.results).toContainEqual(body);
    expect(after.results.map((m) => m.codigo_ibge)).toEqual([...after.results.map((m) => m.codigo_ibge)].sort((a, b) => a - b));
    expect(await totalCount()).toBe(totalBefore + 1);
    expect(await rowCount()).toBe(5571);

    // A cached copy of the old page is stale now: its ETag no longer matches.
    const revalidated = await fetch(`${app.baseUrl}/api/municipios/?codigo_uf=53`, { headers: { 'If-None-Match': etag! } });
    expect(revalidated.status).toBe(200);
    expect(revalidated.headers.get('etag')).not.toBe(etag);
  });

  it('answers 200 to the identical body again, and changes nothing', async () => {
    const body: Municipality = { codigo_ibge: await freeCode(11), nome: 'Nova Esperança do Guaporé', latitude: -12.5, longitude: -63.1, capital: false, codigo_uf: 11 };
    expect((await create(body)).status).toBe(201);
    const before = await listState(11);
    const rows = await rowCount();
    const version = app.catalog.version;

    const again = await create(body);
    expect(again.status, again.text).toBe(200);
    expect(again.body).toEqual({ success: true, data: body, message: expect.any(String), request_id: again.headers.get('x-request-id') });
    expect(await listState(11)).toEqual(before);
    expect(before.results.filter((m) => m.codigo_ibge === body.codigo_ibge)).toEqual([body]);
    expect(await rowCount()).toBe(rows);
    expect(app.catalog.version, 'nothing changed, so the list was not reloaded').toBe(version);
  });

  it('answers 409 naming codigo_ibge for the same code with other fields, and keeps the existing record', async () => {
    const body: Municipality = { codigo_ibge: await freeCode(17), nome: 'Lago Verde do Tocantins', latitude: -10.2, longitude: -48.3, capital: false, codigo_uf: 17 };
    expect((await create(body)).status).toBe(201);
    const rows = await rowCount();

    for (const changed of [{ ...body, nome: 'Outro Nome' }, { ...body, latitude: -10.3 }, { ...body, capital: true }]) {
      const conflict = await create(changed);
      expectError(conflict, 409, 'conflict');
      expect(conflict.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'codigo_ibge', value: body.codigo_ibge })]);
    }
    // An existing municipality of the imported list, too.
    const saoPaulo = await create({ codigo_ibge: 3550308, nome: 'Sampa', latitude: -23.5329, longitude: -46.6395, capital: true, codigo_uf: 35 });
    expectError(saoPaulo, 409, 'conflict');
    expect(saoPaulo.body.error.details).toContainEqual(expect.objectContaining({ field: 'codigo_ibge' }));

    expect(await rowCount()).toBe(rows);
    expect((await listState(17)).results.filter((m) => m.codigo_ibge === body.codigo_ibge)).toEqual([body]);
    expect((await listState(35)).results.find((m) => m.codigo_ibge === 3550308)?.nome).toBe('São Paulo');
  });
});

describe('invalid municipalities are 422 and change nothing', () => {
  const valid = (): Municipality => ({ codigo_ibge: 3399990, nome: 'Teste', latitude: -22.9, longitude: -43.2, capital: false, codigo_uf: 33 });

  it("answers 422 with rule state_prefix when the code does not start with codigo_uf", async () => {
    const rows = await rowCount();
    const result = await create({ ...valid(), codigo_ibge: 3599990, codigo_uf: 33 });
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'codigo_ibge', rule: 'state_prefix', value: 3599990 })]);
    expect(await rowCount()).toBe(rows);
    expect((await listState(33)).results.some((m) => m.codigo_ibge === 3599990)).toBe(false);
    expect((await listState(35)).results.some((m) => m.codigo_ibge === 3599990)).toBe(false);
  });

  it('answers 422 naming codigo_uf for an unknown state (20, code 2012345)', async () => {
    const result = await create({ ...valid(), codigo_ibge: 2012345, codigo_uf: 20 });
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toContainEqual(expect.objectContaining({ location: 'body', field: 'codigo_uf' }));
  });

  it.each([
    ['latitude north of Brazil', { latitude: 10 }, 'latitude'],
    ['latitude south of Brazil', { latitude: -40 }, 'latitude'],
    ['swapped coordinates', { latitude: -43.2, longitude: -22.9 }, 'latitude'],
    ['longitude east of Brazil', { longitude: 10 }, 'longitude'],
    ['a blank name', { nome: '   ' }, 'nome'],
    ['an empty name', { nome: '' }, 'nome'],
    ['a code with 8 digits', { codigo_ibge: 33999900 }, 'codigo_ibge'],
    ['capital as a string', { capital: 'no' }, 'capital'],
  ])('answers 422 for %s', async (_label, change, field) => {
    const rows = await rowCount();
    const result = await create({ ...valid(), ...change });
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toContainEqual(expect.objectContaining({ location: 'body', field }));
    expect(await rowCount()).toBe(rows);
  });

  it.each(['codigo_ibge', 'nome', 'latitude', 'longitude', 'capital', 'codigo_uf'] as const)('answers 422 when %s is missing', async (field) => {
    const body: Partial<Municipality> = valid();
    delete body[field];
    const result = await create(body);
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toContainEqual(expect.objectContaining({ location: 'body', field, rule: 'required' }));
  });

  it('answers 400 to a body that is not JSON', async () => {
    expectError(await create('{"codigo_ibge": 33'), 400, 'bad_request');
  });
});

describe('who may create', () => {
  it('answers 403 to a non-admin and 401 without a key, creating nothing', async () => {
    const rows = await rowCount();
    const body: Municipality = { codigo_ibge: await freeCode(52), nome: 'Não Autorizada', latitude: -16.7, longitude: -49.3, capital: false, codigo_uf: 52 };
    expectError(await create(body, user.headers), 403, 'forbidden');
    expectError(await create(body, {}), 401, 'unauthorized');
    expectError(await create(body, { Authorization: 'Token plq_not-a-real-key' }), 401, 'unauthorized');
    expect(await rowCount()).toBe(rows);
    expect((await listState(52)).results.some((m) => m.codigo_ibge === body.codigo_ibge)).toBe(false);
  });
});
