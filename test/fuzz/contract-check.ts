/**
 * Sends a fuzzed request and checks its answer against the contract: never a 500 (nor any 5xx the
 * operation does not declare), never a hang, every error in the error model carrying the response's
 * request id, every success in the schema the operation declares for its status.
 */
import http from 'node:http';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FuzzRequest, Operation } from './requests.js';
import { preview } from './requests.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** No request may take longer than this: past it the server hangs, as far as the property goes. */
export const REQUEST_TIMEOUT_MS = 10_000;

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/**
 * node:http rather than fetch: fetch refuses a body on GET, and two operations of the contract declare
 * one. The request is aborted after REQUEST_TIMEOUT_MS, which fails the property.
 */
export function send(baseUrl: string, request: FuzzRequest, authorization: string | undefined): Promise<Answer> {
  const headers: Record<string, string> = { ...request.headers };
  if (authorization !== undefined) headers.Authorization = authorization;
  if (request.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(request.body));
  return new Promise((resolve, reject) => {
    const outgoing = http.request(`${baseUrl}${request.target}`, { method: request.method, headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, text: Buffer.concat(chunks).toString('utf8') }));
      incoming.on('error', reject);
    });
    outgoing.on('error', (error) => reject(error.name === 'AbortError' ? new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms (a hang)`) : error));
    outgoing.end(request.body);
  });
}

/** Validators of the contract's schemas, by JSON pointer into the spec (OpenAPI 3.1 schemas are JSON Schema 2020-12). */
export class ContractValidators {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly spec: Record<string, unknown>) {
    // strict: false because the schemas carry OpenAPI annotations (example, readOnly, x-...).
    this.ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
    this.ajv.addSchema({ $id: 'contract', components: spec.components, paths: spec.paths }, 'contract');
  }

  at(pointer: string): ValidateFunction {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `contract${pointer}` });
      this.compiled.set(pointer, validate);
    }
    return validate;
  }

  /** The JSON pointer of an operation's response (following a `$ref` to components/responses), or undefined if undeclared. */
  responsePointer(operation: Operation, status: string): { pointer: string; node: Record<string, unknown> } | undefined {
    const responses = operation.node.responses as Record<string, Record<string, unknown>>;
    const declared = responses[status];
    if (!declared) return undefined;
    if (typeof declared.$ref === 'string') {
      const name = declared.$ref.split('/').pop()!;
      return { pointer: declared.$ref.slice(1), node: (this.spec.components as { responses: Record<string, Record<string, unknown>> }).responses[name]! };
    }
    const escape = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1');
    return { pointer: `/paths/${escape(operation.template)}/${operation.method.toLowerCase()}/responses/${status}`, node: declared };
  }
}

/** Contract violations of one answer; empty when it is fine. */
export function violations(validators: ContractValidators, operation: Operation, request: FuzzRequest, answer: Answer): string[] {
  const problems: string[] = [];
  const headerId = answer.headers['x-request-id'];
  if (typeof headerId !== 'string' || headerId === '') problems.push('no X-Request-Id response header');
  const sentId = request.headers['X-Request-Id'];
  if (sentId !== undefined && /^[\x21-\x7E]{1,128}$/.test(sentId) && headerId !== sentId) problems.push(`X-Request-Id ${headerId} is not the one sent (${sentId})`);

  if (answer.status >= 500 && !(answer.status === 503 && validators.responsePointer(operation, '503'))) {
    problems.push(`answered ${answer.status}`);
  }
  if (answer.status >= 400) problems.push(...errorModelViolations(validators, answer, headerId));
  else problems.push(...successViolations(validators, operation, answer, headerId));
  return problems;
}

function errorModelViolations(validators: ContractValidators, answer: Answer, headerId: unknown): string[] {
  const body = parseJson(answer);
  if (body === undefined) return [`error body is not JSON (${answer.headers['content-type']}): ${preview(answer.text)}`];
  const validate = validators.at('#/components/schemas/ErrorResponse');
  const problems: string[] = [];
  if (!validate(body)) problems.push(`error body breaks ErrorResponse: ${describeErrors(validate)}`);
  const replayed = answer.headers['idempotent-replayed'] === 'true'; // the first answer, with its request id
  if (!replayed && (body as { request_id?: unknown }).request_id !== headerId) problems.push(`error body request_id ${(body as { request_id?: unknown }).request_id} differs from the header ${headerId}`);
  return problems;
}

function successViolations(validators: ContractValidators, operation: Operation, answer: Answer, headerId: unknown): string[] {
  const declared = validators.responsePointer(operation, String(answer.status));
  if (!declared) return [`status ${answer.status} is not declared by ${operation.operationId}`];
  const content = declared.node.content as Record<string, unknown> | undefined;
  if (!content) return answer.text === '' ? [] : [`status ${answer.status} declares no body, got ${preview(answer.text)}`];
  const mediaType = String(answer.headers['content-type'] ?? '').split(';')[0]!.trim();
  if (!(mediaType in content)) return [`Content-Type ${mediaType} is not one of ${Object.keys(content).join(', ')}`];
  if (mediaType !== 'application/json') return [];
  const body = parseJson(answer);
  if (body === undefined) return [`success body is not JSON: ${preview(answer.text)}`];
  const escaped = mediaType.replace(/\//g, '~1');
  const validate = validators.at(`#${declared.pointer}/content/${escaped}/schema`);
  const problems: string[] = [];
  if (!validate(body)) problems.push(`${answer.status} body breaks its schema: ${describeErrors(validate)}`);
  // A replay (same Idempotency-Key and body) is the first answer byte for byte, with that request's id.
  const replayed = answer.headers['idempotent-replayed'] === 'true';
  const bodyId = (body as { request_id?: unknown } | null)?.request_id;
  if (!replayed && bodyId !== undefined && bodyId !== headerId) problems.push(`body request_id ${bodyId} differs from the header ${headerId}`);
  return problems;
}

function parseJson(answer: Answer): unknown {
  if (!String(answer.headers['content-type'] ?? '').startsWith('application/json')) return undefined;
  try {
    return JSON.parse(answer.text);
  } catch {
    return undefined;
  }
}

const describeErrors = (validate: ValidateFunction) =>
  (validate.errors ?? []).slice(0, 5).map((error) => `${error.instancePath || '/'} ${error.message}`).join('; ');
