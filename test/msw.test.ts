/**
 * sdk/msw.ts: msw handlers for every operation of the contract, answering the spec's examples. These tests
 * hold the handlers to the contract (every operation has one, each answers its first 2xx example with
 * that response's header examples), and check the per-test override and the base URL option. The
 * document the handlers are built from, sdk/openapi.json, is held current by test/contract-bundle.test.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { getResponse, http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, municipalityPages, PalanqueApiError, type PalanqueClient } from '../sdk/index.js';
import { CREATE_OPERATIONS, createHandlers, DEFAULT_BASE_URL, handlers, mockUrl, override, type OperationId } from '../sdk/msw.js';
import { createUser } from './helpers/accounts.js';
import { startTestApp } from './helpers/app.js';
import { loadSpec, resolvePointer, responseExample } from './helpers/spec.js';

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
  /** The status the handlers answer: 201 for a create, else the first 2xx in the spec's order. */
  status: string;
  response: Node;
}

const operations: SpecOperation[] = Object.entries(spec.paths as Record<string, Node>).flatMap(([path, item]) =>
  METHODS.filter((method) => item[method]).map((method) => {
    const operation = item[method] as Node;
    const responses = operation.responses as Node;
    const first = Object.keys(responses).find((code) => /^2\d\d$/.test(code));
    if (!first) throw new Error(`${method.toUpperCase()} ${path} declares no 2xx response`);
    const status = CREATE_OPERATIONS.has(operation.operationId as OperationId) ? '201' : first;
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

/** An example as the handlers answer it: its page links (written for the local server) on the mock's base URL. */
function onMock(example: unknown, base = DEFAULT_BASE_URL): unknown {
  return JSON.parse(JSON.stringify(example).split('http://localhost:8000/').join(`${base}/`));
}

/** A request for the operation on the default base URL, with `1` for every path parameter. */
function requestFor({ method, path }: { method: string; path: string }): Request {
  const url = `${DEFAULT_BASE_URL}${path.replace(/\{[^}]+\}/g, '1')}`;
  return method === 'get' || method === 'head'
    ? new Request(url, { method: method.toUpperCase() })
    : new Request(url, { method: method.toUpperCase(), headers: { 'Content-Type': 'application/json' }, body: '{}' });
}

describe('the handlers cover the contract', () => {
  it('has one handler per operation of the contract, on the default base URL', () => {
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

  // Without the request checks: these requests carry no key and an empty body (the checks have their own tests).
  const answering = createHandlers({ validate: false });
  it.each(operations)('$method $path answers its first 2xx example, 201 for a create ($operationId)', async (operation) => {
    const response = await getResponse(answering, requestFor(operation));
    if (!response) throw new Error(`No handler answered ${operation.method.toUpperCase()} ${operation.path}`);
    expect(response.status).toBe(Number(operation.status));

    const { contentType, example } = specExample(operation.response);
    expect(response.headers.get('content-type')).toBe(contentType ?? null);
    const text = await response.text();
    if (contentType && /json/.test(contentType)) expect(JSON.parse(text)).toStrictEqual(onMock(example));
    else expect(text).toBe(example === undefined ? '' : String(example));

    for (const [name, header] of Object.entries((operation.response.headers ?? {}) as Node)) {
      // The deprecation headers depend on the request (test/deprecation.test.ts); this one uses nothing deprecated.
      if (/^#\/components\/headers\/(Deprecation|DeprecationLink|Sunset)$/.test(String((header as Node).$ref))) {
        expect(response.headers.get(name), `${name} of ${operation.operationId}`).toBeNull();
        continue;
      }
      const value = deref(header).example;
      expect(response.headers.get(name), `${name} of ${operation.operationId}`).toBe(typeof value === 'string' ? value : JSON.stringify(value));
    }
  });

  it('sends a literal path to its own operation, not to a parameter path declared before it', async () => {
    // GET /api/usuario/{user_id}/ comes first in the spec and its pattern matches this path too.
    const response = await getResponse(handlers, authorized(`/api/usuario/get_user_social_logins/`));
    expect(await response?.json()).toStrictEqual(specExample(operationById('listUserSocialLogins').response).example);
    // Even behind an override of the parameter path, placed in front as server.use does.
    const overridden = await getResponse([override('getUser', 404), ...handlers], authorized(`/api/usuario/get_user_social_logins/`));
    expect(overridden?.status).toBe(200);
    const user = await getResponse([override('getUser', 404), ...handlers], authorized(`/api/usuario/42/`));
    expect(user?.status).toBe(404);
    // A `once` override is not used up by a request it lets through.
    const once = [override('getUser', 404, { once: true }), ...handlers];
    expect((await getResponse(once, authorized(`/api/usuario/get_user_social_logins/`)))?.status).toBe(200);
    expect((await getResponse(once, authorized(`/api/usuario/42/`)))?.status).toBe(404);
    expect((await getResponse(once, authorized(`/api/usuario/42/`)))?.status).toBe(200);
  });
});

/** A GET on the default base URL with a key (the handlers answer 401 to an ApiKeyAuth operation without one). */
function authorized(path: string): Request {
  return new Request(`${DEFAULT_BASE_URL}${path}`, { headers: { Authorization: 'Token any-key' } });
}

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
    api = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false, token: 'any-key' });
    server.listen({ onUnhandledRequest: 'error' });
  });
  afterEach(() => server.resetHandlers());
  afterAll(() => server.close());

  it('GET /api/municipios/ answers the spec\'s example page', async () => {
    const { data, response } = await api.GET('/api/municipios/', { params: { query: { codigo_uf: 35 } } });
    expect(response.status).toBe(200);
    expect(data).toStrictEqual(onMock(responseExample('/api/municipios/', 'get', '200', 'firstPage')));
    expect(data?.links.next).toBe(`${DEFAULT_BASE_URL}/api/municipios/?page=2`);
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
    expect(data).toStrictEqual(onMock(responseExample('/api/municipios/', 'get', '200', 'firstPage'), 'https://api.palanque.test/v1'));
    // A path outside the base's /v1 is not the API's.
    expect(await getResponse(createHandlers({ baseUrl: 'https://api.palanque.test/v1' }), new Request('https://api.palanque.test/api/municipios/'))).toBeUndefined();
  });
});

