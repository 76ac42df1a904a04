/**
 * Requests for each operation of the contract, as fast-check arbitraries: valid ones built from the
 * operation's parameter and body schemas (and its examples), and invalid ones made by mutating a valid
 * one in one place (a parameter, a header, the body, its content type, the credentials).
 */
import fc from 'fast-check';
import { tryResolvePointer } from '../helpers/spec.js';
import { SchemaArbitraries, type Schema } from './schema-arbitrary.js';
import { brokenJson, HUGE_LENGTH, hostileParameterStrings, hostileValues, jsonText, wrongContentTypes } from './hostile-values.js';

type Node = Record<string, unknown>;

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
}

export interface Operation {
  operationId: string;
  method: string;
  /** The path as the spec writes it, e.g. `/api/usuario/{user_id}/`. */
  template: string;
  needsKey: boolean;
  parameters: Parameter[];
  /** Media type -> schema and example values of the request body. */
  bodies: Array<{ mediaType: string; schema: Schema; examples: unknown[] }>;
  bodyRequired: boolean;
  node: Node;
}

/** Who sends the request: the Authorization header is filled in at send time, when keys exist. */
export type Caller = 'anonymous' | 'user' | 'admin' | 'adminBearer' | 'bogusKey' | 'malformedHeader';

/** A request ready to send, except for the caller's key. */
export interface FuzzRequest {
  method: string;
  /** Path and query string, percent-encoded. */
  target: string;
  headers: Record<string, string>;
  body?: string;
  caller: Caller;
  /** What was changed from a valid request, for the failure report. */
  mutation: string;
}

const deref = (spec: unknown, node: unknown): Node => {
  const ref = (node as Node | undefined)?.$ref;
  return (typeof ref === 'string' ? tryResolvePointer(spec, ref) : node) as Node;
};

/** Every operation of the spec, with its parameters and bodies resolved. */
export function operationsOf(spec: Node): Operation[] {
  return Object.entries(spec.paths as Record<string, Node>).flatMap(([template, item]) =>
    Object.entries(item)
      .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map(([method, raw]) => {
        const node = raw as Node;
        const requestBody = deref(spec, node.requestBody) as Node | undefined;
        const content = (requestBody?.content ?? {}) as Record<string, Node>;
        return {
          operationId: String(node.operationId),
          method: method.toUpperCase(),
          template,
          needsKey: ((node.security as unknown[] | undefined) ?? []).length > 0,
          parameters: ((node.parameters as unknown[] | undefined) ?? []).map((parameter) => deref(spec, parameter) as unknown as Parameter),
          bodies: Object.entries(content).map(([mediaType, media]) => ({
            mediaType,
            schema: media.schema as Schema,
            examples: Object.values((media.examples as Record<string, unknown> | undefined) ?? {}).map((example) => deref(spec, example).value),
          })),
          bodyRequired: requestBody?.required === true,
          node,
        };
      }),
  );
}

/** Query and path values travel as text; objects as JSON (only hostile values are objects). */
const asText = (value: unknown) => (typeof value === 'string' ? value : jsonText(value));

/** Header values fetch can send: Latin-1 without NUL, CR or LF, and not so long that the header block passes 16 KiB. */
const sendableHeader = (value: string) => /^[\x20-\x7E\x80-\xFF]*$/.test(value) && value.length <= 4000;

interface Parts {
  path: Record<string, string>;
  query: Array<[string, string]>;
  headers: Record<string, string>;
  body?: { mediaType: string; value: unknown };
}

export class RequestArbitraries {
  private readonly schemas: SchemaArbitraries;

  constructor(spec: Node) {
    this.schemas = new SchemaArbitraries(spec);
  }

