/**
 * `npm run contract:check` (tsx tools/contract/main.ts check), `npm run changelog` (... changelog) and
 * `npm run contract:release -- <YYYY-MM-DD>` (... release <name>).
 *
 * check: bundles spec/openapi.yaml as `npm run generate` does (redocly bundle), judges it against the
 * latest release and every release against the one before it, and exits 1 on an undecided break, a
 * decision that matches nothing, an SDK version below what the releases require, or a CHANGELOG.md
 * whose API section is not what the releases say. `--contract <file.json>` judges that bundle instead.
 * changelog: rewrites CHANGELOG.md's API section.
 * release <YYYY-MM-DD>: cuts a release of the working contract (release.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withApiSection } from './changelog.js';
import { checkContract, paths } from './check.js';
import { cutRelease } from './release.js';
import type { Obj } from './schema-view.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function bundleWorkingContract(): Obj {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'palanque-contract-'));
  try {
    const out = path.join(dir, 'openapi.json');
    execFileSync(path.join(root, 'node_modules', '.bin', 'redocly'), ['bundle', 'spec/openapi.yaml', '--ext', 'json', '--output', out], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    return JSON.parse(readFileSync(out, 'utf8')) as Obj;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function main(argv: string[]): number {
  const [command = 'check', ...rest] = argv;
  const given = rest.indexOf('--contract');
  const working =
    given === -1 ? bundleWorkingContract() : (JSON.parse(readFileSync(path.resolve(rest[given + 1] ?? ''), 'utf8')) as Obj);
  if (command === 'release') {
    for (const line of cutRelease(root, rest.find((a, i) => !a.startsWith('--') && rest[i - 1] !== '--contract') ?? '', working)) console.log(line);
    return 0;
  }
  const state = checkContract(root, working);
  const changelogFile = paths(root).changelog;
  const changelog = readFileSync(changelogFile, 'utf8');
  const current = withApiSection(changelog, state);
  if (command === 'changelog') {
    if (current !== changelog) writeFileSync(changelogFile, current);
    console.log(current === changelog ? 'CHANGELOG.md is current' : 'CHANGELOG.md: API section rewritten');
    return 0;
  }
  if (command !== 'check') {
    console.error(`unknown command ${command}: check, changelog or release <YYYY-MM-DD>`);
    return 2;
  }
  const problems = [...state.problems];
  if (current !== changelog) problems.push('CHANGELOG.md\'s API section is not what the releases say: run npm run changelog');
  for (const t of state.history) {
    console.log(`${t.from} -> ${t.to}: ${t.changes.filter((c) => c.breaking).length} breaking (${t.verdict.decided.length} decided), ${t.changes.filter((c) => !c.breaking).length} other; SDK ${t.sdk}`);
  }
  const next = state.next;
  const breaking = next.changes.filter((c) => c.breaking).length;
  console.log(
    `${next.from} -> working contract: ${breaking} breaking (${next.verdict.decided.length} decided), ${next.changes.length - breaking} other; ` +
      `the next release moves the SDK's ${next.bump === 'patch' ? 'patch (no API change)' : next.bump} (SDK ${state.sdkVersion}, at least ${state.sdkRequired} required now)`,
  );
  if (problems.length === 0) {
    console.log('contract check: passed');
    return 0;
  }
  for (const p of problems) console.error(`contract check: ${p}`);
  console.error(
    `contract check: ${problems.length} problem(s). Revert the break, or decide it in spec/breaking-changes.yaml (release: next; docs/contributing.md, "Breaking changes").`,
  );
  return 1;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (error) {
  console.error(`contract check: ${(error as Error).message}`);
  process.exitCode = 1;
}
