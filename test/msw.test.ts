/**
 * sdk/msw.ts: msw handlers for every operation of the contract, answering the spec's examples. These tests
 * hold the handlers to spec/openapi.yaml (every operation has one, each answers its first 2xx example
 * with that response's header examples), check the per-test override and the base URL option, and check
 * that sdk/openapi.json, the document the handlers are built from, is what `npm run generate` writes.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { getResponse, http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, PalanqueApiError, type PalanqueClient } from '../sdk/index.js';
import { createHandlers, DEFAULT_BASE_URL, handlers, mockUrl, override } from '../sdk/msw.js';
import { loadSpec, resolvePointer, responseExample, specPath } from './helpers/spec.js';

type Node = Record<string, unknown>;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

const spec = loadSpec();

/** Follows `$ref`s of the spec (examples, responses and headers are often references). */
function deref(node: unknown): Node {
  let current = node as Node;
  while (typeof current?.$ref === 'string') current = resolvePointer(spec, current.$ref) as Node;
  return current;
}

interface SpecOperation {
  operationId: string;
  method: string;
  path: string;
  /** The first 2xx status in the spec's order. */
  status: string;
  response: Node;
}

const operations: SpecOperation[] = Object.entries(spec.paths as Record<string, Node>).flatMap(([path, item]) =>
  METHODS.filter((method) => item[method]).map((method) => {
    const operation = item[method] as Node;
    const responses = operation.responses as Node;
    const status = Object.keys(responses).find((code) => /^2\d\d$/.test(code));
    if (!status) throw new Error(`${method.toUpperCase()} ${path} declares no 2xx response`);
    return { operationId: operation.operationId as string, method, path, status, response: deref(responses[status]) };
  }),
);

/** What the spec says a response answers: its first media type and that media type's first example. */
function specExample(response: Node): { contentType: string | undefined; example: unknown } {
  const [contentType, media] = Object.entries((response.content ?? {}) as Record<string, Node>)[0] ?? [];
  if (!media) return { contentType: undefined, example: undefined };
  if ('example' in media) return { contentType, example: media.example };
  return { contentType, example: deref(Object.values(media.examples as Node)[0]).value };
}

/** A request for the operation on the default base URL, with `1` for every path parameter. */
function requestFor({ method, path }: { method: string; path: string }): Request {
  const url = `${DEFAULT_BASE_URL}${path.replace(/\{[^}]+\}/g, '1')}`;
  return method === 'get' || method === 'head'
    ? new Request(url, { method: method.toUpperCase() })
    : new Request(url, { method: method.toUpperCase(), headers: { 'Content-Type': 'application/json' }, body: '{}' });
}

describe('the handlers cover the contract', () => {
  it('has one handler per operation of spec/openapi.yaml, on the default base URL', () => {
    const handled = handlers.map((handler) => `${String(handler.info.method).toUpperCase()} ${String(handler.info.path)}`).sort();
    const declared = operations.map(({ method, path }) => `${method.toUpperCase()} ${DEFAULT_BASE_URL}${path.replace(/\{([^}]+)\}/g, ':$1')}`).sort();
    expect(operations.length).toBeGreaterThan(50);
    expect(handled).toEqual(declared);
  });

  it('knows every operationId of the spec, at that operation\'s method and path', () => {
    for (const operation of operations) {
      const handler = override(operation.operationId as never, Number(operation.status) as never);
      expect(`${String(handler.info.method)} ${String(handler.info.path)}`, operation.operationId).toBe(
        `${operation.method.toUpperCase()} ${mockUrl(operation.path as never)}`,
      );
    }
  });

  it.each(operations)('$method $path answers its first 2xx example ($operationId)', async (operation) => {
    const response = await getResponse(handlers, requestFor(operation));
    if (!response) throw new Error(`No handler answered ${operation.method.toUpperCase()} ${operation.path}`);
    expect(response.status).toBe(Number(operation.status));

    const { contentType, example } = specExample(operation.response);
    expect(response.headers.get('content-type')).toBe(contentType ?? null);
    const text = await response.text();
    if (contentType && /json/.test(contentType)) expect(JSON.parse(text)).toStrictEqual(example);
    else expect(text).toBe(example === undefined ? '' : String(example));

    for (const [name, header] of Object.entries((operation.response.headers ?? {}) as Node)) {
      const value = deref(header).example;
      expect(response.headers.get(name), `${name} of ${operation.operationId}`).toBe(typeof value === 'string' ? value : JSON.stringify(value));
    }
  });

  it('sends a literal path to its own operation, not to a parameter path declared before it', async () => {
    // GET /api/usuario/{user_id}/ comes first in the spec and its pattern matches this path too.
    const response = await getResponse(handlers, new Request(`${DEFAULT_BASE_URL}/api/usuario/get_user_social_logins/`));
    expect(await response?.json()).toStrictEqual(specExample(operationById('listUserSocialLogins').response).example);
    // Even behind an override of the parameter path, placed in front as server.use does.
    const overridden = await getResponse([override('getUser', 404), ...handlers], new Request(`${DEFAULT_BASE_URL}/api/usuario/get_user_social_logins/`));
    expect(overridden?.status).toBe(200);
    const user = await getResponse([override('getUser', 404), ...handlers], new Request(`${DEFAULT_BASE_URL}/api/usuario/42/`));
    expect(user?.status).toBe(404);
    // A `once` override is not used up by a request it lets through.
    const once = [override('getUser', 404, { once: true }), ...handlers];
    expect((await getResponse(once, new Request(`${DEFAULT_BASE_URL}/api/usuario/get_user_social_logins/`)))?.status).toBe(200);
    expect((await getResponse(once, new Request(`${DEFAULT_BASE_URL}/api/usuario/42/`)))?.status).toBe(404);
    expect((await getResponse(once, new Request(`${DEFAULT_BASE_URL}/api/usuario/42/`)))?.status).toBe(200);
  });
});

