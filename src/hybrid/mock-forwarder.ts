/**
 * The hybrid mode's answer for an operation the server has no handler for: the request, already checked
 * against the contract (and its key authenticated) by the server, is sent on to the Prism mock of the
 * same contract, and the mock's answer comes back marked `X-Served-By: mock`. The server keeps its own
 * request id, CORS and rate-limit headers (the mock would send the contract's examples of the latter);
 * everything else is the mock's.
 */
import type { Request, RequestHandler } from 'express';
import { ApiError } from '../http/errors.js';

/** Headers that describe one connection or one encoding of the body, not the message (RFC 9110 7.6.1). */
const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'host', 'content-length', 'content-encoding', 'te', 'trailer', 'proxy-connection']);
/** The server's own, set before the request got here. */
const KEPT_FROM_SERVER = (name: string) => name === 'x-request-id' || name.startsWith('access-control-') || name.startsWith('ratelimit');

export const SERVED_BY_HEADER = 'X-Served-By';

export function forwardToMock(mockUrl: string, basePath: string): RequestHandler {
  return async (req, res) => {
    let answer: Response;
    try {
      answer = await fetch(mockUrl + req.originalUrl.slice(basePath.length), {
        method: req.method,
        headers: forwardedHeaders(req),
        body: bodyOf(req),
        redirect: 'manual',
      });
    } catch (error) {
      throw new ApiError(503, 'service_unavailable', `The mock that answers operations without a handler (${mockUrl}) does not answer: ${(error as Error).message}.`, [], { 'Retry-After': '5' });
    }
    res.status(answer.status);
    answer.headers.forEach((value, name) => {
      if (!NOT_FORWARDED.has(name) && !KEPT_FROM_SERVER(name)) res.setHeader(name, value);
    });
    res.setHeader(SERVED_BY_HEADER, 'mock');
    res.end(Buffer.from(await answer.arrayBuffer()));
  };
}

/** The body as it was sent (the parsers keep the raw bytes), none for GET and HEAD. */
function bodyOf(req: Request): Uint8Array<ArrayBuffer> | undefined {
  const raw = (req as Request & { rawBody?: Buffer }).rawBody;
  return req.method === 'GET' || req.method === 'HEAD' || !raw ? undefined : new Uint8Array(raw);
}

function forwardedHeaders(req: Request): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || NOT_FORWARDED.has(name)) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return headers;
}
