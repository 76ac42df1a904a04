/** Who is calling, for per-client bookkeeping (rate limits, idempotency keys). */
import { createHash } from 'node:crypto';
import type { Request } from 'express';

/** The address a request comes from (from X-Forwarded-For when TRUST_PROXY trusts the proxy). */
export function addressOf(req: Request): string {
  return `ip:${req.ip ?? 'unknown'}`;
}

/** An API key as stores know it: hashed, so raw keys never reach a store. */
export function hashedKey(key: string): string {
  return `key:${createHash('sha256').update(key).digest('base64url')}`;
}

/**
 * The owner of idempotency keys: the authenticated user once the key was checked (so a user keeps their
 * idempotency keys across logins); before that (an operation without ApiKeyAuth), the API key it sends,
 * hashed, so that the keys of a client that sends one on every request do not depend on its address;
 * otherwise its address. A key that was never checked owns only the idempotency keys sent with it.
 * Rate limits do not use this: they trust a key only once it authenticates (rate-limits.ts).
 */
export function clientKey(req: Request): string {
  const caller = req.res?.locals.caller as { user: { id: number } } | undefined;
  if (caller) return `user:${caller.user.id}`;
  const credentials = /^(?:Token|Bearer) (.+)$/i.exec(req.get('Authorization') ?? '')?.[1];
  if (credentials) return hashedKey(credentials);
  return addressOf(req);
}
