/**
 * The hybrid mode (`npm run dev:hybrid`, src/hybrid/): a copy of the contract gains an operation with no
 * handler; started on that copy, the one address answers it from the Prism mock (its example, marked
 * `X-Served-By: mock`, after the server checked the key) while every implemented operation stays real
 * (`X-Served-By: palanque`), and the start lists the operation the mock serves. The inner mock runs on
 * HYBRID_MOCK_PORT, and a browser front end on a local dev server may read `X-Served-By`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mockPortOf } from '../src/hybrid/prism-mock.js';
import { SHARED_MUNICIPIOS } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';
import { freePort, waitFor } from './helpers/process.js';
import { loadSpec } from './helpers/spec.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Operations the server has no handler for: a read and a write, as a contract change would add them. */
const NEW_OPERATIONS = {
  '/api/trends/hashtags/': {
    get: {
      operationId: 'listTrendingHashtags',
      tags: ['trends'],
      summary: 'Trending hashtags',
      security: [{ ApiKeyAuth: [] }],
      parameters: [{ $ref: '#/components/parameters/XRequestId' }],
      responses: {
        '200': {
          description: 'The hashtags.',
          headers: { RateLimit: { $ref: '#/components/headers/RateLimit' }, 'RateLimit-Policy': { $ref: '#/components/headers/RateLimitPolicy' } },
          content: { 'application/json': { schema: { type: 'object' }, examples: { today: { value: { success: true, data: ['#eleicoes2026', '#debate'], message: 'ok', request_id: 'x' } } } } },
        },
        '401': { $ref: '#/components/responses/Unauthorized' },
      },
    },
  },
  '/api/reports/request_report/': {
    post: {
      operationId: 'requestReport',
      tags: ['reports'],
      summary: 'Request a report',
      security: [{ ApiKeyAuth: [] }],
      parameters: [{ $ref: '#/components/parameters/XRequestId' }],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { type: 'object', required: ['entity_id'], properties: { entity_id: { type: 'integer' } }, additionalProperties: false } } },
      },
      responses: {
        '201': { description: 'Requested.', content: { 'application/json': { schema: { type: 'object' }, examples: { queued: { value: { success: true, data: { report_id: 501 } } } } } } },
        '401': { $ref: '#/components/responses/Unauthorized' },
        '422': { $ref: '#/components/responses/UnprocessableEntity' },
      },
    },
  },
};

let work: string;
let child: ChildProcess;
let output = '';
let baseUrl: string;
let mockPort: number;
let carlos: Record<string, string>;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'palanque-hybrid-test-'));
  const spec = loadSpec() as { paths: Record<string, unknown> };
  Object.assign(spec.paths, NEW_OPERATIONS);
  const copy = join(work, 'openapi.yaml');
  writeFileSync(copy, stringify(spec));
  const port = await freePort();
  mockPort = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  child = spawn('npm', ['run', '--silent', 'dev:hybrid', '--', '--spec', copy, '--sandbox'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HYBRID_MOCK_PORT: String(mockPort), MUNICIPIOS_SOURCE: SHARED_MUNICIPIOS, SANDBOX_PASSWORD: 'senha-do-hibrido-1', REDIS_URL: '', CORS_ORIGINS: undefined },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitFor(() => (output.includes('Served by the mock') ? true : undefined), { timeoutMs: 90_000, what: 'the hybrid start', output: () => output });
  const login = await request(baseUrl, 'POST', '/api/auth/login', {}, { username: 'carlos.pereira', password: 'senha-do-hibrido-1' });
  carlos = { Authorization: `Token ${login.body.data.token}` };
}, 120_000);

afterAll(async () => {
  if (child?.pid) {
    process.kill(-child.pid, 'SIGINT');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
  }
  rmSync(work, { recursive: true, force: true });
});

