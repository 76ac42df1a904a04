/**
 * Checks the signature of provider callbacks before anything else acts on them (the idempotency store
 * included, so an unsigned request cannot leave an answer for a key the provider will use). It runs after
 * the contract validator, which has matched the operation and checked the request's shape.
 */
import type { Request, RequestHandler } from 'express';
import { ApiError } from './errors.js';
import { operationIdOf, type OperationId } from './operations.js';

/** `missing`: no signature was sent (401); `invalid`: it does not match (403). */
export type SignatureVerdict = 'valid' | 'missing' | 'invalid';

export type SignatureCheck = (req: Request & { rawBody?: Buffer }) => SignatureVerdict | Promise<SignatureVerdict>;

export function providerSignatures(checks: Partial<Record<OperationId, SignatureCheck>>): RequestHandler {
  return async (req, _res, next) => {
    const operationId = operationIdOf(req);
    const check = operationId && checks[operationId];
    if (!check) return next();
    const verdict = await check(req);
    if (verdict === 'missing') throw new ApiError(401, 'invalid_signature', 'The request is not signed: the provider signature header is missing.');
    if (verdict === 'invalid') throw new ApiError(403, 'invalid_signature', 'The request signature does not match.');
    next();
  };
}
