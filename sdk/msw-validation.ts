/**
 * The server's request checks, for the msw handlers (msw.ts, mock/): what a request must be
 * before the server runs an operation, judged from the same contract (sdk/openapi.json) with the same
 * answers, so a front end meets in its tests the errors it will meet in production.
 *
 * What holds, as on the server (src/http/validation.ts, src/http/auth.ts, src/http/errors.ts):
 * - an ApiKeyAuth operation without `Authorization` is 401 `unauthorized` with `WWW-Authenticate`, and
 *   one in another form than `Token <key>` or `Bearer <key>` too (which keys are live is the stateful
 *   mock's business: these handlers hold no keys);
 * - a query or path parameter missing, unknown or breaking its schema is 400 `bad_request`, one detail
 *   per parameter;
 * - a JSON body that does not parse is 400 `bad_request`; one that breaks its schema is 422
 *   `validation_failed`, one detail per offending field, with the value when it is no secret (a text cut to 200 characters).
 * Bodies in other media types (the providers' form callbacks, text) are not judged.
 *
 * ajv compiles each operation's schemas on first use; it runs unchanged in a browser bundle.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { echoedText, listedDetails, withoutBranchNoise } from '@palanque/rules/error-details';
import contract from './openapi.json' with { type: 'json' };
import type { components } from './schema.js';

export type ErrorDetail = components['schemas']['ErrorDetail'];
type Node = Record<string, unknown>;

const DOCUMENT = contract as unknown as Node;
const DOCUMENT_ID = 'palanque-contract';
const AUTH_CHALLENGE = 'Token realm="palanque"';
const CREDENTIALS = /^(?:Token|Bearer) +(\S+) *$/i;
/** Field names whose values are never echoed back (they may be credentials), as on the server. */
const SECRET_FIELD = /pass|token|secret|signed_request|authorization/i;

let ajv: Ajv2020 | undefined;
const compiled = new Map<string, ValidateFunction>();

/** The validator of a schema node of the contract (references resolve against the whole document). */
function validatorFor(key: string, schema: unknown): ValidateFunction {
  let validate = compiled.get(key);
  if (!validate) {
    if (!ajv) {
      // strict: false because the contract's schemas carry OpenAPI keywords ajv does not know (`example`).
      ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
      (addFormats as unknown as (instance: Ajv2020) => void)(ajv);
      ajv.addSchema(structuredClone(DOCUMENT), DOCUMENT_ID);
    }
    validate = ajv.compile(rebase(schema));
    compiled.set(key, validate);
  }
  return validate;
}