  /** Valid requests and invalid ones, roughly half and half, from every caller. */
  for(operation: Operation): fc.Arbitrary<FuzzRequest> {
    const callers: fc.Arbitrary<Caller> = operation.needsKey
      ? fc.oneof({ arbitrary: fc.constantFrom<Caller>('user', 'admin', 'adminBearer'), weight: 4 }, fc.constantFrom<Caller>('anonymous', 'bogusKey', 'malformedHeader'))
      : fc.constantFrom<Caller>('anonymous', 'anonymous', 'user', 'bogusKey');
    return fc
      .tuple(this.validParts(operation), fc.option(this.mutation(operation), { freq: 2 }), callers)
      .map(([parts, mutate, caller]) => {
        const mutated = mutate ? mutate(parts) : { parts, mutation: 'none (valid request)' };
        return render(operation, mutated.parts, caller, mutated.mutation);
      });
  }

  /** Every parameter from its schema (optional ones sometimes), and a body from its schema or an example. */
  private validParts(operation: Operation): fc.Arbitrary<Parts> {
    const parameters = operation.parameters.map((parameter) => {
      const value = this.schemas.valid(parameter.schema).map((generated) => asText(shortWait(operation, parameter, generated)));
      return (parameter.required ? value : fc.option(value, { nil: undefined, freq: 2 })).map((sent) => ({ parameter, value: sent }));
    });
    const body = this.validBody(operation);
    return fc.tuple(fc.tuple(...parameters), body).map(([values, bodyValue]) => {
      const parts: Parts = { path: {}, query: [], headers: {}, body: bodyValue };
      for (const { parameter, value } of values) {
        if (value === undefined) continue;
        if (parameter.in === 'path') parts.path[parameter.name] = value;
        else if (parameter.in === 'query') parts.query.push([parameter.name, value]);
        else if (sendableHeader(value)) parts.headers[parameter.name] = value;
      }
      return parts;
    });
  }

  private validBody(operation: Operation): fc.Arbitrary<Parts['body']> {
    if (operation.bodies.length === 0) return fc.constant(undefined);
    const bodies = operation.bodies.map(({ mediaType, schema, examples }) => {
      const fromSchema = this.schemas.valid(schema);
      const value = examples.length > 0 ? fc.oneof(fc.constantFrom(...examples), fromSchema) : fromSchema;
      return value.map((generated) => ({ mediaType, value: generated }));
    });
    const body = fc.oneof(...bodies);
    return operation.bodyRequired ? body : fc.option(body, { nil: undefined });
  }

  /** One change that makes (or may make) the request invalid. */
  private mutation(operation: Operation): fc.Arbitrary<(parts: Parts) => { parts: Parts; mutation: string }> {
    const mutations: Array<fc.Arbitrary<(parts: Parts) => { parts: Parts; mutation: string }>> = [this.headerMutation()];
    const pathParameters = operation.parameters.filter((parameter) => parameter.in === 'path');
    const queryParameters = operation.parameters.filter((parameter) => parameter.in === 'query');
    if (pathParameters.length > 0) mutations.push(pathMutation(pathParameters));
    mutations.push(queryMutation(queryParameters));
    if (operation.bodies.length > 0) mutations.push(bodyMutation(operation), bodyMutation(operation));
    else if (operation.method === 'POST') mutations.push(unexpectedBody());
    return fc.oneof(...mutations);
  }

  private headerMutation(): fc.Arbitrary<(parts: Parts) => { parts: Parts; mutation: string }> {
    const names = fc.constantFrom('X-Request-Id', 'Idempotency-Key', 'If-None-Match', 'X-Twilio-Signature', 'X-Hub-Signature-256', 'Accept', 'Content-Encoding');
    const values = fc.oneof(hostileParameterStrings, fc.constantFrom(' ', 'a b', 'x'.repeat(129), 'x'.repeat(256), '"quoted"', 'gzip', 'deflate', 'br', 'application/xml', '*/*;q=abc')).filter(sendableHeader);
    return fc.tuple(names, values).map(([name, value]) => (parts: Parts) => ({
      parts: { ...parts, headers: { ...parts.headers, [name]: value } },
      mutation: `header ${name}: ${preview(value)}`,
    }));
  }
}

