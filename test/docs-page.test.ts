/**
 * The API's own documentation (the `docs` tag): /openapi.yaml and /openapi.json serve the contract, and
 * /docs renders it with Swagger UI served by the server itself. The page is checked in a real browser:
 * Debian's `chromium` (never a downloaded one) driven by playwright-core, headless, with a fresh profile.
 * It must show the contract's operations, load nothing from anywhere but the server under test, log no
 * console error (a CSP violation is one), and its "Try it out" must reach this server. Everything runs at
 * the root and under BASE_PATH /v1.
 *
 * Without /usr/bin/chromium the browser tests fail (they never skip): install it with
 * `apt-get install -y chromium` (.ci/run does).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DOCS_PAGE_CSP } from '../src/docs/index.js';
import { createUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';
import { loadSpec } from './helpers/spec.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const spec = loadSpec() as { paths: Record<string, Record<string, { operationId?: string; tags?: string[] }>> };
const OPERATION_COUNT = Object.values(spec.paths).flatMap((item) =>
  Object.keys(item).filter((method) => ['get', 'post', 'put', 'patch', 'delete'].includes(method)),
).length;

/** The API at the root, and a deployment under /v1. */
let app: TestApp;
let deployed: TestApp;

beforeAll(async () => {
  [app, deployed] = await Promise.all([
    startTestApp({ withMunicipalities: true }),
    startTestApp({ withMunicipalities: true, config: { basePath: '/v1' } }),
  ]);
});

afterAll(async () => {
  await Promise.all([app?.close(), deployed?.close()]);
});

