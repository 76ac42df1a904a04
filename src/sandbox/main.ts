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
import { SeedError } from '../demo/seed.js';
import { bannerOf } from './banner.js';
import { SandboxSettingError, startSandbox, type Sandbox } from './sandbox.js';

const USAGE = `Usage: npm run sandbox [-- --no-simulators]

The real server on a temporary SQLite database seeded with fixtures/, on PORT (default 8000).
  --no-simulators   do not start the simulated SMS provider, elections panel and OAuth providers
Environment: PORT, HOST, SANDBOX_PASSWORD (the demo users' password), SANDBOX_DEMO_KEYS=fixed (the same
demo keys at every start, derived from the usernames and SANDBOX_PASSWORD: for local use only),
CORS_ORIGINS (default: http://localhost:5173, http://localhost:3000 and their 127.0.0.1 forms),
MUNICIPIOS_SOURCE, LOG_LEVEL.`;

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
    if (!(error instanceof SeedError || error instanceof SandboxSettingError)) throw error;
    console.error(error.message);
    await endLogging(logger);
    process.exit(1);
  }
  print(bannerOf(sandbox));
  stopOnSignals(() => sandbox.stop().then(() => endLogging(logger)));
}

await main();
