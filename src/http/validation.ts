/**
 * Request and response validation against the contract (express-openapi-validator), and the translation
 * of its errors into the error model: a bad parameter is 400, a body that breaks its schema is 422 (the
 * contract's rule), with one detail per offending field.
 *
 * Refusing a request costs time linear in its size, with a small constant, whatever its shape (issue 41):
 * - a JSON body whose shape would make parsing it costly is refused on its bytes (refuseCostlyJson);
 * - a body of up to FULLY_CHECKED_BODY_VALUES values (every object, array, and value in them) is checked
 *   for every problem (ajv's allErrors), so a form's mistakes are named at once;
 * - a larger body is checked up to its first problem, by a validator built without allErrors: ajv's
 *   error reports grow with the problems found (and with their square for an array whose items are a
 *   referenced schema: 5,000 wrong items cost 16 s);
 * - an array beyond its `maxItems` is refused for that alone (itemsCheckedWithinMaxItems);
 * - the errors become details in one pass (withoutBranchNoise is linear), and an answer lists at most
 *   MAX_DETAILS of them, its message counting the rest (sendError).
 */
import { createRequire } from 'node:module';
import * as OpenApiValidator from 'express-openapi-validator';
import type { Request, RequestHandler } from 'express';
import { ApiError, unauthorized, type ErrorDetail, type ErrorTranslator } from './errors.js';
import type { OpenApiDocument } from './contract.js';
import { apiKeySecurityHandler, keyAuthenticatorOf } from './auth.js';
import { echoedText, MAX_DETAILS, MAX_ECHOED_LENGTH, withoutBranchNoise } from '@palanque/rules/error-details';

/**
 * A body of at most this many values is checked for every problem; a larger one up to its first. At this
 * size the worst body (an array of wrong items of a referenced schema, whose errors ajv copies once per
 * item) is refused in a few milliseconds; a form, even a long one, holds far fewer values.
 */
export const FULLY_CHECKED_BODY_VALUES = 2_000;

/** Set on a request whose body was checked only up to its first problem (translateValidatorError says so). */
const CHECKED_TO_FIRST_PROBLEM = Symbol('body checked up to its first problem');

/** The validators built in this process, per contract object, then per base path and response validation. */
const builtValidators = new WeakMap<Readonly<OpenApiDocument>, Map<string, RequestHandler[]>>();

/**
 * The contract's validator for an app. Building one costs half a second of CPU (the validator bundles
 * the contract's references and compiles its response schemas), so the apps of one process (the test
 * suite starts hundreds) share it for the same contract object and settings. Nothing in it is an app's:
 * the key lookup its security handler calls is the request's app's (bindKeyAuthenticator).
 *
 * There are two, the same but for ajv's allErrors; each request goes through one of them whole, by the
 * size of its body (see the opening comment).
 */
export function contractValidator(contract: Readonly<OpenApiDocument>, basePath: string, validateResponses: boolean): RequestHandler[] {
  let built = builtValidators.get(contract);
  if (!built) builtValidators.set(contract, (built = new Map()));
  const settings = `${validateResponses ? 'responses' : 'requests'} under ${basePath || '/'}`;
  let validator = built.get(settings);
  if (!validator) built.set(settings, (validator = bySizeOfBody(contract, basePath, validateResponses)));
  return validator;
}

/** The second validator is built when a large body first needs it: most processes (the tests' apps) never do. */
function bySizeOfBody(contract: Readonly<OpenApiDocument>, basePath: string, validateResponses: boolean): RequestHandler[] {
  const everyProblem = buildContractValidator(contract, basePath, validateResponses, true);
  let firstProblem: RequestHandler[] | undefined;
  return [
    (req, res, next) => {
      if (holdsAtMost(req.body, FULLY_CHECKED_BODY_VALUES)) return runInTurn(everyProblem, req, res, next);
      (req as Request & { [CHECKED_TO_FIRST_PROBLEM]?: true })[CHECKED_TO_FIRST_PROBLEM] = true;
      firstProblem ??= buildContractValidator(contract, basePath, validateResponses, false);
      return runInTurn(firstProblem, req, res, next);
    },
  ];
}

/** Runs middleware one after the other, as Express would, then `done` (with the first error, if any). */
function runInTurn(chain: RequestHandler[], req: Request, res: Parameters<RequestHandler>[1], done: (error?: unknown) => void): void {
  let index = 0;
  const step = (error?: unknown): void => {
    if (error !== undefined || index === chain.length) return done(error);
    const middleware = chain[index++]!;
    try {
      void middleware(req, res, step);
    } catch (thrown) {
      done(thrown);
    }
  };
  step();
}

/** Whether a parsed body holds at most `limit` values (objects and arrays count, as does what they hold); stops counting past it. */
function holdsAtMost(body: unknown, limit: number): boolean {
  let count = 0;
  const pending: unknown[] = [body];
  while (pending.length > 0) {
    const value = pending.pop();
    if ((count += 1) > limit) return false;
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      if (count + value.length > limit) return false;
      for (const item of value) pending.push(item);
    } else {
      for (const key in value) {
        if ((count += 1) > limit) return false; // a key is a value to check too (an unknown one is a problem)
        pending.push((value as Record<string, unknown>)[key]);
      }
    }
  }
  return true;
}

