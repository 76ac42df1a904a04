/**
 * A new Vite + React app, as a front-end team starts one (test/frontend/vite-app, copied to a temporary
 * folder outside the repository), installs the packed @palanque/sdk from its tarball and the rest from
 * the registry; then its build passes and its component test (src/Entities.test.tsx) runs in jsdom
 * against the SDK's stateful msw handlers: the list shows the fixtures, and an entity added through
 * the form is listed after it.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MSW_PEERS, npm, packSdk, root, versionOf } from './helpers/sdk-package.js';

/** What a Vite + React app with Vitest and Testing Library installs; the shared tools at this repository's versions. */
const APP_DEPENDENCIES = ['react@^19.2.0', 'react-dom@^19.2.0'];
const APP_DEV_DEPENDENCIES = [
  `vite@${versionOf('vite')}`,
  `vitest@${versionOf('vitest')}`,
  `typescript@${versionOf('typescript')}`,
  // The msw entry's optional peers (sdk/package.json).
  ...MSW_PEERS.map((name) => `${name}@${versionOf(name)}`),
  '@vitejs/plugin-react@^6.0.0',
  'jsdom@^27.0.0',
  '@testing-library/react@^16.3.0',
  '@testing-library/dom@^10.4.0',
  '@types/react@^19.2.0',
  '@types/react-dom@^19.2.0',
];

let work = '';
let app = '';

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'palanque-vite-app-'));
  const tarball = await packSdk(work);
  app = join(work, 'vite-app');
  cpSync(join(root, 'test', 'frontend', 'vite-app'), app, { recursive: true });
  await npm(app, ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, ...APP_DEPENDENCIES]);
  await npm(app, ['install', '--no-audit', '--no-fund', '--prefer-offline', '--save-dev', ...APP_DEV_DEPENDENCIES]);
}, 600_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

it('builds: tsc with the app\'s settings, then vite build', async () => {
  await npm(app, ['run', 'build']);
  expect(existsSync(join(app, 'dist', 'index.html'))).toBe(true);
}, 300_000);

it('runs its component test with the stateful msw handlers in jsdom', async () => {
  const { stdout } = await npm(app, ['test', '--', '--reporter=json', '--outputFile=report.json']).catch((error: { stdout: string; stderr: string }) => {
    throw new Error(`the app's tests failed:\n${error.stdout}\n${error.stderr}`);
  });
  const report = JSON.parse(readFileSync(join(app, 'report.json'), 'utf8')) as { numPassedTests: number; numFailedTests: number; numTotalTests: number };
  expect(report.numFailedTests, stdout).toBe(0);
  expect(report.numPassedTests).toBe(report.numTotalTests);
  expect(report.numTotalTests).toBeGreaterThanOrEqual(2);
}, 300_000);
