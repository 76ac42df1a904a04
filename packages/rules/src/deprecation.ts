/**
 * Deprecation as a protocol (issue 45 §2). What the contract marks `deprecated: true` is answered with
 * RFC 9745's `Deprecation` header (when it was deprecated), RFC 8594's `Sunset` where the contract sets a
 * date, and RFC 8288 links to its documentation (`rel="deprecation"`) and, for an operation, to its
 * successor (`rel="successor-version"`). The server (src/http/deprecation.ts) and the example mock
 * (sdk/msw.ts) both read the bundled contract through this module, so they answer the same headers.
 *
 * The contract says it with vendor extensions beside `deprecated: true`:
 * - `x-deprecated-on` (a date, required): when it was deprecated, the Deprecation header's value;
 * - `x-sunset` (a date, optional): after which it may stop working, the Sunset header's value;
 * - `x-replaced-by` (optional): for an operation, the operationId of its successor; for a parameter or a
 *   body field, the name of the one to use instead (said in its description, not linked).
 * An operation's deprecation is answered on every request to it; a parameter's or a body field's only
 * when the request uses it, so a client that moved on hears nothing.
 */

type Node = Record<string, unknown>;

/** When something was deprecated, when it may stop working, and what replaces it. */
export interface DeprecationNote {
  /** `YYYY-MM-DD`. */
  deprecatedOn: string;
  /** `YYYY-MM-DD`, when the contract sets one. */
  sunset?: string;
  replacedBy?: string;
}

/** What is deprecated in one operation. */
export interface OperationDeprecations {
  operationId: string;
  /** Its first tag (the documentation page groups operations by it). */
  tag: string;
  /** The operation itself, when it is deprecated. */
  operation?: DeprecationNote;
  /** Its deprecated query and header parameters. */
  parameters: Array<DeprecationNote & { in: 'query' | 'header'; name: string }>;
  /** Its JSON body's deprecated fields, each by its path from the body (`*` for an array's items). */
  fields: Array<DeprecationNote & { path: string[] }>;
  /** Where the successor of a deprecated operation is (its path, or its documentation when the path has parameters). */
  successor?: string;
}

/** What a request used, as far as deprecations are concerned. */
export interface RequestUse {
  /** Whether the request sent this query parameter. */
  hasQuery(name: string): boolean;
  /** Whether the request sent this header. */
  hasHeader(name: string): boolean;
  /** The parsed JSON body, when there is one. */
  body?: unknown;
}

/** A body is walked this deep at most: the contract's bodies nest a few levels, and schemas may refer to themselves. */
const MAX_DEPTH = 8;

/**
 * The operations of a bundled contract with anything deprecated, by operationId. Throws when a
 * deprecation lacks its date or names a successor the contract does not have: the contract is wrong.
 */
export function contractDeprecations(document: Node): Map<string, OperationDeprecations> {
  const found = new Map<string, OperationDeprecations>();
  const operations = operationsOf(document);
  for (const { node, operationId } of operations) {
    const tag = String(((node.tags ?? []) as unknown[])[0] ?? 'default');
    const entry: OperationDeprecations = { operationId, tag, parameters: [], fields: [] };
    if (node.deprecated === true) {
      entry.operation = noteOf(node, operationId);
      const successor = entry.operation.replacedBy;
      if (successor !== undefined) {
        const target = operations.find((candidate) => candidate.operationId === successor);
        if (!target) throw new Error(`${operationId}: x-replaced-by names no operation of the contract ("${successor}")`);
        entry.successor = target.path.includes('{') ? docsPath(String(((target.node.tags ?? []) as unknown[])[0] ?? 'default'), successor) : target.path;
      }
    }
    for (const reference of (node.parameters ?? []) as unknown[]) {
      const parameter = resolve(document, reference);
      if (parameter.deprecated !== true) continue;
      const place = parameter.in;
      if (place !== 'query' && place !== 'header') throw new Error(`${operationId}: a ${String(place)} parameter cannot be deprecated (every request sends it)`);
      entry.parameters.push({ ...noteOf(parameter, `${operationId} ${String(parameter.name)}`), in: place, name: String(parameter.name) });
    }
    const media = (resolve(document, node.requestBody).content as Node | undefined)?.['application/json'] as Node | undefined;
    if (media?.schema !== undefined) collectFields(document, media.schema, [], operationId, entry.fields, 0);
    if (entry.operation || entry.parameters.length > 0 || entry.fields.length > 0) found.set(operationId, entry);
  }
  return found;
}

/**
 * The headers a request's answer carries: for a deprecated operation always, for a deprecated parameter or
 * field when the request used it; undefined when nothing deprecated was used. `basePath` is where the API
 * is served (`''`, `/v1`), for the links, which are relative to the request's origin.
 */