function operationById(operationId: string): SpecOperation {
  const operation = operations.find((candidate) => candidate.operationId === operationId);
  if (!operation) throw new Error(`No operation ${operationId} in the spec`);
  return operation;
}

describe('through the SDK on msw/node', () => {
  const server = setupServer(...handlers);
  let api: PalanqueClient;

  beforeAll(() => {
    // Made before listen on purpose: the client looks the global fetch up per call, so msw still sees it.
    api = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    server.listen({ onUnhandledRequest: 'error' });
  });
  afterEach(() => server.resetHandlers());
  afterAll(() => server.close());

  it('GET /api/municipios/ answers the spec\'s example page', async () => {
    const { data, response } = await api.GET('/api/municipios/', { params: { query: { codigo_uf: 35 } } });
    expect(response.status).toBe(200);
    expect(data).toStrictEqual(responseExample('/api/municipios/', 'get', '200', 'firstPage'));
    expect(response.headers.get('ETag')).toBe('"9c1e5b2a7f3d4e60"');
  });

  it('answers a POST with its 200 example (login)', async () => {
    const { data, response } = await api.POST('/api/auth/login', { body: { username: 'ana.souza', password: 'x'.repeat(12) } });
    expect(response.status).toBe(200);
    const { example } = specExample(operationById('login').response);
    expect(data).toStrictEqual(example);
  });

  it('overrides a status with the spec\'s example for it, and PalanqueApiError carries the error model', async () => {
    server.use(override('listMunicipalities', 503));
    const error = await api.GET('/api/municipios/').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PalanqueApiError);
    const expected = responseExample('/api/municipios/', 'get', '503', 'referenceDataUnavailable') as Node;
    expect(error).toMatchObject({ status: 503, code: 'reference_data_unavailable', requestId: expected.request_id, body: expected });
  });

  it('overrides with a body and headers of the test\'s own', async () => {
    server.use(override('listMunicipalities', 200, { body: { links: { next: null, previous: null }, count: 0, total_pages: 1, results: [] }, headers: { ETag: '"empty"' } }));
    const { data, response } = await api.GET('/api/municipios/');
    expect(data).toEqual({ links: { next: null, previous: null }, count: 0, total_pages: 1, results: [] });
    expect(response.headers.get('ETag')).toBe('"empty"');
    expect(response.headers.get('Cache-Control')).toBe('public, max-age=60');
  });

  it('answers an override once when asked, then the handlers behind it answer', async () => {
    server.use(override('listMunicipalities', 503, { once: true }));
    await expect(api.GET('/api/municipios/')).rejects.toMatchObject({ status: 503 });
    const { data } = await api.GET('/api/municipios/');
    expect(data?.count).toBe(5570);
  });

  it("lets the SDK's own retry get past a 503 answered once", async () => {
    server.use(override('listMunicipalities', 503, { once: true, headers: { 'Retry-After': '0' } }));
    const retrying = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: { baseDelayMs: 5 } });
    const { data } = await retrying.GET('/api/municipios/');
    expect(data?.count).toBe(5570);
  });

  it('answers the entity with its version, and keeps the edit-conflict rule: an If-Match of another version is 409 edit_conflict', async () => {
    const { data, response } = await api.GET('/api/entidade/data/', { params: { query: { id: '12' } } });
    const etag = response.headers.get('ETag');
    expect(etag).toBe('"4"');
    expect(data?.data).toMatchObject({ id: 12, tp: 'candidato', updated_by: { id: 2, display_name: 'Carlos Pereira' } });

    const current = await api.POST('/api/entidade/add/', { body: { id: 12, nome: 'Maria' }, params: { header: { 'If-Match': etag! } } });
    expect(current.response.status).toBe(200);
    expect(current.response.headers.get('ETag')).toBe('"4"');
    const anyVersion = await api.POST('/api/entidade/add/', { body: { id: 12, nome: 'Maria' }, params: { header: { 'If-Match': '*' } } });
    expect(anyVersion.response.status).toBe(200);

    const stale = await api.POST('/api/entidade/add/', { body: { id: 12, nome: 'Maria' }, params: { header: { 'If-Match': '"3"' } } }).catch((caught: unknown) => caught);
    expect(stale).toBeInstanceOf(PalanqueApiError);
    expect(stale).toMatchObject({ status: 409, code: 'edit_conflict', body: responseExample('/api/entidade/add/', 'post', '409', 'editConflict') });
  });

  it('takes hand-written msw handlers on typed paths (mockUrl)', async () => {
    server.use(http.get(mockUrl('/api/usuario/{user_id}/'), ({ params }) => HttpResponse.json({ seen: params.user_id })));
    const { data } = await api.GET('/api/usuario/{user_id}/', { params: { path: { user_id: 77 } } });
    expect(data).toEqual({ seen: '77' });
  });

  it('is back to the examples after resetHandlers', async () => {
    expect(server.listHandlers()).toHaveLength(handlers.length);
    const { data } = await api.GET('/api/municipios/');
    expect(data?.results).toHaveLength(30);
  });

  it('answers on another base URL with createHandlers({ baseUrl })', async () => {
    server.use(...createHandlers({ baseUrl: 'https://api.palanque.test/v1/' }));
    const deployed = createApiClient({ baseUrl: 'https://api.palanque.test/v1', retry: false });
    const { data } = await deployed.GET('/api/municipios/');
    expect(data).toStrictEqual(responseExample('/api/municipios/', 'get', '200', 'firstPage'));
    // A path outside the base's /v1 is not the API's.
    expect(await getResponse(createHandlers({ baseUrl: 'https://api.palanque.test/v1' }), new Request('https://api.palanque.test/api/municipios/'))).toBeUndefined();
  });
});

