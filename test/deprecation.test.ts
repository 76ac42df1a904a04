/**
 * Deprecation as a protocol (issue 45 §2): what the contract marks `deprecated: true` says when
 * (`x-deprecated-on`), and the responses of its operation declare the headers; the server answers them
 * (RFC 9745 `Deprecation`, RFC 8594 `Sunset`, RFC 8288 `Link`) on every answer of a deprecated operation
 * and when a request uses a deprecated parameter or body field, and never otherwise; the mock answers
 * the same; the SDK's types mark the field `@deprecated`; the CLI warns once. The operation-level cases run
 * on a copy of the contract with an operation and a parameter deprecated (the contract has none yet).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { getResponse } from 'msw';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractDeprecations, deprecationHeaders, httpDate, structuredDate } from '@palanque/rules/deprecation';
import { deprecationNotice } from '../cli/deprecation-notice.js';
import { createApiClient } from '../sdk/index.js';
import { createHandlers, DEFAULT_BASE_URL } from '../sdk/msw.js';
import { createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { request } from './helpers/http.js';
import { loadSpec, resolvePointer, tryResolvePointer } from './helpers/spec.js';

type Node = Record<string, unknown>;
const loaded = loadSpec();
const spec: Node = loaded;
const IDADE_SINCE = '@1795910400'; // 2026-11-29T00:00:00Z
const ADD_ENTITY_DOCS = '</docs#/entidades/addEntity>; rel="deprecation"; type="text/html"';

/** The contract's example candidate: it carries `idade` (the seed's field, still taken), kept true today. */
function exampleCandidate(): Node {
  const example = tryResolvePointer(spec, '#/components/examples/NewCandidateEntity') as { value: Node };
  const body = structuredClone(example.value);
  const born = new Date(`${String(body.data_nascimento)}T00:00:00Z`);
  const today = new Date();
  const birthdayAhead = today.getUTCMonth() < born.getUTCMonth() || (today.getUTCMonth() === born.getUTCMonth() && today.getUTCDate() < born.getUTCDate());
  body.idade = today.getUTCFullYear() - born.getUTCFullYear() - (birthdayAhead ? 1 : 0);
  return body;
}

function withoutAge(body: Node): Node {
  const { idade: _age, ...rest } = body;
  return rest;
}