describe.each([
  ['at the root', () => app, ''],
  ['under BASE_PATH /v1', () => deployed, '/v1'],
])('the OpenAPI document %s', (_where, server, base) => {
  it('is served as YAML, the contract the server validates against (the bundle, every $ref local), public and cacheable', async () => {
    const response = await fetch(`${server().baseUrl}${base}/openapi.yaml`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/yaml');
    expect(parse(await response.text())).toEqual(loadSpec());
    expect(response.headers.get('cache-control')).toBe('public, max-age=60');
    expect(response.headers.get('x-request-id')).toBeTruthy();
    const etag = response.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);

    const again = await fetch(`${server().baseUrl}${base}/openapi.yaml`, { headers: { 'If-None-Match': etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
  });

  it('is served as JSON, the same document', async () => {
    const response = await fetch(`${server().baseUrl}${base}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.json()).toEqual(loadSpec());
    const etag = response.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(etag).not.toBe((await fetch(`${server().baseUrl}${base}/openapi.yaml`)).headers.get('etag'));
    expect((await fetch(`${server().baseUrl}${base}/openapi.json`, { headers: { 'If-None-Match': etag! } })).status).toBe(304);
  });

  it('answers HEAD and OPTIONS like every operation, and refuses what the contract does not allow', async () => {
    const head = await fetch(`${server().baseUrl}${base}/openapi.yaml`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/yaml');
    const options = await fetch(`${server().baseUrl}${base}/openapi.json`, { method: 'OPTIONS' });
    expect(options.status).toBe(200);
    expect(options.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expectError(await request(server().baseUrl, 'POST', `${base}/openapi.json`, {}, {}), 405, 'method_not_allowed');
    expectError(await request(server().baseUrl, 'GET', `${base}/openapi.json?format=yaml`), 400, 'bad_request');
  });
});

describe.each([
  ['at the root', () => app, ''],
  ['under BASE_PATH /v1', () => deployed, '/v1'],
])('the documentation page %s', (_where, server, base) => {
  it('is HTML whose every link is relative, with no inline script, under a policy of its own', async () => {
    const response = await fetch(`${server().baseUrl}${base}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toBe(DOCS_PAGE_CSP);
    expect(DOCS_PAGE_CSP).toContain("script-src 'self';");
    expect(DOCS_PAGE_CSP).not.toContain('unsafe');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('etag')).toMatch(/^"[\w-]+"$/);
    const html = await response.text();
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map(([, attributes]) => /src="([^"]+)"/.exec(attributes!)?.[1])).toEqual(['docs/swagger-ui-bundle.js', 'docs/palanque-docs.js']);
    expect(scripts.every(([, , content]) => content!.trim() === '')).toBe(true);
    for (const [, link] of html.matchAll(/(?:href|src)="([^"]+)"/g)) expect(link, 'links are relative to the page').not.toMatch(/^(\/|[a-z]+:)/i);
  });

  it('serves its assets under /docs/ (and only those), cacheable', async () => {
    for (const [asset, type] of [
      ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
      ['swagger-ui.css', 'text/css; charset=utf-8'],
      ['palanque-docs.js', 'text/javascript; charset=utf-8'],
      ['palanque-docs.css', 'text/css; charset=utf-8'],
      ['favicon-32x32.png', 'image/png'],
    ]) {
      const response = await fetch(`${server().baseUrl}${base}/docs/${asset}`);
      expect(response.status, asset).toBe(200);
      expect(response.headers.get('content-type'), asset).toBe(type);
      expect(response.headers.get('cache-control')).toBe('public, max-age=3600');
      expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(100);
      const etag = response.headers.get('etag')!;
      expect((await fetch(`${server().baseUrl}${base}/docs/${asset}`, { headers: { 'If-None-Match': etag } })).status, asset).toBe(304);
    }
    // Swagger UI's own page and initializer (which point at the petstore) are not served.
    expectError(await request(server().baseUrl, 'GET', `${base}/docs/index.html`), 404, 'not_found');
    expectError(await request(server().baseUrl, 'GET', `${base}/docs/swagger-initializer.js`), 404, 'not_found');
    expectError(await request(server().baseUrl, 'GET', `${base}/docs/../package.json`), 404, 'not_found');
    expectError(await request(server().baseUrl, 'POST', `${base}/docs/swagger-ui.css`, {}, {}), 405, 'method_not_allowed');
    const head = await fetch(`${server().baseUrl}${base}/docs/swagger-ui.css`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('serves the guide at /docs/guide: a page like /docs under the same policy, its links relative to /docs/', async () => {
    const response = await fetch(`${server().baseUrl}${base}/docs/guide`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toBe(DOCS_PAGE_CSP);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('cache-control')).toBe('public, max-age=60');
    const etag = response.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect((await fetch(`${server().baseUrl}${base}/docs/guide`, { headers: { 'If-None-Match': etag } })).status).toBe(304);
    const html = await response.text();
    expect(html).toContain('<body data-view="guide">');
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map(([, attributes]) => /src="([^"]+)"/.exec(attributes!)?.[1])).toEqual(['swagger-ui-bundle.js', 'palanque-docs.js']);
    expect(scripts.every(([, , content]) => content!.trim() === '')).toBe(true);
    const links = [...html.matchAll(/(?:href|src)="([^"]+)"/g)].map(([, link]) => link!);
    for (const link of links) {
      expect(link, 'links are relative to the page').not.toMatch(/^(\/|[a-z]+:)/i);
      const target = new URL(link, `http://host${base}/docs/guide`).pathname;
      expect(target, link).toMatch(new RegExp(`^${base}/(docs|docs/[\\w.-]+|openapi\\.(json|yaml))$`));
    }
    expect(links).toContain('../docs');
    expectError(await request(server().baseUrl, 'GET', `${base}/docs/guide/`), 404, 'not_found');
    expectError(await request(server().baseUrl, 'POST', `${base}/docs/guide`, {}, {}), 405, 'method_not_allowed');
  });

  it('redirects /docs/ to /docs, relatively', async () => {
    const response = await fetch(`${server().baseUrl}${base}/docs/`, { redirect: 'manual' });
    expect(response.status).toBe(301);
    expect(response.headers.get('location')).toBe('../docs');
    expect(new URL(response.headers.get('location')!, `${server().baseUrl}${base}/docs/`).pathname).toBe(`${base}/docs`);
  });
});

it('is the documentation the API root links to when the deployment publishes none', async () => {
  const user = await createUser(deployed);
  const root = await request(deployed.baseUrl, 'GET', '/v1/', user.headers);
  expect(root.status, root.text).toBe(200);
  expect(root.body.data.links.documentation).toBe(`${deployed.baseUrl}/v1/docs`);
  const page = await fetch(root.body.data.links.documentation);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
});

it('serves nothing of the documentation outside the base path', async () => {
  for (const path of ['/docs', '/docs/swagger-ui.css', '/openapi.yaml', '/openapi.json']) {
    expectError(await request(deployed.baseUrl, 'GET', path), 404, 'not_found');
  }
});

// ---------------------------------------------------------------------------------------------
// In a browser
// ---------------------------------------------------------------------------------------------

/**
 * A Chromium profile of its own for the describe block that calls it, at `viewport`, closed with the
 * block. Without the browser, `context()` is undefined and each browser test fails with how to install
 * it (see openDocs and open); none is skipped.
 */
function chromiumProfile(viewport: { width: number; height: number }): { context(): BrowserContext | undefined; screenshots(): string } {
  let context: BrowserContext | undefined;
  let profile: string | undefined;
  let screenshots = '';
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) return;
    profile = await mkdtemp(join(tmpdir(), 'palanque-chromium-'));
    // DOCS_SCREENSHOT_DIR keeps the screenshots for a person to look at; otherwise they go with the temp dir.
    screenshots = process.env.DOCS_SCREENSHOT_DIR ?? (await mkdtemp(join(tmpdir(), 'palanque-docs-shots-')));
    context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport, timeout: 30_000 });
  });
  afterAll(async () => {
    await context?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
    if (screenshots && !process.env.DOCS_SCREENSHOT_DIR) await rm(screenshots, { recursive: true, force: true });
  });
  return { context: () => context, screenshots: () => screenshots };
}

