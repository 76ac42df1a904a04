/**
 * The shape of cli/spec-operations.ts: what the CLI needs to know of each operation of the contract to
 * offer it as a command (method, path, parameters, body, answer), extracted from spec/openapi.yaml by
 * cli/generate.ts.
 */

export type ValueType = 'string' | 'integer' | 'number' | 'boolean';

export interface SpecValue {
  /** The name as the API spells it (`codigo_uf`, `hub.mode`, `X-Hub-Signature-256`). */
  name: string;
  required: boolean;
  type: ValueType;
  /** Allowed values, as strings. */
  enum?: readonly string[];
  /** The first sentence of its description. */
  description: string;
}

export interface SpecParameter extends SpecValue {
  in: 'path' | 'query' | 'header';
}

export interface SpecBody {
  contentType: string;
  required: boolean;
  /**
   * Top-level scalar fields, offered as options, when the body is a small object; empty for a large
   * one (`addEntity`), which is given whole with `--file`/`--data`.
   */
  fields: readonly SpecValue[];
}

export interface SpecOperation {
  operationId: string;
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  tag: string;
  summary: string;
  /** The operation's description up to its list of statuses. */
  description: string;
  /** Whether the operation needs an API key (`security: [{ ApiKeyAuth: [] }]`). */
  auth: boolean;
  /** Parameters other than the ones every call carries (X-Request-Id, Idempotency-Key). */
  parameters: readonly SpecParameter[];
  body?: SpecBody;
  /** The media type of the 200/201 answer: `application/json`, `text/html`, `application/yaml`... */
  answer: string;
  /** The list is paginated (`page`, `links.next`, `total_pages`). */
  paged: boolean;
}
