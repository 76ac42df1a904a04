/**
 * The changes between two bundled OpenAPI 3.1 documents, each rated for a client written against the
 * first: breaking (the client can fail) or not (additions and widenings it can ignore). Requests are
 * judged by what they still accept, responses by what they may now answer, everywhere in a body: inside
 * array items, unions and allOf parts, and on any method's body (GET ones included).
 *
 * Every change names its rule, the operation (operationId) and a JSON pointer: the operation's place in
 * the document (`#/paths/<path>/<method>`), then the way to the value through the body as a client sees
 * it: `$ref`s followed and `allOf`/`oneOf`/`anyOf` merged, so `.../schema/properties/data/items/properties/id`;
 * a parameter is `.../parameters/<in>/<name>`. The error codes' enum is judged once, at its component.
 */
import { asArr, asObj, deref, esc, type Obj, view, type View } from './schema-view.js';

/** Rules whose changes break a client; each is proven by test/contract-check.test.ts. */
export const BREAKING_RULES = {
  'operation-removed': 'an operation was removed',
  'parameter-removed': 'a parameter was removed',
  'parameter-required': 'a parameter was made required, or a required one added',
  'request-body-required': 'the request body was made required',
  'request-field-required': 'a request body field was made required, or a required one added',
  'request-type-narrowed': 'a request value accepts fewer types, a format, or an enum it did not have',
  'request-closed': 'a request body (or an object in it) refuses fields it did not name (additionalProperties: false)',
  'request-field-removed': 'a field was removed from a closed request object',
  'enum-value-removed': 'an enum value was removed',
  'response-field-removed': 'a response field was removed',
  'response-field-optional': 'a response field is no longer required',
  'response-field-nullable': 'a response field may now be null',
  'response-type-changed': 'a response value may have another type or format',
  'response-enum-widened': 'a response enum that clients switch on gained values',
  'error-code-removed': 'an error code was removed',
  'response-status-removed': 'a response status was removed',
  'response-media-removed': 'a response media type was removed',
} as const;
export type BreakingRule = keyof typeof BREAKING_RULES;

/** Changes a client can ignore; listed in the changelog, and what makes the SDK's minor move. */
export const ADDITIVE_KINDS = [
  'operation-added',
  'parameter-added',
  'request-field-added',
  'request-widened',
  'enum-value-added',
  'error-code-added',
  'response-field-added',
  'response-narrowed',
  'response-status-added',
] as const;
export type AdditiveKind = (typeof ADDITIVE_KINDS)[number];

export interface Change {
  rule: BreakingRule | AdditiveKind;
  breaking: boolean;
  pointer: string;
  operation: string;
  message: string;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

type Direction = 'request' | 'response';

class Differ {
  readonly changes = new Map<string, Change>();
  constructor(
    readonly base: Obj,
    readonly head: Obj,
  ) {}

  add(rule: Change['rule'], pointer: string, operation: string, message: string) {
    const breaking = rule in BREAKING_RULES;
    const key = `${rule}|${pointer}|${operation}`;
    if (!this.changes.has(key)) this.changes.set(key, { rule, breaking, pointer, operation, message });
  }

  operations(doc: Obj) {
    const out = new Map<string, { path: string; method: string; op: Obj; shared: unknown[] }>();
    for (const [path, rawItem] of Object.entries(asObj(doc.paths))) {
      const item = deref(doc, rawItem).node;
      for (const method of METHODS) {
        if (!(method in item)) continue;
        // A path parameter's name is not part of the operation's identity: /a/{id} is /a/{x}.
        out.set(`${method} ${path.replace(/\{[^}]*\}/g, '{}')}`, { path, method, op: asObj(item[method]), shared: asArr(item.parameters) });
      }
    }
    return out;
  }

  run() {
    const before = this.operations(this.base);
    const after = this.operations(this.head);
    for (const [key, b] of before) {
      const id = String(b.op.operationId ?? key);
      const pointer = `#/paths/${esc(b.path)}/${b.method}`;
      const a = after.get(key);
      if (!a) this.add('operation-removed', pointer, id, `${b.method.toUpperCase()} ${b.path} was removed`);
      else this.operation(`#/paths/${esc(a.path)}/${a.method}`, String(a.op.operationId ?? key), b, a);
    }
    for (const [key, a] of after) {
      if (!before.has(key)) {
        const id = String(a.op.operationId ?? key);
        this.add('operation-added', `#/paths/${esc(a.path)}/${a.method}`, id, `${a.method.toUpperCase()} ${a.path} was added`);
      }
    }
    this.errorCodes();
    return [...this.changes.values()];
  }

  parameters(doc: Obj, shared: unknown[], own: unknown[]) {
    const out = new Map<string, Obj>();
    for (const raw of [...shared, ...own]) {
      const p = deref(doc, raw).node;
      out.set(`${String(p.in)}/${String(p.name)}`, p);
    }
    return out;
  }

