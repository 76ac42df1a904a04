/**
 * The HTTP server around the app, with limits suited to running behind a load balancer:
 * - keep-alive longer than the common 60 s idle timeout of load balancers, so the balancer, not Node,
 *   closes idle connections (otherwise it may reuse a socket Node is closing and get a 502);
 * - headers must arrive within a bound shorter than the request timeout, and stay under a size bound
 *   (431 beyond it);
 * - a whole request must complete within REQUEST_TIMEOUT_MS (408 beyond it).
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import { createServer as createTcpServer } from 'node:net';

const HEADERS_TIMEOUT_MS = 20_000;

export interface ServerLimits {
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxHeaderBytes: number;
}

export function createHttpServer(app: RequestListener, limits: ServerLimits): Server {
  // Node enforces the timeouts on a periodic check (30 s by default); check every second so they hold.
  const server = createServer({ maxHeaderSize: limits.maxHeaderBytes, connectionsCheckingInterval: 1_000 }, app);
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  // Headers get a shorter bound than the whole request: a client that trickles headers is cut early.
  server.headersTimeout = Math.min(HEADERS_TIMEOUT_MS, limits.requestTimeoutMs);
  return server;
}

/** A TCP port that was free a moment ago on 127.0.0.1, for a child process that cannot listen on port 0 and say which it got (Prism). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createTcpServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
