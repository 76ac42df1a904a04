/**
 * The `palanque` command tree: global options, the session commands, one command per operation of the
 * contract (grouped like its tags), the database tasks and shell completion; and `run`, which parses a
 * command line, runs it and returns the exit code (see errors.ts).
 */
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { addAdminCommands } from './admin/commands.js';
import { addApiCommands } from './api-commands.js';
import { completionScript } from './completion.js';
import { DEFAULT_MOCK_URL } from './context.js';
import { EXIT, EXIT_CODES_HELP, reportError, wantsJson } from './errors.js';
import { withExamples } from './examples.js';
import { addSessionCommands } from './session.js';

const PROGRAM_HELP = `
Examples:
  $ palanque login --base-url http://127.0.0.1:8000 -u ana.souza
  $ palanque whoami
  $ palanque municipios list --uf 35
  $ palanque municipios list --all --json > municipios.json
  $ palanque entities add --tp candidato --file candidate.json
  $ palanque entities get --id 12 --json > c.json && palanque entities add --file c.json   # --json prints data
  $ palanque sms send --credential 1 --title Convite --message "Reunião às 19h" --to-file numeros.txt
  $ palanque status
  $ palanque municipios list --uf 33 --mock          # against the Prism mock (npm run mock)
  $ palanque db migrate && palanque user create --username ana.souza --email ana.souza@palanque.app --admin
  $ palanque <command> --help                        # every command has its own help and examples

Configuration:
  The profiles (one server and key each) live in $PALANQUE_CONFIG, else $XDG_CONFIG_HOME/palanque/config.json,
  else ~/.config/palanque/config.json (mode 0600). $PALANQUE_PROFILE chooses the profile, $PALANQUE_BASE_URL
  the server and $PALANQUE_TOKEN the key, for scripts. A profile's key is only sent to its own server.
  --mock uses $PALANQUE_MOCK_URL, else ${DEFAULT_MOCK_URL}.

Output:
  Tables by default. --json prints the answer's data, a page of a list as its array of items (every page's
  with --all: palanque accounts list --all --json | jq '.[]'), so what one command prints another takes
  back with --file; --envelope prints the API's whole answer (a page's count and links included). Under
  either, an error is one line of JSON on stderr ({"error":{"code","message","details"},"status",...}).
  A 429 or 503 is retried only when its Retry-After is at most 5 s, each wait said on stderr; a longer one
  ends the command at once.

${EXIT_CODES_HELP}`;

/** The package's version, from the package.json above this file (in cli/ or in dist/cli/). */
function version(): string {
  for (const relative of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'palanque' && pkg.version) return pkg.version;
    } catch {
      // not there: try the next folder up
    }
  }
  return '0.0.0';
}

/**
 * The command tree. With `jsonErrors` (the command line asks for --json), commander's own messages are
 * not written: run() reports its errors as one JSON line, as every other error.
 */
export function buildProgram({ jsonErrors = false }: { jsonErrors?: boolean } = {}): Command {
  const program = new Command('palanque');
  // Before any subcommand exists: each copies its parent's output settings when it is created.
  if (jsonErrors) program.configureOutput({ writeErr: () => undefined, outputError: () => undefined });
  program
    .description("Palanque's admin command line: every operation of the API, through the SDK, and the database tasks.")
    .version(version(), '-V, --version')
    .addOption(new Option('-p, --profile <name>', 'the profile of the configuration file to use').env('PALANQUE_PROFILE'))
    .option('--base-url <url>', "the server's base URL (default: the profile's, else http://127.0.0.1:8000)")
    .option('--mock', `talk to the Prism mock of the spec (npm run mock) at $PALANQUE_MOCK_URL or ${DEFAULT_MOCK_URL}`)
    .option('--json', "print the answer's data as JSON (what --file takes back; a page of a list as its array of items), or the result as JSON, for scripts; errors as one JSON line on stderr")
    .option('--envelope', 'print the whole JSON envelope the API answered (success, data with a page\'s count and links, message, request_id)')
    .option('--no-retry', 'do not retry a failed connection, a 429 or a 503')
    .option('--request-id <id>', 'the X-Request-Id to send (one is generated otherwise)')
    .option('--idempotency-key <key>', 'the Idempotency-Key of a POST (one is generated otherwise)')
    .showHelpAfterError('(add --help for usage and examples)')
    .showSuggestionAfterError(true)
    .exitOverride()
    .addHelpText('after', PROGRAM_HELP);
  program.commandsGroup('Session:');
  addSessionCommands(program);
  program.commandsGroup('API commands:');
  addApiCommands(program);
  program.commandsGroup('Database tasks (on DATABASE_URL, no server needed):');
  addAdminCommands(program);
  program.commandsGroup('Other:');
  program.helpCommand('help [command]', 'Show the help of a command');
  const completion = program.command('completion').description('Print a shell completion script (bash or zsh)').argument('[shell]', 'bash or zsh', 'bash');
  withExamples(completion, ['completion bash > ~/.palanque-completion.bash   # then: source it from ~/.bashrc', 'completion zsh > ~/.palanque-completion.zsh', 'completion   # bash']);
  completion.action((shell: string) => {
      if (shell !== 'bash' && shell !== 'zsh') {
        program.error(`error: unknown shell "${shell}" (bash or zsh)`, { exitCode: EXIT.usage, code: 'palanque.unknownShell' });
      }
      process.stdout.write(completionScript(program, shell as 'bash' | 'zsh'));
    });

  return program;
}

/** Runs a command line (`process.argv`) and returns the exit code. */
export async function run(argv: string[]): Promise<number> {
  // From the words themselves: a command line commander refuses is never parsed into options.
  const json = wantsJson(argv.slice(2));
  const program = buildProgram({ jsonErrors: json });
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (error) {
    return reportError(error, process.stderr, { json });
  }
}
