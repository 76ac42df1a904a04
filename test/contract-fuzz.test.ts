/**
 * Fuzzing the contract (issue 9): every operation of spec/openapi.yaml receives requests generated from
 * its own schemas, valid and mutated (wrong types, missing fields, huge strings, Unicode, deep nesting,
 * wrong content types, broken JSON, bad path and query values, odd headers), anonymous and from users and
 * admins, against the real app on demo data. The property: no 500 (nor a 5xx the operation does not
 * declare), no hang, every error in the error model with the response's request id, every success as the
 * contract declares it.
 *
 * `npm test` runs FUZZ_RUNS (default below) requests per operation; `npm run fuzz` runs many more.
 * A failure prints its seed: `FUZZ_SEED=<seed> npx vitest run test/contract-fuzz.test.ts` replays it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoData } from '../src/demo/seed.js';
import { startTestApp, testAccountSettings, TEST_SECRETS_KEY, type TestApp } from './helpers/app.js';
import { loadSpec } from './helpers/spec.js';
import { ContractValidators, REQUEST_TIMEOUT_MS, send, violations } from './fuzz/contract-check.js';
import { operationsOf, preview, RequestArbitraries, type Caller, type FuzzRequest, type Operation } from './fuzz/requests.js';

/** Requests per operation: 80 for the 54 operations take about 40 s on an idle 2-core machine, per database. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 80);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

const spec = loadSpec() as Record<string, unknown>;
const pathsFolder = fileURLToPath(new URL('../spec/paths/', import.meta.url));
const operations = operationsOf(spec);
const arbitraries = new RequestArbitraries(spec);
const validators = new ContractValidators(spec);

let app: TestApp;
let adminId: number;
let userId: number;
const keys: Partial<Record<Caller, string>> = {};

beforeAll(async () => {
  app = await startTestApp({ withMunicipalities: true, withJobs: true });
  // The demo data gives the fuzzer records to find: small ids hit real entities, monitors and users.
  const report = await seedDemoData({ ...app, municipalities: app.catalog }, { passwordHashCost: testAccountSettings.passwordHashCost, secretsKey: TEST_SECRETS_KEY });
  const userIds = Object.fromEntries(report.entries.filter((entry) => entry.kind === 'user').map((entry) => [entry.name, entry.id!]));
  adminId = userIds['ana.souza']!;
  userId = userIds['carlos.pereira']!;
  keys.admin = (await app.accounts.tokens.issue(adminId)).key;
  keys.user = (await app.accounts.tokens.issue(userId)).key;
}, 120_000);

afterAll(async () => {
  await app?.close();
});

/**
 * Some operations end sessions or accounts (revokeMySession, changePassword, endUserSessions,
 * deactivateUser): after each operation's runs the two callers are active again with fresh keys, so the
 * next operation is fuzzed as them, not answered 401 throughout.
 */
afterEach(async () => {
  for (const id of [adminId, userId]) await app.accounts.users.setActive(id, true);
  keys.admin = (await app.accounts.tokens.issue(adminId)).key;
  keys.user = (await app.accounts.tokens.issue(userId)).key;
});

/** The Authorization header of a caller. logout revokes the key it is sent with, so it gets a fresh one. */
async function authorizationOf(caller: Caller, operation: Operation): Promise<string | undefined> {
  const keyOf = async (role: 'admin' | 'user') =>
    operation.operationId === 'logout' ? (await app.accounts.tokens.issue(role === 'admin' ? adminId : userId)).key : keys[role]!;
  switch (caller) {
    case 'anonymous':
      return undefined;
    case 'user':
      return `Token ${await keyOf('user')}`;
    case 'admin':
      return `Token ${await keyOf('admin')}`;
    case 'adminBearer':
      return `bearer ${await keyOf('admin')}`;
    case 'bogusKey':
      return 'Token plq_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    case 'malformedHeader':
      return 'Basic dXNlcjpwYXNz';
  }
}

/** What failed, short enough to read: huge bodies and values are summarised. */
function describeRequest(request: FuzzRequest): string {
  return [
    `${request.method} ${preview(request.target)} as ${request.caller}`,
    `mutation: ${request.mutation}`,
    `headers: ${preview(request.headers)}`,
    request.body === undefined ? 'no body' : `body: ${preview(request.body)}`,
  ].join('\n  ');
}

describe.each(operations.map((operation) => [operation.operationId, operation] as const))('%s', (_operationId, operation) => {
  it(`${operation.method} ${operation.template} keeps the contract for any request`, async () => {
    const property = fc.asyncProperty(arbitraries.for(operation), async (request) => {
      const answer = await send(app.baseUrl, request, await authorizationOf(request.caller, operation));
      const problems = violations(validators, operation, request, answer);
      if (problems.length > 0) {
        throw new Error(`${problems.join('\n')}\n  ${describeRequest(request)}\n  answer: ${answer.status} ${preview(answer.text)}`);
      }
    });
    const details = await fc.check(property, { numRuns: RUNS, seed: SEED, endOnFailure: true });
    // The report carries the seed to replay and the request, not fast-check's dump of a 1 MiB body.
    expect(details.failed, details.failed ? `seed ${details.seed}: ${String((details.errorInstance as Error)?.message ?? details.errorInstance)}` : '').toBe(false);
    expect(details.numRuns).toBe(RUNS);
  }, RUNS * REQUEST_TIMEOUT_MS);
});

it('fuzzes every operation of the contract', () => {
  // Read from the YAML text of the path files rather than the parsed paths, so an operation operationsOf skipped shows up.
  const pathFiles = readdirSync(pathsFolder, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.yaml'));
  const declared = pathFiles.flatMap((file) => [...readFileSync(join(pathsFolder, file), 'utf8').matchAll(/^ {2}operationId: (\w+)$/gm)].map((found) => found[1]));
  expect(operations.map((operation) => operation.operationId).sort()).toEqual(declared.sort());
  expect(operations.length).toBeGreaterThan(50);
});
