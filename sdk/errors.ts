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

/** The API could not be reached (refused, reset, timed out), after the client's own retries. */
export class PalanqueNetworkError extends Error {
  override name = 'PalanqueNetworkError';

  constructor(
    message: string,
    readonly requestId: string,
    override readonly cause: unknown,
  ) {
    super(message);
  }
}
