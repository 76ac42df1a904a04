/**
 * The SDK's client and helpers, as a front end or a Node script uses them: against the real app (login
 * keeps the key, logout drops it, errors arrive as PalanqueApiError with the error model and the request
 * id, the municipality pages are followed to the last one) and against a scripted server on loopback
 * (which answers are retried, how long it waits, that a long Retry-After is answered at once, that each
 * wait is announced to onRetry, and that every try of a call carries the same request id and Idempotency-Key).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createApiClient,
  eachMunicipality,
  login,
  logout,
  municipalityPages,
  PalanqueApiError,
  PalanqueNetworkError,
  retryAfterMs,
  unwrap,
  type Municipality,
  type RetryEvent,
} from '../sdk/index.js';
import { lockSubjects } from '../src/accounts/login-lock.js';
import { createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { freePort } from './helpers/process.js';

describe('against the real app', () => {
  let app: TestApp;
  let user: TestUser;
  const sent: Request[] = [];
  /** A fetch that keeps what the SDK sent, to look at its headers. */
  const recording: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    sent.push(request.clone());
    return fetch(request);
  };

  beforeAll(async () => {
    app = await startTestApp({ withMunicipalities: true });
    user = await createUser(app);
  });

  afterAll(async () => {
    await app?.close();
  });

  it('logs in, keeps the key for the calls that follow, and drops it at logout', async () => {
    const api = createApiClient({ baseUrl: app.baseUrl, fetch: recording });
    const anonymous = await api.GET('/api/usuario/get_user_social_logins/').catch((error: unknown) => error);
    expect(anonymous).toBeInstanceOf(PalanqueApiError);
    expect(anonymous).toMatchObject({ status: 401, code: 'unauthorized' });

    const session = await login(api, user.user.username, user.password);
    expect(session.token).toMatch(/^plq_/);
    expect(api.token).toBe(session.token);
    expect(unwrap(await api.GET('/api/usuario/get_user_social_logins/'))).toEqual([]);
    expect(sent.at(-1)?.headers.get('Authorization')).toBe(`Token ${session.token}`);

    await logout(api);
    expect(api.token).toBeUndefined();
    // The key was revoked on the server too: sent by hand, it is refused.
    const revoked = createApiClient({ baseUrl: app.baseUrl, token: session.token });
    await expect(revoked.GET('/api/usuario/get_user_social_logins/')).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it("sends the client's device token at login and keeps the one answered, so others' failures at the name never delay it", async () => {
    const api = createApiClient({ baseUrl: app.baseUrl, fetch: recording });
    const first = await login(api, user.user.username, user.password);
    expect(first.device_token).toMatch(/^plqd_/);
    expect(api.deviceToken).toBe(first.device_token);
    // Someone fails at the name from everywhere: without the token, even the right password waits.
    await app.accounts.models.LoginFailure.bulkCreate(Array.from({ length: 12 }, () => ({ subject: lockSubjects.identifier(user.user.username), failed_at: new Date(), pending: false })));
    const stranger = createApiClient({ baseUrl: app.baseUrl, retry: false });
    await expect(login(stranger, user.user.username, user.password)).rejects.toMatchObject({ status: 429, code: 'login_locked' });
    // A client made from the stored token (a new page load) sends it, and is in at once.
    const reloaded = createApiClient({ baseUrl: app.baseUrl, deviceToken: first.device_token, retry: false, fetch: recording });
    const again = await login(reloaded, user.user.username, user.password);
    expect(JSON.parse(await sent.at(-1)!.text())).toMatchObject({ device_token: first.device_token });
    expect(again.device_token).toBe(first.device_token);
    expect(reloaded.deviceToken).toBe(first.device_token);
    await app.accounts.models.LoginFailure.destroy({ where: { subject: lockSubjects.identifier(user.user.username) } });
  });

  it('throws the error model with the request id the server logged the call under', async () => {
    const api = createApiClient({ baseUrl: app.baseUrl, fetch: recording });
    const failure = (await api.GET('/api/municipios/', { params: { query: { page: 999 } } }).catch((error: unknown) => error)) as PalanqueApiError;
    expect(failure).toBeInstanceOf(PalanqueApiError);
    expect(failure.status).toBe(404);
    expect(failure.code).toBe('not_found');
    expect(failure.details).toEqual([expect.objectContaining({ field: 'page', value: 999 })]);
    expect(failure.requestId).toBe(sent.at(-1)?.headers.get('X-Request-Id'));
    expect(failure.body?.request_id).toBe(failure.requestId);
  });

  it('sends a fresh X-Request-Id per call, and an Idempotency-Key on POSTs only', async () => {
    const api = createApiClient({ baseUrl: app.baseUrl, fetch: recording, token: user.key });
    sent.length = 0;
    await api.GET('/api/usuario/get_user_social_logins/');
    await api.GET('/api/usuario/get_user_social_logins/');
    await api.POST('/api/research/add_research_bookmark/', { body: { title: 'Pesquisa Datafolha', url: 'https://datafolha.example/pesquisa' } }).catch(() => undefined);
    const ids = sent.map((request) => request.headers.get('X-Request-Id'));
    expect(new Set(ids).size).toBe(3);
    expect(sent.slice(0, 2).map((request) => request.headers.get('Idempotency-Key'))).toEqual([null, null]);
    expect(sent[2]?.headers.get('Idempotency-Key')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('follows links.next through every page of a filtered municipality list', async () => {
    const api = createApiClient({ baseUrl: app.baseUrl });
    const pages = [];
    for await (const page of municipalityPages(api, { codigo_uf: 35 })) pages.push(page);
    const all: Municipality[] = [];
    for await (const municipality of eachMunicipality(api, { codigo_uf: 35 })) all.push(municipality);

    expect(pages.length).toBe(pages[0]!.total_pages);
    expect(pages.length).toBeGreaterThan(1);
    expect(all.length).toBe(pages[0]!.count);
    expect(new Set(all.map((municipality) => municipality.codigo_ibge)).size).toBe(all.length);
    expect(all.every((municipality) => municipality.codigo_uf === 35)).toBe(true);
    expect(all.map((municipality) => municipality.nome)).toContain('São Paulo');
  });
});

describe('retries, against a scripted server', () => {
  interface Seen {
    method: string;
    headers: IncomingHttpHeaders;
  }
  let server: Server;
  let baseUrl = '';
  let seen: Seen[] = [];
  /** What the server answers next, in order; the last one repeats. */
  let script: Array<{ status: number; headers?: Record<string, string>; body: string }> = [];

  const errorModel = (code: string, requestId = 'from-the-server') => JSON.stringify({ success: false, error: { code, message: `a ${code}`, details: [] }, request_id: requestId });
  const ok = JSON.stringify({ success: true, data: { id: 1 }, message: 'ok', request_id: 'r' });

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ method: req.method ?? '', headers: req.headers });
      const next = script.length > 1 ? script.shift()! : script[0]!;
      req.resume().on('end', () => res.writeHead(next.status, { 'Content-Type': 'application/json', ...next.headers }).end(next.body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const start = (...answers: typeof script) => {
    seen = [];
    script = answers;
  };

  it('retries a 503 after the Retry-After it names, with the same request id and Idempotency-Key', async () => {
    start({ status: 503, headers: { 'Retry-After': '1' }, body: errorModel('service_unavailable') }, { status: 201, body: ok });
    const api = createApiClient({ baseUrl, token: 'plq_x', retry: { baseDelayMs: 5 } });
    const began = Date.now();
    const result = await api.POST('/api/research/add_research_bookmark/', { body: { title: 't', url: 'https://example.org/' } });
    expect(result.response.status).toBe(201);
    expect(Date.now() - began).toBeGreaterThanOrEqual(950);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.headers['x-request-id']).toBe(seen[0]!.headers['x-request-id']);
    expect(seen[1]!.headers['idempotency-key']).toBe(seen[0]!.headers['idempotency-key']);
    expect(seen[0]!.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers at once, with the server\'s message, a 503 or 429 whose Retry-After is longer than the client waits', async () => {
    const retries: RetryEvent[] = [];
    const api = createApiClient({ baseUrl, retry: { baseDelayMs: 5, onRetry: (event) => retries.push(event) } });

    start({ status: 503, headers: { 'Retry-After': '3600' }, body: errorModel('service_unavailable') });
    const began = Date.now();
    await expect(api.GET('/api/municipios/')).rejects.toMatchObject({ name: 'PalanqueApiError', status: 503, code: 'service_unavailable', message: 'a service_unavailable' });
    expect(Date.now() - began).toBeLessThan(1000);
    expect(seen).toHaveLength(1);

    // A locked login names how long it stays locked: retrying within that time only fails again.
    start({ status: 429, headers: { 'Retry-After': '900' }, body: errorModel('login_locked') });
    await expect(api.POST('/api/auth/login', { body: { username: 'ana.souza', password: 'wrong-password' } })).rejects.toMatchObject({ status: 429, code: 'login_locked' });
    expect(seen).toHaveLength(1);
    expect(retries).toEqual([]);
  });

  it('waits for a Retry-After up to maxRetryAfterMs, and not beyond it', async () => {
    start({ status: 503, headers: { 'Retry-After': '1' }, body: errorModel('service_unavailable') }, { status: 200, body: ok });
    const patient = createApiClient({ baseUrl, retry: { maxRetryAfterMs: 1000 } });
    expect((await patient.GET('/api/municipios/')).response.status).toBe(200);
    expect(seen).toHaveLength(2);

    start({ status: 503, headers: { 'Retry-After': '1' }, body: errorModel('service_unavailable') }, { status: 200, body: ok });
    const hasty = createApiClient({ baseUrl, retry: { maxRetryAfterMs: 999 } });
    await expect(hasty.GET('/api/municipios/')).rejects.toMatchObject({ status: 503 });
    expect(seen).toHaveLength(1);
  });

  it('announces each wait to onRetry before it starts: which retry, how long, the status and the request', async () => {
    start({ status: 429, body: errorModel('rate_limited') }, { status: 503, headers: { 'Retry-After': '0' }, body: errorModel('service_unavailable') }, { status: 200, body: ok });
    const retries: Array<RetryEvent & { seenBefore: number }> = [];
    const api = createApiClient({ baseUrl, retry: { baseDelayMs: 5, onRetry: (event) => retries.push({ ...event, seenBefore: seen.length }) } });
    expect((await api.GET('/api/municipios/')).response.status).toBe(200);
    expect(retries.map(({ attempt, status, reason, seenBefore }) => ({ attempt, status, reason, seenBefore }))).toEqual([
      { attempt: 1, status: 429, reason: 'rate limited', seenBefore: 1 },
      { attempt: 2, status: 503, reason: 'unavailable', seenBefore: 2 },
    ]);
    expect(retries[0]!.waitMs).toBeGreaterThan(0);
    expect(retries[0]!.waitMs).toBeLessThanOrEqual(10);
    expect(retries[1]!.waitMs).toBe(0);
    expect(retries[0]!.request.headers.get('X-Request-Id')).toBe(seen[0]!.headers['x-request-id']);
  });

  it('gives up on a 429 after its retries, throwing the last answer', async () => {
    start({ status: 429, body: errorModel('rate_limited') });
    const api = createApiClient({ baseUrl, retry: { retries: 2, baseDelayMs: 5 } });
    await expect(api.GET('/api/municipios/')).rejects.toMatchObject({ name: 'PalanqueApiError', status: 429, code: 'rate_limited', requestId: 'from-the-server' });
    expect(seen).toHaveLength(3);
  });

  it('does not retry other failures, nor anything when retrying is off', async () => {
    start({ status: 500, body: errorModel('internal_error') });
    await expect(createApiClient({ baseUrl, retry: { baseDelayMs: 5 } }).GET('/api/municipios/')).rejects.toMatchObject({ status: 500, code: 'internal_error' });
    expect(seen).toHaveLength(1);

    start({ status: 503, body: errorModel('service_unavailable') });
    await expect(createApiClient({ baseUrl, retry: false }).GET('/api/municipios/')).rejects.toMatchObject({ status: 503 });
    expect(seen).toHaveLength(1);
  });

  it('names an answer that is not the error model by its status, with the request id it sent', async () => {
    start({ status: 502, headers: { 'Content-Type': 'text/html' }, body: '<h1>Bad gateway</h1>' });
    const failure = (await createApiClient({ baseUrl }).GET('/api/municipios/').catch((error: unknown) => error)) as PalanqueApiError;
    expect(failure).toBeInstanceOf(PalanqueApiError);
    expect(failure.code).toBe('http_502');
    expect(failure.body).toBeUndefined();
    expect(failure.requestId).toBe(seen[0]!.headers['x-request-id']);
  });

  it('returns errors as { error, response } with throwOnError off', async () => {
    start({ status: 409, body: errorModel('conflict') });
    const { error, response } = await createApiClient({ baseUrl, throwOnError: false }).GET('/api/municipios/');
    expect(response.status).toBe(409);
    expect(error).toMatchObject({ success: false, error: { code: 'conflict' } });
  });

  it('throws PalanqueNetworkError when the API cannot be reached, after retrying', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const retries: RetryEvent[] = [];
    const failure = await createApiClient({ baseUrl: closed, retry: { retries: 1, baseDelayMs: 5, onRetry: (event) => retries.push(event) } })
      .GET('/api/municipios/')
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PalanqueNetworkError);
    expect(retries).toEqual([expect.objectContaining({ attempt: 1, status: undefined, reason: expect.stringContaining('ECONNREFUSED') })]);
    expect((failure as PalanqueNetworkError).requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
    const inFiveSeconds = new Date(Date.now() + 5000).toUTCString();
    expect(retryAfterMs(inFiveSeconds)).toBeGreaterThan(3000);
    expect(retryAfterMs(inFiveSeconds)).toBeLessThanOrEqual(5000);
  });
});
