/**
 * Authentication of the contract's ApiKeyAuth scheme: `Authorization: Token <key>` (or `Bearer <key>`).
 * It runs as express-openapi-validator's security handler, so it applies exactly to the operations whose
 * `security` names ApiKeyAuth, and before their parameters and bodies are checked (a client without a
 * valid key learns nothing about its request). The caller it finds is kept for the handlers.
 *
 * A request's key is looked up once: the rate limiter asks first (an authenticated key is charged its own
 * budget, see rate-limits.ts), and the security handler gets the same answer. Across requests, a key that
 * worked is remembered for AUTH_CACHE_SECONDS, with revocations honoured at once on the revoking instance
 * and within a second on the others (accounts/key-cache.ts); the caller is then only what the key says of
 * its user (`KeyHolder`: id, username, admin and active flags), and a handler that needs more reads it.
 *
 * A lookup that fails (the database out of reach) refuses nobody: it answers 503, never 401
 * (translateKeyLookupFailure), so front ends keep their users logged in through an outage.
 */
import type { Application, Request, Response } from 'express';
import type { OpenApiDocument } from './contract.js';
import { isDatabaseError } from '../db/outages.js';
import { ApiError, serviceUnavailable, unauthorized, type ErrorTranslator } from './errors.js';

/**
 * The holder of a live key, the key's id and when it expires. `user` is what the key says of its user
 * (accounts/key-cache.ts's KeyHolder: those columns of the users table), never the password hash or the profile.
 */
export interface Caller {
  user: { id: number; username: string; is_admin: boolean; is_active: boolean };
  tokenId: number;
  expiresAt: Date;
}

export type KeyAuthenticator = (key: string) => Promise<Caller | undefined>;

const CREDENTIALS = /^(?:Token|Bearer) +(\S+) *$/i;

/** The key in an Authorization header, if it has one of the accepted forms. */
export function apiKeyIn(header: string | undefined): string | undefined {
  return header ? CREDENTIALS.exec(header)?.[1] : undefined;
}

/** The operationIds whose security names ApiKeyAuth: the only ones where a key can authenticate. */
export function keyAuthenticatedOperations(document: OpenApiDocument): Set<string> {
  const operations = new Set<string>();
  const defaultSecurity = document.security as SecurityRequirement[] | undefined;
  for (const pathItem of Object.values(document.paths)) {
    for (const operation of Object.values(pathItem) as Array<{ operationId?: string; security?: SecurityRequirement[] }>) {
      if (typeof operation !== 'object' || !operation?.operationId) continue;
      if ((operation.security ?? defaultSecurity ?? []).some((requirement) => 'ApiKeyAuth' in requirement)) operations.add(operation.operationId);
    }
  }
  return operations;
}

type SecurityRequirement = Record<string, string[]>;

const lookups = new WeakMap<Request, { key: string; caller: Promise<Caller | undefined> }>();

/** The caller the key belongs to, looked up at most once per request (a failed lookup rejects both askers alike). */
export function authenticateOnce(req: Request, key: string, authenticate: KeyAuthenticator): Promise<Caller | undefined> {
  const known = lookups.get(req);
  if (known?.key === key) return known.caller;
  const caller = authenticate(key);
  lookups.set(req, { key, caller });
  return caller;
}

const keyAuthenticators = new WeakMap<Application, KeyAuthenticator>();

/**
 * Sets how an app looks up keys. The contract validator that runs the security handler is shared by the
 * apps of a process (validation.ts), so the handler asks the request's app for its lookup.
 */
export function bindKeyAuthenticator(app: Application, authenticate: KeyAuthenticator): void {
  keyAuthenticators.set(app, authenticate);
}

/** The key lookup bound to the request's app. */
export function keyAuthenticatorOf(req: Request): KeyAuthenticator {
  const authenticate = keyAuthenticators.get(req.app);
  if (!authenticate) throw new Error('No key lookup is bound to this app (bindKeyAuthenticator)');
  return authenticate;
}

/** A handler of the ApiKeyAuth scheme (express-openapi-validator's, the read lane's), with the request's key lookup. */
export function apiKeySecurityHandler(authenticatorOf: (req: Request) => KeyAuthenticator) {
  return async (req: Request): Promise<true> => {
    const key = apiKeyIn(req.get('Authorization'));
    if (!key) throw unauthorized('The Authorization header must be "Token <key>" or "Bearer <key>".');
    let caller: Caller | undefined;
    try {
      caller = await authenticateOnce(req, key, authenticatorOf(req));
    } catch (error) {
      failedLookups.set(req, error);
      throw error;
    }
    if (!caller) throw unauthorized('The API key is invalid, expired or revoked. Log in again.');
    req.res!.locals.caller = caller;
    return true;
  };
}

/** Requests whose key could not be looked up, with why (the validator passes on only a 401 with the message). */
const failedLookups = new WeakMap<Request, unknown>();

/**
 * A key that could not be checked is not a wrong key: a 401 would log every user out of their front end
 * during an outage (and echo the driver's text, SQL included). A lookup the database could not answer
 * (unreachable, or its tables not as this build expects mid-deploy) is a 503 with Retry-After; anything
 * else is our bug, a 500. Either way the failure is logged with its cause (errorHandler). Listed before
 * the validator's translator, which would make it a 401.
 */
export const translateKeyLookupFailure: ErrorTranslator = (_error, req) => {
  if (!failedLookups.has(req)) return undefined;
  const cause = failedLookups.get(req);
  const answer = isDatabaseError(cause)
    ? serviceUnavailable('The API key could not be checked: the service cannot reach its database for a moment. Send the request again in a few seconds.')
    : new ApiError(500, 'internal_error', 'An unexpected error occurred while checking the API key. Quote the request id when reporting it.');
  answer.cause = cause;
  return answer;
};

/** The authenticated caller of an ApiKeyAuth operation (the security handler ran before the handler). */
export function callerOf(res: Response): Caller {
  const caller = res.locals.caller as Caller | undefined;
  if (!caller) throw new Error('callerOf() used on an operation without ApiKeyAuth');
  return caller;
}

export function requireAdmin(caller: Caller): void {
  if (!caller.user.is_admin) throw new ApiError(403, 'forbidden', 'Only platform administrators may do this.');
}
