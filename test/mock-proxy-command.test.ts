/**
 * `npm run mock:proxy`, the command docs/frontend.md gives providers and front ends: Prism's validating proxy
 * on MOCK_PORT in front of PROXY_UPSTREAM (here a real test server). Calls pass through unchanged, and a
 * call that breaks the contract is reported in `sl-violations`. test/contract-proxy.test.ts sweeps every
 * operation through the same proxy; this file checks the command itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { freePort, waitFor } from './helpers/process.js';

const root = fileURLToPath(new URL('..', import.meta.url));

let app: TestApp;
let proxy: ChildProcess;
let proxyUrl: string;
let output = '';

beforeAll(async () => {
  app = await startTestApp({ withMunicipalities: true });
  const port = await freePort();
  proxyUrl = `http://127.0.0.1:${port}`;
  proxy = spawn('npm', ['run', '--silent', 'mock:proxy'], {
    cwd: root,
    env: { ...process.env, MOCK_PORT: String(port), PROXY_UPSTREAM: app.baseUrl, FORCE_COLOR: '0', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  proxy.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  proxy.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitFor(() => (output.includes('Prism is listening') ? true : undefined), { timeoutMs: 60_000, what: 'npm run mock:proxy', output: () => output });
}, 90_000);

afterAll(async () => {
  if (proxy?.pid) {
    process.kill(-proxy.pid, 'SIGTERM');
    await new Promise((resolve) => (proxy.exitCode !== null ? resolve(undefined) : proxy.once('exit', resolve)));
  }
  await app?.close();
});

it('passes a valid call through to the server unchanged, with no violation', async () => {
  const response = await fetch(`${proxyUrl}/api/municipios/?page=186`);
  expect(response.status).toBe(200);
  const body = await response.json();
  expect(body.count).toBe(5570);
  expect(body.results).toHaveLength(20);
  expect(response.headers.get('sl-violations')).toBeNull();
});

it('reports a call that breaks the contract in sl-violations, still answered by the server', async () => {
  const response = await fetch(`${proxyUrl}/api/municipios/?page=0`);
  expect(response.status).toBe(400);
  expect((await response.json()).error.code).toBe('bad_request');
  const violations = JSON.parse(response.headers.get('sl-violations') ?? '[]') as Array<{ location: string[]; message: string }>;
  expect(violations.some((violation) => violation.location.join('.').startsWith('request.query.page'))).toBe(true);
});
