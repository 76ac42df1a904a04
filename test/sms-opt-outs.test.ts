/**
 * SMS opt-outs belong to the entity whose credential received them (issue 18, item 4), against the real
 * app and the provider simulator on loopback:
 * - a signed PARAR received by entity A's credential opts the number out of A's campaigns on every one
 *   of A's credentials, at campaign creation and in the send job, and of no other entity's (before, it
 *   was global: a team that knows its own provider token could silence every other team's voters);
 * - credentials without an entity (admins only) share a scope of their own;
 * - a reply to a sender number its account has no credential for binds the entities on that account only;
 * - the signature is checked against the token of the credential that received the reply;
 * - keywords match after trimming, case folding and removing accents and punctuation, as the whole reply;
 * - an entity's owner and admins list its opt-outs, a page at a time (operators and viewers 403,
 *   strangers 404).
 * Migration 0014's attribution of the old global rows is in sms-opt-outs-migration.test.ts.
 * Runs on SQLite, or PostgreSQL with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobAttempt } from '../src/jobs/index.js';
import { OPT_OUT_KEYWORDS, optOutKeywordOf } from '../src/messaging/opt-outs.js';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request, type Result } from './helpers/http.js';
import { waitFor } from './helpers/process.js';
import { storeCampaign, keepWarnMode } from './helpers/sms.js';
import { loadSpec } from './helpers/spec.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const account = (digit: string) => `AC${digit.repeat(32)}`;
const ACCOUNT_A1 = account('a');
const ACCOUNT_A2 = account('b');
const ACCOUNT_B = account('c');
const ACCOUNT_CENTRAL = account('d');
/** One provider account that entity A and entity B were both given, with different tokens stored. */
const ACCOUNT_SHARED = account('e');
const TOKENS: Record<string, string> = {
  [ACCOUNT_A1]: 'token-of-entity-a-first-0001',
  [ACCOUNT_A2]: 'token-of-entity-a-second-002',
  [ACCOUNT_B]: 'token-of-entity-b-000000003',
  [ACCOUNT_CENTRAL]: 'token-of-the-central-account',
};
const SHARED_TOKEN_A = 'shared-account-token-of-a-05';
const SHARED_TOKEN_B = 'shared-account-token-of-b-06';

const SENDER_A1 = '+5511940020001';
const SENDER_A2 = '+5511940020002';
const SENDER_B = '+5511940020003';
const SENDER_CENTRAL = '+5511940020004';
const SENDER_SHARED_A = '+5511940020005';
const SENDER_SHARED_B = '+5511940020006';

const provider = new SmsProviderSimulator();
/** Sign replies on the shared account, one with A's token and one with B's (never started: they only sign). */
const signedWithA = new SmsProviderSimulator();
const signedWithB = new SmsProviderSimulator();

let app: TestApp;
let admin: TestUser;
let ownerA: TestUser;
let adminA: TestUser;
let operatorA: TestUser;
let viewerA: TestUser;
let ownerB: TestUser;
let stranger: TestUser;
let entityA: number;
let entityB: number;
const credentials: Record<'a1' | 'a2' | 'b' | 'central' | 'sharedA' | 'sharedB', number> = { a1: 0, a2: 0, b: 0, central: 0, sharedA: 0, sharedB: 0 };

let sequence = 0;
/** A fresh Brazilian mobile number in E.164. */
function freshNumber(): string {
  sequence += 1;
  return `+552199871${String(sequence).padStart(4, '0')}`;
}

const webhookUrl = () => `${app.baseUrl}/api/webhook/provider_sms/`;

async function resultOf(response: Response): Promise<Result> {
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
}

/** A reply from `from` to sender `to` of `accountSid`, signed by `signer` (the provider by default). */
async function reply(accountSid: string, to: string, from: string, body: string, signer = provider): Promise<Result> {
  return resultOf(await signer.sendReply(webhookUrl(), { accountSid, from, to, body }));
}

async function expectOptedOut(accountSid: string, to: string, from: string, body = 'PARAR', signer = provider): Promise<void> {
  const answer = await reply(accountSid, to, from, body, signer);
  expect(answer.status, answer.text).toBe(200);
  expect((answer.body as Json).data, body).toMatchObject({ from, opted_out: true });
}

