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
    const operation = this.document.paths[path]?.[method] as { parameters?: Array<Record<string, unknown>> } | undefined;
    const validators = new Map<string, ValidateFunction>();
    for (const declared of operation?.parameters ?? []) {
      const parameter = this.resolve(declared);
      if (parameter.in === 'query') validators.set(String(parameter.name), this.ajv.compile(parameter.schema as object));
    }
    return validators;
  }

  private resolve(node: Record<string, unknown>): Record<string, unknown> {
    const ref = node.$ref;
    if (typeof ref !== 'string') return node;
    return ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<Record<string, unknown>>((current, key) => current[key] as Record<string, unknown>, this.document);
  }
}
