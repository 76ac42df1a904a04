/**
 * GET /api/municipios/ exactly as the contract describes it: the front end's hottest read, and the one
 * operation whose rules the seed spells out. Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type PalanqueClient, type components } from '../sdk/index.js';
import { SHARED_MUNICIPIOS, startTestApp, type TestApp } from './helpers/app.js';

type MunicipalityPage = components['schemas']['MunicipalityPage'];

let app: TestApp;
let api: PalanqueClient;

beforeAll(async () => {
  app = await startTestApp({ withMunicipalities: true });
  api = createApiClient({ baseUrl: app.baseUrl, throwOnError: false });
});

afterAll(async () => {
  await app?.close();
});

async function listPage(query: { codigo_uf?: number; page?: number } = {}): Promise<MunicipalityPage> {
  const { data, response } = await api.GET('/api/municipios/', { params: { query } });
  expect(response.status).toBe(200);
  return data as MunicipalityPage;
}

describe('the unfiltered list', () => {
  it('has 5570 municipalities in 186 pages of 30, page 1 without a previous link', async () => {
    const page = await listPage();
    expect(page.count).toBe(5570);
    expect(page.total_pages).toBe(186);
    expect(page.results).toHaveLength(30);
    expect(page.links.previous).toBeNull();
    expect(page.links.next).toBe(`${app.baseUrl}/api/municipios/?page=2`);
  });

  it('orders results by codigo_ibge ascending, across pages', async () => {
    const first = await listPage({ page: 1 });
    const second = await listPage({ page: 2 });
    const codes = [...first.results, ...second.results].map((m) => m.codigo_ibge);
    expect(codes).toEqual([...codes].sort((a, b) => a - b));
    expect(first.results[0]?.codigo_ibge).toBe(1100015);
  });

  it('ends on page 186 with the remaining 20 and no next link', async () => {
    const last = await listPage({ page: 186 });
    expect(last.results).toHaveLength(20);
    expect(last.links.next).toBeNull();
    expect(last.links.previous).toBe(`${app.baseUrl}/api/municipios/?page=185`);
  });

  it('serves every municipality exactly once when walked through links.next', async () => {
    const seen = new Set<number>();
    let url: string | null = `${app.baseUrl}/api/municipios/`;
    while (url) {
      const page = (await (await fetch(url)).json()) as MunicipalityPage;
      for (const municipality of page.results) seen.add(municipality.codigo_ibge);
      url = page.links.next;
    }
    expect(seen.size).toBe(5570);
  });
});

describe('filtered by codigo_uf', () => {
  it('counts only that state and keeps the filter in both links', async () => {
    const first = await listPage({ codigo_uf: 35 });
    expect(first.count).toBe(645);
    expect(first.total_pages).toBe(22);
    expect(first.results.every((m) => m.codigo_uf === 35)).toBe(true);
    expect(first.links.next).toBe(`${app.baseUrl}/api/municipios/?codigo_uf=35&page=2`);

    const second = await listPage({ codigo_uf: 35, page: 2 });
    expect(second.links.previous).toBe(`${app.baseUrl}/api/municipios/?codigo_uf=35&page=1`);
  });

  it('serves a small state on one page (Federal District: Brasília only)', async () => {
    const page = await listPage({ codigo_uf: 53 });
    expect(page).toEqual({
      links: { next: null, previous: null },
      count: 1,
      total_pages: 1,
      results: [{ codigo_ibge: 5300108, nome: 'Brasília', latitude: -15.7795, longitude: -47.9297, capital: true, codigo_uf: 53 }],
    });
  });

  it('answers a valid state code with no municipalities with count 0 and one empty page', async () => {
    const page = await listPage({ codigo_uf: 20 });
    expect(page).toEqual({ links: { next: null, previous: null }, count: 0, total_pages: 1, results: [] });
  });
});

describe('bad pages and parameters', () => {
  it('answers a page past the last with 404 in the error model', async () => {
    const { error, response } = await api.GET('/api/municipios/', { params: { query: { page: 187 } } });
    expect(response.status).toBe(404);
    expect(error).toMatchObject({ success: false, error: { code: 'not_found', details: [{ field: 'page', value: 187 }] } });
    const filtered = await api.GET('/api/municipios/', { params: { query: { codigo_uf: 53, page: 2 } } });
    expect(filtered.response.status).toBe(404);
  });

  it.each([['0'], ['-1'], ['abc'], ['1.5'], ['']])('answers page=%j with 400 naming the parameter', async (page) => {
    const response = await fetch(`${app.baseUrl}/api/municipios/?page=${page}`);
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body).toMatchObject({ success: false, error: { code: 'bad_request', details: [{ location: 'query', field: 'page' }] } });
    expect(body.request_id).toBe(response.headers.get('x-request-id'));
  });

  it('answers an out-of-range or non-integer codigo_uf with 400', async () => {
    for (const uf of ['99', '5', 'SP']) {
      const response = await fetch(`${app.baseUrl}/api/municipios/?codigo_uf=${uf}`);
      expect(response.status, `codigo_uf=${uf}`).toBe(400);
      expect(await response.json()).toMatchObject({ error: { details: [{ field: 'codigo_uf' }] } });
    }
  });
});

describe('methods', () => {
  it('answers OPTIONS with 200 and Allow: GET, POST, HEAD, OPTIONS', async () => {
    const response = await fetch(`${app.baseUrl}/api/municipios/`, { method: 'OPTIONS' });
    expect(response.status).toBe(200);
    expect(response.headers.get('allow')).toBe('GET, POST, HEAD, OPTIONS');
  });

  it('answers HEAD with the GET headers and no body', async () => {
    const get = await fetch(`${app.baseUrl}/api/municipios/?codigo_uf=11`);
    const head = await fetch(`${app.baseUrl}/api/municipios/?codigo_uf=11`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    for (const name of ['content-type', 'content-length', 'etag', 'cache-control']) {
      expect(head.headers.get(name), name).toBe(get.headers.get(name));
    }
    expect(await head.text()).toBe('');
  });

  it('answers POST without credentials with 401 in the error model', async () => {
    const { error, response } = await api.POST('/api/municipios/', {
      body: { codigo_ibge: 3550308, nome: 'São Paulo', latitude: -23.5329, longitude: -46.6395, capital: true, codigo_uf: 35 },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Token/);
    expect(error).toMatchObject({ success: false, error: { code: 'unauthorized' } });
  });

  it('answers a method the path does not have with 405 and the Allow header', async () => {
    const response = await fetch(`${app.baseUrl}/api/municipios/`, { method: 'DELETE' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, POST, HEAD, OPTIONS');
    expect(await response.json()).toMatchObject({ success: false, error: { code: 'method_not_allowed' } });
  });
});

describe('representation', () => {
  it('is application/json and keeps accents and apostrophes byte for byte', async () => {
    const response = await fetch(`${app.baseUrl}/api/municipios/?codigo_uf=11`);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const raw = Buffer.from(await response.arrayBuffer()).toString('utf8');
    expect(raw).toContain('"nome":"Alta Floresta D\'Oeste"');
    expect(raw).toContain('"nome":"Espigão D\'Oeste"');
    // The same bytes as in the source file, not an escaped or re-encoded form.
    const source = readFileSync(SHARED_MUNICIPIOS, 'utf8');
    expect(source).toContain("Espigão D'Oeste");
  });

  it('keeps north-of-the-equator latitudes positive (Boa Vista, Roraima)', async () => {
    const page = await listPage({ codigo_uf: 14 });
    expect(page.results.find((m) => m.codigo_ibge === 1400100)).toMatchObject({ nome: 'Boa Vista', capital: true });
    expect(page.results.find((m) => m.codigo_ibge === 1400100)?.latitude).toBeGreaterThan(0);
  });
});

describe('caching', () => {
  it('sends an ETag and Cache-Control, and 304 without a body for a matching If-None-Match', async () => {
    const first = await fetch(`${app.baseUrl}/api/municipios/?codigo_uf=35&page=3`);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(first.headers.get('cache-control')).toBe('public, max-age=60');

    const again = await fetch(`${app.baseUrl}/api/municipios/?codigo_uf=35&page=3`, { headers: { 'If-None-Match': etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);

    const otherPage = await fetch(`${app.baseUrl}/api/municipios/?codigo_uf=35&page=4`, { headers: { 'If-None-Match': etag! } });
    expect(otherPage.status).toBe(200);
  });

  it('changes the ETag when the data changes', async () => {
    const before = (await fetch(`${app.baseUrl}/api/municipios/?codigo_uf=53`)).headers.get('etag');
    const original = app.catalog.page(53, 1)!.results[0]!;
    app.catalog.replace([{ ...original, nome: 'Brasília (renamed in test)' }]);
    try {
      const after = await fetch(`${app.baseUrl}/api/municipios/?codigo_uf=53`, { headers: { 'If-None-Match': before! } });
      expect(after.status).toBe(200);
      expect(after.headers.get('etag')).not.toBe(before);
    } finally {
      await app.catalog.reload();
    }
  });
});
