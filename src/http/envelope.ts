/** The standard success envelope: `{ success: true, data, message, request_id }`. */
import type { Response } from 'express';

export function sendEnvelope<Data>(res: Response, status: number, data: Data, message: string): void {
  const envelope = { success: true, data, message, request_id: String(res.locals.requestId) };
  if (isWatched(res) || res.hasHeader('ETag')) {
    res.status(status).json(envelope);
    return;
  }
  // Nobody wraps res.json or res.send on this answer (the response validator and the idempotency store
  // do, where they apply), and it has no ETag a request's If-None-Match could turn into Express's 304:
  // the bytes are written as Express's res.json would write them, without its content-type lookup,
  // freshness check and header bookkeeping (docs/benchmarks.md). Express makes no ETag of its own here
  // (src/app.ts turns that off).
  const body = JSON.stringify(envelope);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/** Whether a middleware replaced res.json or res.send on this response to see or keep what it sends. */
function isWatched(res: Response): boolean {
  return Object.hasOwn(res, 'json') || Object.hasOwn(res, 'send');
}
