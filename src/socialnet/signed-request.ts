/**
 * The social network's `signed_request`: `<signature>.<payload>`, both base64url, where the signature is
 * the HMAC-SHA256 of the payload (as sent, still encoded) keyed with the app secret, and the payload is
 * JSON naming the app-scoped user and when it was issued. The format of Facebook's data-deletion callback:
 * https://developers.facebook.com/docs/development/create-an-app/app-dashboard/data-deletion-callback
 * A validly signed request is only as fresh as its `issued_at` (checkIssuedAt): a recorded one cannot be
 * replayed once older than the maximum age.
 */
import type { ErrorDetail } from '../http/errors.js';
import { hmac, sameBytes } from '../security/signatures.js';

export type SignedRequest =
  /** `issuedAt` as the payload gives it, unchecked (see checkIssuedAt). */
  | { outcome: 'valid'; userId: string; issuedAt: unknown }
  /** Not `<signature>.<payload>`, or a payload that is not JSON naming a user. */
  | { outcome: 'malformed'; reason: string }
  | { outcome: 'bad_signature' };

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

export function readSignedRequest(signedRequest: string, appSecret: string | undefined): SignedRequest {
  const parts = signedRequest.trim().split('.');
  if (parts.length !== 2 || !parts.every((part) => BASE64URL.test(part))) {
    return { outcome: 'malformed', reason: 'must be <signature>.<payload>, both base64url' };
  }
  const [signature, payload] = parts as [string, string];
  // Without a configured secret nothing can be verified, so nothing is trusted.
  if (!appSecret || !sameBytes(Buffer.from(signature, 'base64url'), hmac('sha256', appSecret, payload))) return { outcome: 'bad_signature' };

  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return { outcome: 'malformed', reason: 'the payload must be base64url JSON' };
  }
  const { user_id: userId, algorithm, issued_at: issuedAt } = (data ?? {}) as Record<string, unknown>;
  if (typeof algorithm === 'string' && algorithm.toUpperCase() !== 'HMAC-SHA256') {
    return { outcome: 'malformed', reason: `the payload's algorithm must be HMAC-SHA256, not ${algorithm}` };
  }
  const id = typeof userId === 'number' ? String(userId) : userId;
  if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{1,255}$/.test(id)) return { outcome: 'malformed', reason: 'the payload must name the user (user_id)' };
  return { outcome: 'valid', userId: id, issuedAt };
}

/** How far ahead of this clock the network's may be: a request issued later than this is refused. */
export const ISSUED_AT_CLOCK_SKEW_MS = 5 * 60_000;

/**
 * Why a request issued at `issuedAt` (Unix seconds) is refused, or undefined when it is not: it must be
 * given, whole seconds, at most `maxAgeMs` old and at most ISSUED_AT_CLOCK_SKEW_MS ahead of `now`.
 */
export function checkIssuedAt(issuedAt: unknown, maxAgeMs: number, now = new Date()): Pick<ErrorDetail, 'rule' | 'message' | 'value'> | undefined {
  if (issuedAt === undefined) return { rule: 'required', message: 'is required' };
  if (typeof issuedAt !== 'number' || !Number.isInteger(issuedAt) || issuedAt < 0) return { rule: 'unix_time', message: 'must be whole Unix seconds', value: issuedAt };
  const ageMs = now.getTime() - issuedAt * 1000;
  if (ageMs > maxAgeMs) return { rule: 'max_age', message: `must be at most ${maxAgeMs / 1000} seconds ago`, value: issuedAt };
  if (ageMs < -ISSUED_AT_CLOCK_SKEW_MS) return { rule: 'not_in_future', message: `must not be more than ${ISSUED_AT_CLOCK_SKEW_MS / 1000} seconds ahead`, value: issuedAt };
  return undefined;
}

/** A signed request for `payload`, as the network makes them (for tests and the simulator). */
export function signRequest(payload: object, appSecret: string): string {
  const encoded = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${hmac('sha256', appSecret, encoded).toString('base64url')}.${encoded}`;
}
