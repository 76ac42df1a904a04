/**
 * The contract the hybrid mode serves, as one document: the file given (spec/openapi.yaml by default,
 * whose `$ref`s name the files of spec/paths/ and spec/components/) bundled by Redocly, as
 * `npm run generate` bundles it into sdk/openapi.json. Bundled at each start, so the contract being
 * edited is served without a `generate`. A file that is already one document comes out the same.
 * Redocly is a devDependency, as the hybrid mode is a development tool.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../project-root.js';

export interface BundledContract {
  /** The bundle, a JSON file in a temporary folder. */
  file: string;
  /** Removes the temporary folder. */
  remove(): Promise<void>;
}

export async function bundleContract(source: string): Promise<BundledContract> {
  const dir = await mkdtemp(join(tmpdir(), 'palanque-hybrid-contract-'));
  const file = join(dir, 'openapi.json');
  try {
    await promisify(execFile)(join(projectRoot, 'node_modules', '.bin', 'redocly'), ['bundle', source, '--ext', 'json', '--output', file]);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    const { stderr, message } = error as { stderr?: string; message: string };
    throw new Error(`The contract ${source} could not be bundled: ${stderr || message}`);
  }
  return { file, remove: () => rm(dir, { recursive: true, force: true }) };
}
