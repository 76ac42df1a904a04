/**
 * A simulator of the SMS provider (Twilio's Programmable Messaging API) on loopback, for tests: it takes
 * messages as the real API does (HTTP Basic auth with the account id and auth token, form fields To,
 * From, Body, StatusCallback; 201 with `sid` and `status`), can be told to fail the next requests, and
 * sends signed delivery receipts and replies the way the provider does, computing the signature itself
 * (https://www.twilio.com/docs/usage/security#validating-requests), independently of the server's code.
 *
 * The sandbox runs it as a stand-in provider (`sandboxMode`): it trusts whatever account first sends
 * (it has no account records of its own), delivers every message a moment later by posting the signed
 * `sent` and `delivered` receipts, and takes `POST /sandbox/replies` with `{ "from", "body" }` to play a
 * recipient answering the last message sent to them (a `SAIR` opts the number out).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SimulatedMessage {
  sid: string;
  accountSid: string;
  to: string;
  from: string;
  body: string;
  statusCallback: string | undefined;
}

export interface ScriptedFailure {
  status: number;
  code: number;
  message: string;
}

export class SmsProviderSimulator {
  readonly messages: SimulatedMessage[] = [];
  /** Requests to the send endpoint, refused ones included. */
  attempts = 0;
  private readonly accounts = new Map<string, string>();
  private readonly failures: ScriptedFailure[] = [];
  private server: Server | undefined;
  private sandbox: { inboundWebhookUrl: string; deliveryDelayMs: number; onError: (error: Error) => void } | undefined;
  url = '';

  /**
   * The sandbox's provider: accounts are learned from their first authenticated send, each message gets
   * its `sent` and `delivered` receipts after `deliveryDelayMs`, and replies are posted to `inboundWebhookUrl`.
   */
  sandboxMode(options: { inboundWebhookUrl: string; deliveryDelayMs?: number; onError: (error: Error) => void }): void {
    this.sandbox = { deliveryDelayMs: 300, ...options };
  }

  /** Accepts requests of this account, authenticated with this auth token. */
  addAccount(accountSid: string, authToken: string): void {
    this.accounts.set(accountSid, authToken);
  }

  /** The next sends fail like this, in order (e.g. 503 three times, or 400 code 21211 "invalid To"). */
  failNext(...failures: ScriptedFailure[]): void {
    this.failures.push(...failures);
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      void this.handle(req).then(({ status, body }) => {
        res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Posts a signed status callback for a message, as the provider does when its status changes. */
  async sendReceipt(sid: string, status: string, options: { errorCode?: string; signature?: string; url?: string } = {}): Promise<Response> {
    const message = this.messages.find((candidate) => candidate.sid === sid);
    if (!message) throw new Error(`the simulator sent no message ${sid}`);
    const url = options.url ?? message.statusCallback;
    if (!url) throw new Error(`message ${sid} has no status callback`);
    const form: Record<string, string> = { MessageSid: sid, MessageStatus: status, AccountSid: message.accountSid, From: message.from, To: message.to, ApiVersion: '2010-04-01' };
    if (options.errorCode) form.ErrorCode = options.errorCode;
    const signature = options.signature ?? signatureOf(this.accounts.get(message.accountSid)!, url, form);
    return fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': signature }, body: new URLSearchParams(form) });
  }

  /** Sends a reply by GET to the inbound webhook, signed over the full URL. */
  async sendReply(webhookUrl: string, reply: { accountSid: string; from: string; to: string; body: string; sid?: string }, options: { signature?: string } = {}): Promise<Response> {
    const url = new URL(webhookUrl);
    const fields = { MessageSid: reply.sid ?? newSid(), AccountSid: reply.accountSid, From: reply.from, To: reply.to, Body: reply.body, NumMedia: '0' };
    for (const [name, value] of Object.entries(fields)) url.searchParams.set(name, value);
    const signature = options.signature ?? signatureOf(this.accounts.get(reply.accountSid)!, url.toString(), {});
    return fetch(url, { headers: { 'X-Twilio-Signature': signature } });
  }

  private async handle(req: IncomingMessage): Promise<{ status: number; body: object }> {
    if (this.sandbox && req.method === 'POST' && req.url === '/sandbox/replies') return this.replyFromRecipient(await bodyOf(req));
    const match = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(req.url ?? '');
    if (req.method !== 'POST' || !match) return { status: 404, body: { code: 20404, message: 'The requested resource was not found', status: 404 } };
    this.attempts += 1;
    const accountSid = decodeURIComponent(match[1]!);
    const [user, password] = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString().split(':');
    if (this.sandbox && user === accountSid && password && !this.accounts.has(accountSid)) this.addAccount(accountSid, password);
    if (user !== accountSid || !this.accounts.has(accountSid) || this.accounts.get(accountSid) !== password) {
      return { status: 401, body: { code: 20003, message: 'Authenticate', status: 401 } };
    }
    const form = new URLSearchParams(await bodyOf(req));
    const failure = this.failures.shift();
    if (failure) return { status: failure.status, body: { code: failure.code, message: failure.message, status: failure.status } };
    const [to, from, body] = [form.get('To'), form.get('From'), form.get('Body')];
    if (!to || !from || !body) return { status: 400, body: { code: 21604, message: "A 'To', 'From' and 'Body' are required", status: 400 } };
    const message: SimulatedMessage = { sid: newSid(), accountSid, to, from, body, statusCallback: form.get('StatusCallback') ?? undefined };
    this.messages.push(message);
    if (this.sandbox) this.deliverLater(message, this.sandbox);
    return { status: 201, body: { sid: message.sid, account_sid: accountSid, to, from, body, status: 'queued', api_version: '2010-04-01' } };
  }

  private deliverLater(message: SimulatedMessage, sandbox: NonNullable<typeof this.sandbox>): void {
    if (!message.statusCallback) return;
    const timer = setTimeout(() => {
      void (async () => {
        for (const status of ['sent', 'delivered']) {
          const answer = await this.sendReceipt(message.sid, status);
          if (!answer.ok) throw new Error(`the ${status} receipt of ${message.sid} was answered ${answer.status} ${await answer.text()}`);
        }
      })().catch(sandbox.onError);
    }, sandbox.deliveryDelayMs);
    timer.unref();
  }

  /** `{ from, body }`: the recipient `from` answers the last message sent to them, through the inbound webhook. */
  private async replyFromRecipient(rawBody: string): Promise<{ status: number; body: object }> {
    let reply: { from?: unknown; body?: unknown };
    try {
      reply = JSON.parse(rawBody) as typeof reply;
    } catch {
      return { status: 400, body: { code: 21620, message: 'Send JSON: { "from": "+55...", "body": "SAIR" }', status: 400 } };
    }
    if (typeof reply.from !== 'string' || typeof reply.body !== 'string') {
      return { status: 400, body: { code: 21620, message: '"from" (a recipient\'s number) and "body" are required strings', status: 400 } };
    }
    const answered = this.messages.findLast((message) => message.to === reply.from);
    if (!answered) return { status: 404, body: { code: 20404, message: `No message was sent to ${reply.from}`, status: 404 } };
    const answer = await this.sendReply(this.sandbox!.inboundWebhookUrl, { accountSid: answered.accountSid, from: reply.from, to: answered.from, body: reply.body });
    return { status: answer.status, body: (await answer.json().catch(() => ({}))) as object };
  }
}

/** Twilio's signature: base64 HMAC-SHA1 of the URL followed by the form fields sorted by name. */
export function signatureOf(authToken: string, url: string, form: Record<string, string>): string {
  const data = Object.keys(form).sort().reduce((signed, name) => signed + name + form[name], url);
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

function newSid(): string {
  return `SM${randomBytes(16).toString('hex')}`;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
