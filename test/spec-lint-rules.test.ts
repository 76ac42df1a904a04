/**
 * `npm run lint:spec` keeps the spec clean; this test keeps the linter honest. It breaks a copy of the
 * spec's files (spec/: the root and the files its `$ref`s name) in one place per project convention,
 * in the file where that place is written, and checks that Spectral (with the repo's .spectral.yaml),
 * linting the copy bundled as `lint:spec` does (scripts/lint-spec.sh), reports each break, at the place
 * it was made. A rule that silently stopped matching would pass lint forever; here it fails the build.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const spectral = fileURLToPath(new URL('../node_modules/.bin/spectral', import.meta.url));
const bundler = fileURLToPath(new URL('../node_modules/.bin/redocly', import.meta.url));
const ruleset = fileURLToPath(new URL('../.spectral.yaml', import.meta.url));
const specFolder = fileURLToPath(new URL('../spec/', import.meta.url));

interface Finding {
  code: string;
  path: string[];
  severity: number;
}

type Node = Record<string, any>;

/**
 * One deliberate break per convention: [rule expected to fire, where it should point in the bundled
 * document, the break, made to the node there (or at `editAt`)].
 */
const breaks: Array<[rule: string, at: string[], apply: (node: Node) => void, editAt?: string[]]> = [
  ['palanque-x-request-id', ['paths', '/api/check/login_attempt/', 'get'], (op) => {
    op.parameters = op.parameters.filter((p: Node) => !String(p.$ref).endsWith('/XRequestId'));
  }],
  ['palanque-idempotency-key', ['paths', '/api/auth/logout', 'post'], (op) => {
    op.parameters = op.parameters.filter((p: Node) => !String(p.$ref).endsWith('/IdempotencyKey'));
  }],
  ['palanque-post-201', ['paths', '/api/tokens/remove_token/', 'post', 'responses'], (responses) => {
    delete responses['201'];
  }],
  ['palanque-standard-statuses', ['paths', '/api/check/email/', 'get', 'responses'], (responses) => {
    delete responses['429'];
  }],
  ['palanque-response-example', ['paths', '/api/controle/system_is_online/', 'get', 'responses', '200'], (response) => {
    delete response.content['application/json'].examples;
  }],
  ['palanque-rate-limit-headers', ['paths', '/api/controle/system_is_online/', 'get', 'responses', '200'], (response) => {
    delete response.headers['RateLimit-Policy'];
  }],
  ['palanque-operation-id-camel-case', ['paths', '/', 'get', 'operationId'], (op) => {
    op.operationId = 'get_api_root';
  }, ['paths', '/', 'get']],
  ['palanque-explicit-security', ['paths', '/api/news/get_requested_fonts/', 'get'], (op) => {
    delete op.security;
  }],
  ['tag-description', ['tags', '3'], (tag) => {
    delete tag.description;
  }],
  ['oas3-valid-media-example', ['paths', '/api/municipios/', 'get', 'responses', '200'], (response) => {
    response.content['application/json'].examples.firstPage.value.results[0].codigo_ibge = 'um milhão';
  }],
  // An id in a body without its column's maximum (99999999999999999999 was a 500 on PostgreSQL)...
  ['palanque-request-integer-bounds', ['components', 'schemas', 'ScenarioApprovalRequest', 'properties', 'selectedMonitorId'], (property) => {
    delete property.maximum;
  }],
  // ...and one in a shared path parameter without its minimum.
  ['palanque-request-integer-bounds', ['components', 'parameters', 'UserIdPath', 'schema'], (schema) => {
    delete schema.minimum;
  }],
];

/**
 * Where a place of the bundled document is written: the file of spec/ (relative to it) and the path in
 * that file. The root lists each path's file and each component's file and name by `$ref`.
 */
function locate(root: Node, at: string[]): { file: string; path: string[] } {
  const [section, key, name] = at;
  if (section === 'paths' && root.paths[key!]?.$ref) return { file: root.paths[key!].$ref, path: at.slice(2) };
  if (section === 'components' && root.components[key!]?.[name!]?.$ref) {
    const [file, pointer] = String(root.components[key!][name!].$ref).split('#/');
    return { file: file!, path: [pointer!, ...at.slice(3)] };
  }
  return { file: 'openapi.yaml', path: at };
}

let findings: Finding[] = [];
let dir = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'palanque-lint-'));
  await cp(specFolder, dir, { recursive: true });
  const root = parse(await readFile(join(dir, 'openapi.yaml'), 'utf8'));
  for (const [, at, apply, editAt] of breaks) {
    const { file, path } = locate(root, editAt ?? at);
    const document = parse(await readFile(join(dir, file), 'utf8'));
    apply(path.reduce((node, key) => node[key], document));
    await writeFile(join(dir, file), stringify(document));
  }
  const bundle = join(dir, 'bundle.json');
  await run(bundler, ['bundle', join(dir, 'openapi.yaml'), '--ext', 'json', '--output', bundle]);
  findings = await lint(bundle);
  // Spectral takes about 20 s over the whole contract on a quiet machine; CI's two cores, shared with the
  // other test files, have taken over 60.
}, 180_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function lint(file: string): Promise<Finding[]> {
  const args = ['lint', '--ruleset', ruleset, '--format', 'json', '--quiet', file];
  try {
    const { stdout } = await run(spectral, args, { maxBuffer: 16 * 1024 * 1024 });
    return JSON.parse(stdout || '[]');
  } catch (error) {
    // Spectral exits non-zero when it finds errors; its findings are still on stdout.
    const { stdout } = error as { stdout?: string };
    if (!stdout) throw error;
    return JSON.parse(stdout);
  }
}

describe('the Spectral ruleset catches each broken convention', () => {
  it.each(breaks.map(([rule, at]) => [rule, at] as const))('%s', (rule, at) => {
    const hits = findings.filter((f) => f.code === rule);
    expect(hits.length, `${rule} did not fire`).toBeGreaterThan(0);
    expect(hits.some((f) => at.every((segment, i) => f.path[i] === segment)), `${rule} fired elsewhere: ${JSON.stringify(hits.map((h) => h.path))}`).toBe(true);
    expect(hits.every((f) => f.severity === 0), `${rule} must be an error`).toBe(true);
  });

  it('reports nothing else than the deliberate breaks', () => {
    const expected = new Set(breaks.map(([rule]) => rule));
    expect(findings.filter((f) => !expected.has(f.code)).map((f) => `${f.code} at ${f.path.join('.')}`)).toEqual([]);
  });
});
