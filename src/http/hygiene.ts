/**
 * Security headers and CORS for a JSON API consumed by browser front ends.
 * - helmet's defaults, with a Content-Security-Policy that allows nothing: the API serves no pages.
 * - CORS only for the configured front-end origins (CORS_ORIGINS), allowing the headers the contract
 *   uses and exposing the ones a front end needs to read (request id, rate limits, replays, ETag, who answered).
 */
import cors from 'cors';
import type { RequestHandler } from 'express';
import helmet from 'helmet';

export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'X-Request-Id', 'Idempotency-Key', 'If-None-Match', 'If-Match'];
/** `X-Served-By` is set by the hybrid mode only (`palanque` or `mock`); exposed so a front end can show who answered. */
export const CORS_EXPOSED_HEADERS = ['X-Request-Id', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'Idempotent-Replayed', 'ETag', 'Allow', 'X-Served-By'];

/**
 * helmet's headers do not depend on the request, so they are computed once from helmet itself and set
 * in one pass: helmet runs a dozen small middlewares per request, a cost the hot read path notices.
 */
export function securityHeaders(): RequestHandler {
  const headers = headersSetBy(
    helmet({ contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } } }),
  );
  return (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    next();
  };
}

/** Headers set on every answer (the hybrid mode's `X-Served-By`). */
export function fixedHeaders(headers: Record<string, string>): RequestHandler {
  const pairs = Object.entries(headers);
  return (_req, res, next) => {
    for (const [name, value] of pairs) res.setHeader(name, value);
    next();
  };
}

function headersSetBy(middleware: ReturnType<typeof helmet>): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  const recorder = { setHeader: (name: string, value: string) => headers.push([name, value]), removeHeader: () => {} };
  middleware({} as never, recorder as never, () => {});
  return headers;
}

/** CORS for the configured origins; with none configured, no CORS headers at all (same-origin only). */
export function corsFor(origins: string[]): RequestHandler | undefined {
  if (origins.length === 0) return undefined;
  const crossOrigin = cors({
    origin: origins,
    // Every method the contract uses (issue 23 brought PUT, PATCH and DELETE).
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
  });
  // The cors package answers every OPTIONS as a preflight; a plain OPTIONS belongs to the API (200, Allow).
  return (req, res, next) => {
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    if (!req.headers.origin || (req.method === 'OPTIONS' && !preflight)) return next();
    crossOrigin(req, res, next);
  };
}
