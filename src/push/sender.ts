/**
 * Web Push to operators' devices: a payload encrypted for one browser subscription (RFC 8291, aes128gcm)
 * and handed to that browser's push service (RFC 8030) with a VAPID signature (RFC 8292), by `web-push`.
 *
 * The guarantee: `send` never throws and always says which of three things happened. `delivered`: the
 * push service took the message (it then holds it up to the TTL until the device is online; nothing
 * tells us it was shown). `gone`: the push service answered 404 or 410, the subscription is dead for
 * good and its owner must delete it. `failed`: anything else (refused, unreachable, too slow, a
 * malformed subscription); the subscription may still be fine and the caller may retry.
 *
 * The VAPID keys are passed on every call, never through web-push's global `setVapidDetails`, so that two
 * senders in one process (the tests, the sandbox) cannot sign with each other's keys.
 */
import { createECDH } from 'node:crypto';
import { Agent as HttpsAgent, type RequestOptions as HttpsRequestOptions } from 'node:https';
import { createConnection, type Socket } from 'node:net';
import webpush from 'web-push';

/** base64url keys as web-push's `generateVAPIDKeys()` makes them; `subject` a mailto: or https: URL the push service may contact. */
export interface VapidKeys {
  publicKey: string;
  privateKey: string;
  subject: string;
}

/** A browser's `PushSubscription.toJSON()`: where to post, and the keys to encrypt for (base64url). */
export interface PushSubscriptionKeys {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export type PushOutcome =
  | { outcome: 'delivered'; status: number }
  | { outcome: 'gone'; status: number }
  | { outcome: 'failed'; status?: number; reason: string };

export interface PushSenderOptions {
  /** How long the socket may stay idle before the send is given up as failed, in milliseconds (10 s by default). */
  timeoutMs?: number;
  /**
   * How long the push service keeps a message for a device that is offline, in seconds (a day by
   * default: an operator's alert older than that is stale, and web-push's four weeks would wake a device
   * with it).
   */
  ttlSeconds?: number;
  /**
   * Also sends to plain `http:` endpoints on loopback (127.0.0.1, ::1, localhost): the push service
   * simulator of the tests and the sandbox. Off by default, because browsers' subscriptions always name
   * an https: push service (RFC 8030 §8) and an endpoint saying otherwise was not made by a browser.
   */
  allowLoopbackHttp?: boolean;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_TTL_SECONDS = 24 * 60 * 60;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
/** The push services' answers that mean the subscription no longer exists (RFC 8030 §7.3 and §8.2). */
const GONE_STATUSES = new Set([404, 410]);

export class PushSender {
  private readonly timeoutMs: number;
  private readonly ttlSeconds: number;
  private readonly allowLoopbackHttp: boolean;

  constructor(
    private readonly vapid: VapidKeys,
    options: PushSenderOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.ttlSeconds = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;
    this.allowLoopbackHttp = options.allowLoopbackHttp ?? false;
  }

  /**
   * Encrypts and sends `payload` (JSON-serialised) to the subscription: 'gone' when the push service
   * answers 404 or 410 (the subscription must be removed), 'failed' on any other error (never throws).
   */
  async send(subscription: PushSubscriptionKeys, payload: object): Promise<PushOutcome> {
    try {
      const transport = this.transportFor(subscription.endpoint);
      if ('refused' in transport) return { outcome: 'failed', reason: transport.refused };
      const answer = await webpush.sendNotification(subscription, JSON.stringify(payload), {
        vapidDetails: this.vapid,
        TTL: this.ttlSeconds,
        timeout: this.timeoutMs,
        contentEncoding: 'aes128gcm',
        ...(transport.agent ? { agent: transport.agent } : {}),
      });
      return { outcome: 'delivered', status: answer.statusCode };
    } catch (error) {
      return outcomeOfError(error);
    }
  }

  /** web-push's own TLS connection for https: endpoints, a plain one for allowed loopback http: ones, or why not. */
  private transportFor(endpoint: string): { agent?: HttpsAgent } | { refused: string } {
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      return { refused: `the subscription endpoint is not a URL: ${endpoint}` };
    }
    if (url.protocol === 'https:') return {};
    if (url.protocol === 'http:' && this.allowLoopbackHttp && LOOPBACK_HOSTS.has(url.hostname)) return { agent: plainLoopbackAgent };
    return { refused: `push services are reached over https, not ${url.protocol} (${url.origin})` };
  }
}

/** Checks VAPID keys read from the environment (web-push's validators), throwing an Error naming the bad one. */
export function checkVapidKeys(vapid: VapidKeys): void {
  // getVapidHeaders runs web-push's checks of the subject and of both keys' encoding and length, and signs.
  webpush.getVapidHeaders('https://push.example', vapid.subject, vapid.publicKey, vapid.privateKey, 'aes128gcm');
  // Two well-formed keys of different pairs pass those checks; every push service would then refuse every message.
  if (publicKeyOf(vapid.privateKey) !== vapid.publicKey) {
    throw new Error('The VAPID public key is not the one of the VAPID private key: they come from different key pairs.');
  }
}

function publicKeyOf(privateKey: string): string {
  const curve = createECDH('prime256v1');
  try {
    curve.setPrivateKey(Buffer.from(privateKey, 'base64url'));
  } catch (error) {
    throw new Error(`The VAPID private key is not a P-256 private key: ${(error as Error).message}`);
  }
  return curve.getPublicKey().toString('base64url');
}

function outcomeOfError(error: unknown): PushOutcome {
  if (error instanceof webpush.WebPushError) {
    const status = error.statusCode;
    if (GONE_STATUSES.has(status)) return { outcome: 'gone', status };
    const detail = error.body ? `: ${error.body.slice(0, 300)}` : '';
    return { outcome: 'failed', status, reason: `the push service answered ${status}${detail}` };
  }
  return { outcome: 'failed', reason: error instanceof Error ? error.message : String(error) };
}

/**
 * web-push always calls `https.request`, whatever the endpoint's scheme; this agent gives that request a
 * plain TCP connection instead of a TLS one, so that it can reach the simulator on loopback.
 */
class PlainConnectionAgent extends HttpsAgent {
  override createConnection(options: HttpsRequestOptions): Socket {
    return createConnection({ host: options.host ?? '127.0.0.1', port: Number(options.port) });
  }
}

const plainLoopbackAgent = new PlainConnectionAgent();