export function deprecationHeaders(entry: OperationDeprecations, use: RequestUse, basePath: string): Record<string, string> | undefined {
  const notes: DeprecationNote[] = [];
  if (entry.operation) notes.push(entry.operation);
  for (const parameter of entry.parameters) {
    if (parameter.in === 'query' ? use.hasQuery(parameter.name) : use.hasHeader(parameter.name)) notes.push(parameter);
  }
  for (const field of entry.fields) if (use.body !== undefined && isUsed(use.body, field.path)) notes.push(field);
  if (notes.length === 0) return undefined;
  // Several deprecations in one request: the earliest date says it, and the nearest sunset.
  const since = notes.map((note) => note.deprecatedOn).sort()[0]!;
  const sunsets = notes.flatMap((note) => (note.sunset === undefined ? [] : [note.sunset])).sort();
  const links = [`<${basePath}${docsPath(entry.tag, entry.operationId)}>; rel="deprecation"; type="text/html"`];
  if (entry.operation && entry.successor) links.push(`<${basePath}${entry.successor}>; rel="successor-version"`);
  const headers: Record<string, string> = { Deprecation: structuredDate(since), Link: links.join(', ') };
  if (sunsets.length > 0) headers.Sunset = httpDate(sunsets[0]!);
  return headers;
}

/** RFC 9745's value: a Structured Field Date, `@` and the seconds since 1970 of the day's start (UTC). */
export function structuredDate(day: string): string {
  return `@${Math.floor(dayStart(day) / 1000)}`;
}

/** RFC 8594's value: an HTTP-date (IMF-fixdate) of the day's start (UTC). */
export function httpDate(day: string): string {
  return new Date(dayStart(day)).toUTCString();
}

/** The documentation page's deep link of an operation (Swagger UI's `#/<tag>/<operationId>`). */
function docsPath(tag: string, operationId: string): string {
  return `/docs#/${encodeURIComponent(tag)}/${encodeURIComponent(operationId)}`;
}

function dayStart(day: string): number {
  const time = Date.parse(`${day}T00:00:00Z`);
  if (Number.isNaN(time)) throw new Error(`Not a date (YYYY-MM-DD): "${day}"`);
  return time;
}

function noteOf(node: Node, where: string): DeprecationNote {
  const deprecatedOn = dateOf(node['x-deprecated-on'], where, 'x-deprecated-on');
  if (deprecatedOn === undefined) throw new Error(`${where}: deprecated without x-deprecated-on (the date the Deprecation header says)`);
  const sunset = dateOf(node['x-sunset'], where, 'x-sunset');
  const replacedBy = node['x-replaced-by'];
  return { deprecatedOn, ...(sunset === undefined ? {} : { sunset }), ...(typeof replacedBy === 'string' ? { replacedBy } : {}) };
}

/** A date as YAML may give it (a string, or a timestamp some parsers make of an unquoted date). */
function dateOf(value: unknown, where: string, key: string): string | undefined {
  if (value === undefined) return undefined;
  const text = value instanceof Date ? value.toISOString().slice(0, 10) : String(value).slice(0, 10);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text) || Number.isNaN(Date.parse(`${text}T00:00:00Z`))) throw new Error(`${where}: ${key} is not a date (YYYY-MM-DD): "${String(value)}"`);
  return text;
}

function collectFields(document: Node, reference: unknown, path: string[], where: string, into: OperationDeprecations['fields'], depth: number): void {
  if (depth > MAX_DEPTH) return;
  const schema = resolve(document, reference);
  for (const key of ['allOf', 'oneOf', 'anyOf'] as const) {
    for (const branch of (schema[key] ?? []) as unknown[]) collectFields(document, branch, path, where, into, depth + 1);
  }
  if (schema.items !== undefined) collectFields(document, schema.items, [...path, '*'], where, into, depth + 1);
  for (const [name, property] of Object.entries((schema.properties ?? {}) as Node)) {
    const field = [...path, name];
    const resolved = resolve(document, property);
    if (resolved.deprecated === true && !into.some((known) => known.path.join('.') === field.join('.'))) {
      into.push({ ...noteOf(resolved, `${where} body ${field.join('.')}`), path: field });
    }
    collectFields(document, property, field, where, into, depth + 1);
  }
}

/** Whether a body holds the field at `path` (any value, `null` included: sending it is using it). */
function isUsed(value: unknown, path: string[]): boolean {
  if (path.length === 0) return true;
  const [head, ...rest] = path;
  if (head === '*') return Array.isArray(value) && value.some((item) => isUsed(item, rest));
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, head!)) return false;
  return isUsed((value as Node)[head!], rest);
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function operationsOf(document: Node): Array<{ node: Node; operationId: string; path: string }> {
  return Object.entries((document.paths ?? {}) as Record<string, Node>).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => {
      const node = item[method] as Node;
      return { node, operationId: String(node.operationId ?? `${method} ${path}`), path };
    }),
  );
}

/** Follows the bundle's local `$ref`s (`#/components/...`). */
function resolve(document: Node, node: unknown): Node {
  let current = (node ?? {}) as Node;
  for (let hops = 0; typeof current.$ref === 'string' && hops < 20; hops += 1) {
    const pointer = current.$ref as string;
    if (!pointer.startsWith('#/')) throw new Error(`Not a local reference: ${pointer}`);
    current = pointer
      .slice(2)
      .split('/')
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((at, part) => (at as Node | undefined)?.[part], document) as Node;
    if (current === undefined) throw new Error(`Unresolved reference: ${pointer}`);
  }
  return current;
}
