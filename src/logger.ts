/**
 * Structured JSON logs (pino). Every line has `time` (ISO 8601, UTC), `pid`, `hostname` and `service`;
 * request-scoped lines carry the request id (see http/request-logging.ts).
 */
import { hostname } from 'node:os';
import { pino, type Logger } from 'pino';
import { redactingSerializers, redactOptions } from './log-redaction.js';

export type { Logger };

/**
 * The server's logger. Lines go to stdout asynchronously (lines written while a write is pending are
 * sent together), which matters on the hot read path; endLogging() writes what is pending before exit.
 */
export function createLogger(level: string): Logger {
  return pino(loggerOptions(level), pino.destination({ dest: 1, sync: false }));
}

/**
 * Writes out every pending line (waiting out a full pipe, which pino's flush() does not), then closes
 * the log stream. The last thing a server does before it exits.
 */
export function endLogging(logger: Logger): Promise<void> {
  const destination = (logger as unknown as Record<symbol, ReturnType<typeof pino.destination>>)[pino.symbols.streamSym]!;
  return new Promise((resolve) => {
    destination.once('close', () => resolve());
    destination.end();
  });
}

export function loggerOptions(level: string) {
  return {
    level,
    // Which process of which host wrote the line, when instances' logs are gathered in one place.
    base: { service: 'palanque', pid: process.pid, hostname: hostname() },
    // A time a person and any log store read alike (`2026-11-29T04:00:50.123Z`), not epoch milliseconds.
    timestamp: pino.stdTimeFunctions.isoTime,
    // Credentials must never reach the logs, whatever logs a request or an error (see log-redaction.ts).
    serializers: redactingSerializers,
    redact: redactOptions,
  };
}
