/**
 * SMS operations against the real app (requests and responses checked against the contract) and the
 * SMS provider simulator on loopback: adding credentials (admins only, secret sealed and never
 * returned, 503 without SECRETS_KEY), who may list and use them, campaign validation and counts
 * (numbers found as people write them, invalid, repeated and opted-out ones, GSM-7 and UCS-2 segments), the send job against provider
 * failures (called directly on an app without jobs, so no retry delay is waited for), signed delivery
 * receipts (signature, account, idempotency, monotonic statuses) and signed replies (opt-outs).
 * The happy path end to end is in sms-flow.test.ts. Runs on SQLite, or PostgreSQL with TEST_DATABASE_URL.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobAttempt } from '../src/jobs/index.js';
import { readRecipients } from '@palanque/rules/recipients';
import { SecretBox } from '../src/security/secret-box.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, TEST_SECRETS_KEY, type TestApp } from './helpers/app.js';
import { expectError, request, type Result } from './helpers/http.js';
import { waitFor } from './helpers/process.js';
import { storeCampaign, keepWarnMode } from './helpers/sms.js';
import { signatureOf, SmsProviderSimulator } from '../src/simulators/sms-provider.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const ACCOUNT = `AC${'0f3b9c2d1e4a5b6c7d8e9f0a1b2c3d4e'}`;
const TOKEN = '9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const ACCOUNT_2 = `AC${'11112222333344445555666677778888'}`;
const TOKEN_2 = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
/** An account the simulator knows with another token than the credential stored for it. */
const ACCOUNT_WRONG = `AC${'9999aaaabbbbccccddddeeeeffff0000'}`;
const UNKNOWN_ACCOUNT = `AC${'deadbeefdeadbeefdeadbeefdeadbeef'}`;
/** Another account, only to show that the same sender on another account is another credential. */
const ACCOUNT_3 = `AC${'3333444455556666777788889999aaaa'}`;
const SENDER = '+5511940028922';

/** The provider of the app with jobs. */
const provider = new SmsProviderSimulator();
/** The provider of the app without jobs; the last provider-failure test stops it. */
const quietProvider = new SmsProviderSimulator();

let app: TestApp; // with jobs and a public URL (receipts reach it)
let quiet: TestApp; // without jobs: tests call sms.send themselves

let admin: TestUser;
let owner: TestUser;
let teamAdmin: TestUser;
let operator: TestUser;
let viewer: TestUser;
let stranger: TestUser;
let entityId: number;
let otherEntityId: number;
/** ACCOUNT, SENDER, for entityId's team. */
let teamCredential: number;
/** ACCOUNT_2, no entity: admins only. */
let adminsCredential: number;

let quietAdmin: TestUser;
let quietCredential: number;
let wrongTokenCredential: number;

let sequence = 0;
/** A fresh Brazilian mobile number in E.164, and its national form. */
function freshNumber(): { e164: string; national: string } {
  sequence += 1;
  const local = `2199876${String(sequence).padStart(4, '0')}`;
  return { e164: `+55${local}`, national: local };
}

const call = (caller: TestUser | undefined, method: 'GET' | 'POST', path: string, body?: unknown) =>
  request(app.baseUrl, method, path, caller?.headers ?? {}, body);

async function addCredential(target: TestApp, caller: TestUser, body: Record<string, unknown>): Promise<number> {
  const added = await request(target.baseUrl, 'POST', '/api/sms/add_credential/', caller.headers, body);
  expect(added.status, added.text).toBe(201);
  return (added.body as Json).data.id;
}

const campaign = (caller: TestUser, body: unknown) => call(caller, 'POST', '/api/sms/list_credentials/', body);

async function resultOf(response: Response): Promise<Result> {
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
}

/** A GET with a JSON body (fetch refuses to send one). */
function getWithBody(path: string, headers: Record<string, string>, body: unknown): Promise<Result> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      app.baseUrl + path,
      { method: 'GET', headers: { ...headers, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(payload)) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) responseHeaders.set(name, String(value));
          resolve({ status: res.statusCode!, headers: responseHeaders, text, body: text ? JSON.parse(text) : undefined });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

interface MessageRecord {
  id: number;
  recipient: string;
  status: string;
  provider_sid: string | null;
  error_code: string | null;
  error_message: string | null;
}

async function messagesOf(target: TestApp, campaignId: number): Promise<MessageRecord[]> {
  return (await target.sms.models.Message.findAll({ where: { campaign_id: campaignId }, order: [['id', 'ASC']], raw: true })) as unknown as MessageRecord[];
}

async function messageRow(target: TestApp, id: number): Promise<MessageRecord> {
  return (await target.sms.models.Message.findByPk(id, { raw: true })) as unknown as MessageRecord;
}

/** Waits until every message of the campaign was handed to the provider. */
function handedOver(campaignId: number): Promise<MessageRecord[]> {
  return waitFor(
    async () => {
      const messages = await messagesOf(app, campaignId);
      return messages.length > 0 && messages.every((message) => message.provider_sid) ? messages : undefined;
    },
    { timeoutMs: 15_000, what: `the messages of campaign ${campaignId} handed to the provider`, intervalMs: 50 },
  );
}