describe('override and createHandlers refuse what the contract does not have', () => {
  it('throws on an undeclared status or operation, and on a relative base URL', () => {
    // @ts-expect-error 418 is not a status of listMunicipalities
    expect(() => override('listMunicipalities', 418)).toThrow(/declares no 418/);
    // @ts-expect-error not an operationId
    expect(() => override('listTeapots', 200)).toThrow(/no operation "listTeapots"/);
    expect(() => createHandlers({ baseUrl: '/api' })).toThrow(/must be absolute/);
  });

  it('types the override body by operation and status', () => {
    // @ts-expect-error the municipality page has no `items`
    override('listMunicipalities', 200, { body: { items: [] } });
    // @ts-expect-error 304 has no body
    override('listMunicipalities', 304, { body: {} });
    override('listMunicipalities', 503, { body: { success: false, error: { code: 'service_unavailable', message: 'down', details: [] }, request_id: 'r-1' } });
  });
});

describe('sdk/openapi.json', () => {
  const committedPath = fileURLToPath(new URL('../sdk/openapi.json', import.meta.url));
  const bundler = fileURLToPath(new URL('../node_modules/.bin/redocly', import.meta.url));

  it('is what `npm run generate` writes from spec/openapi.yaml', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'palanque-openapi-json-'));
    try {
      const fresh = join(dir, 'openapi.json');
      await promisify(execFile)(bundler, ['bundle', specPath, '--ext', 'json', '--output', fresh]);
      const [expected, actual] = await Promise.all([readFile(fresh, 'utf8'), readFile(committedPath, 'utf8')]);
      expect(actual, 'sdk/openapi.json is stale: run `npm run generate` and commit it').toBe(expected);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('is the spec itself, in the spec\'s order where the handlers pick "the first" (paths, responses, examples)', async () => {
    const committed = JSON.parse(await readFile(committedPath, 'utf8')) as Node;
    expect(committed).toStrictEqual(spec);
    expect(JSON.stringify(committed.paths)).toBe(JSON.stringify(spec.paths));
    expect(JSON.stringify(committed.components)).toBe(JSON.stringify(spec.components));
  });
});