/** Rewrites a schema's local `$ref`s (`#/components/...`) to point into the document added to ajv. */
function rebase(schema: unknown): Node {
  return JSON.parse(JSON.stringify(schema ?? {}).replace(/"\$ref":"#\//g, `"$ref":"${DOCUMENT_ID}#/`)) as Node;
}

/** An error in the contract's error model, as the server writes it. */
export function errorResponse(status: number, code: string, message: string, details: ErrorDetail[] = [], headers: Record<string, string> = {}): Response {
  // As the server: at most MAX_DETAILS details, the message counting the rest.
  const listed = listedDetails(message, details);
  const body = { success: false, error: { code, message: listed.message, details: listed.details }, request_id: crypto.randomUUID() };
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}

export function unauthorizedResponse(message = 'Authentication is required: send your API key as "Authorization: Token <key>".'): Response {
  return errorResponse(401, 'unauthorized', message, [], { 'WWW-Authenticate': AUTH_CHALLENGE });
}

/** The key in an Authorization header, if it has one of the accepted forms. */
export function apiKeyIn(header: string | null): string | undefined {
  return header ? CREDENTIALS.exec(header)?.[1] : undefined;
}

export interface ValidatedOperation {
  operationId: string;
  /** The operation object of the contract. */
  node: Node;
  /** The path as the spec writes it, `{name}` parameters included. */
  path: string;
}

/**
 * The server's answer to a request that breaks the contract, or undefined when the request may go on.
 * `path` is the request's path below the base URL.
 */
export async function refuseInvalidRequest(operation: ValidatedOperation, request: Request, path: string): Promise<Response | undefined> {
  if (requiresKey(operation.node)) {
    const header = request.headers.get('authorization');
    if (header === null) return unauthorizedResponse();
    if (!apiKeyIn(header)) return unauthorizedResponse('The Authorization header must be "Token <key>" or "Bearer <key>".');
  }
  const parameterProblems = checkParameters(operation, new URL(request.url), path);
  if (parameterProblems.length > 0) {
    return errorResponse(400, 'bad_request', `The request is malformed: ${parameterProblems.map((detail) => `${detail.field}: ${detail.message}`).join('; ')}`, parameterProblems);
  }
  return checkBody(operation, request);
}

/** Whether the operation needs an API key (ApiKeyAuth, with no anonymous alternative). */
export function requiresKey(operation: Node): boolean {
  const security = (operation.security ?? DOCUMENT.security ?? []) as Node[];
  // `security: []` or an empty alternative (`- {}`) means the key is optional.
  return security.length > 0 && security.every((requirement) => Object.keys(requirement).length > 0);
}

// --- parameters ---------------------------------------------------------------------------------------

function checkParameters(operation: ValidatedOperation, url: URL, path: string): ErrorDetail[] {
  const parameters = ((operation.node.parameters ?? []) as unknown[]).map(resolve).filter((parameter) => parameter.in === 'query' || parameter.in === 'path');
  const problems: ErrorDetail[] = [];
  const declaredQuery = new Set(parameters.filter((parameter) => parameter.in === 'query').map((parameter) => String(parameter.name)));
  for (const name of new Set(url.searchParams.keys())) {
    if (declaredQuery.has(name)) continue;
    const detail: ErrorDetail = { location: 'query', field: name, rule: 'unknown_parameter', message: `Unknown query parameter '${name}'` };
    const value = url.searchParams.get(name)!;
    problems.push(SECRET_FIELD.test(name) ? detail : { ...detail, value: echoedText(value) });
  }
  // The server's validator reports unknown parameters alone, before it reads the declared ones.
  if (problems.length > 0) return problems;
  const pathValues = pathParameters(operation.path, path);
  for (const parameter of parameters) {
    const name = String(parameter.name);
    const location = parameter.in === 'path' ? 'path' : 'query';
    const raw = location === 'path' ? (pathValues[name] === undefined ? [] : [pathValues[name]!]) : url.searchParams.getAll(name);
    if (raw.length === 0) {
      if (parameter.required) problems.push({ location, field: name, rule: 'required', message: `must have required property '${name}'` });
      continue;
    }
    const schema = resolve(parameter.schema);
    const value = coerce(raw, schema);
    const validate = validatorFor(`${operation.operationId}:${location}:${name}`, schema);
    if (validate(value)) continue;
    const error = validate.errors![0]!;
    const detail: ErrorDetail = { location, field: name, rule: error.keyword, message: messageOf(error) };
    // As the server: a query value is echoed, a path segment is not (the path is in the request line).
    const echoed = location === 'query' && !SECRET_FIELD.test(name);
    problems.push(echoed ? { ...detail, value: echoedText(raw[0]!) } : detail);
  }
  return problems;
}

/** The values of a path's `{name}` segments, decoded. */
function pathParameters(template: string, path: string): Record<string, string> {
  const names = [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
  const pattern = new RegExp(`^${template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('([^/]+)')}$`);
  const values = pattern.exec(path)?.slice(1) ?? [];
  return Object.fromEntries(names.map((name, index) => [name, safeDecode(values[index] ?? '')]));
}

/** A parameter's text as its schema's type, as the server's validator coerces it (a text that is no number stays text, and fails). */
function coerce(raw: string[], schema: Node): unknown {
  const types = [schema.type].flat().filter((type) => type !== 'null');
  if (types.includes('array')) return raw.flatMap((value) => value.split(',')).map((value) => coerce([value], resolve(schema.items)));
  const [text] = raw as [string];
  if ((types.includes('integer') || types.includes('number')) && /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text.trim())) return Number(text);
  if (types.includes('boolean') && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

// --- body -----------------------------------------------------------------------------------------------

async function checkBody(operation: ValidatedOperation, request: Request): Promise<Response | undefined> {
  const content = (resolve(operation.node.requestBody).content ?? {}) as Node;
  const media = content['application/json'] as Node | undefined;
  const contentType = request.headers.get('content-type') ?? '';
  if (!media || (contentType !== '' && !/[/+]json\b/i.test(contentType))) return undefined;
  const text = await request.clone().text();
  if (text === '') {
    if (!resolve(operation.node.requestBody).required) return undefined;
    return errorResponse(422, 'validation_failed', 'The request body is invalid.', [{ location: 'body', field: '', rule: 'required', message: 'request body is required' }]);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    return errorResponse(400, 'bad_request', 'The request body is not valid JSON.', [{ location: 'body', field: '', rule: 'json', message: (error as Error).message }]);
  }
  const validate = validatorFor(`${operation.operationId}:body`, media.schema);
  if (validate(body)) return undefined;
  return errorResponse(422, 'validation_failed', 'The request body is invalid.', withoutBranchNoise((validate.errors ?? []).map((error) => detailOf(error, body))));
}

/** ajv's message, with the allowed values of an enum listed as the server's validator lists them. */
function messageOf(error: ErrorObject): string {
  const message = error.message ?? 'is invalid';
  const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues;
  return error.keyword === 'enum' && allowed ? `${message}: ${allowed.join(', ')}` : message;
}

/** One ajv error as the server's detail: the field as a dotted path (`mensagem.mensagem`), the rule, the value. */
function detailOf(error: ErrorObject, body: unknown): ErrorDetail {
  const segments = error.instancePath.split('/').slice(1).map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  const named = params.missingProperty ?? params.additionalProperty;
  const field = [...segments, ...(named ? [named] : [])].join('.');
  const detail: ErrorDetail = { location: 'body', field, rule: error.keyword, message: messageOf(error) };
  if (error.keyword === 'required' || SECRET_FIELD.test(field)) return detail;
  // An unknown property's value is echoed as the server echoes it: the value under that name.
  const valuePath = params.additionalProperty ? [...segments, params.additionalProperty] : segments;
  const value = valuePath.reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Node)[key] : undefined), body);
  if (value === undefined || (typeof value === 'object' && value !== null)) return detail;
  return { ...detail, value: (typeof value === 'string' ? echoedText(value) : value) as ErrorDetail['value'] };
}

// --- the document ---------------------------------------------------------------------------------------

/** Follows local `$ref`s (`#/components/...`) to the node they name; anything else is an empty node. */
export function resolve(value: unknown): Node {
  let node = value;
  for (let hops = 0; hops < 20 && isNode(node) && typeof node.$ref === 'string'; hops += 1) {
    const pointer = node.$ref;
    if (!pointer.startsWith('#/')) return {};
    node = pointer
      .slice(2)
      .split('/')
      .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((parent, token) => (isNode(parent) ? parent[token] : undefined), DOCUMENT);
  }
  return isNode(node) ? node : {};
}

export function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** An operation of the contract by its operationId, with its method. */
export function operationById(operationId: string): (ValidatedOperation & { method: string }) | undefined {
  for (const [path, item] of Object.entries(DOCUMENT.paths as Record<string, Node>)) {
    for (const [method, node] of Object.entries(item)) {
      if (isNode(node) && node.operationId === operationId) return { operationId, node, path, method };
    }
  }
  return undefined;
}
