/**
 * A simulator of the SMS provider (Twilio's Programmable Messaging API) on loopback, for tests: it takes
 * messages as the real API does (HTTP Basic auth with the account id and auth token, form fields To,
 * From, Body, StatusCallback; 201 with `sid` and `status`), lists them as it does
 * (https://www.twilio.com/docs/messaging/api/message-resource#read-multiple-message-resources: GET on the
 * same address filtered by `To`, `From` and `DateSent` (YYYY-MM-DD), most recently sent first, `PageSize`
 * per page, the next page's path in `next_page_uri` with `Page` and a `PageToken` naming the last message
 * of the page before, so that messages sent meanwhile shift nothing), and sends signed delivery receipts
 * and replies the way the provider does, computing the signature itself
 * (https://www.twilio.com/docs/usage/security#validating-requests), independently of the server's code.
 * It hands every message on at once: its `date_sent` is its `date_created`.
 *
 * What the outside world does to a sender can be scripted: the next sends fail (`failNext`) with a 4xx or
 * 5xx, before creating the message or after (a lost answer), or have their connection reset before or
 * after it was created; and `answerSendsAfter` makes every send slow (the message is created when the
 * request arrives, as a real provider would, and answered later). `messages` holds what it took,
 * `attempts` counts the sends it received. `reportPrices` makes it price what it sends, as the provider
 * does once a message is sent: its receipts from `sent` on carry `Price` and `PriceUnit`, and its message
 * resource `price` and `price_unit` (a charge is negative). It prices per segment, in the currency it is
 * given (BRL by default, as Brazilian gateways bill), by the segments its own resource reports in
 * `num_segments`, counted here independently of the server's code (segmentsOf): GSM-7 when every
 * character is in the GSM 03.38 alphabet (its extension characters `^{}\[~]|€` take two), 160 characters
 * in one segment and 153 per segment when concatenated; UCS-2 otherwise, 70 UTF-16 units alone and 67
 * when concatenated, a surrogate pair never split. An accented two-segment message is billed as two.
 *
 * The sandbox runs it as a stand-in provider (`sandboxMode`): it trusts whatever account first sends
 * (it has no account records of its own), delivers every message a moment later by posting the signed
 * `sent` and `delivered` receipts, and takes `POST /sandbox/replies` with `{ "from", "body" }` to play a
 * recipient answering the last message sent to them (a `SAIR` opts the number out).
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listenOnLoopback, type LoopbackServer } from './loopback.js';

export interface SimulatedMessage {
  sid: string;
  accountSid: string;
  to: string;
  from: string;
  body: string;
  statusCallback: string | undefined;
  /** Its latest status: `queued`, then those of the receipts sent. */
  status: string;
  /** When it was created (and sent): a test may move it to another day. */
  dateCreated: Date;
  /** Its segments, as its resource reports them (`num_segments`) and as it is priced (segmentsOf). */
  segments: number;
  /** What it costs once sent, when prices are reported (`reportPrices`): a decimal, negative for a charge, and its currency. */
  price: { amount: string; unit: string } | null;
  /** The currency its resource names (`price_unit`), priced or not. */
  currency: string;
}

export interface ScriptedFailure {
  status: number;
  code: number;
  message: string;
  /** Create the message first, then answer with the failure: the provider took it but the answer says otherwise. */
  afterCreating?: boolean;
}

/** The connection is destroyed without an answer, before the message is created or after. */
export interface ScriptedReset {
  reset: 'before_creating' | 'after_creating';
}

type ScriptedSend = ScriptedFailure | ScriptedReset;

/** What the simulator does with a request: answer it, or cut its connection. */
type Reaction = { status: number; body: object; delayMs?: number } | { reset: true };

const MESSAGES_PATH = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/;
const DEFAULT_PAGE_SIZE = 50;

