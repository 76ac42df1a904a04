/**
 * The API's own documentation (the `docs` tag): the contract the server validates against, as YAML
 * (`/openapi.yaml`) and as JSON (`/openapi.json`), and an interactive page (`/docs`) that renders it
 * with Swagger UI. The page opens on the operations (their filter and Authorize on the first screen,
 * under the opening of `info.description`, which is many screens long); the whole description is the
 * guide, `/docs/guide`, rendered from the same document by the same script. Everything the page
 * loads comes from this server (swagger-ui-dist's files, our script and styles under `/docs/`), so it
 * works without internet access, and every link in it is relative, so it works under any BASE_PATH and
 * behind a proxy that adds a prefix of its own:
 *
 * - the page is `<base>/docs` (no trailing slash): `docs/<asset>` is then `<base>/docs/<asset>` and
 *   `openapi.json` is `<base>/openapi.json`; `<base>/docs/` redirects to it (301, relative `Location`);
 *   the guide, `<base>/docs/guide`, links `<asset>` and `../openapi.json`;
 * - the three operations go through the contract pipeline like every other one (request id, rate limit,
 *   validation, metrics by operationId); the assets and the guide are not operations of the contract and
 *   are answered by `docsAssets` before the path guard, GET and HEAD only.
 *
 * The page gets a Content-Security-Policy of its own (the guide too) instead of the API's "nothing
 * allowed": scripts, styles and fetches from this origin only (no inline script: the initializer is a
 * file), plus `data:` images, which swagger-ui.css uses for its icons. Every answer carries an ETag
 * (304 on If-None-Match).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Request, RequestHandler, Response } from 'express';
import { stringify } from 'yaml';
import type { OpenApiDocument } from '../http/contract.js';
import { ifNoneMatchHits } from '../http/conditional.js';
import { methodNotAllowed } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import { projectRoot } from '../project-root.js';

/** The page and the document change only with the server's version. */
export const DOCS_CACHE_CONTROL = 'public, max-age=60';
/** Swagger UI's files change only when the package is upgraded. */
export const ASSET_CACHE_CONTROL = 'public, max-age=3600';

/** The page's policy: same-origin scripts, styles and fetches; `data:` images (swagger-ui.css's icons); nothing inline. */
export const DOCS_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join(';');

const ASSETS_ALLOW = 'GET, HEAD, OPTIONS';

interface Representation {
  body: Buffer;
  contentType: string;
  etag: string;
}

