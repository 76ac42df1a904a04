/**
 * Sessions: `login` (the password is asked without echo, or read with --password-stdin), `logout`,
 * `whoami`, `password` (change one's own), and the profiles that keep one server's address and key each.
 */
import type { Command } from 'commander';
import { createApiClient, login, logout, PalanqueApiError, unwrap } from '../sdk/index.js';
import { configPath, normaliseBaseUrl, profileName, readConfig, writeConfig, type Profile } from './config.js';
import { baseUrlOf, contextOf, globalsOf, outputOf, retryOf } from './context.js';
import { ReportedFailure, UsageError } from './errors.js';
import { withExamples, withGroupExamples } from './examples.js';
import { passwordFromStdin, passwordsFromStdin, promptLine, promptPassword } from './input.js';
import { printAnswer, printJson, printRows, printValue } from './output.js';

export function addSessionCommands(program: Command): void {
  const loginCommand = program
    .command('login')
    .description('Log in to a server and keep its key in the profile (operation login)')
    .option('-u, --username <name>', 'username or e-mail address (asked when missing)')
    .option('--password-stdin', 'read the password from standard input (for scripts) instead of asking for it')
    .option('--unlock-token <token>', 'the token of an unlock mail (palanque auth unlock), to log in without the delay others\' failures impose');
  withExamples(
    loginCommand,
    [
      'login --base-url http://127.0.0.1:8000 -u ana.souza',
      'login --profile prod --base-url https://api.palanque.app/v1 -u ana.souza',
      `login -u ana.souza --password-stdin < senha.txt`,
      'login -u ana.souza --unlock-token plqu_...   # the token of an unlock mail (auth unlock)',
    ],
    `Asks for the password without echoing it, logs in (POST /api/auth/login) and stores the key in the
profile (--profile, $PALANQUE_PROFILE, or "default") of the configuration file, written with mode 0600.
The server is --base-url, --mock, $PALANQUE_BASE_URL, or the profile's; it is kept in the profile.
The profile also keeps the device token each login answers, and the next login to the same server sends
it: others' failed logins at your name then never delay yours. Without one (a new machine), ask for an
unlock mail (palanque auth unlock -u <name>) and pass its token with --unlock-token.`,
  );
  loginCommand.action(async (options: { username?: string; passwordStdin?: boolean; unlockToken?: string }, command: Command) => {
      const globals = globalsOf(command);
      const output = outputOf(globals);
      const file = configPath();
      const config = await readConfig(file);
      const name = profileName(config, globals.profile);
      const previous = config.profiles[name];
      const baseUrl = baseUrlOf(globals, previous);
      const username = options.username || (await promptLine('Username or e-mail: '));
      if (!username) throw new UsageError('a username is needed: --username <name>');
      const password = options.passwordStdin ? await passwordFromStdin() : await promptPassword(`Password for ${username} at ${baseUrl}:`);

      // A device token belongs to its server: one kept for another address is not sent.
      const deviceToken = previous?.baseUrl === baseUrl ? previous.deviceToken : undefined;
      const client = createApiClient({ baseUrl, deviceToken, retry: retryOf(globals) });
      const session = await login(client, username, password, options.unlockToken);
      const profile: Profile = {
        baseUrl,
        token: session.token,
        username: session.user.username,
        userId: session.user.id,
        expiresAt: session.expires_at,
        deviceToken: session.device_token,
      };
      // Read again: another command may have changed the file while the password was typed.
      const latest = await readConfig(file);
      latest.profiles[name] = profile;
      latest.defaultProfile ??= name;
      await writeConfig(file, latest);

      if (output.json) {
        printJson(output, { profile: name, base_url: baseUrl, config_file: file, expires_at: session.expires_at, user: session.user });
        return;
      }
      output.stdout.write(
        `Logged in to ${baseUrl} as ${session.user.username}${session.user.is_admin ? ' (admin)' : ''}.\n` +
          `The key is stored in profile "${name}" of ${file} and works until ${session.expires_at}.\n`,
      );
    });

  const logoutCommand = program.command('logout').description("Revoke the profile's key on the server and forget it (operation logout)");
  withExamples(logoutCommand, ['logout', 'logout --profile prod']);
  logoutCommand.action(async (_options: unknown, command: Command) => {
      const context = await contextOf(command);
      const { output, profile } = context;
      if (!profile?.token || profile.baseUrl !== context.baseUrl) {
        output.stdout.write(`Not logged in (profile "${context.profileName}").\n`);
        return;
      }
      let note = '';
      try {
        await logout(context.client);
      } catch (error) {
        // A key the server no longer accepts is as good as revoked: forget it all the same.
        if (!(error instanceof PalanqueApiError && error.status === 401)) throw error;
        note = ' (the server no longer accepted it)';
      }
      const latest = await readConfig(context.configFile);
      const stored = latest.profiles[context.profileName];
      if (stored) {
        delete stored.token;
        delete stored.expiresAt;
      }
      await writeConfig(context.configFile, latest);
      if (output.json) printJson(output, { profile: context.profileName, base_url: context.baseUrl, logged_out: true });
      else output.stdout.write(`Logged out of ${context.baseUrl}${note}; the key is revoked and removed from profile "${context.profileName}".\n`);
    });

  const whoami = program.command('whoami').description('Show the user the current key belongs to (operation getUser)');
  withExamples(whoami, ['whoami', 'whoami --profile prod --json   # the user, as getUser answers it', 'whoami --envelope']);
  whoami.action(async (_options: unknown, command: Command) => {
      const context = await contextOf(command);
      const userId = context.options.mock ? 1 : context.profile?.userId;
      if (!context.token || userId === undefined) {
        throw new ReportedFailure(`Not logged in to ${context.baseUrl} (profile "${context.profileName}"): run palanque login`);
      }
      const answer = await context.client.GET('/api/usuario/{user_id}/', { params: { path: { user_id: userId } }, headers: context.headers });
      // Like every API command: the user (getUser's data) with --json, getUser's whole answer with --envelope.
      if (context.output.json) {
        printAnswer(context.output, answer.data);
        return;
      }
      const user = unwrap(answer);
      const profile = context.options.mock ? '(the mock)' : context.profileName;
      printValue(context.output, { profile, server: context.baseUrl, ...user, key_expires_at: context.options.mock ? null : (context.profile?.expiresAt ?? null) });
    });

  const passwordCommand = program
    .command('password')
    .description('Change your own password; your other keys are revoked (operation changePassword)')
    .option('--password-stdin', 'read the current password and then the new one from standard input, one a line (for scripts)');
  withExamples(
    passwordCommand,
    ['password', 'password --profile prod', `printf '%s\\n%s\\n' "$CURRENT" "$NEW" | palanque password --password-stdin`],
    `Asks for the current password, then the new one twice, without echoing them, and changes the password
of the profile's user. The server checks the current one (wrong ones count toward the login lock) and the
new one against the password rules (at least 12 characters by default, not a common password, not the
account's own name). Every other key of the account is revoked; the profile's key keeps working.`,
  );
  passwordCommand.action(async (options: { passwordStdin?: boolean }, command: Command) => {
    const context = await contextOf(command);
    if (!context.token) throw new ReportedFailure(`Not logged in to ${context.baseUrl} (profile "${context.profileName}"): run palanque login`);
    const [current, next] = options.passwordStdin ? await passwordsFromStdin(2) : await askCurrentAndNew();
    const answer = await context.client.POST('/api/auth/change_password/', { body: { current_password: current!, new_password: next! }, headers: context.headers });
    if (context.output.json) {
      printAnswer(context.output, answer.data);
      return;
    }
    const { keys_revoked: revoked } = unwrap(answer);
    context.output.stdout.write(`Password changed; ${revoked} other key${revoked === 1 ? '' : 's'} revoked. The key of profile "${context.profileName}" keeps working.\n`);
  });

  const profiles = withGroupExamples(program.command('profile').description('The profiles of the configuration file: one server and key each'));
  withExamples(profiles.command('list').description('List the profiles (never their keys)'), ['profile list', 'profile list --json'])
    .action(async (_options: unknown, command: Command) => {
      const globals = globalsOf(command);
      const output = outputOf(globals);
      const file = configPath();
      const config = await readConfig(file);
      const current = profileName(config, globals.profile);
      const rows = Object.entries(config.profiles).map(([name, profile]) => ({
        name,
        current: name === current,
        base_url: profile.baseUrl,
        logged_in: Boolean(profile.token),
        username: profile.username ?? null,
        expires_at: profile.expiresAt ?? null,
      }));
      if (output.json) printJson(output, { config_file: file, default_profile: config.defaultProfile ?? null, profiles: rows });
      else {
        printRows(output, rows);
        output.stdout.write(`(${file})\n`);
      }
    });
  withExamples(profiles.command('use <name>').description('Make a profile the default one'), ['profile use prod'])
    .action(async (name: string, _options: unknown, command: Command) => {
      const file = configPath();
      const config = await readConfig(file);
      if (!config.profiles[name]) throw new UsageError(`no profile "${name}" (palanque profile list shows them; palanque login --profile ${name} creates it)`);
      config.defaultProfile = name;
      await writeConfig(file, config);
      outputOf(globalsOf(command)).stdout.write(`Profile "${name}" is now the default.\n`);
    });
  withExamples(
    profiles.command('set <name>').description('Create a profile or change its server (without logging in)').requiredOption('--url <url>', "the server's base URL"),
    ['profile set staging --url https://staging.palanque.app/v1'],
  ).action(async (name: string, options: { url: string }, command: Command) => {
      const file = configPath();
      const config = await readConfig(file);
      const baseUrl = normaliseBaseUrl(options.url);
      const previous = config.profiles[name];
      // A key belongs to its server: a new address drops it.
      config.profiles[name] = previous && previous.baseUrl === baseUrl ? previous : { baseUrl };
      config.defaultProfile ??= name;
      await writeConfig(file, config);
      outputOf(globalsOf(command)).stdout.write(`Profile "${name}" points at ${baseUrl}.\n`);
    });
  withExamples(profiles.command('remove <name>').description('Delete a profile and its key (run palanque logout first to revoke the key)'), ['profile remove staging'])
    .action(async (name: string, _options: unknown, command: Command) => {
      const file = configPath();
      const config = await readConfig(file);
      if (!config.profiles[name]) throw new UsageError(`no profile "${name}"`);
      delete config.profiles[name];
      if (config.defaultProfile === name) delete config.defaultProfile;
      await writeConfig(file, config);
      outputOf(globalsOf(command)).stdout.write(`Profile "${name}" removed.\n`);
    });
}

/** The current password and the new one, typed twice, on the terminal. */
async function askCurrentAndNew(): Promise<[string, string]> {
  const current = await promptPassword('Current password:');
  const next = await promptPassword('New password:');
  if ((await promptPassword('The new password again:')) !== next) throw new UsageError('the two new passwords differ');
  return [current, next];
}
