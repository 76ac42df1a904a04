/**
 * What every operation inherits from the HTTP layer: request ids, the error model on every error (with
 * the offending field, rule and value), response validation, the base path and absolute URLs behind a
 * proxy. Uses the municipality list and the login operation as carriers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ifNoneMatchHits } from '../src/http/conditional.js';
import type { Municipality } from '../src/municipalities/rules.js';
import { appsClosedAfterEach, startTestApp, type TestApp } from './helpers/app.js';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ withMunicipalities: true });
});

afterAll(async () => {
  await app?.close();
});

/** Apps with special settings, closed after each test. */
const startExtraApp = appsClosedAfterEach();

const postJson = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${app.baseUrl}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });

describe('X-Request-Id', () => {
  it('echoes the client id in the header and in the body', async () => {
    const response = await fetch(`${app.baseUrl}/api/municipios/?page=0`, { headers: { 'X-Request-Id': 'front-123' } });
    expect(response.headers.get('x-request-id')).toBe('front-123');
    expect((await response.json()).request_id).toBe('front-123');
  });

  it('generates a UUID when none is sent', async () => {
    const response = await fetch(`${app.baseUrl}/api/municipios/?page=0`);
    const id = response.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect((await response.json()).request_id).toBe(id);
  });

  it('answers 400 to an id that is too long or not printable ASCII, with a fresh id', async () => {
    for (const bad of ['x'.repeat(129), 'has space', 'tab\tinside']) {
      const response = await fetch(`${app.baseUrl}/api/municipios/`, { headers: { 'X-Request-Id': bad } });
      expect(response.status, bad).toBe(400);
      const body = await response.json();
      expect(body.error).toMatchObject({ code: 'bad_request', details: [{ location: 'header', field: 'X-Request-Id' }] });
      expect(body.request_id).not.toBe(bad);
    }
  });

  it('tags the request log line with the id', async () => {
    await fetch(`${app.baseUrl}/api/municipios/?codigo_uf=53`, { headers: { 'X-Request-Id': 'log-me-7' } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const lines = app.logs.filter((line) => line.request_id === 'log-me-7');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.some((line) => (line.res as { statusCode?: number } | undefined)?.statusCode === 200)).toBe(true);
  });
});

describe('the error model on every error', () => {
  it('malformed JSON is 400 bad_request', async () => {
    const response = await postJson('/api/auth/login', '{"username": "ana",');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ success: false, error: { code: 'bad_request', details: [{ location: 'body', rule: 'json' }] } });
  });

  it('a body that breaks its schema is 422 with every offending field, rule and value', async () => {
    const response = await postJson('/api/auth/login', JSON.stringify({ username: 42, extra: true }));
    expect(response.status).toBe(422);
    const body = await response.json();
    expect(body.error.code).toBe('validation_failed');
    expect(body.error.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ location: 'body', field: 'password', rule: 'required' }),
        expect.objectContaining({ location: 'body', field: 'username', rule: 'type', value: 42 }),
      ]),
    );
  });

  it('never echoes the value of a secret field', async () => {
    const response = await postJson('/api/auth/login', JSON.stringify({ username: 'ana', password: 'x'.repeat(300) }));
    expect(response.status).toBe(422);
    const body = await response.json();
    expect(body.error.details).toEqual([expect.objectContaining({ field: 'password', rule: 'maxLength' })]);
    expect(body.error.details[0]).not.toHaveProperty('value');
  });

  it('an unsupported content type is 415 naming what the operation takes', async () => {
    const response = await fetch(`${app.baseUrl}/api/auth/login`, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'ana' });
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({
      error: { code: 'unsupported_media_type', details: [{ field: 'Content-Type', value: 'text/plain', message: 'must be application/json' }] },
    });
  });

  it('a body over the configured limit is 413', async () => {
    const small = await startExtraApp({ config: { bodyLimit: 100 } });
    const response = await fetch(`${small.baseUrl}/api/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: 'a'.repeat(200), password: 'x' }),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: 'payload_too_large' } });
  });

  it('an unknown path is 404 and a path outside the API too', async () => {
    for (const path of ['/api/nada/', '/favicon.ico', '/v1/api/municipios/']) {
      const response = await fetch(`${app.baseUrl}${path}`);
      expect(response.status, path).toBe(404);
      expect(await response.json()).toMatchObject({ success: false, error: { code: 'not_found' } });
    }
  });

  it('an unexpected failure is 500 with no stack, SQL or internal message, logged with the request id', async () => {
    const broken = await startExtraApp({
      skipInitialLoad: true,
      fetchMunicipalities: () => Promise.reject(new Error('SQLITE_ERROR: no such table: municipalities at Statement.all')),
    });
    const response = await fetch(`${broken.baseUrl}/api/municipios/`, { headers: { 'X-Request-Id': 'boom-1' } });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ success: false, error: { code: 'internal_error', details: [] }, request_id: 'boom-1' });
    expect(text).not.toMatch(/SQLITE|no such table|Statement|at \w+ \(/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const logged = broken.logs.find((line) => line.request_id === 'boom-1' && line.err);
    expect(JSON.stringify(logged)).toContain('no such table');
  });
});

describe('response validation', () => {
  // codigo_uf 99 breaks the Municipality schema: only a server bug could produce it.
  const badRow = { codigo_ibge: 9900001, nome: 'Fora do contrato', latitude: -10, longitude: -50, capital: false, codigo_uf: 99 } as unknown as Municipality;

  it('on: a response that breaks the contract becomes 500 instead of reaching the client', async () => {
    const strict = await startExtraApp({ config: { validateResponses: true }, fetchMunicipalities: async () => [badRow] });
    const response = await fetch(`${strict.baseUrl}/api/municipios/`);
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ error: { code: 'internal_error' } });
  });

  it('off (production setting): the same response is sent as is', async () => {
    const lax = await startExtraApp({ config: { validateResponses: false }, fetchMunicipalities: async () => [badRow] });
    const response = await fetch(`${lax.baseUrl}/api/municipios/`);
    expect(response.status).toBe(200);
    expect((await response.json()).results[0].codigo_uf).toBe(99);
  });
});

describe('reference data not loaded', () => {
  it('answers 503 reference_data_unavailable, then serves the data once it is loaded', async () => {
    let rows: Municipality[] = [];
    const empty = await startExtraApp({ fetchMunicipalities: async () => rows });
    const before = await fetch(`${empty.baseUrl}/api/municipios/`);
    expect(before.status).toBe(503);
    expect(before.headers.get('retry-after')).toBe('60');
    expect(await before.json()).toMatchObject({ success: false, error: { code: 'reference_data_unavailable' } });

    rows = app.catalog.page(53, 1)!.results;
    await empty.catalog.reload(); // what the retry (or an import in the same process) does
    const after = await fetch(`${empty.baseUrl}/api/municipios/`);
    expect(after.status).toBe(200);
    expect((await after.json()).count).toBe(1);
  });
});

describe('base path and absolute URLs', () => {
  it('serves the API under BASE_PATH only, with links under it', async () => {
    const versioned = await startExtraApp({ withMunicipalities: true, config: { basePath: '/v1' } });
    const response = await fetch(`${versioned.baseUrl}/v1/api/municipios/?codigo_uf=35`);
    expect(response.status).toBe(200);
    expect((await response.json()).links.next).toBe(`${versioned.baseUrl}/v1/api/municipios/?codigo_uf=35&page=2`);
    expect((await fetch(`${versioned.baseUrl}/api/municipios/`)).status).toBe(404);
    expect((await fetch(`${versioned.baseUrl}/v1/api/municipios/`, { method: 'OPTIONS' })).headers.get('allow')).toBe('GET, POST, HEAD, OPTIONS');
  });

  it('uses the forwarded protocol and host behind a trusted proxy, and ignores them otherwise', async () => {
    const forwarded = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'api.palanque.app' };
    const trusting = await startExtraApp({ withMunicipalities: true, config: { trustProxy: 'loopback', basePath: '/v1' } });
    const behindProxy = await (await fetch(`${trusting.baseUrl}/v1/api/municipios/`, { headers: forwarded })).json();
    expect(behindProxy.links.next).toBe('https://api.palanque.app/v1/api/municipios/?page=2');

    const direct = await (await fetch(`${app.baseUrl}/api/municipios/`, { headers: forwarded })).json();
    expect(direct.links.next).toBe(`${app.baseUrl}/api/municipios/?page=2`);
  });

  it('prefers a configured PUBLIC_URL over the request and the proxy headers', async () => {
    const configured = await startExtraApp({
      withMunicipalities: true,
      config: { publicUrl: 'https://palanque.example.org', basePath: '/v1', trustProxy: true },
    });
    const body = await (
      await fetch(`${configured.baseUrl}/v1/api/municipios/?page=2`, { headers: { 'X-Forwarded-Host': 'evil.example' } })
    ).json();
    expect(body.links).toEqual({
      next: 'https://palanque.example.org/v1/api/municipios/?page=3',
      previous: 'https://palanque.example.org/v1/api/municipios/?page=1',
    });
  });
});

describe('If-None-Match evaluation', () => {
  it('matches exact, weak, listed and wildcard tags, and nothing else', () => {
    expect(ifNoneMatchHits('"abc"', '"abc"')).toBe(true);
    expect(ifNoneMatchHits('W/"abc"', '"abc"')).toBe(true);
    expect(ifNoneMatchHits('"x", "abc"', '"abc"')).toBe(true);
    expect(ifNoneMatchHits('*', '"abc"')).toBe(true);
    expect(ifNoneMatchHits('"abd"', '"abc"')).toBe(false);
    expect(ifNoneMatchHits(undefined, '"abc"')).toBe(false);
  });
});