const campaign = (caller: TestUser, credencial: number, recipients: string[], mensagem = 'Vote no dia 6!') =>
  request(app.baseUrl, 'POST', '/api/sms/list_credentials/', caller.headers, { titulo: 'Lembrete', credencial, mensagem: { recipient_list_str: recipients.join(', '), mensagem } });

/** The numbers a campaign was accepted for, once the job handed each to the provider. */
async function sentTo(campaignId: number): Promise<string[]> {
  const messages = await waitFor(
    async () => {
      const rows = (await app.sms.models.Message.findAll({ where: { campaign_id: campaignId }, raw: true })) as unknown as Array<{ recipient: string; provider_sid: string | null }>;
      return rows.length > 0 && rows.every((row) => row.provider_sid) ? rows : undefined;
    },
    { timeoutMs: 15_000, what: `campaign ${campaignId} handed to the provider`, intervalMs: 50 },
  );
  return messages.map((message) => message.recipient).sort();
}

async function addCredential(name: string, accountId: string, senderId: string, secret: string, entityId?: number): Promise<number> {
  const added = await request(app.baseUrl, 'POST', '/api/sms/add_credential/', admin.headers, { name, account_id: accountId, sender_id: senderId, secret, ...(entityId ? { entity_id: entityId } : {}) });
  expect(added.status, added.text).toBe(201);
  return (added.body as Json).data.id;
}

const attempt = (n: number): JobAttempt => ({ id: 'x', attempt: n, lastAttempt: false });

beforeAll(async () => {
  await provider.start();
  for (const [accountId, token] of Object.entries(TOKENS)) provider.addAccount(accountId, token);
  signedWithA.addAccount(ACCOUNT_SHARED, SHARED_TOKEN_A);
  signedWithB.addAccount(ACCOUNT_SHARED, SHARED_TOKEN_B);
  app = await startTestApp({ withJobs: true, selfPublicUrl: true, sms: { providerUrl: provider.url } });
  admin = await createAdmin(app);
  ownerA = await createUser(app);
  adminA = await createUser(app);
  operatorA = await createUser(app);
  viewerA = await createUser(app);
  ownerB = await createUser(app);
  stranger = await createUser(app);
  entityA = await app.entities.store.create('candidato', ownerA.user.id, { nome: 'Maria Santos' });
  entityB = await app.entities.store.create('candidato', ownerB.user.id, { nome: 'João Pereira' });
  await keepWarnMode(app, entityA, entityB);
  for (const [member, role] of [
    [adminA, 'admin'],
    [operatorA, 'operator'],
    [viewerA, 'viewer'],
  ] as const) {
    await app.entities.models.Member.create({ entity_id: entityA, user_id: member.user.id, role, added_at: new Date() });
  }
  credentials.a1 = await addCredential('A, primeira', ACCOUNT_A1, SENDER_A1, TOKENS[ACCOUNT_A1]!, entityA);
  credentials.a2 = await addCredential('A, segunda', ACCOUNT_A2, SENDER_A2, TOKENS[ACCOUNT_A2]!, entityA);
  credentials.b = await addCredential('B', ACCOUNT_B, SENDER_B, TOKENS[ACCOUNT_B]!, entityB);
  credentials.central = await addCredential('Central', ACCOUNT_CENTRAL, SENDER_CENTRAL, TOKENS[ACCOUNT_CENTRAL]!);
  // A's first: before, the signature of every reply on the account was checked against this token.
  credentials.sharedA = await addCredential('A, conta comum', ACCOUNT_SHARED, SENDER_SHARED_A, SHARED_TOKEN_A, entityA);
  credentials.sharedB = await addCredential('B, conta comum', ACCOUNT_SHARED, SENDER_SHARED_B, SHARED_TOKEN_B, entityB);
});

afterAll(async () => {
  await app?.close();
  await provider.stop();
});

