/**
 * Retries, as a fetch wrapper under openapi-fetch: it sees the finished Request (with its Idempotency-Key
 * already set, so every try of a POST carries the same key and the server applies it once).
 *
 * Only what may pass within moments is retried: a 429 or 503 whose `Retry-After` is short (at most
 * `maxRetryAfterMs`, 5 s by default; without the header, a short backoff), and a connection that failed,
 * for the requests that a second try cannot apply twice (`mayResend`): a connection may fail after the
 * server acted on the request (a reset, a lost answer), and in a browser a CORS refusal fails the same way.
 * So a login, which the server keeps no Idempotency-Key for, is sent once.
 * A 429 or 503 asking for a longer wait (a locked login, a feature missing its configuration) is returned
 * at once, so the caller sees the server's message instead of waiting in silence. Every wait is announced
 * to `onRetry` before it starts, so a command line or a UI can say what it is waiting for.
 */
import { PalanqueNetworkError } from './errors.js';

export interface RetryOptions {
  /** Tries after the first; 0 turns retrying off. Default 3. */
  retries?: number;
  /** The first wait when the server names none; doubled each time, with jitter. Default 500 ms. */
  baseDelayMs?: number;
  /**
   * The longest wait the client accepts. A 429 or 503 whose `Retry-After` asks for more is not retried:
   * it is answered at once (PalanqueApiError with the server's message). Backoff waits stay under it too.
   * Default 5000 ms.
   */
  maxRetryAfterMs?: number;
  /** Called before each wait; a thrown error is not caught (it ends the call). */
  onRetry?: (event: RetryEvent) => void;
}

export interface RetryEvent {
  /** Which retry this wait precedes: 1 for the first. */
  attempt: number;
  /** How long the client waits before it: the server's `Retry-After`, or the backoff. */
  waitMs: number;
  /** The status that is retried (429 or 503), or undefined when the connection failed. */
  status: number | undefined;
  /** Why, for people: `rate limited`, `unavailable`, or the connection error's message. */
  reason: string;
  /** The request that will be sent again (the same request id and Idempotency-Key). */
  request: Request;
}

const RETRIED_STATUSES: ReadonlyMap<number, string> = new Map([
  [429, 'rate limited'],
  [503, 'unavailable'],
]);

export const DEFAULT_MAX_RETRY_AFTER_MS = 5000;

export function retryingFetch(fetchImpl: typeof globalThis.fetch, options: RetryOptions = {}): (request: Request) => Promise<Response> {
  const { retries = 3, baseDelayMs = 500, maxRetryAfterMs = DEFAULT_MAX_RETRY_AFTER_MS, onRetry } = options;
  const backoff = (attempt: number) => Math.min(maxRetryAfterMs, baseDelayMs * 2 ** attempt * (0.5 + Math.random() / 2));
  return async (request) => {
    for (let attempt = 0; ; attempt += 1) {
      const last = attempt >= retries;
      let response: Response;
      try {
        response = await fetchImpl(last ? request : request.clone());
      } catch (error) {
        if (last || request.signal.aborted || !mayResend(request)) throw PalanqueNetworkError.from(request, error);
        const waitMs = backoff(attempt);
        onRetry?.({ attempt: attempt + 1, waitMs, status: undefined, reason: connectionFailure(error), request });
        await sleep(waitMs, request.signal);
        continue;
      }
      const reason = RETRIED_STATUSES.get(response.status);
      if (last || reason === undefined) return response;
      const asked = retryAfterMs(response.headers.get('Retry-After'));
      // A long wait is the server's answer, not a hiccup: hand it over now.
      if (asked !== undefined && asked > maxRetryAfterMs) return response;
      const waitMs = asked ?? backoff(attempt);
      // Not awaited: the body is dropped either way, and some fetch stand-ins (msw in Node) never settle it.
      void response.body?.cancel().catch(() => undefined);
      onRetry?.({ attempt: attempt + 1, waitMs, status: response.status, reason, request });
      await sleep(waitMs, request.signal);
    }
  };
}

/**
 * Whether a request whose connection failed may be sent again: a POST only with an Idempotency-Key (the
 * server applies it once; the client gives every POST one except those the server keeps none for, a login
 * among them: UNKEYED_POSTS in client.ts), a PATCH never (not idempotent, and the server keys POSTs
 * only), and the other methods fetch sends always (GET, HEAD, OPTIONS, PUT, DELETE: idempotent by RFC 9110 §9.2.2).
 */
export function mayResend({ method, headers }: Request): boolean {
  return method === 'POST' ? headers.has('Idempotency-Key') : method !== 'PATCH';
}

/** `Retry-After` as seconds or as an HTTP date (RFC 9110 §10.2.3). */
export function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** The innermost reason of a failed fetch (`connect ECONNREFUSED 127.0.0.1:9`), not undici's bare "fetch failed". */
function connectionFailure(error: unknown): string {
  let reason = error instanceof Error ? error.message : String(error);
  let cause = (error as { cause?: unknown } | undefined)?.cause;
  for (let depth = 0; cause instanceof Error && depth < 5; depth += 1) {
    reason = cause.message || reason;
    cause = (cause as { cause?: unknown }).cause;
  }
  return reason;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });
}
