/**
 * The database tasks: what an admin does on the server's database itself, without a server running.
 * They call the server's own code (src/): the migrator, the municipality import, the accounts domain
 * and the demo-data seed, so they apply exactly the server's rules.
 */
import { hostname, userInfo } from 'node:os';
import type { Sequelize } from 'sequelize';
import { AuditLog } from '../../src/accounts/audit-log.js';
import { defineAccountModels, type AccountModels } from '../../src/accounts/models.js';
import { passwordProblem, type PasswordContext } from '../../src/accounts/password-policy.js';
import { hashPassword } from '../../src/accounts/passwords.js';
import { publishRevocation } from '../../src/accounts/revocations.js';
import { newReadablePassword } from '../../src/accounts/secrets.js';
import { createAccounts } from '../../src/accounts/index.js';
import { DuplicateUserError, publicUser, UserDirectory } from '../../src/accounts/users.js';
import type { Config } from '../../src/config.js';
import { formatDryRun, formatMigrationStatus, migrate, migrationStatus } from '../../src/db/migrator.js';
import { formatSeedPasswords, formatSeedReport } from '../../src/demo/seed-report.js';
import { seedDemoData, SeedError } from '../../src/demo/seed.js';
import { createDomains } from '../../src/domains.js';
import { refusingJobQueue } from '../../src/jobs/refusing-queue.js';
import type { Logger } from '../../src/logger.js';
import { createMailer } from '../../src/mail/mailer.js';
import { MunicipalityCatalog } from '../../src/municipalities/catalog.js';
import { ImportError, importMunicipalities } from '../../src/municipalities/import.js';
import { defineMunicipalityModel, loadAllMunicipalities } from '../../src/municipalities/model.js';
import { ReportedFailure, UsageError } from '../errors.js';
import { passwordFromStdin, promptPassword } from '../input.js';
import { printJson, printValue, type Output } from '../output.js';
import { progressBar } from '../progress.js';
import { migrated, redacted, withDatabase, type DatabaseOptions, type DatabaseTask } from './database.js';

// --- db migrate ----------------------------------------------------------------------------------

export async function migrateTask(options: DatabaseOptions & { status?: boolean; dryRun?: boolean }, output: Output): Promise<void> {
  if (options.status && options.dryRun) throw new UsageError('choose --status or --dry-run, not both');
  await withDatabase(options, async ({ sequelize, logger, config }) => {
    const database = redacted(config.databaseUrl);
    if (options.status || options.dryRun) {
      const status = await migrationStatus(sequelize);
      if (output.json) printJson(output, { database, ...(options.dryRun ? { dryRun: true } : {}), ...status });
      else output.stdout.write(options.dryRun ? formatDryRun(status, database) : formatMigrationStatus(status, database));
      return;
    }
    let applied: string[];
    try {
      applied = await migrate(sequelize, logger);
    } catch (error) {
      throw new ReportedFailure(await migrationFailure(error, sequelize, database));
    }
    const executed = (await migrationStatus(sequelize)).migrations.filter((migration) => migration.status === 'applied');
    if (output.json) {
      printJson(output, { database, applied, migrations: executed.map((migration) => migration.name) });
      return;
    }
    output.stdout.write(
      applied.length > 0
        ? `Applied ${applied.length} migration(s) to ${database}:\n${applied.map((name) => `  ${name}\n`).join('')}`
        : `The database ${database} is up to date (${executed.length} migrations).\n`,
    );
  });
}

/** A failed migration, for the operator: which, why, and where the database stands (rolled back to the one before). */
async function migrationFailure(error: unknown, sequelize: Sequelize, database: string): Promise<string> {
  const message = error instanceof Error ? error.message : String(error);
  let where = '';
  try {
    const status = await migrationStatus(sequelize);
    const last = status.migrations.filter((migration) => migration.status === 'applied').at(-1)?.name;
    where = ` The failed migration was rolled back: ${database} is at ${last ?? 'no migration'} (${status.pending.length} pending). Fix the cause and run palanque db migrate again.`;
  } catch {
    // The database cannot say: the message stands alone.
  }
  return `${message.replace(/\.?\s*$/, '.')}${where}`;
}

// --- db seed -------------------------------------------------------------------------------------

/** The seed queues nothing (no scenario run, no SMS), so nothing can slip through. */
const noJobs = refusingJobQueue('The seed queues no jobs');

