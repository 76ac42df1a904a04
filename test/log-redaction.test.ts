/**
 * No secret reaches the logs (issue 18, item 11): requests carrying every kind of credential in their
 * query and headers, and an error quoting them, leave lines that still say which request it was (method,
 * path, status, request id) but hold none of the values, and only masked e-mail addresses.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earlyAnswerLogging, requestLogging } from '../src/http/request-logging.js';
import { observeCompletion } from '../src/http/completion.js';
import { maskEmails, maskPhones, redactUrl, scrubText } from '../src/log-redaction.js';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';
import { createAdmin, createUser } from './helpers/accounts.js';
import { appsClosedAfterEach, startTestApp, type TestApp } from './helpers/app.js';
import { request } from './helpers/http.js';
import { waitFor } from './helpers/process.js';
import { keepWarnMode } from './helpers/sms.js';

const EMAIL = 'ana.souza@exemplo.com.br';
const MASKED = 'a***@exemplo.com.br';
const OPERATOR_EMAIL = 'operador.chefe@campanha.org';
const RESET_TOKEN = 'reset-tok-5f1c9a7e2b';
const VERIFY_TOKEN = 'verify-tok-88411d';
const CHALLENGE = 'hub-challenge-77310c';
const OAUTH_CODE = 'oauth-code-a1b2c3d4';
const OAUTH_STATE = 'oauth-state-d4e5f6a7';
const SIGNED_REQUEST = 'signed-req-0f9e8d7c';
const API_KEY = 'apikey99f0e1d2c3';
const TWILIO_SIGNATURE = 'twilio-sig-123abc=';
const HUB_SIGNATURE = 'sha256=hubsig456def';
const COOKIE = 'cookie-789fed';
const X_API_KEY = 'x-api-key-000aaa';

const SECRETS = [RESET_TOKEN, VERIFY_TOKEN, CHALLENGE, OAUTH_CODE, OAUTH_STATE, SIGNED_REQUEST, API_KEY, TWILIO_SIGNATURE, HUB_SIGNATURE, COOKIE, X_API_KEY];
const RAW_EMAILS = [EMAIL, 'ana.souza%40exemplo.com.br', OPERATOR_EMAIL, 'operador.chefe%40campanha.org'];

const secretHeaders = {
  Authorization: `Token ${API_KEY}`,
  'X-Twilio-Signature': TWILIO_SIGNATURE,
  'X-Hub-Signature-256': HUB_SIGNATURE,
  Cookie: `sessionid=${COOKIE}`,
  'X-Api-Key': X_API_KEY,
};

/** Each request: its id, method and path, and the query that carries the secrets. */
const requests = [
  { id: 'redact-reset', path: '/api/auth/generate_new_pass', query: `?token=${RESET_TOKEN}&email=${EMAIL}` },
  { id: 'redact-reset-encoded', path: '/api/auth/generate_new_pass', query: `?email=ana.souza%40exemplo.com.br&token=${RESET_TOKEN}` },
  { id: 'redact-hub', path: '/api/webhook/socialnet/', query: `?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=${CHALLENGE}` },
  { id: 'redact-searchnet', path: '/api/callback/searchnet/', query: `?code=${OAUTH_CODE}&state=${OAUTH_STATE}` },
  { id: 'redact-socialvideo', path: '/api/social_callback/', query: `?state=${OAUTH_STATE}&code=${OAUTH_CODE}&signed_request=${SIGNED_REQUEST}` },
  { id: 'redact-check-email', path: '/api/check/email/', query: `?email=${EMAIL}` },
  { id: 'redact-operator-email', path: '/api/operators/check_operator_email/', query: `?email=${encodeURIComponent(OPERATOR_EMAIL)}` },
];

