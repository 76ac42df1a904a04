/**
 * A simulator's HTTP server on 127.0.0.1: every simulator (the SMS provider, the social network, the
 * OAuth provider, the court's panel, the push service) listens and stops the same way.
 */
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Closes the server and the connections still open on it (keep-alive ones would hold it open). */
  stop(): Promise<void>;
}

/** Listens on `port` (default: a free one chosen by the system); rejects if the port is taken. */
export async function listenOnLoopback(handler: RequestListener, port = 0): Promise<LoopbackServer> {
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
