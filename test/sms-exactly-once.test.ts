/**
 * Each SMS handed to the provider exactly once (src/messaging/sending.ts), against the provider
 * simulator on loopback, with short send timeouts so that every wait is a few seconds:
 * - a provider answering after the send timeout: each recipient gets one message, recorded as accepted
 *   with the provider's sid (before, it was sent again on every try and then failed);
 * - 5xx answers and reset connections, before and after the provider created the message: each
 *   recipient gets one message, and the campaign's statuses and sids are the provider's;
 * - two runs of one job at once, an attempt left pending by a dead process, an unknown outcome on the
 *   job's last try: one call to the provider, or none more when it already took the message;
 * - a campaign whose jobs were never queued is found and sent;
 * - `kill -9` of a real server process in the middle of a campaign, restarted on the same database:
 *   each recipient gets one message;
 * - the adapter's list (pages, filters) and the reconciliation's matching, on their own.
 * Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import type { ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { QueryTypes, type Sequelize } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import type { CampaignRow, MessageRow, SendAttemptRow } from '../src/messaging/models.js';
import { HttpSmsProvider, ProviderError, type ListedSms, type SentSms } from '../src/messaging/provider.js';
import { copiesOf, listSentSince, utcDaysBetween } from '../src/messaging/reconciliation.js';
import { RECONCILE_MARGIN_MS } from '../src/messaging/sending.js';
import { CAMPAIGN_BATCH_SIZE } from '../src/messaging/campaign-sending.js';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';
import { createAdmin, type TestUser } from './helpers/accounts.js';
import { startTestApp, TEST_SMS_SEND_TIMEOUT_MS, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { request } from './helpers/http.js';
import { startInstance, type Instance } from './helpers/instances.js';
import { attempt, freshBody, recipientSource, storeCampaign } from './helpers/sms.js';
import { freePort, waitFor } from './helpers/process.js';

const ACCOUNT = `AC${'7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d'}`;
const TOKEN = '0a1b2c3d4e5f60718293a4b5c6d7e8f9';
const SENDER = '+5511940028922';
/** SMS_SEND_TIMEOUT_MS of the apps here (the test apps' default); a run waits this plus RECONCILE_MARGIN_MS before it asks the provider. */
const SEND_TIMEOUT_MS = TEST_SMS_SEND_TIMEOUT_MS;
/** SMS_SEND_TIMEOUT_MS and JOB_TIMEOUT_SECONDS of the server processes: a killed one's jobs are retried within seconds. */
const PROCESS_SEND_TIMEOUT_MS = 1_000;
const PROCESS_JOB_TIMEOUT_SECONDS = 10;

/** The provider of the app with jobs. */
const provider = new SmsProviderSimulator();
/** The provider of the app without jobs, whose tests run the send job by hand. */
const directProvider = new SmsProviderSimulator();
let app: TestApp;
let direct: TestApp;
let admin: TestUser;
let credentialId: number;
let directAdmin: TestUser;
let directCredentialId: number;

/** This run's mark, in the names of the files it leaves. */
const RUN = String(randomInt(1000)).padStart(3, '0');
/** Fresh Brazilian mobile numbers in E.164. */
const recipients = recipientSource('+5521987');

async function addCredential(target: TestApp, caller: TestUser): Promise<number> {
  const added = await request(target.baseUrl, 'POST', '/api/sms/add_credential/', caller.headers, { name: 'Campanha', account_id: ACCOUNT, sender_id: SENDER, secret: TOKEN });
  expect(added.status, added.text).toBe(201);
  return added.body.data.id as number;
}

async function sendCampaign(to: string[], body: string): Promise<number> {
  const sent = await request(app.baseUrl, 'POST', '/api/sms/list_credentials/', admin.headers, {
    titulo: 'Exatamente uma vez',
    credencial: credentialId,
    mensagem: { recipient_list_str: to.join('\n'), mensagem: body },
  });
  expect(sent.status, sent.text).toBe(201);
  return sent.body.data.id as number;
}

async function messagesOf(target: TestApp, campaignId: number): Promise<MessageRow[]> {
  return (await target.sms.models.Message.findAll({ where: { campaign_id: campaignId }, order: [['id', 'ASC']], raw: true })) as unknown as MessageRow[];
}