function buildContractValidator(contract: Readonly<OpenApiDocument>, basePath: string, validateResponses: boolean, allErrors: boolean): RequestHandler[] {
  rememberCompiledPaths();
  rememberMatchedOperations();
  // The validator matches requests under the document's servers; ours is the configured base path only.
  // It changes the document it is given: it gets a copy.
  const apiSpec = { ...structuredClone(contract), servers: [{ url: basePath || '/' }] };
  itemsCheckedWithinMaxItems((apiSpec as { components?: { schemas?: unknown } }).components?.schemas);
  for (const pathItem of Object.values(apiSpec.paths ?? {})) {
    for (const operation of Object.values(pathItem ?? {})) itemsCheckedWithinMaxItems((operation as { requestBody?: unknown })?.requestBody);
  }
  return OpenApiValidator.middleware({
    apiSpec: apiSpec as never,
    validateApiSpec: false, // the spec is linted and tested; validating it again only slows start-up
    validateRequests: { allowUnknownQueryParameters: false, allErrors },
    validateResponses: validateResponses ? { removeAdditional: false } : false,
    validateSecurity: { handlers: { ApiKeyAuth: apiKeySecurityHandler(keyAuthenticatorOf) } },
  }) as RequestHandler[];
}

/**
 * What a JSON body may hold, checked on its bytes before it is parsed. V8's JSON.parse is linear but its
 * constant depends on the shape: a megabyte takes it 20 ms as 500,000 numbers, 0.2 s as 330,000 empty
 * objects or as objects of 128 members, 0.25 s as 120,000 different short texts (V8 interns a text of up
 * to 10 characters), 0.5 s as arrays nested 500,000 deep, and 0.7 s as 100,000 member names it has not
 * seen before (each makes new hidden classes). No body of the contract comes near these: it nests 7
 * levels, its largest object lists 49 fields, its longest arrays hold 1,000 small objects (a full webhook
 * batch holds about 12,000 values), its field names are a few hundred, and its short texts (a network, a
 * user name) repeat. Values are capped at 20,000: refusing 50,000 took about 25 ms, and a cheap read
 * waiting behind such refusals missed 50 ms at p99 (docs/benchmarks.md).
 */
export const JSON_BODY_LIMITS = { depth: 32, values: 20_000, membersPerObject: 64, containers: 20_000, memberNames: 1_000, shortTexts: 10_000 };
/** Texts V8 interns when it parses them (their bytes as sent: an escape can hide up to 6 bytes a character). */
const SHORT_TEXT_BYTES = 10;
const SHORT_ESCAPED_TEXT_BYTES = 60;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/**
 * For express.json's `verify`: refuses (413 `payload_too_large`) a body beyond JSON_BODY_LIMITS, in one
 * pass over its bytes (a few milliseconds a megabyte). Member names and short texts are told apart by a
 * 32-bit hash (two that share one count once: the bound only loosens). What is not JSON is left to the parser.
 */
export function refuseCostlyJson(raw: Uint8Array): void {
  const limits = JSON_BODY_LIMITS;
  // Per open container: its members so far if an object, -1 if an array.
  const members = new Int32Array(limits.depth + 1);
  const names = new Set<number>();
  const shortTexts = new Set<number>();
  let depth = 0;
  let containers = 0;
  let separators = 0; // commas: about one a value
  let expectingName = false;
  for (let index = 0; index < raw.length; index += 1) {
    const byte = raw[index]!;
    if (byte === QUOTE) {
      // A string: found at native speed, and hashed (FNV-1a) to count the different names and short texts.
      const start = index + 1;
      let end = raw.indexOf(QUOTE, start);
      while (end !== -1 && escapedAt(raw, end, start)) end = raw.indexOf(QUOTE, end + 1);
      index = end === -1 ? raw.length : end;
      const bytes = index - start;
      const escaped = bytes <= SHORT_ESCAPED_TEXT_BYTES && raw.subarray(start, index).includes(BACKSLASH);
      const short = bytes <= SHORT_TEXT_BYTES || escaped;
      if (!expectingName && !short) continue;
      let hash = 0x811c9dc5;
      for (let at = start; at < index; at += 1) hash = Math.imul(hash ^ raw[at]!, 0x01000193);
      if (!expectingName) {
        shortTexts.add(hash);
        if (shortTexts.size > limits.shortTexts) throw costlyJson('max_short_texts', `the body must not hold more than ${limits.shortTexts.toLocaleString('en')} different texts of up to ${SHORT_TEXT_BYTES} characters`);
      }
      if (expectingName) {
        names.add(hash);
        if (names.size > limits.memberNames) throw costlyJson('max_member_names', `the body must not use more than ${limits.memberNames.toLocaleString('en')} different member names`);
        expectingName = false;
      }
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (depth === limits.depth) throw costlyJson('max_depth', `objects and arrays must not nest more than ${limits.depth} deep`);
      if ((containers += 1) > limits.containers) throw costlyJson('max_containers', `the body must not hold more than ${limits.containers.toLocaleString('en')} objects and arrays`);
      members[++depth] = byte === OPEN_OBJECT ? 0 : -1;
      expectingName = byte === OPEN_OBJECT;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      if (depth > 0) depth -= 1;
      expectingName = false;
    } else if (byte === COMMA) {
      if ((separators += 1) >= limits.values) throw costlyJson('max_values', `the body must not hold more than ${limits.values.toLocaleString('en')} values`);
      if (depth === 0 || members[depth]! < 0) continue;
      members[depth] = members[depth]! + 1;
      if (members[depth]! >= limits.membersPerObject) throw costlyJson('max_members', `an object must not hold more than ${limits.membersPerObject} members`);
      expectingName = true;
    } else if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) {
      expectingName = false; // a colon or a value: the next string is no name
    }
  }
}

