/**
 * `npm run sandbox [-- --no-simulators]`: starts the sandbox (sandbox.ts) on PORT (default 8000) and
 * prints what a front-end developer needs: the address, the demo users with their passwords and keys,
 * the simulated providers, and how to reset. Stops on Ctrl-C (SIGINT) or SIGTERM, deleting its database.
 */
import 'dotenv/config';
import { writeSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createLogger, endLogging } from '../logger.js';
import { stopOnSignals } from '../lifecycle.js';
import { SeedError } from '../db/seed.js';
import { startSandbox, SANDBOX_ELECTIONS_TOKEN, SANDBOX_SOCIALNET_APP_SECRET, SANDBOX_SOCIALNET_VERIFY_TOKEN, type Sandbox } from './sandbox.js';

const USAGE = `Usage: npm run sandbox [-- --no-simulators]

The real server on a temporary SQLite database seeded with fixtures/, on PORT (default 8000).
  --no-simulators   do not start the simulated SMS provider, elections panel and OAuth providers
Environment: PORT, HOST, SANDBOX_PASSWORD (the demo users' password), MUNICIPIOS_SOURCE, LOG_LEVEL.`;

// Synchronous writes: the banner must be complete before any log line, whatever stdout is.
const print = (text: string) => void writeSync(1, `${text}\n`);

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'no-simulators': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    print(USAGE);
    return;
  }
  // Request logs would bury the banner; LOG_LEVEL=info shows them.
  const logger = createLogger(process.env.LOG_LEVEL || 'warn');
  let sandbox: Sandbox;
  try {
    sandbox = await startSandbox({ logger, simulators: !values['no-simulators'] });
  } catch (error) {
    if (!(error instanceof SeedError)) throw error;
    console.error(error.message);
    await endLogging(logger);
    process.exit(1);
  }
  print(bannerOf(sandbox));
  stopOnSignals(() => sandbox.stop().then(() => endLogging(logger)));
}

function bannerOf(sandbox: Sandbox): string {
  const width = Math.max(...sandbox.users.map((user) => user.username.length));
  const lines = [
    '',
    `Palanque sandbox on ${sandbox.url}  (a temporary SQLite database with the demo data of fixtures/)`,
    '',
    'Demo users (password, then an API key: Authorization: Token <key>):',
    ...sandbox.users.map((user) => `  ${user.username.padEnd(width)}  ${user.password}  ${user.key}${user.isAdmin ? '  (admin)' : ''}`),
    '',
    `Reset to the demo data: POST ${sandbox.url}/api/testes/reset_sandbox/ as an admin, or \`palanque sandbox reset\`.`,
    'The demo users, their passwords and these keys survive every reset; everything else written is undone.',
  ];
  const simulators = sandbox.simulators;
  if (simulators) {
    lines.push(
      '',
      'Simulated providers (on loopback, nothing leaves this machine):',
      `  SMS provider     ${simulators.sms.url}  delivers every message; a recipient answers with`,
      `                   curl -d '{"from":"+5511987654321","body":"SAIR"}' ${simulators.sms.url}/sandbox/replies`,
      `  elections panel  ${simulators.electionsPanel.url}  elections_token: ${SANDBOX_ELECTIONS_TOKEN}`,
      `  searchnet OAuth  ${simulators.searchnet.url}  consents at once as a demo account`,
      `  video OAuth      ${simulators.socialVideo.url}  consents at once as a demo account`,
    );
  }
  lines.push('', `Social network webhook: hub.verify_token ${SANDBOX_SOCIALNET_VERIFY_TOKEN}, app secret ${SANDBOX_SOCIALNET_APP_SECRET}.`, 'Ctrl-C stops the sandbox and deletes its database.', '');
  return lines.join('\n');
}

await main();
