/**
 * The contract check: every transition between releases, and the working contract against the latest
 * release, has each of its breaking changes decided in spec/breaking-changes.yaml and no decision that
 * matches nothing; the SDK's version is at least what those transitions ask. What fails is named with
 * its rule, pointer and operation, so the fix (revert, or an entry) is one step away.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type Change, diffContracts } from './diff.js';
import {
  type Bump,
  bumped,
  bumpOf,
  compareVersions,
  FIRST_SDK_VERSION,
  judge,
  NEXT,
  readRelease,
  readReleases,
  readWaivers,
  type Verdict,
  type Waiver,
} from './releases.js';
import type { Obj } from './schema-view.js';

export interface Transition {
  from: string;
  to: string;
  changes: Change[];
  verdict: Verdict;
  waivers: Waiver[];
  bump: Bump;
  /** The SDK's version that `to` requires. */
  sdk: string;
}

export interface ContractState {
  /** The releases after the first, each against the one before it. */
  history: Transition[];
  first: { name: string; operations: number };
  /** The working contract against the latest release (`to` is "next"). */
  next: Transition;
  /** The SDK's version today (sdk/package.json) and the least it may be. */
  sdkVersion: string;
  sdkRequired: string;
  problems: string[];
}

export const paths = (root: string) => ({
  releases: path.join(root, 'spec', 'releases'),
  waivers: path.join(root, 'spec', 'breaking-changes.yaml'),
  sdkPackage: path.join(root, 'sdk', 'package.json'),
  changelog: path.join(root, 'CHANGELOG.md'),
});

const countOperations = (doc: Obj) =>
  Object.values(doc.paths ?? {}).reduce<number>(
    (n, item) => n + ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'].filter((m) => m in (item as Obj)).length,
    0,
  );

function transition(from: string, to: string, base: Obj, head: Obj, waivers: Waiver[], sdkBefore: string): Transition {
  const changes = diffContracts(base, head);
  const own = waivers.filter((w) => w.release === to);
  const bump = bumpOf(changes);
  return { from, to, changes, verdict: judge(changes, own), waivers: own, bump, sdk: bumped(sdkBefore, bump) };
}

function problemsOf(t: Transition): string[] {
  const label = t.to === NEXT ? `the working contract against release ${t.from}` : `release ${t.to} against ${t.from}`;
  return [
    ...t.verdict.undecided.map(
      (c) => `${label}: undecided breaking change ${c.rule} in ${c.operation} at ${c.pointer}: ${c.message}`,
    ),
    ...t.verdict.stale.map(
      ({ waiver, pointer }) =>
        `${label}: spec/breaking-changes.yaml decides ${waiver.rule} in ${waiver.operation} at ${pointer}, which matches no breaking change; remove it or fix its rule, operation or pointer`,
    ),
  ];
}

/** The whole state of the contract's history; `working` is the bundled spec/openapi.yaml. */
export function checkContract(root: string, working: Obj): ContractState {
  const at = paths(root);
  const releases = readReleases(at.releases);
  const waivers = readWaivers(at.waivers, releases.map((r) => r.name));
  const docs = releases.map(readRelease);
  const history: Transition[] = [];
  let sdk = FIRST_SDK_VERSION;
  for (let i = 1; i < releases.length; i++) {
    const t = transition(releases[i - 1]!.name, releases[i]!.name, docs[i - 1]!, docs[i]!, waivers, sdk);
    history.push(t);
    sdk = t.sdk;
  }
  const latest = releases[releases.length - 1]!;
  const next = transition(latest.name, NEXT, docs[docs.length - 1]!, working, waivers, sdk);
  // A decided break in the working contract moves the SDK's major now; an addition waits for the release.
  const sdkRequired = next.bump === 'major' ? next.sdk : sdk;
  const sdkVersion = String((JSON.parse(readFileSync(at.sdkPackage, 'utf8')) as Obj).version);
  const problems = [...history.flatMap(problemsOf), ...problemsOf(next)];
  // An undecided break is refused above; the SDK's major is asked for once the break is decided.
  if (next.verdict.undecided.length === 0 && compareVersions(sdkVersion, sdkRequired) < 0) {
    problems.push(
      `sdk/package.json's version is ${sdkVersion}, but the contract's ${next.bump === 'major' ? 'decided breaks since ' + latest.name : 'releases'} require at least ${sdkRequired}`,
    );
  }
  return { history, first: { name: releases[0]!.name, operations: countOperations(docs[0]!) }, next, sdkVersion, sdkRequired, problems };
}