export async function seedTask(options: DatabaseOptions & { passwordStdin?: boolean }, output: Output): Promise<void> {
  const password = options.passwordStdin ? await passwordFromStdin() : process.env.SEED_PASSWORD || undefined;
  await withDatabase(options, async (task) => {
    const { sequelize, config, logger } = task;
    if (config.env === 'production' && process.env.SEED_IN_PRODUCTION !== 'yes') {
      throw new ReportedFailure('NODE_ENV is production: the demo data includes a platform admin. Set SEED_IN_PRODUCTION=yes to seed anyway.');
    }
    await migrated(task);
    const municipalities = await loadedMunicipalities(sequelize, config, logger, output);
    const accounts = createAccounts(sequelize, config.accounts, createMailer(config.mail, logger), logger);
    const domains = await createDomains(sequelize, { accounts, jobs: noJobs, logger, settings: config });
    let report;
    try {
      report = await seedDemoData(
        { sequelize, accounts, municipalities, ...domains },
        { passwordHashCost: config.accounts.passwordHashCost, password, secretsKey: config.secretsKey, logger },
      );
    } catch (error) {
      if (error instanceof SeedError) throw new ReportedFailure(error.message);
      throw error;
    }
    if (output.json) {
      printJson(output, report);
      return;
    }
    output.stdout.write(`Demo data in ${redacted(config.databaseUrl)}:\n${formatSeedReport(report)}\n`);
    const passwords = formatSeedPasswords(report);
    if (passwords) output.stdout.write(`\n${passwords}\n`);
  });
}

/** The list as the entity rules read it; imported from MUNICIPIOS_SOURCE first when the table is empty. */
async function loadedMunicipalities(sequelize: Sequelize, config: Config, logger: Logger, output: Output): Promise<MunicipalityCatalog> {
  const model = defineMunicipalityModel(sequelize);
  const catalog = new MunicipalityCatalog(() => loadAllMunicipalities(model));
  await catalog.reload();
  if (catalog.size > 0) return catalog;
  try {
    await runImport(sequelize, config.municipiosSource, config.municipiosSha256, output);
  } catch (error) {
    throw new ReportedFailure(
      `The municipality list is empty and could not be imported from ${config.municipiosSource} (${(error as Error).message}). ` +
        'Import it with palanque municipios import --source <file or URL> (or set MUNICIPIOS_SOURCE), then seed again.',
    );
  }
  logger.info('municipality list imported');
  await catalog.reload();
  return catalog;
}

// --- municipios import ---------------------------------------------------------------------------

export async function importTask(options: DatabaseOptions & { source?: string; sha256?: string }, output: Output): Promise<void> {
  await withDatabase(options, async (task) => {
    await migrated(task);
    const source = options.source ?? task.config.municipiosSource;
    // An explicit empty --sha256 skips the check (for one's own data), as MUNICIPIOS_SHA256= does.
    const sha256 = options.sha256 !== undefined ? options.sha256 || undefined : task.config.municipiosSha256;
    let report;
    try {
      report = await runImport(task.sequelize, source, sha256, output);
    } catch (error) {
      if (error instanceof ImportError) throw new ReportedFailure(error.message + (options.source === undefined ? offlineHint(source) : ''));
      throw error;
    }
    if (output.json) {
      printJson(output, report);
      return;
    }
    output.stdout.write(
      `Imported ${report.rows} municipalities from ${report.source}: ${report.inserted} inserted, ${report.updated} updated, ${report.unchanged} unchanged.\n` +
        (report.inserted + report.updated > 0 ? 'A running server picks the list up by itself while its list is empty; otherwise restart it.\n' : ''),
    );
  });
}

/**
 * Without --source the list is downloaded (MUNICIPIOS_SOURCE, else the pinned upstream file), which fails
 * offline: say how to import a copy one has.
 */
function offlineHint(source: string): string {
  if (!/^https?:/i.test(source)) return '';
  return (
    `\nNo --source was given, so the list was downloaded from ${source} (MUNICIPIOS_SOURCE, else the pinned upstream file).` +
    '\nOffline, or to use a copy of your own, pass it: palanque municipios import --source <file or URL> (--sha256 \'\' skips the digest check for your own data).'
  );
}

async function runImport(sequelize: Sequelize, source: string, sha256: string | undefined, output: Output) {
  const progress = progressBar('importing', 'rows', { json: output.json });
  try {
    return await importMunicipalities(sequelize, {
      source,
      sha256,
      onProgress: (written, toWrite) => {
        if (toWrite === 0) return; // nothing to write: no bar
        progress.setTotal(toWrite);
        progress.update(written);
      },
    });
  } finally {
    progress.stop();
  }
}

// --- user create, user set-password --------------------------------------------------------------

export interface PasswordOptions {
  passwordStdin?: boolean;
  generatePassword?: boolean;
}

/** The new password: piped, generated (and shown once), or typed twice on the terminal. */
async function newPassword(options: PasswordOptions, username: string): Promise<{ password: string; generated: boolean }> {
  if (options.passwordStdin && options.generatePassword) throw new UsageError('choose --password-stdin or --generate-password, not both');
  let password: string;
  if (options.generatePassword) return { password: newReadablePassword(), generated: true };
  if (options.passwordStdin) password = await passwordFromStdin();
  else {
    if (!process.stdin.isTTY) throw new UsageError('there is no terminal to ask for the password: use --password-stdin or --generate-password');
    password = await promptPassword(`New password for ${username}:`);
    if ((await promptPassword('The same password again:')) !== password) throw new UsageError('the two passwords differ');
  }
  return { password, generated: false };
}