/** Every node of the document with `deprecated: true`, by its JSON pointer. */
function deprecatedNodes(node: unknown, pointer = '#'): Array<[string, Node]> {
  if (node === null || typeof node !== 'object') return [];
  const here: Array<[string, Node]> = (node as Node).deprecated === true ? [[pointer, node as Node]] : [];
  return here.concat(Object.entries(node).flatMap(([key, child]) => deprecatedNodes(child, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`)));
}

describe('the contract says each deprecation', () => {
  it('gives every deprecated operation, parameter and schema a date, and a successor that exists', () => {
    const nodes = deprecatedNodes(spec);
    expect(nodes.map(([pointer]) => pointer)).toContain('#/components/schemas/CandidateEntity/properties/idade');
    for (const [pointer, node] of nodes) expect(node['x-deprecated-on'], pointer).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const deprecations = contractDeprecations(spec);
    expect(deprecations.get('addEntity')).toEqual({
      operationId: 'addEntity',
      tag: 'entidades',
      parameters: [],
      fields: [{ path: ['idade'], deprecatedOn: '2026-11-29', replacedBy: 'data_nascimento' }],
    });
  });

  it('declares Deprecation and Link (and Sunset where a date is set) on every 2xx answer of an operation with a deprecation', () => {
    const deprecations = contractDeprecations(spec);
    expect(deprecations.size).toBeGreaterThan(0);
    for (const [path, item] of Object.entries(spec.paths as Record<string, Node>)) {
      for (const operation of Object.values(item) as Node[]) {
        const entry = deprecations.get(String(operation.operationId));
        if (!entry) continue;
        const notes = [entry.operation, ...entry.parameters, ...entry.fields].filter((note) => note !== undefined);
        for (const [status, reference] of Object.entries(operation.responses as Node).filter(([status]) => status.startsWith('2'))) {
          const response = (reference as Node).$ref ? (resolvePointer(loaded, (reference as Node).$ref as string) as Node) : (reference as Node);
          const headers = Object.fromEntries(Object.entries((response.headers ?? {}) as Record<string, Node>).map(([name, header]) => [name, header.$ref]));
          const where = `${entry.operationId} ${status} (${path})`;
          expect(headers.Deprecation, where).toBe('#/components/headers/Deprecation');
          expect(headers.Link, where).toBe('#/components/headers/DeprecationLink');
          expect(headers.Sunset, where).toBe(notes.some((note) => note.sunset) ? '#/components/headers/Sunset' : undefined);
        }
      }
    }
  });

  it('refuses a deprecation without its date, or with a successor the contract does not have', () => {
    const broken = structuredClone(spec) as Node & { paths: Record<string, Record<string, Node>> };
    broken.paths['/api/entidade/']!.get!.deprecated = true;
    expect(() => contractDeprecations(broken)).toThrow(/listEntities: deprecated without x-deprecated-on/);
    Object.assign(broken.paths['/api/entidade/']!.get!, { 'x-deprecated-on': '2026-11-29', 'x-replaced-by': 'listEntitiesV2' });
    expect(() => contractDeprecations(broken)).toThrow(/x-replaced-by names no operation of the contract \("listEntitiesV2"\)/);
  });

  it('writes the dates as RFC 9745 and RFC 8594 ask', () => {
    expect(structuredDate('2026-11-29')).toBe(IDADE_SINCE);
    expect(httpDate('2027-06-30')).toBe('Wed, 30 Jun 2027 00:00:00 GMT');
  });

  it('marks the deprecated field @deprecated in the SDK types', async () => {
    const types = await readFile(new URL('../sdk/schema.d.ts', import.meta.url), 'utf8');
    const candidate = types.slice(types.indexOf('        CandidateEntity: {'));
    expect(candidate).toMatch(/\/\*\*\s*\n\s*\* @deprecated\n(?:\s*\*[^\n]*\n)*?\s*\*\/\n\s*idade\?: number \| null;/);
    // and nothing else of it
    expect(candidate.slice(0, candidate.indexOf('\n        };')).match(/@deprecated/g)).toHaveLength(1);
  });
});

describe('the server answers the headers', () => {
  let app: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    app = await startTestApp({ withMunicipalities: true });
    owner = await createUser(app);
  });
  afterAll(() => app.close());

  it('answers Deprecation and Link to an addEntity that sends idade, and neither to one that does not', async () => {
    const body = { ...exampleCandidate(), cpf: undefined };
    const withAge = await request(app.baseUrl, 'POST', '/api/entidade/add/', owner.headers, body);
    expect(withAge.status, withAge.text).toBe(201);
    expect(withAge.headers.get('Deprecation')).toBe(IDADE_SINCE);
    expect(withAge.headers.get('Link')).toBe(ADD_ENTITY_DOCS);
    expect(withAge.headers.get('Sunset')).toBeNull();

    const withoutIt = await request(app.baseUrl, 'POST', '/api/entidade/add/', owner.headers, withoutAge({ ...body, id: withAge.body.data.id }));
    expect(withoutIt.status, withoutIt.text).toBe(200);
    expect(withoutIt.headers.get('Deprecation')).toBeNull();
    expect(withoutIt.headers.get('Link')).toBeNull();
    // `null` is sending it too.
    const cleared = await request(app.baseUrl, 'POST', '/api/entidade/add/', owner.headers, { ...withoutAge(body), id: withAge.body.data.id, idade: null });
    expect(cleared.headers.get('Deprecation')).toBe(IDADE_SINCE);
    // Operations without a deprecation say nothing.
    expect((await request(app.baseUrl, 'GET', '/api/entidade/', owner.headers)).headers.get('Deprecation')).toBeNull();
  });
});

describe('a deprecated operation and parameter (a copy of the contract)', () => {
  let folder: string;
  let contractFile: string;
  let app: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    const copy = structuredClone(spec) as Node & { paths: Record<string, Record<string, Node>> };
    Object.assign(copy.paths['/api/entidade/']!.get!, { deprecated: true, 'x-deprecated-on': '2026-11-29', 'x-sunset': '2027-06-30', 'x-replaced-by': 'listMunicipalities' });
    const codigoUf = (copy.paths['/api/municipios/']!.get!.parameters as Node[]).find((parameter) => parameter.name === 'codigo_uf')!;
    Object.assign(codigoUf, { deprecated: true, 'x-deprecated-on': '2026-10-01' });
    folder = await mkdtemp(join(tmpdir(), 'palanque-deprecation-'));
    contractFile = join(folder, 'openapi.json');
    await writeFile(contractFile, JSON.stringify(copy));
    // Responses not validated, so the fast path and the read lane answer, as in production.
    app = await startTestApp({ withMunicipalities: true, contractFile, config: { validateResponses: false } });
    owner = await createUser(app);
  });
  afterAll(async () => {
    await app.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('answers Deprecation, Sunset and Link with the successor on every answer of the operation, the errors included', async () => {
    for (const headers of [owner.headers, {}]) {
      const answer = await request(app.baseUrl, 'GET', '/api/entidade/', headers);
      expect(answer.status).toBe(headers === owner.headers ? 200 : 401);
      expect(answer.headers.get('Deprecation')).toBe(IDADE_SINCE);
      expect(answer.headers.get('Sunset')).toBe('Wed, 30 Jun 2027 00:00:00 GMT');
      expect(answer.headers.get('Link')).toBe('</docs#/entidades/listEntities>; rel="deprecation"; type="text/html", </api/municipios/>; rel="successor-version"');
    }
    const head = await fetch(`${app.baseUrl}/api/entidade/`, { method: 'HEAD', headers: owner.headers });
    expect(head.headers.get('Deprecation')).toBe(IDADE_SINCE);
  });

  it('answers a deprecated query parameter only when it is sent (through the fast path too)', async () => {
    const filtered = await request(app.baseUrl, 'GET', '/api/municipios/?codigo_uf=35', {});
    expect(filtered.status).toBe(200);
    expect(filtered.headers.get('Deprecation')).toBe(structuredDate('2026-10-01'));
    expect(filtered.headers.get('Sunset')).toBeNull();
    const all = await request(app.baseUrl, 'GET', '/api/municipios/', {});
    expect(all.status).toBe(200);
    expect(all.headers.get('Deprecation')).toBeNull();
  });

  it('takes the earliest date and the nearest sunset when a request uses several', () => {
    const entry = {
      operationId: 'x',
      tag: 't',
      operation: { deprecatedOn: '2026-11-29', sunset: '2028-01-01' },
      parameters: [{ in: 'query' as const, name: 'q', deprecatedOn: '2026-01-01', sunset: '2027-01-01' }],
      fields: [{ path: ['items', '*', 'old'], deprecatedOn: '2025-01-01' }],
    };
    const use = { hasQuery: () => true, hasHeader: () => false, body: { items: [{}, { old: 1 }] } };
    expect(deprecationHeaders(entry, use, '/v1')).toEqual({
      Deprecation: structuredDate('2025-01-01'),
      Sunset: httpDate('2027-01-01'),
      Link: '</v1/docs#/t/x>; rel="deprecation"; type="text/html"',
    });
  });
});

describe('the mock answers the same headers', () => {
  const handlers = createHandlers();

  it('answers Deprecation and Link to an addEntity that sends idade, and neither otherwise', async () => {
    const post = (body: Node) =>
      getResponse(handlers, new Request(`${DEFAULT_BASE_URL}/api/entidade/add/`, { method: 'POST', headers: { Authorization: 'Token k', 'Content-Type': 'application/json' }, body: JSON.stringify(body) }));
    const withAge = await post(exampleCandidate());
    expect(withAge?.status).toBe(201);
    expect(withAge?.headers.get('Deprecation')).toBe(IDADE_SINCE);
    expect(withAge?.headers.get('Link')).toBe(ADD_ENTITY_DOCS);
    const withoutIt = await post(withoutAge(exampleCandidate()));
    expect(withoutIt?.status).toBe(201);
    expect(withoutIt?.headers.get('Deprecation')).toBeNull();
    expect(withoutIt?.headers.get('Link')).toBeNull();
  });
});

describe('the CLI warns once', () => {
  it('writes one warning on stderr for the first deprecated answer of a command, and none for the others', async () => {
    const written: string[] = [];
    const stderr = new Writable({ write: (chunk: Buffer, _encoding, done) => (written.push(chunk.toString()), done()) });
    const answers = [
      new Response('{}', { status: 200, headers: { 'Content-Type': 'application/json' } }),
      new Response('{}', {
        status: 200,
        headers: { 'Content-Type': 'application/json', Deprecation: '@1795910400', Sunset: 'Wed, 30 Jun 2027 00:00:00 GMT', Link: '</docs#/entidades/listEntities>; rel="deprecation"; type="text/html", </api/municipios/>; rel="successor-version"' },
      }),
      new Response('{}', { status: 200, headers: { 'Content-Type': 'application/json', Deprecation: '@1795910400' } }),
    ];
    const client = createApiClient({ baseUrl: 'http://palanque.test', retry: false, fetch: async () => answers.shift()! });
    client.use(deprecationNotice(stderr));
    for (let call = 0; call < 3; call += 1) await client.GET('/api/entidade/');
    expect(written).toEqual([
      'Warning: GET /api/entidade/ uses what the API deprecated on 2026-11-29; it may stop working after Wed, 30 Jun 2027 00:00:00 GMT; ' +
        'its successor is http://palanque.test/api/municipios/. See http://palanque.test/docs#/entidades/listEntities\n',
    ]);
  });
});
