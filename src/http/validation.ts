/**
 * Request and response validation against the contract (express-openapi-validator), and the translation
 * of its errors into the error model: a bad parameter is 400, a body that breaks its schema is 422 (the
 * contract's rule), with one detail per offending field.
 */
import { createRequire } from 'node:module';
import * as OpenApiValidator from 'express-openapi-validator';
import type { Request, RequestHandler } from 'express';
import { ApiError, unauthorized, type ErrorDetail, type ErrorTranslator } from './errors.js';
import type { OpenApiDocument } from './contract.js';
import { apiKeySecurityHandler, keyAuthenticatorOf } from './auth.js';
import { withoutBranchNoise } from '../../sdk/error-details.js';

/** The validators built in this process, per contract object, then per base path and response validation. */
const builtValidators = new WeakMap<Readonly<OpenApiDocument>, Map<string, RequestHandler[]>>();

/**
 * The contract's validator for an app. Building one costs half a second of CPU (the validator bundles
 * the contract's references and compiles its response schemas), so the apps of one process (the test
 * suite starts hundreds) share it for the same contract object and settings. Nothing in it is an app's:
 * the key lookup its security handler calls is the request's app's (bindKeyAuthenticator).
 */
export function contractValidator(contract: Readonly<OpenApiDocument>, basePath: string, validateResponses: boolean): RequestHandler[] {
  let built = builtValidators.get(contract);
  if (!built) builtValidators.set(contract, (built = new Map()));
  const settings = `${validateResponses ? 'responses' : 'requests'} under ${basePath || '/'}`;
  let validator = built.get(settings);
  if (!validator) built.set(settings, (validator = buildContractValidator(contract, basePath, validateResponses)));
  return validator;
}

function buildContractValidator(contract: Readonly<OpenApiDocument>, basePath: string, validateResponses: boolean): RequestHandler[] {
  rememberCompiledPaths();
  rememberMatchedOperations();
  // The validator matches requests under the document's servers; ours is the configured base path only.
  // It changes the document it is given: it gets a copy.
  const apiSpec = { ...structuredClone(contract), servers: [{ url: basePath || '/' }] };
  return OpenApiValidator.middleware({
    apiSpec: apiSpec as never,
    validateApiSpec: false, // the spec is linted and tested; validating it again only slows start-up
    validateRequests: { allowUnknownQueryParameters: false, allErrors: true },
    validateResponses: validateResponses ? { removeAdditional: false } : false,
    validateSecurity: { handlers: { ApiKeyAuth: apiKeySecurityHandler(keyAuthenticatorOf) } },
  }) as RequestHandler[];
}

/** Loads modules as express-openapi-validator itself does, so that what is patched is what it uses. */
const validatorRequire = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));

type PathToRegexp = (path: unknown, options?: Record<string, unknown>) => unknown;
const REMEMBERING = Symbol('remembers compiled paths');
const REMEMBERED_PATTERNS = 2_000;

/**
 * express-openapi-validator finds a request's operation by compiling the paths of the contract with
 * path-to-regexp, one after the other, on every request until one matches (lookupRoute, in its
 * dist/middlewares/openapi.metadata.js): the largest single cost of a cheap read in a CPU profile
 * (docs/benchmarks.md). A compiled pattern depends only on the path and the options, and its RegExp
 * has no global flag (exec keeps no state), so the one path-to-regexp module the validator loads gets
 * its `pathToRegexp` export wrapped, once, to remember what it compiled.
 */