// ---------------------------------------------------------------------------------------------------
describe('the scope of an opt-out', () => {
  it("a PARAR signed with entity A's own token does not stop entity B's campaigns, and stops A's on its other credential", async () => {
    const [number, other] = [freshNumber(), freshNumber()];
    await expectOptedOut(ACCOUNT_A1, SENDER_A1, number);

    const ofB = await campaign(ownerB, credentials.b, [number]);
    expect(ofB.status, ofB.text).toBe(201);
    expect((ofB.body as Json).data).toMatchObject({ accepted: 1, opted_out_skipped: 0 });
    expect(await sentTo((ofB.body as Json).data.id)).toEqual([number]);
    expect(provider.messages.filter((message) => message.to === number).map((message) => message.from)).toEqual([SENDER_B]);

    const ofA = await campaign(operatorA, credentials.a2, [number, other]);
    expect(ofA.status, ofA.text).toBe(201);
    expect((ofA.body as Json).data).toMatchObject({ accepted: 1, opted_out_skipped: 1 });
    expect(await sentTo((ofA.body as Json).data.id)).toEqual([other]);

    const onlyHim = await campaign(operatorA, credentials.a2, [number]);
    expectError(onlyHim, 422, 'validation_failed');
    expect((onlyHim.body as Json).error.details).toEqual([expect.objectContaining({ field: 'mensagem.recipient_list_str', rule: 'not_opted_out' })]);

    const central = await campaign(admin, credentials.central, [number]);
    expect((central.body as Json).data, central.text).toMatchObject({ accepted: 1, opted_out_skipped: 0 });
    await sentTo((central.body as Json).data.id);
  });

  it("the send job cancels a message of A's queued before the opt-out, and sends B's", async () => {
    const number = freshNumber();
    const body = `Fila ${number}`;
    const ofA = await storeCampaign(app, { credentialId: credentials.a2, createdBy: operatorA.user.id, body, recipients: [number], jobsEnqueuedAt: new Date() });
    const ofB = await storeCampaign(app, { credentialId: credentials.b, createdBy: ownerB.user.id, body, recipients: [number], jobsEnqueuedAt: new Date() });
    await expectOptedOut(ACCOUNT_A1, SENDER_A1, number, 'STOP');

    await expect(app.sms.send(ofA.messageIds[0]!, attempt(1))).resolves.toEqual({ status: 'canceled' });
    expect((await app.sms.send(ofB.messageIds[0]!, attempt(1))).status).not.toBe('canceled');
    expect(provider.messages.filter((message) => message.body === body).map((message) => message.from)).toEqual([SENDER_B]);
  });

  it("credentials without an entity share a scope of their own", async () => {
    const [fromCentral, fromA] = [freshNumber(), freshNumber()];
    await expectOptedOut(ACCOUNT_CENTRAL, SENDER_CENTRAL, fromCentral, 'SAIR');
    await expectOptedOut(ACCOUNT_A1, SENDER_A1, fromA, 'SAIR');

    expectError(await campaign(admin, credentials.central, [fromCentral]), 422, 'validation_failed');
    expect(((await campaign(operatorA, credentials.a1, [fromCentral])).body as Json).data).toMatchObject({ accepted: 1, opted_out_skipped: 0 });
    expect(((await campaign(admin, credentials.central, [fromA])).body as Json).data).toMatchObject({ accepted: 1, opted_out_skipped: 0 });
  });

  it('a reply to a number the account has no credential for binds the entities on that account only', async () => {
    const number = freshNumber();
    await expectOptedOut(ACCOUNT_A1, '+5511940029999', number);
    expectError(await campaign(operatorA, credentials.a2, [number]), 422, 'validation_failed');
    expect(((await campaign(ownerB, credentials.b, [number])).body as Json).data).toMatchObject({ accepted: 1, opted_out_skipped: 0 });
  });

  it("checks the signature against the token of the credential that received the reply", async () => {
    const number = freshNumber();
    // Signed with A's token, addressed to B's sender on the account they share: refused, nothing recorded.
    const forged = await reply(ACCOUNT_SHARED, SENDER_SHARED_B, number, 'PARAR', signedWithA);
    expectError(forged, 403, 'invalid_signature');
    expect(await app.sms.models.Reply.count({ where: { sender: number } })).toBe(0);
    expect(((await campaign(ownerB, credentials.b, [number])).body as Json).data).toMatchObject({ accepted: 1, opted_out_skipped: 0 });

    await expectOptedOut(ACCOUNT_SHARED, SENDER_SHARED_B, number, 'PARAR', signedWithB);
    expectError(await campaign(ownerB, credentials.b, [number]), 422, 'validation_failed');
    expect(((await campaign(operatorA, credentials.a1, [number])).body as Json).data).toMatchObject({ accepted: 1, opted_out_skipped: 0 });
  });

  it('a number that opts out twice is stored once per entity', async () => {
    const number = freshNumber();
    await expectOptedOut(ACCOUNT_A1, SENDER_A1, number, 'PARAR');
    await expectOptedOut(ACCOUNT_A2, SENDER_A2, number, 'Sair');
    await expectOptedOut(ACCOUNT_CENTRAL, SENDER_CENTRAL, number, 'Sair');
    await expectOptedOut(ACCOUNT_CENTRAL, SENDER_CENTRAL, number, 'Stop');
    expect(await app.sms.models.OptOut.count({ where: { phone: number, entity_id: entityA } })).toBe(1);
    expect(await app.sms.models.OptOut.count({ where: { phone: number, entity_id: null } })).toBe(1);
    expect(await app.sms.models.OptOut.count({ where: { phone: number } })).toBe(2);
  });
});

