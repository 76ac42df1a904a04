/**
 * One JSON log line per request when it ends (`request completed`, `request aborted`, or `request errored`
 * with the error for a 5xx), and `req.log`, a child logger bound to the request id. The lines, and
 * whatever is logged through `req.log` (the error handler's `err`), go through the redaction of
 * ../log-redaction.ts whatever logger is passed in: no credential, query secret or raw e-mail is written.
 *
 * Each line names the operation the contract matched (`operation_id`) and the authenticated caller
 * (`user_id`), when there is one. Of the request's and the response's headers only those of the
 * allow-lists below are written (the rest, cookies and custom headers included, never are): a line of
 * every header came to about 850 bytes, 22 GB a day per instance at 300 requests a second.
 *
 * The lines have the shape pino-http gave them (request_id, req, res, responseTime), without its cost:
 * pino-http made two child loggers and serialized the request on every request, even at a level that
 * writes nothing, a visible share of a cheap read's time (docs/benchmarks.md). Here the request is
 * serialized only for a line that is written, and `req.log` is made on first use.
 */
import type { Request, RequestHandler, Response } from 'express';
import { pino } from 'pino';
import type { Logger } from '../logger.js';
import { redactError, redactOptions, redactRequest, redactResponse } from '../log-redaction.js';
import { millisecondsSince, type CompletionObserver } from './completion.js';
import { operationIdOf } from './operations.js';

/**
 * The request headers a line keeps: what tells a client and a body apart and ties the line to a trace.
 * Those that carry credentials are kept only to say they were sent: their value is always `[REDACTED]`
 * (../log-redaction.ts), which tells a missing key or signature from a wrong one.
 */
export const LOGGED_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  'user-agent',
  'content-type',
  'content-length',
  'x-request-id',
  'traceparent',
  'idempotency-key',
  'authorization',
  'x-twilio-signature',
  'x-hub-signature-256',
]);

/** The response headers a line keeps (Location with its query redacted). */
export const LOGGED_RESPONSE_HEADERS: ReadonlySet<string> = new Set(['content-type', 'content-length', 'retry-after', 'location']);

function allowedHeaders(headers: unknown, allowed: ReadonlySet<string>): Record<string, unknown> | undefined {
  if (!headers || typeof headers !== 'object') return undefined;
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) if (allowed.has(name.toLowerCase())) kept[name] = value;
  return kept;
}

/** pino's request as logged: the allowed headers, without `query`/`params` (the url, redacted, has them) or `id` (the line's request_id). */
function loggedRequest(req: { id?: unknown; headers?: unknown; query?: unknown; params?: unknown }): object {
  const { id: _id, query: _query, params: _params, ...rest } = req;
  return redactRequest({ ...rest, headers: allowedHeaders(req.headers, LOGGED_REQUEST_HEADERS) });
}

function loggedResponse(res: { headers?: unknown }): object {
  return redactResponse({ ...res, headers: allowedHeaders(res.headers, LOGGED_RESPONSE_HEADERS) });
}

/** The authenticated caller's user id (auth.ts keeps the caller in res.locals), if any. */
const userIdOf = (res: Response): number | undefined => (res.locals as { caller?: { user?: { id?: number } } }).caller?.user?.id;

/** The operation the contract (or the read lane, or a fast path) matched, if any. */
const operationOf = (req: Request, res: Response): string | undefined => operationIdOf(req) ?? (res.locals as { operationId?: string }).operationId;

/** `req.log`: what the request logger gives every request that reaches it. */
declare module 'express-serve-static-core' {
  interface Request {
    log: Logger;
  }
}

const requestIdOf = (res: Response) => String((res.locals as { requestId?: string }).requestId ?? '');

// 500 is a failure; 501 (not implemented yet) and 503 (data not loaded) are expected states.
const levelOf = (status: number) => (status === 500 ? 'error' : status > 500 ? 'warn' : 'info');

export function requestLogging(logger: Logger): RequestHandler {
  const log = redactingChild(logger);
  return (req: Request, res: Response, next) => {
    const started = Date.now();
    const requestId = requestIdOf(res);
    const method = req.method; // the path guard serves HEAD as GET: the line says what was asked
    let requestLog: Logger | undefined;
    Object.defineProperty(req, 'log', {
      configurable: true,
      get: () => (requestLog ??= log.child({ request_id: requestId })),
      set: (replacement: Logger) => (requestLog = replacement),
    });
    (req as { id?: string }).id = requestId;
    reachedRequestLog.add(req);
    res.once('close', () => {
      const level = levelOf(res.statusCode);
      if (!log.isLevelEnabled(level)) return;
      const line = {
        request_id: requestId,
        operation_id: operationOf(req, res),
        user_id: userIdOf(res),
        req: Object.create(req, { method: { value: method } }) as Request,
        res,
        responseTime: Date.now() - started,
      };
      if (res.statusCode >= 500) log[level]({ ...line, err: new Error(`failed with status code ${res.statusCode}`) }, 'request errored');
      else log[level](line, res.writableEnded && !req.readableAborted ? 'request completed' : 'request aborted');
    });
    next();
  };
}

/** Requests that reached the request logger (which then writes their line). */
const reachedRequestLog = new WeakSet<Request>();

/** A child of `logger` that serializes raw requests, responses and errors, redacted. */
function redactingChild(logger: Logger): Logger {
  return logger.child({}, {
    serializers: {
      req: pino.stdSerializers.wrapRequestSerializer(loggedRequest as never),
      res: pino.stdSerializers.wrapResponseSerializer(loggedResponse as never),
      err: pino.stdSerializers.wrapErrorSerializer(redactError),
    },
    redact: redactOptions,
  });
}

/**
 * Logs the requests answered before the request logger is reached (the rate limiter's 429s and its own
 * failures, 500; a refused /metrics), in the same shape and with the same redaction: an observer of
 * every request's completion (completion.ts), mounted first. A request
 * that reaches the request logger, or that the municipality fast path answers (200/304, logged by
 * itself), is left to them: this writes a line only for an answer of 400 or more without `req.log`.
 */
export function earlyAnswerLogging(logger: Logger): CompletionObserver {
  const log = redactingChild(logger);
  return (req, res, startedAt) => {
    if (reachedRequestLog.has(req) || res.statusCode < 400) return;
    log[levelOf(res.statusCode)]({ request_id: requestIdOf(res), operation_id: operationOf(req, res), req, res, responseTime: millisecondsSince(startedAt) }, 'request completed');
  };
}
