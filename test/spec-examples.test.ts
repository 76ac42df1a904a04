/**
 * The error examples speak of their own operation (issue 19): a mock answering `Prefer: code=404` or
 * `code=422` shows a front end the error that operation really gives. Every 404 and 422 example of every
 * operation names only fields and parameters the operation takes; a 404 of an operation that is not a
 * paginated list never speaks of pages; an operation that looks a record up has its own 404; a create's
 * 200, which the server never answers to a create, says so.
 */
import { describe, expect, it } from 'vitest';
import { loadSpec, resolvePointer } from './helpers/spec.js';

type Node = Record<string, unknown>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const spec = loadSpec() as Node;

function deref(node: unknown): Node {
  let current = node as Node;
  while (typeof current?.$ref === 'string') current = resolvePointer(spec as never, current.$ref) as Node;
  return current ?? {};
}

interface Operation {
  operationId: string;
  node: Node;
}

const operations: Operation[] = Object.values(spec.paths as Record<string, Node>).flatMap((item) =>
  METHODS.filter((method) => item[method]).map((method) => ({ operationId: String((item[method] as Node).operationId), node: item[method] as Node })),
);

/** `location:field` for every parameter and every top-level property of the request body (any media type). */
function fieldsOf({ node }: Operation): Set<string> {
  const fields = new Set<string>();
  for (const parameter of (node.parameters ?? []) as unknown[]) {
    const resolved = deref(parameter);
    fields.add(`${resolved.in === 'path' ? 'path' : String(resolved.in)}:${String(resolved.name)}`);
  }
  for (const [mediaType, media] of Object.entries((deref(node.requestBody).content ?? {}) as Record<string, Node>)) {
    for (const name of Object.keys(propertiesOf(deref(media.schema)))) fields.add(`body:${name}`);
    // A CSV body's fields are its columns: those the header rows of its examples name.
    if (mediaType === 'text/csv') {
      for (const example of Object.values((media.examples ?? {}) as Node)) {
        const header = String(deref(example).value).split(/\r?\n/)[0]!;
        for (const column of header.split(/[,;]/)) fields.add(`body:${column.trim()}`);
      }
    }
  }
  return fields;
}

function propertiesOf(schema: Node): Node {
  const own: Node = { ...((schema.properties ?? {}) as Node) };
  for (const part of [...((schema.allOf ?? []) as unknown[]), ...((schema.oneOf ?? []) as unknown[]), ...((schema.anyOf ?? []) as unknown[])]) Object.assign(own, propertiesOf(deref(part)));
  return own;
}

interface Example {
  name: string;
  value: { error: { code: string; message: string; details: Array<{ location?: string; field: string }> } };
}

function examplesOf(operation: Operation, status: string): { response: Node; ref: string | undefined; examples: Example[] } {
  const raw = (operation.node.responses as Node)[status] as Node | undefined;
  const response = deref(raw);
  const media = ((response.content ?? {}) as Record<string, Node>)['application/json'] ?? {};
  const examples = Object.entries((media.examples ?? {}) as Node).map(([name, example]) => ({ name, value: deref(example).value as Example['value'] }));
  return { response, ref: typeof raw?.$ref === 'string' ? raw.$ref : undefined, examples };
}

/** The top-level field a detail names (`marketshare.0.id` is the body's `marketshare`). */
const topField = (field: string) => field.split('.')[0]!;

/** Paginated lists: they take `page`. */
const isList = (operation: Operation) => fieldsOf(operation).has('query:page');

/** Operations whose handler looks a record up by an id the request names (they answer a 404 of their own). */
const LOOKUPS = ['getEntity', 'addEntity', 'createEntityFromCandidacy', 'listOperators', 'addOperator', 'removeOperator', 'getUser', 'getSocialMonitorData', 'removeResearchBookmark', 'sendSmsCampaign', 'getElectionsPanelSync'];

