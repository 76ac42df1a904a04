/**
 * `npm start`: reads the configuration, starts the server (serve.ts: database, municipality list, first
 * admin, app) and serves the API until SIGTERM or SIGINT.
 */
import 'dotenv/config';
import { loadConfigOrExit } from './config.js';
import { stopOnSignals } from './lifecycle.js';
import { createLogger, endLogging } from './logger.js';
import { startServer } from './serve.js';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config.logLevel);
  const { shutdown } = await startServer(config, logger);
  // Exit only once the asynchronous log destination has written everything, in order.
  stopOnSignals((signal) => shutdown(signal).then(() => endLogging(logger)));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
