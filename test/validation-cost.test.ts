/**
 * Refusing a body costs time linear in its size, with a small constant, whatever its shape (issue 41,
 * section 1): the bodies that took the server 16 s and answered 488 KB to 7.5 MB are refused in a
 * fraction of a second, with at most 20 details and a message counting the rest. Through the real app
 * and the contract validator, on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 *
 * Timings: each operation is warmed up first (the validator compiles an operation's schemas on its first
 * request), then every body must be refused in under 1 s. On a quiet machine they take 5 to 30 ms; the
 * issue's own bound (0.25 s) is the bench's refusal rows' to measure (docs/benchmarks.md): on CI's loaded
 * cores one refusal here took 356 ms. A return of the 16 s bodies still fails this test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { defaultAppConfig, startTestApp, type TestApp } from './helpers/app.js';
import { expectError, type Result } from './helpers/http.js';
import { FULLY_CHECKED_BODY_VALUES, JSON_BODY_LIMITS } from '../src/http/validation.js';

const REFUSED_WITHIN_MS = 1_000;
const ANSWER_AT_MOST_BYTES = 16 * 1024;
const BODY_LIMIT = defaultAppConfig.bodyLimit;

/** `count` wrong items (strings where objects are due), as in the issue. */
const wrongItems = (count: number) => Array.from({ length: count }, (_, index) => `x${index}`);

