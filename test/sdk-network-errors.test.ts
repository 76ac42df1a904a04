/**
 * The SDK when fetch throws (issue 46 §5): a connection that fails, or in a browser a request CORS
 * refused (fetch cannot tell them apart). Against a server that drops every connection once it has read
 * the request (the case where a resent request may be applied twice): a request is resent only when a
 * second try cannot apply it twice (idempotent methods, POSTs with an Idempotency-Key), never a login,
 * which carries no key. With a fetch stub and a page origin: the error names the likely CORS refusal and
 * the origins to check, and keeps what fetch threw as its cause.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { UNKEYED_POSTS } from '../sdk/client.js';
import { createApiClient, login, PalanqueNetworkError, type RetryEvent } from '../sdk/index.js';
import { NEVER_STORED } from '../src/http/idempotency.js';

describe('against a server that drops every connection', () => {
  let server: Server;
  let baseUrl = '';
  let seen: Array<{ method: string; path: string; key: string | undefined }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume().on('end', () => {
        seen.push({ method: req.method ?? '', path: req.url ?? '', key: req.headers['idempotency-key'] as string | undefined });
        res.socket?.destroy();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const client = (retries: RetryEvent[] = []) => {
    seen = [];
    return createApiClient({ baseUrl, token: 'plq_x', retry: { retries: 2, baseDelayMs: 1, onRetry: (event) => retries.push(event) } });
  };

  it('sends a login once, without an Idempotency-Key, and throws PalanqueNetworkError with what fetch threw', async () => {
    const retries: RetryEvent[] = [];
    const failure = await login(client(retries), 'ana.souza', 'a password').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PalanqueNetworkError);
    expect(seen).toEqual([{ method: 'POST', path: '/api/auth/login', key: undefined }]);
    expect(retries).toEqual([]);
    // Node has no page, so no CORS: the message is fetch's own.
    expect((failure as PalanqueNetworkError).message).toBe(`POST ${baseUrl}/api/auth/login failed: fetch failed`);
    expect((failure as PalanqueNetworkError).cause).toBeInstanceOf(TypeError);
    expect((failure as PalanqueNetworkError).requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sends every POST whose key the server does not keep once', async () => {
    const api = client();
    await api.POST('/api/auth/change_password/', { body: { current_password: 'one password', new_password: 'another password' } }).catch(() => undefined);
    await api.POST('/check/credential/', { body: { username: 'ana.souza', password: 'a password' } }).catch(() => undefined);
    expect(seen.map(({ path, key }) => ({ path, key }))).toEqual([
      { path: '/api/auth/change_password/', key: undefined },
      { path: '/check/credential/', key: undefined },
    ]);
  });

  it('resends a POST with an Idempotency-Key, the same key each time, until its retries run out', async () => {
    const retries: RetryEvent[] = [];
    const api = client(retries);
    await expect(api.POST('/api/research/add_research_bookmark/', { body: { title: 't', url: 'https://example.org/' } })).rejects.toBeInstanceOf(PalanqueNetworkError);
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map(({ key }) => key)).size).toBe(1);
    expect(seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(retries.map(({ attempt, status }) => ({ attempt, status }))).toEqual([
      { attempt: 1, status: undefined },
      { attempt: 2, status: undefined },
    ]);
  });

  it('resends GET, PUT and DELETE (idempotent), and sends a PATCH once', async () => {
    const api = client();
    await api.GET('/api/municipios/').catch(() => undefined);
    await api.PUT('/api/sms/compliance/', { params: { query: { entity_id: '1' } }, body: { mode: 'enforce' } }).catch(() => undefined);
    await api.DELETE('/api/contacts/{contact_id}/', { params: { path: { contact_id: 1 } } }).catch(() => undefined);
    await api.PATCH('/api/webhooks/endpoints/{endpoint_id}/', { params: { path: { endpoint_id: 1 } }, body: { enabled: false } }).catch(() => undefined);
    const tries = Object.fromEntries(['GET', 'PUT', 'DELETE', 'PATCH'].map((method) => [method, seen.filter((request) => request.method === method).length]));
    expect(tries).toEqual({ GET: 3, PUT: 3, DELETE: 3, PATCH: 1 });
  });
});

describe('in a browser, where fetch does not say why it failed', () => {
  const apiOrigin = 'https://api.palanque.example';
  const refused = new TypeError('Failed to fetch');
  let calls = 0;
  const refusing: typeof fetch = async () => {
    calls += 1;
    throw refused;
  };

  afterEach(() => {
    vi.unstubAllGlobals();
    calls = 0;
  });

  it('names a CORS refusal and both origins from a page of another origin, without resending a login', async () => {
    vi.stubGlobal('location', { origin: 'http://localhost:5173' });
    const api = createApiClient({ baseUrl: `${apiOrigin}/v1`, fetch: refusing, retry: { baseDelayMs: 1 } });
    const failure = (await login(api, 'ana.souza', 'a password').catch((error: unknown) => error)) as PalanqueNetworkError;
    expect(failure).toBeInstanceOf(PalanqueNetworkError);
    expect(failure.message).toBe(
      `POST ${apiOrigin}/v1/api/auth/login failed: network error or CORS refusal (Failed to fetch): is this origin (http://localhost:5173) in CORS_ORIGINS at ${apiOrigin}?`,
    );
    expect(failure.cause).toBe(refused);
    expect(calls).toBe(1);

    // A read is resent (a refusal is the same each time, but a dropped connection may not be).
    await expect(api.GET('/api/municipios/')).rejects.toThrow('network error or CORS refusal');
    expect(calls).toBe(1 + 4);
  });

  it('does not suggest CORS to a page of the API\'s own origin', async () => {
    vi.stubGlobal('location', { origin: apiOrigin });
    const failure = (await createApiClient({ baseUrl: apiOrigin, fetch: refusing, retry: false })
      .GET('/api/municipios/')
      .catch((error: unknown) => error)) as PalanqueNetworkError;
    expect(failure.message).toBe(`GET ${apiOrigin}/api/municipios/ failed: Failed to fetch`);
  });
});

it('sends no Idempotency-Key on exactly the POSTs whose answer the server never stores', () => {
  const contract = JSON.parse(readFileSync(new URL('../sdk/openapi.json', import.meta.url), 'utf8')) as { paths: Record<string, Record<string, { operationId?: string }>> };
  const neverStored = Object.entries(contract.paths)
    .filter(([, item]) => NEVER_STORED.has(item.post?.operationId ?? ''))
    .map(([path]) => path);
  expect(neverStored).toHaveLength(NEVER_STORED.size);
  expect([...UNKEYED_POSTS].sort()).toEqual(neverStored.sort());
});
