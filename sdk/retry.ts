/**
 * Retries with backoff, as a fetch wrapper under openapi-fetch: it sees the finished Request (with its
 * Idempotency-Key already set, so every try of a POST carries the same key and the server applies it
 * once). It retries what may pass later: 429 and 503 (waiting what `Retry-After` asks, within a cap),
 * and a connection that failed. Anything else is answered at once.
 */
import { PalanqueNetworkError } from './errors.js';

export interface RetryOptions {
  /** Tries after the first; 0 turns retrying off. Default 3. */
  retries?: number;
  /** The first wait when the server names none; doubled each time, with jitter. Default 500 ms. */
  baseDelayMs?: number;
  /** The longest single wait, `Retry-After` included. Default 30 s. */
  maxDelayMs?: number;
}

const RETRIED_STATUSES = new Set([429, 503]);

export function retryingFetch(fetchImpl: typeof globalThis.fetch, options: RetryOptions = {}): (request: Request) => Promise<Response> {
  const { retries = 3, baseDelayMs = 500, maxDelayMs = 30_000 } = options;
  return async (request) => {
    for (let attempt = 0; ; attempt += 1) {
      const last = attempt >= retries;
      let response: Response;
      try {
        response = await fetchImpl(last ? request : request.clone());
      } catch (error) {
        if (last || request.signal.aborted) {
          throw new PalanqueNetworkError(`${request.method} ${request.url} failed: ${(error as Error).message}`, request.headers.get('X-Request-Id') ?? '', error);
        }
        await sleep(backoff(attempt, baseDelayMs, maxDelayMs), request.signal);
        continue;
      }
      if (last || !RETRIED_STATUSES.has(response.status)) return response;
      const wait = retryAfterMs(response.headers.get('Retry-After')) ?? backoff(attempt, baseDelayMs, maxDelayMs);
      // Not awaited: the body is dropped either way, and some fetch stand-ins (msw in Node) never settle it.
      void response.body?.cancel().catch(() => undefined);
      await sleep(Math.min(wait, maxDelayMs), request.signal);
    }
  };
}

/** `Retry-After` as seconds or as an HTTP date (RFC 9110 §10.2.3). */
export function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function backoff(attempt: number, baseDelayMs: number, maxDelayMs: number): number {
  return Math.min(maxDelayMs, baseDelayMs * 2 ** attempt * (0.5 + Math.random() / 2));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });
}
