/**
 * The front end's scenarios (test/scenarios/front-end.ts) against the stateful msw handlers of
 * @palanque/sdk/msw on msw/node, as a front end's component tests use them (the contract's examples
 * answer behind them what they do not keep).
 */
import { setupServer } from 'msw/node';
import { createStatefulHandlers, DEFAULT_BASE_URL, DEFAULT_MOCK_PASSWORD } from '../sdk/msw.js';
import { frontEndScenarios } from './scenarios/front-end.js';

frontEndScenarios({
  name: 'the stateful msw handlers',
  async start() {
    const mock = createStatefulHandlers();
    const server = setupServer(...mock.handlers);
    server.listen({ onUnhandledRequest: 'error' });
    return {
      baseUrl: DEFAULT_BASE_URL,
      admin: { username: 'ana.souza', password: DEFAULT_MOCK_PASSWORD },
      // Joana Lima has an account and is in no team of the story (fixtures/README.md).
      newcomer: { username: 'joana.lima', email: 'joana.lima@exemplo.com.br', password: DEFAULT_MOCK_PASSWORD },
      confirmationToken: async (email) => mock.confirmationToken(email)!,
      close: async () => server.close(),
    };
  },
});
