// The API, mocked for every component test: the stateful handlers (what a test writes is there when
// it reads; the contract's examples answer behind them what they do not keep).
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { cleanup } from '@testing-library/react';
import { createStatefulHandlers } from '@palanque/sdk/msw';

export const mock = createStatefulHandlers();
export const server = setupServer(...mock.handlers);

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  cleanup();
  server.resetHandlers();
  mock.reset();
});
afterAll(() => server.close());