function pathMutation(parameters: Parameter[]) {
  return fc.tuple(fc.constantFrom(...parameters), hostileParameterStrings).map(([parameter, value]) => (parts: Parts) => ({
    parts: { ...parts, path: { ...parts.path, [parameter.name]: value } },
    mutation: `path ${parameter.name}: ${preview(value)}`,
  }));
}

function queryMutation(parameters: Parameter[]) {
  const kinds: Array<fc.Arbitrary<(parts: Parts) => { parts: Parts; mutation: string }>> = [
    // A parameter the operation does not declare.
    fc.tuple(fc.oneof(fc.constantFrom('unknown', 'page', '__proto__', 'constructor', 'a[b]', 'a[]', '', 'n'.repeat(3000)), fc.string({ minLength: 1, maxLength: 10, unit: 'binary' })), hostileParameterStrings).map(([name, value]) => (parts: Parts) => ({
      parts: { ...parts, query: [...parts.query, [name, value] as [string, string]] },
      mutation: `extra query ${preview(name)}=${preview(value)}`,
    })),
  ];
  if (parameters.length > 0) {
    const parameter = fc.constantFrom(...parameters);
    kinds.push(
      fc.tuple(parameter, hostileParameterStrings).map(([declared, value]) => (parts: Parts) => ({
        parts: { ...parts, query: [...parts.query.filter(([name]) => name !== declared.name), [declared.name, value] as [string, string]] },
        mutation: `query ${declared.name}=${preview(value)}`,
      })),
      // The same parameter twice: Express reads it as an array.
      fc.tuple(parameter, fc.constantFrom('1', 'a', '')).map(([declared, value]) => (parts: Parts) => ({
        parts: { ...parts, query: [...parts.query, [declared.name, value] as [string, string], [declared.name, value] as [string, string]] },
        mutation: `query ${declared.name} sent twice`,
      })),
      parameter.map((declared) => (parts: Parts) => ({
        parts: { ...parts, query: parts.query.filter(([name]) => name !== declared.name) },
        mutation: `query ${declared.name} left out`,
      })),
    );
  }
  return fc.oneof(...kinds);
}

/** A JSON or form body changed in one place, replaced, broken, sent as another type, or left out. */
function bodyMutation(operation: Operation) {
  const valueMutations = fc.oneof(
    fc.constant((value: unknown) => ({ value: dropField(value), mutation: 'body without one field' })),
    fc.tuple(fc.nat(), hostileValues).map(([index, hostile]) => (value: unknown) => ({ value: replaceField(value, index, hostile), mutation: `body field replaced by ${preview(hostile)}` })),
    fc.tuple(fc.constantFrom('extra', '__proto__', 'constructor', 'é😀', ''), hostileValues).map(([name, hostile]) => (value: unknown) => ({
      value: isObject(value) ? { ...value, [name]: hostile } : value,
      mutation: `body with extra field ${preview(name)}`,
    })),
    hostileValues.map((hostile) => () => ({ value: hostile, mutation: `body replaced by ${preview(hostile)}` })),
  );
  return fc.oneof(
    valueMutations.map((change) => (parts: Parts) => {
      const changed = change(parts.body?.value ?? {});
      return { parts: { ...parts, body: { mediaType: parts.body?.mediaType ?? operation.bodies[0]!.mediaType, value: changed.value } }, mutation: changed.mutation };
    }),
    brokenJson('{"id": 1, "nome": "São Paulo", "lista": [1, 2, 3]}').map((text) => (parts: Parts) => ({
      parts: { ...parts, body: { mediaType: 'application/json', value: new RawBody(text) } },
      mutation: `broken JSON ${preview(text)}`,
    })),
    fc.integer({ min: 0, max: 200 }).map((cut) => (parts: Parts) => {
      const text = jsonText(parts.body?.value ?? {});
      return { parts: { ...parts, body: { mediaType: 'application/json', value: new RawBody(text.slice(0, Math.max(0, text.length - 1 - cut))) } }, mutation: 'truncated JSON' };
    }),
    wrongContentTypes.map((mediaType) => (parts: Parts) => ({
      parts: { ...parts, body: { mediaType, value: parts.body?.value ?? {} } },
      mutation: `Content-Type ${mediaType}`,
    })),
    fc.constant((parts: Parts) => ({ parts: { ...parts, body: undefined }, mutation: 'no body' })),
    fc.constant((parts: Parts) => ({ parts: { ...parts, body: { mediaType: 'application/json', value: new RawBody('x'.repeat(HUGE_LENGTH * 11)) } }, mutation: 'body over 1 MiB' })),
  );
}