function rememberCompiledPaths(): void {
  const pathToRegexpModule = validatorRequire('path-to-regexp') as { pathToRegexp: PathToRegexp & { [REMEMBERING]?: true } };
  const compile = pathToRegexpModule.pathToRegexp;
  if (compile[REMEMBERING]) return;
  const compiled = new Map<string, unknown>();
  const remembering = Object.assign(
    (path: unknown, options?: Record<string, unknown>) => {
      // The validator passes a path and { sensitive, strict }; anything else is compiled as it comes.
      if (typeof path !== 'string' || !onlyFlags(options)) return compile(path, options);
      const key = `${options?.sensitive ? 's' : '-'}${options?.strict ? 's' : '-'}${path}`;
      let pattern = compiled.get(key);
      if (pattern === undefined) {
        pattern = compile(path, options);
        if (compiled.size >= REMEMBERED_PATTERNS) compiled.clear();
        compiled.set(key, pattern);
      }
      return pattern;
    },
    { [REMEMBERING]: true as const },
  );
  pathToRegexpModule.pathToRegexp = remembering;
}

/** What the validator's route match leaves on a request (its dist/middlewares/openapi.metadata.js). */
interface MatchedRoute {
  expressRoute: string;
  openApiRoute: string;
  pathParams: Record<string, string>;
  schema: unknown;
  serial: number;
  _responseSchema?: unknown;
}

type Middleware = (req: Request & { openapi?: MatchedRoute }, res: unknown, next: (error?: unknown) => void) => unknown;
type MetadataFactory = (context: unknown, responseApiDoc: unknown) => Middleware;
const REMEMBERED_MATCHES = 10_000;

/**
 * After its patterns are compiled, the validator's route match still tries the contract's paths one by
 * one on every request, with a few allocations each (lookupRoute): 8% of a cheap read's time in a CPU
 * profile (docs/benchmarks.md). Its answer depends only on the method and the path, so each validator's
 * match (OpenApiValidator.metadataMiddleware, patched once) remembers what it found for them and gives
 * a later request the same `req.openapi` and `req.params`, as fresh objects. What it refuses (an unknown
 * path, a method the path lacks) is not remembered: it goes through the match again and fails the same way.
 */
function rememberMatchedOperations(): void {
  const prototype = (validatorRequire('./openapi.validator') as { OpenApiValidator: { prototype: { metadataMiddleware: MetadataFactory & { [REMEMBERING]?: true } } } })
    .OpenApiValidator.prototype;
  const match = prototype.metadataMiddleware;
  if (match[REMEMBERING]) return;
  prototype.metadataMiddleware = Object.assign(
    function rememberingMatch(this: unknown, context: unknown, responseApiDoc: unknown): Middleware {
      const matchOnce = match.call(this, context, responseApiDoc);
      const known = new Map<string, MatchedRoute>();
      return (req, res, next) => {
        const key = `${req.method} ${req.originalUrl.split('?')[0]}`;
        const matched = known.get(key);
        if (matched) {
          req.openapi = { ...matched, pathParams: { ...matched.pathParams } };
          req.params = req.openapi.pathParams;
          return next();
        }
        return matchOnce(req, res, (error?: unknown) => {
          if (!error && req.openapi) {
            if (known.size >= REMEMBERED_MATCHES) known.clear();
            known.set(key, { ...req.openapi, pathParams: { ...req.openapi.pathParams } });
          }
          next(error);
        });
      };
    },
    { [REMEMBERING]: true as const },
  );
}

/** Options that hold only the validator's two flags (which the remembered key encodes). */
function onlyFlags(options: Record<string, unknown> | undefined): boolean {
  for (const name in options) if (name !== 'sensitive' && name !== 'strict') return false;
  return true;
}

/**
 * Mounted right after the validator. ajv's type coercion turns a numeric parameter sent as `Infinity`,
 * `1e400` or a numeral of hundreds of digits into Infinity, and then skips `minimum` and `maximum` (it
 * checks bounds on finite numbers only), so such a value passes as valid and reaches a handler, whose
 * query fails in the database. Every numeric parameter of the contract is bounded: refuse it as the
 * validator would have, with a 400 naming the parameter.
 */
