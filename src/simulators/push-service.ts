/**
 * A simulator of a browser's push service on loopback, for the tests and the sandbox, written from the
 * RFCs independently of the server's code (and of the `web-push` package it sends with), so that a
 * mistake there cannot hide itself. It plays the browser too: `subscribe` makes a subscription as
 * `PushManager.subscribe()` does (a P-256 key pair and a 16-byte auth secret, RFC 8291 §2), and the
 * simulator decrypts what arrives for it with the private key it kept.
 *
 * `POST /push/<id>` is a push message (RFC 8030 §5). In order, it answers:
 * - 404 for a subscription it never made, 410 Gone for one `expire`d (the user unsubscribed), as push
 *   services do for dead subscriptions (RFC 8030 §7.3);
 * - 401 without a `vapid` Authorization, 403 when it is there but wrong (RFC 8292 §4.2): `t` must be an
 *   ES256 JWT signed by the key in `k`, with `aud` this simulator's origin, `exp` in the next 24 hours and
 *   a `sub` (§2);
 * - 400 without a `TTL` header (RFC 8030 §5.2) or with a `Content-Encoding` other than aes128gcm
 *   (RFC 8291 §4), 413 for a body over 4096 bytes (RFC 8030 §7.2: what every push service takes);
 * - 400 when the body does not decrypt (RFC 8291 §3.4, RFC 8188 §2), or is not JSON. A real push service
 *   cannot read the body and would take it, and the browser would drop it; here the sender learns at once;
 * - 201 Created with the message's `Location` otherwise, and `received` holds the decrypted message.
 */
import { createECDH, createDecipheriv, createPublicKey, hkdfSync, randomBytes, verify, type ECDH } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listenOnLoopback, type LoopbackServer } from './loopback.js';

/** A browser's `PushSubscription.toJSON()`: the endpoint, and its public key and auth secret in base64url. */
export interface SimulatedSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

/** A message the simulated browser decrypted: its JSON payload, the TTL it came with and the VAPID `sub`. */
export interface ReceivedPush {
  payload: unknown;
  ttl: number;
  vapidSubject: string;
}

/** What the browser keeps of a subscription to read its messages (RFC 8291 §2). */
interface BrowserSide {
  keyPair: ECDH;
  authSecret: Buffer;
  expired: boolean;
  received: ReceivedPush[];
}

type Answer = { status: number; message: string; location?: string };

const PUSH_PATH = /^\/push\/([A-Za-z0-9_-]+)$/;
const MAX_BODY_BYTES = 4096;
const MAX_JWT_LIFETIME_SECONDS = 24 * 60 * 60;

export class PushServiceSimulator {
  private readonly subscriptions = new Map<string, BrowserSide>();