describe('creates answer 201, as the server does', () => {
  it('answers 201 to the creates the server answers 201, with the 201 example', async () => {
    const server = readServerCreates();
    expect([...CREATE_OPERATIONS].sort().join(' ')).toBe(server.join(' '));
    const response = await getResponse(handlers, jsonRequest('/api/research/add_research_bookmark/', { title: 'Pesquisa', url: 'https://www.exemplo.com.br/p' }));
    expect(response?.status).toBe(201);
    expect(await response?.json()).toStrictEqual(responseExample('/api/research/add_research_bookmark/', 'post', '201', 'saved'));
  });

  it("answers 200 to addEntity's update (a body with id), 201 to its create", async () => {
    expect((await getResponse(handlers, jsonRequest('/api/entidade/add/', { id: 12, nome: 'Maria' })))?.status).toBe(200);
    expect((await getResponse(handlers, jsonRequest('/api/entidade/add/', { nome: 'Maria' })))?.status).toBe(201);
  });
});

/** Operations whose server handler answers 201 somewhere (`sendEnvelope(res, 201`, `? 201 : 200`...). */
function readServerCreates(): string[] {
  // Every handlers file of every domain (entities has handlers.ts, team-handlers.ts, guardianship-handlers.ts).
  const sources = ['accounts', 'chat', 'chat/messenger', 'control', 'elections', 'entities', 'messaging', 'monitors', 'municipalities', 'news', 'notifications', 'oauth', 'research', 'socialnet', 'strategy', 'webhooks'].flatMap((domain) =>
    readdirSync(fileURLToPath(new URL(`../src/${domain}/`, import.meta.url)))
      .filter((file) => file.endsWith('handlers.ts'))
      .map((file) => `${domain}/${file}`),
  );
  const found = new Set<string>();
  for (const source of sources) {
    const text = readFileSync(fileURLToPath(new URL(`../src/${source}`, import.meta.url)), 'utf8');
    // Each handler is `async <operationId>(req, res) {` up to the next one.
    const parts = text.split(/\n\s+async (\w+)\(/);
    for (let index = 1; index < parts.length; index += 2) {
      const body = parts[index + 1]!.split(/\n {4}\},?\n/)[0]!;
      if (/\b201\b/.test(body) && operations.some((operation) => operation.operationId === parts[index])) found.add(parts[index]!);
    }
  }
  // createMunicipality's handler is written apart (a function of its own) in municipalities/handlers.ts.
  if (/created \? 201 : 200/.test(readFileSync(fileURLToPath(new URL('../src/municipalities/handlers.ts', import.meta.url)), 'utf8'))) found.add('createMunicipality');
  return [...found].sort();
}

