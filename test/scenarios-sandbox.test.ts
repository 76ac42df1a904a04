/** The front end's scenarios (test/scenarios/front-end.ts) against the sandbox, as `npm run sandbox` starts it. */
import { pino } from 'pino';
import { startSandbox } from '../src/sandbox/sandbox.js';
import { SHARED_MUNICIPIOS } from './helpers/app.js';
import { confirmationTokenIn } from './helpers/mail.js';
import { freePort } from './helpers/process.js';
import { frontEndScenarios } from './scenarios/front-end.js';

frontEndScenarios({
  name: 'the sandbox',
  async start() {
    const sandbox = await startSandbox({
      logger: pino({ level: 'silent' }),
      environment: { ...process.env, PORT: String(await freePort()), MUNICIPIOS_SOURCE: SHARED_MUNICIPIOS, REDIS_URL: '' },
    });
    const admin = sandbox.users.find((user) => user.isAdmin)!;
    const joana = sandbox.users.find((user) => user.username === 'joana.lima')!;
    return {
      baseUrl: sandbox.url,
      admin: { username: admin.username, password: admin.password },
      // Joana Lima has an account and is in no team of the story (fixtures/README.md).
      newcomer: { username: joana.username, email: 'joana.lima@exemplo.com.br', password: joana.password },
      // The sandbox takes sign-ups (SIGNUP=open) and writes its mail as files.
      confirmationToken: (email) => confirmationTokenIn(sandbox.mailDir, email),
      close: () => sandbox.stop(),
    };
  },
});
