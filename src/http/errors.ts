/**
 * The error model of the contract: every error answers
 * `{ success: false, error: { code, message, details }, request_id }`. Code anywhere in the server throws
 * an ApiError (or lets a library throw its own error); errorHandler turns both into that body.
 */
import type { ErrorRequestHandler, Request, Response } from 'express';
import { TimeoutError } from 'sequelize';
import { DatabaseBusyError } from '../db/database.js';
import { isOutage } from '../db/outages.js';
import { listedDetails } from '@palanque/rules/error-details';
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

/** The error model's bounds (ErrorResponse and ErrorDetail in the spec). */
const MAX_MESSAGE = 1000;
const MAX_FIELD = 500;
const MAX_RULE = 100;

/** Cuts a text to `max` characters, marking the cut: a request can make a message quote a huge name. */
function bounded(text: string, max: number): string {
  if (text.length <= max) return text; // UTF-16 units: never fewer than the characters
  const kept: string[] = [];
  // Walks characters (not UTF-16 units, so no surrogate pair is split) and stops at the cut: a
  // megabyte of text costs as much as `max` characters.
  for (const character of text) {
    if (kept.length === max) return `${kept.slice(0, max - 1).join('')}…`;
    kept.push(character);
  }
  return text;
}

/** Writes an error in the error model. Used by the error handler and by middleware that answers early. */
export function sendError(res: Response, error: ApiError): void {
  // At most MAX_DETAILS details, the message counting the rest: an answer stays a few KB whatever the request.
  const listed = listedDetails(error.message, error.details);
  const details = listed.details.map((detail) => ({
    ...detail,
    field: bounded(detail.field, MAX_FIELD),
    rule: bounded(detail.rule, MAX_RULE),
    message: bounded(detail.message, MAX_MESSAGE),
  }));
  const body: ErrorBody = {
    success: false,
    error: { code: error.code, message: bounded(listed.message, MAX_MESSAGE), details },
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
    // req.log is set by the request logger; an error raised before it (in the rate limiter) must still be answered.
    // An answer made for another error (a key lookup that failed) names it as its cause: that is what to log.
    req.log?.error({ err: apiError?.cause ?? error }, 'request failed');
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

/**
 * The database too busy to take a write in time (SQLite's lock or the wait for it, see
 * serialiseTransactions): nothing was written, and the same request can be sent again shortly. Still
 * logged as a failure: an overloaded server is something to look at.
 */
export const translateDatabaseBusy: ErrorTranslator = (error) => {
  if (!(error instanceof DatabaseBusyError || error instanceof TimeoutError)) return undefined;
  return new ApiError(503, 'service_unavailable', 'The database is busy with other writes: nothing was changed. Send the request again in a few seconds.', [], { 'Retry-After': '5' });
};

/** How long a client is asked to wait before retrying a request that met an outage. */
const OUTAGE_RETRY_AFTER_SECONDS = '5';

/** 503 `service_unavailable`: the request can be sent again shortly (the SDK and CLI retry it when that is safe). */
export const serviceUnavailable = (message = OUTAGE_MESSAGE) =>
  new ApiError(503, 'service_unavailable', message, [], { 'Retry-After': OUTAGE_RETRY_AFTER_SECONDS });

const OUTAGE_MESSAGE =
  'The service is unavailable for a moment: its database or job queue could not be reached in time. Send the request again in a few seconds (with the same Idempotency-Key, a write is applied once).';

/**
 * The database or the job queue out of reach, or a statement cancelled (db/outages.ts says which errors
 * are): 503 with Retry-After, never a 500, and never the driver's text (SQL, host). Logged as a failure
 * with its cause: an outage is something to look at.
 */
export const translateOutage: ErrorTranslator = (error) => (isOutage(error) ? serviceUnavailable() : undefined);

/** Errors of Express's body parsers (body-parser), recognised by their `type`. */
export const translateBodyParserError: ErrorTranslator = (error, req) => {
  const type = (error as { type?: unknown })?.type;
  // A body that does not decompress as its Content-Encoding says: body-parser passes zlib's error on
  // with status 400 and no type.
  const encoding = req.get('Content-Encoding');
  if (type === undefined && encoding && (error as { status?: unknown })?.status === 400 && typeof (error as { errno?: unknown }).errno === 'number') {
    return badRequest(`The request body could not be decoded as ${encoding}.`, [
      { location: 'header', field: 'Content-Encoding', rule: 'content_encoding', message: `the body must be ${encoding}-compressed: ${(error as Error).message}`, value: encoding },
    ]);
  }
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
  // Our own messages rather than body-parser's, which quote the header whole: however long it is, the
  // error model keeps `message` to 1000 characters.
  if (type === 'encoding.unsupported') {
    return new ApiError(415, 'unsupported_media_type', 'Unsupported Content-Encoding; this server takes gzip, deflate, br or identity.', [
      headerDetail('Content-Encoding', 'content_encoding', 'must be gzip, deflate, br or identity', (error as { encoding?: string }).encoding),
    ]);
  }
  if (type === 'charset.unsupported') {
    return new ApiError(415, 'unsupported_media_type', 'Unsupported charset in Content-Type; send the body as UTF-8.', [
      headerDetail('Content-Type', 'charset', 'the charset must be utf-8', (error as { charset?: string }).charset),
    ]);
  }
  return undefined;
};

/** A header at fault, with its value when it is short enough to echo. */
function headerDetail(field: string, rule: string, message: string, value: string | undefined): ErrorDetail {
  const detail: ErrorDetail = { location: 'header', field, rule, message };
  return value !== undefined && value.length <= 200 ? { ...detail, value } : detail;
}
