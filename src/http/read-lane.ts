/**
 * The read lane: a GET that the contract provably accepts goes from the path guard straight to its
 * handler, past the body parsers, express-openapi-validator and the checks after it (issue 20).
 *
 * For a cheap read those stages cost more than the read itself (docs/benchmarks.md), and for a GET
 * they have little to do. The lane takes a request only when it can show that the validator would let
 * it through unchanged, and sends everything else on to the full pipeline, which answers it, errors
 * included, as before:
 * - the operation is a GET with a handler, and no security beyond ApiKeyAuth or none, and is
 *   not one of the `excluded` (GETs that change state, and what a provider signs);
 * - each parameter it declares is a string, an integer or a boolean whose schema uses only keywords the
 *   lane checks the same way (no format, default, style or content), so the contract's own schemas,
 *   compiled by AJV as the validator compiles them, decide;
 * - the request has no body and names no content type (a few GETs of the seed declare an optional body,
 *   and the validator checks a named content type against it even when nothing is sent); it sends each
 *   query parameter once, none the operation lacks and none empty; an integer is written as plain digits
 *   (`-?\d{1,9}`), so it converts to the same number either way; a boolean is `true` or `false`, the
 *   two strings AJV's type coercion turns into booleans; and no value holds NUL;
 * - the key authenticates (looked up once per request, so a refused key costs nothing more when the full
 *   pipeline answers it 401).
 * What the validator leaves on a request for the handler is set the same way: the typed query, the path
 * parameters, the matched operation, the caller. With response validation on (development and tests)
 * there is no lane: the validator must see every answer. test/read-lane.test.ts holds the lane to the
 * full pipeline's answers, request by request.
 */
import type { Request, RequestHandler } from 'express';
import { apiKeySecurityHandler, type KeyAuthenticator } from './auth.js';
import type { ContractSchemas, DeclaredParameter } from './contract-schemas.js';
import { findRoute, type OpenApiDocument, type Route } from './contract.js';
import type { OperationHandler, OperationHandlers, OperationId, OperationRequest } from './operations.js';

export interface ReadLaneOptions {
  document: OpenApiDocument;
  routes: Route[];
  schemas: ContractSchemas;
  handlers: OperationHandlers;
  authenticate: KeyAuthenticator;
  /** Operations that always take the full pipeline. */
  excluded: ReadonlySet<string>;
}

/** The types of plain values, as the contract declares them. */
type PlainType = 'string' | 'integer' | 'boolean';

interface LaneParameter {
  name: string;
  required: boolean;
  type: PlainType;
  validate: DeclaredParameter['validate'];
}

interface LaneOperation {
  operationId: OperationId;
  template: string;
  needsKey: boolean;
  query: Map<string, LaneParameter>;
  path: LaneParameter[];
  headers: LaneParameter[];
  handler: OperationHandler<OperationId>;
}

/** Schema keywords the lane's check treats as the validator does; any other keeps the operation out of the lane. */
const PLAIN_KEYWORDS = new Set(['type', 'pattern', 'enum', 'minimum', 'maximum', 'minLength', 'maxLength', 'description', 'title', 'example', 'examples']);
/** Parameter fields that change nothing about how a plain value is read. */
const PLAIN_PARAMETER_FIELDS = new Set(['name', 'in', 'required', 'schema', 'description', 'example', 'examples', 'deprecated', 'validate']);
/** An integer written so that every reading gives the same number, within the contract's 32-bit ids. */
const PLAIN_INTEGER = /^-?\d{1,9}$/;

/** The operations the lane takes for this contract, by operationId (the rest take the full pipeline). */
export function laneOperations(options: Omit<ReadLaneOptions, 'routes' | 'authenticate'>): Map<string, LaneOperation> {
  const { document, schemas, handlers, excluded } = options;
  const lane = new Map<string, LaneOperation>();
  const defaultSecurity = document.security as unknown[] | undefined;
  for (const [template, pathItem] of Object.entries(document.paths)) {
    const get = pathItem.get as { operationId?: string; security?: unknown[]; requestBody?: { required?: boolean } } | undefined;
    const operationId = get?.operationId as OperationId | undefined;
    const handler = operationId && (handlers[operationId] as OperationHandler<OperationId> | undefined);
    if (!get || !operationId || !handler || excluded.has(operationId) || get.requestBody?.required) continue;
    const security = laneSecurity(get.security ?? defaultSecurity ?? []);
    const parameters = schemas.parameters(template, 'get');
    if (security === undefined || !parameters.every(isPlain)) continue;
    const of = (location: string) => parameters.filter((parameter) => parameter.in === location).map(laneParameter);
    lane.set(operationId, {
      operationId,
      template,
      needsKey: security === 'key',
      query: new Map(of('query').map((parameter) => [parameter.name, parameter])),
      path: of('path'),
      headers: of('header'),
      handler,
    });
  }
  return lane;
}

/** 'none', 'key' (ApiKeyAuth required), or undefined for anything else. */
function laneSecurity(requirements: unknown[]): 'none' | 'key' | undefined {
  if (requirements.length === 0) return 'none';
  if (requirements.length !== 1) return undefined;
  const names = Object.keys(requirements[0] as object);
  return names.length === 1 && names[0] === 'ApiKeyAuth' ? 'key' : undefined;
}

