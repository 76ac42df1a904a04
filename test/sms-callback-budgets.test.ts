/**
 * The SMS provider's callbacks under real volume (issue 41): a callback whose signature verifies is
 * charged to its signer's budget (the entity of the credential that sent the message, sized from its
 * messages in flight), not to the address it came from; an unsigned or forged one is charged to its
 * address as before; a signed receipt for a message Palanque never sent is acknowledged and dropped
 * without a write; and a receipt is verified against the credential that sent its message, not the
 * account's oldest; signed replies too are charged to their entity. A signer's budget is checked in
 * memory and in Redis (TEST_REDIS_URL). Receipts are signed by the provider simulator's own
 * implementation of the signature. Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SIGNED_CALLBACKS } from '../src/http/rate-limits.js';
import type { CampaignRow } from '../src/messaging/models.js';
import { signatureOf } from '../src/simulators/sms-provider.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { request } from './helpers/http.js';
import { keepWarnMode } from './helpers/sms.js';

const ACCOUNT = `AC${'5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b'}`;
/** The secret of the account's first credential (A), and of the one that sends (B). */
const TOKEN_A = 'aaaa1111bbbb2222cccc3333dddd4444';
const TOKEN_B = 'bbbb9999cccc8888dddd7777eeee6666';
const SENDER_A = '+5511940031111';
const SENDER_B = '+5511940032222';
/** The address budget of the callback group here: the default. */
const ADDRESS_BUDGET = 600;

let app: TestApp;
let admin: TestUser;
let entityId: number;
let credentialA: number;
let credentialB: number;

/** Each test sends from its own address (X-Forwarded-For, trusted from loopback), so budgets do not mix. */
let addresses = 0;
const freshAddress = () => `203.0.113.${(addresses += 1)}`;

const callbackUrl = () => `${app.baseUrl}/api/callback/provider_sms/`;

interface Receipt {
  form: Record<string, string>;
  /** The secret it is signed with; null: unsigned. */
  secret: string | null;
  address: string;
}

async function postReceipt({ form, secret, address }: Receipt): Promise<{ status: number; headers: Headers; body: { data?: Record<string, unknown>; error?: { code: string } } }> {
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Forwarded-For': address };
  if (secret !== null) headers['X-Twilio-Signature'] = signatureOf(secret, callbackUrl(), form);
  const response = await fetch(callbackUrl(), { method: 'POST', headers, body: new URLSearchParams(form).toString() });
  return { status: response.status, headers: response.headers, body: (await response.json()) as never };
}

const receiptFor = (sid: string, status: string, to = '+5521987650000'): Record<string, string> => ({
  MessageSid: sid,
  MessageStatus: status,
  AccountSid: ACCOUNT,
  From: SENDER_B,
  To: to,
  ApiVersion: '2010-04-01',
});

/** Runs `work` over `items`, `concurrency` at a time, keeping the order of the results. */
async function inParallel<T, R>(items: T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!);
      }
    }),
  );
  return results;
}

/** A campaign of `count` messages already handed to the provider (status accepted, each with its sid), as the send job leaves them. */
async function campaignInFlight(target: TestApp, credentialId: number, count: number): Promise<{ campaignId: number; sids: string[] }> {
  const now = new Date();
  const campaign = await target.sms.models.Campaign.create({
    entity_id: entityId,
    state: 'sending',
    titulo: 'Em voo',
    credential_id: credentialId,
    body: 'Em voo',
    encoding: 'GSM-7',
    segments: 1,
    accepted: count,
    rejected: 0,
    opted_out_skipped: 0,
    created_by: admin.user.id,
    created_at: now,
    jobs_enqueued_at: now,
  });
  const campaignId = Number(campaign.get('id'));
  const sids = Array.from({ length: count }, () => `SM${randomBytes(16).toString('hex')}`);
  await target.sms.models.Message.bulkCreate(
    sids.map((sid, index) => ({ campaign_id: campaignId, recipient: `+55219876${String(index).padStart(5, '0')}`, status: 'accepted', provider_sid: sid, send_attempts: 1, updated_at: now })),
  );
  return { campaignId, sids };
}

beforeAll(async () => {
  app = await startTestApp({
    config: {
      trustProxy: 'loopback',
      rateLimits: { auth: undefined, read: undefined, write: undefined, callback: { points: ADDRESS_BUDGET, seconds: 60 } },
      signedCallbacks: DEFAULT_SIGNED_CALLBACKS,
    },
  });
  admin = await createAdmin(app);
  const owner = await createUser(app);
  entityId = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
  await keepWarnMode(app, entityId);
  const add = async (name: string, sender: string, secret: string) => {
    const added = await request(app.baseUrl, 'POST', '/api/sms/add_credential/', admin.headers, { name, account_id: ACCOUNT, sender_id: sender, secret, entity_id: entityId });
    expect(added.status, added.text).toBe(201);
    return (added.body as { data: { id: number } }).data.id;
  };
  // A first, then B: the account's oldest credential is A, with another secret.
  credentialA = await add('Primeira', SENDER_A, TOKEN_A);
  credentialB = await add('Segunda', SENDER_B, TOKEN_B);
});

