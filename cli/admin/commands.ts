/**
 * The database tasks as commands: `db migrate`, `db seed`, `municipios import`, `user create`,
 * `user set-password`. Their code (cli/admin/tasks.ts, which loads the server's modules and Sequelize)
 * is imported only when one of them runs.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { commandOfOperation, groupCommand, takeOverWith } from '../api-commands.js';
import { UsageError } from '../errors.js';
import { globalsOf, outputOf } from '../context.js';
import { withExamples, withGroupExamples } from '../examples.js';
import type { DatabaseOptions } from './database.js';

const DATABASE_HELP = `Works on the server's database directly (no server needed): DATABASE_URL from the environment or a
.env file in the current folder (as npm start reads it), or --database-url. Pending migrations are
applied first. The server's other settings (PASSWORD_HASH_COST, MUNICIPIOS_SOURCE, SECRETS_KEY...)
are read the same way.`;

function databaseOptions(command: Command): Command {
  return command
    .option('--database-url <url>', 'the database (default: $DATABASE_URL, else sqlite:data/palanque.sqlite)')
    .option('--verbose', "log the server's own messages (migrations, import) on stderr");
}

function passwordOptions(command: Command): Command {
  return command
    .option('--password-stdin', 'read the password from standard input (its first line)')
    .option('--generate-password', 'generate a password and print it once');
}

const tasks = () => import('./tasks.js');
const electionTasks = () => import('./elections.js');

function optionsOf<T>(command: Command): T & DatabaseOptions {
  return command.opts() as T & DatabaseOptions;
}

export function addAdminCommands(program: Command): void {
  const db = withGroupExamples(program.command('db').description('The database: migrations and demo data'));
  withExamples(
    databaseOptions(db.command('migrate').description('Apply the pending migrations (umzug), each in one transaction; --status and --dry-run change nothing'))
      .option('--status', 'list every migration: applied (with when, if recorded) or pending; applies nothing')
      .option('--dry-run', 'list the migrations that would run, in order; applies nothing'),
    ['db migrate', 'db migrate --status', 'db migrate --dry-run --json', 'db migrate --database-url postgres://palanque@db.internal:5432/palanque'],
    `${DATABASE_HELP.replace('Pending migrations are\napplied first.', 'Without --status or --dry-run,\nthe pending migrations are applied.')}

Each migration runs in one transaction with its record in the migrations table: one that fails is
rolled back whole (exit 1, saying which and why), the database stays at the migration before it, and
running the command again after fixing the cause applies it. --status and --dry-run exit 0 and write
nothing (--json: { database, migrations: [{ name, status, appliedAt }], pending, unknown }).`,
  ).action(async (_options: unknown, command: Command) => {
    await (await tasks()).migrateTask(optionsOf(command), outputOf(globalsOf(command)));
  });

  withExamples(
    databaseOptions(db.command('seed').description('Write the demo data of fixtures/ (users, entities, monitors, scenarios, SMS, research)')).option(
      '--password-stdin',
      'give every user created this password, read from standard input (default: $SEED_PASSWORD, else a generated one each)',
    ),
    ['db seed', 'db seed --password-stdin < senha-demo.txt'],
    `${DATABASE_HELP}

Only missing records are written, so running it again changes nothing. The municipality list is
imported first when it is empty. The passwords of the users created are printed once. Refused with
NODE_ENV=production (it creates a platform admin) unless SEED_IN_PRODUCTION=yes.`,
  ).action(async (_options: unknown, command: Command) => {
    await (await tasks()).seedTask(optionsOf(command), outputOf(globalsOf(command)));
  });

  const municipios = groupCommand(program, 'municipios');
  withExamples(
    databaseOptions(municipios.command('import').description('(Re)load the municipality list into the database (one transaction, idempotent)'))
      .option('--source <file or URL>', 'file path, file: URL or http(s) URL of the CSV (default: $MUNICIPIOS_SOURCE, else the pinned upstream file)')
      .option('--sha256 <hex>', 'expected sha256 of the source; empty skips the check (default: $MUNICIPIOS_SHA256, else the pinned digest)'),
    ['municipios import --source ../shared/data/municipios.csv', 'municipios import', "municipios import --source minha-lista.csv --sha256 ''"],
    `${DATABASE_HELP}

Nothing is written unless the digest matches and every row is valid; then new codes are inserted,
changed ones updated and the rest kept. A progress bar shows the writing on a terminal.`,
  ).action(async (_options: unknown, command: Command) => {
    await (await tasks()).importTask(optionsOf(command), outputOf(globalsOf(command)));
  });

  addElectionsImportFile(program);

  const user = withGroupExamples(program.command('user').description('Accounts on the database: create users, set passwords'));
  withExamples(
    passwordOptions(
      databaseOptions(
        user
          .command('create')
          .description('Create a user (an admin with --admin)')
          .requiredOption('--username <name>', 'the username: 1-150 letters, digits or . _ + - (no @)')
          .requiredOption('--email <address>', 'the e-mail address (unique)')
          .option('--first-name <name>', 'first name')
          .option('--last-name <name>', 'last name')
          .option('--admin', 'a platform admin'),
      ),
    ),
    [
      'user create --username ana.souza --email ana.souza@palanque.app --first-name Ana --last-name Souza --admin',
      'user create --username carlos.pereira --email carlos.pereira@palanque.app --password-stdin < senha.txt',
      'user create --username bia --email bia@exemplo.com.br --generate-password --json',
    ],
    `${DATABASE_HELP}

The password is asked twice without echo, read with --password-stdin, or generated with
--generate-password (and printed once); at least PASSWORD_MIN_LENGTH characters (12 by default), not one of
the most common passwords, not the account's own username or e-mail. Only its hash is stored.`,
  ).action(async (_options: unknown, command: Command) => {
    await (await tasks()).createUserTask(optionsOf(command), outputOf(globalsOf(command)));
  });

  withExamples(
    passwordOptions(
      databaseOptions(
        user
          .command('set-password <username>')
          .description("Set a user's password (by username or e-mail) and revoke the user's keys")
          .option('--keep-sessions', "keep the user's API keys working (they are revoked by default)"),
      ),
    ),
    ['user set-password ana.souza', 'user set-password ana.souza@palanque.app --generate-password --json'],
    DATABASE_HELP,
  ).action(async (username: string, _options: unknown, command: Command) => {
    await (await tasks()).setPasswordTask(username, optionsOf(command), outputOf(globalsOf(command)));
  });
}

/**
 * `elections import --file <path>`: the API command (startElectionsImport, the server downloads a URL)
 * also imports a court file of this machine into the database directly when given --file.
 */
