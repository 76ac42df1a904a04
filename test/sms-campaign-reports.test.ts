/**
 * Campaign reports (issue 23; src/messaging/campaign-reports.ts) against the provider simulator over
 * loopback:
 * - a campaign sent through the job queue becomes `completed` once the provider's receipts give each
 *   message a final status, with its counts, its cost from the receipts' prices, its per-recipient
 *   statuses and their CSV, whole for the entity's owner and masked for its operators;
 * - a campaign whose last message never gets a receipt becomes `completed` by the sweep once
 *   SMS_RECEIPT_TIMEOUT_HOURS passed;
 * - a cancel in the middle of a campaign (the send job run by hand): the messages not handed over are
 *   canceled, the one in flight is settled by the exactly-once protocol, found at the provider or
 *   canceled, and no recipient gets a message twice;
 * - who may read and cancel: every team role reads, viewers may not cancel, strangers see nothing (404).
 * Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageRow } from '../src/messaging/models.js';
import { CANCELED_WITH_CAMPAIGN } from '../src/messaging/statuses.js';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';
import { waitFor } from './helpers/process.js';
import { attempt, freshBody, recipientSource, storeCampaign, keepWarnMode } from './helpers/sms.js';

const ACCOUNT = `AC${'5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b'}`;
const TOKEN = '1f2e3d4c5b6a79880f1e2d3c4b5a6978';
const SENDER = '+5511940028922';
const HOUR_MS = 3_600_000;

/** The provider of the app with jobs, and that of the app without, whose tests run the send job by hand. */
const provider = new SmsProviderSimulator();
const directProvider = new SmsProviderSimulator();

interface Team {
  entityId: number;
  credentialId: number;
  owner: TestUser;
  operator: TestUser;
  viewer: TestUser;
  stranger: TestUser;
}

let app: TestApp;
let direct: TestApp;
let team: Team;
let directTeam: Team;

/** Fresh Brazilian mobile numbers in E.164. */
const recipients = recipientSource('+5521986');
const masked = (phone: string) => `+55*******${phone.slice(-4)}`;

async function teamOn(target: TestApp): Promise<Team> {
  const admin = await createAdmin(target);
  const [owner, operator, viewer, stranger] = await Promise.all([createUser(target), createUser(target), createUser(target), createUser(target)]);
  const entityId = await target.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
  await keepWarnMode(target, entityId);
  for (const [member, role] of [[operator, 'operator'], [viewer, 'viewer']] as const) {
    await target.entities.models.Member.create({ entity_id: entityId, user_id: member.user.id, role, added_at: new Date() });
  }
  const added = await request(target.baseUrl, 'POST', '/api/sms/add_credential/', admin.headers, { name: 'Campanha', account_id: ACCOUNT, sender_id: SENDER, secret: TOKEN, entity_id: entityId });
  expect(added.status, added.text).toBe(201);
  return { entityId, credentialId: added.body.data.id, owner, operator, viewer, stranger };
}

const get = (target: TestApp, caller: TestUser, path: string) => request(target.baseUrl, 'GET', path, caller.headers);
const post = (target: TestApp, caller: TestUser, path: string, body?: unknown) => request(target.baseUrl, 'POST', path, caller.headers, body);

async function messagesOf(target: TestApp, campaignId: number): Promise<MessageRow[]> {
  return (await target.sms.models.Message.findAll({ where: { campaign_id: campaignId }, order: [['id', 'ASC']], raw: true })) as unknown as MessageRow[];
}