function laneParameter(parameter: DeclaredParameter): LaneParameter {
  return {
    // Node gives header names in lower case.
    name: parameter.in === 'header' ? parameter.name.toLowerCase() : parameter.name,
    required: parameter.required,
    type: parameter.schema!.type as PlainType,
    validate: parameter.validate,
  };
}

const PLAIN_TYPES = new Set<unknown>(['string', 'integer', 'boolean'] satisfies PlainType[]);
/** What AJV's type coercion (the validator's) makes of the strings it turns into booleans; no other string is one. */
const PLAIN_BOOLEANS = new Map([
  ['true', true],
  ['false', false],
]);

/** A query, path or header parameter whose value is one plain string, integer or boolean (see PLAIN_KEYWORDS). */
function isPlain(parameter: DeclaredParameter): boolean {
  if (!['query', 'path', 'header'].includes(parameter.in)) return false;
  const schema = parameter.schema;
  if (!schema || !PLAIN_TYPES.has(schema.type)) return false;
  // `allowReserved: true` lets a value hold reserved characters unencoded (an apostrophe in a name), as the
  // lane reads every value; without it the validator refuses them, so only `true` is plain.
  const plainField = (key: string) => PLAIN_PARAMETER_FIELDS.has(key) || (key === 'allowReserved' && parameter.allowReserved === true);
  return Object.keys(schema).every((key) => PLAIN_KEYWORDS.has(key)) && Object.keys(parameter).every(plainField);
}

export function readLane(options: ReadLaneOptions): RequestHandler {
  const lane = laneOperations(options);
  const checkKey = apiKeySecurityHandler(() => options.authenticate);
  return async (req, res, next) => {
    // The path guard has made HEAD a GET, and answered OPTIONS, unknown paths and other methods.
    if (req.method !== 'GET' || hasBody(req) || req.headers['content-type'] !== undefined) return next();
    const route = findRoute(options.routes, req.path);
    const operation = route && lane.get(route.operationIds.GET!);
    if (!route || !operation) return next();
    const query = plainQuery(req.query as Record<string, unknown>, operation.query);
    const pathParams = operation.path.length === 0 ? {} : pathValues(route, req.path, operation.path);
    if (!query || !pathParams || !headersAccepted(req, operation.headers)) return next();
    if (operation.needsKey && !(await checkKey(req).catch(() => false))) return next();

    // What the validator would have left on the request.
    Object.defineProperty(req, 'query', { writable: true, value: query });
    if (!('body' in (req as object))) req.body = undefined;
    (req as Request & { openapi?: unknown }).openapi = { schema: { operationId: operation.operationId }, openApiRoute: operation.template, pathParams };
    req.params = { ...pathParams } as Request['params'];
    await operation.handler(req as unknown as OperationRequest<OperationId>, res);
  };
}

type PlainValue = string | number | boolean;

/** The query typed as the contract declares it, or undefined unless every parameter is plain and valid. */
function plainQuery(sent: Record<string, unknown>, declared: Map<string, LaneParameter>): Record<string, PlainValue> | undefined {
  const query: Record<string, PlainValue> = {};
  for (const name in sent) {
    const parameter = declared.get(name);
    const value = parameter && plainValue(sent[name], parameter);
    if (value === undefined) return undefined;
    query[name] = value;
  }
  for (const parameter of declared.values()) if (parameter.required && !(parameter.name in query)) return undefined;
  return query;
}

/** The path's parameters typed as the contract declares them, or undefined unless each is plain and valid. */
function pathValues(route: Route, path: string, declared: LaneParameter[]): Record<string, PlainValue> | undefined {
  const matched = route.matches(path);
  if (!matched) return undefined;
  const values: Record<string, PlainValue> = {};
  for (const parameter of declared) {
    const value = plainValue(matched.params[parameter.name], parameter);
    if (value === undefined) return undefined;
    values[parameter.name] = value;
  }
  return values;
}

function headersAccepted(req: Request, declared: LaneParameter[]): boolean {
  for (const parameter of declared) {
    const sent = req.headers[parameter.name];
    if (sent === undefined ? parameter.required : plainValue(sent, parameter) === undefined) return false;
  }
  return true;
}

/** One value as its schema types it, or undefined if it is not a single plain valid one. */
function plainValue(sent: unknown, parameter: LaneParameter): PlainValue | undefined {
  if (typeof sent !== 'string' || sent === '' || sent.includes('\0')) return undefined;
  const value = typedValue(sent, parameter.type);
  return value !== undefined && parameter.validate(value) ? value : undefined;
}

function typedValue(sent: string, type: PlainType): PlainValue | undefined {
  switch (type) {
    case 'string':
      return sent;
    case 'integer':
      return PLAIN_INTEGER.test(sent) ? Number(sent) : undefined;
    case 'boolean':
      return PLAIN_BOOLEANS.get(sent);
  }
}

/** As type-is (and so the body parsers) tells: Transfer-Encoding, or a Content-Length that is a number. */
function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(req.headers['content-length']));
}
