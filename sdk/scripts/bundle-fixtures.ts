/**
 * sdk/msw-fixtures.json: the demo data of fixtures/ that the stateful msw handlers (sdk/mock/)
 * start from, copied into sdk/ so the SDK package carries it (its build takes files of sdk/ only).
 * `npm run generate` writes it (with the other generated files); test/msw-stateful.test.ts checks it is fresh.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const fixture = (name: string): unknown => JSON.parse(readFileSync(fileURLToPath(new URL(`../../fixtures/${name}.json`, import.meta.url)), 'utf8'));

export const mswFixturesPath = fileURLToPath(new URL('../msw-fixtures.json', import.meta.url));

/** The file's expected text. */
export function mswFixturesText(): string {
  const data = {
    '//': 'Generated from fixtures/ by `npm run generate`; do not edit by hand.',
    users: fixture('users'),
    entities: fixture('entities'),
    monitors: fixture('monitors'),
    research: fixture('research'),
    sms: fixture('sms'),
    elections: fixture('elections'),
  };
  return `${JSON.stringify(data, null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) writeFileSync(mswFixturesPath, mswFixturesText());