it('runs its inner mock on HYBRID_MOCK_PORT, and refuses one that is not a port', async () => {
  expect(output).toContain(`the Prism mock (http://127.0.0.1:${mockPort})`);
  const direct = await request(`http://127.0.0.1:${mockPort}`, 'GET', '/api/trends/hashtags/', { Authorization: 'Token plq_any' });
  expect(direct.body.data).toEqual(['#eleicoes2026', '#debate']);
  expect(mockPortOf(undefined)).toBeUndefined();
  expect(mockPortOf('4011')).toBe(4011);
  for (const wrong of ['abc', '0', '70000', '40.5']) expect(() => mockPortOf(wrong), wrong).toThrow(/^HYBRID_MOCK_PORT must be a port number/);
});

it('lets browser code on a local dev server read who answered (X-Served-By)', async () => {
  const response = await fetch(`${baseUrl}/api/trends/hashtags/`, { headers: { Origin: 'http://localhost:5173', ...carlos } });
  expect(response.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
  expect(response.headers.get('access-control-expose-headers')).toContain('X-Served-By');
  expect(response.headers.get('x-served-by')).toBe('mock');
});

it('lists at start exactly the operations served by the mock', () => {
  expect(output).toMatch(/Served by the mock \(2, no handler yet\):\n\s+listTrendingHashtags\s+GET \/api\/trends\/hashtags\/\n\s+requestReport\s+POST \/api\/reports\/request_report\/\n/);
});

it('answers an operation without a handler from the mock, after the server checked the key', async () => {
  const trends = await request(baseUrl, 'GET', '/api/trends/hashtags/', carlos);
  expect(trends.status, trends.text).toBe(200);
  expect(trends.headers.get('x-served-by')).toBe('mock');
  expect(trends.body.data).toEqual(['#eleicoes2026', '#debate']);
  // The server's own request id, security and rate-limit headers stay on the mock's answer (not the contract's examples).
  expect(trends.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  expect(trends.headers.get('ratelimit-policy')).toBe('1200;w=60');
  expect(trends.headers.get('ratelimit')).toMatch(/^limit=1200, remaining=\d+, reset=\d+$/);
  expect(trends.headers.get('x-content-type-options')).toBe('nosniff');

  const anonymous = await request(baseUrl, 'GET', '/api/trends/hashtags/', {});
  expectError(anonymous, 401, 'unauthorized');
  expect(anonymous.headers.get('x-served-by')).toBe('palanque');
  const badKey = await request(baseUrl, 'GET', '/api/trends/hashtags/', { Authorization: 'Token plq_not-a-key' });
  expect(badKey.status).toBe(401);
  expect(badKey.headers.get('x-served-by')).toBe('palanque');
});

it('forwards a POST body to the mock as sent, and refuses a body that breaks the new contract itself', async () => {
  const report = await request(baseUrl, 'POST', '/api/reports/request_report/', carlos, { entity_id: 12 });
  expect(report.status, report.text).toBe(201);
  expect(report.headers.get('x-served-by')).toBe('mock');
  expect(report.body).toEqual({ success: true, data: { report_id: 501 } });

  const invalid = await request(baseUrl, 'POST', '/api/reports/request_report/', carlos, { entity_id: 'doze' });
  expectError(invalid, 422, 'validation_failed');
  expect(invalid.headers.get('x-served-by')).toBe('palanque');
});

it('answers every implemented operation itself, with real data', async () => {
  const municipalities = await request(baseUrl, 'GET', '/api/municipios/?page=186');
  expect(municipalities.headers.get('x-served-by')).toBe('palanque');
  expect(municipalities.body.results).toHaveLength(20);

  const added = await request(baseUrl, 'POST', '/api/research/add_research_bookmark/', carlos, { title: 'Debate', url: 'https://www.exemplo.com.br/debate-hibrido' });
  expect(added.status, added.text).toBe(201);
  expect(added.headers.get('x-served-by')).toBe('palanque');
  const bookmarks = await request(baseUrl, 'GET', '/api/research/get_user_research_bookmarks/', carlos);
  expect(bookmarks.headers.get('x-served-by')).toBe('palanque');
  expect(bookmarks.body.data.map((bookmark: { url: string }) => bookmark.url)).toContain('https://www.exemplo.com.br/debate-hibrido');

  const docs = await fetch(`${baseUrl}/openapi.yaml`);
  expect(docs.headers.get('x-served-by')).toBe('palanque');
  expect(await docs.text()).toContain('listTrendingHashtags');
});
