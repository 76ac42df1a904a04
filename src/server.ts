/**
 * `npm start`: reads the configuration, starts the server (serve.ts: database, municipality list, first
 * admin, app) and serves the API until SIGTERM or SIGINT. On a terminal it also says, in one plain line,
 * where the API and its documentation are; the logs are JSON lines either way.
 */
import 'dotenv/config';
import { writeSync } from 'node:fs';
import { isatty } from 'node:tty';
import { setFlagsFromString } from 'node:v8';
import { loadConfigOrExit } from './config.js';
import { stopOnSignals } from './lifecycle.js';
import { createLogger, endLogging } from './logger.js';
import { startLine, startServer, startupFailure } from './serve.js';
import { stopTracing } from './tracing/shutdown.js';

/**
 * How far V8 lets the heap grow past what survived its last full collection, in percent. Its default
 * grows it up to several times that under a steady load: a server with 60 MiB of live objects held
 * 330 to 400 MiB resident after the benchmark, most of it garbage not yet collected (docs/benchmarks.md,
 * "Memory"). 80% kept it between 190 and 265 MiB, for 2 to 8% of a read's rate and a longer p99 (more
 * full collections); 30% kept it near 200 MiB but cost 6 to 18%. A `--heap-growing-percent` given to
 * node itself wins. Set at run time: V8 reads it each time it sizes the heap after a collection.
 */
const HEAP_GROWING_PERCENT = 80;
// The young generation is capped by `npm start` (package.json: `--max-semi-space-size=8`, MiB per
// semi-space), which V8 reads only at start: its default of 16 grows the new space to 32 MiB under load,
// resident for good. With 8, a bench:profile server ended 12 to 32 MiB smaller (docs/benchmarks.md).
// `npm start` also sets MALLOC_ARENA_MAX=2, which glibc reads only at start: by default each thread
// that allocates (the SQLite binding's and libuv's pool) may get an arena of its own, and the memory
// freed in them stays resident; with two, bench:profile servers ended 10 to 26 MiB smaller, as fast.

function keepHeapNearLive(): void {
  if (process.execArgv.some((argument) => argument.startsWith('--heap-growing-percent'))) return;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

async function main(): Promise<void> {
  keepHeapNearLive();
  const config = loadConfigOrExit();
  const logger = createLogger(config.logLevel);
  let started: Awaited<ReturnType<typeof startServer>>;
  try {
    started = await startServer(config, logger);
  } catch (error) {
    // One JSON line that says what to fix, then exit 1: never a raw stack on stderr.
    const { message, code } = startupFailure(error, config);
    logger.fatal({ code, err: error }, message);
    await endLogging(logger);
    process.exit(1);
  }
  const { shutdown, url } = started;
  // isatty(1) rather than process.stdout.isTTY, and a synchronous write: touching process.stdout would
  // switch a piped stdout to non-blocking mode under the logger's own writes.
  const line = startLine(url, isatty(1));
  if (line) writeSync(1, `${line}\n`);
  // Exit only once the asynchronous log destination has written everything, in order.
  // Then the spans tracing still holds are sent (tracing/shutdown.ts; nothing without tracing).
  stopOnSignals((signal) => shutdown(signal).then(() => stopTracing()).then(() => endLogging(logger)));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
