/**
 * The social network's side of its protocol with Palanque, over real HTTP (fetch) to a running app:
 * - `verify`: the webhook subscription handshake (GET with hub.mode, hub.challenge, hub.verify_token);
 * - `deliver`: an event delivery, serialised once and signed over exactly those bytes with
 *   `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(rawBody, appSecret)>`;
 * - `requestRemoval`: the data-deletion callback, a form-encoded `signed_request=<sig>.<payload>` where
 *   the payload is base64url JSON (`algorithm`, `issued_at`, `user_id`) and the signature the base64url
 *   HMAC-SHA256 of the encoded payload (Facebook's data-deletion callback format).
 * Signatures are computed here with node:crypto, independently of the server's code, so a bug there cannot hide itself.
 */
import { createHmac } from 'node:crypto';

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
