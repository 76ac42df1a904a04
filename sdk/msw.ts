/**
 * Mock Service Worker handlers for every operation of the contract, answering the spec's examples, for
 * front-end tests in Node (`setupServer` from `msw/node`) and in the browser (`setupWorker` from
 * `msw/browser`).
 *
 *   import { setupServer } from 'msw/node';
 *   import { DEFAULT_BASE_URL, handlers, mockUrl, override } from '<sdk>/msw.js';
 *   const server = setupServer(...handlers);          // answers on http://palanque.test
 *   beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
 *   afterEach(() => server.resetHandlers());          // drops what a test added with server.use
 *   afterAll(() => server.close());
 *   // after listen: msw/node replaces globalThis.fetch, and a client keeps the fetch it was created with
 *   const api = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
 *
 *   server.use(override('listMunicipalities', 503));                       // the spec's 503 example
 *   server.use(override('login', 401, { example: 'invalidCredentials' })); // another named example
 *   server.use(http.get(mockUrl('/api/usuario/{user_id}/'), ({ params }) => HttpResponse.json(...)));
 *
 * What each operation answers by default: its first 2xx response in the spec (201 for a create, as the
 * server answers: see CREATE_OPERATIONS), with that response's first example as the body (`@mswjs/source`'s
 * `fromOpenApi` picks the example and the content type, honouring `Accept`) and each declared header set
 * to the header's example. The spec has an example on every response (a lint rule), so answers are the
 * same on every run: no values generated from schemas. Page links in the examples, written for the local
 * server, point at the handlers' base URL instead.
 *
 * Before that, a request is judged as the server judges it (msw-validation.ts): no key on an ApiKeyAuth
 * operation is 401, a bad parameter 400, a body that breaks its schema 422, in the error model.
 * `createHandlers({ validate: false })` answers the examples to anything.
 *
 * For a mock that keeps what a test writes (a create shows in the list), see createStatefulHandlers
 * (mock/stateful.ts, one module per domain under mock/).
 *
 * `retry: false` in Node: before retrying a 429 or 503 the SDK awaits `response.body.cancel()`, which never
 * settles for a response msw/node mocked (mswjs/interceptors#799, in msw 2.15); in the browser it works.
 *
 * The document is sdk/openapi.json, generated from spec/openapi.yaml by `npm run generate` (committed, and
 * checked for freshness by test/msw.test.ts), imported as a JSON module (`with { type: 'json' }`, which
 * esbuild, Vite, webpack 5 and Node read), so nothing is read from disk at run time and the module works
 * unchanged in a browser bundle.
 */
import { fromOpenApi } from '@mswjs/source/open-api';
import { http, type DefaultBodyType, type HttpHandler, type StrictRequest } from 'msw';
import contract from './openapi.json' with { type: 'json' };
import { DEPRECATION_HEADER_COMPONENTS, withDeprecation } from './msw-deprecation.js';
import { refuseInvalidRequest, resolve } from './msw-validation.js';
import type { operations, paths } from './schema.js';

import { statefulHandlers, type StatefulHandlers, type StatefulOptions } from './mock/stateful.js';

export { DEFAULT_MOCK_PASSWORD, type StatefulHandlers, type StatefulOptions, type StatefulSeed } from './mock/stateful.js';

/** Where the handlers answer unless told otherwise: a name no real host has (`.test` is reserved). */
export const DEFAULT_BASE_URL = 'http://palanque.test';

export type OperationId = keyof operations;
/** The statuses the contract declares for an operation (`default` excluded). */
export type StatusOf<Op extends OperationId> = Extract<keyof operations[Op]['responses'], number>;
/** The body the contract declares for that status (never for a status without a body, such as 304). */
export type BodyOf<Op extends OperationId, Status extends StatusOf<Op>> = operations[Op]['responses'][Status] extends { content: infer Content }
  ? Content[keyof Content]
  : never;

export interface MockOptions {
  /** Absolute base URL the handlers answer on, as given to `createApiClient` (default DEFAULT_BASE_URL). */
  baseUrl?: string;
  /** Judge requests as the server does (401 without a key, 400 bad parameter, 422 bad body) before answering (default true). */
  validate?: boolean;
}

