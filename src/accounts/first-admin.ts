/**
 * The first admin. A server started on an empty database creates one, so that someone can log in and
 * create the others: from ADMIN_USERNAME / ADMIN_EMAIL / ADMIN_PASSWORD, or else with a generated password
 * shown once, and only to a person: when stdout is a terminal. Off a terminal (a service manager, a
 * container, a log collector) a generated password would land in the logs, so none is generated: the
 * admin is created without a usable password (no password matches it) and a log line says how to set one,
 * `palanque user set-password <username>` on the server's database, or a reset link by e-mail. No secret
 * is ever logged or written to a file; a password is stored only as a hash. The creation is an audit event
 * (`account_created`, `details.via: first_start`), as every platform admin's is.
 *
 * The commands it prints work as written, from any folder (adminCliOf): `npm install` puts no `palanque` on
 * the PATH (npm links a package's bin for the packages that depend on it, never for itself), and `npx
 * palanque` reinstalls the project into npm's cache at its first use, running its `prepare` script (a
 * failed first try leaves that cache broken), so they name the CLI by its path, with the server's own address.
 */
import { existsSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isatty } from 'node:tty';
import type { Logger } from '../logger.js';
import type { AuditLog } from './audit-log.js';
import { newReadablePassword } from './secrets.js';
import { DuplicateUserError, type UserDirectory } from './users.js';

export interface FirstAdminSettings {
  username: string;
  email: string;
  password: string | undefined;
}

/** Where a generated password may be shown. */
export interface FirstAdminOutput {
  /** Whether a person reads stdout: a generated password is shown only then. */
  terminal: boolean;
  print: (text: string) => void;
}

/** How a person at this server's terminal runs the admin CLI, and the server's address for it. */
export interface AdminCli {
  /** The words that run `palanque` there: `node /srv/palanque/dist/cli/palanque.js`. */
  command: string;
  /** This server's address, for `--base-url` (the CLI would otherwise go to its profile's, or 127.0.0.1:8000). */
  baseUrl?: string;
}

/**
 * How the admin CLI runs beside a server of the project at `root`: built (`npm start` builds first, the
 * image is built), node runs dist/cli/palanque.js; run from its sources (`npm run dev`, tsx), the CLI's
 * sources through the project's tsx, so both are the same version. Absolute paths: no folder to be in.
 */
export function adminCliOf(root: string, baseUrl: string, fromSources = import.meta.url.endsWith('.ts')): AdminCli {
  const tsx = join(root, 'node_modules', '.bin', 'tsx');
  if (fromSources && existsSync(tsx)) return { command: `${shellWord(tsx)} ${shellWord(join(root, 'cli', 'palanque.ts'))}`, baseUrl };
  return { command: `node ${shellWord(join(root, 'dist', 'cli', 'palanque.js'))}`, baseUrl };
}

/** A word as a POSIX shell reads it back: quoted when it holds anything but plain path characters. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

/** A hash no password matches (verifyPassword knows only `$argon2id$` and `$scrypt$`): the admin waits for one. */
export const NO_PASSWORD_HASH = '!no-password-set';

const stdout: FirstAdminOutput = {
  // isatty, not process.stdout.isTTY: touching process.stdout would switch a piped stdout to non-blocking mode.
  terminal: isatty(1),
  // A synchronous write, for the same reason.
  print: (text) => writeSync(1, text),
};

/** Creates the first admin when there are no users; returns whether it did. */
export async function ensureFirstAdmin(
  users: UserDirectory,
  settings: FirstAdminSettings,
  logger: Logger,
  output: FirstAdminOutput = stdout,
  audit?: Pick<AuditLog, 'record'>,
  cli: AdminCli = { command: 'palanque' },
): Promise<boolean> {
  if ((await users.count()) > 0) return false;
  const generated = settings.password === undefined && output.terminal ? newReadablePassword() : undefined;
  const password = settings.password ?? generated;
  const admin = { username: settings.username, email: settings.email, first_name: 'Admin', is_admin: true };
  try {
    const row = password === undefined ? await users.createWithHash({ ...admin, passwordHash: NO_PASSWORD_HASH }) : await users.create({ ...admin, password });
    await audit?.record({ event: 'account_created', userId: row.id, details: { via: 'first_start', is_admin: true } });
  } catch (error) {
    // Another instance starting on the same database created it first.
    if (error instanceof DuplicateUserError) return false;
    throw error;
  }
  logger.info({ username: settings.username, email: settings.email }, 'first admin created');
  if (generated !== undefined) output.print(banner(settings, generated, cli));
  if (password === undefined) {
    logger.warn(
      { username: settings.username, email: settings.email },
      `the first admin has no password yet (stdout is not a terminal, so none was generated to be shown): ` +
        `set one with \`${cli.command} user set-password ${settings.username}\` on this server's database (its DATABASE_URL), ` +
        `or have a reset link mailed with \`${cli.command} auth reset-password --email <its e-mail>${baseUrlOption(cli)}\`; ` +
        `or set ADMIN_PASSWORD before the first start`,
    );
  }
  return true;
}

function baseUrlOption(cli: AdminCli): string {
  return cli.baseUrl ? ` --base-url ${shellWord(cli.baseUrl)}` : '';
}

/** The password, and each command on a line of its own, to be copied as it is. */
function banner(settings: FirstAdminSettings, password: string, cli: AdminCli): string {
  const username = shellWord(settings.username);
  return (
    '\n' +
    '  The first admin account was created. Its password is shown only this once:\n\n' +
    `    username: ${settings.username}\n` +
    `    password: ${password}\n\n` +
    '  Log in with the admin command line and change it:\n' +
    `    ${cli.command} login -u ${username}${baseUrlOption(cli)}\n` +
    `    ${cli.command} password\n` +
    '  or change it with the admin command line, on this server\'s database (its DATABASE_URL):\n' +
    `    ${cli.command} user set-password ${username}\n` +
    `  or have a reset link mailed: ${cli.command} auth reset-password --email ${shellWord(settings.email)}${baseUrlOption(cli)}\n` +
    '  (Set ADMIN_USERNAME and ADMIN_PASSWORD to choose them instead.)\n\n'
  );
}