async function attemptsOf(target: TestApp, messageIds: number[]): Promise<SendAttemptRow[]> {
  return (await target.sms.models.SendAttempt.findAll({ where: { message_id: messageIds }, order: [['message_id', 'ASC'], ['attempt', 'ASC']], raw: true })) as unknown as SendAttemptRow[];
}

/** Waits until no message of the campaign is queued any more. */
function settled(campaignId: number, timeoutMs = 40_000): Promise<MessageRow[]> {
  return waitFor(
    async () => {
      const messages = await messagesOf(app, campaignId);
      return messages.length > 0 && messages.every((message) => message.status !== 'queued') ? messages : undefined;
    },
    { timeoutMs, intervalMs: 100, what: `the messages of campaign ${campaignId} to leave the queue` },
  );
}

function countBy<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

/**
 * What the provider took with `body` matches the campaign's records: at most one message per recipient
 * (one for each accepted), the per-status counts given, the same sids on both sides, and every message
 * asking for delivery receipts at `callbackUrl`.
 */
function expectRecordsMatchProvider(simulator: SmsProviderSimulator, body: string, messages: MessageRow[], statuses: Record<string, number>, callbackUrl: RegExp) {
  const taken = simulator.messages.filter((message) => message.body === body);
  expect(countBy(taken, (message) => message.to), 'messages the provider took per recipient').toEqual(
    Object.fromEntries(messages.filter((message) => message.status === 'accepted').map((message) => [message.recipient, 1])),
  );
  expect(countBy(messages, (message) => message.status)).toEqual(statuses);
  expect(messages.filter((message) => message.status === 'accepted').map((message) => message.provider_sid).sort()).toEqual(taken.map((message) => message.sid).sort());
  for (const message of taken) expect(message.statusCallback).toMatch(callbackUrl);
}

/** Stores a campaign of one queued message on the app without jobs, as createCampaign does. */
async function queueMessage(recipient: string, body: string): Promise<number> {
  const { messageIds } = await storeCampaign(direct, { credentialId: directCredentialId, createdBy: directAdmin.user.id, body, recipients: [recipient], jobsEnqueuedAt: new Date() });
  return messageIds[0]!;
}

async function messageRow(target: TestApp, id: number): Promise<MessageRow> {
  return (await target.sms.models.Message.findByPk(id, { raw: true })) as unknown as MessageRow;
}

beforeAll(async () => {
  await Promise.all([provider.start(), directProvider.start()]);
  provider.addAccount(ACCOUNT, TOKEN);
  directProvider.addAccount(ACCOUNT, TOKEN);
  [app, direct] = await Promise.all([
    startTestApp({ withJobs: true, selfPublicUrl: true, sms: { providerUrl: provider.url } }),
    startTestApp({ sms: { providerUrl: directProvider.url } }),
  ]);
  [admin, directAdmin] = await Promise.all([createAdmin(app), createAdmin(direct)]);
  [credentialId, directCredentialId] = await Promise.all([addCredential(app, admin), addCredential(direct, directAdmin)]);
});

afterAll(async () => {
  await Promise.all([app?.close(), direct?.close()]);
  await Promise.all([provider.stop(), directProvider.stop()]);
});

