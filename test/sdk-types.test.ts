/**
 * The SDK's types come from the spec through openapi-typescript. These assertions are checked by `tsc`
 * (`npm run typecheck`, part of `npm test`): they prove that OpenAPI 3.1 constructs reach the types as
 * intended, and they fail to compile if a regeneration changes them.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { components, paths } from '../sdk/index.js';

type Schemas = components['schemas'];
type Candidate = Schemas['CandidateEntity'];

describe('generated SDK types', () => {
  it('keeps 3.1 nullable type lists as unions with null', () => {
    expectTypeOf<Candidate['nr_urna']>().toEqualTypeOf<number | null | undefined>();
    expectTypeOf<Candidate['municipioBase']>().toEqualTypeOf<string | null | undefined>();
    expectTypeOf<Schemas['PageLinks']['next']>().toEqualTypeOf<string | null>();
  });

  it('types the municipality list as the bare paginated structure', () => {
    type ListBody = paths['/api/municipios/']['get']['responses'][200]['content']['application/json'];
    expectTypeOf<ListBody['count']>().toEqualTypeOf<number>();
    expectTypeOf<ListBody['results'][number]['codigo_ibge']>().toEqualTypeOf<number>();
    expectTypeOf<ListBody>().not.toHaveProperty('success');
  });

  it('types error codes as a closed union', () => {
    expectTypeOf<'validation_failed'>().toMatchTypeOf<Schemas['ErrorCode']>();
    expectTypeOf<'teapot'>().not.toMatchTypeOf<Schemas['ErrorCode']>();
  });

  it('keeps the GET request bodies the contract declares optional', () => {
    type UserGet = paths['/api/usuario/{user_id}/']['get'];
    expectTypeOf<UserGet['requestBody']>().toEqualTypeOf<{ content: { 'text/plain': string } } | undefined>();
  });
});