describe('refusing a body costs time linear in its size (issue 41)', () => {
  let app: TestApp;
  let owner: TestUser;
  let admin: TestUser;

  /** Sends a raw JSON text and times the answer. */
  async function send(path: string, text: string, headers: Record<string, string> = {}): Promise<Result & { ms: number; bytes: number }> {
    expect(Buffer.byteLength(text), 'the body stays within BODY_LIMIT').toBeLessThan(BODY_LIMIT);
    const started = performance.now();
    const response = await fetch(app.baseUrl + path, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: text });
    const answer = await response.text();
    const ms = performance.now() - started;
    return { status: response.status, headers: response.headers, text: answer, body: JSON.parse(answer), ms, bytes: Buffer.byteLength(answer) };
  }

  /** Refused quickly in the error model, small, with at most 20 details. */
  function expectCheapRefusal(result: Awaited<ReturnType<typeof send>>, status: number, code: string): void {
    expectError(result, status, code);
    expect(result.bytes).toBeLessThan(ANSWER_AT_MOST_BYTES);
    expect(result.body.error.details.length).toBeLessThanOrEqual(20);
    expect(result.ms, `refused in ${Math.round(result.ms)} ms`).toBeLessThan(REFUSED_WITHIN_MS);
  }

  const operations = () => [
    { name: 'receiveSocialnetEvents (no key)', path: '/api/webhook/socialnet/', headers: {}, body: (items: unknown[]) => ({ object: 'page', entry: items }), field: 'entry', maxItems: 1000 },
    { name: 'createSocialMonitor', path: '/api/monitor_social/add_monitor/', headers: owner.headers, body: (items: unknown[]) => ({ entity_id: 1, name: 'Monitor', profiles: items }), field: 'profiles', maxItems: 50 },
    { name: 'importMonitorMetrics', path: '/api/monitor_social/import_metrics/', headers: admin.headers, body: (items: unknown[]) => ({ monitor_id: 1, snapshots: items }), field: 'snapshots', maxItems: 1000 },
  ];

  beforeAll(async () => {
    app = await startTestApp({ config: { socialnet: { ...defaultAppConfig.socialnet, appSecret: 'app-secret-of-the-social-network-0123' } } });
    [owner, admin] = await Promise.all([createUser(app), createAdmin(app)]);
    // The validator compiles an operation's schemas on its first request, for each of its two checks.
    for (const operation of operations()) {
      for (const count of [3, FULLY_CHECKED_BODY_VALUES + 10]) await send(operation.path, JSON.stringify(operation.body(wrongItems(count))), operation.headers);
    }
    await send('/api/auth/signup/', JSON.stringify({ username: 'a', email: 'a@exemplo.com.br', password: 'x'.repeat(20), nome: 'x' }));
  }, 180_000); // building the validators: seconds of CPU, many more on a loaded machine

  afterAll(async () => {
    await app?.close();
  });

  it.each([0, 1, 2])('refuses 5,000 wrong items at once, by maxItems alone (operation %i of 3)', async (index) => {
    const operation = operations()[index]!;
    const result = await send(operation.path, JSON.stringify(operation.body(wrongItems(5_000))), operation.headers);
    expectCheapRefusal(result, 422, 'validation_failed');
    expect(result.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: operation.field, rule: 'maxItems' })]);
    expect(result.body.error.message).toMatch(/checked up to its first problem/);
  });

  it.each([0, 1, 2])('refuses the worst arrays within BODY_LIMIT as cheaply (operation %i of 3)', async (index) => {
    const operation = operations()[index]!;
    // The shortest wrong item, as many as the limit takes: refused before parsing.
    const filling = Array.from({ length: Math.floor((BODY_LIMIT - 200) / 2) }, () => 0);
    const unread = await send(operation.path, JSON.stringify(operation.body(filling)), operation.headers);
    expectCheapRefusal(unread, 413, 'payload_too_large');
    expect(unread.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: '', rule: 'max_values' })]);
    // As many as JSON_BODY_LIMITS lets through: refused by maxItems alone.
    const most = Array.from({ length: JSON_BODY_LIMITS.values - 10 }, () => 0);
    const refused = await send(operation.path, JSON.stringify(operation.body(most)), operation.headers);
    expectCheapRefusal(refused, 422, 'validation_failed');
    expect(refused.body.error.details).toEqual([expect.objectContaining({ field: operation.field, rule: 'maxItems' })]);
  });

  it('lists 20 details of a body with many problems, and counts the others in the message', async () => {
    const operation = operations()[0]!;
    const result = await send(operation.path, JSON.stringify(operation.body(wrongItems(1_000))));
    expectCheapRefusal(result, 422, 'validation_failed');
    expect(result.body.error.details).toHaveLength(20);
    expect(result.body.error.details[0]).toMatchObject({ location: 'body', field: 'entry.0', rule: 'type' });
    expect(result.body.error.message).toBe('The request body is invalid. 980 more problems are not listed.');
  });

  it('checks no item of an array beyond its maxItems, even in a small body', async () => {
    const operation = operations()[1]!;
    const result = await send(operation.path, JSON.stringify(operation.body(wrongItems(operation.maxItems + 1))), operation.headers);
    expectCheapRefusal(result, 422, 'validation_failed');
    expect(result.body.error.details).toEqual([expect.objectContaining({ field: 'profiles', rule: 'maxItems' })]);
    expect(result.body.error.message).toBe('The request body is invalid.');
  });

  it('still names every problem of a small body, items within maxItems included', async () => {
    const result = await send('/api/monitor_social/add_monitor/', JSON.stringify({ entity_id: 0, name: '', profiles: ['x', { nm_rede: 'instagram', nome: 'y' }] }), owner.headers);
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details.map((detail: { field: string; rule: string }) => `${detail.field} ${detail.rule}`).sort()).toEqual(
      ['entity_id minimum', 'name minLength', 'profiles.0 type', 'profiles.1.nome additionalProperties'].sort(),
    );
  });

  it('refuses signUp with 60,000 unknown keys before parsing them', async () => {
    const body: Record<string, unknown> = { username: 'ana', email: 'ana@exemplo.com.br', password: 'uma senha longa o bastante' };
    for (let index = 0; index < 60_000; index += 1) body[`campo${index}`] = 'x';
    const result = await send('/api/auth/signup/', JSON.stringify(body));
    expectCheapRefusal(result, 413, 'payload_too_large');
    expect(result.body.error.details).toEqual([{ location: 'body', field: '', rule: 'max_members', message: `an object must not hold more than ${JSON_BODY_LIMITS.membersPerObject} members` }]);
  });

  it('lists 20 of 60 unknown keys and counts the rest', async () => {
    const body: Record<string, unknown> = { username: 'ana', email: 'ana@exemplo.com.br', password: 'uma senha longa o bastante' };
    for (let index = 0; index < 60; index += 1) body[`campo${index}`] = 'x';
    const result = await send('/api/auth/signup/', JSON.stringify(body));
    expectCheapRefusal(result, 422, 'validation_failed');
    expect(result.body.error.details).toHaveLength(20);
    expect(result.body.error.details[0]).toEqual({ location: 'body', field: 'campo0', rule: 'additionalProperties', message: 'must NOT have additional properties', value: 'x' });
    expect(result.body.error.message).toBe('The request body is invalid. 40 more problems are not listed.');
  });

  it.each([
    ['nested 400,000 deep', `{"object":"page","entry":${'['.repeat(400_000)}${']'.repeat(400_000)}}`, 'max_depth'],
    ['300,000 empty objects', JSON.stringify({ object: 'page', entry: Array(300_000).fill({}) }), 'max_containers'],
    ['objects of new member names', JSON.stringify({ object: 'page', entry: Array.from({ length: 2_000 }, (_, index) => ({ id: '1', time: 1, [`n${index}`]: 0 })) }), 'max_member_names'],
    ['20,000 different short texts', JSON.stringify({ object: 'page', entry: wrongItems(20_000) }), 'max_short_texts'],
    ['an object of 65 members', JSON.stringify({ object: 'page', entry: [], ...Object.fromEntries(Array.from({ length: 63 }, (_, index) => [`campo${index}`, 0])) }), 'max_members'],
  ])('refuses a body %s before parsing it', async (_shape, text, rule) => {
    const result = await send('/api/webhook/socialnet/', text);
    expectCheapRefusal(result, 413, 'payload_too_large');
    expect(result.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: '', rule })]);
  });

  it('echoes a value cut to 200 characters', async () => {
    const result = await send('/api/auth/signup/', JSON.stringify({ username: 'ana', email: 'ana@exemplo.com.br', password: 'uma senha longa o bastante', nome: 'x'.repeat(5_000), apelido: 'y' }));
    expectCheapRefusal(result, 422, 'validation_failed');
    const [long, short] = result.body.error.details;
    expect(long).toEqual({ location: 'body', field: 'nome', rule: 'additionalProperties', message: 'must NOT have additional properties', value: `${'x'.repeat(199)}…` });
    expect(short).toMatchObject({ field: 'apelido', value: 'y' });
  });
});
