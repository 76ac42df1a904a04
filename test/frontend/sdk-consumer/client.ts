/**
 * What a front end writes with @palanque/sdk, compiled with a Vite app's settings (tsconfig.json) and
 * run with Node against a real server: `node out/client.js <baseUrl> <username> <password>` prints what
 * it read as one JSON line.
 */
import { createApiClient, login, PalanqueApiError, unwrap, type components } from '@palanque/sdk';

type CandidateEntity = components['schemas']['CandidateEntity'];

export async function tour(baseUrl: string, username: string, password: string) {
  const api = createApiClient({ baseUrl, retry: false });
  const session = await login(api, username, password);
  const draft: CandidateEntity = { nome: 'Maria da Silva Santos', nm_urna: 'Maria Santos' };
  const created = unwrap(await api.POST('/api/entidade/add/', { body: draft }));
  const entities = unwrap(await api.GET('/api/entidade/'));
  const read = unwrap(await api.GET('/api/entidade/data/', { params: { query: { id: created.id } } }));
  let missing: string | undefined;
  try {
    await api.GET('/api/entidade/data/', { params: { query: { id: 999999 } } });
  } catch (error) {
    if (error instanceof PalanqueApiError) missing = error.code;
  }
  return { user: session.user.username, created: created.id, listed: entities.results.map((entity) => entity.nome), read: read.nm_urna, missing };
}

/** Calls the contract refuses, which must not compile (never run). */
export function refusedAtCompileTime(api: ReturnType<typeof createApiClient>) {
  // @ts-expect-error the contract types codigo_uf as a number: a front end cannot send 'SP'
  void api.GET('/api/municipios/', { params: { query: { codigo_uf: 'SP' } } });
  // @ts-expect-error nm_urnaa is no field of an entity: a misspelled field does not compile
  void api.POST('/api/entidade/add/', { body: { nome: 'Maria', nm_urnaa: 'Maria Santos' } });
  // @ts-expect-error the server needs the entity's id, so the SDK does too
  void api.GET('/api/entidade/data/', { params: { query: {} } });
}

const [baseUrl, username, password] = process.argv.slice(2);
if (baseUrl && username && password) console.log(JSON.stringify(await tour(baseUrl, username, password)));

declare const process: { argv: string[] };
