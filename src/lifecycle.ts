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
