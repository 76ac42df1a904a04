/**
 * The SDK as a front-end project consumes it: `npm run build:sdk`'s compilation gives ES modules with
 * type declarations that another TypeScript project can type-check against, it runs in Node as built,
 * it stays within its size budget, and a bundler drops what an app does not import.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { afterAll, beforeAll, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

/** The budgets: the SDK's own code (openapi-fetch aside), and everything a front end ships for it. */
const OWN_CODE_BUDGET_BYTES = 4 * 1024;
const SHIPPED_GZIP_BUDGET_BYTES = 5 * 1024;

let out = '';

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'palanque-sdk-'));
  // The same compilation as `npm run build:sdk`, into a folder of this test's own.
  await run(process.execPath, [tsc, '-p', join(root, 'sdk', 'tsconfig.json'), '--outDir', join(out, 'sdk')], { cwd: root });
  cpSync(join(root, 'sdk', 'schema.d.ts'), join(out, 'sdk', 'schema.d.ts'));
}, 120_000);

afterAll(() => {
  if (out) rmSync(out, { recursive: true, force: true });
});

it('builds ES modules with a declaration for each', () => {
  for (const module of ['index', 'client', 'errors', 'helpers', 'retry']) {
    expect(existsSync(join(out, 'sdk', `${module}.js`)), `${module}.js`).toBe(true);
    expect(existsSync(join(out, 'sdk', `${module}.d.ts`)), `${module}.d.ts`).toBe(true);
  }
});

it('runs as built', async () => {
  const sdk = (await import(pathToFileURL(join(out, 'sdk', 'index.js')).href)) as typeof import('../sdk/index.js');
  const api = sdk.createApiClient({ baseUrl: 'http://127.0.0.1:9', token: 'plq_x' });
  expect(api.token).toBe('plq_x');
  expect(typeof api.GET).toBe('function');
  expect(new sdk.PalanqueApiError(404, 'not_found', 'gone', [], 'id', undefined)).toBeInstanceOf(Error);
});

it('gives a consuming TypeScript project its types: a call the contract allows compiles, a wrong one does not', async () => {
  const consumer = join(out, 'consumer');
  cpSync(join(out, 'sdk'), join(consumer, 'node_modules', 'palanque-sdk'), { recursive: true });
  // What installing the SDK brings along: openapi-fetch and the helper types it builds on.
  for (const dependency of ['openapi-fetch', 'openapi-typescript-helpers']) {
    symlinkSync(join(root, 'node_modules', dependency), join(consumer, 'node_modules', dependency));
  }
  writeFileSync(join(consumer, 'node_modules', 'palanque-sdk', 'package.json'), JSON.stringify({ name: 'palanque-sdk', type: 'module', types: './index.d.ts', main: './index.js' }));
  writeFileSync(
    join(consumer, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { strict: true, module: 'ESNext', moduleResolution: 'Bundler', target: 'ES2022', lib: ['ES2022', 'DOM', 'DOM.Iterable'], noEmit: true, skipLibCheck: false, types: [] }, include: ['*.ts'] }),
  );
  writeFileSync(
    join(consumer, 'app.ts'),
    [
      "import { createApiClient, unwrap, type Municipality } from 'palanque-sdk';",
      "const api = createApiClient({ baseUrl: 'https://api.palanque.app' });",
      'export async function names(): Promise<string[]> {',
      "  const page = (await api.GET('/api/municipios/', { params: { query: { codigo_uf: 35 } } })).data;",
      '  const first: Municipality | undefined = page?.results[0];',
      "  const contacts = unwrap(await api.GET('/api/account/'));",
      '  return [first?.nome ?? "", ...contacts.map((contact) => contact.username)];',
      '}',
    ].join('\n'),
  );
  await expect(run(process.execPath, [tsc, '-p', consumer], { cwd: consumer })).resolves.toBeDefined();

  writeFileSync(join(consumer, 'wrong.ts'), "import { createApiClient } from 'palanque-sdk';\ncreateApiClient({ baseUrl: '' }).GET('/api/municipios/', { params: { query: { codigo_uf: 'SP' } } });\n");
  const refused = await run(process.execPath, [tsc, '-p', consumer], { cwd: consumer }).catch((error: { stdout: string }) => error);
  expect((refused as { stdout: string }).stdout).toMatch(/wrong\.ts.*error TS2322/s);
}, 120_000);

it('stays within its size budget', async () => {
  const bundle = (external: string[]) =>
    build({ entryPoints: [join(root, 'sdk', 'index.ts')], bundle: true, minify: true, format: 'esm', platform: 'browser', write: false, external }).then((result) => result.outputFiles[0]!.contents);
  const ownCode = await bundle(['openapi-fetch']);
  const shipped = await bundle([]);
  expect(ownCode.byteLength).toBeLessThanOrEqual(OWN_CODE_BUDGET_BYTES);
  expect(gzipSync(shipped).byteLength).toBeLessThanOrEqual(SHIPPED_GZIP_BUDGET_BYTES);
});

it('lets a bundler drop the helpers an app does not import', async () => {
  const entry = "import { createApiClient } from './sdk/index.ts';\nexport const api = createApiClient({ baseUrl: '/' });\n";
  const result = await build({ stdin: { contents: entry, resolveDir: root, loader: 'ts' }, bundle: true, minify: true, format: 'esm', platform: 'browser', write: false, external: ['openapi-fetch'] });
  const code = result.outputFiles[0]!.text;
  expect(code).toContain('Idempotency-Key');
  expect(code).not.toContain('/api/municipios/'); // the paging helpers
  expect(code).not.toContain('/api/auth/login'); // login
});
