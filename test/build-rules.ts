/**
 * Runs once before the test files: builds packages/rules (a few seconds). The tests' own modules read
 * the rules from their sources (Vitest resolves the package's `development` condition), but the
 * processes they start (`node --import tsx src/server.ts`, the CLI's build) read them as Node does, from
 * packages/rules/dist: built here, so that a test never runs a server on rules older than their sources.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

export default function setup(): void {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'packages/rules/tsconfig.json'], { cwd: root, stdio: 'inherit' });
}
