/**
 * The contract's validator is built once per process for a contract and its settings (half a second of
 * CPU each time otherwise), and shared by the apps built there. What must stay an app's own: the key
 * lookup its security handler calls, which is the request's app's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedContract } from '../src/http/contract.js';
import { contractValidator } from '../src/http/validation.js';
import { createUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';

describe('contractValidator', () => {
  it('gives the same validator for the same contract and settings, and another for other settings', () => {
    const contract = sharedContract();
    const validator = contractValidator(contract, '', true);
    expect(contractValidator(contract, '', true)).toBe(validator);
    expect(contractValidator(contract, '/v1', true)).not.toBe(validator);
    expect(contractValidator(contract, '', false)).not.toBe(validator);
    expect(contractValidator(structuredClone(contract), '', true)).not.toBe(validator);
  });
});

describe('two apps of one process, on two databases', () => {
  let first: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    // Without the fast paths, the validator's security handler checks every key (not the read lane).
    [first, second] = await Promise.all([startTestApp({ withoutFastPaths: true }), startTestApp({ withoutFastPaths: true })]);
  });

  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
  });

  it("each authenticates keys against its own accounts: one app's key is refused by the other", async () => {
    const [ofFirst, ofSecond] = [await createUser(first), await createUser(second)];
    const profile = async (app: TestApp, headers: Record<string, string>) => {
      const response = await fetch(`${app.baseUrl}/api/auth/profile/`, { headers });
      return { status: response.status, body: (await response.json()) as { data?: { username?: string } } };
    };

    const own = await profile(first, ofFirst.headers);
    expect(own.status).toBe(200);
    expect(own.body.data?.username).toBe(ofFirst.user.username);
    expect((await profile(second, ofFirst.headers)).status).toBe(401);

    const otherOwn = await profile(second, ofSecond.headers);
    expect(otherOwn.status).toBe(200);
    expect(otherOwn.body.data?.username).toBe(ofSecond.user.username);
    expect((await profile(first, ofSecond.headers)).status).toBe(401);
  });
});
