/**
 * Every operation of the contract is routed to a handler: a valid request to any of them never answers
 * 501 `not_implemented`. An operation left without one (a new operation added to the spec before its
 * handler) answers 501 in the error model, never 404 or 500.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadSpec, tryResolvePointer } from './helpers/spec.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin } from './helpers/accounts.js';

type Node = Record<string, unknown>;

interface Operation {
  operationId: string;
  method: string;
  path: string;
  operation: Node;
}

const spec = loadSpec() as Node;
const deref = (node: unknown): Node => {
  const ref = (node as Node | undefined)?.$ref;
  return (typeof ref === 'string' ? tryResolvePointer(spec, ref) : node) as Node;
};

const operations: Operation[] = Object.entries(spec.paths as Record<string, Node>).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
    .map(([method, operation]) => ({ operationId: String((operation as Node).operationId), method, path, operation: operation as Node })),
);

let app: TestApp;
let adminId: number;

beforeAll(async () => {
  app = await startTestApp({ withMunicipalities: true });
  adminId = (await createAdmin(app)).user.id;
});

afterAll(async () => {
  await app?.close();
});

/**
 * A request the contract accepts: its path filled in, credentials when needed (a fresh admin key each
 * time, since logout revokes the one it gets), the first body example.
 */
async function validRequest({ method, path, operation }: Operation): Promise<{ url: string; init: RequestInit }> {
  const headers: Record<string, string> = {};
  if ((operation.security as unknown[]).length > 0) headers.Authorization = `Token ${(await app.accounts.tokens.issue(adminId)).key}`;
  const content = (deref(operation.requestBody) as Node | undefined)?.content as Record<string, Node> | undefined;
  let body: string | undefined;
  if (content && method !== 'get') {
    const [mediaType, media] = Object.entries(content)[0]!;
    const example = deref(Object.values(media.examples as Node)[0]).value;
    headers['Content-Type'] = mediaType;
    body = mediaType === 'application/x-www-form-urlencoded'
      ? new URLSearchParams(example as Record<string, string>).toString()
      : mediaType.startsWith('text/') ? String(example) : JSON.stringify(example);
  }
  return { url: `${app.baseUrl}${path.replace('{user_id}', '2').replace('{sync_id}', '6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f').replace('{import_id}', '5d1e2f3a-4b5c-4d6e-8f7a-9b0c1d2e3f4a').replace('{campaign_id}', '77').replace('{contact_id}', '41').replace('{credential_id}', '3')}`, init: { method: method.toUpperCase(), headers, body } };
}

it('reads every operation of the contract', () => {
  expect(operations.length).toBeGreaterThan(50);
});

// One test per operation, each with its own time: the first call to an operation compiles its
// validators (a few hundred milliseconds), so all of them in one test outgrew any single timeout on a
// loaded machine.
it.each(operations.map((operation) => [operation.operationId, operation] as const))('has a handler for %s: it does not answer 501', async (_operationId, operation) => {
  const { url, init } = await validRequest(operation);
  const response = await fetch(url, init);
  await response.arrayBuffer();
  expect(response.status).not.toBe(501);
});

it('answers 501 not_implemented in the error model for an operation without a handler', async () => {
  const withoutHandler = await startTestApp({ handlers: { systemIsOnline: undefined } });
  try {
    const admin = await createAdmin(withoutHandler);
    const response = await fetch(`${withoutHandler.baseUrl}/api/controle/system_is_online/`, { headers: { ...admin.headers, 'X-Request-Id': 'todo-systemIsOnline' } });
    expect(response.status).toBe(501);
    expect(await response.json()).toEqual({
      success: false,
      error: { code: 'not_implemented', message: 'The operation systemIsOnline is not implemented by this server yet.', details: [] },
      request_id: 'todo-systemIsOnline',
    });
  } finally {
    await withoutHandler.close();
  }
});