  private constructor(private readonly loopback: LoopbackServer) {}

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    return this.loopback.url;
  }

  static async start(options: { port?: number } = {}): Promise<PushServiceSimulator> {
    let simulator: PushServiceSimulator | undefined;
    const loopback = await listenOnLoopback((req, res) => void simulator!.handle(req, res), options.port);
    simulator = new PushServiceSimulator(loopback);
    return simulator;
  }

  /**
   * A browser's new subscription: generates a P-256 ECDH key pair and a 16-byte auth secret (as a browser
   * does), returns `{ endpoint: <url>/push/<random id>, keys: { p256dh, auth } }` (base64url). The
   * simulator keeps the private key to decrypt what arrives.
   */
  subscribe(): SimulatedSubscription {
    const keyPair = createECDH('prime256v1');
    keyPair.generateKeys();
    const authSecret = randomBytes(16);
    const id = randomBytes(16).toString('base64url');
    this.subscriptions.set(id, { keyPair, authSecret, expired: false, received: [] });
    return {
      endpoint: `${this.url}/push/${id}`,
      keys: { p256dh: keyPair.getPublicKey().toString('base64url'), auth: authSecret.toString('base64url') },
    };
  }

  /** Makes the push service answer 410 Gone for that endpoint from now on (the user unsubscribed in the browser). */
  expire(endpoint: string): void {
    this.subscriptionAt(endpoint).expired = true;
  }

  /** Messages received for an endpoint, decrypted (JSON.parse of the plaintext), with the VAPID claims checked. */
  received(endpoint: string): ReceivedPush[] {
    return [...this.subscriptionAt(endpoint).received];
  }

  async close(): Promise<void> {
    await this.loopback.stop();
  }

  /** A mistake of the test (an endpoint of another simulator, a typo) is an error, not an empty list. */
  private subscriptionAt(endpoint: string): BrowserSide {
    const id = endpoint.startsWith(`${this.url}/push/`) ? endpoint.slice(`${this.url}/push/`.length) : undefined;
    const subscription = id === undefined ? undefined : this.subscriptions.get(id);
    if (!subscription) throw new Error(`${endpoint} is not a subscription of this push service (${this.url})`);
    return subscription;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let answer: Answer;
    try {
      answer = this.accept(req, await bodyOf(req));
    } catch (error) {
      answer = { status: 500, message: (error as Error).message };
    }
    res.writeHead(answer.status, { 'content-type': 'text/plain; charset=utf-8', ...(answer.location ? { location: answer.location } : {}) });
    res.end(answer.message);
  }

  private accept(req: IncomingMessage, body: Buffer): Answer {
    const id = PUSH_PATH.exec(new URL(req.url ?? '/', this.url).pathname)?.[1];
    if (req.method !== 'POST' || id === undefined) return { status: 404, message: 'Not found' };
    const subscription = this.subscriptions.get(id);
    if (!subscription) return { status: 404, message: 'No such subscription' };
    if (subscription.expired) return { status: 410, message: 'Subscription expired' };

    const vapid = this.checkVapid(req.headers.authorization);
    if ('refused' in vapid) return vapid.refused;
    const ttl = Number(req.headers.ttl);
    if (req.headers.ttl === undefined || !Number.isSafeInteger(ttl) || ttl < 0) return { status: 400, message: 'A TTL header (seconds, an integer) is required' };
    if (req.headers['content-encoding'] !== 'aes128gcm') return { status: 400, message: 'Content-Encoding must be aes128gcm' };
    if (body.length > MAX_BODY_BYTES) return { status: 413, message: `The body is over ${MAX_BODY_BYTES} bytes` };

    let payload: unknown;
    try {
      payload = JSON.parse(decryptAes128gcm(body, subscription.keyPair, subscription.authSecret).toString('utf8'));
    } catch (error) {
      return { status: 400, message: `The body does not decrypt to JSON for this subscription: ${(error as Error).message}` };
    }
    subscription.received.push({ payload, ttl, vapidSubject: vapid.subject });
    return { status: 201, message: '', location: `${this.url}/message/${randomBytes(12).toString('base64url')}` };
  }

  /** RFC 8292: `vapid t=<JWT>, k=<public key>`; 401 when absent, 403 when present but not valid. */
  private checkVapid(authorization: string | undefined): { subject: string } | { refused: Answer } {
    const forbidden = (why: string) => ({ refused: { status: 403, message: `VAPID: ${why}` } });
    if (!authorization?.toLowerCase().startsWith('vapid ')) return { refused: { status: 401, message: 'A vapid Authorization is required' } };
    const params = new Map(
      authorization
        .slice('vapid '.length)
        .split(',')
        .map((param) => param.trim())
        .map((param) => [param.slice(0, Math.max(0, param.indexOf('='))), param.slice(param.indexOf('=') + 1)] as const),
    );
    const [token, key] = [params.get('t'), params.get('k')];
    if (!token || !key) return forbidden('both t and k are required');

    const [header, claims, signature] = token.split('.');
    if (header === undefined || claims === undefined || signature === undefined) return forbidden('t is not a JWT');
    if (!signedBy(key, `${header}.${claims}`, signature)) return forbidden('the JWT is not signed by the key k');
    const parsedHeader = parseJson(header) as { alg?: unknown } | undefined;
    if (parsedHeader?.alg !== 'ES256') return forbidden('the JWT must be ES256');
    const { aud, exp, sub } = (parseJson(claims) ?? {}) as { aud?: unknown; exp?: unknown; sub?: unknown };
    if (aud !== this.url) return forbidden(`aud must be ${this.url}`);
    const now = Math.floor(Date.now() / 1000);
    if (typeof exp !== 'number' || exp <= now || exp > now + MAX_JWT_LIFETIME_SECONDS) return forbidden('exp must be within the next 24 hours');
    if (typeof sub !== 'string' || sub === '') return forbidden('sub is required');
    return { subject: sub };
  }
}

/** An ES256 JWS signature (r || s, base64url) by the uncompressed P-256 public key `key` (base64url). */
function signedBy(key: string, signingInput: string, signature: string): boolean {
  const point = Buffer.from(key, 'base64url');
  if (point.length !== 65 || point[0] !== 0x04) return false;
  try {
    const publicKey = createPublicKey({
      key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') },
      format: 'jwk',
    });
    return verify('sha256', Buffer.from(signingInput), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'));
  } catch {
    return false;
  }
}

function parseJson(base64url: string): unknown {
  try {
    return JSON.parse(Buffer.from(base64url, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The user agent's side of RFC 8291 §3.4: the sender's public key is the key id of the aes128gcm header
 * (RFC 8188 §2.1), the ECDH secret is mixed with the auth secret into the input keying material, from
 * which the salt gives the content key and the nonce. A push message is a single record (§4), ending with
 * the last-record delimiter 0x02 and zero padding.
 */
function decryptAes128gcm(body: Buffer, keyPair: ECDH, authSecret: Buffer): Buffer {
  if (body.length < 21) throw new Error('shorter than the aes128gcm header');
  const salt = body.subarray(0, 16);
  const recordSize = body.readUInt32BE(16);
  const keyIdLength = body.readUInt8(20);
  const senderPublicKey = body.subarray(21, 21 + keyIdLength);
  const record = body.subarray(21 + keyIdLength);
  if (keyIdLength !== 65) throw new Error('the key id is not an uncompressed P-256 public key');
  if (record.length > recordSize) throw new Error('more than one record');
  if (record.length < 17) throw new Error('the record is shorter than its tag');

  const ecdhSecret = keyPair.computeSecret(senderPublicKey);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), keyPair.getPublicKey(), senderPublicKey]);
  const ikm = Buffer.from(hkdfSync('sha256', ecdhSecret, authSecret, keyInfo, 32));
  const contentKey = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));

  const decipher = createDecipheriv('aes-128-gcm', contentKey, nonce);
  decipher.setAuthTag(record.subarray(record.length - 16));
  const padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
  return unpadLastRecord(padded);
}

/** RFC 8188 §2: the plaintext, then 0x02 (the last record), then zeros. */
function unpadLastRecord(padded: Buffer): Buffer {
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end -= 1;
  if (padded[end] !== 2) throw new Error('the record does not end with the last-record delimiter');
  return padded.subarray(0, end);
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
