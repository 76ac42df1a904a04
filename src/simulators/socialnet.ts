/**
 * The social network's side of its protocol with Palanque, over real HTTP (fetch) to a running app:
 * - `verify`: the webhook subscription handshake (GET with hub.mode, hub.challenge, hub.verify_token);
 * - `deliver`: an event delivery, serialised once and signed over exactly those bytes with
 *   `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(rawBody, appSecret)>`;
 * - `requestRemoval`: the data-deletion callback, a form-encoded `signed_request=<sig>.<payload>` where
 *   the payload is base64url JSON (`algorithm`, `issued_at`, `user_id`) and the signature the base64url
 *   HMAC-SHA256 of the encoded payload (Facebook's data-deletion callback format).
 * - `SocialnetSimulator`: the messenger, people writing to Pages and the send API taking their answers.
 * Signatures are computed here with node:crypto, independently of the server's code, so a bug there cannot hide itself.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { listenOnLoopback, type LoopbackServer } from './loopback.js';

export const WEBHOOK_PATH = '/api/webhook/socialnet/';
export const REMOVAL_PATH = '/api/callback/socialnet_removal/';

/** What the network's side gets back: status, headers, the raw text, and the JSON when there is some. */
export interface SimulatorResult {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

async function read(response: Response): Promise<SimulatorResult> {
  const text = await response.text();
  let body: unknown;
  try {
    body = text && (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/** `sha256=` and the hex HMAC-SHA256 of these bytes with the app secret, as the network signs deliveries. */
export function hubSignature(rawBody: string | Buffer, appSecret: string): string {
  return `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`;
}

/**
 * A `signed_request`: the payload as base64url JSON (or these exact payload bytes when a string is given,
 * to sign something that is not JSON), signed with the base64url HMAC-SHA256 of that encoded payload.
 */
export function signedRequest(payload: object | string, appSecret: string): string {
  const encoded = Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload)).toString('base64url');
  const signature = createHmac('sha256', appSecret).update(encoded).digest('base64url');
  return `${signature}.${encoded}`;
}

/** Every character outside RFC 3986's unreserved set percent-encoded (encodeURIComponent leaves !'()* as is). */
const percentEncode = (value: string) => encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The subscription handshake; a parameter left undefined is not sent. Values are percent-encoded (a space
 * is %20) unless `encoding` is `form`: application/x-www-form-urlencoded as URLSearchParams, PHP, Go and
 * Python write query strings (a space is `+`).
 */
export async function verify(
  baseUrl: string,
  params: { mode?: string; token?: string; challenge?: string },
  encoding: 'percent' | 'form' = 'percent',
): Promise<SimulatorResult> {
  const pairs: Array<[string, string]> = [];
  if (params.mode !== undefined) pairs.push(['hub.mode', params.mode]);
  if (params.challenge !== undefined) pairs.push(['hub.challenge', params.challenge]);
  if (params.token !== undefined) pairs.push(['hub.verify_token', params.token]);
  const query = encoding === 'form' ? new URLSearchParams(pairs).toString() : pairs.map(([name, value]) => `${name}=${percentEncode(value)}`).join('&');
  return read(await fetch(new URL(`${WEBHOOK_PATH}${query ? `?${query}` : ''}`, baseUrl)));
}

export interface DeliverOptions {
  /** Send this X-Hub-Signature-256 instead of the right one; `null` sends none. */
  signature?: string | null;
  /** Extra headers (Idempotency-Key, ...). */
  headers?: Record<string, string>;
}

/**
 * Posts an event delivery. An object is serialised once with JSON.stringify; a string is sent as is (to
 * send bytes other than JSON.stringify's, or broken JSON). Either way the signature covers the bytes sent.
 */
export async function deliver(baseUrl: string, appSecret: string, delivery: object | string, options: DeliverOptions = {}): Promise<SimulatorResult> {
  const rawBody = typeof delivery === 'string' ? delivery : JSON.stringify(delivery);
  const signature = options.signature === undefined ? hubSignature(rawBody, appSecret) : options.signature;
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...options.headers };
  if (signature !== null) headers['X-Hub-Signature-256'] = signature;
  return read(await fetch(new URL(WEBHOOK_PATH, baseUrl), { method: 'POST', headers, body: rawBody }));
}

/**
 * Posts the data-deletion callback for `payload` (e.g. `{ user_id }`), signed with `appSecret`. As the
 * network does, the payload says `algorithm: 'HMAC-SHA256'` and `issued_at` (now, in Unix seconds) unless
 * it gives them; one given as undefined is left out. A string is signed as is. `form` replaces the whole
 * form body (to send a signed_request built by hand, or none).
 */
export async function requestRemoval(baseUrl: string, appSecret: string, payload: object | string, form?: Record<string, string>): Promise<SimulatorResult> {
  const sent = typeof payload === 'string' ? payload : { algorithm: 'HMAC-SHA256', issued_at: Math.floor(Date.now() / 1000), ...payload };
  const fields = form ?? { signed_request: signedRequest(sent, appSecret) };
  return read(
    await fetch(new URL(REMOVAL_PATH, baseUrl), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    }),
  );
}

