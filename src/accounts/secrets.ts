/**
 * Random secrets handed to a client once (API keys, reset tokens, generated passwords), and the hash
 * the server keeps instead. A fast hash is right here: the secrets carry 192+ random bits, so there is
 * nothing to guess, and a lookup by hash compares no secret in JavaScript (no timing to measure).
 */
import { createHash, randomBytes } from 'node:crypto';

/** 32 random bytes (256 bits), base64url, after a prefix that lets secret scanners recognise the kind. */
export function newSecret(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

export function secretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** A password for a person to read and type: 20 characters without look-alikes (about 110 bits). */
export function newReadablePassword(): string {
  const alphabet = 'abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  const bytes = randomBytes(40);
  let password = '';
  // Rejection sampling keeps every character equally likely (256 is not a multiple of the alphabet).
  for (const byte of bytes) {
    if (byte < alphabet.length * Math.floor(256 / alphabet.length)) password += alphabet[byte % alphabet.length];
    if (password.length === 20) return password;
  }
  return password + newReadablePassword().slice(password.length);
}
