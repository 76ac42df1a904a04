/**
 * The contract as the server uses it: the parsed document (sdk/openapi.json, the files of spec/ bundled
 * into one by `npm run generate`), and a route table that says which methods each path has, for 404,
 * 405, HEAD and OPTIONS, which the validator does not cover.
 */
import { readFileSync, statSync } from 'node:fs';
import { match, type MatchFunction } from 'path-to-regexp';
import { parse } from 'yaml';
import { contractFile } from '../project-root.js';

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** The last parse of each contract file, with the modification time it was read at. */
const parsed = new Map<string, { version: string; document: OpenApiDocument }>();

/**
 * The contract file, parsed, as one object shared by every caller in this process: it must never be
 * changed. A file is one whole document, every `$ref` inside it: JSON (the bundle), or YAML. It is
 * parsed again only when the file changed (the hybrid mode may serve a copy being edited), which gives a
 * new object: what is built from the contract can be kept per object.
 */
export function sharedContract(file = contractFile): Readonly<OpenApiDocument> {
  const { mtimeMs, size } = statSync(file);
  const version = `${mtimeMs}:${size}`;
  let cached = parsed.get(file);
  if (cached?.version !== version) {
    const text = readFileSync(file, 'utf8');
    cached = { version, document: (file.endsWith('.json') ? JSON.parse(text) : parse(text)) as OpenApiDocument };
    parsed.set(file, cached);
  }
  return cached.document;
}

/**
 * The contract file, parsed: a fresh copy each call, for a caller that may change it. A copy costs a
 * fraction of a parse, and every app this process builds (every test app) needs one.
 */
export function loadContract(file = contractFile): OpenApiDocument {
  return structuredClone(sharedContract(file));
}

export interface Route {
  /** The path as the spec writes it, e.g. `/api/usuario/{user_id}/`. */
  template: string;
  /** Methods the spec declares, upper-case, in the spec's order. */
  methods: string[];
  /** The `Allow` header: the spec's methods, then HEAD (wherever GET is) and OPTIONS. */
  allow: string;
  /** operationId of each method (upper-case). */
  operationIds: Record<string, string>;
  matches: MatchFunction<Partial<Record<string, string>>>;
}

/** The spec's paths under a base path (`''` locally, `/v1` elsewhere). */
export function buildRoutes(document: OpenApiDocument, basePath: string): Route[] {
  return Object.entries(document.paths).map(([template, pathItem]) => {
    const methods = Object.keys(pathItem)
      .filter((key) => HTTP_METHODS.includes(key))
      .map((method) => method.toUpperCase());
    const operationIds = Object.fromEntries(
      methods.map((method) => [method, String((pathItem[method.toLowerCase()] as { operationId?: string }).operationId)]),
    );
    const allow = [...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', ');
    // Same matching rules as express-openapi-validator (path-to-regexp, case-insensitive), so both agree.
    const expressPath = (basePath + template).replace(/\{([^}]+)\}/g, ':$1');
    return { template, methods, allow, operationIds, matches: match(expressPath, { decode: decodeLeniently }) };
  });
}

/**
 * Finding the route only needs to know which template a path fits, not its values: a segment that is not
 * valid percent-encoded UTF-8 (`%FF`) stays as it was sent, for the validator to refuse, rather than
 * throwing a URIError out of every middleware that looks the route up.
 */
function decodeLeniently(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The route of a path. OpenAPI matches concrete paths before templated ones (`/api/usuario/start_social_login/`
 * before `/api/usuario/{user_id}/`), and so does the validator: among the matches, the fewest templates win.
 */
export function findRoute(routes: Route[], path: string): Route | undefined {
  return routeFinderOf(routes)(path);
}

/** Paths remembered per route table; past it the memory starts over (paths carry ids, so they are many). */
const REMEMBERED_PATHS = 10_000;
const finders = new WeakMap<Route[], (path: string) => Route | undefined>();

/**
 * Every request asks for its route more than once (the rate limiter, the path guard), and trying each
 * route's regex in turn is a visible share of a cheap read's time: each table remembers its answers.
 */
function routeFinderOf(routes: Route[]): (path: string) => Route | undefined {
  let finder = finders.get(routes);
  if (finder) return finder;
  const known = new Map<string, Route | null>();
  finder = (path) => {
    let route = known.get(path);
    if (route === undefined) {
      route = matchRoute(routes, path) ?? null;
      if (known.size >= REMEMBERED_PATHS) known.clear();
      known.set(path, route);
    }
    return route ?? undefined;
  };
  finders.set(routes, finder);
  return finder;
}

function matchRoute(routes: Route[], path: string): Route | undefined {
  const templatesIn = (route: Route) => route.template.split('{').length - 1;
  return routes.filter((route) => route.matches(path) !== false).sort((a, b) => templatesIn(a) - templatesIn(b))[0];
}
