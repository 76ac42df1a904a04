/**
 * Cutting a release (`npm run contract:release -- <YYYY-MM-DD>`): the working contract, once it passes
 * the check, becomes spec/releases/<name>.json with its line appended to SHA256SUMS; the decisions of
 * `next` become the new release's; the SDK's version moves as the transition asks; CHANGELOG.md's API
 * section is written again. Nothing is written when the check fails or the name does not come after
 * the latest release, so a release is never cut over an undecided break.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { withApiSection } from './changelog.js';
import { checkContract, paths } from './check.js';
import { NEXT, readReleases } from './releases.js';
import type { Obj } from './schema-view.js';

export function cutRelease(root: string, name: string, working: Obj): string[] {
  const at = paths(root);
  if (!/^\d{4}-\d{2}-\d{2}(?:-\d+)?$/.test(name)) throw new Error(`a release is named by its date, YYYY-MM-DD (or YYYY-MM-DD-2 for a second that day), not ${name}`);
  const latest = readReleases(at.releases).at(-1)!.name;
  if (name <= latest) throw new Error(`release ${name} must come after the latest, ${latest}`);
  const before = checkContract(root, working);
  if (before.problems.length > 0) throw new Error(`the working contract does not pass the check:\n${before.problems.join('\n')}`);

  const file = path.join(at.releases, `${name}.json`);
  if (existsSync(file)) throw new Error(`${file} exists already`);
  // The same bytes `npm run generate` writes to sdk/openapi.json: redocly's two-space JSON, no final newline.
  const bytes = JSON.stringify(working, null, 2);
  writeFileSync(file, bytes);
  appendFileSync(path.join(at.releases, 'SHA256SUMS'), `${createHash('sha256').update(bytes).digest('hex')}  ${name}.json\n`);

  const waivers = readFileSync(at.waivers, 'utf8');
  writeFileSync(at.waivers, waivers.replace(new RegExp(`(\\brelease:\\s*)${NEXT}\\b`, 'g'), `$1'${name}'`));

  const after = checkContract(root, working);
  const released = after.history.at(-1)!;
  const sdk = readFileSync(at.sdkPackage, 'utf8');
  writeFileSync(at.sdkPackage, sdk.replace(/"version": "[^"]*"/, `"version": "${released.sdk}"`));
  const changelog = readFileSync(at.changelog, 'utf8');
  writeFileSync(at.changelog, withApiSection(changelog, checkContract(root, working)));
  return [
    `release ${name}: ${released.changes.length} changes against ${latest}, ${released.verdict.decided.length} decided breaks; SDK ${released.sdk} (${released.bump})`,
    `written: spec/releases/${name}.json, spec/releases/SHA256SUMS, spec/breaking-changes.yaml, sdk/package.json, CHANGELOG.md`,
  ];
}
