/**
 * What a JSON Schema of a bundled OpenAPI 3.1 document says about one value, with `$ref` followed and
 * `allOf`, `oneOf` and `anyOf` merged: the types it may have, its format and enum, its properties with
 * the required ones, whether it is closed, and its items. The comparison (`diff.ts`) reads these views,
 * so a schema moved behind a `$ref`, split into an `allOf` or made nullable by `anyOf: [X, {type: null}]`
 * is judged by what it accepts or answers, not by how it is written.
 *
 * The merge is conservative where JSON Schema is not: a union (`oneOf`/`anyOf`) has the properties of any
 * branch but requires only those every branch requires, and is closed only when every branch is.
 */

export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const asObj = (v: unknown): Obj => (isObj(v) ? v : {});
export const asArr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The component whose enum is the error model's codes: growing it is not a break, removing from it is. */
export const ERROR_CODE_REF = '#/components/schemas/ErrorCode';

export interface View {
  /** undefined: any type. */
  types: string[] | undefined;
  format: string | undefined;
  enum: unknown[] | undefined;
  properties: Map<string, Obj>;
  required: Set<string>;
  /** additionalProperties (or unevaluatedProperties) false: an unknown field is refused. */
  closed: boolean;
  items: Obj | undefined;
  /** The enum says clients must expect new values (`x-extensible-enum: true`), or it is the error codes. */
  extensible: boolean;
  errorCodes: boolean;
}

/** A JSON pointer's token. */
export const esc = (token: string): string => token.replace(/~/g, '~0').replace(/\//g, '~1');

/** Follows local `$ref`s; the bundle has no other kind. */
export function deref(doc: Obj, node: unknown): { node: Obj; refs: string[] } {
  let current = asObj(node);
  const refs: string[] = [];
  while (typeof current.$ref === 'string') {
    const ref = current.$ref;
    if (refs.includes(ref) || !ref.startsWith('#/')) break;
    refs.push(ref);
    let target: unknown = doc;
    for (const raw of ref.slice(2).split('/')) {
      const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      target = asObj(target)[token];
    }
    current = asObj(target);
  }
  return { node: current, refs };
}

const emptyView = (): View => ({
  types: undefined,
  format: undefined,
  enum: undefined,
  properties: new Map(),
  required: new Set(),
  closed: false,
  items: undefined,
  extensible: false,
  errorCodes: false,
});

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** integer is a number: number ∧ integer is integer. */
function intersectTypes(a: string[], b: string[]): string[] {
  const out = new Set<string>();
  for (const t of a) {
    if (b.includes(t)) out.add(t);
    else if (t === 'integer' && b.includes('number')) out.add('integer');
    else if (t === 'number' && b.includes('integer')) out.add('integer');
  }
  return [...out];
}

/** Both hold: what an allOf means. */
function conj(a: View, b: View): View {
  const properties = new Map(a.properties);
  for (const [name, schema] of b.properties) {
    const other = properties.get(name);
    properties.set(name, other ? { allOf: [other, schema] } : schema);
  }
  return {
    types: a.types === undefined ? b.types : b.types === undefined ? a.types : intersectTypes(a.types, b.types),
    format: a.format ?? b.format,
    enum:
      a.enum === undefined ? b.enum : b.enum === undefined ? a.enum : a.enum.filter((v) => b.enum!.some((w) => same(v, w))),
    properties,
    required: new Set([...a.required, ...b.required]),
    closed: a.closed || b.closed,
    items: a.items && b.items ? { allOf: [a.items, b.items] } : (a.items ?? b.items),
    extensible: a.extensible || b.extensible,
    errorCodes: a.errorCodes || b.errorCodes,
  };
}

const onlyNull = (v: View) => v.types !== undefined && v.types.length === 1 && v.types[0] === 'null';

/** One of them holds: what a oneOf or anyOf means to a reader. */
function disj(branches: View[]): View {
  if (branches.length === 0) return emptyView();
  const types = branches.some((v) => v.types === undefined)
    ? undefined
    : [...new Set(branches.flatMap((v) => v.types ?? []))];
  // A {type: null} branch makes the value nullable; it says nothing about the shape of the others.
  const shaped = branches.filter((v) => !onlyNull(v));
  const formats = new Set(shaped.map((v) => v.format));
  const properties = new Map<string, Obj>();
  for (const v of shaped) {
    for (const [name, schema] of v.properties) {
      const other = properties.get(name);
      properties.set(name, other ? { anyOf: [...asArr(other.anyOf ?? [other]), schema] } : schema);
    }
  }
  const required = new Set(shaped[0] ? [...shaped[0].required] : []);
  for (const v of shaped.slice(1)) for (const name of [...required]) if (!v.required.has(name)) required.delete(name);
  const items = shaped.filter((v) => v.items).map((v) => v.items!);
  return {
    types,
    format: formats.size === 1 ? shaped[0]?.format : undefined,
    enum:
      shaped.length > 0 && shaped.every((v) => v.enum !== undefined)
        ? shaped.flatMap((v) => v.enum!).filter((v, i, all) => all.findIndex((w) => same(v, w)) === i)
        : undefined,
    properties,
    required,
    closed: shaped.length > 0 && shaped.every((v) => v.closed),
    items: items.length === 0 ? undefined : items.length === 1 ? items[0] : { anyOf: items },
    extensible: shaped.some((v) => v.extensible),
    errorCodes: shaped.some((v) => v.errorCodes),
  };
}

export function view(doc: Obj, schema: unknown, depth = 0): View {
  const { node, refs } = deref(doc, schema);
  const own = emptyView();
  if (depth > 40) return own;
  if (typeof node.type === 'string') own.types = [node.type];
  else if (Array.isArray(node.type)) own.types = node.type.filter((t): t is string => typeof t === 'string');
  if (typeof node.format === 'string') own.format = node.format;
  if (Array.isArray(node.enum)) own.enum = node.enum;
  if ('const' in node) own.enum = [node.const];
  for (const [name, child] of Object.entries(asObj(node.properties))) own.properties.set(name, asObj(child));
  for (const name of asArr(node.required)) if (typeof name === 'string') own.required.add(name);
  own.closed = node.additionalProperties === false || node.unevaluatedProperties === false;
  if (isObj(node.items)) own.items = node.items;
  own.extensible = node['x-extensible-enum'] === true || refs.includes(ERROR_CODE_REF);
  own.errorCodes = refs.includes(ERROR_CODE_REF);
  let out = own;
  for (const part of asArr(node.allOf)) out = conj(out, view(doc, part, depth + 1));
  for (const key of ['oneOf', 'anyOf']) {
    const branches = asArr(node[key]);
    if (branches.length > 0) out = conj(out, disj(branches.map((b) => view(doc, b, depth + 1))));
  }
  return out;
}
