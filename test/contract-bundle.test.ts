/**
 * The contract is written in the files of spec/ (Redocly's multi-file layout): the root document
 * spec/openapi.yaml lists the paths and the components by `$ref`, the paths in spec/paths/<tag>/ (one
 * file each), the components in spec/components/ (schemas, responses and examples by domain,
 * parameters, headers). Every tool reads them bundled into one document, sdk/openapi.json, which
 * `npm run generate` writes with `redocly bundle`: the server's validator and route table, Prism, msw,
 * the docs page and the generators. These tests fail when the committed bundle is not what the files
 * bundle to, and hold the layout's promises: the bundle keeps the root's order and component names
 * (sdk/schema.d.ts and the SDK's types are named after them), and no source file grows past 1,500 lines.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { contractPath, loadSpec, specRoot } from './helpers/spec.js';

type Node = Record<string, unknown>;

const bundler = fileURLToPath(new URL('../node_modules/.bin/redocly', import.meta.url));
const specFolder = fileURLToPath(new URL('../spec/', import.meta.url));
const MAX_LINES = 1_500;

describe('sdk/openapi.json, the contract bundled', () => {
  it('is what `npm run generate` bundles from the files of spec/', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'palanque-openapi-json-'));
    try {
      const fresh = join(dir, 'openapi.json');
      await promisify(execFile)(bundler, ['bundle', specRoot, '--ext', 'json', '--output', fresh]);
      const [expected, actual] = await Promise.all([readFile(fresh, 'utf8'), readFile(contractPath, 'utf8')]);
      expect(actual, 'sdk/openapi.json is not what spec/ bundles to: run `npm run generate` and commit what it changed').toBe(expected);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it("keeps the root document's order and component names, where the handlers pick \"the first\" (paths, responses, examples)", () => {
    const root = parse(readFileSync(specRoot, 'utf8')) as { paths: Node; components: Record<string, Node> };
    const bundle = loadSpec() as unknown as { paths: Node; components: Record<string, Node> };
    expect(Object.keys(bundle.paths)).toEqual(Object.keys(root.paths));
    expect(Object.keys(bundle.components)).toEqual(Object.keys(root.components));
    for (const [section, components] of Object.entries(root.components)) {
      expect(Object.keys(bundle.components[section]!), section).toEqual(Object.keys(components));
    }
  });

  it('has every $ref local, to a component of its own', () => {
    const bundle = loadSpec();
    const refs = new Set<string>();
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === '$ref' && typeof value === 'string') refs.add(value);
          else walk(value);
        }
      }
    };
    walk(bundle);
    expect(refs.size).toBeGreaterThan(100);
    const components = bundle.components as Record<string, Node>;
    const dangling = [...refs].filter((ref) => {
      const [, , section, name, ...rest] = ref.split('/');
      return !ref.startsWith('#/components/') || rest.length > 0 || !components[section!]?.[name!];
    });
    expect(dangling).toEqual([]);
  });
});

it(`keeps every source file of the contract under ${MAX_LINES} lines`, () => {
  const files = readdirSync(specFolder, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.yaml'));
  expect(files.length).toBeGreaterThan(100);
  const long = files
    .map((file) => ({ file, lines: readFileSync(join(specFolder, file), 'utf8').split('\n').length - 1 }))
    .filter(({ lines }) => lines > MAX_LINES);
  expect(long, 'split these files further (a path file per path, a component file per domain)').toEqual([]);
});
