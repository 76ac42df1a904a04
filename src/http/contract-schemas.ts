/**
 * JSON Schema validators compiled straight from the contract (OpenAPI 3.1 schemas are JSON Schema
 * 2020-12), for code that checks data outside express-openapi-validator: the municipality list's fast
 * path checks its query and its rendered pages with these, so the spec stays the single source.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { OpenApiDocument } from './contract.js';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export class ContractSchemas {
  private readonly ajv: Ajv2020;

  constructor(private readonly document: OpenApiDocument) {
    // strict: false because the schemas carry OpenAPI annotations (example, readOnly, x-...).
    this.ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
    this.ajv.addSchema({ $id: 'contract', components: document.components }, 'contract');
  }

  /** A validator for `#/components/schemas/<name>`. */
  component(name: string): ValidateFunction {
    return this.ajv.compile({ $ref: `contract#/components/schemas/${name}` });
  }

  /** Validators for the query parameters an operation declares, by name. */
  queryParameters(path: string, method: string): Map<string, ValidateFunction> {
    const validators = new Map<string, ValidateFunction>();
    for (const parameter of this.parameters(path, method)) {
      if (parameter.in === 'query') validators.set(parameter.name, parameter.validate);
    }
    return validators;
  }

  /** The parameters an operation declares (those of its path item too), each with its schema resolved and compiled. */
  parameters(path: string, method: string): DeclaredParameter[] {
    const pathItem = this.document.paths[path] as { parameters?: Array<Record<string, unknown>> } | undefined;
    const operation = pathItem?.[method as 'parameters'] as { parameters?: Array<Record<string, unknown>> } | undefined;
    return [...(pathItem?.parameters ?? []), ...(operation?.parameters ?? [])].map((declared) => {
      const parameter = this.resolve(declared);
      const schema = parameter.schema as Record<string, unknown> | undefined;
      return {
        ...parameter,
        name: String(parameter.name),
        in: String(parameter.in),
        required: parameter.required === true,
        schema: schema ? this.resolve(schema) : undefined,
        // A `#/...` reference inside the schema points into the contract, registered here as `contract`.
        validate: this.ajv.compile(schema ? (inContract(schema) as object) : {}),
      };
    });
  }

  /** A node of the contract, through its `$ref` if it is one. */
  private resolve(node: Record<string, unknown>): Record<string, unknown> {
    const ref = node.$ref;
    if (typeof ref !== 'string') return node;
    return ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<Record<string, unknown>>((current, key) => current[key] as Record<string, unknown>, this.document);
  }
}

export interface DeclaredParameter extends Record<string, unknown> {
  name: string;
  in: string;
  required: boolean;
  /** The parameter's schema, through its `$ref` if it is one. */
  schema?: Record<string, unknown>;
  validate: ValidateFunction;
}

/** A schema whose local references (`#/components/...`) point into the registered contract. */
function inContract(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(inContract);
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? `contract${value}` : inContract(value)]),
  );
}
