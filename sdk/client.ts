/**
 * The client: openapi-fetch with Palanque's conventions added as one middleware and a fetch wrapper.
 * - `Authorization: Token <key>` when the client holds a key (`login` stores one, `logout` drops it);
 * - a fresh `X-Request-Id` per call, kept by its retries, so one call is one line to look for in logs;
 * - an `Idempotency-Key` on every POST but UNKEYED_POSTS, kept by its retries, so a retried POST is applied once;
 * - retries on 429 and 503 when their `Retry-After` is short (5 s by default; a longer one is answered at
 *   once), and on failed connections of the requests a second try cannot apply twice (idempotent methods
 *   and keyed POSTs), announcing each wait to `retry.onRetry` (retry.ts);
 * - an answer that is not 2xx throws PalanqueApiError (errors.ts) instead of returning `{ error }`
 *   (unless `throwOnError: false`, openapi-fetch's own way).
 * Its calls are typed exactly (exact.ts: an unknown body field or parameter does not compile) against
 * `SdkPaths` (sdk-paths.ts: the ids the server requires are required).
 */
import createClient, { type Middleware } from 'openapi-fetch';
import { PalanqueApiError } from './errors.js';
import { retryingFetch, type RetryOptions } from './retry.js';
import type { ExactClient } from './exact.js';
import type { SdkPaths } from './sdk-paths.js';

/**
 * The POSTs sent without an Idempotency-Key: the server keeps no answer for them (a stored login would hold
 * its key, a stored fingerprint would be a fast hash of a password: NEVER_STORED in src/http/idempotency.ts,
 * which test/sdk-network-errors.test.ts holds this list to). A key would promise a replay that never
 * comes, and without one retry.ts does not send them again after a failed connection.
 */
export const UNKEYED_POSTS: ReadonlySet<string> = new Set(['/api/auth/login', '/api/auth/signup/', '/api/auth/change_email/', '/api/auth/change_password/', '/api/auth/delete_account/', '/check/credential/']);

export interface ApiClientOptions {
  /** Base URL of the API: `http://127.0.0.1:8000` locally, `https://<host>/v1` elsewhere, or the mock's. */
  baseUrl: string;
  /** An API key (from `login`); sent as `Authorization: Token <key>`. */
  token?: string;
  /**
   * This device's token from an earlier login (`data.device_token`): `login` sends it, so that others'
   * failed logins at the name never delay this device's, and keeps the one answered. Store it with the key.
   */
  deviceToken?: string;
  /** A fetch implementation to use instead of the global one (tests, msw, custom agents). */
  fetch?: typeof globalThis.fetch;
  /** Retry settings; `false` turns retrying off. */
  retry?: RetryOptions | false;
  /** Throw PalanqueApiError for an answer that is not 2xx (default), or return it as `{ error, response }`. */
  throwOnError?: boolean;
}

export interface PalanqueClient extends ExactClient<SdkPaths> {
  /** The key sent with every call; undefined sends none. */
  token: string | undefined;
  /** The device token `login` sends and renews (see ApiClientOptions). */
  deviceToken: string | undefined;
}

export function createApiClient({ baseUrl, token, deviceToken, fetch, retry = {}, throwOnError = true }: ApiClientOptions): PalanqueClient {
  // The global fetch is looked up per call, so a mock installed after the client was made (msw) still sees it.
  const send: typeof globalThis.fetch = (input, init) => (fetch ?? globalThis.fetch)(input, init);
  const client = createClient<SdkPaths>({ baseUrl, fetch: retryingFetch(send, retry === false ? { retries: 0 } : retry) });
  client.use(conventions(() => (client as PalanqueClient).token, throwOnError));
  return Object.assign(client, { token, deviceToken }) as PalanqueClient;
}

function conventions(currentToken: () => string | undefined, throwOnError: boolean): Middleware {
  return {
    onRequest({ request, schemaPath }) {
      const token = currentToken();
      if (token && !request.headers.has('Authorization')) request.headers.set('Authorization', `Token ${token}`);
      if (!request.headers.has('X-Request-Id')) request.headers.set('X-Request-Id', crypto.randomUUID());
      if (request.method === 'POST' && !UNKEYED_POSTS.has(schemaPath) && !request.headers.has('Idempotency-Key')) request.headers.set('Idempotency-Key', crypto.randomUUID());
      return request;
    },
    async onResponse({ request, response }) {
      if (!response.ok && throwOnError) throw await PalanqueApiError.from(response, request);
      return response;
    },
  };
}
