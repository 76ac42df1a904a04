/**
 * What a front end ships for the SDK: its own code and openapi-fetch stay within their size budgets,
 * and a bundler drops what an app does not import. (How it is packed, installed and type-checked in a
 * project of its own: test/sdk-package.test.ts.)
 */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The budgets: the SDK's own code (openapi-fetch aside), and everything a front end ships for it. */
// 4.2 KB since issue 46 §5 (which requests are resent after a failed connection, the CORS hint).
const OWN_CODE_BUDGET_BYTES = 4.5 * 1024;
const SHIPPED_GZIP_BUDGET_BYTES = 5 * 1024;

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
  // login (its path is in the client too, among the POSTs sent without an Idempotency-Key)
  expect(code).not.toContain('unlock_token');
});