  operation(pointer: string, id: string, b: { op: Obj; shared: unknown[] }, a: { op: Obj; shared: unknown[] }) {
    const before = this.parameters(this.base, b.shared, asArr(b.op.parameters));
    const after = this.parameters(this.head, a.shared, asArr(a.op.parameters));
    for (const [key, p] of before) {
      const at = `${pointer}/parameters/${esc(key.split('/')[0]!)}/${esc(String(p.name))}`;
      const q = after.get(key);
      if (!q) this.add('parameter-removed', at, id, `parameter ${key} was removed`);
      else {
        if (q.required === true && p.required !== true) this.add('parameter-required', at, id, `parameter ${key} is now required`);
        if (p.required === true && q.required !== true) this.add('request-widened', at, id, `parameter ${key} is now optional`);
        this.schema('request', `${at}/schema`, id, p.schema, q.schema);
      }
    }
    for (const [key, q] of after) {
      if (before.has(key)) continue;
      const at = `${pointer}/parameters/${esc(key.split('/')[0]!)}/${esc(String(q.name))}`;
      if (q.required === true) this.add('parameter-required', at, id, `required parameter ${key} was added`);
      else this.add('parameter-added', at, id, `optional parameter ${key} was added`);
    }
    this.requestBody(`${pointer}/requestBody`, id, b.op.requestBody, a.op.requestBody);
    this.responses(`${pointer}/responses`, id, asObj(b.op.responses), asObj(a.op.responses));
  }

  requestBody(pointer: string, id: string, rawBefore: unknown, rawAfter: unknown) {
    if (rawAfter === undefined) return;
    const after = deref(this.head, rawAfter).node;
    const before = rawBefore === undefined ? undefined : deref(this.base, rawBefore).node;
    if (after.required === true && before?.required !== true) this.add('request-body-required', pointer, id, 'the request body is now required');
    if (!before) return;
    const beforeContent = asObj(before.content);
    const afterContent = asObj(after.content);
    for (const [media, m] of Object.entries(beforeContent)) {
      const at = `${pointer}/content/${esc(media)}`;
      const n = afterContent[media];
      if (n === undefined) this.add('request-type-narrowed', at, id, `a ${media} body is no longer accepted`);
      else this.schema('request', `${at}/schema`, id, asObj(m).schema, asObj(n).schema);
    }
  }

  responses(pointer: string, id: string, before: Obj, after: Obj) {
    for (const [status, rawB] of Object.entries(before)) {
      const at = `${pointer}/${esc(status)}`;
      if (!(status in after)) {
        this.add('response-status-removed', at, id, `response ${status} was removed`);
        continue;
      }
      const b = asObj(deref(this.base, rawB).node.content);
      const a = asObj(deref(this.head, after[status]).node.content);
      for (const [media, m] of Object.entries(b)) {
        const n = a[media];
        if (n === undefined) this.add('response-media-removed', `${at}/content/${esc(media)}`, id, `response ${status} no longer answers ${media}`);
        else this.schema('response', `${at}/content/${esc(media)}/schema`, id, asObj(m).schema, asObj(n).schema);
      }
    }
    for (const status of Object.keys(after)) {
      if (!(status in before)) this.add('response-status-added', `${pointer}/${esc(status)}`, id, `response ${status} was added`);
    }
  }

  schema(dir: Direction, pointer: string, id: string, rawBefore: unknown, rawAfter: unknown, depth = 0) {
    if (rawBefore === undefined || rawAfter === undefined || depth > 30) return;
    const b = view(this.base, rawBefore);
    const a = view(this.head, rawAfter);
    this.types(dir, pointer, id, b, a);
    this.enums(dir, pointer, id, b, a);
    this.objects(dir, pointer, id, b, a, depth);
    if (b.items && a.items) this.schema(dir, `${pointer}/items`, id, b.items, a.items, depth + 1);
  }

  types(dir: Direction, pointer: string, id: string, b: View, a: View) {
    const covers = (types: string[] | undefined, t: string) =>
      types === undefined || types.includes(t) || (t === 'integer' && types.includes('number'));
    const lost = b.types === undefined ? (a.types === undefined ? [] : ['any type']) : b.types.filter((t) => !covers(a.types, t));
    const gained = a.types === undefined ? (b.types === undefined ? [] : ['any type']) : a.types.filter((t) => !covers(b.types, t));
    if (dir === 'request') {
      if (lost.length > 0) this.add('request-type-narrowed', pointer, id, `no longer accepts ${lost.join(', ')}`);
      else if (gained.length > 0) this.add('request-widened', pointer, id, `now also accepts ${gained.join(', ')}`);
      if (a.format !== undefined && a.format !== b.format) this.add('request-type-narrowed', pointer, id, `now requires format ${a.format}`);
      return;
    }
    if (gained.includes('null')) this.add('response-field-nullable', pointer, id, 'may now be null');
    const other = gained.filter((t) => t !== 'null');
    if (other.length > 0) this.add('response-type-changed', pointer, id, `may now be ${other.join(', ')}`);
    else if (lost.length > 0) this.add('response-narrowed', pointer, id, `is no longer ${lost.join(', ')}`);
    if (b.format !== undefined && a.format !== b.format) this.add('response-type-changed', pointer, id, `format ${b.format} is now ${a.format ?? 'unstated'}`);
  }

