/**
 * The released contracts and the breaks decided between them.
 *
 * spec/releases/ holds each released contract, bundled JSON named by its date (YYYY-MM-DD.json), and
 * SHA256SUMS, the list of their hashes in release order (`sha256sum -c` reads it). A release that is
 * not listed, or whose bytes no longer hash to its line, stops the check: a change cannot rewrite the
 * baseline it is judged by. Releases are only ever appended.
 *
 * spec/breaking-changes.yaml lists the decided breaks. Each entry belongs to the release that made it
 * (`release: <name>`, judged against the release before it) or to `next`, the working contract judged
 * against the latest release; cutting a release renames `next` to the new release's name. So a waiver
 * is never left matching nothing when a release is cut, and every transition stays checked for ever.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { BREAKING_RULES, type Change } from './diff.js';
import { asArr, asObj, type Obj } from './schema-view.js';

export const NEXT = 'next';

export interface Release {
  name: string;
  file: string;
  sha256: string;
}

/** The releases in order, each checked against its line of SHA256SUMS; throws naming what is wrong. */
export function readReleases(dir: string): Release[] {
  const sums = path.join(dir, 'SHA256SUMS');
  if (!existsSync(sums)) throw new Error(`${sums} is missing: it lists every release's hash`);
  const releases: Release[] = [];
  const problems: string[] = [];
  for (const [i, line] of readFileSync(sums, 'utf8').split('\n').entries()) {
    if (line.trim() === '') continue;
    const match = /^([0-9a-f]{64}) [ *](\d{4}-\d{2}-\d{2}(?:-\d+)?\.json)$/.exec(line);
    if (!match) {
      problems.push(`SHA256SUMS line ${i + 1} is not "<sha256>  <YYYY-MM-DD>.json": ${line}`);
      continue;
    }
    const [, sha256, file] = match as unknown as [string, string, string];
    const full = path.join(dir, file);
    if (!existsSync(full)) {
      problems.push(`release ${file} is listed in SHA256SUMS but missing`);
      continue;
    }
    const actual = createHash('sha256').update(readFileSync(full)).digest('hex');
    if (actual !== sha256) problems.push(`release ${file} was changed: its sha256 is ${actual}, SHA256SUMS says ${sha256}; releases are append-only`);
    releases.push({ name: file.replace(/\.json$/, ''), file: full, sha256 });
  }
  const names = releases.map((r) => r.name);
  if ([...names].sort().join() !== names.join() || new Set(names).size !== names.length) {
    problems.push(`SHA256SUMS must list each release once, oldest first: ${names.join(', ')}`);
  }
  for (const file of readdirSync(dir)) {
    if (file.endsWith('.json') && !names.includes(file.replace(/\.json$/, ''))) problems.push(`release ${file} is not listed in SHA256SUMS`);
  }
  if (releases.length === 0) problems.push('no release is listed in SHA256SUMS');
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return releases;
}

export const readRelease = (release: Release): Obj => JSON.parse(readFileSync(release.file, 'utf8')) as Obj;

export interface Waiver {
  release: string;
  rule: string;
  operation: string;
  /** One or more pointers, each a change of this rule in this operation. */
  pointers: string[];
  reason: string;
  affects: string;
}

/** The decided breaks, each entry complete; throws naming the entry that is not. */
export function readWaivers(file: string, releaseNames: string[]): Waiver[] {
  const raw: unknown = YAML.parse(readFileSync(file, 'utf8'));
  const entries = asArr(asObj(raw).breaks);
  const problems: string[] = [];
  const waivers = entries.map((entry, i): Waiver => {
    const e = asObj(entry);
    const text = (key: string) => {
      const v = e[key];
      if (typeof v !== 'string' || v.trim() === '') problems.push(`breaks[${i}]: ${key} is missing (rule, operation, pointer, reason, affects and release are required)`);
      return typeof v === 'string' ? v.trim() : '';
    };
    const pointers = typeof e.pointer === 'string' ? [e.pointer] : asArr(e.pointers).filter((p): p is string => typeof p === 'string');
    if (pointers.length === 0) problems.push(`breaks[${i}]: pointer (or pointers) is missing`);
    const w = { release: String(e.release ?? ''), rule: text('rule'), operation: text('operation'), pointers, reason: text('reason'), affects: text('affects') };
    text('release');
    if (w.rule && !(w.rule in BREAKING_RULES)) problems.push(`breaks[${i}]: rule ${w.rule} is not a breaking rule (${Object.keys(BREAKING_RULES).join(', ')})`);
    if (w.release && w.release !== NEXT && !releaseNames.slice(1).includes(w.release)) {
      problems.push(`breaks[${i}]: release ${w.release} is neither "${NEXT}" nor a release after the first (${releaseNames.slice(1).join(', ') || 'none yet'})`);
    }
    return w;
  });
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return waivers;
}

export interface Verdict {
  /** Breaking changes no waiver of this transition decides. */
  undecided: Change[];
  /** Waiver pointers that match no breaking change of this transition. */
  stale: { waiver: Waiver; pointer: string }[];
  /** Each decided change with its waiver. */
  decided: { change: Change; waiver: Waiver }[];
}

/** Matches one transition's breaking changes with the waivers of that transition. */
export function judge(changes: Change[], waivers: Waiver[]): Verdict {
  const verdict: Verdict = { undecided: [], stale: [], decided: [] };
  const used = new Set<string>();
  for (const change of changes.filter((c) => c.breaking)) {
    const waiver = waivers.find((w) => w.rule === change.rule && w.operation === change.operation && w.pointers.includes(change.pointer));
    if (!waiver) verdict.undecided.push(change);
    else {
      verdict.decided.push({ change, waiver });
      used.add(`${waivers.indexOf(waiver)}|${change.pointer}`);
    }
  }
  waivers.forEach((waiver, i) => {
    for (const pointer of waiver.pointers) if (!used.has(`${i}|${pointer}`)) verdict.stale.push({ waiver, pointer });
  });
  return verdict;
}

export type Bump = 'major' | 'minor' | 'patch';

/** What a transition asks of the SDK's version: a break moves its major, an addition its minor. */
export const bumpOf = (changes: Change[]): Bump =>
  changes.some((c) => c.breaking) ? 'major' : changes.length > 0 ? 'minor' : 'patch';

export function bumped(version: string, bump: Bump): string {
  const [major = 0, minor = 0, patch = 0] = version.split('.').map(Number);
  if (bump === 'major') return `${major + 1}.0.0`;
  if (bump === 'minor') return `${major}.${minor + 1}.0`;
  return `${major}.${minor}.${patch + 1}`;
}

export function compareVersions(a: string, b: string): number {
  const x = a.split(/[.-]/).map(Number);
  const y = b.split(/[.-]/).map(Number);
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

/** The SDK's version at the first release. */
export const FIRST_SDK_VERSION = '1.0.0';
