/**
 * The SDK's types come from the spec through openapi-typescript. These assertions are checked by `tsc`
 * (`npm run typecheck`, part of `npm test`): they prove that OpenAPI 3.1 constructs reach the types as
 * intended, and they fail to compile if a regeneration changes them.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { createApiClient, unwrap, type components, type PalanqueClient, type paths } from '../sdk/index.js';
import { requiredQueryParameters } from '../sdk/sdk-paths.js';
import { loadSpec, tryResolvePointer } from './helpers/spec.js';

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

/**
 * The client's calls are exact: a key the operation does not declare in `body`, `params.query` or
 * `params.path` does not compile (sdk/exact.ts). The calls below are type-checked by `tsc` and never
 * run: `callsThatCompile` and `callsThatDoNot` are not called.
 */
type EntityRecord = Schemas['CandidateEntityRecord'];

export async function callsThatCompile(api: PalanqueClient, record: EntityRecord): Promise<void> {
  // A record read with getEntity is posted back whole: its read-only fields are accepted (and ignored).
  const read = unwrap(await api.GET('/api/entidade/data/', { params: { query: { id: 12 } } }));
  await api.POST('/api/entidade/add/', { body: read });
  await api.POST('/api/entidade/add/', { body: record, headers: { 'If-Match': '"3"' } });
  await api.POST('/api/entidade/add/', { body: { ...read, nm_urna: 'Maria' } });
  // Nested entries are checked too, and their declared fields pass.
  await api.POST('/api/entidade/add/', { body: { nome: 'Maria', marketshare: [{ marketshare: '23.5', notes: null }], referencia_social: null } });
  await api.GET('/api/entidade/data/', { params: { query: { id: '12' } } });
  await api.POST('/api/monitor_social/add_monitor/', { body: { entity_id: 12, name: 'Oficial', keywords: ['#maria13'], profiles: [{ nm_rede: 'instagram', username: 'mariasantos' }] } });
  await api.GET('/api/operators/check_operator_email/', { params: { query: { email: 'joana@exemplo.com.br', entity_id: 12 } } });
  // The seed marks generateNewPassword's parameters optional, and the token alone completes a reset.
  await api.GET('/api/auth/generate_new_pass', { params: { query: { token: 'mailed-token' } } });
  await api.GET('/api/auth/generate_new_pass', { params: { query: { email: 'ana@exemplo.com.br' } } });
  // The seed types only_team as a string: `1` and `0` are taken with `true` and `false`.
  await api.GET('/api/account/', { params: { query: { only_team: '1' } } });
  await api.GET('/api/usuario/{user_id}/', { params: { path: { user_id: 7 } } });
  await api.GET('/api/municipios/', { params: { query: { codigo_uf: 35, page: 2 } } });
  await api.GET('/api/municipios/');
  // Other fetch options stay allowed beside params and body, as in openapi-fetch.
  await api.GET('/api/municipios/', { signal: AbortSignal.timeout(1000), parseAs: 'json' });
  // Provider callbacks are open schemas: the provider's other fields are accepted.
  await api.POST('/api/callback/provider_sms/', {
    body: { MessageSid: 'SM1', MessageStatus: 'delivered', AccountSid: 'AC1', ApiVersion: '2010-04-01' },
  });
}