// ---------------------------------------------------------------------------------------------------
describe('opt-out keywords', () => {
  it('match after trimming, case folding, accent and punctuation removal', async () => {
    for (const body of ['Sair.', 'PARE!', 'stop', '  Parar  ', 'SAÍR', 'Cancelar!!', 'unsubscribe', '¡Quit!', 'Stop 🛑', 'opt-out', 'Descadastrar']) {
      const number = freshNumber();
      await expectOptedOut(ACCOUNT_A1, SENDER_A1, number, body);
      expect(await app.sms.models.OptOut.count({ where: { phone: number, entity_id: entityA } }), body).toBe(1);
    }
  });

  it('every keyword of the list opts out, alone; a keyword inside a sentence does not', async () => {
    for (const keyword of OPT_OUT_KEYWORDS) {
      expect(optOutKeywordOf(keyword.toLowerCase()), keyword).toBe(keyword);
      await expectOptedOut(ACCOUNT_A1, SENDER_A1, freshNumber(), keyword.toLowerCase());
    }
    for (const body of ['Obrigado!', 'quero parar de receber', 'STOPP', 'sair agora', 'não vou sair', 'PARAR PARAR', '']) expect(optOutKeywordOf(body), body).toBeUndefined();
    // A request to stop in the voter's own words opts out since issue 42 (packages/rules/src/opt-out-phrases.ts; sms-opt-out-phrases.test.ts).
    for (const body of ['quero parar de receber', 'sair agora', 'PARAR PARAR']) await expectOptedOut(ACCOUNT_A1, SENDER_A1, freshNumber(), body);
    for (const body of ['Obrigado!', 'STOPP', 'não vou sair', '']) {
      const number = freshNumber();
      const answer = await reply(ACCOUNT_A1, SENDER_A1, number, body || ' ');
      expect((answer.body as Json).data, body).toMatchObject({ from: number, opted_out: false });
      expect(await app.sms.models.OptOut.count({ where: { phone: number } }), body).toBe(0);
    }
  });

  it('are the list the spec gives', () => {
    const spec = loadSpec() as Json;
    expect(spec.components.schemas.SmsOptOutKeyword.enum).toEqual([...OPT_OUT_KEYWORDS]);
    const description = spec.paths['/api/webhook/provider_sms/'].get.description as string;
    for (const keyword of OPT_OUT_KEYWORDS) expect(description, keyword).toContain(`\`${keyword}\``);
  });
});