function addElectionsImportFile(program: Command): void {
  const command = commandOfOperation.get('startElectionsImport');
  if (!command) return;
  databaseOptions(command).option('--batch-size <lines>', 'with --file: lines written per transaction (default 1000)', (value: string) => {
    if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError('Not a positive integer.');
    return Number(value);
  });
  command.description("Import the electoral court's candidacy files: a URL by the server (platform admins), or a file of this machine into the database (--file)");
  withExamples(
    command,
    [
      'elections import --file consulta_cand_2024.zip   # on the database of DATABASE_URL, no server; Ctrl-C stops between batches',
      'elections import --file consulta_cand_2024_SP.csv --sha256 9f86d08... --json',
    ],
    `With --file (a database task, no server needed): the court's candidacy file (consulta_cand_<year>_<UF>.csv)
or zip of them (consulta_cand_<year>.zip) on this machine is imported into the database directly, as
npm run elections:import does. ${DATABASE_HELP} ELECTIONS_IMPORT_MAX_RECORD_BYTES is read the same way.
--sha256 checks the file first. A count of the lines shows on a terminal, then a summary (--json: one
JSON document with the import's report). Nothing is written if the digest differs or a file lacks a
column (exit 1); otherwise every batch of --batch-size lines is committed as it goes, and the import is
idempotent. Ctrl-C stops after the batch in flight: what was committed is printed, and the command
exits 130; running it again completes the import. Rejected lines are listed in the summary (exit 0).`,
  );
  takeOverWith(command, async (self) => {
    const options = self.opts() as { file?: string; data?: string; source?: string; sha256?: string; batchSize?: number; databaseUrl?: string; verbose?: boolean };
    if (options.file === undefined) {
      if (options.databaseUrl !== undefined || options.batchSize !== undefined) throw new UsageError('--database-url and --batch-size go with --file (a file of this machine imported into the database)');
      return false;
    }
    if (options.data !== undefined || options.source !== undefined) {
      throw new UsageError('--file imports a file of this machine into the database; --source and --data ask the server to download one: give one or the other');
    }
    if (options.file === '-' || options.file === '') throw new UsageError('--file needs the path of the court\'s file or zip (standard input is not read)');
    await (await electionTasks()).electionsImportTask({ ...optionsOf<object>(self), file: options.file }, outputOf(globalsOf(self)));
    return true;
  });
}
