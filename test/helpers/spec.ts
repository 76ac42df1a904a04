/**
 * Reads the contract for tests that compare behaviour with what the contract says: sdk/openapi.json, the
 * files of spec/ bundled into one document by `npm run generate` (test/contract-bundle.test.ts holds it
 * current), which the server, Prism and msw read too.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The contract as one document (every `$ref` is local: `#/components/...`). */
export const contractPath = fileURLToPath(new URL('../../sdk/openapi.json', import.meta.url));
/** The contract's sources: the root document, whose `$ref`s name the files of spec/paths/ and spec/components/. */
export const specRoot = fileURLToPath(new URL('../../spec/openapi.yaml', import.meta.url));

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function loadSpec(): Record<string, Json> {
  return JSON.parse(readFileSync(contractPath, 'utf8')) as Record<string, Json>;
}

/** Follows a local JSON pointer such as `#/components/examples/LoginAdmin`; undefined when it does not resolve. */
export function tryResolvePointer(spec: unknown, pointer: string): unknown {
  if (!pointer.startsWith('#/')) return undefined;
  let node: unknown = spec;
  for (const rawToken of pointer.slice(2).split('/')) {
    const token = rawToken.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[token];
    if (node === undefined) return undefined;
  }
  return node;
}

/** Like tryResolvePointer, but a pointer that does not resolve is an error. */
export function resolvePointer(spec: Json, pointer: string): Json {
  const node = tryResolvePointer(spec, pointer);
  if (node === undefined) throw new Error(`Pointer ${pointer} does not resolve`);
  return node as Json;
}

/** The value of a named example of a response, following `$ref`s to components/examples. */
export function responseExample(path: string, method: string, status: string, name: string, mediaType = 'application/json'): Json {
  const spec = loadSpec();
  const pointer = `#/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}/responses/${status}`;
  let response = resolvePointer(spec, pointer) as Record<string, Json>;
  if (typeof response.$ref === 'string') response = resolvePointer(spec, response.$ref) as Record<string, Json>;
  const content = response.content as Record<string, Record<string, Json>>;
  const examples = content[mediaType]?.examples as Record<string, Record<string, Json>>;
  let example = examples[name];
  if (!example) throw new Error(`No example "${name}" on ${method.toUpperCase()} ${path} ${status}`);
  if (typeof example.$ref === 'string') example = resolvePointer(spec, example.$ref) as Record<string, Json>;
  return example.value as Json;
}
