/**
 * One JSON log line per request when it ends (`request completed`, `request aborted`, or `request errored`
 * with the error for a 5xx), and `req.log`, a child logger bound to the request id. The lines, and
 * whatever is logged through `req.log` (the error handler's `err`), go through the redaction of
 * ../log-redaction.ts whatever logger is passed in: no credential, query secret or raw e-mail is written.
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
      const line = { request_id: requestId, req: Object.create(req, { method: { value: method } }) as Request, res, responseTime: Date.now() - started };
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
      req: pino.stdSerializers.wrapRequestSerializer(redactRequest),
      res: pino.stdSerializers.wrapResponseSerializer(redactResponse),
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
    log[levelOf(res.statusCode)]({ request_id: requestIdOf(res), req, res, responseTime: millisecondsSince(startedAt) }, 'request completed');
  };
}