function sortDetails(details: Array<{ field: string; rule: string }>) {
  return [...details].sort((a, b) => `${a.field} ${a.rule}`.localeCompare(`${b.field} ${b.rule}`));
}

function jsonRequest(path: string, body: unknown, headers: Record<string, string> = { Authorization: 'Token any-key' }): Request {
  return new Request(`${DEFAULT_BASE_URL}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

describe('the handlers judge requests as the server does', () => {
  it('answers 401 unauthorized with WWW-Authenticate to an ApiKeyAuth operation without a key', async () => {
    const response = await getResponse(handlers, new Request(`${DEFAULT_BASE_URL}/api/entidade/`));
    expect(response?.status).toBe(401);
    expect(response?.headers.get('WWW-Authenticate')).toBe('Token realm="palanque"');
    expect(await response?.json()).toMatchObject({ success: false, error: { code: 'unauthorized', details: [] }, request_id: expect.any(String) });
    const malformed = await getResponse(handlers, new Request(`${DEFAULT_BASE_URL}/api/entidade/`, { headers: { Authorization: 'Basic abc' } }));
    expect(await malformed?.json()).toMatchObject({ error: { code: 'unauthorized', message: 'The Authorization header must be "Token <key>" or "Bearer <key>".' } });
    // An operation open to anyone answers without one.
    expect((await getResponse(handlers, new Request(`${DEFAULT_BASE_URL}/api/municipios/`)))?.status).toBe(200);
  });

  it('answers 400 bad_request naming a query parameter the operation does not take (alone, as the server), or one that breaks its schema', async () => {
    const unknown = await getResponse(handlers, new Request(`${DEFAULT_BASE_URL}/api/municipios/?page=0&sort=nome`));
    expect(unknown?.status).toBe(400);
    const body = await unknown?.json();
    expect(body.error.code).toBe('bad_request');
    expect(body.error.details).toEqual([{ location: 'query', field: 'sort', rule: 'unknown_parameter', message: "Unknown query parameter 'sort'", value: 'nome' }]);
    const invalid = await getResponse(handlers, new Request(`${DEFAULT_BASE_URL}/api/municipios/?page=0`));
    expect((await invalid?.json()).error.details).toEqual([{ location: 'query', field: 'page', rule: 'minimum', message: 'must be >= 1', value: '0' }]);
  });

  it('answers 400 to a path parameter of the wrong type', async () => {
    const response = await getResponse(handlers, new Request(`${DEFAULT_BASE_URL}/api/usuario/abc/`, { headers: { Authorization: 'Token k' } }));
    expect(response?.status).toBe(400);
    expect((await response?.json()).error.details[0]).toMatchObject({ location: 'path', field: 'user_id', rule: 'type' });
  });

  it('answers 422 validation_failed naming each field of a body that breaks its schema, and 400 to a body that is not JSON', async () => {
    const response = await getResponse(handlers, jsonRequest('/api/auth/login', { username: 42 }, {}));
    expect(response?.status).toBe(422);
    const body = await response?.json();
    expect(body.error).toMatchObject({ code: 'validation_failed', message: 'The request body is invalid.' });
    expect(body.error.details).toEqual(
      expect.arrayContaining([
        { location: 'body', field: 'password', rule: 'required', message: "must have required property 'password'" },
        { location: 'body', field: 'username', rule: 'type', message: 'must be string', value: 42 },
      ]),
    );
    const malformed = await getResponse(handlers, new Request(`${DEFAULT_BASE_URL}/api/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"username":' }));
    expect(malformed?.status).toBe(400);
    expect((await malformed?.json()).error).toMatchObject({ code: 'bad_request', message: 'The request body is not valid JSON.' });
  });

  it('names the same details as the real server for the same bad bodies and parameters', async () => {
    const app = await startTestApp();
    try {
      const { headers } = await createUser(app);
      const cases: Array<[path: string, body: unknown]> = [
        ['/api/entidade/add/', { nm_urnaa: 'typo', nome: 'Maria' }],
        ['/api/entidade/add/', { nm_urna: 'Sem nome', referencia_social: { social_network: [{ nm_rede: 'instagram', notas: 'x' }] } }],
        ['/api/entidade/add/', { nome: 'Maria', marketshare: [{ percentual: 'muito' }] }],
        ['/api/operators/add_operator/', { entity_id: 0, email: 'not-an-e-mail', role: 'chefe' }],
        ['/api/auth/login', { username: 42 }],
      ];
      for (const [path, body] of cases) {
        const server = await fetch(`${app.baseUrl}${path}`, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
        const mock = await getResponse(handlers, jsonRequest(path, body, headers));
        const [serverBody, mockBody] = [await server.json(), await mock!.json()];
        expect([mock!.status, mockBody.error.code], `${path} ${JSON.stringify(body)}`).toEqual([server.status, serverBody.error.code]);
        expect(sortDetails(mockBody.error.details), `${path} ${JSON.stringify(body)}`).toEqual(sortDetails(serverBody.error.details));
      }
      for (const path of ['/api/municipios/?page=0&sort=nome', '/api/entidade/?tp=partidos', '/api/usuario/abc/']) {
        const server = await fetch(`${app.baseUrl}${path}`, { headers });
        const mock = await getResponse(handlers, new Request(`${DEFAULT_BASE_URL}${path}`, { headers }));
        const [serverBody, mockBody] = [await server.json(), await mock!.json()];
        expect([mock!.status, mockBody.error.code], path).toEqual([server.status, serverBody.error.code]);
        expect(sortDetails(mockBody.error.details), path).toEqual(sortDetails(serverBody.error.details));
      }
    } finally {
      await app.close();
    }
  });

  it('answers the examples to anything with createHandlers({ validate: false })', async () => {
    const open = createHandlers({ validate: false });
    expect((await getResponse(open, new Request(`${DEFAULT_BASE_URL}/api/entidade/`)))?.status).toBe(200);
    expect((await getResponse(open, jsonRequest('/api/auth/login', { username: 42 }, {})))?.status).toBe(200);
  });
});

