/**
 * The first admin. A server started on an empty database creates one, so that someone can log in and
 * create the others: from ADMIN_USERNAME / ADMIN_EMAIL / ADMIN_PASSWORD, or with a generated password
 * printed once to the console (it is stored only as a hash, so it cannot be shown again), with the
 * commands that change it (the API has no change-password operation: the CLI's database task does it).
 */
import { writeSync } from 'node:fs';
import type { Logger } from '../logger.js';
import { newReadablePassword } from './secrets.js';
import { DuplicateUserError, type UserDirectory } from './users.js';

export interface FirstAdminSettings {
  username: string;
  email: string;
  password: string | undefined;
}

/** Creates the first admin when there are no users; returns whether it did. */
export async function ensureFirstAdmin(
  users: UserDirectory,
  settings: FirstAdminSettings,
  logger: Logger,
  // A synchronous write: touching process.stdout would switch a piped stdout to non-blocking mode.
  print: (text: string) => void = (text) => writeSync(1, text),
): Promise<boolean> {
  if ((await users.count()) > 0) return false;
  const password = settings.password ?? newReadablePassword();
  try {
    await users.create({ username: settings.username, email: settings.email, password, first_name: 'Admin', is_admin: true });
  } catch (error) {
    // Another instance starting on the same database created it first.
    if (error instanceof DuplicateUserError) return false;
    throw error;
  }
  logger.info({ username: settings.username, email: settings.email }, 'first admin created');
  if (!settings.password) {
    print(
      '\n' +
        '  The first admin account was created. Its password is shown only this once:\n\n' +
        `    username: ${settings.username}\n` +
        `    password: ${password}\n\n` +
        `  Log in and change it: palanque login -u ${settings.username}, then palanque password\n` +
        '  or change it with the admin command line, on this server\'s database (its DATABASE_URL):\n' +
        `    palanque user set-password ${settings.username}\n` +
        `  or have a reset link mailed: palanque auth reset-password --email ${settings.email}\n` +
        '  (Set ADMIN_USERNAME and ADMIN_PASSWORD to choose them instead.)\n\n',
    );
  }
  return true;
}