  enums(dir: Direction, pointer: string, id: string, b: View, a: View) {
    // The error codes are judged once, at their component (errorCodes below).
    if (b.errorCodes || a.errorCodes) return;
    const has = (list: unknown[], v: unknown) => list.some((w) => JSON.stringify(w) === JSON.stringify(v));
    const show = (vs: unknown[]) => vs.map((v) => JSON.stringify(v)).join(', ');
    if (b.enum === undefined && a.enum === undefined) return;
    if (b.enum === undefined) {
      if (dir === 'request') this.add('request-type-narrowed', pointer, id, `now limited to ${show(a.enum!)}`);
      else this.add('response-narrowed', pointer, id, `now limited to ${show(a.enum!)}`);
      return;
    }
    if (a.enum === undefined) {
      if (dir === 'request') this.add('request-widened', pointer, id, 'no longer limited to an enum');
      else if (!a.extensible) this.add('response-enum-widened', pointer, id, `no longer limited to ${show(b.enum)}`);
      return;
    }
    const removed = b.enum.filter((v) => !has(a.enum!, v));
    const added = a.enum.filter((v) => !has(b.enum!, v));
    if (removed.length > 0) this.add('enum-value-removed', pointer, id, `lost ${show(removed)}`);
    if (added.length === 0) return;
    if (dir === 'response' && !a.extensible) this.add('response-enum-widened', pointer, id, `gained ${show(added)}`);
    else this.add('enum-value-added', pointer, id, `gained ${show(added)}`);
  }

  objects(dir: Direction, pointer: string, id: string, b: View, a: View, depth: number) {
    for (const [name, schema] of b.properties) {
      const at = `${pointer}/properties/${esc(name)}`;
      const next = a.properties.get(name);
      if (next) {
        if (dir === 'response' && b.required.has(name) && !a.required.has(name)) {
          this.add('response-field-optional', at, id, `${name} is no longer required`);
        }
        if (dir === 'request' && !b.required.has(name) && a.required.has(name)) {
          this.add('request-field-required', at, id, `${name} is now required`);
        }
        if (dir === 'request' && b.required.has(name) && !a.required.has(name)) this.add('request-widened', at, id, `${name} is now optional`);
        if (dir === 'response' && !b.required.has(name) && a.required.has(name)) this.add('response-narrowed', at, id, `${name} is now always present`);
        this.schema(dir, at, id, schema, next, depth + 1);
      } else if (dir === 'response') {
        this.add('response-field-removed', at, id, `${name} was removed`);
      } else if (a.closed) {
        this.add('request-field-removed', at, id, `${name} is no longer accepted`);
      }
    }
    for (const name of a.properties.keys()) {
      if (b.properties.has(name)) continue;
      const at = `${pointer}/properties/${esc(name)}`;
      if (dir === 'request' && a.required.has(name)) this.add('request-field-required', at, id, `required ${name} was added`);
      else this.add(dir === 'request' ? 'request-field-added' : 'response-field-added', at, id, `${name} was added`);
    }
    if (dir === 'request' && !b.closed && a.closed) this.add('request-closed', pointer, id, 'unknown fields are now refused');
    if (dir === 'request' && b.closed && !a.closed) this.add('request-widened', pointer, id, 'unknown fields are now accepted');
  }

  /** The error codes: clients must expect new ones (ErrorCode says to branch on them), not lose one. */
  errorCodes() {
    const pointer = '#/components/schemas/ErrorCode';
    const b = asArr(asObj(asObj(asObj(this.base.components).schemas).ErrorCode).enum);
    const a = asArr(asObj(asObj(asObj(this.head.components).schemas).ErrorCode).enum);
    // Each code at its place in the enum that holds it: the base's for a removed one, the head's for a new one.
    b.forEach((code, i) => {
      if (!a.includes(code)) this.add('error-code-removed', `${pointer}/enum/${i}`, '*', `error code ${String(code)} was removed`);
    });
    a.forEach((code, i) => {
      if (!b.includes(code)) this.add('error-code-added', `${pointer}/enum/${i}`, '*', `error code ${String(code)} was added`);
    });
  }
}

/** Every change from base to head, breaking ones first, then by pointer. */
export function diffContracts(base: Obj, head: Obj): Change[] {
  return new Differ(base, head)
    .run()
    .sort((x, y) => Number(y.breaking) - Number(x.breaking) || x.pointer.localeCompare(y.pointer) || x.rule.localeCompare(y.rule));
}