export class SmsProviderSimulator {
  readonly messages: SimulatedMessage[] = [];
  /** Requests to the send endpoint, refused ones included. */
  attempts = 0;
  /** Requests for a page of the message list. */
  listRequests = 0;
  private readonly accounts = new Map<string, string>();
  private readonly script: ScriptedSend[] = [];
  private sendDelayMs = 0;
  private pricing: { perSegment: string; unit: string } | undefined;
  /** The currency of its resources while no price is reported. */
  private currency = DEFAULT_CURRENCY;
  private readonly timers = new Set<NodeJS.Timeout>();
  private loopback: LoopbackServer | undefined;
  private sandbox: { inboundWebhookUrl: string; deliveryDelayMs: number; onError: (error: Error) => void } | undefined;
  /** The sender a reply answers when nothing was sent to its number (knowSandboxAccount). */
  private sandboxSender: { accountSid: string; from: string } | undefined;
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

  /**
   * In sandbox mode, an account known before it sends (the demo credential the sandbox seeded), and its
   * sender: a reply from a number nothing was sent to yet (a recipient of the seeded demo campaign, on a
   * fresh sandbox) answers this sender, signed with this token.
   */
  knowSandboxAccount(accountSid: string, authToken: string, sender: string): void {
    this.addAccount(accountSid, authToken);
    this.sandboxSender = { accountSid, from: sender };
  }

  /**
   * The next authenticated sends go like this, in order: fail with a status (e.g. 503 three times, or 400
   * code 21211 "invalid To"), before creating the message or after, or have their connection reset.
   */
  failNext(...scripted: ScriptedSend[]): void {
    this.script.push(...scripted);
  }

  /**
   * Prices every message sent from now on at `perSegment` (a decimal with its sign, `-0.08000` for a charge)
   * times its segments (segmentsOf), in `unit` (BRL when not given); undefined stops pricing.
   */
  reportPrices(pricing: { perSegment: string; unit?: string } | undefined): void {
    this.pricing = pricing && { perSegment: pricing.perSegment, unit: pricing.unit ?? DEFAULT_CURRENCY };
    if (this.pricing) this.currency = this.pricing.unit;
  }

  /** Answers every send from now on `delayMs` after it arrived (0: at once); the message is created on arrival. */
  answerSendsAfter(delayMs: number): void {
    this.sendDelayMs = delayMs;
  }

  async start(): Promise<void> {
    this.loopback = await listenOnLoopback((req, res) => {
      void this.handle(req).then((reaction) => this.react(req, res, reaction));
    });
    this.url = this.loopback.url;
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    await this.loopback?.stop();
  }

