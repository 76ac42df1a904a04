/**
 * Palanque SDK: a typed client for the Palanque API, for front ends and Node.
 *
 * The types in ./schema.d.ts are generated from spec/openapi.yaml (`npm run generate`) and checked for
 * freshness by `npm test`, so a call that the contract does not allow does not compile.
 *
 *   const api = createApiClient({ baseUrl: 'http://127.0.0.1:8000' });
 *   await login(api, 'ana.souza', password);
 *   const entities = unwrap(await api.GET('/api/entidade/', { params: { query: { tp: 'candidato' } } }));
 *   for await (const municipality of eachMunicipality(api, { uf: '35' })) console.log(municipality.nome);
 */
export { createApiClient, type ApiClientOptions, type PalanqueClient } from './client.js';
export { PalanqueApiError, PalanqueNetworkError, type ErrorBody, type ErrorCode, type ErrorDetail } from './errors.js';
export { eachMunicipality, login, logout, municipalityPages, unwrap, type LoginResponse, type Municipality, type MunicipalityPage, type MunicipalityQuery } from './helpers.js';
export { retryAfterMs, type RetryEvent, type RetryOptions } from './retry.js';
export type { components, operations, paths } from './schema.js';
export type { SdkPaths } from './sdk-paths.js';
export type { Exact, ExactClient } from './exact.js';