// ---------------------------------------------------------------------------------------------------
describe('listSmsOptOuts', () => {
  const path = '/api/sms/list_opt_outs/';
  const list = (caller: TestUser | undefined, query: string) => request(app.baseUrl, 'GET', `${path}?${query}`, caller?.headers ?? {});

  it("lists the entity's own opt-outs, newest first, to its owner, its admins and platform admins", async () => {
    const [first, second] = [freshNumber(), freshNumber()];
    await expectOptedOut(ACCOUNT_B, SENDER_B, first, 'Sair.');
    await expectOptedOut(ACCOUNT_B, SENDER_B, second, 'stop');
    await expectOptedOut(ACCOUNT_A1, SENDER_A1, freshNumber(), 'PARAR');
    const listed = await list(ownerB, `entity_id=${entityB}`);
    expect(listed.status, listed.text).toBe(200);
    const data = (listed.body as Json).data;
    expect(data).toMatchObject({ links: { next: null, previous: null }, total_pages: 1 });
    expect(data.results.slice(0, 2)).toEqual([
      { phone: second, keyword: 'STOP', source: 'reply', phrase: null, opted_out_at: expect.any(String) },
      { phone: first, keyword: 'SAIR', source: 'reply', phrase: null, opted_out_at: expect.any(String) },
    ]);
    const rows = (await app.sms.models.OptOut.findAll({ where: { entity_id: entityB }, raw: true })) as unknown as Array<{ phone: string }>;
    expect(data.count).toBe(rows.length);
    expect(data.results.map((item: Json) => item.phone).sort()).toEqual(rows.map((row) => row.phone).sort());

    for (const caller of [ownerA, adminA, admin]) {
      const ofA = await list(caller, `entity_id=${entityA}`);
      expect(ofA.status, ofA.text).toBe(200);
      expect((ofA.body as Json).data.count).toBe(await app.sms.models.OptOut.count({ where: { entity_id: entityA } }));
      expect((ofA.body as Json).data.results.map((item: Json) => item.phone)).not.toContain(first);
    }
  });

  it('pages 50 at a time with links, and answers 404 past the last page', async () => {
    const rows = Array.from({ length: 51 }, (_, i) => ({ entity_id: entityB, phone: freshNumber(), keyword: 'SAIR', opted_out_at: new Date(Date.UTC(2020, 0, 1, 0, 0, i)) }));
    await app.sms.models.OptOut.bulkCreate(rows);
    const total = await app.sms.models.OptOut.count({ where: { entity_id: entityB } });
    const first = await list(ownerB, `entity_id=${entityB}`);
    expect((first.body as Json).data).toMatchObject({ count: total, total_pages: Math.ceil(total / 50) });
    expect((first.body as Json).data.results).toHaveLength(50);
    expect((first.body as Json).data.links.next).toBe(`${app.baseUrl}${path}?entity_id=${entityB}&page=2`);
    const second = await list(ownerB, `entity_id=${entityB}&page=2`);
    expect(second.status, second.text).toBe(200);
    expect((second.body as Json).data.results.at(-1).phone).toBe(rows[0]!.phone); // the oldest last
    expect((second.body as Json).data.links.previous).toBe(`${app.baseUrl}${path}?entity_id=${entityB}&page=1`);
    expectError(await list(ownerB, `entity_id=${entityB}&page=3`), 404, 'not_found');
  });

  it('answers 403 to operators and viewers, 404 to strangers and for unknown entities, 401 without a key', async () => {
    expectError(await list(operatorA, `entity_id=${entityA}`), 403, 'forbidden');
    expectError(await list(viewerA, `entity_id=${entityA}`), 403, 'forbidden');
    expectError(await list(stranger, `entity_id=${entityA}`), 404, 'not_found');
    expectError(await list(ownerB, `entity_id=${entityA}`), 404, 'not_found');
    expectError(await list(admin, 'entity_id=999999'), 404, 'not_found');
    expectError(await list(undefined, `entity_id=${entityA}`), 401, 'unauthorized');
  });

  it('answers 400 for a missing or malformed entity_id or page', async () => {
    for (const query of ['', 'entity_id=abc', 'entity_id=0', `entity_id=${entityA}&page=0`, `entity_id=${entityA}&page=x`]) {
      const answer = await list(ownerA, query);
      expectError(answer, 400, 'bad_request');
    }
  });
});
