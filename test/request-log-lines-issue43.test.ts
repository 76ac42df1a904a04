/**
 * A request's log line (issue 43 §4, src/logger.ts and src/http/request-logging.ts): ISO 8601 time, pid
 * and hostname, the operation and the authenticated user, and of the headers only the allow-list's:
 * a cookie, a custom secret header and a browser's other headers are not written at all.
 */
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGGED_REQUEST_HEADERS, LOGGED_RESPONSE_HEADERS } from '../src/http/request-logging.js';
import { createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const COOKIE_VALUE = 'sessionid-value-7f3a9c';
const CUSTOM_SECRET = 'x-secret-value-41b2d8';

async function lineOf(app: TestApp, requestId: string): Promise<Record<string, unknown>> {
  await expect.poll(() => app.logs.some((line) => line.request_id === requestId && String(line.msg).startsWith('request ')), { timeout: 5_000 }).toBe(true);
  return app.logs.find((line) => line.request_id === requestId && String(line.msg).startsWith('request '))!;
}

describe('a request log line', () => {
  let app: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    app = await startTestApp();
    user = await createUser(app);
  });

  afterAll(async () => {
    await app?.close();
  });

  it('has ISO time, pid, hostname, operation and user, and only the allowed headers', async () => {
    const response = await fetch(`${app.baseUrl}/api/research/get_user_research_bookmarks/`, {
      headers: {
        ...user.headers,
        'X-Request-Id': 'log-line-43',
        'User-Agent': 'palanque-test/43',
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
        Cookie: `sessionid=${COOKIE_VALUE}`,
        'X-Secret': CUSTOM_SECRET,
        'Accept-Language': 'pt-BR,pt;q=0.9',
        Referer: 'https://app.palanque.app/pesquisa',
      },
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    const line = await lineOf(app, 'log-line-43');
    expect(line.msg).toBe('request completed');
    expect(line.time).toMatch(ISO_TIME);
    expect(Math.abs(Date.parse(line.time as string) - Date.now())).toBeLessThan(60_000);
    expect(line.pid).toBe(process.pid);
    expect(line.hostname).toBe(hostname());
    expect(line.operation_id).toBe('listResearchBookmarks');
    expect(line.user_id).toBe(user.user.id);

    const req = line.req as { headers: Record<string, string>; url: string };
    const res = line.res as { headers: Record<string, string>; statusCode: number };
    expect(req.url).toBe('/api/research/get_user_research_bookmarks/');
    expect(req.headers).toEqual({
      authorization: '[REDACTED]',
      'user-agent': 'palanque-test/43',
      'x-request-id': 'log-line-43',
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    });
    for (const name of Object.keys(req.headers)) expect(LOGGED_REQUEST_HEADERS.has(name), name).toBe(true);
    for (const name of Object.keys(res.headers)) expect(LOGGED_RESPONSE_HEADERS.has(name), name).toBe(true);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const text = JSON.stringify(line);
    for (const absent of [COOKIE_VALUE, CUSTOM_SECRET, 'cookie', 'x-secret', 'accept-language', 'referer', 'x-content-type-options', 'strict-transport-security']) {
      expect(text, absent).not.toContain(absent);
    }
  });

  it('of an anonymous request has no user, and one outside the contract no operation', async () => {
    await (await fetch(`${app.baseUrl}/api/municipios/?codigo_uf=53`, { headers: { 'X-Request-Id': 'log-line-43-anonymous' } })).arrayBuffer();
    await (await fetch(`${app.baseUrl}/no/such/path`, { headers: { 'X-Request-Id': 'log-line-43-unmatched' } })).arrayBuffer();
    const anonymous = await lineOf(app, 'log-line-43-anonymous');
    expect(anonymous.operation_id).toBe('listMunicipalities');
    expect(anonymous).not.toHaveProperty('user_id');
    expect(anonymous.time).toMatch(ISO_TIME);
    const unmatched = await lineOf(app, 'log-line-43-unmatched');
    expect(unmatched).not.toHaveProperty('operation_id');
    expect((unmatched.res as { statusCode: number }).statusCode).toBe(404);
  });

  it('of a 429 refused before the request logger keeps the same allow-list', async () => {
    const limited = await startTestApp({ config: { rateLimits: { auth: undefined, read: { points: 1, seconds: 60 }, write: undefined, callback: undefined } } });
    try {
      const ask = (id: string) => fetch(`${limited.baseUrl}/api/municipios/?codigo_uf=53`, { headers: { 'X-Request-Id': id, Cookie: `sessionid=${COOKIE_VALUE}`, 'X-Secret': CUSTOM_SECRET } });
      await (await ask('log-line-43-first')).arrayBuffer();
      const refused = await ask('log-line-43-429');
      expect(refused.status).toBe(429);
      await refused.arrayBuffer();
      const line = await lineOf(limited, 'log-line-43-429');
      expect((line.res as { statusCode: number; headers: Record<string, string> }).headers['retry-after']).toMatch(/^\d+$/);
      expect(line.time).toMatch(ISO_TIME);
      expect(JSON.stringify(line)).not.toContain(COOKIE_VALUE);
      expect(JSON.stringify(line)).not.toContain(CUSTOM_SECRET);
    } finally {
      await limited.close();
    }
  });
});
