/**
 * The front end's scenarios (test/scenarios/front-end.ts) against the real server, on the database of
 * this run: SQLite by default, PostgreSQL when TEST_DATABASE_URL is set (CI runs both).
 */
import { createApiClient } from '../sdk/index.js';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';
import { createAdmin, createUser } from './helpers/accounts.js';
import { startTestApp } from './helpers/app.js';
import { confirmationTokenIn } from './helpers/mail.js';
import { frontEndScenarios } from './scenarios/front-end.js';

/** As the demo data has it: a voter's question to the entity's SMS credential, signed as the provider signs it. */
async function voterWrites(baseUrl: string, client: ReturnType<typeof createApiClient>, entityId: number): Promise<void> {
  const account = `AC${'5d4c3b2a19081726354453627180919a'}`;
  const [token, sender] = ['3c2b1a09f8e7d6c5b4a3928170f6e5d4', '+5511940028933'];
  const added = await client.POST('/api/sms/add_credential/', { body: { name: 'Campanha Maria', account_id: account, sender_id: sender, secret: token, entity_id: entityId } });
  if (added.response.status !== 201) throw new Error(`the credential was not added: ${added.response.status}`);
  const provider = new SmsProviderSimulator();
  provider.addAccount(account, token);
  const replied = await provider.sendReply(`${baseUrl}/api/webhook/provider_sms/`, { accountSid: account, from: '+5511987654321', to: sender, body: 'Onde vai ser o próximo comício?' });
  if (replied.status !== 200) throw new Error(`the voter's question was not received: ${replied.status} ${await replied.text()}`);
}

frontEndScenarios({
  name: `the real server (${process.env.TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite'})`,
  async start() {
    // With jobs, as a server runs: a campaign's sending is queued (its messages go to no provider here).
    const app = await startTestApp({ withJobs: true, accounts: { signUp: { mode: 'open', linkLifetimeMs: 3600_000, resendIntervalMs: 60_000 } } });
    const admin = await createAdmin(app);
    // An entity of the admin's own, so that the list is not empty before the scenarios create theirs.
    const client = createApiClient({ baseUrl: app.baseUrl, token: admin.key });
    const entity = await client.POST('/api/entidade/add/', { body: { nome: 'Maria da Silva Santos' } });
    await voterWrites(app.baseUrl, client, entity.data!.data.id);
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