describe('404 examples', () => {
  it.each(operations.map((operation) => [operation.operationId, operation] as const))('%s: its 404 examples name its own fields, and speak of pages only on a list', (_id, operation) => {
    const { examples } = examplesOf(operation, '404');
    expect(examples.length).toBeGreaterThan(0);
    const fields = fieldsOf(operation);
    for (const { name, value } of examples) {
      expect(value.error.code, name).toBe('not_found');
      for (const detail of value.error.details) expect(fields.has(`${detail.location}:${topField(detail.field)}`), `${name}: ${detail.location}:${detail.field}`).toBe(true);
      // Lower case: a messenger Page is a thing of its own, not a page of a list.
      if (!isList(operation)) expect(value.error.message, name).not.toMatch(/\bpage\b/);
    }
  });

  it.each(LOOKUPS)('%s answers its own record\'s 404 first (what Prism and msw answer to Prefer: code=404)', (operationId) => {
    const operation = operations.find((candidate) => candidate.operationId === operationId)!;
    const { ref, examples } = examplesOf(operation, '404');
    expect(ref).not.toBe('#/components/responses/NotFound');
    expect(examples[0]!.value.error.details.length).toBeGreaterThan(0);
  });

  it("getEntity's first 404 example is the server's answer for an entity outside the caller's teams", () => {
    const operation = operations.find((candidate) => candidate.operationId === 'getEntity')!;
    expect(examplesOf(operation, '404').examples[0]!.value.error).toEqual({
      code: 'not_found',
      message: 'There is no entity 999 in your teams.',
      details: [{ location: 'query', field: 'id', rule: 'in_your_teams', message: 'must be an entity of one of your teams', value: 999 }],
    });
  });
});

describe('422 examples', () => {
  it.each(operations.map((operation) => [operation.operationId, operation] as const))('%s: its 422 examples name only fields it takes', (_id, operation) => {
    const { examples } = examplesOf(operation, '422');
    expect(examples.length).toBeGreaterThan(0);
    const fields = fieldsOf(operation);
    for (const { name, value } of examples) {
      for (const detail of value.error.details) expect(fields.has(`${detail.location}:${topField(detail.field)}`), `${name}: ${detail.location}:${detail.field}`).toBe(true);
    }
  });

  it('every operation with a JSON body names one of its own fields in its first 422 example', () => {
    for (const operation of operations) {
      const json = ((deref(operation.node.requestBody).content ?? {}) as Node)['application/json'];
      if (!json || Object.keys(propertiesOf(deref((json as Node).schema))).length === 0) continue;
      const [first] = examplesOf(operation, '422').examples;
      expect(first!.value.error.details.length, operation.operationId).toBeGreaterThan(0);
    }
  });
});

describe("a create's 200", () => {
  const creates = ['addEntity', 'addOperator', 'createEntityFromCandidacy', 'addResearchBookmark', 'createMunicipality', 'createScenarioRequest', 'createSmsCredential', 'createSocialMonitor', 'receiveSocialnetRemoval', 'requestNewsSource', 'sendSmsCampaign', 'startSocialLogin', 'syncElectionsPanel'];
  it.each(creates)('%s: says a create answers 201 and how to ask a mock for it', (operationId) => {
    const operation = operations.find((candidate) => candidate.operationId === operationId)!;
    expect(Object.keys(operation.node.responses as Node)).toContain('201');
    expect(String(deref((operation.node.responses as Node)['200']).description)).toMatch(/Not returned for a create|a create answers 201/);
    expect(String(deref((operation.node.responses as Node)['200']).description)).toContain('Prefer: code=201');
  });
});

describe('list examples', () => {
  interface Page {
    links: { next: string | null; previous: string | null };
    count: number;
    total_pages: number;
    results: unknown[];
  }
  /** Every page in the spec's examples, with where it is. */
  function pagesIn(node: unknown, where: string, found: Array<[string, Page]> = []): Array<[string, Page]> {
    if (Array.isArray(node)) node.forEach((item, index) => pagesIn(item, `${where}/${index}`, found));
    else if (node && typeof node === 'object') {
      const record = node as Node;
      if ('links' in record && 'total_pages' in record && Array.isArray(record.results)) found.push([where, record as unknown as Page]);
      for (const [key, value] of Object.entries(record)) pagesIn(value, `${where}/${key}`, found);
    }
    return found;
  }
  const pageNumber = (link: string) => Number(new URL(link, 'http://localhost:8000/').searchParams.get('page'));
  const pages = pagesIn(spec, '#');

  it('finds the paginated examples', () => {
    expect(pages.length).toBeGreaterThanOrEqual(5);
  });

  it.each(pages)('%s is consistent with itself (a single page links nowhere; a later page links back)', (_where, page) => {
    if (page.total_pages === 1) {
      expect(page.links).toEqual({ next: null, previous: null });
      expect(page.results).toHaveLength(page.count);
      return;
    }
    const current = page.links.next ? pageNumber(page.links.next) - 1 : pageNumber(page.links.previous!) + 1;
    expect(current).toBeGreaterThanOrEqual(1);
    expect(current).toBeLessThanOrEqual(page.total_pages);
    expect(page.links.next === null).toBe(current === page.total_pages);
    expect(page.links.previous === null).toBe(current === 1);
    if (page.links.previous) expect(pageNumber(page.links.previous)).toBe(current - 1);
  });
});
