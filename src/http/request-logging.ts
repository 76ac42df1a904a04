/** One JSON log line per request (pino-http); `req.log` is a child logger bound to the request id. */
import type { RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../logger.js';

export function requestLogging(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    genReqId: (_req, res) => String((res as unknown as { locals: { requestId?: string } }).locals.requestId ?? ''),
    customAttributeKeys: { reqId: 'request_id' },
    quietReqLogger: true, // req.log lines carry just the request id, not the whole request
    // 500 is a failure; 501 (not implemented yet) and 503 (data not loaded) are expected states.
    customLogLevel: (_req, res) => (res.statusCode === 500 ? 'error' : res.statusCode > 500 ? 'warn' : 'info'),
  }) as unknown as RequestHandler;
}
