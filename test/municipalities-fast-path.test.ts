/**
 * The municipality list's fast path (src/municipalities/fast-path.ts) must be invisible: for every
 * request, it answers exactly what the full contract pipeline answers, or leaves the request to it.
 * Two apps on the same data, one without fast paths, are compared request by request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';

let fast: TestApp;
let full: TestApp;

beforeAll(async () => {
  // The same public URL, so both apps write the same links (and so the same bytes and ETags).
  const config = { publicUrl: 'https://api.palanque.test' };
  [fast, full] = await Promise.all([
    startTestApp({ withMunicipalities: true, config }),
    startTestApp({ withMunicipalities: true, withoutFastPaths: true, config }),
  ]);
});

afterAll(async () => {
  await Promise.all([fast?.close(), full?.close()]);
});

interface Answer {
  status: number;
  headers: Record<string, string | null>;
  body: string;
}

/** What a client sees. */
async function answer(app: TestApp, query: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(`${app.baseUrl}/api/municipios/${query}`, {
    ...init,
    headers: { 'X-Request-Id': 'compare-1', ...(init.headers as Record<string, string>) },
  });
  const headers = Object.fromEntries(
    ['content-type', 'content-length', 'etag', 'cache-control', 'x-request-id', 'allow'].map((name) => [name, response.headers.get(name)]),
  );
  return { status: response.status, headers, body: await response.text() };
}

const VALID = ['', '?page=2', '?page=186', '?codigo_uf=35', '?codigo_uf=35&page=22', '?page=3&codigo_uf=31', '?codigo_uf=53', '?codigo_uf=20'];
const INVALID = ['?page=0', '?page=187', '?page=abc', '?page=1&page=2', '?codigo_uf=99', '?foo=1', '?codigo_uf=53&page=2', '?page=%31'];

describe('same answers with and without the fast path', () => {
  it.each(VALID)('valid request %j: same status, headers and bytes, the first time and again', async (query) => {
    const [a, b] = await Promise.all([answer(fast, query), answer(full, query)]);
    expect(a.status).toBe(200);
    expect(a).toEqual(b);
    // The second time the fast path finds the page by the request's target, without reading the query.
    expect(await answer(fast, query)).toEqual(b);
  });

  it.each(INVALID)('request %j: same error, the first time and again', async (query) => {
    const [a, b] = await Promise.all([answer(fast, query), answer(full, query)]);
    expect(a.status).toBeGreaterThanOrEqual(200);
    expect(a).toEqual(b);
    expect(await answer(fast, query)).toEqual(b);
  });

  it('HEAD and a matching If-None-Match give the same answers', async () => {
    const etag = (await answer(full, '?codigo_uf=35')).headers.etag!;
    for (const init of [{ method: 'HEAD' }, { headers: { 'If-None-Match': etag } }, { headers: { 'If-None-Match': `W/${etag}, "x"` } }]) {
      const [a, b] = await Promise.all([answer(fast, '?codigo_uf=35', init), answer(full, '?codigo_uf=35', init)]);
      expect(a).toEqual(b);
    }
  });

  it('an invalid X-Request-Id is rejected the same way', async () => {
    const init = { headers: { 'X-Request-Id': 'has space' } };
    const [a, b] = await Promise.all([answer(fast, '', init), answer(full, '', init)]);
    expect(a.status).toBe(400);
    expect({ ...a, headers: { ...a.headers, 'x-request-id': null }, body: a.body.replace(/"request_id":"[^"]+"/, '') }).toEqual({
      ...b,
      headers: { ...b.headers, 'x-request-id': null },
      body: b.body.replace(/"request_id":"[^"]+"/, ''),
    });
  });
});

describe('the fast path', () => {
  it('answers valid requests itself and logs them with the request id', async () => {
    await fetch(`${fast.baseUrl}/api/municipios/?page=7`, { headers: { 'X-Request-Id': 'fast-7' } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const line = fast.logs.find((entry) => entry.request_id === 'fast-7');
    expect(line).toMatchObject({ msg: 'request completed', req: { method: 'GET', url: '/api/municipios/?page=7' }, res: { statusCode: 200 } });
    // The full pipeline's request logger adds responseTime; the fast path's line does not.
    expect(line).not.toHaveProperty('responseTime');
  });

  it('serves fresh pages after the data changes', async () => {
    const before = await answer(fast, '?codigo_uf=53');
    const original = fast.catalog.page(53, 1)!.results[0]!;
    fast.catalog.replace([...fast.catalog.page(undefined, 1)!.results, { ...original, nome: 'Brasília renomeada' }]);
    try {
      const after = await answer(fast, '?codigo_uf=53');
      expect(after.body).toContain('Brasília renomeada');
      expect(after.headers.etag).not.toBe(before.headers.etag);
    } finally {
      await fast.catalog.reload();
    }
    expect((await answer(fast, '?codigo_uf=53')).body).toBe(before.body);
  });
});
