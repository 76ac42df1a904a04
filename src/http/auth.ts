/**
 * Authentication of the contract's ApiKeyAuth scheme: `Authorization: Token <key>` (or `Bearer <key>`).
 * It runs as express-openapi-validator's security handler, so it applies exactly to the operations whose
 * `security` names ApiKeyAuth, and before their parameters and bodies are checked (a client without a
 * valid key learns nothing about its request). The caller it finds is kept for the handlers.
 */
import type { Request, Response } from 'express';
import type { Authenticated } from '../accounts/tokens.js';
import { ApiError, unauthorized } from './errors.js';

export type Caller = Authenticated;

export type KeyAuthenticator = (key: string) => Promise<Caller | undefined>;

const CREDENTIALS = /^(?:Token|Bearer) +(\S+) *$/i;

/** The key in an Authorization header, if it has one of the accepted forms. */
export function apiKeyIn(header: string | undefined): string | undefined {
  return header ? CREDENTIALS.exec(header)?.[1] : undefined;
}

export function apiKeySecurityHandler(authenticate: KeyAuthenticator) {
  return async (req: Request): Promise<true> => {
    const key = apiKeyIn(req.get('Authorization'));
    if (!key) throw unauthorized('The Authorization header must be "Token <key>" or "Bearer <key>".');
    const caller = await authenticate(key);
    if (!caller) throw unauthorized('The API key is invalid, expired or revoked. Log in again.');
    req.res!.locals.caller = caller;
    return true;
  };
}

/** The authenticated caller of an ApiKeyAuth operation (the security handler ran before the handler). */
export function callerOf(res: Response): Caller {
  const caller = res.locals.caller as Caller | undefined;
  if (!caller) throw new Error('callerOf() used on an operation without ApiKeyAuth');
  return caller;
}

export function requireAdmin(caller: Caller): void {
  if (!caller.user.is_admin) throw new ApiError(403, 'forbidden', 'Only platform administrators may do this.');
}