/** Waits until every id has its completion line (the request logger writes it when the response ends). */
async function completionLines(logs: Array<Record<string, unknown>>, ids: string[]): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  for (let wait = 0; wait < 100 && found.size < ids.length; wait++) {
    for (const line of logs) {
      if (ids.includes(line.request_id as string) && line.msg === 'request completed') found.set(line.request_id as string, line);
    }
    if (found.size < ids.length) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return found;
}

function expectNoSecret(logs: unknown) {
  const text = JSON.stringify(logs);
  for (const secret of SECRETS) expect(text, secret).not.toContain(secret);
  for (const email of RAW_EMAILS) expect(text, email).not.toContain(email);
}

describe('request log lines', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });

  afterAll(async () => {
    await app?.close();
  });

  it('carry no secret from the query or the headers, and no raw e-mail, yet say which request it was', async () => {
    const statuses = new Map<string, number>();
    for (const { id, path, query } of requests) {
      const response = await fetch(`${app.baseUrl}${path}${query}`, { headers: { ...secretHeaders, 'X-Request-Id': id } });
      await response.arrayBuffer();
      statuses.set(id, response.status);
    }
    const lines = await completionLines(app.logs, requests.map((request) => request.id));
    for (const { id, path } of requests) {
      const line = lines.get(id);
      expect(line, id).toBeDefined();
      const req = line!.req as { method: string; url: string; headers: Record<string, string> };
      expect(req.method).toBe('GET');
      expect(req.url.startsWith(`${path}?`), req.url).toBe(true);
      expect((line!.res as { statusCode: number }).statusCode).toBe(statuses.get(id));
      expect(req.headers.authorization).toBe('[REDACTED]');
      expect(req.headers['x-twilio-signature']).toBe('[REDACTED]');
      expect(req.headers['x-hub-signature-256']).toBe('[REDACTED]');
    }
    expect((lines.get('redact-reset')!.req as { url: string }).url).toBe(`/api/auth/generate_new_pass?token=[REDACTED]&email=${MASKED}`);
    expect((lines.get('redact-hub')!.req as { url: string }).url).toBe(
      '/api/webhook/socialnet/?hub.mode=subscribe&hub.verify_token=[REDACTED]&hub.challenge=[REDACTED]',
    );
    expect(JSON.stringify(app.logs)).toContain('o***@campanha.org');
    expectNoSecret(app.logs);
  });
});

describe('error log lines', () => {
  const startApp = appsClosedAfterEach();

  it('an unexpected error quoting secrets is logged with the request id, its secrets redacted', async () => {
    const app = await startApp({
      handlers: {
        checkEmail: () => {
          throw Object.assign(
            new Error(`lookup of ${EMAIL} failed: GET https://provider.test/x?token=${RESET_TOKEN}&code=${OAUTH_CODE} with Authorization: Token ${API_KEY}`),
            // A code that is not an outage's (those answer 503: src/db/outages.ts).
            { code: 'EPROTO', parameters: [EMAIL, 42], request: { headers: { 'x-hub-signature-256': HUB_SIGNATURE }, body: `{"password": "${COOKIE}"}` } },
          );
        },
      },
    });
    const response = await fetch(`${app.baseUrl}/api/check/email/?email=${EMAIL}`, { headers: { 'X-Request-Id': 'redact-error' } });
    expect(response.status).toBe(500);
    await completionLines(app.logs, ['redact-error']);
    const failure = app.logs.find((line) => line.request_id === 'redact-error' && line.msg === 'request failed');
    expect(failure).toBeDefined();
    const err = failure!.err as { message: string; code: string; stack: string };
    expect(err.message).toContain('lookup of a***@exemplo.com.br failed');
    expect(err.code).toBe('EPROTO');
    expect(err.stack).toContain('Error: lookup of');
    expectNoSecret(app.logs);
  });
});