// --- The messenger: people writing to Pages, and the send API ----------------------------------------

/** A message a Page sent through the simulated send API. */
export interface SentMessengerMessage {
  mid: string;
  pageId: string;
  recipientId: string;
  text: string;
  messagingType: string;
  sentAt: Date;
}

/** A Graph error the next send answers with (`afterCreating`: the message was sent, the answer says otherwise). */
export interface ScriptedGraphFailure {
  status: number;
  code: number;
  subcode?: number;
  message: string;
  afterCreating?: boolean;
}

/** The connection is destroyed without an answer, before the message is sent or after. */
export interface ScriptedGraphReset {
  reset: 'before_creating' | 'after_creating';
}

type MessengerReaction = { status: number; body: object } | { reset: true };

const SEND_PATH = /^\/(v\d+\.\d+)\/(\d{1,32})\/messages$/;
/** The network takes a `RESPONSE` within 24 hours of the person's last message. */
export const MESSAGING_WINDOW_MS = 24 * 3600_000;

/**
 * The social network's messenger for tests and the sandbox, over real HTTP: a person writes to a Page
 * (`writeToPage` posts the signed webhook delivery the network sends, with a `messaging` event), and the
 * send API (https://developers.facebook.com/docs/messenger-platform/reference/send-api) takes the Page's
 * answers on loopback as the network does: POST /{version}/{PAGE_ID}/messages with the Page's access
 * token (`Authorization: Bearer`, or `access_token` in the query or body), `recipient.id`,
 * `messaging_type` and `message.text`; 200 with `recipient_id` and `message_id`. It refuses as the
 * network does: a wrong token (400, code 190), a person who never wrote (400, code 100, subcode 2018001),
 * a `RESPONSE` more than 24 hours after the person last wrote (400, code 10, subcode 2018278), a text
 * over 2,000 characters (400, code 100). `deliverReceipts` posts the delivery event of sent messages.
 * What goes wrong can be scripted: `failNext` with a Graph error or a reset connection, before the
 * message is sent or after it. The signatures are computed here with node:crypto (hubSignature).
 */
export class SocialnetSimulator {
  readonly sent: SentMessengerMessage[] = [];
  /** Requests to the send API, refused ones included. */
  attempts = 0;
  private readonly pages = new Map<string, string>();
  /** When each person (`page:psid`) last wrote to each Page. */
  private readonly lastWritten = new Map<string, Date>();
  private readonly script: Array<ScriptedGraphFailure | ScriptedGraphReset> = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private loopback: LoopbackServer | undefined;
  private sandbox: { webhookBaseUrl: string; deliveryDelayMs: number; onError: (error: Error) => void } | undefined;
  url = '';

