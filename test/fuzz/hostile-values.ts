/**
 * Values no schema of the contract accepts, or that stress what sits before the schema (parsers, URL
 * decoding, the database): wrong types, huge strings, awkward Unicode, deep nesting, broken JSON.
 */
import fc from 'fast-check';

/** A string far above any maxLength of the contract, still under the 1 MiB body limit once in JSON. */
export const HUGE_LENGTH = 100_000;

/** Text that trips naive code: NUL and control characters, emoji, RTL marks, lone surrogates, SQL and path syntax. */
export const awkwardStrings: fc.Arbitrary<string> = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u0007\u001b[31m\r\n',
  '😀👍🏽👨‍👩‍👧',
  '\u202egnp.exe',
  '\ud800',
  '\udfff\ud800',
  'ﷺ'.repeat(50),
  'é'.normalize('NFD'),
  "' OR 1=1 --",
  '"; DROP TABLE users; --',
  '../../etc/passwd',
  '%00%2e%2e%2f',
  '{{7*7}}${7*7}',
  '<script>alert(1)</script>',
  'NaN',
  'Infinity',
  '-0',
  '1e309',
  '0x10',
  'null',
  'true',
  '[]',
  '{}',
);

export const hugeStrings: fc.Arbitrary<string> = fc
  .constantFrom('a', 'é', '😀', '\u0000', '9')
  .map((unit) => unit.repeat(unit.length === 2 ? HUGE_LENGTH / 2 : HUGE_LENGTH));

/**
 * Arrays or objects nested 1000 to 5000 levels deep (JSON.parse copes; recursive code may not). Kept as
 * text, written out by jsonText: JSON.stringify itself recurses, and runs out of stack at such depths.
 */
export class DeepNesting {
  constructor(
    readonly depth: number,
    readonly asObject: boolean,
  ) {}

  text(): string {
    return this.asObject ? `${'{"a":'.repeat(this.depth)}1${'}'.repeat(this.depth)}` : `${'['.repeat(this.depth)}1${']'.repeat(this.depth)}`;
  }
}

export const deepNesting: fc.Arbitrary<DeepNesting> = fc
  .record({ depth: fc.integer({ min: 1000, max: 5000 }), asObject: fc.boolean() })
  .map(({ depth, asObject }) => new DeepNesting(depth, asObject));

/** JSON.stringify, except that DeepNesting values are written out as their text. */
export function jsonText(value: unknown): string {
  if (value instanceof DeepNesting) return value.text();
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.entries(value).map(([key, field]) => `${JSON.stringify(key)}:${jsonText(field)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const awkwardNumbers: fc.Arbitrary<number> = fc.constantFrom(0, -1, -0, 0.5, 1e308, -1e308, 2 ** 53 + 1, 2 ** 31, -(2 ** 31) - 1, Number.MIN_VALUE);

/** Any value of the wrong kind for some field: the body fuzzer puts these where a valid value was. */
export const hostileValues: fc.Arbitrary<unknown> = fc.oneof(
  awkwardStrings,
  awkwardNumbers,
  fc.constantFrom(null, true, false, [], {}),
  fc.jsonValue({ maxDepth: 3 }),
  { arbitrary: hugeStrings, weight: 1 },
  { arbitrary: deepNesting, weight: 1 },
);

/** Strings for a query, path or header parameter that break its type or bounds. */
export const hostileParameterStrings: fc.Arbitrary<string> = fc.oneof(
  awkwardStrings,
  awkwardNumbers.map(String),
  fc.constantFrom('abc', '1.5', '1,2', ' 1', '1 ', '+1', '00001', '99999999999999999999999', '%', '%zz', '%E0%A4%A', '%C0%AF', '%FF'),
  fc.string({ maxLength: 20, unit: 'binary' }),
  fc.constantFrom('x'.repeat(3000), '9'.repeat(3000)),
);

/** JSON text that does not parse, or parses into something surprising. */
export const brokenJson = (validJson: string): fc.Arbitrary<string> =>
  fc.oneof(
    // Cut anywhere: a truncated upload.
    fc.integer({ min: 0, max: Math.max(0, validJson.length - 1) }).map((end) => validJson.slice(0, end)),
    fc.constantFrom('{', '{"a":', '{"a" 1}', "{'a': 1}", '{"a": 1,}', '[1, 2', 'undefined', 'NaN', '\u0000', '\ufeff{}', '{"__proto__": {"admin": true}}', '{"constructor": {"prototype": {"x": 1}}}', '{"a": 1, "a": 2}', '"just a string"', '12345678901234567890123', '{"a":"\\ud800"}', '{"a":"\\u0000"}'),
  );

/** Content-Type values an operation does not take, or that are malformed. */
export const wrongContentTypes: fc.Arbitrary<string> = fc.constantFrom(
  'text/plain',
  'application/xml',
  'multipart/form-data',
  'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded',
  'application/json; charset=utf-16',
  'application/json; charset=klingon',
  'application/octet-stream',
  'application/json-patch+json',
  'application/',
  ';;;',
  'text/html; charset=latin1',
);
