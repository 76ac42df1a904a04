/**
 * What the docs say of the SDK's tarball stays true (issue 46 §5: they named palanque-sdk-1.0.0.tgz of
 * about 130 kB when npm pack wrote palanque-sdk-2.0.0.tgz of 345 kB): every tarball they name carries
 * sdk/package.json's version, and the size docs/frontend.md gives is within 15% of what npm pack
 * packs. The size is read from the page, never written here, so a change to the packaging fails this
 * test until the page says the new size.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { npm, root } from './helpers/sdk-package.js';

const PAGES = ['README.md', 'sdk/README.md', 'docs/frontend.md'];
/** How far the page's "about" may be from the packed size, as a share of it. */
const TOLERANCE = 0.15;

const read = (page: string) => readFileSync(join(root, page), 'utf8');
const { version } = JSON.parse(read('sdk/package.json')) as { version: string };

it("names the tarball by sdk/package.json's version", () => {
  const named = PAGES.flatMap((page) => [...read(page).matchAll(/palanque-sdk-([^\s/]+)\.tgz/g)].map(([, tail]) => ({ page, tail })));
  expect(named.length).toBeGreaterThanOrEqual(3);
  // `<version>` is a placeholder, not a version that can go stale.
  expect(named.filter(({ tail }) => tail !== version && tail !== '<version>')).toEqual([]);
});

it('gives the packed size within 15%', async () => {
  const said = /palanque-sdk-[^\s/]+\.tgz \(about (\d+) kB\)/.exec(read('docs/frontend.md'));
  expect(said, 'docs/frontend.md names the tarball with "(about <n> kB)"').not.toBeNull();
  const documentedBytes = Number(said![1]) * 1000;
  // --dry-run writes no tarball; its prepack builds sdk/dist, so the size is that of the current sources.
  const { stdout } = await npm(join(root, 'sdk'), ['pack', '--dry-run', '--json']);
  const [{ filename, size }] = JSON.parse(stdout) as [{ filename: string; size: number }];
  expect(filename).toBe(`palanque-sdk-${version}.tgz`);
  const packed = `npm pack packs ${Math.round(size / 1000)} kB: update "(about ${said![1]} kB)" in docs/frontend.md`;
  expect(Math.abs(documentedBytes - size), packed).toBeLessThanOrEqual(size * TOLERANCE);
}, 180_000);