export const refuseNonFiniteNumbers: RequestHandler = (req, _res, next) => {
  const openapi = (req as { openapi?: { pathParams?: Record<string, unknown>; openApiRoute?: string } }).openapi;
  const details: ErrorDetail[] = [];
  const check = (location: NonNullable<ErrorDetail['location']>, values: Record<string, unknown> | undefined, rawValue: (field: string) => string | undefined) => {
    for (const [field, value] of Object.entries(values ?? {})) {
      if (typeof value !== 'number' || Number.isFinite(value)) continue;
      const raw = rawValue(field);
      const detail: ErrorDetail = { location, field, rule: value > 0 ? 'maximum' : 'minimum', message: 'must be a finite number within the declared bounds' };
      details.push(raw !== undefined && raw.length <= MAX_ECHOED_LENGTH ? { ...detail, value: raw } : detail);
    }
  };
  const rawQuery = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
  check('query', req.query as Record<string, unknown>, (field) => rawQuery.get(field) ?? undefined);
  check('path', openapi?.pathParams, (field) => rawPathValue(req.path, openapi?.openApiRoute, field));
  if (details.length === 0) return next();
  next(new ApiError(400, 'bad_request', `The request is malformed: ${summarise(details, '')}`, details));
};

/**
 * Mounted after the validator, before anything reads the request's text. No text of the contract may
 * hold the NUL character (U+0000): PostgreSQL cannot store it, and on SQLite Sequelize writes string
 * values into the SQL, where a NUL ends the statement early (a syntax error, so a 500). A body field with
 * one is 422, a query or path parameter 400, naming the field.
 */
export const refuseNulCharacters: RequestHandler = (req, _res, next) => {
  const openapi = (req as { openapi?: { pathParams?: Record<string, unknown> } }).openapi;
  const detail = (location: NonNullable<ErrorDetail['location']>, field: string): ErrorDetail => ({
    location,
    field,
    rule: 'no_nul',
    message: 'must not contain the NUL character (U+0000)',
  });
  const parameters = [
    ...fieldsWithNul(req.query).map((field) => detail('query', field)),
    ...fieldsWithNul(openapi?.pathParams).map((field) => detail('path', field)),
  ];
  if (parameters.length > 0) return next(new ApiError(400, 'bad_request', `The request is malformed: ${summarise(parameters, '')}`, parameters));
  // A text/plain body (a string) is accepted and ignored by the one operation that takes it.
  const body = typeof req.body === 'object' ? fieldsWithNul(req.body).map((field) => detail('body', field)) : [];
  if (body.length > 0) return next(new ApiError(422, 'validation_failed', 'The request body is invalid.', body));
  next();
};

/** Dotted paths (`lista.0.nome`, as the validator names fields) of the strings that hold a NUL; iterative, so depth is no risk. */
function fieldsWithNul(root: unknown): string[] {
  const found: string[] = [];
  const pending: Array<[string, unknown]> = [['', root]];
  while (pending.length > 0) {
    const [path, value] = pending.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) found.push(path);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) pending.push([path ? `${path}.${key}` : key, item]);
    }
  }
  return found.reverse();
}

