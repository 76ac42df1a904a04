/**
 * Turns the contract's schemas (OpenAPI 3.1, i.e. JSON Schema 2020-12 with local `$ref`s) into fast-check
 * arbitraries of values the schema accepts. No maintained library does this for 3.1 with `$ref`s
 * (json-schema-fast-check is archived and covers a draft-4 subset without references), so this covers
 * exactly what spec/openapi.yaml uses: $ref, allOf (merged), oneOf/anyOf, const, enum, type lists
 * (nullable), string bounds/pattern/format, numeric bounds, items/minItems/maxItems/uniqueItems,
 * properties/required. readOnly properties are left out of requests (the validator refuses them).
 *
 * "Valid" is best effort: oneOf exclusivity and cross-field business rules are not modelled, so some
 * generated values are refused with a 4xx. That is fine for the fuzzer, whose property holds for any input.
 */
import fc from 'fast-check';
import { tryResolvePointer } from '../helpers/spec.js';

export type Schema = Record<string, unknown>;

/** Longest string or array the generators produce when the schema sets no smaller bound. */
const MAX_GENERATED_LENGTH = 40;
const MAX_GENERATED_ITEMS = 4;

export class SchemaArbitraries {
  private readonly cache = new Map<string, fc.Arbitrary<unknown>>();

  constructor(private readonly spec: unknown) {}

  /** Follows `$ref`s and merges `allOf` into one schema, so the rest only sees plain keywords. */
  resolve(schema: Schema | undefined): Schema {
    if (!schema) return {};
    if (typeof schema.$ref === 'string') {
      const target = tryResolvePointer(this.spec, schema.$ref);
      if (!target) throw new Error(`Unresolvable $ref ${schema.$ref}`);
      const { $ref: _ref, ...siblings } = schema;
      return this.resolve({ ...(target as Schema), ...siblings });
    }
    if (Array.isArray(schema.allOf)) {
      const { allOf, ...rest } = schema;
      return (allOf as Schema[]).map((part) => this.resolve(part)).reduce(mergeSchemas, rest);
    }
    return schema;
  }

  /** Values the schema accepts. */
  valid(schema: Schema | undefined, forRequest = true): fc.Arbitrary<unknown> {
    const key = JSON.stringify([schema, forRequest]);
    let arbitrary = this.cache.get(key);
    if (!arbitrary) {
      arbitrary = this.build(this.resolve(schema), forRequest);
      this.cache.set(key, arbitrary);
    }
    return arbitrary;
  }

  private build(schema: Schema, forRequest: boolean): fc.Arbitrary<unknown> {
    if ('const' in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
    const choices = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
    if (choices) return fc.oneof(...choices.map((choice) => this.valid(mergeSchemas(withoutChoices(schema), this.resolve(choice)), forRequest)));
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : schema.type ? [schema.type as string] : inferTypes(schema);
    if (types.length === 0) return fc.jsonValue({ maxDepth: 2 }); // an unconstrained schema takes any JSON
    return fc.oneof(...types.map((type) => this.ofType(type, schema, forRequest)));
  }

  private ofType(type: string, schema: Schema, forRequest: boolean): fc.Arbitrary<unknown> {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return integers(schema);
      case 'number':
        return fc.oneof(integers(schema), fc.double({ min: num(schema.minimum, -1e9), max: num(schema.maximum, 1e9), noNaN: true, noDefaultInfinity: true }));
      case 'string':
        return strings(schema);
      case 'array':
        return this.arrays(schema, forRequest);
      case 'object':
        return this.objects(schema, forRequest);
      default:
        throw new Error(`Unsupported schema type ${type}`);
    }
  }

  private arrays(schema: Schema, forRequest: boolean): fc.Arbitrary<unknown> {
    const items = this.valid(schema.items as Schema | undefined, forRequest);
    const minLength = num(schema.minItems, 0);
    const maxLength = Math.max(minLength, Math.min(num(schema.maxItems, MAX_GENERATED_ITEMS), MAX_GENERATED_ITEMS));
    return schema.uniqueItems
      ? fc.uniqueArray(items, { minLength, maxLength, selector: (item) => JSON.stringify(item) })
      : fc.array(items, { minLength, maxLength });
  }

  private objects(schema: Schema, forRequest: boolean): fc.Arbitrary<unknown> {
    const required = new Set((schema.required as string[] | undefined) ?? []);
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, propertySchema] of Object.entries((schema.properties as Record<string, Schema> | undefined) ?? {})) {
      const property = this.resolve(propertySchema);
      if (forRequest ? property.readOnly : property.writeOnly) continue;
      model[name] = this.valid(propertySchema, forRequest);
    }
    return fc.record(model, { requiredKeys: Object.keys(model).filter((name) => required.has(name)) });
  }
}

/** allOf: properties and required lists add up; for any other keyword the later part wins. */
function mergeSchemas(into: Schema, part: Schema): Schema {
  const merged: Schema = { ...into, ...part };
  if (into.properties || part.properties) merged.properties = { ...(into.properties as object), ...(part.properties as object) };
  if (into.required || part.required) merged.required = [...((into.required as string[]) ?? []), ...((part.required as string[]) ?? [])];
  return merged;
}

function withoutChoices(schema: Schema): Schema {
  const { oneOf: _oneOf, anyOf: _anyOf, ...rest } = schema;
  return rest;
}

function inferTypes(schema: Schema): string[] {
  if (schema.properties || schema.required) return ['object'];
  if (schema.items) return ['array'];
  return [];
}

const num = (value: unknown, fallback: number) => (typeof value === 'number' ? value : fallback);

/** Small values most of the time (they hit the records that exist), the whole range sometimes. */
function integers(schema: Schema): fc.Arbitrary<number> {
  const min = num(schema.minimum, -(2 ** 31));
  const max = num(schema.maximum, 2 ** 31 - 1);
  const low = Math.max(min, Math.min(0, max));
  return fc.oneof({ arbitrary: fc.integer({ min: low, max: Math.min(max, low + 30) }), weight: 3 }, { arbitrary: fc.integer({ min, max }), weight: 1 });
}

/** Length in code points, as JSON Schema counts it. */
const codePoints = (text: string) => [...text].length;

function strings(schema: Schema): fc.Arbitrary<string> {
  const minLength = num(schema.minLength, 0);
  const maxLength = num(schema.maxLength, Number.MAX_SAFE_INTEGER);
  const fits = (text: string) => codePoints(text) >= minLength && codePoints(text) <= maxLength;
  const formatted = byFormat(schema.format);
  if (formatted) return formatted.filter(fits);
  if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern, 'u')).filter(fits);
  const generatedMax = Math.max(minLength, Math.min(maxLength, MAX_GENERATED_LENGTH));
  // Mostly ASCII, sometimes any Unicode (accents, emoji, astral planes), as real users type.
  return fc.oneof(
    { arbitrary: fc.string({ minLength, maxLength: generatedMax }), weight: 3 },
    { arbitrary: fc.string({ minLength, maxLength: generatedMax, unit: 'binary' }), weight: 1 },
  ).filter(fits);
}

function byFormat(format: unknown): fc.Arbitrary<string> | undefined {
  switch (format) {
    case 'email':
      return fc.emailAddress();
    case 'uri':
      return fc.webUrl({ withQueryParameters: true, withFragments: true });
    case 'uuid':
      return fc.uuid();
    case 'date-time':
      return fc.date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((date) => date.toISOString());
    case 'date':
      return fc.date({ min: new Date('1900-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((date) => date.toISOString().slice(0, 10));
    default:
      return undefined;
  }
}
