/**
 * Every operation of the contract is routed: the ones without a handler yet answer 501 `not_implemented`
 * in the error model (never 404 or 500). The list below is the work left; each later issue removes the
 * operations it implements, until it is empty.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadSpec, tryResolvePointer } from './helpers/spec.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin } from './helpers/accounts.js';

const NOT_IMPLEMENTED = [
  'searchnetOAuthCallback',
  'socialVideoOAuthCallback',
  'syncElectionsPanel',
];

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
      : JSON.stringify(example);
  }
  return { url: `${app.baseUrl}${path.replace('{user_id}', '2')}`, init: { method: method.toUpperCase(), headers, body } };
}

it('lists exactly the operations without a handler', async () => {
  const answering501: string[] = [];
  for (const operation of operations) {
    const { url, init } = await validRequest(operation);
    const response = await fetch(url, init);
    if (response.status === 501) answering501.push(operation.operationId);
  }
  expect(answering501.sort()).toEqual(NOT_IMPLEMENTED);
});

it.each(NOT_IMPLEMENTED)('%s answers 501 not_implemented in the error model', async (operationId) => {
  const operation = operations.find((candidate) => candidate.operationId === operationId)!;
  const { url, init } = await validRequest(operation);
  const response = await fetch(url, { ...init, headers: { ...(init.headers as Record<string, string>), 'X-Request-Id': `todo-${operationId}` } });
  expect(response.status).toBe(501);
  expect(await response.json()).toEqual({
    success: false,
    error: { code: 'not_implemented', message: `The operation ${operationId} is not implemented by this server yet.`, details: [] },
    request_id: `todo-${operationId}`,
  });
});