export interface OverrideOptions<Op extends OperationId, Status extends StatusOf<Op>> extends MockOptions {
  /** The body to answer instead of the spec's first example for this status. */
  body?: BodyOf<Op, Status>;
  /** Another of the spec's named examples for this status (such as `invalidCredentials` for login's 401). */
  example?: string;
  /** Headers to add or replace (e.g. `{ 'Retry-After': '0' }` so the SDK retries a 503 at once). */
  headers?: Record<string, string>;
  /** Answer only the first request of this operation, then let the handlers behind it answer. */
  once?: boolean;
}

/**
 * The operations the server answers 201 when they create (the handlers of src/); the spec lists 200 first on
 * every POST (the seed's order), so "the first 2xx" would be 200. `addEntity` with an `id` is an update: 200.
 */
export const CREATE_OPERATIONS: ReadonlySet<OperationId> = new Set<OperationId>([
  'addEntity',
  'addMonitorAlertRule',
  'addOperator',
  'addPushSubscription',
  'addWebhookEndpoint',
  'addResearchBookmark',
  'connectMessengerPage',
  'createContact',
  'createElectionCalendarLine',
  'createEntityFromCandidacy',
  'createMunicipality',
  'createScenarioRequest',
  'createSmsCredential',
  'createSocialMonitor',
  'createUser',
  'optOutConversation',
  'optOutSmsNumber',
  'receiveSocialnetRemoval',
  'replyToConversation',
  'requestNewsSource',
  'sendSmsCampaign',
  'sendTestWebhook',
  'startSocialLogin',
  'syncElectionsPanel',
]);

/** One handler per operation of the contract, answering its first 2xx example (201 for a create) on `baseUrl`. */
export function createHandlers({ baseUrl = DEFAULT_BASE_URL, validate = true }: MockOptions = {}): HttpHandler[] {
  const base = normalizeBaseUrl(baseUrl);
  const basePath = new URL(base).pathname.replace(/\/$/, '');
  return OPERATIONS.map((operation) =>
    handlerFor(operation, base, async (request, requestId) => {
      const path = new URL(request.url).pathname.slice(basePath.length) || '/';
      const refused = validate ? await refuseInvalidRequest(operation, request, path) : undefined;
      if (refused) return withDeprecation(operation.operationId, request, refused, base, false);
      const named = exampleChosenBy(operation, request);
      const answer = named
        ? ownAnswer(operation, named.status, namedExample(operation, named.status, named.example))
        : (editConflictAnswer(operation, request) ?? (await specAnswer(operation, base, await successStatus(operation, request), request, requestId)));
      return withDeprecation(operation.operationId, request, answer, base, true);
    }),
  );
}

/**
 * Where the request, not the spec's order, says which example the server would answer: generateNewPassword
 * with a `token` completes a reset (`passwordSent`), with or without `email`, as the seed allows.
 */
function exampleChosenBy(operation: Operation, request: Request): { status: string; example: string } | undefined {
  if (operation.operationId === 'generateNewPassword' && new URL(request.url).searchParams.has('token')) return { status: '200', example: 'passwordSent' };
  return undefined;
}

/** The 2xx the server answers: 201 for a create (but 200 for addEntity's update, a body with `id`), else the first. */
async function successStatus(operation: Operation, request: Request): Promise<string | undefined> {
  if (!CREATE_OPERATIONS.has(operation.operationId as OperationId) || !operation.statuses.includes('201')) return operation.defaultStatus;
  if (operation.operationId === 'addEntity') {
    const body = (await request.clone().json().catch(() => ({}))) as { id?: unknown };
    if (body && typeof body === 'object' && body.id !== undefined) return '200';
  }
  return '201';
}

/**
 * The stateful mock (mock/stateful.ts): handlers over an in-memory store seeded from the demo data, where a
 * create shows in the list, followed by the example handlers for the operations it does not keep.
 * `reset()` goes back to the seed.
 */
export function createStatefulHandlers(options: StatefulOptions = {}): StatefulHandlers {
  const baseUrl = normalizeBaseUrl(options.baseUrl ?? DEFAULT_BASE_URL);
  const mock = statefulHandlers({ ...options, baseUrl });
  return { ...mock, handlers: [...mock.handlers, ...createHandlers({ baseUrl })] };
}

