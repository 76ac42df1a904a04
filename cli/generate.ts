/**
 * `npm run generate` (its last step): writes cli/spec-operations.ts from sdk/openapi.json (the contract of
 * spec/, bundled by the step before), the table of every operation the CLI offers as a command.
 * test/cli.test.ts fails when the committed file is stale, and
 * cli/operations.ts must name a command for each operationId (the compiler checks it against the SDK's
 * generated types), so no operation of the contract can be missing from the CLI.
 *
 *   tsx cli/generate.ts [--spec sdk/openapi.json] [--output cli/spec-operations.ts]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import type { SpecBody, SpecOperation, SpecParameter, SpecValue, ValueType } from './spec-types.js';

type Node = Record<string, unknown>;

/** Headers every call carries, set by the SDK (or the global `--request-id`/`--idempotency-key`). */
const COMMON_HEADERS = new Set(['x-request-id', 'idempotency-key']);
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
/** A body with more properties than this is given whole (`--file`), not field by field. */
const MAX_FIELD_OPTIONS = 10;

export function extractOperations(document: Node): SpecOperation[] {
  const resolveRef = (node: unknown): Node => {
    let current = node as Node;
    for (let depth = 0; typeof current?.$ref === 'string' && depth < 20; depth += 1) {
      const pointer = (current.$ref as string).replace(/^#\//, '').split('/');
      current = pointer.reduce<unknown>((at, key) => (at as Node)[key.replace(/~1/g, '/').replace(/~0/g, '~')], document) as Node;
    }
    return current ?? {};
  };

  const operations: SpecOperation[] = [];
  for (const [path, rawItem] of Object.entries(document.paths as Node)) {
    const item = resolveRef(rawItem);
    for (const method of METHODS) {
      const operation = item[method] as Node | undefined;
      if (!operation?.operationId) continue;
      const parameters = [...((item.parameters as unknown[]) ?? []), ...((operation.parameters as unknown[]) ?? [])]
        .map((parameter) => resolveRef(parameter))
        .filter((parameter) => !(parameter.in === 'header' && COMMON_HEADERS.has(String(parameter.name).toLowerCase())))
        .filter((parameter) => parameter.in !== 'cookie')
        .map((parameter): SpecParameter => ({
          name: String(parameter.name),
          in: parameter.in as SpecParameter['in'],
          ...valueOf(resolveRef(parameter.schema), Boolean(parameter.required), String(parameter.description ?? '')),
        }));
      const security = (operation.security ?? document.security ?? []) as Array<Record<string, unknown>>;
      operations.push({
        operationId: String(operation.operationId),
        method,
        path,
        tag: String((operation.tags as string[] | undefined)?.[0] ?? 'general'),
        summary: String(operation.summary ?? ''),
        description: leadOf(String(operation.description ?? '')),
        auth: security.length > 0 && security.every((requirement) => Object.keys(requirement).length > 0),
        parameters: parameters.map(({ name, in: location, required, type, enum: values, description }) => ({
          name,
          in: location,
          required,
          type,
          ...(values ? { enum: values } : {}),
          description,
        })),
        ...bodyOf(resolveRef(operation.requestBody), method),
        answer: answerOf(operation.responses as Node),
        paged: parameters.some((parameter) => parameter.in === 'query' && parameter.name === 'page'),
      });
    }
  }
  return operations;

  function valueOf(schema: Node, required: boolean, description: string): Omit<SpecValue, 'name'> {
    const merged = mergeAllOf(schema);
    const values = merged.enum ?? (merged.const !== undefined ? [merged.const] : undefined);
    return {
      required,
      type: typeOf(merged),
      ...(Array.isArray(values) ? { enum: values.filter((value) => value !== null).map(String) } : {}),
      description: firstSentence(description || String(merged.description ?? '')),
    };
  }

  function mergeAllOf(schema: Node): Node {
    const resolved = resolveRef(schema);
    if (!Array.isArray(resolved.allOf)) return resolved;
    const parts = resolved.allOf.map((part) => mergeAllOf(part as Node));
    return Object.assign({}, ...parts, {
      properties: Object.assign({}, ...parts.map((part) => part.properties ?? {}), resolved.properties ?? {}),
      required: parts.flatMap((part) => (part.required as string[] | undefined) ?? []).concat((resolved.required as string[] | undefined) ?? []),
    }) as Node;
  }

  function typeOf(schema: Node): ValueType {
    const types = ([] as unknown[]).concat(schema.type ?? []).filter((type) => type !== 'null');
    const type = types[0];
    if (type === 'integer' || type === 'number' || type === 'boolean') return type;
    if (type === undefined && Array.isArray(schema.enum) && schema.enum.every((value) => Number.isInteger(value))) return 'integer';
    return 'string';
  }

  function bodyOf(requestBody: Node, method: string): { body?: SpecBody } {
    const content = requestBody.content as Record<string, Node> | undefined;
    // fetch cannot send a body with GET; the contract's GET bodies are optional and ignored by the server.
    if (!content || method === 'get') return {};
    const [contentType, media] = Object.entries(content)[0]!;
    const schema = mergeAllOf(resolveRef(media.schema));
    const properties = Object.entries((schema.properties as Record<string, Node> | undefined) ?? {});
    const required = new Set((schema.required as string[] | undefined) ?? []);
    const fields =
      properties.length > MAX_FIELD_OPTIONS
        ? []
        : properties
            .map(([name, property]) => [name, mergeAllOf(property)] as const)
            .filter(([, property]) => !property.readOnly && isScalar(property))
            .map(([name, property]): SpecValue => ({ name, ...valueOf(property, required.has(name), String(property.description ?? '')) }))
            .map(({ name, required: isRequired, type, enum: values, description }) => ({
              name,
              required: isRequired,
              type,
              ...(values ? { enum: values } : {}),
              description,
            }));
    return { body: { contentType, required: Boolean(requestBody.required), fields } };
  }

  function isScalar(schema: Node): boolean {
    const types = ([] as unknown[]).concat(schema.type ?? []).filter((type) => type !== 'null');
    if (types.length === 0) return Array.isArray(schema.enum);
    return types.every((type) => type === 'string' || type === 'integer' || type === 'number' || type === 'boolean');
  }

  function answerOf(responses: Node): string {
    const success = resolveRef(responses['200'] ?? responses['201']);
    return Object.keys((success.content as Node | undefined) ?? {})[0] ?? 'application/json';
  }
}

/** The description up to its list of statuses (`- **201**: ...`), which `--help` does not repeat. */
function leadOf(description: string): string {
  const lines = description.split('\n');
  const end = lines.findIndex((line) => /^\s*- \*\*\d{3}\*\*/.test(line));
  return (end === -1 ? lines : lines.slice(0, end)).join('\n').trim();
}

function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const end = flat.search(/\.(\s|$)/);
  return (end === -1 ? flat : flat.slice(0, end + 1)).slice(0, 200);
}

export function render(operations: SpecOperation[]): string {
  return (
    '// Generated by `npm run generate` (cli/generate.ts) from spec/openapi.yaml. Do not edit.\n' +
    "import type { SpecOperation } from './spec-types.js';\n\n" +
    `export const SPEC_OPERATIONS: readonly SpecOperation[] = ${JSON.stringify(operations, null, 2)};\n`
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const { values } = parseArgs({ options: { spec: { type: 'string' }, output: { type: 'string' } } });
  const spec = resolve(values.spec ?? `${root}/sdk/openapi.json`);
  const output = resolve(values.output ?? `${root}/cli/spec-operations.ts`);
  const operations = extractOperations(parse(readFileSync(spec, 'utf8')) as Node);
  writeFileSync(output, render(operations));
  console.log(`wrote ${operations.length} operations to ${output}`);
}
