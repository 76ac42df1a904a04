/**
 * What the accounts tables keep and forget: a key records its last use (at most once a minute, so reads
 * do not all become writes), and the periodic purge removes only rows that no longer count: failures
 * outside the lock window, used or expired reset tokens, and keys dead for more than 30 days.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, testAccountSettings, type TestApp } from './helpers/app.js';
import { createUser } from './helpers/accounts.js';
import type { ApiTokenRow, PasswordResetRow } from '../src/accounts/models.js';

const DAY = 24 * 3600_000;
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

it('records when a key was last used, without a write on every request', async () => {
  const ana = await createUser(app);
  const { ApiToken } = app.accounts.models;
  const lastUse = async () => ((await ApiToken.findOne({ where: { user_id: ana.user.id }, raw: true })) as unknown as ApiTokenRow).last_used_at;
  expect(await lastUse()).toBeNull();

  const profile = () => fetch(`${app.baseUrl}/api/usuario/${ana.user.id}/`, { headers: ana.headers });
  expect((await profile()).status).toBe(200);
  const firstUse = await lastUse();
  expect(firstUse).not.toBeNull();

  expect((await profile()).status).toBe(200);
  const secondUse = await lastUse();
  expect(new Date(secondUse!).getTime()).toBe(new Date(firstUse!).getTime());
});

it('purges what no longer counts and keeps the rest', async () => {
  const { LoginFailure, PasswordReset, ApiToken } = app.accounts.models;
  const carlos = await createUser(app);
  const now = Date.now();
  const window = testAccountSettings.loginLock.windowMs;
  await LoginFailure.bulkCreate([
    { subject: 'ip:203.0.113.9', failed_at: new Date(now - window - 1000) },
    { subject: 'ip:203.0.113.9', failed_at: new Date(now - 1000) },
  ]);
  await PasswordReset.bulkCreate([
    { user_id: carlos.user.id, token_hash: 'a'.repeat(64), created_at: new Date(now - 2 * DAY), expires_at: new Date(now - DAY) },
    { user_id: carlos.user.id, token_hash: 'b'.repeat(64), created_at: new Date(now), expires_at: new Date(now + DAY), used_at: new Date(now) },
    { user_id: carlos.user.id, token_hash: 'c'.repeat(64), created_at: new Date(now), expires_at: new Date(now + DAY) },
  ]);
  await ApiToken.bulkCreate([
    { user_id: carlos.user.id, key_hash: 'd'.repeat(64), created_at: new Date(now - 60 * DAY), expires_at: new Date(now - 40 * DAY) },
    { user_id: carlos.user.id, key_hash: 'e'.repeat(64), created_at: new Date(now - 50 * DAY), expires_at: new Date(now + DAY), revoked_at: new Date(now - 31 * DAY) },
    { user_id: carlos.user.id, key_hash: 'f'.repeat(64), created_at: new Date(now - 10 * DAY), expires_at: new Date(now - 5 * DAY) },
  ]);

  // Device and unlock tokens past their expiry go; a live one stays.
  await app.accounts.models.LoginDevice.bulkCreate([
    { user_id: carlos.user.id, kind: 'unlock', token_hash: 'g'.repeat(64), created_at: new Date(now - DAY), expires_at: new Date(now - 1000), failures: 0 },
    { user_id: carlos.user.id, kind: 'device', token_hash: 'h'.repeat(64), created_at: new Date(now - DAY), last_used_at: new Date(now), expires_at: new Date(now + DAY), failures: 0 },
  ]);

  expect(await app.accounts.purgeExpired()).toBe(1 + 1 + 2 + 2);
  expect(await app.accounts.models.LoginDevice.count({ where: { user_id: carlos.user.id } })).toBe(1);

  expect(await LoginFailure.count({ where: { subject: 'ip:203.0.113.9' } })).toBe(1);
  const resets = (await PasswordReset.findAll({ where: { user_id: carlos.user.id }, raw: true })) as unknown as PasswordResetRow[];
  expect(resets.map((row) => row.token_hash)).toEqual(['c'.repeat(64)]);
  const tokens = (await ApiToken.findAll({ where: { user_id: carlos.user.id }, raw: true })) as unknown as ApiTokenRow[];
  const keys = tokens.map((row) => row.key_hash);
  // The live key of createUser and the key dead for only 5 days stay.
  expect(keys).toHaveLength(2);
  expect(keys).toContain('f'.repeat(64));
  expect((await fetch(`${app.baseUrl}/api/usuario/${carlos.user.id}/`, { headers: carlos.headers })).status).toBe(200);
});
