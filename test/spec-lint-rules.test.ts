/**
 * `npm run lint:spec` keeps the spec clean; this test keeps the linter honest. It breaks a copy of the
 * spec in one place per project convention and checks that Spectral (with the repo's .spectral.yaml)
 * reports each break, at the place it was made. A rule that silently stopped matching would pass
 * lint forever; here it fails the build.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSpec } from './helpers/spec.js';

const run = promisify(execFile);
const spectral = fileURLToPath(new URL('../node_modules/.bin/spectral', import.meta.url));
const ruleset = fileURLToPath(new URL('../.spectral.yaml', import.meta.url));

interface Finding {
  code: string;
  path: string[];
  severity: number;
}

type Node = Record<string, any>;

/** One deliberate break per convention: [rule expected to fire, path where it should point, the break]. */
const breaks: Array<[rule: string, at: string[], apply: (spec: Node) => void]> = [
  ['palanque-x-request-id', ['paths', '/api/check/login_attempt/', 'get'], (spec) => {
    const op = spec.paths['/api/check/login_attempt/'].get;
    op.parameters = op.parameters.filter((p: Node) => !String(p.$ref).endsWith('/XRequestId'));
  }],
  ['palanque-idempotency-key', ['paths', '/api/auth/logout', 'post'], (spec) => {
    const op = spec.paths['/api/auth/logout'].post;
    op.parameters = op.parameters.filter((p: Node) => !String(p.$ref).endsWith('/IdempotencyKey'));
  }],
  ['palanque-post-201', ['paths', '/api/tokens/remove_token/', 'post', 'responses'], (spec) => {
    delete spec.paths['/api/tokens/remove_token/'].post.responses['201'];
  }],
  ['palanque-standard-statuses', ['paths', '/api/check/email/', 'get', 'responses'], (spec) => {
    delete spec.paths['/api/check/email/'].get.responses['429'];
  }],
  ['palanque-response-example', ['paths', '/api/controle/system_is_online/', 'get', 'responses', '200'], (spec) => {
    delete spec.paths['/api/controle/system_is_online/'].get.responses['200'].content['application/json'].examples;
  }],
  ['palanque-rate-limit-headers', ['paths', '/api/controle/system_is_online/', 'get', 'responses', '200'], (spec) => {
    delete spec.paths['/api/controle/system_is_online/'].get.responses['200'].headers['RateLimit-Policy'];
  }],
  ['palanque-operation-id-camel-case', ['paths', '/', 'get', 'operationId'], (spec) => {
    spec.paths['/'].get.operationId = 'get_api_root';
  }],
  ['palanque-explicit-security', ['paths', '/api/news/get_requested_fonts/', 'get'], (spec) => {
    delete spec.paths['/api/news/get_requested_fonts/'].get.security;
  }],
  ['tag-description', ['tags', '3'], (spec) => {
    delete spec.tags[3].description;
  }],
  ['oas3-valid-media-example', ['paths', '/api/municipios/', 'get', 'responses', '200'], (spec) => {
    const examples = spec.paths['/api/municipios/'].get.responses['200'].content['application/json'].examples;
    examples.firstPage.value.results[0].codigo_ibge = 'um milhão';
  }],
  // An id in a body without its column's maximum (99999999999999999999 was a 500 on PostgreSQL)...
  ['palanque-request-integer-bounds', ['components', 'schemas', 'ScenarioApprovalRequest', 'properties', 'selectedMonitorId'], (spec) => {
    delete spec.components.schemas.ScenarioApprovalRequest.properties.selectedMonitorId.maximum;
  }],
  // ...and one in a shared path parameter without its minimum.
  ['palanque-request-integer-bounds', ['components', 'parameters', 'UserIdPath', 'schema'], (spec) => {
    delete spec.components.parameters.UserIdPath.schema.minimum;
  }],
];

let findings: Finding[] = [];
let dir = '';

beforeAll(async () => {
  const spec = loadSpec() as Node;
  for (const [, , apply] of breaks) apply(spec);
  dir = await mkdtemp(join(tmpdir(), 'palanque-lint-'));
  const broken = join(dir, 'openapi.yaml');
  await writeFile(broken, stringify(spec));
  findings = await lint(broken);
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
