/**
 * The error model of the contract: every error answers
 * `{ success: false, error: { code, message, details }, request_id }`. Code anywhere in the server throws
 * an ApiError (or lets a library throw its own error); errorHandler turns both into that body.
 */
import type { ErrorRequestHandler, Request, Response } from 'express';
import type { components } from '../../sdk/schema.js';

export type ErrorCode = components['schemas']['ErrorCode'];
export type ErrorDetail = components['schemas']['ErrorDetail'];
export type ErrorBody = components['schemas']['ErrorResponse'];

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const badRequest = (message: string, details: ErrorDetail[] = []) =>
  new ApiError(400, 'bad_request', message, details);
/** Every 401 names the scheme that would work (RFC 9110 section 11.6.1). */
export const AUTH_CHALLENGE = { 'WWW-Authenticate': 'Token realm="palanque"' };

export const unauthorized = (message = 'Authentication is required: send your API key as "Authorization: Token <key>".') =>
  new ApiError(401, 'unauthorized', message, [], AUTH_CHALLENGE);
export const notFound = (message: string, details: ErrorDetail[] = []) =>
  new ApiError(404, 'not_found', message, details);
export const methodNotAllowed = (method: string, path: string, allow: string) =>
  new ApiError(405, 'method_not_allowed', `${method} is not allowed on ${path}. Allowed: ${allow}.`, [], { Allow: allow });
export const notImplemented = (operationId: string) =>
  new ApiError(501, 'not_implemented', `The operation ${operationId} is not implemented by this server yet.`);
export const referenceDataUnavailable = (message: string) =>
  new ApiError(503, 'reference_data_unavailable', message, [], { 'Retry-After': '60' });

/** Writes an error in the error model. Used by the error handler and by middleware that answers early. */
export function sendError(res: Response, error: ApiError): void {
  const body: ErrorBody = {
    success: false,
    error: { code: error.code, message: error.message, details: error.details },
    request_id: String(res.locals.requestId ?? ''),
  };
  res.status(error.status).set(error.headers).json(body);
}

/** Recognises one family of errors (ours, the body parsers', the validator's) and says what to answer. */
export type ErrorTranslator = (error: unknown, req: Request) => ApiError | undefined;

/** The last middleware: whatever went wrong, the client gets the error model and never a stack or SQL. */
export function errorHandler(translators: ErrorTranslator[]): ErrorRequestHandler {
  return (error, req, res, next) => {
    if (res.headersSent) return next(error);
    const apiError = translators.reduce<ApiError | undefined>((found, translate) => found ?? translate(error, req), undefined);
    // Errors we raised on purpose (4xx, 501, 503) are answers, not failures: no stack in the logs.
    if (apiError && (apiError.status < 500 || error instanceof ApiError)) {
      sendError(res, apiError);
      return;
    }
    req.log.error({ err: error }, 'request failed');
    sendError(
      res,
      apiError ??
        new ApiError(500, 'internal_error', 'An unexpected error occurred. Quote the request id when reporting it.'),
    );
  };
}

/** ApiErrors thrown by our own code. */
export const translateApiError: ErrorTranslator = (error) => {
  return error instanceof ApiError ? error : undefined;
};

/** Errors of Express's body parsers (body-parser), recognised by their `type`. */
export const translateBodyParserError: ErrorTranslator = (error) => {
  const type = (error as { type?: unknown })?.type;
  if (type === 'entity.parse.failed') {
    return badRequest('The request body is not valid JSON.', [
      { location: 'body', field: '', rule: 'json', message: (error as Error).message },
    ]);
  }
  if (type === 'entity.too.large') {
    const limit = (error as { limit?: number }).limit;
    return new ApiError(413, 'payload_too_large', `The request body is larger than the limit of ${limit} bytes.`, [
      { location: 'body', field: '', rule: 'max_size', message: `must be at most ${limit} bytes` },
    ]);
  }
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return new ApiError(415, 'unsupported_media_type', (error as Error).message);
  }
  return undefined;
};