afterAll(async () => {
  await app?.close();
});

describe('signed receipts are charged to their entity, not their address', () => {
  it('accepts ~4,000 receipts from one address in a burst, and the campaign reaches its final state', { timeout: 600_000 }, async () => {
    const { campaignId, sids } = await campaignInFlight(app, credentialB, 2_000);
    const address = freshAddress();
    const receipts = [...sids.map((sid) => receiptFor(sid, 'sent')), ...sids.map((sid) => receiptFor(sid, 'delivered'))];
    const answers = await inParallel(receipts, 16, (form) => postReceipt({ form, secret: TOKEN_B, address }));

    const statuses = new Map<number, number>();
    for (const answer of answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    expect(Object.fromEntries(statuses)).toEqual({ 200: 4_000 });
    // The entity's budget paid: 4 receipts for each of its 2,000 messages in flight.
    expect(answers.at(-1)!.headers.get('ratelimit-policy')).toBe('8000;w=60');
    const campaign = (await app.sms.models.Campaign.findByPk(campaignId, { raw: true })) as CampaignRow | null;
    expect(campaign?.state).toBe('completed');
    expect(await app.sms.models.Message.count({ where: { campaign_id: campaignId, status: 'delivered' } })).toBe(2_000);

    // The address paid nothing: a forged receipt from it is judged (403), not refused for its budget.
    const forged = await postReceipt({ form: receiptFor(sids[0]!, 'failed'), secret: 'not-the-secret-of-any-credential', address });
    expect(forged.status).toBe(403);
    // (At most one point in this window, or two when it opened during the burst.)
    expect(Number(/remaining=(\d+)/.exec(forged.headers.get('ratelimit') ?? '')?.[1])).toBeGreaterThanOrEqual(ADDRESS_BUDGET - 2);
  });

  it('charges forged and unsigned receipts to their address: 403 or 401 until its budget is spent, then 429', { timeout: 120_000 }, async () => {
    const { sids } = await campaignInFlight(app, credentialB, 10);
    const address = freshAddress();
    const forgedOnes = Array.from({ length: ADDRESS_BUDGET }, (_, index) => ({ form: receiptFor(sids[index % sids.length]!, 'failed'), secret: TOKEN_A, address }));
    const answers = await inParallel(forgedOnes, 8, postReceipt);
    expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([403]));

    const refused = await postReceipt({ form: receiptFor(sids[0]!, 'failed'), secret: TOKEN_A, address });
    expect(refused.status).toBe(429);
    expect(refused.body.error?.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await postReceipt({ form: receiptFor(sids[0]!, 'failed'), secret: null, address })).status).toBe(429);
    // Nothing forged was applied.
    expect(await app.sms.models.Message.count({ where: { provider_sid: sids, status: 'failed' } })).toBe(0);
    // Another address is untouched by this one's spending.
    expect((await postReceipt({ form: receiptFor(sids[0]!, 'failed'), secret: null, address: freshAddress() })).status).toBe(401);
  });

  it('acknowledges a signed receipt for a message it never sent (200) and writes nothing', async () => {
    await campaignInFlight(app, credentialB, 3);
    const { Message, Reply, Campaign } = app.sms.models;
    const before = { messages: await Message.count(), replies: await Reply.count(), campaigns: await Campaign.count(), lastChange: await Message.max('updated_at') };
    const sid = `SM${randomBytes(16).toString('hex')}`;
    for (const secret of [TOKEN_A, TOKEN_B]) {
      const answer = await postReceipt({ form: receiptFor(sid, 'delivered'), secret, address: freshAddress() });
      expect(answer.status).toBe(200);
      expect(answer.body.data).toEqual({ message_sid: sid, status: 'unknown', applied: false });
    }
    expect({ messages: await Message.count(), replies: await Reply.count(), campaigns: await Campaign.count(), lastChange: await Message.max('updated_at') }).toEqual(before);
    expect(await Message.count({ where: { provider_sid: sid } })).toBe(0);
    // Unsigned or signed with a secret no credential of the account has, it is refused as before.
    expect((await postReceipt({ form: receiptFor(sid, 'delivered'), secret: null, address: freshAddress() })).status).toBe(401);
    expect((await postReceipt({ form: receiptFor(sid, 'delivered'), secret: 'a-secret-of-no-credential', address: freshAddress() })).status).toBe(403);
  });

  it("verifies a receipt against the credential that sent the message (B), not the account's oldest (A)", async () => {
    const { sids } = await campaignInFlight(app, credentialB, 1);
    // A's secret signs nothing about B's messages.
    expect((await postReceipt({ form: receiptFor(sids[0]!, 'failed'), secret: TOKEN_A, address: freshAddress() })).status).toBe(403);
    const applied = await postReceipt({ form: receiptFor(sids[0]!, 'delivered'), secret: TOKEN_B, address: freshAddress() });
    expect(applied.status).toBe(200);
    expect(applied.body.data).toEqual({ message_sid: sids[0], status: 'delivered', applied: true });

    const { sids: ofA } = await campaignInFlight(app, credentialA, 1);
    expect((await postReceipt({ form: receiptFor(ofA[0]!, 'delivered'), secret: TOKEN_B, address: freshAddress() })).status).toBe(403);
    expect((await postReceipt({ form: receiptFor(ofA[0]!, 'delivered'), secret: TOKEN_A, address: freshAddress() })).status).toBe(200);
  });
});