function representation(body: Buffer, contentType: string): Representation {
  return { body, contentType, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/** Sends a fixed representation with its ETag, or 304 when the client already has it. */
function sendFixed(req: Pick<Request, 'get'>, res: Response, { body, contentType, etag }: Representation, cacheControl: string): void {
  res.set('Cache-Control', cacheControl);
  res.set('ETag', etag);
  if (ifNoneMatchHits(req.get('If-None-Match'), etag)) {
    res.status(304).end();
    return;
  }
  res.status(200).set('Content-Type', contentType).send(body);
}

/** Computes a value on first use only: most requests never ask for the documentation. */
function once<T>(compute: () => T): () => T {
  let value: { computed: T } | undefined;
  return () => (value ??= { computed: compute() }).computed;
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

/**
 * The two views of the page: `operations` (`<base>/docs`: the operations, their filter and Authorize
 * on the first screen, under a few lines of the contract's introduction) and `guide`
 * (`<base>/docs/guide`: the contract's whole `info.description`, rendered by the same Swagger UI).
 * The guide sits one folder deeper, so its relative links start from `<base>/docs/`.
 */
type View = 'operations' | 'guide';

function renderPage(title: string, view: View): string {
  const assets = view === 'guide' ? '' : 'docs/';
  const api = view === 'guide' ? '../' : '';
  const other = view === 'guide' ? '<a href="../docs">operations</a>' : '<a href="docs/guide">guide</a>';
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" type="image/png" href="${assets}favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="${assets}favicon-16x16.png" sizes="16x16">
<link rel="stylesheet" href="${assets}swagger-ui.css">
<link rel="stylesheet" href="${assets}palanque-docs.css">
</head>
<body data-view="${view}">
<header class="palanque-docs-bar">${escapeHtml(title)} &middot;${other} &middot; the OpenAPI document:<a href="${api}openapi.yaml">openapi.yaml</a><a href="${api}openapi.json">openapi.json</a></header>
<noscript><p class="palanque-docs-problem">This page needs JavaScript to render the API description; read it directly as <a href="${api}openapi.yaml">openapi.yaml</a> or <a href="${api}openapi.json">openapi.json</a>.</p></noscript>
<div id="swagger-ui"></div>
<script src="${assets}swagger-ui-bundle.js"></script>
<script src="${assets}palanque-docs.js"></script>
</body>
</html>
`;
}

/** The page's title, from the contract's info. */
function titleOf(contract: OpenApiDocument, view: View): string {
  const info = (contract.info ?? {}) as { title?: string; version?: string };
  return `${info.title ?? 'API'} ${info.version ?? ''} ${view === 'guide' ? 'guide' : 'documentation'}`.replace(/\s+/g, ' ');
}

/** The document's two forms, made on first request and kept per contract object (the apps of a process share it). */
const documents = new WeakMap<object, { yaml: () => Representation; json: () => Representation }>();

function documentOf(contract: OpenApiDocument): { yaml: () => Representation; json: () => Representation } {
  let forms = documents.get(contract);
  if (!forms) {
    forms = {
      yaml: once(() => representation(Buffer.from(stringify(contract, { aliasDuplicateObjects: false })), 'application/yaml')),
      json: once(() => representation(Buffer.from(JSON.stringify(contract)), 'application/json; charset=utf-8')),
    };
    documents.set(contract, forms);
  }
  return forms;
}

/** The handlers of getApiDocs, getOpenApiYaml and getOpenApiJson, on the contract the validator uses (one whole document). */
export function docsHandlers(contract: OpenApiDocument): Pick<Required<OperationHandlers>, 'getApiDocs' | 'getOpenApiYaml' | 'getOpenApiJson'> {
  const { yaml, json } = documentOf(contract);
  const page = representation(Buffer.from(renderPage(titleOf(contract, 'operations'), 'operations')), 'text/html; charset=utf-8');

  return {
    async getApiDocs(req, res) {
      res.set('Content-Security-Policy', DOCS_PAGE_CSP);
      sendFixed(req, res, page, DOCS_CACHE_CONTROL);
    },
    async getOpenApiYaml(req, res) {
      sendFixed(req, res, yaml(), DOCS_CACHE_CONTROL);
    },
    async getOpenApiJson(req, res) {
      sendFixed(req, res, json(), DOCS_CACHE_CONTROL);
    },
  };
}

const swaggerUiDist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const ownAssets = join(projectRoot, 'src', 'docs', 'assets');

/** The files under `/docs/`, by name: Swagger UI's (never its index.html or its petstore initializer) and ours. */
const ASSET_FILES: Record<string, { file: string; contentType: string }> = {
  'swagger-ui-bundle.js': { file: join(swaggerUiDist, 'swagger-ui-bundle.js'), contentType: 'text/javascript; charset=utf-8' },
  'swagger-ui-bundle.js.map': { file: join(swaggerUiDist, 'swagger-ui-bundle.js.map'), contentType: 'application/json; charset=utf-8' },
  'swagger-ui.css': { file: join(swaggerUiDist, 'swagger-ui.css'), contentType: 'text/css; charset=utf-8' },
  'swagger-ui.css.map': { file: join(swaggerUiDist, 'swagger-ui.css.map'), contentType: 'application/json; charset=utf-8' },
  'favicon-32x32.png': { file: join(swaggerUiDist, 'favicon-32x32.png'), contentType: 'image/png' },
  'favicon-16x16.png': { file: join(swaggerUiDist, 'favicon-16x16.png'), contentType: 'image/png' },
  'palanque-docs.js': { file: join(ownAssets, 'palanque-docs.js'), contentType: 'text/javascript; charset=utf-8' },
  'palanque-docs.css': { file: join(ownAssets, 'palanque-docs.css'), contentType: 'text/css; charset=utf-8' },
};

/** The guide's name under `<base>/docs/`: a page like `/docs`, not a file of Swagger UI's. */
export const GUIDE_PAGE = 'guide';

/**
 * The page's assets under `<base>/docs/`, the guide (`<base>/docs/guide`: the contract's
 * `info.description` in full, on a page like `/docs`, under the same policy), and the redirect of
 * `<base>/docs/` to the page. Read from disk on first request and kept in memory. Anything else under
 * `/docs/` goes on to the path guard (404). The guide is not an operation of the contract, like the
 * assets: it renders a part of `/openapi.json`, which is one.
 */
export function docsAssets(basePath: string, contract: OpenApiDocument): RequestHandler {
  const prefix = `${basePath}/docs/`;
  const loaded = new Map<string, () => Representation>(
    Object.entries(ASSET_FILES).map(([name, { file, contentType }]) => [name, once(() => representation(readFileSync(file), contentType))]),
  );
  const guide = once(() => representation(Buffer.from(renderPage(titleOf(contract, 'guide'), 'guide')), 'text/html; charset=utf-8'));
  return (req, res, next) => {
    if (!req.path.startsWith(prefix)) return next();
    const name = req.path.slice(prefix.length);
    const asset = loaded.get(name);
    if (name !== '' && name !== GUIDE_PAGE && !asset) return next();
    if (req.method === 'OPTIONS') {
      res.set('Allow', ASSETS_ALLOW).status(200).end();
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return next(methodNotAllowed(req.method, req.path, ASSETS_ALLOW));
    if (name === GUIDE_PAGE) {
      res.set('Content-Security-Policy', DOCS_PAGE_CSP);
      sendFixed(req, res, guide(), DOCS_CACHE_CONTROL);
      return;
    }
    if (!asset) {
      // `<base>/docs/` -> `<base>/docs`, relative so that it holds behind a proxy that adds a prefix.
      res.redirect(301, '../docs');
      return;
    }
    sendFixed(req, res, asset(), ASSET_CACHE_CONTROL);
  };
}