// ---------------------------------------------------------------------------------------------------
describe('a campaign through the job queue', () => {
  it('sends once to each recipient when the provider answers after the send timeout, and records its sids as accepted', async () => {
    const to = recipients(4);
    const body = freshBody('Lento');
    const attemptsBefore = provider.attempts;
    provider.answerSendsAfter(SEND_TIMEOUT_MS + 500);
    try {
      const campaignId = await sendCampaign(to, body);
      const messages = await settled(campaignId);
      expectRecordsMatchProvider(provider, body, messages, { accepted: to.length }, /\/api\/callback\/provider_sms\/$/);
      // One call each: every timeout was settled by the provider's list, not by sending again.
      expect(provider.attempts - attemptsBefore).toBe(to.length);
      const attempts = await attemptsOf(app, messages.map((message) => message.id));
      expect(attempts.map((row) => [row.attempt, row.outcome])).toEqual(to.map(() => [1, 'found']));
      expect(attempts.map((row) => row.provider_sid).sort()).toEqual(messages.map((message) => message.provider_sid).sort());
    } finally {
      provider.answerSendsAfter(0);
    }
  }, 60_000);

  it('sends once to each recipient through 5xx answers and reset connections, before and after the provider took the message', async () => {
    const to = recipients(6);
    const body = freshBody('Falhas');
    provider.failNext(
      { status: 503, code: 20503, message: 'Service unavailable' },
      { reset: 'before_creating' },
      { reset: 'after_creating' },
      { status: 500, code: 20500, message: 'Internal Server Error', afterCreating: true },
      { status: 400, code: 21211, message: "The 'To' number is not valid" },
    );
    const campaignId = await sendCampaign(to, body);
    const messages = await settled(campaignId);
    // The refused one failed; the five others reached their recipient once each.
    expectRecordsMatchProvider(provider, body, messages, { accepted: 5, failed: 1 }, /\/api\/callback\/provider_sms\/$/);
    expect(messages.find((message) => message.status === 'failed')).toMatchObject({ error_code: '21211', provider_sid: null });
    const attempts = await attemptsOf(app, messages.map((message) => message.id));
    const outcomes = countBy(attempts, (row) => `${row.attempt}:${row.outcome}`);
    // The two the provider never took were sent again (with the receipts callback, as checked above);
    // the two it took without a usable answer were found in its list.
    expect(outcomes).toEqual({ '1:accepted': 1, '1:refused': 1, '1:found': 2, '1:unknown': 2, '2:accepted': 2 });
  }, 60_000);

  it('records when a campaign\'s jobs were queued, and queues the jobs of a campaign stored by a process that stopped before queueing them', async () => {
    const body = freshBody('Esquecida');
    const queuedCampaign = await sendCampaign(recipients(1), freshBody('Enfileirada'));
    expect(((await app.sms.models.Campaign.findByPk(queuedCampaign, { raw: true })) as unknown as CampaignRow).jobs_enqueued_at).not.toBeNull();
    await settled(queuedCampaign);

    // What createCampaign had committed when its process died: the campaign and its messages, no jobs.
    const to = recipients(2);
    const { campaignId } = await storeCampaign(app, {
      credentialId,
      createdBy: admin.user.id,
      body,
      recipients: to,
      titulo: 'Esquecida',
      createdAt: new Date(Date.now() - 60_000),
      jobsEnqueuedAt: null,
    });

    expect(await app.sms.enqueueForgottenCampaigns()).toBe(1);
    expect(await app.sms.enqueueForgottenCampaigns()).toBe(0);
    const messages = await settled(campaignId);
    expectRecordsMatchProvider(provider, body, messages, { accepted: to.length }, /\/api\/callback\/provider_sms\/$/);
  }, 60_000);
});