export async function callsThatDoNot(api: PalanqueClient): Promise<void> {
  // @ts-expect-error: `nm_urnaa` is not a field of addEntity's body (the typo the issue reports)
  await api.POST('/api/entidade/add/', { body: { nome: 'x', nm_urnaa: 'y' } });
  // @ts-expect-error: a misspelled field of a nested entry
  await api.POST('/api/entidade/add/', { body: { nome: 'x', marketshare: [{ marketshare: '10', notas: 'y' }] } });
  // @ts-expect-error: a misspelled field of an array item (`usuario` for `username`)
  await api.POST('/api/monitor_social/add_monitor/', { body: { entity_id: 12, name: 'Oficial', profiles: [{ nm_rede: 'instagram', usuario: 'mariasantos' }] } });
  // @ts-expect-error: `uf` is not a query parameter of listMunicipalities
  await api.GET('/api/municipios/', { params: { query: { uf: '35' } } });
  // @ts-expect-error: `id` is not a path parameter of getUser
  await api.GET('/api/usuario/{user_id}/', { params: { path: { user_id: 7, id: 7 } } });
  // @ts-expect-error: an unknown field beside the known ones of addOperator's body
  await api.POST('/api/operators/add_operator/', { body: { entity_id: 12, email: 'joana@exemplo.com.br', role: 'operator', admin: true } });
  // @ts-expect-error: getEntity's `id` is required by the server, so by the SDK
  await api.GET('/api/entidade/data/', { params: { query: {} } });
  // @ts-expect-error: and the init that holds it is required too
  await api.GET('/api/entidade/data/');
  // @ts-expect-error: checkOperatorEmail needs `entity_id` as well as `email`
  await api.GET('/api/operators/check_operator_email/', { params: { query: { email: 'joana@exemplo.com.br' } } });
  // @ts-expect-error: and `email`, for which no default would be safe
  await api.GET('/api/operators/check_operator_email/', { params: { query: { entity_id: 12 } } });
  // @ts-expect-error: listOperators' `id` stays required (no default entity would be safe)
  await api.GET('/api/operators/get_operators/', { params: { query: {} } });
  // @ts-expect-error: checkEmail's `email` stays required
  await api.GET('/api/check/email/', { params: { query: {} } });
  // @ts-expect-error: getSocialnetRemovalStatus's `id` stays required
  await api.GET('/api/callback/socialnet_removal/', { params: { query: {} } });
  // @ts-expect-error: only_team is `true`, `false`, `1` or `0`
  await api.GET('/api/account/', { params: { query: { only_team: 'yes' } } });
}

describe('exact SDK calls', () => {
  it('keeps the response types openapi-fetch infers', () => {
    type GetEntity = Awaited<ReturnType<typeof getEntity>>;
    // openapi-fetch's Readable<> rebuilds the object types, so the check is both ways rather than identity.
    expectTypeOf<NonNullable<GetEntity['data']>['data']>().toExtend<EntityRecord>();
    expectTypeOf<EntityRecord>().toExtend<NonNullable<GetEntity['data']>['data']>();
    expectTypeOf<NonNullable<GetEntity['data']>['data']['nome']>().toEqualTypeOf<string>();
    expectTypeOf<NonNullable<GetEntity['error']>['error']['code']>().toEqualTypeOf<Schemas['ErrorCode']>();
  });

  it('sends a numeric id in the query as its digits', async () => {
    const sent: string[] = [];
    const api = createApiClient({
      baseUrl: 'http://palanque.test',
      retry: false,
      fetch: async (input) => {
        sent.push(new Request(input).url);
        return Response.json({ success: true, data: {}, message: 'ok', request_id: 'r' });
      },
    });
    await getEntity(api);
    expect(sent).toEqual(['http://palanque.test/api/entidade/data/?id=12']);
  });

  it('requires every query parameter the spec says is required in practice, and no other', () => {
    type Parameter = { in: string; name: string; description?: string };
    const spec = loadSpec();
    const requiredInPractice: string[] = [];
    for (const [path, item] of Object.entries(spec.paths as Record<string, Record<string, { parameters?: Array<Parameter | { $ref: string }> }>>)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const reference of operation.parameters ?? []) {
          const parameter = ('$ref' in reference ? tryResolvePointer(spec, reference.$ref) : reference) as Parameter;
          if (parameter.in === 'query' && /required in practice/.test(parameter.description ?? '')) requiredInPractice.push(`${method} ${path} ${parameter.name}`);
        }
      }
    }
    const overridden = Object.entries(requiredQueryParameters).flatMap(([path, methods]) =>
      Object.entries(methods).flatMap(([method, names]) => Object.keys(names).map((name) => `${method} ${path} ${name}`)),
    );
    expect(overridden.sort()).toEqual(requiredInPractice.sort());
  });
});

function getEntity(api: PalanqueClient) {
  return api.GET('/api/entidade/data/', { params: { query: { id: 12 } } });
}
