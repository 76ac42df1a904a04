/**
 * What a failed call throws. Every error answer of the API is the error model, so the SDK turns it into
 * one typed error carrying that model and the request id to quote when asking for help; an API that
 * could not be reached at all is a different failure, with a different cause.
 */
import type { components } from './schema.js';

export type ErrorBody = components['schemas']['ErrorResponse'];
export type ErrorCode = components['schemas']['ErrorCode'];
export type ErrorDetail = components['schemas']['ErrorDetail'];

export class PalanqueApiError extends Error {
  override name = 'PalanqueApiError';

  constructor(
    readonly status: number,
    /** The error model's code, or `http_<status>` when something other than the API answered. */
    readonly code: ErrorCode | `http_${number}`,
    message: string,
    readonly details: ErrorDetail[],
    /** The request id the server logged the call under (`X-Request-Id`). */
    readonly requestId: string,
    /** The error model, as sent; undefined when the answer was not one. */
    readonly body: ErrorBody | undefined,
  ) {
    super(message);
  }

  /** Reads an error answer; a body that is not the error model (a proxy's page) still gives an error. */
  static async from(response: Response, request: Request): Promise<PalanqueApiError> {
    const requestId = response.headers.get('X-Request-Id') ?? request.headers.get('X-Request-Id') ?? '';
    const body = (await response.clone().json().catch(() => undefined)) as ErrorBody | undefined;
    if (body && body.success === false && body.error && typeof body.error.code === 'string') {
      return new PalanqueApiError(response.status, body.error.code, body.error.message, body.error.details ?? [], body.request_id || requestId, body);
    }
    return new PalanqueApiError(response.status, `http_${response.status}`, `${request.method} ${new URL(request.url).pathname} answered ${response.status} ${response.statusText}`.trim(), [], requestId, undefined);
  }
}

/**
 * The API could not be reached (refused, reset, timed out), after the client's own retries. In a browser,
 * a request that CORS refused fails the same way: fetch throws a bare TypeError ("Failed to fetch") and
 * does not say which, so from a page of another origin the message names both causes and the origins
 * to check. `cause` is what fetch threw.
 */
export class PalanqueNetworkError extends Error {
  override name = 'PalanqueNetworkError';

  constructor(
    message: string,
    readonly requestId: string,
    override readonly cause: unknown,
  ) {
    super(message);
  }

  /** The error for a request whose fetch threw `cause`. */
  static from(request: Request, cause: unknown): PalanqueNetworkError {
    const api = new URL(request.url).origin;
    // A page's origin (a browser, a worker); Node has none, and a same-origin call is never a CORS matter.
    const page = (globalThis as { location?: { origin?: string } }).location?.origin;
    const reason = (cause as Error | undefined)?.message;
    const why = page && page !== api ? `network error or CORS refusal (${reason}): is this origin (${page}) in CORS_ORIGINS at ${api}?` : reason;
    return new PalanqueNetworkError(`${request.method} ${request.url} failed: ${why}`, request.headers.get('X-Request-Id') ?? '', cause);
  }
}