describe('signed replies', () => {
  it("are charged to the receiving credential's entity, and unsigned ones to their address", async () => {
    const url = new URL(`${app.baseUrl}/api/webhook/provider_sms/`);
    for (const [name, value] of Object.entries({ MessageSid: `SM${randomBytes(16).toString('hex')}`, AccountSid: ACCOUNT, From: '+5521987651234', To: SENDER_B, Body: 'Quando é o comício?' })) url.searchParams.set(name, value);
    const address = freshAddress();
    const signed = await fetch(url, { headers: { 'X-Twilio-Signature': signatureOf(TOKEN_B, url.toString(), {}), 'X-Forwarded-For': address } });
    expect(signed.status, await signed.text()).toBe(200);
    const unsigned = await fetch(url, { headers: { 'X-Forwarded-For': address } });
    expect(unsigned.status).toBe(401);
    // The address paid for the unsigned one only: the signed reply was charged to the entity.
    expect(unsigned.headers.get('ratelimit')).toMatch(new RegExp(`^limit=${ADDRESS_BUDGET}, remaining=${ADDRESS_BUDGET - 1},`));
  });
});

describe.each(['in memory', 'in Redis'])("a signer's budget, %s", (where) => {
  let small: TestApp;
  let redis: Redis | undefined;
  const prefix = `palanque-test-signed-${randomBytes(4).toString('hex')}`;
  let smallAdmin: TestUser;
  let smallEntity: number;
  let smallCredential: number;

  beforeAll(async () => {
    if (where === 'in Redis') {
      redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
      await redis.connect();
    }
    // 2 receipts a message in flight, at least 20, at most 100, per minute.
    small = await startTestApp({ redis, rateLimitPrefix: prefix, config: { rateLimits: { auth: undefined, read: undefined, write: undefined, callback: undefined }, signedCallbacks: { points: 100, seconds: 60, perMessage: 2, floor: 20 } } });
    smallAdmin = await createAdmin(small);
    smallEntity = await small.entities.store.create('candidato', (await createUser(small)).user.id, { nome: 'João Pereira' });
    const added = await request(small.baseUrl, 'POST', '/api/sms/add_credential/', smallAdmin.headers, { name: 'Pequena', account_id: ACCOUNT, sender_id: SENDER_B, secret: TOKEN_B, entity_id: smallEntity });
    expect(added.status, added.text).toBe(201);
    smallCredential = (added.body as { data: { id: number } }).data.id;
  });

  afterAll(async () => {
    await small?.close();
    if (!redis) return;
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('is sized from the messages in flight and refuses past it (429), whatever the address', async () => {
    const url = `${small.baseUrl}/api/callback/provider_sms/`;
    const post = (form: Record<string, string>) =>
      fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': signatureOf(TOKEN_B, url, form) }, body: new URLSearchParams(form).toString() });
    const now = new Date();
    const campaign = await small.sms.models.Campaign.create({
      entity_id: smallEntity, state: 'sending', titulo: 'Pouco', credential_id: smallCredential, body: 'Pouco', encoding: 'GSM-7', segments: 1,
      accepted: 30, rejected: 0, opted_out_skipped: 0, created_by: smallAdmin.user.id, created_at: now, jobs_enqueued_at: now,
    });
    expect(campaign.get('id')).toBeDefined();
    // 30 messages in flight: 60 receipts a minute (here for messages it does not know, acknowledged).
    const statuses: number[] = [];
    for (let i = 0; i < 61; i += 1) {
      const answer = await post(receiptFor(`SM${randomBytes(16).toString('hex')}`, 'delivered'));
      statuses.push(answer.status);
      if (i === 0) expect(answer.headers.get('ratelimit-policy')).toBe('60;w=60');
    }
    expect(statuses.slice(0, 60).every((status) => status === 200)).toBe(true);
    expect(statuses[60]).toBe(429);
    if (redis) expect((await redis.keys(`${prefix}:signed-callback:*`)).length).toBe(1);
  });
});
