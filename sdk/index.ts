/**
 * Palanque SDK: a typed client for the Palanque API.
 *
 * The types in ./schema.d.ts are generated from spec/openapi.yaml (`npm run generate`) and checked for
 * freshness by `npm test`, so a call that the contract does not allow does not compile.
 */
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema.js';

export type { paths, components, operations } from './schema.js';

export interface ApiClientOptions {
  /** Base URL of the API: `http://localhost:8000` locally, `https://<host>/v1` elsewhere, or the mock's. */
  baseUrl: string;
  /** The key returned by `login`; sent as `Authorization: Token <key>`. */
  token?: string;
  /** A fetch implementation to use instead of the global one (tests, msw, custom agents). */
  fetch?: typeof globalThis.fetch;
}

export type ApiClient = Client<paths>;

export function createApiClient({ baseUrl, token, fetch }: ApiClientOptions): ApiClient {
  return createClient<paths>({
    baseUrl,
    fetch,
    headers: token ? { Authorization: `Token ${token}` } : undefined,
  });
}