  constructor(private readonly appSecret: string) {}

  /** Accepts the Page's answers when they carry this access token. */
  connectPage(pageId: string, accessToken: string): void {
    this.pages.set(pageId, accessToken);
  }

  /** The next sends go like this, in order. */
  failNext(...scripted: Array<ScriptedGraphFailure | ScriptedGraphReset>): void {
    this.script.push(...scripted);
  }

  /**
   * The sandbox's network: Pages are learned from their first send with a token, each message sent is
   * delivered (its delivery event posted to `webhookBaseUrl`) after `deliveryDelayMs`, and
   * `POST /sandbox/messages` with `{ "page_id", "sender_id", "text" }` plays a person writing to a Page.
   */
  sandboxMode(options: { webhookBaseUrl: string; deliveryDelayMs?: number; onError: (error: Error) => void }): void {
    this.sandbox = { deliveryDelayMs: 300, ...options };
  }

  async start(): Promise<void> {
    this.loopback = await listenOnLoopback((req, res) => {
      void this.handle(req).then((reaction) => {
        if ('reset' in reaction) req.socket.destroy();
        else res.writeHead(reaction.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(reaction.body));
      });
    });
    this.url = this.loopback.url;
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    await this.loopback?.stop();
  }

  /**
   * A person writes `text` to the Page: the network's signed delivery of that `messages` event, posted to
   * the app at `baseUrl`. `at` backdates it (its `timestamp`); `mid` repeats an earlier message's id.
   */
  async writeToPage(baseUrl: string, message: { pageId: string; senderId: string; text: string; at?: Date; mid?: string }): Promise<SimulatorResult & { mid: string; delivery: object }> {
    const at = message.at ?? new Date();
    const mid = message.mid ?? newMid();
    this.lastWritten.set(`${message.pageId}:${message.senderId}`, at);
    const event = { sender: { id: message.senderId }, recipient: { id: message.pageId }, timestamp: at.getTime(), message: { mid, text: message.text } };
    const delivery = messagingDelivery(message.pageId, [event], at);
    return { ...(await deliver(baseUrl, this.appSecret, delivery)), mid, delivery };
  }

  /** The delivery event of these sent messages (by their mids), as the network posts it once they reached the person. */
  async deliverReceipts(baseUrl: string, mids: string[], options: { withoutMids?: boolean } = {}): Promise<SimulatorResult> {
    const messages = mids.map((mid) => this.sent.find((candidate) => candidate.mid === mid));
    if (messages.some((message) => !message)) throw new Error(`the simulator sent no message among ${mids.join(', ')}`);
    const [first] = messages as SentMessengerMessage[];
    // Every message sent before now has reached the person.
    const watermark = Date.now();
    const delivery = options.withoutMids ? { watermark } : { mids, watermark };
    const event = { sender: { id: first!.recipientId }, recipient: { id: first!.pageId }, timestamp: Date.now(), delivery };
    return deliver(baseUrl, this.appSecret, messagingDelivery(first!.pageId, [event], new Date()));
  }

  private async handle(req: IncomingMessage): Promise<MessengerReaction> {
    const url = new URL(req.url ?? '/', 'http://simulator');
    if (this.sandbox && req.method === 'POST' && url.pathname === '/sandbox/messages') return this.playPerson(await jsonOf(req));
    const match = SEND_PATH.exec(url.pathname);
    if (!match || req.method !== 'POST') return graphError(400, 803, undefined, 'Unknown path components');
    this.attempts += 1;
    const pageId = match[2]!;
    const body = (await jsonOf(req)) as { recipient?: { id?: unknown }; messaging_type?: unknown; message?: { text?: unknown }; access_token?: unknown } | undefined;
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? url.searchParams.get('access_token') ?? (typeof body?.access_token === 'string' ? body.access_token : undefined);
    if (this.sandbox && token && !this.pages.has(pageId)) this.connectPage(pageId, token);
    if (!token || this.pages.get(pageId) !== token) return graphError(400, 190, undefined, 'Invalid OAuth access token - Cannot parse access token');
    return this.takeMessage(pageId, body);
  }

