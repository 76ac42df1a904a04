/**
 * `palanque jobs` (issue 43 §1), the built CLI as a platform admin runs it against a test server with a
 * real job queue (the embedded runner on SQLite, pg-boss on PostgreSQL): the counts by queue and state,
 * a queue's dead jobs with their reason, one more try for a dead job (and a 409 for one that is not),
 * and the purge of a canceled campaign's waiting jobs (a 409 while the campaign is not canceled, 404
 * for none), leaving other campaigns' jobs; and a user who is not an admin is refused.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJobQueue, type JobQueue } from '../src/jobs/index.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { buildCli, shown, type BuiltCli } from './helpers/cli.js';
import { waitFor } from './helpers/process.js';
import { storeCampaign } from './helpers/sms.js';

let built: BuiltCli;
let app: TestApp;
let admin: TestUser;
/** A queue that runs nothing (as an api instance's): what it enqueues in a kind nobody works waits. */
let enqueuer: JobQueue;
let healed = false;

const asAdmin = (args: string[]) => built.run(args, { env: { PALANQUE_BASE_URL: app.baseUrl, PALANQUE_TOKEN: admin.key } });

beforeAll(async () => {
  [built, app] = await Promise.all([buildCli(), startTestApp({ withJobs: true })]);
  admin = await createAdmin(app);
  await app.jobs!.register('cli-flaky', async (data) => {
    if (!healed) throw new Error('the provider is down');
    return { sent: data };
  }, { retryLimit: 0, retryDelaySeconds: 1, backoff: false });
  enqueuer = createJobQueue(app.database.url, app.sequelize, pino({ level: 'silent' }), { runJobs: false });
  await enqueuer.start();
  // pg-boss takes jobs only into a queue that exists: created here, worked by nobody.
  await enqueuer.register('cli-waiting', async () => undefined);
}, 180_000);

afterAll(async () => {
  await enqueuer?.stop();
  await app?.close();
  await built?.remove();
});

describe('palanque jobs', () => {
  it('lists the counts, a queue\'s dead jobs with their reason, and retries a dead job once more', async () => {
    const id = await app.jobs!.enqueue('cli-flaky', { message_id: 41 });
    await waitFor(async () => ((await app.jobs!.get('cli-flaky', id))?.state === 'dead' ? true : undefined), { timeoutMs: 20_000, intervalMs: 100, what: 'the job to die' });

    const queues = await asAdmin(['jobs', 'queues', '--json']);
    expect(queues.code, shown(queues)).toBe(0);
    expect(JSON.parse(queues.stdout).queues).toContainEqual({ queue: 'cli-flaky', state: 'dead', jobs: 1 });

    const listed = await asAdmin(['jobs', 'list', 'cli-flaky', '--state', 'dead', '--json']);
    expect(listed.code, shown(listed)).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ queue: 'cli-flaky', state: 'dead', jobs: [{ id, queue: 'cli-flaky', state: 'dead', attempts: 1, data: { message_id: 41 }, error: 'the provider is down' }] });
    const table = await asAdmin(['jobs', 'list', 'cli-flaky', '--state', 'dead']);
    expect(table.code, shown(table)).toBe(0);
    expect(table.stdout).toContain(id);

    const unknown = await asAdmin(['jobs', 'retry', 'cli-flaky', 'c0ffee00-0000-4000-8000-000000000000']);
    expect(unknown.code, shown(unknown)).toBe(3);
    expect(unknown.stderr).toMatch(/Error 404 not_found: Queue cli-flaky has no job/);

    healed = true;
    const retried = await asAdmin(['jobs', 'retry', 'cli-flaky', id, '--json']);
    expect(retried.code, shown(retried)).toBe(0);
    expect(JSON.parse(retried.stdout)).toMatchObject({ id, queue: 'cli-flaky' });
    const done = await waitFor(async () => {
      const job = await app.jobs!.get('cli-flaky', id);
      return job?.state === 'completed' ? job : undefined;
    }, { timeoutMs: 20_000, intervalMs: 100, what: 'the retried job to complete' });
    expect(done.output).toEqual({ sent: { message_id: 41 } });

    const again = await asAdmin(['jobs', 'retry', 'cli-flaky', id]);
    expect(again.code, shown(again)).toBe(3);
    expect(again.stderr).toMatch(/Error 409 conflict: Job .* is completed; only a dead job can be retried/);
    expect(again.stderr).toContain('retryable_state');
  });

  it('purges only a canceled campaign\'s waiting jobs, refusing while it is not canceled', async () => {
    const credential = await app.sms.models.Credential.create({ name: 'SMS', provider: 'twilio', account_id: 'AC0123', sender_id: '+5511900000000', secret_sealed: 'sealed', entity_id: null, created_by: admin.user.id, created_at: new Date() });
    const credentialId = Number(credential.get('id'));
    const stopped = await storeCampaign(app, { credentialId, createdBy: admin.user.id, body: 'Vote', recipients: ['+5521999990001'], jobsEnqueuedAt: new Date() });
    const other = await storeCampaign(app, { credentialId, createdBy: admin.user.id, body: 'Vote', recipients: ['+5521999990002'], jobsEnqueuedAt: new Date() });
    await enqueuer.enqueueMany('cli-waiting', [{ campaign_id: stopped.campaignId, message_id: 1 }, { campaign_id: stopped.campaignId, message_id: 2 }, { campaign_id: other.campaignId, message_id: 3 }]);

    const sending = await asAdmin(['jobs', 'purge', 'cli-waiting', '--campaign-id', String(stopped.campaignId)]);
    expect(sending.code, shown(sending)).toBe(3);
    expect(sending.stderr).toMatch(/Error 409 conflict: Campaign \d+ is sending; only a canceled campaign's jobs can be purged/);
    expect(sending.stderr).toContain('canceled_campaign');

    const none = await asAdmin(['jobs', 'purge', 'cli-waiting', '--campaign-id', '999999']);
    expect(none.code, shown(none)).toBe(3);
    expect(none.stderr).toMatch(/Error 404 not_found: There is no SMS campaign 999999/);

    await app.sms.models.Campaign.update({ state: 'canceled', finished_at: new Date() }, { where: { id: stopped.campaignId } });
    const purged = await asAdmin(['jobs', 'purge', 'cli-waiting', '--campaign-id', String(stopped.campaignId), '--json']);
    expect(purged.code, shown(purged)).toBe(0);
    expect(JSON.parse(purged.stdout)).toEqual({ queue: 'cli-waiting', campaign_id: stopped.campaignId, purged: 2 });
    const twice = await asAdmin(['jobs', 'purge', 'cli-waiting', '--campaign-id', String(stopped.campaignId), '--json']);
    expect(JSON.parse(twice.stdout).purged).toBe(0);

    const left = await asAdmin(['jobs', 'list', 'cli-waiting', '--state', 'queued', '--json']);
    expect(JSON.parse(left.stdout).jobs).toMatchObject([{ data: { campaign_id: other.campaignId, message_id: 3 } }]);
  });

  it('refuses a user who is not a platform admin', async () => {
    const user = await createUser(app);
    const refused = await built.run(['jobs', 'queues'], { env: { PALANQUE_BASE_URL: app.baseUrl, PALANQUE_TOKEN: user.key } });
    expect(refused.code, shown(refused)).toBe(3);
    expect(refused.stderr).toMatch(/Error 403 forbidden/);
  });
});
