/** Helpers where plain calls are awkward: the envelope, logging in and out, and paging. */
import type { PalanqueClient } from './client.js';
import type { components, operations } from './schema.js';

export type Municipality = components['schemas']['Municipality'];
export type MunicipalityPage = components['schemas']['MunicipalityPage'];
export type MunicipalityQuery = NonNullable<operations['listMunicipalities']['parameters']['query']>;
export type LoginResponse = components['schemas']['LoginResponse'];

/** The payload of an enveloped answer (`{ success, data, message, request_id }` gives `data`). */
export function unwrap<Payload>(result: { data?: { data: Payload } }): Payload {
  if (!result.data) throw new TypeError('The answer has no body to unwrap');
  return result.data.data;
}

/** Logs in and keeps the key in the client for the calls that follow. */
export async function login(client: PalanqueClient, username: string, password: string): Promise<LoginResponse> {
  const session = unwrap(await client.POST('/api/auth/login', { body: { username, password } }));
  client.token = session.token;
  return session;
}

/** Revokes the client's key on the server and forgets it. */
export async function logout(client: PalanqueClient): Promise<void> {
  await client.POST('/api/auth/logout');
  client.token = undefined;
}

/** Every page of the municipality list with these filters, following `links.next` to the last one. */
export async function* municipalityPages(client: PalanqueClient, query: MunicipalityQuery = {}): AsyncGenerator<MunicipalityPage> {
  let next: MunicipalityQuery | undefined = query;
  while (next) {
    const { data }: { data?: MunicipalityPage } = await client.GET('/api/municipios/', { params: { query: next } });
    if (!data) return;
    yield data;
    next = data.links.next ? queryOf(data.links.next) : undefined;
  }
}

/** Every municipality matching the filters, page after page. */
export async function* eachMunicipality(client: PalanqueClient, query: MunicipalityQuery = {}): AsyncGenerator<Municipality> {
  for await (const page of municipalityPages(client, query)) yield* page.results;
}

/** The query of a `links.next` URL, as the operation takes it (the server keeps the filters in it). */
function queryOf(url: string): MunicipalityQuery {
  return Object.fromEntries(new URL(url).searchParams) as MunicipalityQuery;
}