describe('a message whose job was lost after its attempt started', () => {
  it('is queued again once stalled, and sent once: the new run settles the earlier attempt first', async () => {
    const [to] = recipients(1);
    const body = freshBody('Parada');
    // What a job's last try leaves when its process dies before the call: attempt 1 pending, no try left.
    const longAgo = new Date(Date.now() - 3_600_000);
    const { campaignId, messageIds } = await storeCampaign(app, {
      credentialId,
      createdBy: admin.user.id,
      body,
      recipients: [to!],
      titulo: 'Parada',
      createdAt: longAgo,
      jobsEnqueuedAt: longAgo,
    });
    const message = { id: messageIds[0]! };
    await app.sms.models.Message.update({ send_attempts: 1, last_attempt_at: longAgo, updated_at: longAgo }, { where: { id: message.id } });
    await app.sms.models.SendAttempt.create({ message_id: message.id, attempt: 1, started_at: longAgo, finished_at: null, outcome: 'pending', provider_sid: null, detail: null });

    expect(await app.sms.enqueueStalledMessages(60_000)).toBe(1);
    const [settledMessage] = await settled(campaignId);
    expectRecordsMatchProvider(provider, body, [settledMessage!], { accepted: 1 }, /\/api\/callback\/provider_sms\/$/);
    expect((await attemptsOf(app, [message.id])).map((row) => [row.attempt, row.outcome])).toEqual([
      [1, 'unknown'],
      [2, 'accepted'],
    ]);
    // Touched when queued, and settled since: the next sweep leaves it alone.
    expect(await app.sms.enqueueStalledMessages(60_000)).toBe(0);
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------------
describe('the send job run by hand', () => {
  it('calls the provider once when two runs of one message start together; the second waits and finds it recorded', async () => {
    const [to] = recipients(1);
    const messageId = await queueMessage(to!, freshBody('Duas vezes'));
    const attemptsBefore = directProvider.attempts;
    directProvider.answerSendsAfter(300);
    try {
      const results = await Promise.all([direct.sms.send(messageId, attempt(1)), direct.sms.send(messageId, attempt(1))]);
      expect(results.map((result) => result.status).sort()).toEqual(['accepted', 'queued']);
    } finally {
      directProvider.answerSendsAfter(0);
    }
    expect(directProvider.attempts - attemptsBefore).toBe(1);
    const sent = directProvider.messages.filter((message) => message.to === to);
    expect(sent).toHaveLength(1);
    expect(await messageRow(direct, messageId)).toMatchObject({ status: 'accepted', provider_sid: sent[0]!.sid, send_attempts: 1 });
    expect((await attemptsOf(direct, [messageId])).map((row) => [row.attempt, row.outcome])).toEqual([[1, 'accepted']]);
  });

  /** A message whose attempt 1 was claimed `startedAgoMs` ago by a process that died in the call. */
  async function leftPending(recipient: string, body: string, startedAgoMs: number): Promise<{ messageId: number; startedAt: Date }> {
    const messageId = await queueMessage(recipient, body);
    const startedAt = new Date(Date.now() - startedAgoMs);
    await direct.sms.models.Message.update({ send_attempts: 1, last_attempt_at: startedAt }, { where: { id: messageId } });
    await direct.sms.models.SendAttempt.create({ message_id: messageId, attempt: 1, started_at: startedAt, finished_at: null, outcome: 'pending', provider_sid: null, detail: null });
    return { messageId, startedAt };
  }

  it('records, without sending again, a message the provider took during an attempt left pending by a dead process', async () => {
    const [to] = recipients(1);
    const body = freshBody('Pendente');
    const { messageId, startedAt } = await leftPending(to!, body, 500);
    // The dead process's call reached the provider.
    const taken = await new HttpSmsProvider(directProvider.url).send({ accountId: ACCOUNT, secret: TOKEN }, { from: SENDER, to: to!, body, statusCallback: undefined });
    const attemptsBefore = directProvider.attempts;
    await expect(direct.sms.send(messageId, attempt(1))).resolves.toEqual({ status: 'accepted' });
    // It waited until the dead call was surely over: the send timeout and the margin since it started.
    expect(Date.now() - startedAt.getTime()).toBeGreaterThanOrEqual(SEND_TIMEOUT_MS + RECONCILE_MARGIN_MS);
    expect(directProvider.attempts).toBe(attemptsBefore);
    expect(await messageRow(direct, messageId)).toMatchObject({ status: 'accepted', provider_sid: taken.sid });
    expect((await attemptsOf(direct, [messageId])).map((row) => [row.attempt, row.outcome, row.provider_sid])).toEqual([[1, 'found', taken.sid]]);
  });

  it('sends once a message whose pending attempt never reached the provider', async () => {
    const [to] = recipients(1);
    const { messageId } = await leftPending(to!, freshBody('Nunca chegou'), 10_000);
    await expect(direct.sms.send(messageId, attempt(1))).resolves.toEqual({ status: 'queued' });
    const sent = directProvider.messages.filter((message) => message.to === to);
    expect(sent).toHaveLength(1);
    expect(await messageRow(direct, messageId)).toMatchObject({ status: 'accepted', provider_sid: sent[0]!.sid, send_attempts: 2 });
    expect((await attemptsOf(direct, [messageId])).map((row) => [row.attempt, row.outcome])).toEqual([
      [1, 'unknown'],
      [2, 'accepted'],
    ]);
  });

  it('settles an unknown outcome on the last try before failing: a 500 after the provider took it is recorded, not failed', async () => {
    const [to] = recipients(1);
    const messageId = await queueMessage(to!, freshBody('Última'));
    directProvider.failNext({ status: 500, code: 20500, message: 'Internal Server Error', afterCreating: true });
    await expect(direct.sms.send(messageId, attempt(5, true))).resolves.toEqual({ status: 'accepted' });
    const sent = directProvider.messages.filter((message) => message.to === to);
    expect(sent).toHaveLength(1);
    expect(await messageRow(direct, messageId)).toMatchObject({ status: 'accepted', provider_sid: sent[0]!.sid, error_code: null });
  });
});

// ---------------------------------------------------------------------------------------------------
describe("the provider adapter's list and the reconciliation's matching", () => {
  it('reads every page of the messages from one sender to one recipient on one day, and nothing else', async () => {
    const [to, other] = recipients(2);
    const account = { accountId: ACCOUNT, secret: TOKEN };
    const adapter = new HttpSmsProvider(directProvider.url, { pageSize: 2 });
    const sent: SentSms[] = [];
    for (let i = 0; i < 5; i += 1) sent.push(await adapter.send(account, { from: SENDER, to: to!, body: `Página ${i}`, statusCallback: undefined }));
    await adapter.send(account, { from: SENDER, to: other!, body: 'Outro destinatário', statusCallback: undefined });
    await adapter.send(account, { from: '+5511940020000', to: to!, body: 'Outro remetente', statusCallback: undefined });
    // One of them was sent yesterday.
    const yesterday = new Date(Date.now() - 24 * 3600_000);
    directProvider.messages.find((message) => message.sid === sent[0]!.sid)!.dateCreated = yesterday;
    const today = new Date().toISOString().slice(0, 10);

    const pagesBefore = directProvider.listRequests;
    const listed = await adapter.list(account, { from: SENDER, to: to!, dateSent: today });
    expect(directProvider.listRequests - pagesBefore).toBe(2);
    expect(listed.map((message) => message.sid).sort()).toEqual(sent.slice(1).map((message) => message.sid).sort());
    expect(listed.every((message) => message.to === to && message.from === SENDER && message.dateCreated.getTime() > 0)).toBe(true);
    expect((await adapter.list(account, { from: SENDER, to: to!, dateSent: yesterday.toISOString().slice(0, 10) })).map((message) => message.sid)).toEqual([sent[0]!.sid]);

    // Over the days since yesterday: all five, once each.
    const since = await listSentSince(adapter, account, { from: SENDER, to: to! }, yesterday);
    expect(since.map((message) => message.sid).sort()).toEqual(sent.map((message) => message.sid).sort());

    await expect(adapter.list({ accountId: ACCOUNT, secret: 'not-the-token' }, { from: SENDER, to: to!, dateSent: today })).rejects.toMatchObject({ outcome: 'refused', code: '20003' });
  });

  it("follows the provider's next_page_uri, whose page token keeps the rest of the list in place while messages are sent", async () => {
    const [to] = recipients(1);
    const account = { accountId: ACCOUNT, secret: TOKEN };
    const adapter = new HttpSmsProvider(directProvider.url);
    for (let i = 0; i < 3; i += 1) await adapter.send(account, { from: SENDER, to: to!, body: `Antes ${i}`, statusCallback: undefined });
    const auth = { Authorization: `Basic ${Buffer.from(`${ACCOUNT}:${TOKEN}`).toString('base64')}` };
    const query = new URLSearchParams({ To: to!, From: SENDER, DateSent: new Date().toISOString().slice(0, 10), PageSize: '2' });
    const first = (await (await fetch(`${directProvider.url}/2010-04-01/Accounts/${ACCOUNT}/Messages.json?${query}`, { headers: auth })).json()) as { messages: Array<{ sid: string }>; next_page_uri: string };
    expect(first.messages).toHaveLength(2);
    expect(first.next_page_uri).toMatch(/^\/2010-04-01\/Accounts\/AC[0-9a-f]{32}\/Messages\.json\?.*Page=1.*&PageToken=PA/);
    await adapter.send(account, { from: SENDER, to: to!, body: 'Durante', statusCallback: undefined });
    const second = (await (await fetch(`${directProvider.url}${first.next_page_uri}`, { headers: auth })).json()) as { messages: Array<{ body: string }>; next_page_uri: string | null };
    expect(second.messages.map((message) => message.body)).toEqual(['Antes 0']);
    expect(second.next_page_uri).toBeNull();
  });

  it('matches a copy on the body and a date_created at or after the second the attempt started, earliest first', () => {
    const startedAt = new Date('2024-06-01T12:00:30.900Z');
    const listed = (entries: Array<[string, string, string]>): ListedSms[] =>
      entries.map(([sid, body, created]) => ({ sid, to: '+5521998000001', from: SENDER, body, status: 'sent', dateCreated: new Date(created) }));
    const copies = copiesOf(
      listed([
        ['SMlate', 'Vote no dia 6!', 'Sat, 01 Jun 2024 12:00:33 +0000'],
        ['SMsame-second', 'Vote no dia 6!', 'Sat, 01 Jun 2024 12:00:30 +0000'],
        ['SMbefore', 'Vote no dia 6!', 'Sat, 01 Jun 2024 12:00:29 +0000'],
        ['SMother-text', 'Vote no dia 7!', 'Sat, 01 Jun 2024 12:00:31 +0000'],
      ]),
      { body: 'Vote no dia 6!', startedAt },
    );
    expect(copies.map((copy) => copy.sid)).toEqual(['SMsame-second', 'SMlate']);
    expect(copiesOf(listed([['SMbefore', 'Vote no dia 6!', 'Sat, 01 Jun 2024 12:00:29 +0000']]), { body: 'Vote no dia 6!', startedAt })).toEqual([]);
  });

  it('asks for each UTC day from the attempt to now', () => {
    expect(utcDaysBetween(new Date('2024-05-31T23:59:59Z'), new Date('2024-06-02T00:00:01Z'))).toEqual(['2024-05-31', '2024-06-01', '2024-06-02']);
    expect(utcDaysBetween(new Date('2024-06-01T00:00:00Z'), new Date('2024-06-01T23:59:59Z'))).toEqual(['2024-06-01']);
  });

  it('tells what a failed send means: refused, not accepted, or unknown', async () => {
    const account = { accountId: ACCOUNT, secret: TOKEN };
    const sms = { from: SENDER, to: recipients(1)[0]!, body: 'Falha', statusCallback: undefined };
    const adapter = new HttpSmsProvider(directProvider.url, { timeoutMs: 300 });
    const outcome = (promise: Promise<unknown>) => promise.then(() => 'sent', (error: unknown) => (error instanceof ProviderError ? error.outcome : String(error)));
    directProvider.failNext({ status: 400, code: 21211, message: 'invalid To' }, { status: 429, code: 20429, message: 'Too Many Requests' }, { status: 503, code: 20503, message: 'unavailable' }, { reset: 'after_creating' });
    expect([await outcome(adapter.send(account, sms)), await outcome(adapter.send(account, sms)), await outcome(adapter.send(account, sms)), await outcome(adapter.send(account, sms))]).toEqual([
      'refused',
      'not_accepted',
      'unknown',
      'unknown',
    ]);
    directProvider.answerSendsAfter(1_000);
    try {
      expect(await outcome(adapter.send(account, sms))).toBe('unknown');
    } finally {
      directProvider.answerSendsAfter(0);
    }
    // Nothing listens there: the request never left.
    expect(await outcome(new HttpSmsProvider(`http://127.0.0.1:${await freePort()}`).send(account, sms))).toBe('not_accepted');
  });
});

// ---------------------------------------------------------------------------------------------------
describe('a server process killed with SIGKILL in the middle of a campaign', () => {
  const ADMIN = { username: 'admin.sms', password: 'uma-senha-bem-longa-para-testes' };
  const slowProvider = new SmsProviderSimulator();
  const children: ChildProcess[] = [];
  let database: TestDatabase;
  let reader: Sequelize;

  /** `src/server.ts` as `npm start` runs it, on the test's database; resolves once it answers HTTP. */
  async function startServer(name: string, extraEnv: Record<string, string> = {}): Promise<Instance> {
    const port = await freePort();
    const server = await startInstance(name, {
      databaseUrl: database.url,
      port,
      readyTimeoutMs: 60_000,
      env: {
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        // No municipality list: this test needs none, and the server starts without one.
        MUNICIPIOS_SOURCE: join(tmpdir(), `no-municipalities-${RUN}.csv`),
        ADMIN_USERNAME: ADMIN.username,
        ADMIN_PASSWORD: ADMIN.password,
        SMS_PROVIDER_URL: slowProvider.url,
        SMS_SEND_TIMEOUT_MS: String(PROCESS_SEND_TIMEOUT_MS),
        JOB_TIMEOUT_SECONDS: String(PROCESS_JOB_TIMEOUT_SECONDS),
        SHUTDOWN_TIMEOUT_MS: '3000',
        ...extraEnv,
      },
    });
    children.push(server.child);
    return server;
  }

  beforeAll(async () => {
    await slowProvider.start();
    slowProvider.addAccount(ACCOUNT, TOKEN);
    database = await createTestDatabase();
  });

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await reader?.close();
    await database?.drop();
    await slowProvider.stop();
  });

  it('sends every message once after a restart on the same database', async () => {
    // One job at a time: the campaign's first batch is in flight at the kill while its second waits queued,
    // so the kill catches both calls in flight and messages never handed over.
    const first = await startServer('first', { JOB_CONCURRENCY: '1' });
    const login = await request(first.baseUrl, 'POST', '/api/auth/login', {}, ADMIN);
    expect(login.status, login.text).toBe(200);
    const headers = { Authorization: `Token ${login.body.data.token}` };
    const credential = await request(first.baseUrl, 'POST', '/api/sms/add_credential/', headers, { name: 'Campanha', account_id: ACCOUNT, sender_id: SENDER, secret: TOKEN });
    expect(credential.status, credential.text).toBe(201);

    // A slow provider (answers 700 ms after the message was created) keeps sends in flight at the kill.
    slowProvider.answerSendsAfter(700);
    const to = recipients(CAMPAIGN_BATCH_SIZE + 20);
    const body = freshBody('Reinício');
    const campaign = await request(first.baseUrl, 'POST', '/api/sms/list_credentials/', headers, {
      titulo: 'Reinício',
      credencial: credential.body.data.id,
      mensagem: { recipient_list_str: to.join('\n'), mensagem: body },
    });
    expect(campaign.status, campaign.text).toBe(201);
    const campaignId = campaign.body.data.id as number;
    await waitFor(() => (slowProvider.messages.filter((message) => message.body === body).length >= 3 ? true : undefined), {
      timeoutMs: 20_000,
      intervalMs: 10,
      what: 'the provider to take three messages',
      output: first.output,
    });
    first.child.kill('SIGKILL');
    expect(await first.exit).toEqual({ code: null, signal: 'SIGKILL' });
    // In the middle: some messages were not even handed over yet.
    expect(slowProvider.messages.filter((message) => message.body === body).length).toBeLessThan(to.length);

    const second = await startServer('second');
    reader = await openDatabase(database.url, pino({ level: 'silent' }));
    const readMessages = () =>
      reader.query<MessageRow>('SELECT id, recipient, status, provider_sid FROM sms_messages WHERE campaign_id = :campaignId ORDER BY id', {
        replacements: { campaignId },
        type: QueryTypes.SELECT,
      });
    const messages = await waitFor(
      async () => {
        const rows = await readMessages();
        return rows.every((row) => row.status !== 'queued') ? rows : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: 'every message of the campaign to leave the queue', output: () => `${first.output()}\n${second.output()}` },
    );
    expectRecordsMatchProvider(slowProvider, body, messages, { accepted: to.length }, /^http:\/\/127\.0\.0\.1:\d+\/api\/callback\/provider_sms\/$/);
    // The kill did catch calls in flight: their messages were found at the provider, not sent again.
    const found = await reader.query<{ n: number }>(
      "SELECT count(*) AS n FROM sms_send_attempts WHERE outcome = 'found' AND message_id IN (SELECT id FROM sms_messages WHERE campaign_id = :campaignId)",
      { replacements: { campaignId }, type: QueryTypes.SELECT },
    );
    expect(Number(found[0]!.n)).toBeGreaterThan(0);

    second.child.kill('SIGTERM');
    expect(await second.exit, second.output()).toEqual({ code: 0, signal: null });
  }, 120_000);
});