describe('a 429 of the real app', () => {
  const startApp = appsClosedAfterEach();

  it('is logged, with its request id and the e-mail of the query masked', async () => {
    const app = await startApp({ config: { rateLimits: { auth: undefined, read: undefined, write: undefined, callback: undefined, checkEmail: { points: 1, seconds: 60 } } } });
    const ask = (id: string) => fetch(`${app.baseUrl}/api/check/email/?email=${EMAIL}`, { headers: { 'X-Request-Id': id } });
    expect((await ask('allowed-1')).status).toBe(200);
    expect((await ask('refused-1')).status).toBe(429);
    await completionLines(app.logs, ['allowed-1', 'refused-1']);
    const refused = app.logs.filter((line) => line.request_id === 'refused-1' && (line.res as { statusCode?: number } | undefined)?.statusCode === 429);
    expect(refused).toHaveLength(1);
    expect(JSON.stringify(refused[0])).toContain('a***@exemplo.com.br');
    expectNoSecret(app.logs);
  });
});

describe('answers given before the request logger (the rate limiter)', () => {
  let server: Server;
  let baseUrl: string;
  const logs: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    const logger = pino({ level: 'info' }, new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) logs.push(JSON.parse(line));
        done();
      },
    }));
    const app = express();
    app.use((req, res, next) => {
      res.locals.requestId = req.get('X-Request-Id');
      next();
    });
    app.use(observeCompletion([earlyAnswerLogging(logger)]));
    // Stands for the rate limiter: refuses before the request logger.
    app.use((req, res, next) => (req.path === '/limited' ? res.status(429).set('Retry-After', '7').json({ success: false }) : next()));
    app.use(requestLogging(logger));
    app.use((_req, res) => res.json({ success: true }));
    server = await new Promise((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('a 429 is logged once, redacted, with method, path, status and request id', async () => {
    const refused = await fetch(`${baseUrl}/limited?token=${RESET_TOKEN}&email=${EMAIL}`, { headers: { ...secretHeaders, 'X-Request-Id': 'early-429' } });
    expect(refused.status).toBe(429);
    const served = await fetch(`${baseUrl}/served?code=${OAUTH_CODE}`, { headers: { ...secretHeaders, 'X-Request-Id': 'early-200' } });
    expect(served.status).toBe(200);
    const lines = await completionLines(logs, ['early-429', 'early-200']);
    expect(lines.get('early-429')).toMatchObject({ level: 30, req: { method: 'GET', url: `/limited?token=[REDACTED]&email=${MASKED}` }, res: { statusCode: 429 } });
    expect(lines.get('early-200')).toMatchObject({ req: { method: 'GET', url: '/served?code=[REDACTED]' }, res: { statusCode: 200 } });
    expect(logs.filter((line) => line.request_id === 'early-429')).toHaveLength(1);
    expect(logs.filter((line) => line.request_id === 'early-200')).toHaveLength(1);
    expectNoSecret(logs);
  });
});

