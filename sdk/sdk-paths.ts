/**
 * The operations as the SDK types them: the generated `paths`, with the query parameters that the seed
 * declares optional but the server requires made required.
 *
 * The contract keeps the seed's optional parameters (existing clients rely on the seed), and the server
 * answers 400 `required` when one of these is missing; the spec says so in each parameter's description
 * ("required in practice"), and test/sdk-types.test.ts holds this list to those descriptions. Numeric
 * ids, which the contract declares as digit strings, are taken as numbers too (the query serialiser
 * sends 12 as "12").
 */
import type { paths } from './schema.js';

/** `id`: a record id, a number or its digits; `text`: a string as the contract declares it. */
type ParameterKind = 'id' | 'text';

/**
 * Query parameters that are optional in the contract and required by the server, by path and method.
 * Read for its type; not exported by index.ts, so a front end's bundle does not carry the table.
 * `generateNewPassword` is not here: its `token` alone completes a reset, and its `email` alone starts one.
 */
export const requiredQueryParameters = {
  '/api/auth/verify_email/': { get: { token: 'text' } },
  '/api/check/email/': { get: { email: 'text' } },
  '/api/operators/get_operators/': { get: { id: 'id' } },
  '/api/operators/check_operator_email/': { get: { email: 'text', entity_id: 'id' } },
  '/api/operators/invitations/': { get: { entity_id: 'id' } },
  '/api/entidade/data/': { get: { id: 'id' } },
  '/api/entidade/history/': { get: { id: 'id' } },
  '/api/entidade/tutela/get_ward_links/': { get: { id: 'id' } },
  '/api/elections/parties/': { get: { cd_eleicao: 'id' } },
  '/api/elections/candidacy/': { get: { id: 'id' } },
  '/api/callback/socialnet_removal/': { get: { id: 'text' } },
} as const satisfies { [Path in keyof paths]?: { get: Record<string, ParameterKind> } };

type Overrides = typeof requiredQueryParameters;

type ValueOfKind<Kind extends ParameterKind, Declared> = Kind extends 'id' ? Declared | number : Declared;

/** An operation whose query parameters in `Required` are required (and ids take numbers). */
type WithRequiredQuery<Operation, Required extends Record<string, ParameterKind>> = Operation extends { parameters: infer Parameters extends { query?: object } }
  ? Omit<Operation, 'parameters'> & {
      parameters: Omit<Parameters, 'query'> & {
        query: Omit<NonNullable<Parameters['query']>, keyof Required> & {
          [Name in keyof Required & keyof NonNullable<Parameters['query']>]-?: ValueOfKind<Required[Name], NonNullable<NonNullable<Parameters['query']>[Name]>>;
        };
      };
    }
  : Operation;

// NonNullable: a method the path lacks stays `?: never` (an optional property read gives `never | undefined`).
type PathWithOverrides<Path extends keyof paths> = Path extends keyof Overrides
  ? {
      [Method in keyof paths[Path]]: Overrides[Path] extends { [M in Method]: infer Required extends Record<string, ParameterKind> }
        ? WithRequiredQuery<paths[Path][Method], Required>
        : NonNullable<paths[Path][Method]>;
    }
  : paths[Path];

/** The generated `paths`, with `requiredQueryParameters` applied: what `PalanqueClient` takes. */
export type SdkPaths = { [Path in keyof paths]: PathWithOverrides<Path> };