/**
 * A handler for one operation answering another status of the contract, for `server.use(...)` (or
 * `worker.use(...)`) in one test: the spec's first example for that status, or `body`.
 *
 *   server.use(override('listMunicipalities', 503));
 *   server.use(override('login', 401, { example: 'invalidCredentials' }));
 *   server.use(override('listMunicipalities', 200, { body: { ...page, results: [] } }));
 */
export function override<Op extends OperationId, Status extends StatusOf<Op>>(operationId: Op, status: Status, options: OverrideOptions<Op, Status> = {}): HttpHandler {
  const operation = OPERATIONS_BY_ID.get(operationId);
  if (!operation) throw new TypeError(`The contract has no operation "${operationId}"`);
  const code = String(status);
  if (!operation.statuses.includes(code)) throw new TypeError(`${operationId} declares no ${code} response in the contract`);
  const base = normalizeBaseUrl(options.baseUrl ?? DEFAULT_BASE_URL);
  const extra = new Headers(options.headers);
  const body = options.example === undefined ? options.body : namedExample(operation, code, options.example);
  // `once` is counted here rather than with msw's own option, which would also count a request the
  // handler lets through to a more literal path's operation (see handlerFor).
  let used = false;
  return handlerFor(operation, base, async (request, requestId) => {
    if (options.once && used) return undefined;
    used = true;
    const answer = body === undefined ? await specAnswer(operation, base, code, request, requestId) : ownAnswer(operation, code, body);
    const headers = new Headers(answer.headers);
    extra.forEach((value, name) => headers.set(name, value));
    return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers });
  });
}

/**
 * The URL pattern msw matches for a path of the contract, for hand-written handlers:
 * `http.get(mockUrl('/api/usuario/{user_id}/'), ({ params }) => ...)` (path parameters become `:name`).
 */
export function mockUrl<Path extends keyof paths>(path: Path, baseUrl: string = DEFAULT_BASE_URL): string {
  return new URL(`${normalizeBaseUrl(baseUrl)}${toMswPath(path)}`).href;
}

// --- the contract, as the handlers read it ----------------------------------------------------------

type Method = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch';
const METHODS: readonly Method[] = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];
type Node = Record<string, unknown>;

interface Operation {
  operationId: string;
  method: Method;
  /** The path as the spec writes it, `{name}` parameters included. */
  path: string;
  /** Matches a request path (below the base URL) that this path template accepts. */
  pattern: RegExp;
  /** 1 per literal segment, 0 per parameter: a path with literals where another has parameters wins. */
  specificity: number[];
  /** The declared statuses, in the spec's order. */
  statuses: string[];
  /** The first 2xx status, answered by default. */
  defaultStatus: string | undefined;
  responses: Node;
  /** Whether the operation takes `If-Match` (an update refused when it names an old version). */
  takesIfMatch: boolean;
  /** The operation object of the contract. */
  node: Node;
}

const DOCUMENT = contract as unknown as Node;

const OPERATIONS: Operation[] = Object.entries(DOCUMENT.paths as Record<string, Node>).flatMap(([path, item]) =>
  METHODS.filter((method) => item[method]).map((method): Operation => {
    const operation = item[method] as Node;
    const responses = (operation.responses ?? {}) as Node;
    const statuses = Object.keys(responses).filter((status) => /^\d{3}$/.test(status));
    return {
      operationId: String(operation.operationId ?? `${method} ${path}`),
      method,
      path,
      pattern: new RegExp(`^${path.split(/\{[^}]+\}/).map(escapeRegExp).join('[^/]+')}$`),
      specificity: path.split('/').map((segment) => (/^\{.+\}$/.test(segment) ? 0 : 1)),
      statuses,
      defaultStatus: statuses.find((status) => status.startsWith('2')),
      responses,
      node: operation,
      takesIfMatch: ((operation.parameters ?? []) as unknown[]).some((parameter) => resolve(parameter).in === 'header' && String(resolve(parameter).name).toLowerCase() === 'if-match'),
    };
  }),
);

const OPERATIONS_BY_ID = new Map(OPERATIONS.map((operation) => [operation.operationId, operation]));

