/**
 * The stateless part of the front end's scenarios (test/scenarios/front-end.ts) against the Prism mock,
 * as `npm run mock` starts it: it answers the contract's examples and remembers nothing, so the
 * scenarios that need state do not run here.
 */
import { startPrismMock } from './helpers/prism.js';
import { frontEndScenarios } from './scenarios/front-end.js';

frontEndScenarios({
  name: 'the Prism mock',
  stateless: true,
  async start() {
    const mock = await startPrismMock();
    return {
      baseUrl: mock.baseUrl,
      // Prism takes any credentials the contract's schema allows: these are the login example's.
      admin: { username: 'ana.souza', password: 'palanque-sandbox' },
      newcomer: { username: 'joana.lima', email: 'joana.lima@exemplo.com.br', password: 'palanque-sandbox' },
      close: () => mock.stop(),
    };
  },
});