/** Opts `phone` out of the campaigns of `entityId` (null: of the credentials without an entity). */
const optOut = (target: TestApp, phone: string, entityId: number | null) => target.sms.models.OptOut.create({ entity_id: entityId, phone, keyword: 'SAIR', opted_out_at: new Date() });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  await Promise.all([provider.start(), quietProvider.start()]);
  provider.addAccount(ACCOUNT, TOKEN);
  provider.addAccount(ACCOUNT_2, TOKEN_2);
  quietProvider.addAccount(ACCOUNT, TOKEN);
  quietProvider.addAccount(ACCOUNT_WRONG, 'the-token-the-provider-really-has');
  [app, quiet] = await Promise.all([
    startTestApp({ withJobs: true, selfPublicUrl: true, sms: { providerUrl: provider.url } }),
    startTestApp({ sms: { providerUrl: quietProvider.url } }),
  ]);

  admin = await createAdmin(app);
  owner = await createUser(app);
  teamAdmin = await createUser(app);
  operator = await createUser(app);
  viewer = await createUser(app);
  stranger = await createUser(app);
  entityId = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
  otherEntityId = await app.entities.store.create('candidato', stranger.user.id, { nome: 'João Pereira' });
  await keepWarnMode(app, entityId, otherEntityId);
  for (const [member, role] of [
    [teamAdmin, 'admin'],
    [operator, 'operator'],
    [viewer, 'viewer'],
  ] as const) {
    await app.entities.models.Member.create({ entity_id: entityId, user_id: member.user.id, role, added_at: new Date() });
  }
  teamCredential = await addCredential(app, admin, { name: 'Campanha', account_id: ACCOUNT, sender_id: SENDER, secret: TOKEN, entity_id: entityId });
  adminsCredential = await addCredential(app, admin, { name: 'Central', account_id: ACCOUNT_2, sender_id: '+5511940020000', secret: TOKEN_2 });

  quietAdmin = await createAdmin(quiet);
  quietCredential = await addCredential(quiet, quietAdmin, { name: 'Quieto', account_id: ACCOUNT, sender_id: SENDER, secret: TOKEN });
  wrongTokenCredential = await addCredential(quiet, quietAdmin, { name: 'Errado', account_id: ACCOUNT_WRONG, sender_id: SENDER, secret: 'not-the-token-of-the-account' });
});

afterAll(async () => {
  await Promise.all([app?.close(), quiet?.close()]);
  await Promise.all([provider.stop(), quietProvider.stop()]);
});

