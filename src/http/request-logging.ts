/**
 * One JSON log line per request (pino-http); `req.log` is a child logger bound to the request id. The
 * lines, and whatever is logged through `req.log` (the error handler's `err`), go through the redaction of
 * ../log-redaction.ts whatever logger is passed in: no credential, query secret or raw e-mail is written.
 */
import type { Request, RequestHandler, Response } from 'express';
import { pino } from 'pino';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../logger.js';
import { redactError, redactOptions, redactRequest, redactResponse } from '../log-redaction.js';

const requestIdOf = (res: Response) => String((res.locals as { requestId?: string }).requestId ?? '');

// 500 is a failure; 501 (not implemented yet) and 503 (data not loaded) are expected states.
const levelOf = (status: number) => (status === 500 ? 'error' : status > 500 ? 'warn' : 'info');

export function requestLogging(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    genReqId: (_req, res) => requestIdOf(res as unknown as Response),
    customAttributeKeys: { reqId: 'request_id' },
    quietReqLogger: true, // req.log lines carry just the request id, not the whole request
    customLogLevel: (_req, res) => levelOf(res.statusCode),
    // pino-http wraps these in pino's standard serializers: they receive the serialized request, response, error.
    serializers: { req: redactRequest, res: redactResponse, err: redactError },
    redact: redactOptions,
  }) as unknown as RequestHandler;
}

/**
 * Logs the requests answered before the request logger is reached (mounted ahead of the rate limiter, it
 * logs its 429s and its own failures, 500), in the same shape and with the same redaction. A request
 * that reaches the request logger, or that the municipality fast path answers (200/304, logged by
 * itself), is left to them: this writes a line only for an answer of 400 or more without `req.log`.
 */
export function earlyAnswerLogging(logger: Logger): RequestHandler {
  const log = logger.child({}, {
    serializers: {
      req: pino.stdSerializers.wrapRequestSerializer(redactRequest),
      res: pino.stdSerializers.wrapResponseSerializer(redactResponse),
      err: pino.stdSerializers.wrapErrorSerializer(redactError),
    },
    redact: redactOptions,
  });
  return (req: Request, res: Response, next) => {
    const started = Date.now();
    res.once('finish', () => {
      if ((req as { log?: unknown }).log || res.statusCode < 400) return;
      log[levelOf(res.statusCode)]({ request_id: requestIdOf(res), req, res, responseTime: Date.now() - started }, 'request completed');
    });
    next();
  };
}
