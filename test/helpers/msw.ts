/**
 * The stateful msw mock (sdk/mock/) on Node, for a test file that talks to it through the SDK:
 * listening before the file's tests, its data reset after each one, closed after all of them.
 */
import { setupServer, type SetupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createApiClient, login, PalanqueApiError, type PalanqueClient } from '../../sdk/index.js';
import { createStatefulHandlers, DEFAULT_BASE_URL, DEFAULT_MOCK_PASSWORD } from '../../sdk/msw.js';

export interface StatefulMock {
  mock: ReturnType<typeof createStatefulHandlers>;
  server: SetupServer;
  /** A client of the mock, logged in as one of its demo users (every one has DEFAULT_MOCK_PASSWORD). */
  signedIn(username: string): Promise<PalanqueClient>;
}

/** Starts the mock for the calling test file; a request no handler answers fails the test. */
export function useStatefulMock(): StatefulMock {
  const mock = createStatefulHandlers();
  const server = setupServer(...mock.handlers);
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
  afterEach(() => mock.reset());
  afterAll(() => server.close());
  return {
    mock,
    server,
    async signedIn(username) {
      const client = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
      await login(client, username, DEFAULT_MOCK_PASSWORD);
      return client;
    },
  };
}

/** The PalanqueApiError a call fails with; the test fails if it succeeds or fails otherwise. */
export async function failure(call: Promise<unknown>): Promise<PalanqueApiError> {
  const error = await call.then(() => undefined, (caught: unknown) => caught);
  if (!(error instanceof PalanqueApiError)) throw new Error(`expected a PalanqueApiError, got ${String(error)}`);
  return error;
}
