/**
 * `npm start`: reads the configuration, starts the server (serve.ts: database, municipality list, first
 * admin, app) and serves the API until SIGTERM or SIGINT. On a terminal it also says, in one plain line,
 * where the API and its documentation are; the logs are JSON lines either way.
 */
import 'dotenv/config';
import { writeSync } from 'node:fs';
import { isatty } from 'node:tty';
import { loadConfigOrExit } from './config.js';
import { stopOnSignals } from './lifecycle.js';
import { createLogger, endLogging } from './logger.js';
import { startLine, startServer } from './serve.js';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config.logLevel);
  const { shutdown, url } = await startServer(config, logger);
  // isatty(1) rather than process.stdout.isTTY, and a synchronous write: touching process.stdout would
  // switch a piped stdout to non-blocking mode under the logger's own writes.
  const line = startLine(url, isatty(1));
  if (line) writeSync(1, `${line}\n`);
  // Exit only once the asynchronous log destination has written everything, in order.
  stopOnSignals((signal) => shutdown(signal).then(() => endLogging(logger)));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