describe("voters' numbers and texts", () => {
  const ACCOUNT = `AC${'6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f'}`;
  const AUTH_TOKEN = '7e6d5c4b3a29180f7e6d5c4b3a291800';
  const SENDER = '+5511940026655';
  // Numbers and texts no other line of a log could hold by chance.
  const VOTER = '+5521985551234';
  const RECIPIENT = '+5521985557788';
  const FAILING = '+5521985559911';
  const TEXTS = ['Zephyrcampaignword', 'Quixotereplyword', 'Jubilantforgedword', 'Marmaladeanswerword'];
  const provider = new SmsProviderSimulator();
  let app: TestApp;

  beforeAll(async () => {
    await provider.start();
    provider.addAccount(ACCOUNT, AUTH_TOKEN);
    app = await startTestApp({ withJobs: true, selfPublicUrl: true, sms: { providerUrl: provider.url } });
  });

  afterAll(async () => {
    await app?.close();
    await provider.stop();
  });

  /** The national part of a number: whatever its form in a line (E.164, encoded, national), a full number holds it. */
  const nationalOf = (e164: string) => e164.slice(3);

  it('show a number by its last four digits and a text by its length, in every line: sends, receipts, replies, forged callbacks, chat answers, provider errors', async () => {
    const admin = await createAdmin(app);
    const owner = await createUser(app);
    const entityId = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
    await keepWarnMode(app, entityId); // what is logged is under test here, not the electoral rules
    const added = await request(app.baseUrl, 'POST', '/api/sms/add_credential/', admin.headers, { name: 'Campanha', account_id: ACCOUNT, sender_id: SENDER, secret: AUTH_TOKEN, entity_id: entityId });
    expect(added.status, added.text).toBe(201);
    const credencial = added.body.data.id as number;
    const webhook = `${app.baseUrl}/api/webhook/provider_sms/`;

    // A campaign whose first send fails with a provider error quoting the number, then goes through.
    provider.failNext({ status: 503, code: 20503, message: `Service unavailable for To ${FAILING}` });
    const sent = await request(app.baseUrl, 'POST', '/api/sms/list_credentials/', owner.headers, {
      titulo: 'Convite',
      credencial,
      mensagem: { recipient_list_str: `${FAILING}, ${RECIPIENT}`, mensagem: `${TEXTS[0]} no comitê` },
    });
    expect(sent.status, sent.text).toBe(201);
    // One send fails (its error quotes a number) and is retried later: its warning is what this test needs.
    const taken = await waitFor(async () => provider.messages.find((message) => message.to === RECIPIENT || message.to === FAILING), { timeoutMs: 30_000, what: 'a message taken by the provider', intervalMs: 50 });
    // Sent in a campaign's batch (issue 43): its failure is logged for the batch, then retried by itself.
    const failedSend = (msg: unknown) => msg === 'sms not sent by their batch; each will be retried' || msg === 'sms not sent; it will be retried';
    await waitFor(async () => (app.logs.some((line) => failedSend(line.msg)) ? true : undefined), { timeoutMs: 30_000, what: 'the failed send logged' });
    // Its receipts, signed and forged (the forged one is refused: its line is written all the same).
    expect((await provider.sendReceipt(taken.sid, 'delivered')).status).toBe(200);
    expect((await provider.sendReceipt(taken.sid, 'failed', { signature: 'Zm9yZ2Vk' })).status).toBe(403);

    // A voter's reply becomes a conversation; a forged one is refused.
    expect((await provider.sendReply(webhook, { accountSid: ACCOUNT, from: VOTER, to: SENDER, body: `${TEXTS[1]} onde?` })).status).toBe(200);
    expect((await provider.sendReply(webhook, { accountSid: ACCOUNT, from: VOTER, to: SENDER, body: `${TEXTS[2]} STOP` }, { signature: 'Zm9yZ2Vk' })).status).toBe(403);

    // The team answers in the chat.
    const conversations = await request(app.baseUrl, 'GET', `/api/chat/conversations/?entity_id=${entityId}`, owner.headers);
    expect(conversations.status, conversations.text).toBe(200);
    const conversation = (conversations.body.data.results as Array<{ id: number; participant: string }>).find((item) => item.participant === VOTER)!;
    const answered = await request(app.baseUrl, 'POST', `/api/chat/conversations/${conversation.id}/messages/`, owner.headers, { text: `${TEXTS[3]} às 19h` });
    expect(answered.status, answered.text).toBe(201);
    await waitFor(async () => (provider.messages.some((message) => message.to === VOTER) ? true : undefined), { timeoutMs: 30_000, what: 'the answer sent', intervalMs: 50 });
    await new Promise((resolve) => setTimeout(resolve, 100)); // the last request lines

    const text = JSON.stringify(app.logs);
    for (const number of [VOTER, RECIPIENT, FAILING]) expect(text, number).not.toContain(nationalOf(number));
    // The reply's sender in its request line, the failing recipient in the provider's error: by their last digits.
    for (const number of [VOTER, FAILING]) expect(text, number).toContain(`***${number.slice(-4)}`);
    for (const word of TEXTS) expect(text, word).not.toContain(word);
    // The webhook's line still says which request it was, with the text's length in place of the text.
    const forged = app.logs.find((line) => (line.res as { statusCode?: number } | undefined)?.statusCode === 403 && String((line.req as { url?: string } | undefined)?.url).startsWith('/api/webhook/provider_sms/?'));
    expect(forged, 'the forged reply logged').toBeDefined();
    expect((forged!.req as { url: string }).url).toMatch(/From=\*\*\*1234&To=\*\*\*6655&Body=\[\d+ chars\]/);
  }, 180_000); // a campaign, its send job, receipts and a chat answer through the job queue: slow on a loaded machine
});

