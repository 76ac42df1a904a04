/**
 * The packed @palanque/sdk, as the tests that install it outside this repository use it
 * (test/sdk-package.test.ts, test/sdk-vite-app.test.ts).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const root = fileURLToPath(new URL('../..', import.meta.url));

/** What the msw entry needs besides the SDK: its optional peer dependencies (sdk/package.json). */
export const MSW_PEERS = Object.keys((JSON.parse(readFileSync(join(root, 'sdk', 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> }).peerDependencies);

/** `npm pack` in sdk/ (its prepack builds it) into `destination`; the tarball's path. */
export async function packSdk(destination: string): Promise<string> {
  const { stdout } = await npm(join(root, 'sdk'), ['pack', '--json', '--pack-destination', destination]);
  const [packed] = JSON.parse(stdout) as Array<{ filename: string }>;
  if (!packed) throw new Error(`npm pack printed no file: ${stdout}`);
  return join(destination, packed.filename);
}

/**
 * npm in a folder, without what `npm test` and Vitest put in this process's environment (npm_config_*,
 * npm_package_*, VITEST, NODE_ENV=test), so that a project outside the repository sees the registry
 * and its own folder only, and builds as it would on its own.
 */
export function npm(cwd: string, args: string[]) {
  const inherited = Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_') && !['VITEST', 'TEST', 'NODE_ENV'].includes(name) && !name.startsWith('VITEST_'));
  return run('npm', args, { cwd, env: { ...Object.fromEntries(inherited), CI: 'true' }, maxBuffer: 64 * 1024 * 1024 });
}

/** The version of a package installed in this repository, so a consumer installs the same (from npm's cache). */
export function versionOf(name: string): string {
  return (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}