/**
 * A handler for the operation's URL that lets a request through (to the handlers behind it) when the
 * request belongs to another operation: msw would otherwise send `GET /api/usuario/get_user_social_logins/`
 * to the handler of `GET /api/usuario/{user_id}/`, whichever comes first.
 */
function handlerFor(operation: Operation, base: string, answer: (request: Request, requestId: string) => Promise<Response | undefined>): HttpHandler {
  const basePath = new URL(base).pathname.replace(/\/$/, '');
  return http[operation.method](mswUrl(base, operation.path), async ({ request, requestId }) => {
    const path = new URL(request.url).pathname.slice(basePath.length) || '/';
    if (ownerOf(operation.method, path) !== operation) return undefined;
    return answer(request, requestId);
  });
}

/** The operation a request path belongs to: of those whose template matches, the most literal one. */
function ownerOf(method: Method, path: string): Operation | undefined {
  let owner: Operation | undefined;
  for (const operation of OPERATIONS) {
    if (operation.method !== method || !operation.pattern.test(path)) continue;
    if (!owner || compareSpecificity(operation.specificity, owner.specificity) > 0) owner = operation;
  }
  return owner;
}

function compareSpecificity(a: number[], b: number[]): number {
  for (let index = 0; index < Math.max(a.length, b.length); index += 1) {
    const difference = (a[index] ?? 0) - (b[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

// --- answers ----------------------------------------------------------------------------------------

/** `fromOpenApi`'s handlers for one base URL, by method and URL pattern, built on first use. */
const engines = new Map<string, Promise<Map<string, HttpHandler>>>();

function engineFor(base: string): Promise<Map<string, HttpHandler>> {
  let engine = engines.get(base);
  if (!engine) {
    engine = buildEngine(base);
    engines.set(base, engine);
  }
  return engine;
}

async function buildEngine(base: string): Promise<Map<string, HttpHandler>> {
  // fromOpenApi dereferences the document in place, so it gets its own copy; `servers` says where to answer.
  const document = { ...structuredClone(DOCUMENT), servers: [{ url: base }] };
  const byUrl = new Map<string, HttpHandler>();
  // It makes one (identical) handler per declared status of an operation: keep the first.
  for (const handler of await fromOpenApi(document as Parameters<typeof fromOpenApi>[0])) {
    const key = `${handler.info.method} ${String(handler.info.path)}`.toLowerCase();
    if (!byUrl.has(key)) byUrl.set(key, handler);
  }
  return byUrl;
}

/**
 * The spec's answer for a status, from fromOpenApi's handler: it takes the status from the `response`
 * query parameter (and a named example from `example`, which we never pass on), so the request it sees
 * has exactly ours. Headers are replaced by the examples of the headers the response declares, because
 * fromOpenApi fills headers with random words generated from their schemas.
 */
async function specAnswer(operation: Operation, base: string, status: string | undefined, request: Request, requestId: string): Promise<Response> {
  const engine = await engineFor(base);
  const handler = engine.get(`${operation.method} ${mswUrl(base, operation.path)}`.toLowerCase());
  if (!handler) throw new Error(`No handler from fromOpenApi for ${operation.method.toUpperCase()} ${operation.path}`);
  const url = new URL(request.url);
  url.searchParams.delete('example');
  url.searchParams.delete('response');
  if (status) url.searchParams.set('response', status);
  const inner = new Request(url, { method: request.method, headers: request.headers }) as StrictRequest<DefaultBodyType>;
  const answer = (await handler.run({ request: inner, requestId }))?.response;
  if (!answer) throw new Error(`fromOpenApi gave no answer for ${operation.method.toUpperCase()} ${operation.path}`);
  const headers = exampleHeaders(operation, String(answer.status));
  const contentType = answer.headers.get('content-type');
  if (contentType) headers.set('content-type', contentType);
  const body = contentType && /[/+]json\b/.test(contentType) ? onBaseUrl(await answer.text(), base) : answer.body;
  return new Response(body, { status: answer.status, statusText: answer.statusText, headers });
}

/**
 * The examples' page links name the local server (the spec's first server, `http://localhost:8000`); on
 * the handlers they name the handlers' own base URL, so a front end following `links.next` stays on the mock.
 */
function onBaseUrl(json: string, base: string): string {
  const exampleServer = String(((DOCUMENT.servers ?? []) as Node[])[0]?.url ?? '').replace(/\/+$/, '');
  if (!exampleServer) return json;
  return json.split(JSON.stringify(exampleServer).slice(1, -1) + '/').join(JSON.stringify(base).slice(1, -1) + '/');
}

/**
 * The server's edit-conflict rule, as far as a mock without state can keep it: the example record's
 * version is its `ETag` example, so an `If-Match` naming another version is answered like the server
 * answers a stale one (409 with the `editConflict` example). `*`, or no `If-Match`, goes through.
 */
function editConflictAnswer(operation: Operation, request: Request): Response | undefined {
  const ifMatch = request.headers.get('if-match');
  if (!operation.takesIfMatch || ifMatch === null || ifMatch.trim() === '*' || !operation.defaultStatus) return undefined;
  const current = exampleHeaders(operation, operation.defaultStatus).get('etag');
  const named = ifMatch.split(',').map((tag) => tag.trim());
  if (current === null || named.includes(current)) return undefined;
  return ownAnswer(operation, '409', namedExample(operation, '409', 'editConflict'));
}

/** A test's own body for a status, with the status's example headers and its declared content type. */
function ownAnswer(operation: Operation, status: string, body: unknown): Response {
  const headers = exampleHeaders(operation, status);
  const content = (resolve(operation.responses[status]).content ?? {}) as Node;
  const contentType = Object.keys(content)[0] ?? 'application/json';
  headers.set('content-type', contentType);
  const json = /[/+]json\b/.test(contentType);
  return new Response(json || typeof body !== 'string' ? JSON.stringify(body) : body, { status: Number(status), headers });
}

/** The value of a named example of a response (in its first media type). */
function namedExample(operation: Operation, status: string, name: string): unknown {
  const content = (resolve(operation.responses[status]).content ?? {}) as Node;
  const examples = resolve(Object.values(content)[0]).examples as Node | undefined;
  if (!examples || !(name in examples)) {
    throw new TypeError(`${operation.operationId}'s ${status} response has no example "${name}" (it has: ${Object.keys(examples ?? {}).join(', ') || 'none'})`);
  }
  return resolve(examples[name]).value;
}

/**
 * The declared headers of a response, each set to its example (headers without one are left out), but
 * the deprecation headers, which depend on the request (msw-deprecation.ts adds them).
 */
function exampleHeaders(operation: Operation, status: string): Headers {
  const headers = new Headers();
  const declared = (resolve(operation.responses[status]).headers ?? {}) as Node;
  for (const [name, header] of Object.entries(declared)) {
    if (DEPRECATION_HEADER_COMPONENTS.has(String((header as Node).$ref))) continue;
    const value = exampleOf(resolve(header));
    if (value !== undefined) headers.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return headers;
}

function exampleOf(node: Node): unknown {
  if ('example' in node) return node.example;
  const first = Object.values((node.examples ?? {}) as Node)[0];
  if (first !== undefined) return resolve(first).value;
  const schema = resolve(node.schema);
  if ('example' in schema) return schema.example;
  return Array.isArray(schema.examples) ? schema.examples[0] : undefined;
}

// --- URLs -------------------------------------------------------------------------------------------

function normalizeBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(`The mock's base URL must be absolute (such as ${DEFAULT_BASE_URL}), not "${baseUrl}"`);
  }
  if (url.search || url.hash) throw new TypeError(`The mock's base URL cannot have a query or a fragment: "${baseUrl}"`);
  return url.href.replace(/\/+$/, '');
}

/** The URL msw matches for a spec path: the one fromOpenApi builds (`{name}` becomes `:name`). */
function mswUrl(base: string, path: string): string {
  return new URL(`${base}${toMswPath(path)}`).href;
}

function toMswPath(path: string): string {
  return path.replace(/\{(.+?)\}/g, ':$1');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// Last, because it needs the constants above.
/** The handlers on DEFAULT_BASE_URL, for `setupServer(...handlers)` and `setupWorker(...handlers)`. */
export const handlers: HttpHandler[] = createHandlers();