async function exportOf(target: TestApp, caller: TestUser, campaignId: number): Promise<{ status: number; headers: Headers; lines: string[] }> {
  const response = await fetch(`${target.baseUrl}/api/sms/campaigns/${campaignId}/messages/export/`, { headers: caller.headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, lines: text.split('\r\n') };
}

/** A campaign of queued messages on the app without jobs, as createCampaign stores it for the entity. */
async function directCampaign(to: string[], body: string): Promise<{ campaignId: number; messageIds: number[] }> {
  const stored = await storeCampaign(direct, { credentialId: directTeam.credentialId, createdBy: directTeam.operator.user.id, body, recipients: to, jobsEnqueuedAt: new Date() });
  await direct.sms.models.Campaign.update({ entity_id: directTeam.entityId, state: 'sending' }, { where: { id: stored.campaignId } });
  return stored;
}

/** A signed receipt from the direct app's provider (its messages carry no callback address). */
const directReceipt = (sid: string, status: string) => directProvider.sendReceipt(sid, status, { url: `${direct.baseUrl}/api/callback/provider_sms/` });

beforeAll(async () => {
  await Promise.all([provider.start(), directProvider.start()]);
  provider.addAccount(ACCOUNT, TOKEN);
  directProvider.addAccount(ACCOUNT, TOKEN);
  [app, direct] = await Promise.all([
    startTestApp({ withJobs: true, selfPublicUrl: true, sms: { providerUrl: provider.url } }),
    startTestApp({ sms: { providerUrl: directProvider.url } }),
  ]);
  [team, directTeam] = await Promise.all([teamOn(app), teamOn(direct)]);
});

afterAll(async () => {
  await Promise.all([app?.close(), direct?.close()]);
  await Promise.all([provider.stop(), directProvider.stop()]);
});

describe('a campaign completed by its receipts', () => {
  let campaignId: number;
  let to: string[];

  it('counts the messages by status as receipts come, and completes the campaign with the last final one, priced', async () => {
    provider.reportPrices({ perSegment: '-0.00750', unit: 'USD' });
    to = recipients(4);
    // The fourth number opted out of the entity's campaigns: skipped, and counted as opted out.
    await app.sms.optOuts.record([team.entityId], to[3]!, { source: 'reply', keyword: 'SAIR' });
    const sent = await post(app, team.operator, '/api/sms/list_credentials/', { titulo: 'Comício', credencial: team.credentialId, mensagem: { recipient_list_str: to.join('\n'), mensagem: freshBody('Comício hoje') } });
    expect(sent.status, sent.text).toBe(201);
    campaignId = sent.body.data.id;

    const handed = await waitFor(async () => {
      const messages = await messagesOf(app, campaignId);
      return messages.every((message) => message.provider_sid) ? messages : undefined;
    }, { timeoutMs: 15_000, intervalMs: 100, what: 'the three messages handed to the provider' });
    const report = await get(app, team.owner, `/api/sms/campaigns/${campaignId}/`);
    expect(report.status, report.text).toBe(200);
    expect(report.body.data).toMatchObject({
      id: campaignId,
      state: 'sending',
      entity_id: team.entityId,
      accepted: 3,
      opted_out_skipped: 1,
      sent_by: { id: team.operator.user.id, display_name: `${team.operator.user.first_name} ${team.operator.user.last_name}` },
      finished_at: null,
      canceled_by: null,
      messages: { queued: 0, sending: 3, sent: 0, delivered: 0, undelivered: 0, failed: 0, canceled: 0, opted_out: 1 },
      cost: [],
    });

    const [first, second, third] = handed.map((message) => message.provider_sid!);
    for (const [sid, status] of [[first, 'sent'], [first, 'delivered'], [second, 'sent']] as const) expect((await provider.sendReceipt(sid!, status)).status).toBe(200);
    // An undelivered message: the simulator's receipt with the carrier's error code.
    expect((await provider.sendReceipt(third!, 'undelivered', { errorCode: '30005' })).status).toBe(200);
    const midway = (await get(app, team.viewer, `/api/sms/campaigns/${campaignId}/`)).body.data;
    expect(midway).toMatchObject({ state: 'sending', messages: { sending: 0, sent: 1, delivered: 1, undelivered: 1, opted_out: 1 } });

    expect((await provider.sendReceipt(second!, 'delivered')).status).toBe(200);
    const done = (await get(app, team.viewer, `/api/sms/campaigns/${campaignId}/`)).body.data;
    expect(done).toMatchObject({
      state: 'completed',
      finished_at: expect.any(String),
      messages: { queued: 0, sending: 0, sent: 0, delivered: 2, undelivered: 1, failed: 0, canceled: 0, opted_out: 1 },
      cost: [{ currency: 'USD', amount: '0.02250', messages: 3 }],
    });
    // A late receipt applies to its message and leaves the campaign as it was.
    expect(((await (await provider.sendReceipt(first!, 'read')).json()) as { data: { applied: boolean } }).data.applied).toBe(true);
    expect((await get(app, team.owner, `/api/sms/campaigns/${campaignId}/`)).body.data).toMatchObject({ state: 'completed', finished_at: done.finished_at, messages: { delivered: 2 } });
    provider.reportPrices(undefined);
  });

  it("lists the entity's campaigns newest first, by state, to every team role and to nobody else", async () => {
    const newer = await post(app, team.owner, '/api/sms/list_credentials/', { titulo: 'Outra', credencial: team.credentialId, mensagem: { recipient_list_str: recipients(1)[0]!, mensagem: freshBody('Outra') } });
    expect(newer.status).toBe(201);
    for (const caller of [team.owner, team.operator, team.viewer]) {
      const listed = await get(app, caller, `/api/sms/campaigns/?entity_id=${team.entityId}`);
      expect(listed.status, listed.text).toBe(200);
      expect(listed.body.data.results.map((campaign: { id: number }) => campaign.id)).toEqual([newer.body.data.id, campaignId]);
      expect(listed.body.data).toMatchObject({ count: 2, total_pages: 1, links: { next: null, previous: null } });
    }
    const completed = await get(app, team.owner, `/api/sms/campaigns/?entity_id=${team.entityId}&state=completed`);
    expect(completed.body.data.results).toEqual([expect.objectContaining({ id: campaignId, cost: [{ currency: 'USD', amount: '0.02250', messages: 3 }] })]);
    expect((await get(app, team.owner, `/api/sms/campaigns/?entity_id=${team.entityId}&state=canceled`)).body.data).toMatchObject({ count: 0, results: [] });
    expectError(await get(app, team.stranger, `/api/sms/campaigns/?entity_id=${team.entityId}`), 404, 'not_found');
    expectError(await get(app, team.owner, `/api/sms/campaigns/?entity_id=${team.entityId}&page=2`), 404, 'not_found');
    expectError(await get(app, team.owner, `/api/sms/campaigns/?entity_id=${team.entityId}&state=done`), 400, 'bad_request');
    expectError(await get(app, team.owner, '/api/sms/campaigns/'), 400, 'bad_request');
  });

  it('lists the messages, one per recipient, with whole numbers for the owner and masked ones for operators and viewers', async () => {
    const whole = await get(app, team.owner, `/api/sms/campaigns/${campaignId}/messages/`);
    expect(whole.status, whole.text).toBe(200);
    expect(whole.body.data.results.map((message: { recipient: string; status: string }) => [message.recipient, message.status])).toEqual([
      [to[0], 'delivered'],
      [to[1], 'delivered'],
      [to[2], 'undelivered'],
    ]);
    expect(whole.body.data.results[0]).toMatchObject({ provider_status: 'read', price: '0.00750', price_unit: 'USD', contact_id: null, error_code: null });
    for (const caller of [team.operator, team.viewer]) {
      const maskedPage = await get(app, caller, `/api/sms/campaigns/${campaignId}/messages/`);
      expect(maskedPage.body.data.results.map((message: { recipient: string }) => message.recipient)).toEqual(to.slice(0, 3).map(masked));
      expect(maskedPage.text).not.toContain(to[0]!.slice(3, 10));
    }
    const undelivered = await get(app, team.operator, `/api/sms/campaigns/${campaignId}/messages/?status=undelivered`);
    expect(undelivered.body.data).toMatchObject({ count: 1, results: [{ recipient: masked(to[2]!), status: 'undelivered', error_code: '30005' }] });
    expectError(await get(app, team.stranger, `/api/sms/campaigns/${campaignId}/messages/`), 404, 'not_found');
    expectError(await get(app, team.owner, `/api/sms/campaigns/${campaignId}/messages/?page=2`), 404, 'not_found');
  });

  it('exports the messages as CSV, masked as the list masks them', async () => {
    const whole = await exportOf(app, team.owner, campaignId);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(whole.headers.get('content-disposition')).toBe(`attachment; filename="campanha-${campaignId}-mensagens.csv"`);
    expect(whole.lines[0]).toBe('id,recipient,contact_id,status,provider_status,error_code,error_message,price,price_unit,updated_at');
    expect(whole.lines.at(-1)).toBe('');
    const rows = whole.lines.slice(1, -1).map((line) => line.split(','));
    expect(rows.map((row) => [row[1], row[3], row[4], row[5], row[7], row[8]])).toEqual([
      [to[0], 'delivered', 'read', '', '0.00750', 'USD'],
      [to[1], 'delivered', 'delivered', '', '0.00750', 'USD'],
      [to[2], 'undelivered', 'undelivered', '30005', '0.00750', 'USD'],
    ]);
    const operatorCsv = await exportOf(app, team.operator, campaignId);
    expect(operatorCsv.lines.slice(1, -1).map((line) => line.split(',')[1])).toEqual(to.slice(0, 3).map(masked));
    expect(operatorCsv.lines.join('\n')).not.toContain(to[0]);
    const stranger = await fetch(`${app.baseUrl}/api/sms/campaigns/${campaignId}/messages/export/`, { headers: team.stranger.headers });
    expect(stranger.status).toBe(404);
    expect(((await stranger.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('refuses to cancel a completed campaign (409), and tells a stranger nothing (404)', async () => {
    const refused = await post(app, team.owner, `/api/sms/campaigns/${campaignId}/cancel/`);
    expectError(refused, 409, 'conflict');
    expect(refused.body.error.details).toEqual([{ location: 'path', field: 'campaign_id', rule: 'cancelable_state', message: 'must be a queued or sending campaign', value: 'completed' }]);
    for (const path of [`/api/sms/campaigns/${campaignId}/`, '/api/sms/campaigns/999999/']) {
      const unknown = await get(app, team.stranger, path);
      expectError(unknown, 404, 'not_found');
      expect(unknown.body.error.details[0]).toMatchObject({ location: 'path', field: 'campaign_id', rule: 'in_your_teams' });
    }
    expectError(await post(app, team.stranger, `/api/sms/campaigns/${campaignId}/cancel/`), 404, 'not_found');
    expectError(await get(app, team.owner, '/api/sms/campaigns/abc/'), 400, 'bad_request');
  });
});

describe('who reaches a campaign by its id', () => {
  it("lets a platform admin read any campaign, keeps a campaign without an entity to platform admins, and answers an unknown id as a stranger's", async () => {
    const admin = await createAdmin(direct);
    const { campaignId } = await directCampaign(recipients(1), freshBody('Acesso'));
    // An admin outside the team reads the report and the messages; so do the team's roles; a stranger does not.
    for (const caller of [admin, directTeam.owner, directTeam.viewer]) {
      const report = await get(direct, caller, `/api/sms/campaigns/${campaignId}/`);
      expect(report.status, report.text).toBe(200);
      expect(report.body.data).toMatchObject({ id: campaignId, state: 'sending', messages: { queued: 1 } });
      expect((await get(direct, caller, `/api/sms/campaigns/${campaignId}/messages/`)).status).toBe(200);
    }
    expectError(await get(direct, directTeam.stranger, `/api/sms/campaigns/${campaignId}/`), 404, 'not_found');
    // A campaign whose credential has no entity: the platform admins' alone, even for a team's owner.
    await direct.sms.models.Campaign.update({ entity_id: null }, { where: { id: campaignId } });
    expect((await get(direct, admin, `/api/sms/campaigns/${campaignId}/`)).status).toBe(200);
    expect((await get(direct, admin, `/api/sms/campaigns/${campaignId}/messages/`)).status).toBe(200);
    for (const caller of [directTeam.owner, directTeam.stranger]) {
      expectError(await get(direct, caller, `/api/sms/campaigns/${campaignId}/`), 404, 'not_found');
      expectError(await get(direct, caller, `/api/sms/campaigns/${campaignId}/messages/`), 404, 'not_found');
    }
    // The largest id the contract takes: no campaign, the same 404.
    const largest = await get(direct, admin, '/api/sms/campaigns/2147483647/');
    expectError(largest, 404, 'not_found');
    expect(largest.body.error.details[0]).toMatchObject({ field: 'campaign_id', rule: 'in_your_teams', value: 2147483647 });
  });
});

describe('a campaign completed by the receipt timeout', () => {
  it('completes once its last message waited SMS_RECEIPT_TIMEOUT_HOURS for a receipt, and not before', async () => {
    const to = recipients(3);
    const { campaignId, messageIds } = await directCampaign(to, freshBody('Sem recibo'));
    for (const id of messageIds) await direct.sms.send(id, attempt(1));
    const [first, second] = await messagesOf(direct, campaignId);
    expect((await messagesOf(direct, campaignId)).map((row) => row.status)).toEqual(['accepted', 'accepted', 'accepted']);
    expect((await directReceipt(first!.provider_sid!, 'delivered')).status).toBe(200);
    expect((await directReceipt(second!.provider_sid!, 'sent')).status).toBe(200);
    // One sent, one still only accepted (no receipt ever came for it), neither for long.
    expect(await direct.sms.reports.completeFinishedCampaigns()).toBe(0);
    expect(direct.sms.reports.receiptTimeoutMs).toBe(72 * HOUR_MS);

    // 71 hours later: still waiting.
    const past = (hours: number) => new Date(Date.now() - hours * HOUR_MS);
    await direct.sms.models.Message.update({ updated_at: past(71) }, { where: { id: messageIds.slice(1) } });
    expect(await direct.sms.reports.completeFinishedCampaigns()).toBe(0);
    expect((await get(direct, directTeam.owner, `/api/sms/campaigns/${campaignId}/`)).body.data.state).toBe('sending');

    await direct.sms.models.Message.update({ updated_at: past(73) }, { where: { id: messageIds.slice(1) } });
    expect(await direct.sms.reports.completeFinishedCampaigns()).toBe(1);
    const report = (await get(direct, directTeam.owner, `/api/sms/campaigns/${campaignId}/`)).body.data;
    // Completed, each message still counted as what it is.
    expect(report).toMatchObject({ state: 'completed', finished_at: expect.any(String), messages: { sending: 1, sent: 1, delivered: 1 } });
    expect(await direct.sms.reports.completeFinishedCampaigns()).toBe(0);
    // The finished campaign keeps its tally, so its reads count nothing; a late receipt counts it again.
    const tallied = async () => JSON.parse(((await direct.sms.models.Campaign.findByPk(campaignId, { raw: true })) as unknown as { tally: string }).tally);
    expect((await tallied()).counts).toEqual(expect.arrayContaining([{ status: 'sending', count: 1 }, { status: 'sent', count: 1 }, { status: 'delivered', count: 1 }]));
    expect((await directReceipt(second!.provider_sid!, 'delivered')).status).toBe(200);
    expect((await tallied()).counts).toEqual(expect.arrayContaining([{ status: 'sending', count: 1 }, { status: 'delivered', count: 2 }]));
    const late = (await get(direct, directTeam.owner, `/api/sms/campaigns/${campaignId}/`)).body.data;
    expect(late).toMatchObject({ state: 'completed', finished_at: report.finished_at, messages: { sending: 1, sent: 0, delivered: 2 } });
  });
});

describe('a campaign canceled midway', () => {
  it('cancels the messages not handed over, settles the one in flight through the exactly-once protocol, and sends nothing twice', async () => {
    const to = recipients(5);
    const body = freshBody('Cancelada');
    const { campaignId, messageIds } = await directCampaign(to, body);
    const attemptsBefore = directProvider.attempts;
    // 1: sent. 2: taken by the provider, but its answer was lost (a 500 after creating it). 3: the
    // provider failed before taking it. Both 2 and 3 are left queued with an attempt whose outcome is unknown.
    await direct.sms.send(messageIds[0]!, attempt(1));
    directProvider.failNext({ status: 500, code: 20500, message: 'Internal Server Error', afterCreating: true }, { status: 503, code: 20503, message: 'Service unavailable' });
    await expect(direct.sms.send(messageIds[1]!, attempt(1))).rejects.toThrow();
    await expect(direct.sms.send(messageIds[2]!, attempt(1))).rejects.toThrow();

    // A viewer may read it but not cancel it.
    expectError(await post(direct, directTeam.viewer, `/api/sms/campaigns/${campaignId}/cancel/`), 403, 'forbidden');
    const canceled = await post(direct, directTeam.operator, `/api/sms/campaigns/${campaignId}/cancel/`);
    expect(canceled.status, canceled.text).toBe(200);
    expect(canceled.body.message).toBe(`Campaign ${campaignId} was canceled; 2 messages were not sent.`);
    expect(canceled.body.data).toMatchObject({
      state: 'canceled',
      finished_at: expect.any(String),
      canceled_by: { id: directTeam.operator.user.id },
      messages: { queued: 2, sending: 1, canceled: 2 },
    });
    const rows = await messagesOf(direct, campaignId);
    expect(rows.map((row) => row.status)).toEqual(['accepted', 'queued', 'queued', 'canceled', 'canceled']);
    expect(rows[3]).toMatchObject({ error_message: CANCELED_WITH_CAMPAIGN, send_attempts: 0, provider_sid: null });

    // Their jobs run again: 2 is found at the provider and kept, 3 is canceled; 4 and 5 are left alone.
    expect(await direct.sms.send(messageIds[1]!, attempt(2))).toEqual({ status: 'accepted' });
    expect(await direct.sms.send(messageIds[2]!, attempt(2))).toEqual({ status: 'canceled' });
    expect(await direct.sms.send(messageIds[3]!, attempt(1))).toEqual({ status: 'canceled' });
    const after = await messagesOf(direct, campaignId);
    expect(after.map((row) => row.status)).toEqual(['accepted', 'accepted', 'canceled', 'canceled', 'canceled']);
    // The provider was called three times (1, 2 and 3's failed call) and took 1 and 2, once each.
    expect(directProvider.attempts - attemptsBefore).toBe(3);
    const taken = directProvider.messages.filter((message) => message.body === body);
    expect(taken.map((message) => message.to).sort()).toEqual([to[0], to[1]].sort());
    expect(taken.map((message) => message.sid).sort()).toEqual([after[0]!.provider_sid, after[1]!.provider_sid].sort());

    // Receipts still apply to the messages the provider took; the campaign stays canceled.
    expect((await directReceipt(after[1]!.provider_sid!, 'delivered')).status).toBe(200);
    const report = (await get(direct, directTeam.viewer, `/api/sms/campaigns/${campaignId}/`)).body.data;
    expect(report).toMatchObject({ state: 'canceled', messages: { queued: 0, sending: 1, delivered: 1, canceled: 3, opted_out: 0 } });
    const again = await post(direct, directTeam.owner, `/api/sms/campaigns/${campaignId}/cancel/`);
    expectError(again, 409, 'conflict');
    expect(again.body.error.details[0]).toMatchObject({ rule: 'cancelable_state', value: 'canceled' });
    const canceledOnes = await get(direct, directTeam.owner, `/api/sms/campaigns/${campaignId}/messages/?status=canceled`);
    expect(canceledOnes.body.data.results.map((message: { recipient: string }) => message.recipient)).toEqual(to.slice(2));
  });

  it('cancels a campaign still queued: none of its messages is sent', async () => {
    const to = recipients(2);
    const { campaignId, messageIds } = await directCampaign(to, freshBody('Na fila'));
    await direct.sms.models.Campaign.update({ state: 'queued' }, { where: { id: campaignId } });
    const canceled = await post(direct, directTeam.owner, `/api/sms/campaigns/${campaignId}/cancel/`);
    expect(canceled.body.data).toMatchObject({ state: 'canceled', messages: { queued: 0, canceled: 2 } });
    const attemptsBefore = directProvider.attempts;
    for (const id of messageIds) expect(await direct.sms.send(id, attempt(1))).toEqual({ status: 'canceled' });
    expect(directProvider.attempts).toBe(attemptsBefore);
    // A completion check never moves a canceled campaign.
    expect(await direct.sms.reports.completeIfDone(campaignId)).toBe(false);
  });
});

describe('the CSV export of a large campaign', () => {
  it('streams every message in id order, batch after batch, with the header once', async () => {
    const { campaignId } = await directCampaign(recipients(1), freshBody('Grande'));
    const extra = Array.from({ length: 1_234 }, (_, index) => ({ campaign_id: campaignId, recipient: `+55119${String(index).padStart(8, '0')}`, status: 'queued', updated_at: new Date() }));
    await direct.sms.models.Message.bulkCreate(extra);
    const csv = await exportOf(direct, directTeam.viewer, campaignId);
    expect(csv.status).toBe(200);
    const rows = csv.lines.slice(1, -1).map((line) => line.split(','));
    expect(rows).toHaveLength(1_235);
    const ids = rows.map((row) => Number(row[0]));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(1_235);
    expect(rows.at(-1)![1]).toBe('+55*******1233');
    expect(csv.lines.filter((line) => line.startsWith('id,'))).toHaveLength(1);
  });
});
