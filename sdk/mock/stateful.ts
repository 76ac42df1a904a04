/**
 * A stateful in-browser mock: msw handlers over an in-memory store seeded from the demo data (fixtures/,
 * copied into msw-fixtures.json), where what a test writes is there when it reads. A create shows in the
 * list and the get, an update changes what it names, a removal removes; `reset()` goes back to the seed.
 *
 *   import { setupServer } from 'msw/node';
 *   import { createStatefulHandlers, DEFAULT_BASE_URL } from '@palanque/sdk/msw';
 *   const mock = createStatefulHandlers();
 *   const server = setupServer(...mock.handlers);
 *   beforeAll(() => server.listen());
 *   afterEach(() => mock.reset());
 *   // log in as a demo user (password DEFAULT_MOCK_PASSWORD), then use the SDK as against the server
 *
 * What holds, as on the server (the handlers of src/entities, src/accounts, src/research, src/news,
 * src/messaging, src/monitors): the answers' shapes, statuses and messages (the envelope
 * `{ success, data, message, request_id }`, 201 for a create, the error model for 401, 403, 404, 409 and
 * 422, with the same codes, rules and fields); a key issued by login and needed by every ApiKeyAuth
 * operation; the request checks of msw-validation.ts; the team rules in their simplest form (a user sees
 * the entities of their teams, an admin all); issue 11's partial update (a field left out keeps its
 * value, `null` clears it, market-share entries matched by `id`) and the ETag / If-Match rule (409
 * `edit_conflict` on a stale version). What it does not imitate is listed in the README (msw section).
 *
 * The mock is shaped like src/: this module assembles the domains' handlers (one module per domain, in
 * folders named as src/'s) over a small core: the store (store.ts), the demo data read into it and read
 * again by `reset()` (seed.ts), the caller and the team rules (auth.ts), the envelope and the error model
 * (answers.ts), pages (paging.ts) and ETags (etags.ts).
 *
 * Operations without a handler here fall through to the example handlers (msw.ts), which answer the
 * spec's examples.
 */
import type { HttpHandler } from 'msw';
import seedData from '../msw-fixtures.json' with { type: 'json' };
import { accountHandlers } from './accounts/handlers.js';
import { operationHandlers } from './auth.js';
import { chatHandlers } from './chat/handlers.js';
import { courtReadHandlers } from './elections/read-handlers.js';
import { entityHandlers } from './entities/handlers.js';
import { historyHandlers } from './entities/history.js';
import { operatorHandlers } from './entities/team-handlers.js';
import { smsCampaignHandlers } from './messaging/campaign-handlers.js';
import { complianceHandlers } from './messaging/compliance-handlers.js';
import { contactHandlers } from './messaging/contact-handlers.js';
import { smsHandlers } from './messaging/credential-handlers.js';
import { alertRuleHandlers, monitorHandlers } from './monitors/handlers.js';
import { newsHandlers } from './news/handlers.js';
import { notificationHandlers } from './notifications/handlers.js';
import { researchHandlers } from './research/handlers.js';
import { seeded, type StatefulSeed } from './seed.js';

export type { StatefulSeed } from './seed.js';

/** The demo users' password unless `password` says otherwise (the sandbox's default too). */
export const DEFAULT_MOCK_PASSWORD = 'palanque-sandbox';

export interface StatefulOptions {
  /** Absolute base URL the handlers answer on, as given to `createApiClient` (default http://palanque.test). */
  baseUrl?: string;
  /** The demo data to start from (and to go back to on reset); default: fixtures/. */
  seed?: StatefulSeed;
  /** The password of every demo user (default DEFAULT_MOCK_PASSWORD). */
  password?: string;
}

export interface StatefulHandlers {
  /** The stateful handlers; give them to `setupServer` or `setupWorker` before the example handlers. */
  handlers: HttpHandler[];
  /** Back to the seed: every write undone, every key issued forgotten. */
  reset(): void;
  /**
   * The token the confirmation mail to `email` would carry, for a pending sign-up or change of address
   * (the mock mails nothing): what a front end's test gives verifyEmail. Undefined when none is pending.
   */
  confirmationToken(email: string): string | undefined;
}

/** The stateful handlers alone; msw.ts's createStatefulHandlers puts the example handlers behind them. */
export function statefulHandlers({ baseUrl = 'http://palanque.test', seed = seedData, password = DEFAULT_MOCK_PASSWORD }: StatefulOptions = {}): StatefulHandlers {
  let state = seeded(seed);
  // The handlers read `state` at each request, so replacing it resets them all.
  const on = operationHandlers(baseUrl.replace(/\/+$/, ''), () => state);
  const handlers = [
    ...accountHandlers(on, password),
    ...entityHandlers(on),
    ...historyHandlers(on),
    ...operatorHandlers(on),
    ...monitorHandlers(on),
    ...researchHandlers(on),
    ...newsHandlers(on),
    ...smsHandlers(on),
    ...complianceHandlers(on),
    ...smsCampaignHandlers(on),
    ...contactHandlers(on),
    ...chatHandlers(on),
    ...alertRuleHandlers(on),
    ...notificationHandlers(on),
    ...courtReadHandlers(on),
  ];
  return {
    handlers,
    reset() {
      state = seeded(seed);
    },
    confirmationToken(email) {
      const address = email.trim().toLowerCase();
      const waiting = [...state.pendingSignUps, ...state.pendingEmailChanges];
      return waiting.find(([, pending]) => pending.email === address)?.[0];
    },
  };
}
