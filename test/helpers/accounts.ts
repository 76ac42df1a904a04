/** Users and API keys for tests, made directly through the accounts domain (no HTTP round trip). */
import { randomBytes } from 'node:crypto';
import type { NewUser } from '../../src/accounts/users.js';
import type { UserRow } from '../../src/accounts/models.js';
import type { TestApp } from './app.js';

export interface TestUser {
  user: UserRow;
  password: string;
  /** A live API key of the user. */
  key: string;
  /** `{ Authorization: 'Token <key>' }` */
  headers: Record<string, string>;
}

let sequence = 0;

/** A new active user (unique username and e-mail unless given) with a live key. */
export async function createUser(app: Pick<TestApp, 'accounts'>, fields: Partial<NewUser> = {}): Promise<TestUser> {
  sequence += 1;
  const suffix = `${sequence}${randomBytes(3).toString('hex')}`;
  const password = fields.password ?? `senha-de-teste-${suffix}`;
  const user = await app.accounts.users.create({
    username: `user.${suffix}`,
    email: `user.${suffix}@exemplo.com.br`,
    first_name: 'Test',
    last_name: `User ${suffix}`,
    ...fields,
    password,
  });
  const { key } = await app.accounts.tokens.issue(user.id);
  return { user, password, key, headers: { Authorization: `Token ${key}` } };
}

export const createAdmin = (app: Pick<TestApp, 'accounts'>, fields: Partial<NewUser> = {}) => createUser(app, { ...fields, is_admin: true });
