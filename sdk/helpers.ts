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

/**
 * Logs in and keeps the key in the client for the calls that follow. Sends the client's device token
 * (and `unlockToken`, from an unlock mail, when given) and keeps the device token answered.
 */
export async function login(client: PalanqueClient, username: string, password: string, unlockToken?: string): Promise<LoginResponse> {
  const session = unwrap(await client.POST('/api/auth/login', { body: { username, password, device_token: client.deviceToken, unlock_token: unlockToken } }));
  client.token = session.token;
  client.deviceToken = session.device_token;
  return session;
}

/** Revokes the client's key on the server and forgets it. */
export async function logout(client: PalanqueClient): Promise<void> {
  await client.POST('/api/auth/logout');
  client.token = undefined;
}

/**
 * Every page of the municipality list with these filters, following `links.next` to the last one. It
 * stops when `next` names a page already read: a mock answering the same example page for every query
 * (msw's handlers, Prism) would otherwise send it round in circles.
 */
export async function* municipalityPages(client: PalanqueClient, query: MunicipalityQuery = {}): AsyncGenerator<MunicipalityPage> {
  const read = new Set<string>();
  let next: MunicipalityQuery | undefined = query;
  while (next) {
    read.add(pageKey(next));
    const { data }: { data?: MunicipalityPage } = await client.GET('/api/municipios/', { params: { query: next } });
    if (!data) return;
    yield data;
    next = data.links.next ? queryOf(data.links.next) : undefined;
    if (next && read.has(pageKey(next))) return;
  }
}

/** Every municipality matching the filters, page after page. */
export async function* eachMunicipality(client: PalanqueClient, query: MunicipalityQuery = {}): AsyncGenerator<Municipality> {
  for await (const page of municipalityPages(client, query)) yield* page.results;
}

/**
 * The query of a `links.next` URL, as the operation takes it (the server keeps the filters in it). The
 * URL may be absolute (the server's) or relative (`?page=2`): only its query is read.
 */
function queryOf(url: string): MunicipalityQuery {
  return Object.fromEntries(new URL(url, 'http://relative.invalid/').searchParams) as MunicipalityQuery;
}

/** One string per page whatever the order of its query's parameters; a missing `page` is page 1. */
function pageKey(query: MunicipalityQuery): string {
  const entries = Object.entries({ page: 1, ...query })
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => [name, String(value)]);
  return JSON.stringify(entries.sort(([a], [b]) => a!.localeCompare(b!)));
}
