/**
 * Campaign sends take turns (issue 43 §1): a small campaign's first message leaves within 5 s while a
 * campaign of thousands is sending, and canceling a campaign leaves none of its jobs queued. Sends go to
 * the provider simulator over loopback, slowed a little so that the large campaign is still sending when
 * the small one is created, through the real job queue: the table runner on SQLite, pg-boss on
 * PostgreSQL (TEST_DATABASE_URL).
 */
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAdmin, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { request } from './helpers/http.js';
import { waitFor } from './helpers/process.js';
import { randomInt } from 'node:crypto';
import { freshBody, keepWarnMode, storeCampaign } from './helpers/sms.js';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const ACCOUNT = `AC${'5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d'}`;
const AUTH_TOKEN = '0d1c2b3a4f5e6d7c8b9a0f1e2d3c4b5a';
/** Large enough that one job per message (before issue 43) kept a small campaign waiting far beyond 5 s. */
const LARGE = 3_000;
/** Each send is answered this long after it arrives, as a provider over the internet would. */
const PROVIDER_DELAY_MS = 200;

const provider = new SmsProviderSimulator();
/** Mobile numbers +55 31 97 then a run's two digits and a serial of five (thousands per campaign; no other file uses +553197). */
const run = String(randomInt(100)).padStart(2, '0');
let serial = 0;
const numbers = (count: number) => Array.from({ length: count }, () => `+553197${run}${String((serial += 1)).padStart(5, '0')}`);
let app: TestApp;
let admin: TestUser;
let credentialId: number;

async function createCampaign(recipients: string[], body: string): Promise<number> {
  const answer = await request(app.baseUrl, 'POST', '/api/sms/list_credentials/', admin.headers, {
    titulo: 'Vez',
    credencial: credentialId,
    mensagem: { recipient_list_str: recipients.join('\n'), mensagem: body },
  });
  expect(answer.status, answer.text).toBe(201);
  return (answer.body as Json).data.id as number;
}

const sentWith = (body: string) => provider.messages.filter((message) => message.body === body);

/**
 * Sending jobs waiting to run (queued, or awaiting a retry), straight from the queue's table: of either
 * kind, or only a campaign's batch jobs. A batch whose provider calls outlive the send timeout (a loaded
 * machine) hands each message to a per-message job that settles its unknown outcome, even after a cancel:
 * those jobs send nothing new, and another test's campaign may leave some behind, so a cancel's "at once"
 * is judged on the campaign's own batch jobs.
 */
async function waitingSendJobs(batchesOfCampaign?: number): Promise<number> {
  const sequelize = app.sms.models.Message.sequelize!;
  const postgres = sequelize.getDialect() === 'postgres';
  const names = batchesOfCampaign === undefined ? `('sms-send', 'sms-campaign-send')` : `('sms-campaign-send')`;
  const ofCampaign = batchesOfCampaign === undefined ? '' : postgres ? ` AND (data->>'campaign_id')::int = :campaign` : ` AND json_extract(data, '$.campaign_id') = :campaign`;
  const sql = postgres
    ? `SELECT count(*) AS n FROM pgboss.job WHERE name IN ${names} AND state IN ('created', 'retry')${ofCampaign}`
    : `SELECT count(*) AS n FROM jobs WHERE name IN ${names} AND state IN ('queued', 'failed')${ofCampaign}`;
  const [row] = await sequelize.query<{ n: number | string }>(sql, { type: QueryTypes.SELECT, replacements: { campaign: batchesOfCampaign ?? 0 } });
  return Number(row!.n);
}

beforeAll(async () => {
  await provider.start();
  provider.addAccount(ACCOUNT, AUTH_TOKEN);
  provider.answerSendsAfter(PROVIDER_DELAY_MS);
  app = await startTestApp({ withJobs: true, sms: { providerUrl: provider.url } });
  admin = await createAdmin(app);
  const entityId = await app.entities.store.create('candidato', admin.user.id, { nome: 'Ana Lima' });
  // Sending is under test here, not the electoral rules.
  await keepWarnMode(app, entityId);
  const added = await request(app.baseUrl, 'POST', '/api/sms/add_credential/', admin.headers, { name: 'Vez', account_id: ACCOUNT, sender_id: '11940028933', secret: AUTH_TOKEN, entity_id: entityId });
  expect(added.status, added.text).toBe(201);
  credentialId = (added.body as Json).data.id;
});

afterAll(async () => {
  await app?.close();
  await provider.stop();
});

