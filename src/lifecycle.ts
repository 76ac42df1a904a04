/**
 * Graceful shutdown: stop accepting connections, let requests in flight finish within a bound, then
 * release resources (the database). Past the bound, remaining connections are cut.
 */
import type { Server } from 'node:http';
import type { Logger } from './logger.js';

export interface ShutdownOptions {
  timeoutMs: number;
  logger: Logger;
  /** Runs once the server is closed, e.g. closing the database. */
  release: () => Promise<void>;
}

export function createShutdown(server: Server, { timeoutMs, logger, release }: ShutdownOptions): (reason: string) => Promise<void> {
  let shutdown: Promise<void> | undefined;
  return (reason) => {
    shutdown ??= (async () => {
      logger.info({ reason, timeout_ms: timeoutMs }, 'shutting down: finishing requests in flight');
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // A keep-alive connection whose request finishes during shutdown becomes idle afterwards; Node 20
      // does not close it by itself, so keep closing idle connections until the server is closed.
      server.closeIdleConnections();
      const sweeper = setInterval(() => server.closeIdleConnections(), 50);
      sweeper.unref();
      const deadline = setTimeout(() => {
        logger.warn('shutdown timeout reached: closing the remaining connections');
        server.closeAllConnections();
      }, timeoutMs);
      deadline.unref();
      await closed;
      clearInterval(sweeper);
      clearTimeout(deadline);
      await release();
      logger.info('shutdown complete');
    })();
    return shutdown;
  };
}

/**
 * Runs `stop` once on the first SIGINT or SIGTERM, then exits. Ctrl-C in a terminal signals the whole
 * process group (npm, tsx and the server alike), and the wrappers pass it on too: a second signal must not
 * cut the clean-up short.
 */
export function stopOnSignals(stop: (signal: NodeJS.Signals) => Promise<unknown>): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    void stop(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