describe('the redaction rules', () => {
  it('redact a query value by its name in any case or encoding, and mask e-mails in the path and values', () => {
    expect(redactUrl('/x?hub%2Everify_token=a&Hub.Challenge=b&ACCESS_TOKEN=c&page=2&q=ana%40exemplo.com.br')).toBe(
      '/x?hub%2Everify_token=[REDACTED]&Hub.Challenge=[REDACTED]&ACCESS_TOKEN=[REDACTED]&page=2&q=a***@exemplo.com.br',
    );
    expect(redactUrl('/users/ana@exemplo.com.br/')).toBe('/users/a***@exemplo.com.br/');
    expect(redactUrl('https://provider.test/authorize?client_id=palanque&state=s3cr3t&code_challenge=abc')).toBe(
      'https://provider.test/authorize?client_id=palanque&state=[REDACTED]&code_challenge=[REDACTED]',
    );
    expect(maskEmails('Ana <ana@exemplo.com.br>, bo@x.org')).toBe('Ana <a***@exemplo.com.br>, b***@x.org');
  });

  it('show phone numbers by their last four digits and texts by their length, leaving clocks, addresses and ids alone', () => {
    expect(maskPhones('To +5521985559911, (21) 99876-5432 and +55 21 99876 5433.')).toBe('To ***9911, ***5432 and ***5433.');
    expect(maskPhones('at 2026-11-28 20:49:51 from 127.0.0.1:8080, request dd37521a-f8dd-4bc2-a666-424426e1d215, id 42')).toBe(
      'at 2026-11-28 20:49:51 from 127.0.0.1:8080, request dd37521a-f8dd-4bc2-a666-424426e1d215, id 42',
    );
    expect(redactUrl('/api/webhook/provider_sms/?From=%2B5521985551234&To=%2821%29+99876-5432&Body=Ol%C3%A1+tudo+bem%3F&body=x&MessageSid=SM1')).toBe(
      '/api/webhook/provider_sms/?From=***1234&To=***5432&Body=[13 chars]&body=[1 chars]&MessageSid=SM1',
    );
    expect(scrubText('The SMS provider answered 400: The To number +5521985551234 is not valid')).toBe('The SMS provider answered 400: The To number ***1234 is not valid');
  });

  it('take time linear in what a request can send', () => {
    const hostile = `${'a'.repeat(16_000)}@${'b'.repeat(16_000)}`;
    const phonesStarted = performance.now();
    maskPhones(`${'1'.repeat(16_000)} ${'1 '.repeat(8_000)} ${'(1)-'.repeat(4_000)}`);
    redactUrl(`/x?${'From=%2B55219855512340&'.repeat(1_000)}`);
    expect(performance.now() - phonesStarted).toBeLessThan(200);
    const started = performance.now();
    maskEmails(hostile);
    scrubText(`${'x'.repeat(16_000)}=${'y'.repeat(16_000)} "${'k'.repeat(16_000)}": "v"`);
    redactUrl(`/x?${'token=1&'.repeat(2_000)}`);
    expect(performance.now() - started).toBeLessThan(200);
  });
});