function unexpectedBody() {
  return fc.tuple(fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded'), hostileValues).map(([mediaType, value]) => (parts: Parts) => ({
    parts: { ...parts, body: { mediaType, value } },
    mutation: `undeclared ${mediaType} body`,
  }));
}

/** Text sent exactly as is, whatever the Content-Type. */
class RawBody {
  constructor(readonly text: string) {}
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function dropField(value: unknown): unknown {
  if (!isObject(value)) return value;
  const [first] = Object.keys(value);
  if (first === undefined) return value;
  const { [first]: _dropped, ...rest } = value;
  return rest;
}

function replaceField(value: unknown, index: number, replacement: unknown): unknown {
  if (!isObject(value)) return replacement;
  const keys = Object.keys(value);
  if (keys.length === 0) return { field: replacement };
  return { ...value, [keys[index % keys.length]!]: replacement };
}

function encodeBody(mediaType: string, value: unknown): string {
  if (value instanceof RawBody) return value.text;
  if (mediaType.startsWith('application/x-www-form-urlencoded')) {
    return isObject(value) ? new URLSearchParams(Object.entries(value).map(([key, field]) => [key, asText(field)])).toString() : asText(value);
  }
  if (mediaType.startsWith('text/')) return asText(value);
  return jsonText(value);
}

/**
 * A long poll's `wait` (listInboxChanges: up to 25 s with nothing new) kept to 1 s: a valid request may
 * wait as long as it asks, and at 25 s a few of them would hold the run past the request timeout.
 */
function shortWait(operation: Operation, parameter: Parameter, value: unknown): unknown {
  return operation.operationId === 'listInboxChanges' && parameter.name === 'wait' && typeof value === 'number' ? Math.min(value, 1) : value;
}

/** Fills in the path template (percent-encoding the values) and the query string. */
function render(operation: Operation, parts: Parts, caller: Caller, mutation: string): FuzzRequest {
  const path = operation.template.replace(/\{([^}]+)\}/g, (_whole, name: string) => encodePathValue(parts.path[name] ?? ''));
  const query = parts.query.map(([name, value]) => `${encodeURIComponent(wellFormed(name))}=${encodeQueryValue(value)}`).join('&');
  const headers = { ...parts.headers };
  let body: string | undefined;
  if (parts.body) {
    headers['Content-Type'] = parts.body.mediaType;
    body = encodeBody(parts.body.mediaType, parts.body.value);
  }
  return { method: operation.method, target: query ? `${path}?${query}` : path, headers, body, caller, mutation };
}

/** Values that start with `%` are sent as they are (`%`, `%zz`, `%E0%A4%A`), to test the server's own decoding. */
const encodePathValue = (value: string) => (value.startsWith('%') ? value : encodeURIComponent(wellFormed(value)));

/** Lone surrogates cannot be percent-encoded (UTF-8 has no bytes for them): they become U+FFFD, as a browser sends them. */
const wellFormed = (value: string) => value.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
const encodeQueryValue = encodePathValue;

/** A short description of a value for the failure report (huge and deep values are summarised). */
export function preview(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : jsonText(value);
  return text.length > 80 ? `${text.slice(0, 60)}… (${text.length} chars)` : text;
}