/** Whether the quote at `at` is escaped: preceded by an odd number of backslashes within the string. */
function escapedAt(raw: Uint8Array, at: number, start: number): boolean {
  let backslashes = 0;
  for (let index = at - 1; index >= start && raw[index] === BACKSLASH; index -= 1) backslashes += 1;
  return backslashes % 2 === 1;
}

function costlyJson(rule: string, message: string): ApiError {
  return new ApiError(413, 'payload_too_large', `The request body is too costly to read: ${message}.`, [{ location: 'body', field: '', rule, message }]);
}

/**
 * An array longer than its `maxItems` is refused for that alone, without checking its items one by one
 * (with allErrors, ajv reports every wrong item of an array of any length): in the validator's copy of the
 * contract, `items` moves under `if: { maxItems } then: { items }`. Only the schemas of components and
 * request bodies change (the validator reads a parameter's `items` to parse it); the `if` keyword's own
 * error, which repeats the items', is dropped by translateValidatorError.
 */
function itemsCheckedWithinMaxItems(root: unknown): void {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      pending.push(...node);
      continue;
    }
    const schema = node as Record<string, unknown>;
    pending.push(...Object.values(schema));
    if (typeof schema.maxItems === 'number' && schema.items !== undefined) {
      schema.allOf = [...((schema.allOf as unknown[] | undefined) ?? []), { if: { maxItems: schema.maxItems }, then: { items: schema.items } }];
      delete schema.items;
    }
  }
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
 * values into the SQL, where a NUL ends the statement early (a syntax error, so a 500). A query or path
 * parameter with one is 400, naming it; a body's NUL is judged before this, with the lone surrogates
 * (wellFormedText, unicode.ts).
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
  // Only the details an answer lists look up and echo their values (sendError lists MAX_DETAILS).
  const details = withoutBranchNoise(errors.map(toDetail).filter((detail) => detail.rule !== 'if')).map((detail, index) => (index < MAX_DETAILS ? withValue(detail, req) : detail));
  switch (status) {
    case 400: {
      // The validator could not decode a path parameter: a `%` escape that is not UTF-8 (`%FF`).
      if (/^malformed uri/i.test(message)) {
        const detail: ErrorDetail = { location: 'path', field: '', rule: 'percent_encoding', message: 'must be valid percent-encoded UTF-8' };
        return new ApiError(400, 'bad_request', 'The path is not valid percent-encoded UTF-8.', [req.path.length <= MAX_ECHOED_LENGTH ? { ...detail, value: req.path } : detail]);
      }
      const onlyBody = details.length > 0 && details.every((detail) => detail.location === 'body');
      const firstOnly = (req as Request & { [CHECKED_TO_FIRST_PROBLEM]?: true })[CHECKED_TO_FIRST_PROBLEM]
        ? ` It holds more than ${FULLY_CHECKED_BODY_VALUES.toLocaleString('en')} values, so it was checked up to its first problem only.`
        : '';
      return onlyBody
        ? new ApiError(422, 'validation_failed', `The request body is invalid.${firstOnly}`, details)
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

/**
 * Adds the offending value to a detail when it is safe to echo: a text cut to MAX_ECHOED_LENGTH
 * characters (ending in "…"), so a huge value costs the answer 200 characters at most.
 */
function withValue(detail: ErrorDetail, req: Request): ErrorDetail {
  if (!detail.location || detail.rule === 'required' || SECRET_FIELD.test(detail.field)) return detail;
  const value = valueAt(req, detail.location, detail.field);
  if (value === undefined) return detail;
  if (typeof value === 'object' && value !== null) return detail;
  return { ...detail, value: typeof value === 'string' ? echoedText(value) : value };
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

/** The listed details (at most MAX_DETAILS) in one line. */
function summarise(details: ErrorDetail[], fallback: string): string {
  return details.length > 0 ? details.slice(0, MAX_DETAILS).map((d) => `${d.field}: ${d.message}`).join('; ') : fallback;
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
