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
 * A subscription's endpoint is an address a user gave us, so web-push builds the request
 * (`generateRequestDetails`) and outbound webhooks' checked client sends it (`webhooks/outbound-http.ts`):
 * https only, no private, loopback or link-local address at connect time (a name re-pointed at 127.0.0.1
 * after the subscription was registered is refused), IPv6 forms judged by the IPv4 address they carry,
 * no redirect followed, a deadline on the whole exchange and at most 1,024 bytes of the answer read.
 *
 * The VAPID keys are passed on every call, never through web-push's global `setVapidDetails`, so that two
 * senders in one process (the tests, the sandbox) cannot sign with each other's keys.
 */
import { createECDH } from 'node:crypto';
import webpush from 'web-push';
import { post, RefusedDestination, type LookupAll, type OutboundPolicy } from '../webhooks/outbound-http.js';

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
  /**
   * How long the push service keeps a message for a device that is offline, in seconds (a day by
   * default: an operator's alert older than that is stale, and web-push's four weeks would wake a device
   * with it).
   */
  ttlSeconds?: number;
  /**
   * Where pushes may go, and the deadline of each send: by default https only, public addresses only,
   * 10 s. Browsers' subscriptions always name an https push service (RFC 8030 §8); the tests and the
   * sandbox allow http and private addresses to reach the push service simulator on loopback.
   */
  outbound?: OutboundPolicy;
  /** How endpoints' names resolve (the system's resolver by default; tests give a rebinding one). */
  lookupAll?: LookupAll;
}

const DEFAULT_OUTBOUND: OutboundPolicy = { allowHttp: false, allowPrivateAddresses: false, timeoutMs: 10_000 };
const DEFAULT_TTL_SECONDS = 24 * 60 * 60;
/** The push services' answers that mean the subscription no longer exists (RFC 8030 §7.3 and §8.2). */
const GONE_STATUSES = new Set([404, 410]);
const USER_AGENT = 'Palanque-Push/1';

export class PushSender {
  private readonly ttlSeconds: number;
  private readonly outbound: OutboundPolicy;
  private readonly lookupAll: LookupAll | undefined;

  constructor(
    private readonly vapid: VapidKeys,
    options: PushSenderOptions = {},
  ) {
    this.ttlSeconds = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;
    this.outbound = options.outbound ?? DEFAULT_OUTBOUND;
    this.lookupAll = options.lookupAll;
  }

  /**
   * Encrypts and sends `payload` (JSON-serialised) to the subscription: 'gone' when the push service
   * answers 404 or 410 (the subscription must be removed), 'failed' on any other error (never throws).
   */
  async send(subscription: PushSubscriptionKeys, payload: object): Promise<PushOutcome> {
    try {
      if (!URL.canParse(subscription.endpoint)) return { outcome: 'failed', reason: `the subscription endpoint is not a URL: ${subscription.endpoint}` };
      const details = webpush.generateRequestDetails(subscription, JSON.stringify(payload), {
        vapidDetails: this.vapid,
        TTL: this.ttlSeconds,
        contentEncoding: 'aes128gcm',
      });
      const headers: Record<string, string> = { 'user-agent': USER_AGENT };
      for (const [name, value] of Object.entries(details.headers)) headers[name] = String(value);
      const answer = await post(details.endpoint, details.body, headers, this.outbound, this.lookupAll);
      if (answer.status >= 200 && answer.status < 300) return { outcome: 'delivered', status: answer.status };
      if (GONE_STATUSES.has(answer.status)) return { outcome: 'gone', status: answer.status };
      const detail = answer.body ? `: ${answer.body.slice(0, 300)}` : '';
      return { outcome: 'failed', status: answer.status, reason: `the push service answered ${answer.status}${detail}` };
    } catch (error) {
      if (error instanceof RefusedDestination) return { outcome: 'failed', reason: `refused the push service's address (${error.rule}): ${error.message}` };
      return { outcome: 'failed', reason: error instanceof Error ? error.message : String(error) };
    }
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
