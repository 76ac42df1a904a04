/**
 * The database tasks as commands: `db migrate`, `db seed`, `municipios import`, `user create`,
 * `user set-password`. Their code (cli/admin/tasks.ts, which loads the server's modules and Sequelize)
 * is imported only when one of them runs.
 */
import type { Command } from 'commander';
import { groupCommand } from '../api-commands.js';
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

function optionsOf<T>(command: Command): T & DatabaseOptions {
  return command.opts() as T & DatabaseOptions;
}

export function addAdminCommands(program: Command): void {
  const db = withGroupExamples(program.command('db').description('The database: migrations and demo data'));
  withExamples(
    databaseOptions(db.command('migrate').description('Apply the pending migrations (umzug)')),
    ['db migrate', 'db migrate --database-url postgres://palanque@db.internal:5432/palanque'],
    DATABASE_HELP,
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
