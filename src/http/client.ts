/** Who is calling, for per-client bookkeeping (rate limits, idempotency keys). */
import { createHash } from 'node:crypto';
import type { Request } from 'express';

/**
 * The authenticated user once the key was checked (so a user keeps their idempotency keys across
 * logins); before that, a hash of the API key it sends (raw keys never reach a store); otherwise its
 * address (from X-Forwarded-For when TRUST_PROXY trusts the proxy).
 */
export function clientKey(req: Request): string {
  const caller = req.res?.locals.caller as { user: { id: number } } | undefined;
  if (caller) return `user:${caller.user.id}`;
  const credentials = /^(?:Token|Bearer) (.+)$/i.exec(req.get('Authorization') ?? '')?.[1];
  if (credentials) return `key:${createHash('sha256').update(credentials).digest('base64url')}`;
  return `ip:${req.ip ?? 'unknown'}`;
}
