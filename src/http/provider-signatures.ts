/**
 * Checks the signature of provider callbacks before anything else acts on them (the idempotency store
 * included, so an unsigned request cannot leave an answer for a key the provider will use). It runs after
 * the contract validator, which has matched the operation and checked the request's shape. A check that
 * names who signed moves the callback's rate-limit charge from its address to that signer (rate-limits.ts
 * chargeSigner), so the limit of such an operation is applied once its signature is judged.
 */
import type { Request, RequestHandler } from 'express';
import { ApiError } from './errors.js';
import { operationIdOf, type OperationId } from './operations.js';
import { chargeSigner, type CallbackSigner } from './rate-limits.js';

/** `missing`: no signature was sent (401); `invalid`: it does not match (403). */
export type SignatureVerdict = 'valid' | 'missing' | 'invalid';

/** A valid signature and who made it: the callback is charged to that signer's budget. */
export interface SignedBy {
  signer: CallbackSigner;
}

export type SignatureCheck = (req: Request & { rawBody?: Buffer }) => SignatureVerdict | SignedBy | Promise<SignatureVerdict | SignedBy>;

export function providerSignatures(checks: Partial<Record<OperationId, SignatureCheck>>): RequestHandler {
  return async (req, res, next) => {
    const operationId = operationIdOf(req);
    const check = operationId && checks[operationId];
    if (!check) return next();
    const verdict = await check(req);
    if (verdict === 'missing') throw new ApiError(401, 'invalid_signature', 'The request is not signed: the provider signature header is missing.');
    if (verdict === 'invalid') throw new ApiError(403, 'invalid_signature', 'The request signature does not match.');
    if (verdict !== 'valid') await chargeSigner(req, res, verdict.signer);
    next();
  };
}
