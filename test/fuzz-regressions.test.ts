/**
 * Bugs the contract fuzzer (test/contract-fuzz.test.ts) found, each kept as a plain example: the request
 * that answered 500, and the 4xx in the error model it answers now.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin, type TestUser } from './helpers/accounts.js';
import { expectError, request } from './helpers/http.js';

let app: TestApp;
let admin: TestUser;

beforeAll(async () => {
  app = await startTestApp({ withMunicipalities: true });
  admin = await createAdmin(app);
});

afterAll(async () => {
  await app?.close();
});

describe('a numeric parameter that coerces to Infinity is 400, not a query with LIMIT Infinity', () => {
  // ajv turns these into Infinity and then skips minimum/maximum, which it checks on finite numbers only.
  const infinite = ['Infinity', '1e400', '9'.repeat(400)];

  it.each(infinite)('page=%s on the lists served from the database', async (page) => {
    for (const list of ['/api/auth/account?', '/api/entidade/?', '/api/strategy/get_scenario_requests/?monitor_id=1&']) {
      const result = await request(app.baseUrl, 'GET', `${list}page=${page}`, admin.headers);
      expectError(result, 400, 'bad_request');
      expect(result.body.error.details).toEqual([
        { location: 'query', field: 'page', rule: 'maximum', message: expect.any(String), ...(page.length <= 200 ? { value: page } : {}) },
      ]);
    }
  });

  it('page=-Infinity names the minimum', async () => {
    const result = await request(app.baseUrl, 'GET', '/api/entidade/?page=-Infinity', admin.headers);
    expectError(result, 400, 'bad_request');
    expect(result.body.error.details).toEqual([{ location: 'query', field: 'page', rule: 'minimum', message: expect.any(String), value: '-Infinity' }]);
  });

  it('page=Infinity on the municipality list is 400 like page=2000000, not a 404 for page "null"', async () => {
    const result = await request(app.baseUrl, 'GET', '/api/municipios/?page=Infinity');
    expectError(result, 400, 'bad_request');
    expect(result.body.error.details[0]).toMatchObject({ location: 'query', field: 'page', value: 'Infinity' });
  });

  it.each(['Infinity', '1e400'])('the path parameter user_id=%s', async (userId) => {
    const result = await request(app.baseUrl, 'GET', `/api/usuario/${userId}/`, admin.headers);
    expectError(result, 400, 'bad_request');
    expect(result.body.error.details).toEqual([{ location: 'path', field: 'user_id', rule: 'maximum', message: expect.any(String), value: userId }]);
  });

  it('still serves a finite page and answers a finite page out of bounds as before', async () => {
    expect((await request(app.baseUrl, 'GET', '/api/entidade/?page=1', admin.headers)).status).toBe(200);
    const tooFar = await request(app.baseUrl, 'GET', `/api/entidade/?page=${'9'.repeat(20)}`, admin.headers);
    expectError(tooFar, 400, 'bad_request');
    expect(tooFar.body.error.details[0]).toMatchObject({ field: 'page', rule: 'maximum' });
  });
});

describe('a body that does not decompress as its Content-Encoding says is 400, not 500', () => {
  const body = JSON.stringify({ username: 'ninguem', password: 'senha-errada-123' });

  it.each(['gzip', 'deflate', 'br'])('Content-Encoding: %s on a plain JSON body', async (encoding) => {
    const response = await fetch(`${app.baseUrl}/api/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': encoding, 'X-Request-Id': `bad-${encoding}` },
      body,
    });
    const result = { status: response.status, headers: response.headers, text: '', body: await response.json() };
    expectError(result, 400, 'bad_request');
    expect(result.body.request_id).toBe(`bad-${encoding}`);
    expect(result.body.error.details).toEqual([
      { location: 'header', field: 'Content-Encoding', rule: 'content_encoding', message: expect.any(String), value: encoding },
    ]);
  });

  it('a truncated gzip body', async () => {
    const compressed = gzipSync(body);
    const response = await fetch(`${app.baseUrl}/api/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      body: compressed.subarray(0, compressed.length - 8),
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error.code).toBe('bad_request');
  });

  it('a body that is really gzip-compressed is still read', async () => {
    const response = await fetch(`${app.baseUrl}/api/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      body: gzipSync(body),
    });
    // Read and checked: unknown credentials, not a decoding error.
    expect(response.status).toBe(401);
    expect((await response.json()).error.code).toBe('invalid_credentials');
  });
});

describe('an unsupported Content-Encoding or charset is 415 within the error model, however long the header', () => {
  it.each([
    ['a Content-Encoding of 3000 characters', { 'Content-Type': 'application/json', 'Content-Encoding': '9'.repeat(3000) }, { field: 'Content-Encoding', rule: 'content_encoding' }],
    ['an unknown Content-Encoding', { 'Content-Type': 'application/json', 'Content-Encoding': 'compress' }, { field: 'Content-Encoding', rule: 'content_encoding', value: 'compress' }],
    ['a charset of 3000 characters', { 'Content-Type': `application/json; charset=utf-${'8'.repeat(3000)}` }, { field: 'Content-Type', rule: 'charset' }],
    ['an unknown charset', { 'Content-Type': 'application/json; charset=klingon' }, { field: 'Content-Type', rule: 'charset', value: 'klingon' }],
  ])('%s', async (_case, headers, detail) => {
    const response = await fetch(`${app.baseUrl}/api/auth/login`, { method: 'POST', headers, body: '{"username":"a","password":"b"}' });
    const result = { status: response.status, headers: response.headers, text: '', body: await response.json() };
    expectError(result, 415, 'unsupported_media_type');
    // The error model bounds the message to 1000 characters: body-parser's own message quoted the header whole.
    expect(result.body.error.message.length).toBeLessThanOrEqual(1000);
    expect(result.body.error.details).toEqual([{ location: 'header', message: expect.any(String), ...detail }]);
  });
});

describe('a NUL character in a text is refused by name, not a 500 from SQLite', () => {
  it.each([
    ['a username', { username: 'a\u0000b', password: 'senha-qualquer-123' }, 'username'],
    ['an e-mail address', { username: 'a@b.com\u0000', password: 'senha-qualquer-123' }, 'username'],
  ])('login with %s holding a NUL is 422 naming the field', async (_case, body, field) => {
    const result = await request(app.baseUrl, 'POST', '/api/auth/login', {}, body);
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toEqual([{ location: 'body', field, rule: 'unicode', message: expect.any(String) }]);
  });

  it('a nested body field is named by its dotted path', async () => {
    const result = await request(app.baseUrl, 'POST', '/api/account/', admin.headers, { sync_sm: { elections_token: 'pnl_\u0000' } });
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toEqual([{ location: 'body', field: 'sync_sm.elections_token', rule: 'unicode', message: expect.any(String) }]);
  });

  it('a bookmark title holding a NUL is 422, not stored', async () => {
    const result = await request(app.baseUrl, 'POST', '/api/research/add_research_bookmark/', admin.headers, { url: 'https://exemplo.com.br/pesquisa', title: 'Pesquisa\u0000' });
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toEqual([{ location: 'body', field: 'title', rule: 'unicode', message: expect.any(String) }]);
    const list = await request(app.baseUrl, 'GET', '/api/research/get_user_research_bookmarks/', admin.headers);
    expect(list.body.data).toEqual([]);
  });

  it('a query parameter holding a NUL is 400', async () => {
    const result = await request(app.baseUrl, 'GET', '/api/callback/searchnet/?code=abc&state=st%00ate');
    expectError(result, 400, 'bad_request');
    expect(result.body.error.details).toEqual([{ location: 'query', field: 'state', rule: 'no_nul', message: expect.any(String) }]);
  });

  it('credentials are still checked first: no key is 401 whatever the body', async () => {
    const result = await request(app.baseUrl, 'POST', '/api/research/add_research_bookmark/', {}, { url: 'https://exemplo.com.br/\u0000', title: 'x' });
    expectError(result, 401, 'unauthorized');
  });
});

describe('an error stays within the error model\'s bounds however long the request makes it', () => {
  it('an unknown query parameter with a name of 3000 characters', async () => {
    const name = 'n'.repeat(3000);
    const result = await request(app.baseUrl, 'GET', `/api/check/login_attempt/?${name}=1`);
    expectError(result, 400, 'bad_request');
    expect(result.body.error.message.length).toBeLessThanOrEqual(1000);
    const [detail] = result.body.error.details;
    expect(detail).toMatchObject({ location: 'query', rule: 'unknown_parameter' });
    expect(detail.field.length).toBeLessThanOrEqual(500);
    expect(detail.field.startsWith('nnnn')).toBe(true);
    expect(detail.message.length).toBeLessThanOrEqual(1000);
  });
});

describe('a path that is not valid percent-encoded UTF-8 is 400 in the error model, not an HTML 500', () => {
  // The route lookup (rate limiter, method guard) threw a URIError before the request logger ran, and the
  // error handler then failed on the missing req.log: Express answered its own HTML page.
  it.each(['/api/usuario/%FF/', '/api/elections/syncs/%E0%A4%A/', '/api/usuario/%C0%AF/'])('GET %s', async (path) => {
    const response = await fetch(app.baseUrl + path, { headers: { ...admin.headers, 'X-Request-Id': 'bad-escape' } });
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const result = { status: response.status, headers: response.headers, text: '', body: await response.json() };
    expectError(result, 400, 'bad_request');
    expect(result.body.request_id).toBe('bad-escape');
    expect(result.body.error.details).toEqual([{ location: 'path', field: '', rule: 'percent_encoding', message: expect.any(String), value: path }]);
  });

  it('a path of no operation with a bad escape is still 404', async () => {
    const result = await request(app.baseUrl, 'GET', '/api/nada/%FF/');
    expectError(result, 404, 'not_found');
  });
});
