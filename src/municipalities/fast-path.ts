/**
 * The fast path of GET/HEAD /api/municipios/, the front end's hottest read.
 *
 * The full pipeline (express-openapi-validator, then the handler) costs several times more than the
 * work itself, and the list only changes with an import or a create. So this middleware answers the
 * requests it can prove valid, from pages rendered once:
 * - a request qualifies only if every query parameter is one the contract declares for the operation,
 *   appears once, and passes that parameter's schema from the spec, and the request has no body;
 * - each rendered page is validated against the contract's MunicipalityPage schema (when response
 *   validation is on) before it is cached, so every byte served has passed the contract once;
 * - a request target (path and query as sent, under the same public URL) that qualified once is known by
 *   its text afterwards: parsing and checking the query again was a tenth of the path's time.
 * Anything else (an invalid parameter, a page past the end, data not loaded, a page that fails
 * validation) goes on to the full pipeline, which answers with the same errors as any operation.
 * test/municipalities-fast-path.test.ts proves both paths give the same answers.
 */
import type { RequestHandler } from 'express';
import type { ValidateFunction } from 'ajv';
import type { Logger } from '../logger.js';
import { ifNoneMatchHits } from '../http/conditional.js';
import type { ContractSchemas } from '../http/contract-schemas.js';
import { apiBaseUrl, type PublicUrlSettings } from '../http/public-url.js';
import type { MunicipalityCatalog } from './catalog.js';
import { CACHE_CONTROL, LIST_PATH, etagOf, renderListBody } from './render.js';

interface RenderedPage {
  body: Buffer;
  etag: string;
}

/** Enough for every page of every state under a few public hosts; beyond it the cache starts over. */
const MAX_CACHED_PAGES = 4096;
const MAX_IF_NONE_MATCH_LENGTH = 256;

export interface FastPathOptions {
  catalog: MunicipalityCatalog;
  schemas: ContractSchemas;
  urls: PublicUrlSettings;
  validateResponses: boolean;
  logger: Logger;
}

export function municipalityListFastPath({ catalog, schemas, urls, validateResponses, logger }: FastPathOptions): RequestHandler {
  const path = urls.basePath + LIST_PATH;
  const parameterSchemas = schemas.queryParameters(LIST_PATH, 'get');
  const pageSchema = validateResponses ? schemas.component('MunicipalityPage') : undefined;
  const cache = new Map<string, RenderedPage>();
  /** The page each request target (path and query, as sent) was answered with: a target seen before needs no parsing. */
  const byTarget = new Map<string, RenderedPage>();
  let cachedVersion = catalog.version;

  /** The rendered page a query asks for, or undefined if the query is not valid or the page does not exist. */
  const pageFor = (sent: Record<string, unknown>, listUrl: string): RenderedPage | undefined => {
    const query = validQuery(sent, parameterSchemas);
    if (!query) return undefined;
    const key = `${listUrl}|${query.codigo_uf ?? ''}|${query.page ?? 1}`;
    let rendered = cache.get(key);
    if (!rendered) {
      rendered = render(catalog, query, listUrl, pageSchema);
      if (!rendered) return undefined;
      if (cache.size >= MAX_CACHED_PAGES) cache.clear();
      cache.set(key, rendered);
    }
    return rendered;
  };

  return (req, res, next) => {
    if (req.path !== path || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
    if (res.locals.invalidRequestId || hasBody(req.headers) || catalog.size === 0) return next();
    const ifNoneMatch = req.get('If-None-Match');
    if (ifNoneMatch && ifNoneMatch.length > MAX_IF_NONE_MATCH_LENGTH) return next();

    if (cachedVersion !== catalog.version) {
      cache.clear();
      byTarget.clear();
      cachedVersion = catalog.version;
    }
    const listUrl = apiBaseUrl(req, urls) + LIST_PATH;
    const target = `${listUrl}|${req.url}`;
    let rendered = byTarget.get(target);
    if (!rendered) {
      rendered = pageFor(req.query as Record<string, unknown>, listUrl);
      if (!rendered) return next();
      if (byTarget.size >= MAX_CACHED_PAGES) byTarget.clear();
      byTarget.set(target, rendered);
    }

    res.locals.operationId = 'listMunicipalities';
    res.setHeader('Cache-Control', CACHE_CONTROL);
    res.setHeader('ETag', rendered.etag);
    if (ifNoneMatchHits(ifNoneMatch, rendered.etag)) {
      res.statusCode = 304;
      res.end();
    } else {
      res.statusCode = 200;
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('Content-Length', rendered.body.length);
      res.end(rendered.body); // Node sends no body for HEAD, keeping the headers
    }
    logCompletion(logger, req.method, req.originalUrl, res.statusCode, res.locals.requestId);
  };
}

interface ListQuery {
  codigo_uf?: number;
  page?: number;
}

/** The query as the contract types it, or undefined if any parameter is unknown, repeated or invalid. */
function validQuery(raw: Record<string, unknown>, schemas: Map<string, ValidateFunction>): ListQuery | undefined {
  const query: Record<string, number> = {};
  for (const [name, value] of Object.entries(raw)) {
    const validate = schemas.get(name);
    if (!validate || typeof value !== 'string' || !/^-?\d{1,9}$/.test(value)) return undefined;
    const number = Number(value);
    if (!validate(number)) return undefined;
    query[name] = number;
  }
  return query;
}

function render(catalog: MunicipalityCatalog, query: ListQuery, listUrl: string, pageSchema: ValidateFunction | undefined): RenderedPage | undefined {
  const page = catalog.page(query.codigo_uf, query.page ?? 1);
  if (!page) return undefined;
  const body = renderListBody(page, query.codigo_uf, listUrl);
  if (pageSchema && !pageSchema(body)) return undefined; // the full pipeline answers 500 and logs it
  const serialised = JSON.stringify(body);
  return { body: Buffer.from(serialised), etag: etagOf(serialised) };
}

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
}

/** The same line the request logger writes for other requests, without its per-request cost. */
function logCompletion(logger: Logger, method: string, url: string, statusCode: number, requestId: unknown): void {
  if (logger.isLevelEnabled('info')) {
    logger.info({ request_id: requestId, operation_id: 'listMunicipalities', req: { method, url }, res: { statusCode } }, 'request completed');
  }
}