  private react(req: IncomingMessage, res: ServerResponse, reaction: Reaction): void {
    if ('reset' in reaction) {
      req.socket.destroy();
      return;
    }
    const answer = () => {
      if (!res.destroyed) res.writeHead(reaction.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(reaction.body));
    };
    if (!reaction.delayMs) return answer();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      answer();
    }, reaction.delayMs);
    this.timers.add(timer);
  }

  /** Posts a signed status callback for a message, as the provider does when its status changes. */
  async sendReceipt(sid: string, status: string, options: { errorCode?: string; signature?: string; url?: string } = {}): Promise<Response> {
    const message = this.messages.find((candidate) => candidate.sid === sid);
    if (!message) throw new Error(`the simulator sent no message ${sid}`);
    message.status = status;
    const url = options.url ?? message.statusCallback;
    if (!url) throw new Error(`message ${sid} has no status callback`);
    const form: Record<string, string> = { MessageSid: sid, MessageStatus: status, AccountSid: message.accountSid, From: message.from, To: message.to, ApiVersion: '2010-04-01' };
    if (options.errorCode) form.ErrorCode = options.errorCode;
    // Priced once it left: from `sent` on.
    if (message.price && PRICED_STATUSES.has(status)) Object.assign(form, { Price: message.price.amount, PriceUnit: message.price.unit });
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

  private async handle(req: IncomingMessage): Promise<Reaction> {
    if (this.sandbox && req.method === 'POST' && req.url === '/sandbox/replies') return this.replyFromRecipient(await bodyOf(req));
    const url = new URL(req.url ?? '/', 'http://simulator');
    const match = MESSAGES_PATH.exec(url.pathname);
    if (!match || !(req.method === 'GET' || (req.method === 'POST' && url.search === ''))) {
      return { status: 404, body: { code: 20404, message: 'The requested resource was not found', status: 404 } };
    }
    const isSend = req.method === 'POST';
    if (isSend) this.attempts += 1;
    else this.listRequests += 1;
    const accountSid = decodeURIComponent(match[1]!);
    const [user, password] = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString().split(':');
    if (isSend && this.sandbox && user === accountSid && password && !this.accounts.has(accountSid)) this.addAccount(accountSid, password);
    if (user !== accountSid || !this.accounts.has(accountSid) || this.accounts.get(accountSid) !== password) {
      return { status: 401, body: { code: 20003, message: 'Authenticate', status: 401 } };
    }
    return isSend ? this.takeMessage(accountSid, new URLSearchParams(await bodyOf(req))) : this.listPage(accountSid, url);
  }

  /** A send: creates the message unless the script says otherwise, and answers as scripted. */
  private takeMessage(accountSid: string, form: URLSearchParams): Reaction {
    const scripted = this.script.shift();
    if (scripted && 'reset' in scripted && scripted.reset === 'before_creating') return { reset: true };
    if (scripted && 'status' in scripted && !scripted.afterCreating) return failureOf(scripted);
    const [to, from, body] = [form.get('To'), form.get('From'), form.get('Body')];
    if (!to || !from || !body) return { status: 400, body: { code: 21604, message: "A 'To', 'From' and 'Body' are required", status: 400 } };
    const message: SimulatedMessage = {
      sid: newSid(),
      accountSid,
      to,
      from,
      body,
      statusCallback: form.get('StatusCallback') ?? undefined,
      status: 'queued',
      dateCreated: new Date(),
      segments: segmentsOf(body),
      price: null,
      currency: this.currency,
    };
    if (this.pricing) message.price = { amount: priceOf(this.pricing.perSegment, message.segments), unit: this.pricing.unit };
    this.messages.push(message);
    if (this.sandbox) this.deliverLater(message, this.sandbox);
    if (scripted) return 'reset' in scripted ? { reset: true } : failureOf(scripted);
    return { status: 201, body: resourceOf(message), delayMs: this.sendDelayMs };
  }

  /** A page of the account's messages matching To, From and DateSent, most recently sent first. */
  private listPage(accountSid: string, url: URL): Reaction {
    const query = url.searchParams;
    const pageSize = Math.min(1000, Math.max(1, Number(query.get('PageSize') ?? DEFAULT_PAGE_SIZE) || DEFAULT_PAGE_SIZE));
    const page = Number(query.get('Page') ?? 0) || 0;
    // Most recent first; of two created in the same millisecond, the later.
    const matching = [...this.messages]
      .reverse()
      .filter((message) => message.accountSid === accountSid)
      .filter((message) => !query.get('To') || message.to === query.get('To'))
      .filter((message) => !query.get('From') || message.from === query.get('From'))
      .filter((message) => !query.get('DateSent') || message.dateCreated.toISOString().slice(0, 10) === query.get('DateSent'))
      .sort((a, b) => b.dateCreated.getTime() - a.dateCreated.getTime());
    const token = query.get('PageToken');
    const start = token ? matching.findIndex((message) => `PA${message.sid}` === token) + 1 : 0;
    const messages = matching.slice(start, start + pageSize);
    const pageUri = (number: number, pageToken?: string) => {
      const next = new URLSearchParams([...query].filter(([name]) => name !== 'Page' && name !== 'PageToken'));
      next.set('PageSize', String(pageSize));
      next.set('Page', String(number));
      if (pageToken) next.set('PageToken', pageToken);
      return `${url.pathname}?${next}`;
    };
    const hasNext = start + pageSize < matching.length;
    return {
      status: 200,
      body: {
        first_page_uri: pageUri(0),
        next_page_uri: hasNext ? pageUri(page + 1, `PA${messages.at(-1)!.sid}`) : null,
        previous_page_uri: null,
        page,
        page_size: pageSize,
        start,
        end: start + messages.length - 1,
        uri: `${url.pathname}${url.search}`,
        messages: messages.map(resourceOf),
      },
    };
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
  private async replyFromRecipient(rawBody: string): Promise<Reaction> {
    let reply: { from?: unknown; body?: unknown };
    try {
      reply = JSON.parse(rawBody) as typeof reply;
    } catch {
      return { status: 400, body: { code: 21620, message: 'Send JSON: { "from": "+55...", "body": "SAIR" }', status: 400 } };
    }
    if (typeof reply.from !== 'string' || typeof reply.body !== 'string') {
      return { status: 400, body: { code: 21620, message: '"from" (a recipient\'s number) and "body" are required strings', status: 400 } };
    }
    const answered = this.messages.findLast((message) => message.to === reply.from) ?? this.sandboxSender;
    if (!answered) return { status: 404, body: { code: 20404, message: `No message was sent to ${reply.from}, and no demo account is known`, status: 404 } };
    const answer = await this.sendReply(this.sandbox!.inboundWebhookUrl, { accountSid: answered.accountSid, from: reply.from, to: answered.from, body: reply.body });
    return { status: answer.status, body: (await answer.json().catch(() => ({}))) as object };
  }
}

/** Twilio's signature: base64 HMAC-SHA1 of the URL followed by the form fields sorted by name. */
export function signatureOf(authToken: string, url: string, form: Record<string, string>): string {
  const data = Object.keys(form).sort().reduce((signed, name) => signed + name + form[name], url);
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

function failureOf(failure: ScriptedFailure): Reaction {
  return { status: failure.status, body: { code: failure.code, message: failure.message, status: failure.status } };
}

/** The currency the simulator bills in unless told otherwise: Brazilian gateways bill in reais. */
const DEFAULT_CURRENCY = 'BRL';

/** The GSM 03.38 basic character set (3GPP TS 23.038 §6.2.1), one septet each. */
const GSM_BASIC = new Set([...'@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\u001bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà']);
/** Its extension table (§6.2.1.1), two septets each (the escape and the character). */
const GSM_EXTENSION = new Set([...'^{}\\[~]|€\f']);

/**
 * The segments a body is sent in, as the provider counts them: GSM-7 when every character is in the
 * GSM alphabet (160 septets alone, 153 per segment concatenated, an extension character never split
 * from its escape), UCS-2 otherwise (70 UTF-16 units alone, 67 concatenated, a surrogate pair never split).
 */
export function segmentsOf(body: string): number {
  const characters = [...body];
  const gsm = characters.every((character) => GSM_BASIC.has(character) || GSM_EXTENSION.has(character));
  const sizes = gsm ? characters.map((character) => (GSM_EXTENSION.has(character) ? 2 : 1)) : characters.map((character) => character.length);
  const [single, concatenated] = gsm ? [160, 153] : [70, 67];
  if (sizes.reduce((sum, size) => sum + size, 0) <= single) return 1;
  let segments = 1;
  let used = 0;
  for (const size of sizes) {
    if (used + size > concatenated) {
      segments += 1;
      used = 0;
    }
    used += size;
  }
  return segments;
}

/** The statuses whose receipts carry the price: the message has left. */
const PRICED_STATUSES = new Set(['sent', 'delivered', 'undelivered', 'read']);

/** `perSegment` times `segments`, exactly, with as many decimals as `perSegment` has. */
function priceOf(perSegment: string, segments: number): string {
  const [whole, fraction = ''] = perSegment.replace('-', '').split('.');
  const scaled = BigInt(`${whole}${fraction}`) * BigInt(segments);
  const digits = scaled.toString().padStart(fraction.length + 1, '0');
  const amount = fraction.length === 0 ? digits : `${digits.slice(0, -fraction.length)}.${digits.slice(-fraction.length)}`;
  return perSegment.startsWith('-') ? `-${amount}` : amount;
}

/** A message as the API shows it; dates in RFC 2822, to the second; the price once it was sent. */
function resourceOf(message: SimulatedMessage): object {
  const date = message.dateCreated.toUTCString().replace('GMT', '+0000');
  return {
    sid: message.sid,
    account_sid: message.accountSid,
    to: message.to,
    from: message.from,
    body: message.body,
    status: message.status,
    direction: 'outbound-api',
    date_created: date,
    date_sent: date,
    date_updated: date,
    error_code: null,
    error_message: null,
    num_segments: String(message.segments),
    num_media: '0',
    price: message.price && PRICED_STATUSES.has(message.status) ? message.price.amount : null,
    price_unit: message.price?.unit ?? message.currency,
    api_version: '2010-04-01',
    uri: `/2010-04-01/Accounts/${message.accountSid}/Messages/${message.sid}.json`,
  };
}

function newSid(): string {
  return `SM${randomBytes(16).toString('hex')}`;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