/** A path parameter as sent: the segment at its place in the route template, counted from the end (the base path is a prefix). */
function rawPathValue(path: string, template: string | undefined, field: string): string | undefined {
  if (!template) return undefined;
  const templateSegments = template.split('/');
  const index = templateSegments.indexOf(`{${field}}`);
  const segments = path.split('/');
  const segment = index < 0 ? undefined : segments[segments.length - (templateSegments.length - index)];
  if (segment === undefined) return undefined;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

const validatorErrorClasses = Object.values(OpenApiValidator.error);

interface ValidatorError {
  status: number;
  message: string;
  errors?: Array<{ path?: string; message?: string; errorCode?: string }>;
}

export const translateValidatorError: ErrorTranslator = (error, req) => {
  if (!validatorErrorClasses.some((errorClass) => error instanceof errorClass)) return undefined;
  const { status, message, errors = [] } = error as ValidatorError;
  const details = withoutBranchNoise(errors.map((problem) => withValue(toDetail(problem), req)));
  switch (status) {
    case 400: {
      // The validator could not decode a path parameter: a `%` escape that is not UTF-8 (`%FF`).
      if (/^malformed uri/i.test(message)) {
        const detail: ErrorDetail = { location: 'path', field: '', rule: 'percent_encoding', message: 'must be valid percent-encoded UTF-8' };
        return new ApiError(400, 'bad_request', 'The path is not valid percent-encoded UTF-8.', [req.path.length <= MAX_ECHOED_LENGTH ? { ...detail, value: req.path } : detail]);
      }
      const onlyBody = details.length > 0 && details.every((detail) => detail.location === 'body');
      return onlyBody
        ? new ApiError(422, 'validation_failed', 'The request body is invalid.', details)
        : new ApiError(400, 'bad_request', `The request is malformed: ${summarise(details, message)}`, details);
    }
    case 401:
      // The validator's own message covers a missing header; ours (from auth.ts) say what was wrong.
      return /header required/i.test(message) ? unauthorized() : unauthorized(message);
    case 413:
      return new ApiError(413, 'payload_too_large', message, details);
    case 415:
      return unsupportedMediaType(req);
    case 500:
      // A response that breaks the contract is our bug, not the client's: log it and answer 500.
      return new ApiError(500, 'internal_error', 'The server produced a response that breaks the API contract.');
    default:
      return new ApiError(status, status === 404 ? 'not_found' : 'bad_request', message, details);
  }
};

function unsupportedMediaType(req: Request): ApiError {
  const sent = req.get('Content-Type') ?? 'none';
  const content = (req as { openapi?: { schema?: { requestBody?: { content?: object } } } }).openapi?.schema?.requestBody?.content;
  const accepted = Object.keys(content ?? {}).join(' or ') || 'no body';
  return new ApiError(415, 'unsupported_media_type', `Unsupported Content-Type ${sent}; this operation takes ${accepted}.`, [
    { location: 'header', field: 'Content-Type', rule: 'media_type', message: `must be ${accepted}`, value: sent },
  ]);
}

/** Field names whose values are never echoed back (they may be credentials). */
const SECRET_FIELD = /pass|token|secret|signed_request|authorization/i;
const MAX_ECHOED_LENGTH = 200;

/** Adds the offending value to a detail when it is safe and short enough to echo. */
function withValue(detail: ErrorDetail, req: Request): ErrorDetail {
  if (!detail.location || detail.rule === 'required' || SECRET_FIELD.test(detail.field)) return detail;
  const value = valueAt(req, detail.location, detail.field);
  if (value === undefined || (typeof value === 'string' && value.length > MAX_ECHOED_LENGTH)) return detail;
  if (typeof value === 'object' && value !== null) return detail;
  return { ...detail, value };
}

function valueAt(req: Request, location: NonNullable<ErrorDetail['location']>, field: string): unknown {
  switch (location) {
    case 'query':
      return (req.query as Record<string, unknown>)[field];
    case 'path':
      return req.params[field];
    case 'header':
      return req.get(field);
    case 'body':
      // An empty field is the body itself (a body that is valid JSON but not an object).
      if (field === '') return req.body;
      return field.split('.').reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), req.body);
  }
}

function summarise(details: ErrorDetail[], fallback: string): string {
  return details.length > 0 ? details.map((d) => `${d.field}: ${d.message}`).join('; ') : fallback;
}

const LOCATIONS: Record<string, ErrorDetail['location']> = {
  body: 'body',
  query: 'query',
  params: 'path',
  path: 'path',
  headers: 'header',
  header: 'header',
};

/** `/body/mensagem/mensagem` -> { location: body, field: mensagem.mensagem }. */
function toDetail({ path = '', message = 'is invalid', errorCode = '' }: NonNullable<ValidatorError['errors']>[number]): ErrorDetail {
  const [first = '', ...rest] = path.replace(/^[./]/, '').split(/[./]/);
  const location = LOCATIONS[first];
  const rule = errorCode.replace(/\.openapi\.(validation|requestValidation)$/, '') || (message.startsWith('Unknown query parameter') ? 'unknown_parameter' : 'invalid');
  return location
    ? { location, field: rest.join('.'), rule, message }
    : { field: path, rule, message };
}