/** The password rules (src/accounts/password-policy.ts), checked once the deployment's PASSWORD_MIN_LENGTH and the account are known. */
function checkChosenPassword({ password, generated }: { password: string; generated: boolean }, account: PasswordContext, config: Config): void {
  if (generated) return;
  const problem = passwordProblem(password, account, config.accounts.passwordMinLength);
  if (problem) throw new UsageError(`the password ${problem.message}`);
}

/**
 * The audit log, as the API writes it (src/accounts/audit-log.ts): a task run on the database leaves the
 * same event as the operation it stands for, with no Palanque user behind it (`actor_id` null) but the
 * operating-system user who ran it and on which machine (`details.via: cli`, `os_user`, `host`).
 */
function cliAudit(models: AccountModels, task: DatabaseTask): { log: AuditLog; by: Record<string, string> } {
  return { log: new AuditLog(models, task.logger, task.config.accounts.auditRetentionMs ?? 0), by: { via: 'cli', os_user: osUser(), host: hostname() } };
}

/** Who runs this process: userInfo() throws for a uid without a passwd entry (some containers). */
function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER || process.env.LOGNAME || `uid ${process.getuid?.() ?? 'unknown'}`;
  }
}

export interface CreateUserOptions extends DatabaseOptions, PasswordOptions {
  username: string;
  email: string;
  firstName?: string;
  lastName?: string;
  admin?: boolean;
}

export async function createUserTask(options: CreateUserOptions, output: Output): Promise<void> {
  const { password, generated } = await newPassword(options, options.username);
  await withDatabase(options, async (task) => {
    checkChosenPassword({ password, generated }, { username: options.username, email: options.email }, task.config);
    await migrated(task);
    const models = defineAccountModels(task.sequelize);
    const users = new UserDirectory(models, task.config.accounts.passwordHashCost);
    let row;
    try {
      row = await users.create({
        username: options.username,
        email: options.email,
        password,
        first_name: options.firstName ?? '',
        last_name: options.lastName ?? '',
        is_admin: Boolean(options.admin),
      });
    } catch (error) {
      if (error instanceof DuplicateUserError) throw new ReportedFailure(`error: ${error.message}`);
      if (error instanceof Error && error.message.startsWith('Invalid username')) throw new UsageError(`--username: ${error.message}`);
      throw error;
    }
    const audit = cliAudit(models, task);
    await audit.log.record({ event: 'account_created', userId: row.id, details: { ...audit.by, is_admin: Boolean(row.is_admin) } });
    const user = publicUser(row);
    if (output.json) {
      printJson(output, { user, ...(generated ? { password } : {}) });
      return;
    }
    output.stdout.write(`Created ${user.is_admin ? 'admin' : 'user'} ${user.username} (id ${user.id}).\n`);
    printValue(output, user);
    if (generated) output.stdout.write(`\nIts password, shown only this once (only a hash is stored):\n\n    ${password}\n\n`);
  });
}

export interface SetPasswordOptions extends DatabaseOptions, PasswordOptions {
  keepSessions?: boolean;
}

export async function setPasswordTask(login: string, options: SetPasswordOptions, output: Output): Promise<void> {
  const { password, generated } = await newPassword(options, login);
  await withDatabase(options, async (task) => {
    await migrated(task);
    const models = defineAccountModels(task.sequelize);
    const users = new UserDirectory(models, task.config.accounts.passwordHashCost);
    const row = await users.byLoginName(login);
    if (!row) throw new ReportedFailure(`error: no user with the username or e-mail "${login}"`);
    checkChosenPassword({ password, generated }, row, task.config);
    const hash = await hashPassword(password, task.config.accounts.passwordHashCost);
    let revoked = 0;
    await task.sequelize.transaction(async (transaction) => {
      await models.User.update({ password_hash: hash }, { where: { id: row.id }, transaction });
      if (!options.keepSessions) {
        // As a password reset does: whoever held a session with the old password loses it.
        [revoked] = await models.ApiToken.update({ revoked_at: new Date() }, { where: { user_id: row.id, revoked_at: null }, transaction });
        await models.LoginDevice.destroy({ where: { user_id: row.id }, transaction }); // and its trusted devices
      }
    });
    const audit = cliAudit(models, task);
    await audit.log.record({ event: 'password_changed', userId: row.id, details: { ...audit.by, keys_revoked: revoked } });
    if (revoked > 0) {
      // Running servers may hold these keys in their key caches: they drop them on this notice.
      const { config, sequelize, logger } = task;
      await publishRevocation({ databaseUrl: config.databaseUrl, sequelize, redisUrl: config.redisUrl, redisPrefix: config.rateLimitPrefix, logger }, { userId: row.id });
    }
    if (output.json) {
      printJson(output, { user: publicUser(row), keys_revoked: revoked, ...(generated ? { password } : {}) });
      return;
    }
    output.stdout.write(`Password of ${row.username} (id ${row.id}) changed; ${options.keepSessions ? 'its keys were kept' : `${revoked} key(s) revoked`}.\n`);
    if (generated) output.stdout.write(`\nThe new password, shown only this once (only a hash is stored):\n\n    ${password}\n\n`);
  });
}
