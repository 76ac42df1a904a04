/**
 * sdk/schema.d.ts is generated from the spec and committed, so front ends can use the SDK without a
 * build step. This test fails when the committed file is stale: run `npm run generate` and commit it.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { contractPath } from './helpers/spec.js';

const run = promisify(execFile);
const generator = fileURLToPath(new URL('../node_modules/.bin/openapi-typescript', import.meta.url));
const committed = fileURLToPath(new URL('../sdk/schema.d.ts', import.meta.url));

it('sdk/schema.d.ts is what `npm run generate` writes from the bundled contract (sdk/openapi.json)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'palanque-generate-'));
  try {
    const fresh = join(dir, 'schema.d.ts');
    await run(generator, [contractPath, '--output', fresh]);
    const [expected, actual] = await Promise.all([readFile(fresh, 'utf8'), readFile(committed, 'utf8')]);
    expect(actual, 'sdk/schema.d.ts is stale: run `npm run generate` and commit it').toBe(expected);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
