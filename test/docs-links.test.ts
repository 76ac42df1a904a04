/**
 * The documentation's relative links hold: in README.md, every docs/*.md and the READMEs of src/, cli/
 * and sdk/, each relative link names a file or folder that exists, and each `#anchor` a heading of its
 * target (GitHub's slugs) or, in a file that is not markdown, a line (`#L12`, `#L12-L20`). External
 * http(s) and mailto links are not fetched. Text inside code (fenced blocks and `inline` spans) is not
 * read for links or headings.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/** What a link may point at: a file with its text, a folder, or nothing. */
type Target = { kind: 'file'; text: string } | { kind: 'directory' } | undefined;

/** The lines of a markdown text outside fenced code blocks, with inline code spans blanked. */
function proseLines(text: string): string[] {
  const lines: string[] = [];
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      continue;
    }
    if (marker) {
      fence = marker;
      continue;
    }
    lines.push(line.replace(/(`+)(?:(?!\1).)+?\1/g, (span) => 'x'.repeat(span.length)));
  }
  return lines;
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped but for - and _, spaces to -. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text only
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-');
}

/** The anchors of a markdown text's headings (duplicates suffixed -1, -2), and of its `<a id|name>` tags. */
function anchors(text: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      continue;
    }
    if (marker) {
      fence = marker;
      continue;
    }
    const heading = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const base = slug(heading);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      found.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const [, id] of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(id!);
  }
  return found;
}

/** The link destinations of a markdown text: inline links and images, and reference definitions. */
function links(text: string): string[] {
  const found: string[] = [];
  for (const line of proseLines(text)) {
    for (const [, destination] of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+["'(][^)]*)?\)/g)) found.push(destination!);
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line)?.[1];
    if (definition) found.push(definition);
  }
  return found;
}

/**
 * The broken links of one markdown file, as `<file>: <link>: <why>`. `file` is its path from the
 * repository's root; `read` answers what a path from the root is.
 */
function brokenLinks(file: string, text: string, read: (path: string) => Target): string[] {
  const problems: string[] = [];
  for (const link of links(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // http(s), mailto: not fetched
    const hash = link.indexOf('#');
    const path = decodeURIComponent(hash === -1 ? link : link.slice(0, hash));
    const anchor = hash === -1 ? undefined : decodeURIComponent(link.slice(hash + 1));
    const targetPath = path === '' ? file : normalize(path.startsWith('/') ? path.slice(1) : join(dirname(file), path)).replace(/\/$/, '');
    if (targetPath.startsWith('..')) {
      problems.push(`${file}: ${link}: leaves the repository`);
      continue;
    }
    const target = path === '' ? ({ kind: 'file', text } as const) : read(targetPath);
    if (!target) {
      problems.push(`${file}: ${link}: ${targetPath} does not exist`);
      continue;
    }
    if (anchor === undefined) continue;
    if (target.kind === 'directory') problems.push(`${file}: ${link}: an anchor on a folder`);
    else if (!/\.md$/i.test(targetPath)) {
      if (!/^L\d+(-L\d+)?$/.test(anchor)) problems.push(`${file}: ${link}: #${anchor} is not a line of ${targetPath}`);
    } else if (!anchors(target.text).has(anchor)) problems.push(`${file}: ${link}: no heading #${anchor} in ${targetPath}`);
  }
  return problems;
}

function readFromDisk(path: string): Target {
  try {
    const absolute = join(root, path);
    return statSync(absolute).isDirectory() ? { kind: 'directory' } : { kind: 'file', text: readFileSync(absolute, 'utf8') };
  } catch {
    return undefined;
  }
}

const DOCUMENTS = [
  'README.md',
  ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`),
  'src/README.md',
  'cli/README.md',
  'sdk/README.md',
];

describe('the documentation links', () => {
  it.each(DOCUMENTS)('%s: every relative link and anchor resolves', (file) => {
    const text = readFileSync(join(root, file), 'utf8');
    expect(brokenLinks(file, text, readFromDisk)).toEqual([]);
  });

  it('covers the pages the README sends its readers to', () => {
    const linked = links(readFileSync(join(root, 'README.md'), 'utf8'))
      .filter((link) => link.startsWith('docs/') && link.includes('.md'))
      .map((link) => link.replace(/#.*/, ''));
    expect(new Set(linked).size).toBeGreaterThan(5);
    for (const page of linked) expect(DOCUMENTS, page).toContain(page);
  });
});

describe('the link checker', () => {
  const pages = new Map<string, string>([
    ['docs/guide.md', '# Guide\n\n## Security: what is guaranteed, and what is not\n\n## Setup\n\n## Setup\n\n```md\n## Not a heading\n```\n'],
    ['src/config.ts', 'export {};\n'],
  ]);
  const read = (path: string): Target =>
    pages.has(path) ? { kind: 'file', text: pages.get(path)! } : path === 'docs' ? { kind: 'directory' } : undefined;
  const check = (text: string) => brokenLinks('README.md', text, read);

  it('passes links to files, folders, headings and lines that exist', () => {
    expect(check('[a](docs/guide.md) [b](docs/guide.md#security-what-is-guaranteed-and-what-is-not) [c](docs/)')).toEqual([]);
    expect(check('[d](docs/guide.md#setup) [e](docs/guide.md#setup-1) [f](src/config.ts#L1) [g](https://example.com/x#y)')).toEqual([]);
    expect(check('# Here\n\n[h](#here)\n\n[ref]: docs/guide.md#guide')).toEqual([]);
  });

  it('fails a missing file, a missing heading, a heading inside code, and an anchor a file cannot have', () => {
    expect(check('See [the guide](docs/gone.md).')).toEqual(['README.md: docs/gone.md: docs/gone.md does not exist']);
    expect(check('[a](docs/guide.md#security)')).toEqual(['README.md: docs/guide.md#security: no heading #security in docs/guide.md']);
    expect(check('[a](docs/guide.md#setup-2)')).toHaveLength(1);
    expect(check('[a](docs/guide.md#not-a-heading)')).toHaveLength(1);
    expect(check('[a](#nowhere)')).toEqual(['README.md: #nowhere: no heading #nowhere in README.md']);
    expect(check('[a](src/config.ts#config)')).toHaveLength(1);
    expect(check('[a](docs#x)')).toEqual(['README.md: docs#x: an anchor on a folder']);
    expect(check('[ref]: docs/gone.md')).toHaveLength(1);
  });

  it('reads no link inside code', () => {
    expect(check('`[a](docs/gone.md)`\n\n```\n[b](docs/gone.md)\n```\n')).toEqual([]);
  });

  it("makes GitHub's slugs", () => {
    expect(slug("The electoral court's data")).toBe('the-electoral-courts-data');
    expect(slug('Hybrid: the real server, and the mock for what is not built yet')).toBe('hybrid-the-real-server-and-the-mock-for-what-is-not-built-yet');
    expect(slug('The probes: `GET /livez` and `GET /readyz`')).toBe('the-probes-get-livez-and-get-readyz');
    expect(slug('Issue 20, seventh step (2026-11-26 and 27): two full runs')).toBe('issue-20-seventh-step-2026-11-26-and-27-two-full-runs');
    expect(slug('Metrics (`GET /metrics`)')).toBe('metrics-get-metrics');
    expect(slug('Não é _isto_')).toBe('não-é-_isto_');
  });
});
