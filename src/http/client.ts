/** Who is calling, for per-client bookkeeping (rate limits, idempotency keys). */
import { createHash } from 'node:crypto';
import type { Request } from 'express';

/**
 * A hash of the caller's API key when it sends one (raw keys never reach a store), otherwise its
 * address (from X-Forwarded-For when TRUST_PROXY trusts the proxy).
 */
export function clientKey(req: Request): string {
  const credentials = /^(?:Token|Bearer) (.+)$/i.exec(req.get('Authorization') ?? '')?.[1];
  if (credentials) return `key:${createHash('sha256').update(credentials).digest('base64url')}`;
  return `ip:${req.ip ?? 'unknown'}`;
}
