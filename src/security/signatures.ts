/**
 * Signatures of provider callbacks: an HMAC of what the provider sent, keyed with a secret both sides
 * hold, compared in constant time so that the time of a refusal tells an attacker nothing.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export function hmac(algorithm: 'sha1' | 'sha256', key: string, data: string | Buffer): Buffer {
  return createHmac(algorithm, key).update(data).digest();
}

/** Whether two byte strings are equal, in time that depends only on their lengths. */
export function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Whether two texts are equal, in time that depends only on their lengths (verify tokens). */
export function sameText(a: string, b: string): boolean {
  return sameBytes(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