// ---------------------------------------------------------------------------------------------------
describe('createSmsCredential', () => {
  const path = '/api/sms/add_credential/';
  const secret = 'a-secret-auth-token-0123456789';
  const valid = () => ({ name: 'Equipe João', account_id: ACCOUNT, sender_id: '(11) 94002-7777', secret });

  it('adds a credential for an admin: sender in E.164, secret sealed at rest and never returned', async () => {
    const added = await call(admin, 'POST', path, { ...valid(), entity_id: otherEntityId });
    expect(added.status, added.text).toBe(201);
    const data = (added.body as Json).data;
    expect(data).toEqual({
      id: expect.any(Number),
      name: 'Equipe João',
      provider: 'provider',
      account_id: ACCOUNT,
      sender_id: '+5511940027777',
      entity_id: otherEntityId,
      footer: null,
      created_at: expect.any(String),
    });
    expect(added.text).not.toContain(secret);

    const row = (await app.sms.models.Credential.findByPk(data.id, { raw: true })) as unknown as Json;
    expect(row.sender_id).toBe('+5511940027777');
    expect(row.secret_sealed).not.toBe(secret);
    expect(row.secret_sealed).not.toContain(secret);
    expect(row.secret_sealed.startsWith('v1.')).toBe(true);
    // Sealed with SECRETS_KEY, not merely scrambled.
    expect(SecretBox.fromKey(TEST_SECRETS_KEY).open(row.secret_sealed)).toBe(secret);

    // Without entity_id: entity_id null.
    const unbound = await call(admin, 'POST', path, { ...valid(), sender_id: '+5511940027778' });
    expect(unbound.status, unbound.text).toBe(201);
    expect((unbound.body as Json).data).toMatchObject({ entity_id: null, sender_id: '+5511940027778' });
    expect(unbound.text).not.toContain(secret);
  });

  it('refuses non-admins (403), callers without a key (401), and an unknown entity (404)', async () => {
    for (const caller of [owner, teamAdmin, operator]) {
      const refused = await call(caller, 'POST', path, { ...valid(), sender_id: '+5511940027779', entity_id: entityId });
      expectError(refused, 403, 'forbidden');
      expect(refused.text).not.toContain(secret);
    }
    expectError(await call(undefined, 'POST', path, { ...valid(), sender_id: '+5511940027779' }), 401, 'unauthorized');
    const unknown = await call(admin, 'POST', path, { ...valid(), sender_id: '+5511940027779', entity_id: 999_999 });
    expectError(unknown, 404, 'not_found');
    expect(unknown.text).not.toContain(secret);
    expect(await app.sms.models.Credential.count({ where: { sender_id: '+5511940027779' } })).toBe(0);
  });

  it('answers 409 for an account and sender already stored, however the sender is written', async () => {
    const before = await app.sms.models.Credential.count();
    const again = await call(admin, 'POST', path, { name: 'Duplicada', account_id: ACCOUNT, sender_id: '11940028922', secret });
    expectError(again, 409, 'conflict');
    expect(again.text).not.toContain(secret);
    // The same sender on another account is another credential.
    const otherAccount = await call(admin, 'POST', path, { name: 'Outra conta', account_id: ACCOUNT_3, sender_id: SENDER, secret });
    expect(otherAccount.status, otherAccount.text).toBe(201);
    expect(await app.sms.models.Credential.count()).toBe(before + 1);
  });

  it('answers 422 naming the field for a malformed account id, a short secret, an invalid sender or a blank name', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ account_id: 'AC123' }, 'account_id'],
      [{ account_id: `XX${'0'.repeat(32)}` }, 'account_id'],
      [{ secret: 'short-secret' }, 'secret'],
      [{ sender_id: '12345' }, 'sender_id'],
      [{ sender_id: 'not a number' }, 'sender_id'],
      [{ name: '   ' }, 'name'],
    ];
    const before = await app.sms.models.Credential.count();
    for (const [change, field] of cases) {
      const refused = await call(admin, 'POST', path, { ...valid(), ...change });
      expectError(refused, 422, 'validation_failed');
      expect((refused.body as Json).error.details.map((detail: Json) => detail.field), JSON.stringify(change)).toContain(field);
      expect(refused.text).not.toContain(secret);
    }
    const shortSecret = await call(admin, 'POST', path, { ...valid(), secret: 'tiny-secret' });
    expect(shortSecret.text).not.toContain('tiny-secret');
    expect(await app.sms.models.Credential.count()).toBe(before);
  });

  it('answers 503 service_unavailable with Retry-After when the deployment has no SECRETS_KEY', async () => {
    const keyless = await startTestApp({ sms: { secretsKey: null } });
    try {
      const keylessAdmin = await createAdmin(keyless);
      const refused = await request(keyless.baseUrl, 'POST', path, keylessAdmin.headers, valid());
      expectError(refused, 503, 'service_unavailable');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.text).not.toContain(secret);
      expect(await keyless.sms.models.Credential.count()).toBe(0);
      // Non-admins are still told they may not.
      expectError(await request(keyless.baseUrl, 'POST', path, (await createUser(keyless)).headers, valid()), 403, 'forbidden');
    } finally {
      await keyless.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------------
describe('listSmsCredentials', () => {
  const path = '/api/sms/list_credentials/';
  const ids = (result: Result) => (result.body as Json).data.map((credential: Json) => credential.id);

  it('shows admins every credential, without secrets', async () => {
    const listed = await call(admin, 'GET', path);
    expect(listed.status, listed.text).toBe(200);
    const all = ((await app.sms.models.Credential.findAll({ order: [['id', 'ASC']], raw: true })) as unknown as Json[]).map((row) => row.id);
    expect(ids(listed)).toEqual(all);
    expect(ids(listed)).toEqual(expect.arrayContaining([teamCredential, adminsCredential]));
    for (const credential of (listed.body as Json).data) {
      expect(Object.keys(credential).sort()).toEqual(['account_id', 'created_at', 'entity_id', 'footer', 'id', 'name', 'provider', 'sender_id']);
    }
    expect(listed.text).not.toContain(TOKEN);
    expect(listed.text).not.toContain(TOKEN_2);
    expect(listed.text).not.toContain('v1.');
  });

  it("shows the owners, admins and operators of the credential's entity only that entity's credentials", async () => {
    for (const member of [owner, teamAdmin, operator]) {
      const listed = await call(member, 'GET', path);
      expect(listed.status, listed.text).toBe(200);
      expect(ids(listed)).toEqual([teamCredential]);
      expect((listed.body as Json).data[0]).toMatchObject({ account_id: ACCOUNT, sender_id: SENDER, entity_id: entityId });
      expect(listed.text).not.toContain(TOKEN);
    }
  });

  it('hides them from a viewer of the team and a stranger; a credential without entity is for admins only', async () => {
    expect(ids(await call(viewer, 'GET', path))).toEqual([]);
    // The stranger owns the other entity, so sees that entity's credentials and nothing else.
    const strangers = ids(await call(stranger, 'GET', path));
    expect(strangers).not.toContain(teamCredential);
    expect(strangers).not.toContain(adminsCredential);
    const rows = (await app.sms.models.Credential.findAll({ raw: true })) as unknown as Json[];
    expect(strangers.sort()).toEqual(rows.filter((row) => row.entity_id === otherEntityId).map((row) => row.id).sort());
    expect(ids(await call(await createUser(app), 'GET', path))).toEqual([]);
  });

  it('answers 401 without a key', async () => {
    expectError(await call(undefined, 'GET', path), 401, 'unauthorized');
  });

  it("validates an optional GET body against the POST's schema (422), and otherwise ignores it", async () => {
    const broken = await getWithBody(path, operator.headers, { titulo: 'Sem credencial' });
    expectError(broken, 422, 'validation_failed');

    const ignored = await getWithBody(path, operator.headers, {
      titulo: 'Ignorado',
      credencial: adminsCredential,
      mensagem: { recipient_list_str: '21998765432', mensagem: 'Nada' },
    });
    expect(ignored.status, ignored.text).toBe(200);
    expect(ids(ignored)).toEqual([teamCredential]);
    expect(await app.sms.models.Campaign.count({ where: { titulo: 'Ignorado' } })).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------------
describe('sendSmsCampaign', () => {
  it('lists every invalid entry and stores and sends nothing', async () => {
    const [campaigns, messages, attempts] = [await app.sms.models.Campaign.count(), await app.sms.models.Message.count(), provider.attempts];
    const valid = freshNumber();
    const refused = await campaign(operator, {
      titulo: 'Inválida',
      credencial: teamCredential,
      mensagem: { recipient_list_str: `${valid.national}, 12345;(21)99876-0102\nabc +12025550143 0800`, mensagem: 'Olá' },
    });
    expectError(refused, 422, 'validation_failed');
    expect((refused.body as Json).error.details).toEqual([
      { location: 'body', field: 'mensagem.recipient_list_str', rule: 'phone_number', message: 'entry 2 is not a valid phone number', value: '12345' },
      { location: 'body', field: 'mensagem.recipient_list_str', rule: 'phone_number', message: 'entry 4 is not a valid phone number', value: 'abc' },
      { location: 'body', field: 'mensagem.recipient_list_str', rule: 'phone_number', message: 'entry 6 is not a valid phone number', value: '0800' },
    ]);
    await sleep(600); // long enough for a job the queue polls every 50 ms
    expect(await app.sms.models.Campaign.count()).toBe(campaigns);
    expect(await app.sms.models.Message.count()).toBe(messages);
    expect(provider.attempts).toBe(attempts);
    expect(provider.messages.filter((message) => message.to === valid.e164)).toEqual([]);
  });

  it('answers 403 to a team member whose role may not send, and 404 to anyone outside the credential\'s team, as for a missing one', async () => {
    const body = (credencial: number) => ({ titulo: 'Acesso', credencial, mensagem: { recipient_list_str: freshNumber().national, mensagem: 'Olá' } });
    const before = await app.sms.models.Campaign.count();
    const missing = await campaign(stranger, body(999_999));
    expectError(missing, 404, 'not_found');
    expectError(await campaign(operator, body(999_999)), 404, 'not_found');
    expectError(await campaign(viewer, body(teamCredential)), 403, 'forbidden');
    // Another team's credential, and one of no team: the same answer as a missing one, but for the id.
    const sameAsMissing = (answer: Result, id: number) => {
      expectError(answer, 404, 'not_found');
      const error = (answer.body as Json).error;
      const expected = (missing.body as Json).error;
      expect(error.message.replace(String(id), 'N')).toBe(expected.message.replace('999999', 'N'));
      expect(error.details).toEqual([{ ...expected.details[0], value: id }]);
    };
    sameAsMissing(await campaign(stranger, body(teamCredential)), teamCredential);
    sameAsMissing(await campaign(operator, body(adminsCredential)), adminsCredential);
    expectError(await call(undefined, 'POST', '/api/sms/list_credentials/', body(teamCredential)), 401, 'unauthorized');
    expect(await app.sms.models.Campaign.count()).toBe(before);
  });

  it('answers 422 for a list with no number in it, and when every number opted out', async () => {
    const before = await app.sms.models.Campaign.count();
    const empty = await campaign(operator, { titulo: 'Vazia', credencial: teamCredential, mensagem: { recipient_list_str: ' , ;\n ;,', mensagem: 'Olá' } });
    expectError(empty, 422, 'validation_failed');
    expect((empty.body as Json).error.details).toEqual([expect.objectContaining({ field: 'mensagem.recipient_list_str', rule: 'not_blank' })]);

    const [first, second] = [freshNumber(), freshNumber()];
    await optOut(app, first.e164, entityId);
    await optOut(app, second.e164, entityId);
    const nobody = await campaign(operator, {
      titulo: 'Todos saíram',
      credencial: teamCredential,
      mensagem: { recipient_list_str: `${first.national};${second.e164}`, mensagem: 'Olá' },
    });
    expectError(nobody, 422, 'validation_failed');
    expect((nobody.body as Json).error.details).toEqual([expect.objectContaining({ field: 'mensagem.recipient_list_str', rule: 'not_opted_out' })]);
    expect(await app.sms.models.Campaign.count()).toBe(before);
  });

  it('answers 422 naming the count for a list over SMS_MAX_RECIPIENTS (10,000), before reading any number', async () => {
    const before = await app.sms.models.Campaign.count();
    const attempts = provider.attempts;
    // Numbers that are not even valid, one per line: the cap answers first, so none of them is read.
    const entries = Array.from({ length: 10_001 }, (_, i) => `n${i}`).join('\n');
    const refused = await campaign(operator, { titulo: 'Grande demais', credencial: teamCredential, mensagem: { recipient_list_str: entries, mensagem: 'Olá' } });
    expectError(refused, 422, 'validation_failed');
    expect((refused.body as Json).error.details).toEqual([
      {
        location: 'body',
        field: 'mensagem.recipient_list_str',
        rule: 'max_recipients',
        message: 'lists 10001 numbers; a campaign takes at most 10000 (send the rest as another campaign)',
        value: 10_001,
      },
    ]);
    expect(await app.sms.models.Campaign.count()).toBe(before);
    expect(provider.attempts).toBe(attempts);
  });

  it("answers 422 for a body that breaks the schema (no titulo, a text over 1600 characters)", async () => {
    const recipients = freshNumber().national;
    const untitled = await campaign(operator, { credencial: teamCredential, mensagem: { recipient_list_str: recipients, mensagem: 'Olá' } });
    expectError(untitled, 422, 'validation_failed');
    expect((untitled.body as Json).error.details.map((detail: Json) => detail.field)).toContain('titulo');

    const tooLong = await campaign(operator, { titulo: 'Longa', credencial: teamCredential, mensagem: { recipient_list_str: recipients, mensagem: 'a'.repeat(1601) } });
    expectError(tooLong, 422, 'validation_failed');
    expect((tooLong.body as Json).error.details).toEqual([expect.objectContaining({ field: 'mensagem.mensagem', rule: 'maxLength' })]);

    const blankTitle = await campaign(operator, { titulo: '   ', credencial: teamCredential, mensagem: { recipient_list_str: recipients, mensagem: 'Olá' } });
    expectError(blankTitle, 422, 'validation_failed');
    expect((blankTitle.body as Json).error.details.map((detail: Json) => detail.field)).toContain('titulo');
  });

  it('counts repeated and opted-out numbers, and hands each accepted number exactly one message', async () => {
    const [first, second, gone] = [freshNumber(), freshNumber(), freshNumber()];
    await optOut(app, gone.e164, entityId);
    const text = `Lembrete ${randomBytes(4).toString('hex')}: vote no dia 6!`;
    const created = await campaign(operator, {
      titulo: 'Contagem',
      credencial: teamCredential,
      // first three times (national, E.164, formatted), second twice, gone once.
      mensagem: { recipient_list_str: `${first.national}, ${first.e164};(21)${first.national.slice(2, 7)}-${first.national.slice(7)}\n${second.e164} ${gone.national},${second.national}`, mensagem: text },
    });
    expect(created.status, created.text).toBe(201);
    const data = (created.body as Json).data;
    expect(data).toEqual({
      id: expect.any(Number),
      titulo: 'Contagem',
      credencial: teamCredential,
      accepted: 2,
      rejected: 3,
      opted_out_skipped: 1,
      not_mobile_skipped: 0,
      not_mobile_examples: [],
      encoding: 'GSM-7',
      segments: 1,
      state: 'sending',
      created_at: expect.any(String),
      // Under warn (keepWarnMode, as for an entity older than issue 42's enforce default): no contacts, no footer.
      warnings: [expect.objectContaining({ rule: 'consent_missing', numbers: 2 }), expect.objectContaining({ rule: 'footer_missing' })],
    });

    const messages = await handedOver(data.id);
    expect(messages.map((message) => message.recipient)).toEqual([first.e164, second.e164]);
    const handed = provider.messages.filter((message) => message.body === text);
    expect(handed.map((message) => message.to).sort()).toEqual([first.e164, second.e164].sort());
    for (const message of handed) expect(message).toMatchObject({ from: SENDER, body: text, accountSid: ACCOUNT });
    expect(provider.messages.filter((message) => message.to === gone.e164)).toEqual([]);
    expect(messages.map((message) => message.provider_sid).sort()).toEqual(handed.map((message) => message.sid).sort());
  });

  it('finds the numbers as people write them, several to a line, and reports a mistyped one whole', async () => {
    const [first, second, third, fourth] = [freshNumber(), freshNumber(), freshNumber(), freshNumber()];
    const written = (number: { national: string }) => `${number.national.slice(2, 7)}-${number.national.slice(7)}`;
    const text = `Como se escreve ${randomBytes(4).toString('hex')}`;
    const recipients =
      `(21) ${written(first)}\n` + // as on a business card
      `21 ${written(second)}, +55 21 ${written(third)} ${fourth.national};` + // two on a line, the second after a space
      `${first.national},${second.e164}`; // repeats, after a comma without a space
    const created = await campaign(operator, { titulo: 'Como se escreve', credencial: teamCredential, mensagem: { recipient_list_str: recipients, mensagem: text } });
    expect(created.status, created.text).toBe(201);
    expect((created.body as Json).data).toMatchObject({ accepted: 4, rejected: 2, opted_out_skipped: 0 });
    const messages = await handedOver((created.body as Json).data.id);
    expect(messages.map((message) => message.recipient)).toEqual([first.e164, second.e164, third.e164, fourth.e164]);

    // A digit short: the entry is reported as typed, and nothing is sent.
    const attempts = provider.attempts;
    const mistyped = await campaign(operator, {
      titulo: 'Faltou um dígito',
      credencial: teamCredential,
      mensagem: { recipient_list_str: `(21) ${written(first)}\n(21) ${written(second).slice(0, -1)}`, mensagem: text },
    });
    expectError(mistyped, 422, 'validation_failed');
    expect((mistyped.body as Json).error.details).toEqual([
      { location: 'body', field: 'mensagem.recipient_list_str', rule: 'phone_number', message: 'entry 2 is not a valid phone number', value: `(21) ${written(second).slice(0, -1)}` },
    ]);
    expect(provider.attempts).toBe(attempts);
  });

  it('counts numbers that share a line toward SMS_MAX_RECIPIENTS once they are found', async () => {
    const before = await app.sms.models.Campaign.count();
    const oneLine = Array.from({ length: 10_001 }, (_, i) => `219${String(80_000_000 + i)}`).join(' ');
    const refused = await campaign(operator, { titulo: 'Uma linha só', credencial: teamCredential, mensagem: { recipient_list_str: oneLine, mensagem: 'Olá' } });
    expectError(refused, 422, 'validation_failed');
    expect((refused.body as Json).error.details).toEqual([expect.objectContaining({ rule: 'max_recipients', value: 10_001, message: expect.stringMatching(/^lists 10001 numbers; /) })]);
    expect(await app.sms.models.Campaign.count()).toBe(before);
  });

  it('reports a long line without a number as one entry, unread (searching it would cost seconds)', async () => {
    const junk = Array.from({ length: 60_000 }, () => '1').join(' ');
    const first = freshNumber();
    const read = readRecipients(`${first.e164}\n${junk}`);
    expect(read.numbers).toEqual([first.e164]);
    expect(read.invalid).toEqual([{ position: 1, entry: expect.stringMatching(/^1 1 1 .*… \(119999 characters, no phone number\)$/) }]);
    const refused = await campaign(operator, { titulo: 'Lixo', credencial: teamCredential, mensagem: { recipient_list_str: `${first.e164}\n${junk}`, mensagem: 'Olá' } });
    expectError(refused, 422, 'validation_failed');
    expect((refused.body as Json).error.details).toEqual([expect.objectContaining({ rule: 'phone_number', message: 'entry 2 is not a valid phone number' })]);
  });

  it('answers a campaign retried after its first answer was lost with its instance with that campaign, sending nothing twice', async () => {
    const [first, second] = [freshNumber(), freshNumber()];
    const text = `Retentada ${randomBytes(4).toString('hex')}`;
    const key = `campaign-${randomBytes(6).toString('hex')}`;
    const body = { titulo: 'Retentada', credencial: teamCredential, mensagem: { recipient_list_str: `${first.e164}, ${second.e164}`, mensagem: text } };
    const send = () => request(app.baseUrl, 'POST', '/api/sms/list_credentials/', { ...operator.headers, 'Idempotency-Key': key }, body);
    const created = await send();
    expect(created.status, created.text).toBe(201);
    // What an instance killed after the commit and before storing the answer leaves, an hour later: an abandoned claim.
    await app.sequelize.query(`UPDATE idempotency_keys SET state = 'in_flight', status_code = NULL, headers = NULL, body = NULL, created_at = :longAgo WHERE "key" = :key`, {
      replacements: { longAgo: new Date(Date.now() - 3_600_000), key },
    });
    const retried = await send();
    expect(retried.status, retried.text).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull(); // it ran again, and found the campaign
    expect((retried.body as Json).data).toEqual((created.body as Json).data);
    expect(await app.sms.models.Campaign.count({ where: { body: text } })).toBe(1);
    await handedOver((created.body as Json).data.id);
    await sleep(300);
    expect(provider.messages.filter((message) => message.body === text).map((message) => message.to).sort()).toEqual([first.e164, second.e164].sort());
  });

  it('reports GSM-7 or UCS-2 and the segments per message', async () => {
    const cases: Array<[string, string, number]> = [
      ['a'.repeat(160), 'GSM-7', 1],
      ['a'.repeat(161), 'GSM-7', 2],
      ['ã'.repeat(70), 'UCS-2', 1],
      ['ã'.repeat(71), 'UCS-2', 2],
    ];
    const ids: number[] = [];
    for (const [text, encoding, segments] of cases) {
      const created = await campaign(admin, { titulo: 'Segmentos', credencial: teamCredential, mensagem: { recipient_list_str: freshNumber().e164, mensagem: text } });
      expect(created.status, created.text).toBe(201);
      expect((created.body as Json).data, `${text.length} × ${text[0]}`).toMatchObject({ encoding, segments, accepted: 1 });
      ids.push((created.body as Json).data.id);
    }
    for (const id of ids) await handedOver(id);
    expect(provider.messages.some((message) => message.body === 'ã'.repeat(71))).toBe(true);
  });

  it('cancels, without sending, a message whose number opted out after the campaign was created', async () => {
    const number = freshNumber();
    // The app without jobs cannot queue a campaign through HTTP, so the campaign and its message are
    // stored as createCampaign stores them, and the job is run by hand.
    const messageId = await queueMessage(quietCredential, number.e164);
    await optOut(quiet, number.e164, null);
    const attempts = quietProvider.attempts;
    await expect(quiet.sms.send(messageId, attempt(1))).resolves.toEqual({ status: 'canceled' });
    expect(await messageRow(quiet, messageId)).toMatchObject({ status: 'canceled', provider_sid: null });
    expect(quietProvider.attempts).toBe(attempts);
    // A second run of the job changes nothing.
    await quiet.sms.send(messageId, attempt(2));
    expect(quietProvider.attempts).toBe(attempts);
  });
});

// ---------------------------------------------------------------------------------------------------
const attempt = (n: number, lastAttempt = false): JobAttempt => ({ id: 'x', attempt: n, lastAttempt });

/** Stores a campaign of one queued message on the app without jobs, as createCampaign does. */
async function queueMessage(credentialId: number, recipient: string, body = 'Mensagem de teste'): Promise<number> {
  const { messageIds } = await storeCampaign(quiet, { credentialId, createdBy: quietAdmin.user.id, body, recipients: [recipient] });
  return messageIds[0]!;
}

describe('the send job against provider failures', () => {
  it('keeps a message queued after a 503 or a 429 (the job fails, to be retried) and sends it on the next try', async () => {
    const number = freshNumber();
    const messageId = await queueMessage(quietCredential, number.e164, 'Depois do 503');
    quietProvider.failNext({ status: 503, code: 20503, message: 'Service unavailable' }, { status: 429, code: 20429, message: 'Too Many Requests' });
    await expect(quiet.sms.send(messageId, attempt(1))).rejects.toThrow(/503/);
    expect(await messageRow(quiet, messageId)).toMatchObject({ status: 'queued', provider_sid: null, error_code: null });
    // A 429 may pass later too.
    await expect(quiet.sms.send(messageId, attempt(2))).rejects.toThrow(/429/);
    expect(await messageRow(quiet, messageId)).toMatchObject({ status: 'queued', provider_sid: null, error_code: null });

    await expect(quiet.sms.send(messageId, attempt(3))).resolves.toEqual({ status: 'queued' });
    const sent = quietProvider.messages.filter((message) => message.to === number.e164);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ from: SENDER, body: 'Depois do 503', accountSid: ACCOUNT, statusCallback: undefined });
    // The provider's "queued" is not Palanque's: the message is now with the provider.
    expect(await messageRow(quiet, messageId)).toMatchObject({ status: 'accepted', provider_sid: sent[0]!.sid });
  });

  it('fails a message whose last try gets a 503', async () => {
    const messageId = await queueMessage(quietCredential, freshNumber().e164);
    quietProvider.failNext({ status: 503, code: 20503, message: 'Service unavailable' });
    await expect(quiet.sms.send(messageId, attempt(5, true))).rejects.toThrow();
    const row = await messageRow(quiet, messageId);
    expect(row).toMatchObject({ status: 'failed', provider_sid: null });
    expect(row.error_message).toMatch(/^Failed 5 times; /);
  });

  it('fails a message for good, without throwing, when the provider refuses it (400 code 21211)', async () => {
    const messageId = await queueMessage(quietCredential, freshNumber().e164);
    quietProvider.failNext({ status: 400, code: 21211, message: "The 'To' number is not valid" });
    await expect(quiet.sms.send(messageId, attempt(1))).resolves.toEqual({ status: 'failed' });
    expect(await messageRow(quiet, messageId)).toMatchObject({ status: 'failed', error_code: '21211', provider_sid: null });
    // A later run does not try again.
    const attempts = quietProvider.attempts;
    await quiet.sms.send(messageId, attempt(2));
    expect(quietProvider.attempts).toBe(attempts);
  });

  it('fails a message for good when the provider refuses the credential (401)', async () => {
    const number = freshNumber();
    const messageId = await queueMessage(wrongTokenCredential, number.e164);
    const attempts = quietProvider.attempts;
    await expect(quiet.sms.send(messageId, attempt(1))).resolves.toEqual({ status: 'failed' });
    expect(quietProvider.attempts).toBe(attempts + 1);
    expect(quietProvider.messages.filter((message) => message.to === number.e164)).toEqual([]);
    expect(await messageRow(quiet, messageId)).toMatchObject({ status: 'failed', error_code: '20003', provider_sid: null });
  });

  it('treats an unreachable provider as a failure that may pass', async () => {
    const messageId = await queueMessage(quietCredential, freshNumber().e164);
    await quietProvider.stop(); // its port is closed from now on
    await expect(quiet.sms.send(messageId, attempt(1))).rejects.toThrow(/could not be reached/);
    expect(await messageRow(quiet, messageId)).toMatchObject({ status: 'queued', provider_sid: null, error_code: null, error_message: null });
  });
});

// ---------------------------------------------------------------------------------------------------
describe('receiveSmsDeliveryReceipt', () => {
  const callbackUrl = () => `${app.baseUrl}/api/callback/provider_sms/`;
  let sids: string[];
  let messageIds: number[];

  /** The fields the simulator sends for a receipt. */
  const receiptOf = (sid: string, status: string, extra: Record<string, string> = {}): Record<string, string> => {
    const message = provider.messages.find((candidate) => candidate.sid === sid)!;
    return { MessageSid: sid, MessageStatus: status, AccountSid: message.accountSid, From: message.from, To: message.to, ApiVersion: '2010-04-01', ...extra };
  };

  /** Posts a form to the callback; signed with TOKEN over the callback URL unless told otherwise (null: unsigned). */
  async function postReceipt(form: Record<string, string>, options: { signature?: string | null; idempotencyKey?: string } = {}): Promise<Result> {
    const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
    const signature = options.signature === undefined ? signatureOf(TOKEN, callbackUrl(), form) : options.signature;
    if (signature !== null) headers['X-Twilio-Signature'] = signature;
    if (options.idempotencyKey) headers['Idempotency-Key'] = options.idempotencyKey;
    return resultOf(await fetch(callbackUrl(), { method: 'POST', headers, body: new URLSearchParams(form).toString() }));
  }

  const statusOf = async (index: number) => (await messageRow(app, messageIds[index]!)).status;

  beforeAll(async () => {
    const created = await campaign(admin, {
      titulo: 'Recibos',
      credencial: teamCredential,
      mensagem: { recipient_list_str: [1, 2, 3, 4].map(() => freshNumber().e164).join(','), mensagem: 'Recibos' },
    });
    expect(created.status, created.text).toBe(201);
    const messages = await handedOver((created.body as Json).data.id);
    sids = messages.map((message) => message.provider_sid!);
    messageIds = messages.map((message) => message.id);
    expect(messages.map((message) => message.status)).toEqual(['accepted', 'accepted', 'accepted', 'accepted']);
  });

  it('answers 401 invalid_signature without a signature and 403 for a wrong one, and changes nothing', async () => {
    const form = receiptOf(sids[0]!, 'failed');
    expectError(await postReceipt(form, { signature: null }), 401, 'invalid_signature');
    expectError(await postReceipt(form, { signature: 'bm90IHRoZSBzaWduYXR1cmU=' }), 403, 'invalid_signature');
    expectError(await resultOf(await provider.sendReceipt(sids[0]!, 'failed', { signature: signatureOf('another-auth-token-entirely', callbackUrl(), form) })), 403, 'invalid_signature');
    // Signed with the right token, but over another URL.
    expectError(await postReceipt(form, { signature: signatureOf(TOKEN, `${app.baseUrl}/api/callback/other/`, form) }), 403, 'invalid_signature');
    expectError(await postReceipt(form, { signature: signatureOf(TOKEN, 'https://palanque.example/api/callback/provider_sms/', form) }), 403, 'invalid_signature');
    // Signed over other fields than the ones sent.
    expectError(await postReceipt(form, { signature: signatureOf(TOKEN, callbackUrl(), { ...form, MessageStatus: 'delivered' }) }), 403, 'invalid_signature');
    expect(await statusOf(0)).toBe('accepted');
  });

  it('answers 403 for an account no credential has, and acknowledges (200, dropped) a message it does not know or of another account', async () => {
    const foreign = { ...receiptOf(sids[0]!, 'delivered'), AccountSid: UNKNOWN_ACCOUNT };
    expectError(await postReceipt(foreign, { signature: signatureOf(TOKEN, callbackUrl(), foreign) }), 403, 'invalid_signature');
    // An account or sid holding a NUL (SQLite's driver cannot take one in a statement: the fuzzer found a 500).
    for (const broken of [{ ...foreign, AccountSid: `${ACCOUNT}\u0000` }, { ...receiptOf(sids[0]!, 'delivered'), MessageSid: `${sids[0]}\u0000` }]) {
      expectError(await postReceipt(broken, { signature: signatureOf(TOKEN, callbackUrl(), broken) }), 403, 'invalid_signature');
    }

    const unknownSid = receiptOf(sids[0]!, 'delivered', { MessageSid: `SM${randomBytes(16).toString('hex')}` });
    const unknown = await postReceipt(unknownSid);
    expect(unknown.status, unknown.text).toBe(200);
    expect((unknown.body as Json).data).toEqual({ message_sid: unknownSid.MessageSid, status: 'unknown', applied: false });

    // Correctly signed by ACCOUNT_2, about a message sent with ACCOUNT.
    const otherAccount = receiptOf(sids[0]!, 'delivered', { AccountSid: ACCOUNT_2 });
    const acknowledged = await postReceipt(otherAccount, { signature: signatureOf(TOKEN_2, callbackUrl(), otherAccount) });
    expect(acknowledged.status, acknowledged.text).toBe(200);
    expect((acknowledged.body as Json).data).toMatchObject({ status: 'unknown', applied: false });
    expect(await statusOf(0)).toBe('accepted');
  });

  it('answers 422 for an unknown status or a missing AccountSid', async () => {
    const unknownStatus = receiptOf(sids[0]!, 'exploded');
    expectError(await postReceipt(unknownStatus), 422, 'validation_failed');
    const { AccountSid: _omitted, ...withoutAccount } = receiptOf(sids[0]!, 'delivered');
    const missing = await postReceipt(withoutAccount);
    expectError(missing, 422, 'validation_failed');
    expect((missing.body as Json).error.details.map((detail: Json) => detail.field)).toContain('AccountSid');
    expect(await statusOf(0)).toBe('accepted');
  });

  it('moves a message forward only: sent, delivered, a late sent ignored, then read', async () => {
    const sid = sids[0]!;
    const apply = async (status: string) => {
      const answer = await resultOf(await provider.sendReceipt(sid, status));
      expect(answer.status, answer.text).toBe(200);
      return (answer.body as Json).data;
    };
    expect(await apply('sent')).toEqual({ message_sid: sid, status: 'sent', applied: true });
    expect(await apply('delivered')).toEqual({ message_sid: sid, status: 'delivered', applied: true });
    expect(await apply('sent')).toEqual({ message_sid: sid, status: 'delivered', applied: false });
    expect(await statusOf(0)).toBe('delivered');
    expect(await apply('read')).toEqual({ message_sid: sid, status: 'read', applied: true });
    expect(await statusOf(0)).toBe('read');
  });

  it('applies the same receipt once', async () => {
    const sid = sids[1]!;
    const first = await resultOf(await provider.sendReceipt(sid, 'delivered'));
    expect((first.body as Json).data).toEqual({ message_sid: sid, status: 'delivered', applied: true });
    const second = await resultOf(await provider.sendReceipt(sid, 'delivered'));
    expect(second.status, second.text).toBe(200);
    expect((second.body as Json).data).toEqual({ message_sid: sid, status: 'delivered', applied: false });
  });

  it('stores the ErrorCode of an undelivered message', async () => {
    const sid = sids[2]!;
    const answer = await resultOf(await provider.sendReceipt(sid, 'undelivered', { errorCode: '30003' }));
    expect(answer.status, answer.text).toBe(200);
    expect((answer.body as Json).data).toEqual({ message_sid: sid, status: 'undelivered', applied: true });
    expect(await messageRow(app, messageIds[2]!)).toMatchObject({ status: 'undelivered', error_code: '30003' });
  });

  it('processes a signed receipt whose Idempotency-Key an unsigned request used first, and replays it after', async () => {
    const key = `receipt-${randomBytes(6).toString('hex')}`;
    const form = receiptOf(sids[3]!, 'sent');
    expectError(await postReceipt(form, { signature: null, idempotencyKey: key }), 401, 'invalid_signature');
    const signed = await postReceipt(form, { idempotencyKey: key });
    expect(signed.status, signed.text).toBe(200);
    expect(signed.headers.get('idempotent-replayed')).toBeNull();
    expect((signed.body as Json).data).toEqual({ message_sid: sids[3], status: 'sent', applied: true });
    expect(await statusOf(3)).toBe('sent');

    const again = await postReceipt(form, { idempotencyKey: key });
    expect(again.status, again.text).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((again.body as Json).data).toEqual({ message_sid: sids[3], status: 'sent', applied: true });
  });
});

// ---------------------------------------------------------------------------------------------------
describe('receiveSmsWebhook', () => {
  const webhookUrl = () => `${app.baseUrl}/api/webhook/provider_sms/`;
  const reply = async (from: string, body: string, sid?: string) => resultOf(await provider.sendReply(webhookUrl(), { accountSid: ACCOUNT, from, to: SENDER, body, sid }));
  /** Replies reach teamCredential (ACCOUNT, SENDER): they opt out of entityId's campaigns. */
  const optedOut = async (phone: string) => (await app.sms.models.OptOut.findOne({ where: { phone, entity_id: entityId } })) !== null;

  /** A GET to the webhook with these query fields, signed with TOKEN over the full URL unless told otherwise. */
  async function getWebhook(fields: Record<string, string>, signature?: string | null): Promise<Result> {
    const url = new URL(webhookUrl());
    for (const [name, value] of Object.entries(fields)) url.searchParams.set(name, value);
    const sign = signature === undefined ? signatureOf(TOKEN, url.toString(), {}) : signature;
    return resultOf(await fetch(url, { headers: sign === null ? {} : { 'X-Twilio-Signature': sign } }));
  }

  it('opts the sender out on STOP, Sair, " parar " or stop, storing the number in E.164', async () => {
    for (const word of ['STOP', 'Sair', ' parar ', 'stop']) {
      const number = freshNumber();
      const answer = await reply(number.e164, word);
      expect(answer.status, answer.text).toBe(200);
      expect((answer.body as Json).data).toEqual({ message_sid: expect.stringMatching(/^SM/), from: number.e164, opted_out: true });
      const row = (await app.sms.models.OptOut.findOne({ where: { phone: number.e164, entity_id: entityId }, raw: true })) as unknown as Json;
      expect(row, word).not.toBeNull();
      expect(row.phone).toBe(number.e164);
    }
  });

  it('records other text without opting out', async () => {
    // Ordinary answers that hold an opt-out word without asking to stop (sms-opt-out-phrases.test.ts has the phrases that do).
    for (const text of ['Obrigado!', 'não vou sair de casa hoje', 'STOPP', 'quero parar no comitê amanhã']) {
      const number = freshNumber();
      const answer = await reply(number.e164, text);
      expect(answer.status, answer.text).toBe(200);
      expect((answer.body as Json).data).toMatchObject({ from: number.e164, opted_out: false });
      expect(await optedOut(number.e164), text).toBe(false);
      expect(await app.sms.models.Reply.count({ where: { sender: number.e164 } })).toBe(1);
    }
  });

  it('stores a reply the provider sends twice once', async () => {
    const number = freshNumber();
    const sid = `SM${randomBytes(16).toString('hex')}`;
    for (let time = 0; time < 2; time += 1) {
      const answer = await reply(number.e164, 'Recebido', sid);
      expect(answer.status, answer.text).toBe(200);
      expect((answer.body as Json).data).toEqual({ message_sid: sid, from: number.e164, opted_out: false });
    }
    expect(await app.sms.models.Reply.count({ where: { message_sid: sid } })).toBe(1);
  });

  it('answers 401 without a signature and 403 with a wrong one, recording nothing', async () => {
    const number = freshNumber();
    const fields = { MessageSid: `SM${randomBytes(16).toString('hex')}`, AccountSid: ACCOUNT, From: number.e164, To: SENDER, Body: 'STOP' };
    expectError(await getWebhook(fields, null), 401, 'invalid_signature');
    expectError(await getWebhook(fields, 'bm90IHRoZSBzaWduYXR1cmU='), 403, 'invalid_signature');
    expectError(await resultOf(await provider.sendReply(webhookUrl(), { accountSid: ACCOUNT, from: number.e164, to: SENDER, body: 'STOP' }, { signature: signatureOf(TOKEN_2, webhookUrl(), {}) })), 403, 'invalid_signature');
    expect(await optedOut(number.e164)).toBe(false);
    expect(await app.sms.models.Reply.count({ where: { sender: number.e164 } })).toBe(0);
  });

  it('answers 400 when From is missing, and accepts fields it does not declare', async () => {
    const number = freshNumber();
    const missing = await getWebhook({ MessageSid: `SM${randomBytes(16).toString('hex')}`, AccountSid: ACCOUNT, To: SENDER, Body: 'Oi' });
    expectError(missing, 400, 'bad_request');
    expect((missing.body as Json).error.details).toEqual([expect.objectContaining({ location: 'query', field: 'From' })]);

    const extra = await getWebhook({
      MessageSid: `SM${randomBytes(16).toString('hex')}`,
      AccountSid: ACCOUNT,
      From: number.e164,
      To: SENDER,
      Body: 'Sair',
      NumMedia: '0',
      NumSegments: '1',
      SmsStatus: 'received',
      FromCity: 'RIO DE JANEIRO',
      ApiVersion: '2010-04-01',
    });
    expect(extra.status, extra.text).toBe(200);
    expect((extra.body as Json).data).toMatchObject({ from: number.e164, opted_out: true });
    expect(await optedOut(number.e164)).toBe(true);
  });
});