/** Takes a screenshot to `file` and checks it is a PNG that shows something. */
async function expectScreenshot(page: Page, file: string): Promise<void> {
  await page.screenshot({ path: file });
  const png = await readFile(file);
  expect(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), `${file} is a PNG`).toBe(true);
  expect((await stat(file)).size, `${file} shows something`).toBeGreaterThan(20_000);
}

describe('in headless Chromium', { timeout: 90_000 }, () => {
  const browser = chromiumProfile({ width: 1280, height: 900 });

  /** Opens the page, recording every request the browser makes and every problem it reports. */
  async function openDocs(
    url: string,
    { viewport, ready = '.opblock' }: { viewport?: { width: number; height: number }; ready?: string } = {},
  ): Promise<{ page: Page; requests: string[]; problems: string[] }> {
    const context = browser.context();
    if (!context) {
      throw new Error(
        `Chromium is not installed (${CHROMIUM} is missing), so the documentation page cannot be tested in a browser. ` +
          "Install Debian's package: `sudo DEBIAN_FRONTEND=noninteractive apt-get install -y chromium` (.ci/run does it).",
      );
    }
    const page = await context.newPage();
    if (viewport) await page.setViewportSize(viewport);
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (sent) => requests.push(sent.url()));
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(`console ${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('requestfailed', (failed) => problems.push(`request failed: ${failed.url()} (${failed.failure()?.errorText})`));
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} for ${response.url()}`);
    });
    const response = await page.goto(url, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    // Swagger UI has rendered the document once the operations are on the page: a few seconds on an
    // idle machine, more than 20 s when CI's other files load both cores.
    await page.locator(ready).first().waitFor({ state: 'visible', timeout: 45_000 });
    return { page, requests, problems };
  }

  /**
   * The page scrolled by half a window until `done` says so or its end, `visit` called at each step.
   * From 150 tags and operations on, Swagger UI (5.x) keeps only those near the window in the page and
   * renders the others as the reader scrolls to them (its operations list is virtual), so a test sees
   * every operation only by scrolling, as a reader does.
   */
  async function scrollDown(page: Page, visit: () => Promise<boolean | void>): Promise<void> {
    await page.evaluate(() => window.scrollTo(0, 0));
    for (let step = 0; step < 2_000; step += 1) {
      // Two frames: the virtual list renders what the scroll brought into the window.
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
      if ((await visit()) === true) return;
      const atTheEnd = await page.evaluate(() => window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2);
      if (atTheEnd) return;
      await page.evaluate(() => window.scrollBy(0, window.innerHeight / 2));
    }
  }

  /** The ids of the operations and the names of the tags the page shows from its top to its end. */
  async function scrollThrough(page: Page): Promise<{ operations: Set<string>; tags: Set<string> }> {
    const operations = new Set<string>();
    const tags = new Set<string>();
    await scrollDown(page, async () => {
      for (const id of await page.locator('.opblock').evaluateAll((nodes) => nodes.map((node) => node.id))) operations.add(id);
      for (const tag of await page.locator('.opblock-tag').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-tag')))) tags.add(tag ?? '');
    });
    return { operations, tags };
  }

  /** Scrolls down to the first element `selector` finds. */
  async function scrollUntil(page: Page, selector: string): Promise<Locator> {
    const found = page.locator(selector);
    await scrollDown(page, async () => (await found.count()) > 0);
    await found.scrollIntoViewIfNeeded();
    return found;
  }

  it.each([
    ['at the root', () => app, ''],
    ['under BASE_PATH /v1', () => deployed, '/v1'],
  ])('renders every operation of the contract %s, from this server alone, without a console error', async (_where, server, base) => {
    const origin = server().baseUrl;
    const { page, requests, problems } = await openDocs(`${origin}${base}/docs`);
    try {
      expect(await page.locator('.info .title').textContent()).toContain('Palanque API');
      const name = `docs${base.replace('/', '-') || '-root'}`;
      await expectScreenshot(page, join(browser.screenshots(), `${name}-top.png`));

      const rendered = await scrollThrough(page);
      expect(rendered.operations.size).toBe(OPERATION_COUNT);
      expect(rendered.tags.has('Location') && rendered.tags.has('docs')).toBe(true);

      // The operations of the municipality list's tag; the list itself, with its path and operationId.
      await scrollUntil(page, '.opblock-tag[data-tag="Location"]');
      await expectScreenshot(page, join(browser.screenshots(), `${name}-operations.png`));
      const list = await scrollUntil(page, '#operations-Location-listMunicipalities');
      await expect.poll(() => list.locator('.opblock-summary-path').getAttribute('data-path')).toBe('/api/municipios/');
      await expect.poll(() => list.locator('.opblock-summary-operation-id').textContent()).toBe('listMunicipalities');

      expect(requests.filter((url) => !url.startsWith('data:')).every((url) => new URL(url).hostname === '127.0.0.1'), requests.join('\n')).toBe(true);
      expect(requests.filter((url) => !url.startsWith(`${origin}${base}/`) && !url.startsWith('data:')), 'everything comes from under the base path').toEqual([]);
      expect(requests).toContain(`${origin}${base}/openapi.json`);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it.each([
    ['at the root', () => app, ''],
    ['under BASE_PATH /v1', () => deployed, '/v1'],
  ])('tries an operation out against the server that served the page %s', async (_where, server, base) => {
    const origin = server().baseUrl;
    const { page, requests, problems } = await openDocs(`${origin}${base}/docs#/Location/listMunicipalities`);
    try {
      // The deep link opens the operation and scrolls to it. In the virtual list that scroll goes by
      // estimated heights and can stop short of the operation when the machine is loaded, so the test
      // scrolls the rest of the way, as a reader would; the operation must already be open (its "Try it
      // out" shows only then).
      const selector = '#operations-Location-listMunicipalities';
      const reached = await page.locator(selector).waitFor({ state: 'attached', timeout: 10_000 }).then(() => true, () => false);
      const list = reached ? page.locator(selector) : await scrollUntil(page, selector);
      await expect.poll(() => list.getAttribute('class')).toMatch(/\bis-open\b/);
      await list.locator('.try-out__btn').click();
      await list.locator('.execute').click();
      await expect.poll(() => list.locator('.live-responses-table tbody .response-col_status').first().textContent(), { timeout: 10_000 }).toContain('200');
      expect(requests).toContain(`${origin}${base}/api/municipios/`);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// The first screen (issue 46 §3): the operations, not the guide
// ---------------------------------------------------------------------------------------------

/** The contract's introduction (many screens long), its sections, and the path of each operationId. */
const introduction = (loadSpec() as { info: { description: string } }).info.description;
const GUIDE_SECTIONS = introduction.split('\n').filter((line) => line.startsWith('## ')).map((line) => line.slice(3).trim());
const PATH_OF = new Map(
  Object.entries(spec.paths).flatMap(([path, item]) => Object.values(item).flatMap((operation) => (operation.operationId ? [[operation.operationId, path] as const] : []))),
);
/** A sentence deep in the introduction (its rate limits), which the operations' page no longer shows. */
const DEEP_SENTENCE = 'Budgets are shared by all instances of a deployment.';
const FIRST_SCREEN = { width: 1280, height: 800 };

describe('the first screen of the documentation in headless Chromium', { timeout: 90_000 }, () => {
  const browser = chromiumProfile(FIRST_SCREEN);

  /** Opens a page at 1280x800 and waits for `ready`, recording what the browser reports. */
  async function open(url: string, ready: string): Promise<{ page: Page; requests: string[]; problems: string[] }> {
    const context = browser.context();
    if (!context) throw new Error(`Chromium is not installed (${CHROMIUM} is missing): \`sudo apt-get install -y chromium\`.`);
    const page = await context.newPage();
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (sent) => requests.push(sent.url()));
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(`console ${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} for ${response.url()}`);
    });
    expect((await page.goto(url, { waitUntil: 'load' }))?.status()).toBe(200);
    await page.locator(ready).first().waitFor({ state: 'visible', timeout: 45_000 });
    return { page, requests, problems };
  }

  /** Where an element is, and that it lies whole within the window as the page stands. */
  async function expectOnScreen(page: Page, locator: Locator, what: string): Promise<void> {
    expect(await locator.isVisible(), `${what} is visible`).toBe(true);
    const box = await locator.boundingBox();
    const scroll = await page.evaluate(() => window.scrollY);
    expect(box, `${what} has a box`).not.toBeNull();
    expect({ what, top: box!.y >= 0, bottom: box!.y + box!.height <= FIRST_SCREEN.height, right: box!.x + box!.width <= FIRST_SCREEN.width, scroll }).toEqual({
      what,
      top: true,
      bottom: true,
      right: true,
      scroll: 0,
    });
  }

  it.each([
    ['at the root', () => app, ''],
    ['under BASE_PATH /v1', () => deployed, '/v1'],
  ])('shows an operation, the filter and Authorize on the first screen %s, and links to the guide from it', async (_where, server, base) => {
    const origin = server().baseUrl;
    const { page, requests, problems } = await open(`${origin}${base}/docs`, '.opblock');
    try {
      await expectScreenshot(page, join(browser.screenshots(), `first-screen${base.replace('/', '-') || '-root'}.png`));
      const operation = page.locator('.opblock').first();
      await expectOnScreen(page, operation, 'the first operation');
      const operationId = (await operation.locator('.opblock-summary-operation-id').textContent())!;
      expect(PATH_OF.has(operationId), `${operationId} is an operation of the contract`).toBe(true);
      expect(await operation.locator('.opblock-summary-path').getAttribute('data-path')).toBe(PATH_OF.get(operationId));
      await expectOnScreen(page, page.locator('.operation-filter-input'), 'the filter');
      await expectOnScreen(page, page.locator('.btn.authorize'), 'Authorize');

      // The introduction is cut to its opening; the rest is the guide's.
      const info = (await page.locator('.info').textContent())!;
      expect(info).toContain('This document is the single source of truth');
      expect(info).not.toContain(DEEP_SENTENCE);

      // The filter narrows the list to a tag, login's among them, still on the first screen.
      await page.locator('.operation-filter-input').fill('Login/Register');
      const login = page.locator('.opblock').filter({ has: page.locator('.opblock-summary-operation-id', { hasText: /^login$/ }) });
      await login.waitFor({ state: 'visible', timeout: 10_000 });
      await expectOnScreen(page, login, 'login, once filtered');

      const guideLink = page.locator('.info a', { hasText: 'Read the guide' });
      await expectOnScreen(page, guideLink, 'the link to the guide');
      await expectOnScreen(page, page.locator('.palanque-docs-bar a[href="docs/guide"]'), "the bar's link to the guide");
      // Swagger UI opens the description's links in a tab of their own: the operations stay as they were.
      const [guidePage] = await Promise.all([browser.context()!.waitForEvent('page'), guideLink.click()]);
      try {
        guidePage.on('request', (sent) => requests.push(sent.url()));
        guidePage.on('pageerror', (error) => problems.push(`guide page error: ${error.message}`));
        await guidePage.locator('.info .description h2').first().waitFor({ state: 'visible', timeout: 45_000 });
        expect(guidePage.url()).toBe(`${origin}${base}/docs/guide`);
        const guide = (await guidePage.locator('.info .description').textContent())!;
        expect(guide).toContain('This document is the single source of truth');
        expect(guide).toContain(DEEP_SENTENCE);
        expect(await guidePage.locator('.info .description h2').allTextContents()).toEqual(GUIDE_SECTIONS);
        expect(await guidePage.locator('.opblock').count(), 'the guide is the introduction alone').toBe(0);
      } finally {
        await guidePage.close();
      }

      expect(requests.filter((url) => !url.startsWith(`${origin}${base}/`) && !url.startsWith('data:')), 'everything comes from under the base path').toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('links each of its sections from the first screen to its place in the guide', async () => {
    const { page, problems } = await open(`${deployed.baseUrl}/v1/docs`, '.opblock');
    try {
      const section = page.locator('.info a', { hasText: 'Rate limits' });
      await expectOnScreen(page, section, 'the link to the rate limits');
      expect(await section.getAttribute('href')).toBe('docs/guide#rate-limits');
      const [guidePage] = await Promise.all([browser.context()!.waitForEvent('page'), section.click()]);
      try {
        guidePage.on('pageerror', (error) => problems.push(`guide page error: ${error.message}`));
        const heading = guidePage.locator('h2#rate-limits');
        await heading.waitFor({ state: 'visible', timeout: 45_000 });
        // The guide goes to the section once its headings have their anchors.
        await expect.poll(() => heading.boundingBox().then((box) => box !== null && box.y >= 0 && box.y < FIRST_SCREEN.height)).toBe(true);
        expect(await guidePage.evaluate(() => window.scrollY)).toBeGreaterThan(FIRST_SCREEN.height);
        expect(await heading.textContent()).toBe('Rate limits');
      } finally {
        await guidePage.close();
      }
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