  /** A send with a valid token: checked as the network checks it, then sent unless the script says otherwise. */
  private takeMessage(pageId: string, body: { recipient?: { id?: unknown }; messaging_type?: unknown; message?: { text?: unknown } } | undefined): MessengerReaction {
    const scripted = this.script.shift();
    if (scripted && 'reset' in scripted && scripted.reset === 'before_creating') return { reset: true };
    if (scripted && 'status' in scripted && !scripted.afterCreating) return graphError(scripted.status, scripted.code, scripted.subcode, scripted.message);
    const recipientId = typeof body?.recipient?.id === 'string' ? body.recipient.id : '';
    const text = body?.message?.text;
    const messagingType = typeof body?.messaging_type === 'string' ? body.messaging_type : '';
    if (typeof text !== 'string' || text === '' || text.length > 2000) return graphError(400, 100, undefined, '(#100) Param message[text] must be a UTF-8 encoded string of at most 2000 characters');
    const lastWritten = this.lastWritten.get(`${pageId}:${recipientId}`);
    if (!lastWritten) return graphError(400, 100, 2018001, '(#100) No matching user found');
    if (messagingType === 'RESPONSE' && Date.now() - lastWritten.getTime() > MESSAGING_WINDOW_MS) {
      return graphError(400, 10, 2018278, '(#10) This message is sent outside of allowed window.');
    }
    const message: SentMessengerMessage = { mid: newMid(), pageId, recipientId, text, messagingType, sentAt: new Date() };
    this.sent.push(message);
    if (this.sandbox) this.deliverLater(message);
    if (scripted && 'reset' in scripted) return { reset: true };
    if (scripted) return graphError(scripted.status, scripted.code, scripted.subcode, scripted.message);
    return { status: 200, body: { recipient_id: recipientId, message_id: message.mid } };
  }

  private deliverLater(message: SentMessengerMessage): void {
    const { webhookBaseUrl, deliveryDelayMs, onError } = this.sandbox!;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.deliverReceipts(webhookBaseUrl, [message.mid]).catch(onError);
    }, deliveryDelayMs);
    this.timers.add(timer);
  }

  private async playPerson(body: unknown): Promise<MessengerReaction> {
    const { page_id: pageId, sender_id: senderId, text } = (body ?? {}) as Record<string, unknown>;
    if (typeof pageId !== 'string' || typeof senderId !== 'string' || typeof text !== 'string' || text === '') {
      return { status: 400, body: { error: 'page_id, sender_id and text (strings) are required' } };
    }
    const posted = await this.writeToPage(this.sandbox!.webhookBaseUrl, { pageId, senderId, text });
    return { status: posted.status === 200 ? 201 : 502, body: { mid: posted.mid, webhook_status: posted.status, webhook_answer: posted.body ?? posted.text } };
  }
}

/** A webhook delivery of the Page's messaging events (`object: page`; the entry's `time` in milliseconds, as the messenger sends it). */
export function messagingDelivery(pageId: string, events: object[], at: Date): object {
  return { object: 'page', entry: [{ id: pageId, time: at.getTime(), messaging: events }] };
}

function graphError(status: number, code: number, subcode: number | undefined, message: string): MessengerReaction {
  const error = { message, type: code === 190 ? 'OAuthException' : 'GraphMethodException', code, ...(subcode === undefined ? {} : { error_subcode: subcode }), fbtrace_id: randomBytes(8).toString('hex') };
  return { status, body: { error } };
}

function newMid(): string {
  return `m_${randomBytes(24).toString('base64url')}`;
}

async function jsonOf(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}
