/**
 * The Prism mock serves the contract's examples, so front ends can be built before and beside the
 * real server. These tests start Prism for real on sdk/openapi.json and talk to it through the SDK.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, municipalityPages, type PalanqueClient } from '../sdk/index.js';
import { startPrismMock, type RunningMock } from './helpers/prism.js';
import { responseExample } from './helpers/spec.js';

let mock: RunningMock;
let anonymous: PalanqueClient;
let authenticated: PalanqueClient;

beforeAll(async () => {
  mock = await startPrismMock();
  anonymous = createApiClient({ baseUrl: mock.baseUrl, throwOnError: false });
  authenticated = createApiClient({ baseUrl: mock.baseUrl, token: 'mock-token', throwOnError: false });
});

afterAll(async () => {
  await mock?.stop();
});

describe('Prism mock through the SDK', () => {
  it('serves the municipality list example, not enveloped', async () => {
    const { data, response } = await anonymous.GET('/api/municipios/');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(data).toEqual(responseExample('/api/municipios/', 'get', '200', 'firstPage'));
    expect(data?.results).toHaveLength(30);
    expect(data?.results[0]).toEqual({
      codigo_ibge: 1100015,
      nome: "Alta Floresta D'Oeste",
      latitude: -11.9283,
      longitude: -61.9953,
      capital: false,
      codigo_uf: 11,
    });
  });

  it('serves the login example for valid credentials', async () => {
    const { data, response } = await anonymous.POST('/api/auth/login', {
      body: { username: 'ana.souza', password: 'c4mp4nh4-S3gura!' },
    });
    expect(response.status).toBe(200);
    expect(data).toEqual(responseExample('/api/auth/login', 'post', '200', 'admin'));
    expect(data?.data.token_type).toBe('Token');
  });

  it('answers 401 in the error model to an ApiKeyAuth operation without Authorization', async () => {
    const { error, response } = await anonymous.GET('/api/entidade/');
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBeTruthy();
    expect(error).toMatchObject({ success: false, error: { code: 'unauthorized' } });
  });

  it('serves the same ApiKeyAuth operation once Authorization is sent', async () => {
    const { data, response } = await authenticated.GET('/api/entidade/');
    expect(response.status).toBe(200);
    expect(data?.data.results.map((entity) => entity.tp)).toEqual(['candidato', 'concorrente', 'partido']);
  });

  it('answers 422 in the error model to a body that breaks the schema', async () => {
    const { error, response } = await anonymous.POST('/api/auth/login', {
      // @ts-expect-error: deliberately wrong type, and password missing
      body: { username: 42 },
    });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ success: false, error: { code: 'validation_failed' } });
    expect(response.headers.get('sl-violations')).toContain('password');
  });

  it('answers 422 to a body with a field its schema does not list, naming it, as the server does', async () => {
    const { error, response } = await authenticated.POST('/api/entidade/add/', {
      // @ts-expect-error: `nm_urnaa` is not a field of the body (the SDK refuses it too)
      body: { nome: 'Maria Santos', nm_urnaa: 'Maria' },
    });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ success: false, error: { code: 'validation_failed' } });
    const violations = JSON.parse(response.headers.get('sl-violations') ?? '[]') as Array<{ code: string; message: string }>;
    expect(violations).toEqual([expect.objectContaining({ code: 'additionalProperties', message: expect.stringContaining('nm_urnaa') })]);
  });

  it('picks the status with Prefer: code=404', async () => {
    const { error, response } = await anonymous.GET('/api/municipios/', {
      params: { query: { page: 999 } },
      headers: { Prefer: 'code=404' },
    });
    expect(response.status).toBe(404);
    expect(error).toMatchObject({ success: false, error: { code: 'not_found' } });
  });

  it("answers getEntity's own 404 to Prefer: code=404, not another operation's", async () => {
    const { error, response } = await authenticated.GET('/api/entidade/data/', { params: { query: { id: '999' } }, headers: { Prefer: 'code=404' } });
    expect(response.status).toBe(404);
    expect(error).toEqual(responseExample('/api/entidade/data/', 'get', '404', 'unknownEntity'));
    expect(error?.error.message).toBe('There is no entity 999 in your teams.');
  });

  it("answers a create's 200 unless asked for 201 with Prefer: code=201 (Prism picks the lowest 2xx)", async () => {
    const body = { title: 'Pesquisa', url: 'https://www.exemplo.com.br/p' };
    const lowest = await authenticated.POST('/api/research/add_research_bookmark/', { body });
    expect(lowest.response.status).toBe(200);
    const created = await authenticated.POST('/api/research/add_research_bookmark/', { body, headers: { Prefer: 'code=201' } });
    expect(created.response.status).toBe(201);
    expect(created.data).toEqual(responseExample('/api/research/add_research_bookmark/', 'post', '201', 'saved'));
  });

  it('lets municipalityPages end: the mock answers the same example page to page 2, whose next names page 2 again', async () => {
    const pages = [];
    for await (const page of municipalityPages(createApiClient({ baseUrl: mock.baseUrl, retry: false }))) pages.push(page);
    expect(pages).toHaveLength(2);
  });

  it('picks a named example with Prefer: example=...', async () => {
    const login = await anonymous.POST('/api/auth/login', {
      body: { username: 'carlos.pereira', password: 'segredo' },
      headers: { Prefer: 'example=operator' },
    });
    expect(login.data).toEqual(responseExample('/api/auth/login', 'post', '200', 'operator'));
    expect(login.data?.data.user.is_admin).toBe(false);

    const rondonia = await anonymous.GET('/api/municipios/', {
      params: { query: { codigo_uf: 11, page: 2 } },
      headers: { Prefer: 'example=rondoniaPage2' },
    });
    expect(rondonia.data?.count).toBe(52);
    expect(rondonia.data?.links.previous).toBe('http://localhost:8000/api/municipios/?codigo_uf=11&page=1');
    expect(rondonia.data?.results).toHaveLength(22);
  });

  it('answers the subscription handshake as plain text, not enveloped', async () => {
    const { data, response } = await anonymous.GET('/api/webhook/socialnet/', {
      params: { query: { 'hub.mode': 'subscribe', 'hub.challenge': '1158201444', 'hub.verify_token': 'token' } },
      parseAs: 'text',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(data).toBe('1158201444');
  });

  it('generates schema-shaped bodies in dynamic mode on request', async () => {
    const { data, response } = await authenticated.GET('/api/controle/basic_status/', {
      headers: { Prefer: 'dynamic=true' },
    });
    expect(response.status).toBe(200);
    expect(data?.success).toBe(true);
    expect(['ok', 'degraded']).toContain(data?.data.status);
    // Only declared properties are generated (x-json-schema-faker.fillProperties is false).
    expect(Object.keys(data?.data ?? {}).sort()).toEqual(
      ['database', 'jobs', 'municipalities_loaded', 'status', 'uptime_seconds', 'version'],
    );
  });
});