it(`sends a 3-number campaign's first message within 5 s while a campaign of ${LARGE.toLocaleString('en')} is sending`, async () => {
  const largeBody = freshBody('Grande');
  const large = await createCampaign(numbers(LARGE), largeBody);
  await waitFor(async () => (sentWith(largeBody).length > 0 ? true : undefined), { timeoutMs: 15_000, intervalMs: 20, what: 'the large campaign to start sending' });

  const smallBody = freshBody('Pequena');
  const created = Date.now();
  await createCampaign(numbers(3), smallBody);
  await waitFor(async () => (sentWith(smallBody).length > 0 ? true : undefined), { timeoutMs: 5_000, intervalMs: 20, what: "the small campaign's first message" });
  const waited = Date.now() - created;
  // Taken while the large one still had messages to send: it was not simply over.
  const largeSent = sentWith(largeBody).length;
  expect(largeSent, `${largeSent} of the large campaign's messages were sent when the small one's first left`).toBeLessThan(LARGE);
  expect(waited).toBeLessThan(5_000);
  // The small campaign is sent entirely, the large one keeps going, and nothing is sent twice.
  await waitFor(async () => (sentWith(smallBody).length === 3 ? true : undefined), { timeoutMs: 10_000, intervalMs: 50, what: 'the whole small campaign' });
  const canceled = await request(app.baseUrl, 'POST', `/api/sms/campaigns/${large}/cancel/`, admin.headers);
  expect(canceled.status, canceled.text).toBe(200);
  // A batch under way ends its provider calls first (the next test holds the cancel to 2 s); CI's loaded cores took over 3 s.
  await waitFor(async () => ((await waitingSendJobs()) === 0 ? true : undefined), { timeoutMs: 15_000, intervalMs: 50, what: 'no sending job left' });
  const recipients = sentWith(largeBody).map((message) => message.to);
  expect(new Set(recipients).size).toBe(recipients.length);
});

it('leaves no job of a canceled campaign queued, and sends none of its messages afterwards', async () => {
  const body = freshBody('Cancelada');
  const campaign = await createCampaign(numbers(LARGE), body);
  await waitFor(async () => (sentWith(body).length > 0 ? true : undefined), { timeoutMs: 15_000, intervalMs: 20, what: 'the campaign to start sending' });

  const canceled = await request(app.baseUrl, 'POST', `/api/sms/campaigns/${campaign}/cancel/`, admin.headers);
  expect(canceled.status, canceled.text).toBe(200);
  expect((canceled.body as Json).data.state).toBe('canceled');
  // At once: a batch that was running when the cancel came may queue the campaign's next batch, and
  // purges it itself when it sees the cancel (campaign-sending.ts); no job of the campaign is left to drain.
  await waitFor(async () => ((await waitingSendJobs(campaign)) === 0 ? true : undefined), { timeoutMs: 2_000, intervalMs: 20, what: 'no batch job of the canceled campaign left queued' });

  // The batches under way end (each call within the send timeout), and nothing more is sent.
  await waitFor(async () => ((await app.sms.models.Message.count({ where: { campaign_id: campaign, status: 'queued' } })) === 0 ? true : undefined), {
    timeoutMs: 10_000,
    intervalMs: 50,
    what: 'no message of the canceled campaign still queued',
  });
  const sentThen = sentWith(body).length;
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(sentWith(body).length).toBe(sentThen);
  expect(sentThen).toBeLessThan(LARGE);
  const notSent = await app.sms.models.Message.count({ where: { campaign_id: campaign, status: 'canceled' } });
  expect(notSent + sentThen).toBe(LARGE);
  expect(await waitingSendJobs(campaign)).toBe(0);
  // The per-message jobs settling calls that outlived the timeout, if any, end too.
  await waitFor(async () => ((await waitingSendJobs()) === 0 ? true : undefined), { timeoutMs: 15_000, intervalMs: 50, what: 'no sending job left' });
});

it('queues again a campaign whose chain of batch jobs broke, once no batch was queued for a while', async () => {
  const body = freshBody('Retomada');
  const recipients = numbers(5);
  // Sending, its last batch job queued 10 minutes ago, and no job left: as when a batch's last try died.
  const { campaignId } = await storeCampaign(app, { credentialId, createdBy: admin.user.id, body, recipients, jobsEnqueuedAt: new Date(Date.now() - 600_000) });
  const recent = await storeCampaign(app, { credentialId, createdBy: admin.user.id, body: freshBody('Recente'), recipients: numbers(1), jobsEnqueuedAt: new Date() });
  expect(await app.sms.enqueueStalledCampaigns(60_000)).toBe(1);
  await waitFor(async () => (sentWith(body).length === recipients.length ? true : undefined), { timeoutMs: 15_000, intervalMs: 50, what: 'the stalled campaign sent' });
  // Sent, nothing of it is left untried; the other's batch was queued a moment ago: the sweep leaves both alone.
  expect(await app.sms.enqueueStalledCampaigns(60_000)).toBe(0);
  expect(await app.sms.models.Message.count({ where: { campaign_id: recent.campaignId, status: 'queued' } })).toBe(1);
  expect(new Set(sentWith(body).map((message) => message.to))).toEqual(new Set(recipients));
});