describe("the seed's optional parameters, as the server takes them (issue 45)", () => {
  it('completes a reset with the token alone, and answers only_team=1 and 0; only_team=yes stays 400', async () => {
    const reset = await getResponse(handlers, new Request(`${DEFAULT_BASE_URL}/api/auth/generate_new_pass?token=mailed`));
    expect(reset?.status).toBe(200);
    expect((await reset?.json()).data).toEqual({ status: 'password_sent' });
    const started = await getResponse(handlers, new Request(`${DEFAULT_BASE_URL}/api/auth/generate_new_pass?email=ana%40exemplo.com.br`));
    expect((await started?.json()).data).toEqual({ status: 'reset_requested' });
    const key = { headers: { Authorization: 'Token k' } };
    for (const flag of ['1', '0', 'true', 'false']) {
      expect((await getResponse(handlers, new Request(`${DEFAULT_BASE_URL}/api/account/?only_team=${flag}`, key)))?.status, flag).toBe(200);
    }
    const bad = await getResponse(handlers, new Request(`${DEFAULT_BASE_URL}/api/account/?only_team=yes`, key));
    expect(bad?.status).toBe(400);
    expect((await bad?.json()).error.details).toEqual([expect.objectContaining({ location: 'query', field: 'only_team', value: 'yes' })]);
  });
});

describe('pagination ends against the handlers', () => {
  const server = setupServer(...handlers);
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
  afterAll(() => server.close());

  it("stops municipalityPages when links.next names a page already read (the mock answers the same example page)", async () => {
    const api = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    const pages = [];
    for await (const page of municipalityPages(api)) pages.push(page);
    // Page 1 (the example), then page 2 (the same example again, whose next is page 2 once more): stop.
    expect(pages).toHaveLength(2);
    expect(pages[0]!.links.next).toBe(`${DEFAULT_BASE_URL}/api/municipios/?page=2`);
  });

  it('follows relative next links too, and stops at next: null', async () => {
    const page = (next: string | null) => ({ links: { next, previous: null }, count: 2, total_pages: 2, results: [] });
    server.use(http.get(mockUrl('/api/municipios/'), ({ request }) => HttpResponse.json(new URL(request.url).searchParams.get('page') === '2' ? page(null) : page('?page=2'))));
    const api = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
    const pages = [];
    for await (const found of municipalityPages(api)) pages.push(found);
    expect(pages.map((found) => found.links.next)).toEqual(['?page=2', null]);
    server.resetHandlers();
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
