/**
 * The msw handlers of sdk/msw.ts in a real browser: esbuild bundles a tiny page (msw's `setupWorker` from
 * `msw/browser`, the handlers and the SDK), a local server on 127.0.0.1 serves it beside msw's
 * `mockServiceWorker.js` (copied from node_modules at test time, never committed), and headless Chromium
 * opens it through playwright-core. The page calls the API through the SDK and reports what it got.
 *
 * It needs Chromium at /usr/bin/chromium (or CHROMIUM_PATH); without one the test fails, on purpose:
 * CI installs it (e.g. `apt-get install chromium`).
 */
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { responseExample } from './helpers/spec.js';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** The page: starts the worker with the handlers, then calls the API through the SDK three ways. */
const PAGE_SCRIPT = `
import { setupWorker } from 'msw/browser';
import { createApiClient } from './sdk/index.ts';
import { DEFAULT_BASE_URL, handlers, override } from './sdk/msw.ts';

const worker = setupWorker(...handlers);
await worker.start({ serviceWorker: { url: '/mockServiceWorker.js' }, onUnhandledRequest: 'error', quiet: true });
const results = {};
try {
  const api = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
  const { data, response } = await api.GET('/api/municipios/');
  results.page = { status: response.status, etag: response.headers.get('ETag'), data };

  worker.use(override('listMunicipalities', 503));
  results.error = await api.GET('/api/municipios/').then(
    () => 'no error',
    (error) => ({ name: error.name, status: error.status, code: error.code, requestId: error.requestId }),
  );
  worker.resetHandlers();

  // In the browser the SDK's own retry works against the worker: a 503 once, then the example.
  worker.use(override('listMunicipalities', 503, { once: true, headers: { 'Retry-After': '0' } }));
  const retrying = createApiClient({ baseUrl: DEFAULT_BASE_URL });
  results.afterRetry = (await retrying.GET('/api/municipios/')).data.count;
} catch (error) {
  results.failure = String(error && error.stack || error);
}
window.__results = results;
`;

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8' };

let dir: string;
let server: Server | undefined;
let origin: string;
let browser: Browser | undefined;

const chromiumMissing = existsSync(chromiumPath)
  ? undefined
  : `Chromium is not installed at ${chromiumPath}: install it (apt-get install chromium) or set CHROMIUM_PATH. The browser test of the msw handlers cannot run without it.`;

beforeAll(async () => {
  if (chromiumMissing) return; // the test fails with the message
  dir = await mkdtemp(join(tmpdir(), 'palanque-msw-browser-'));
  const bundle = await build({
    stdin: { contents: PAGE_SCRIPT, resolveDir: projectRoot, sourcefile: 'page.ts', loader: 'ts' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  await writeFile(join(dir, 'app.js'), bundle.outputFiles[0]!.text);
  await writeFile(join(dir, 'index.html'), '<!doctype html><html><head><meta charset="utf-8"><title>msw</title></head><body><script type="module" src="/app.js"></script></body></html>');
  await copyFile(join(projectRoot, 'node_modules/msw/lib/mockServiceWorker.js'), join(dir, 'mockServiceWorker.js'));

  server = createServer(async (request, response) => {
    const name = new URL(request.url ?? '/', 'http://localhost').pathname.slice(1) || 'index.html';
    if (!['index.html', 'app.js', 'mockServiceWorker.js'].includes(name)) return void response.writeHead(404).end();
    response.writeHead(200, { 'Content-Type': TYPES[extname(name)]!, 'Cache-Control': 'no-store' }).end(await readFile(join(dir, name)));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('answers the SDK in Chromium through the service worker with the spec\'s examples', async () => {
  if (chromiumMissing) throw new Error(chromiumMissing);
  const page = await browser!.newPage();
  const log: string[] = [];
  page.on('console', (message) => log.push(`console.${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => log.push(`page error: ${error.message}`));
  try {
    await page.goto(`${origin}/`);
    const handle = await page.waitForFunction(() => (window as unknown as { __results?: unknown }).__results, undefined, { timeout: 30_000 }).catch((error: unknown) => {
      throw new Error(`The page did not finish: ${String(error)}\n${log.join('\n')}`);
    });
    const results = (await handle.jsonValue()) as Record<string, unknown>;
    expect(results.failure, log.join('\n')).toBeUndefined();

    // The example's page links, written for the local server, name the handlers' base URL.
    const firstPage = JSON.parse(JSON.stringify(responseExample('/api/municipios/', 'get', '200', 'firstPage')).split('http://localhost:8000/').join('http://palanque.test/'));
    expect(results.page).toStrictEqual({ status: 200, etag: '"9c1e5b2a7f3d4e60"', data: firstPage });
    const unavailable = responseExample('/api/municipios/', 'get', '503', 'referenceDataUnavailable') as { request_id: string };
    expect(results.error).toStrictEqual({ name: 'PalanqueApiError', status: 503, code: 'reference_data_unavailable', requestId: unavailable.request_id });
    expect(results.afterRetry).toBe(5570);
  } finally {
    await page.close();
  }
}, 60_000);
