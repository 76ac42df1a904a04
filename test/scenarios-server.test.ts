/**
 * The front end's scenarios (test/scenarios/front-end.ts) against the real server, on the database of
 * this run: SQLite by default, PostgreSQL when TEST_DATABASE_URL is set (CI runs both).
 */
import { createApiClient } from '../sdk/index.js';
import { createAdmin, createUser } from './helpers/accounts.js';
import { startTestApp } from './helpers/app.js';
import { confirmationTokenIn } from './helpers/mail.js';
import { frontEndScenarios } from './scenarios/front-end.js';

frontEndScenarios({
  name: `the real server (${process.env.TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite'})`,
  async start() {
    // With jobs, as a server runs: a campaign's sending is queued (its messages go to no provider here).
    const app = await startTestApp({ withJobs: true, accounts: { signUp: { mode: 'open', linkLifetimeMs: 3600_000, resendIntervalMs: 60_000 } } });
    const admin = await createAdmin(app);
    // An entity of the admin's own, so that the list is not empty before the scenarios create theirs.
    await createApiClient({ baseUrl: app.baseUrl, token: admin.key }).POST('/api/entidade/add/', { body: { nome: 'Maria da Silva Santos' } });
    const newcomer = await createUser(app);
    return {
      baseUrl: app.baseUrl,
      admin: { username: admin.user.username, password: admin.password },
      newcomer: { username: newcomer.user.username, email: newcomer.user.email, password: newcomer.password },
      confirmationToken: (email) => confirmationTokenIn(app.mailDir, email),
      close: () => app.close(),
    };
  },
});
