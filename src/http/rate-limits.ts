/**
 * Rate limits (the contract's 429 on every operation); rate-limit-stores.ts counts the budgets.
 *
 * Each operation belongs to a group with its own budget: authentication and account checks are the
 * tightest (they invite guessing), provider callbacks the loosest (providers send bursts), other writes
 * and reads in between. checkEmail, open to anyone and telling whether an address has an account, has a
 * budget of its own, tighter still (10 a minute per client address by default). Budgets live in memory, or in Redis (REDIS_URL) so that every instance shares
 * them; if Redis fails, each instance falls back to its own memory rather than refusing traffic.
 *
 * Whose budget pays: a request is charged to its address until its API key authenticates; then the
 * address gets its point back and the key (hashed: raw keys never reach the store) pays from its own
 * budget. What holds:
 * - a key that does not authenticate never has a budget: made-up keys, and any key sent to an operation
 *   without ApiKeyAuth (checkEmail, generateNewPassword, login...), where nothing checks it, cost the address;
 * - a failed authentication (401) costs the address, and once the address is spent its requests are
 *   refused before their key is looked up, so guessing keys is throttled like anything else (a spent
 *   address is refused even with a good key: otherwise the answer would confirm a right guess);
 * - an authenticated request costs its address nothing (charged, then refunded at once), so a user's
 *   authenticated traffic never drains the budget of the people sharing its address; each key (not each
 *   user: one per device) has a budget of its own;
 * - a provider callback costs its address the same way until its signature verifies (provider-signatures.ts);
 *   then the address gets its point back and the signer (the entity of the credential that signed it)
 *   pays, from a budget sized by its messages in flight (chargeSigner): a provider posting a receipt per
 *   message from a few addresses is not throttled as one client, and an unsigned or forged callback
 *   still costs its address (a spent address is refused before its signature is looked up).
 * Charging first and refunding, rather than looking the key up first, is what bounds the lookups one
 * address can cause, even with many requests at once. The lookup is the security handler's own
 * (auth.ts `authenticateOnce`): a request's key is checked once.
 *
 * Every answer carries `RateLimit-Policy: <limit>;w=<window>` and `RateLimit: limit=, remaining=, reset=`
 * for the budget that paid; a request over budget gets 429 `rate_limited` with `Retry-After`, and
 * `res.locals.rateLimitedBudget` names the budget for the metrics (its group, or `signed-callback`).
 */
import type { Request, RequestHandler, Response } from 'express';
import type { Redis } from 'ioredis';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { MemoryBudgets, RedisBudgets, type BudgetStore } from './rate-limit-stores.js';
import { ApiError } from './errors.js';
import { apiKeyIn, authenticateOnce, type KeyAuthenticator } from './auth.js';
import { addressOf, hashedKey } from './client.js';
import { findRoute, type Route } from './contract.js';

export type RateLimitGroup = 'auth' | 'read' | 'write' | 'callback' | 'checkEmail';

/** `points` requests per `seconds`; undefined switches the group's limit off. */
export interface Budget {
  points: number;
  seconds: number;
}

/** checkEmail's may be left out (no budget of its own: then it has no limit). */
export type RateLimitBudgets = Record<Exclude<RateLimitGroup, 'checkEmail'>, Budget | undefined> & { checkEmail?: Budget };

/**
 * The budget of a provider callback's signer (see chargeSigner): per window of `seconds`, `perMessage`
 * callbacks for each of its messages in flight, never fewer than `floor` nor more than `points`.
 */
export interface SignedCallbackBudget extends Budget {
  perMessage: number;
  floor: number;
}

/** Who signed a provider callback (an entity, for its credentials), and how many of its messages may still bring one (asked only when a budget is set). */
export interface CallbackSigner {
  id: string;
  inFlight(): Promise<number>;
}

/** A signer's budget by default: 4 callbacks (queued, sent, delivered, and one to spare) per message in flight, from 600 to 20,000 a minute. */
export const DEFAULT_SIGNED_CALLBACKS: SignedCallbackBudget = { points: 20_000, seconds: 60, perMessage: 4, floor: 600 };

export const DEFAULT_BUDGETS: RateLimitBudgets = {
  auth: { points: 20, seconds: 60 },
  read: { points: 1200, seconds: 60 },
  write: { points: 120, seconds: 60 },
  callback: { points: 600, seconds: 60 },
  checkEmail: { points: 10, seconds: 60 },
};

const AUTH_OPERATIONS = new Set([
  'login',
  'logout',
  'removeToken',
  'checkCredential',
  'changePassword',
  'generateNewPassword',
  'validatePasswordResetToken',
  'requestLoginUnlock',
  'checkLoginAttempt',
  'checkOperatorEmail',
  'signUp',
  'resendSignUpConfirmation',
  'verifyEmail',
  'changeMyEmail',
  'deleteMyAccount',
]);
const CALLBACK_OPERATIONS = new Set([
  'receiveSmsDeliveryReceipt',
  'receiveSmsWebhook',
  'verifySocialnetSubscription',
  'receiveSocialnetRemoval',
  'searchnetOAuthCallback',
  'socialVideoOAuthCallback',
]);

export function groupOf(operationId: string | undefined, method: string): RateLimitGroup {
  if (operationId === 'checkEmail') return 'checkEmail';
  if (operationId && AUTH_OPERATIONS.has(operationId)) return 'auth';
  if (operationId && CALLBACK_OPERATIONS.has(operationId)) return 'callback';
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}

export interface RateLimitOptions {
  budgets: RateLimitBudgets;
  routes: Route[];
  /** Share budgets across instances through this Redis; memory when absent. */
  redis?: Redis;
  /** Namespace of the keys in Redis (tests use their own). */
  keyPrefix?: string;
  /** How keys authenticate, on which operations (those whose security names ApiKeyAuth); without it every request costs its address. */
  keys?: { operations: ReadonlySet<string>; authenticate: KeyAuthenticator };
  /** The budget of the signers of provider callbacks (chargeSigner); without it a signed callback costs nothing once verified. */
  signedCallbacks?: SignedCallbackBudget;
}

/** What moves a callback's charge from its address to its signer, per request in the callback group (see chargeSigner). */
const signerCharges = new WeakMap<Request, (res: Response, signer: CallbackSigner) => Promise<void>>();

/**
 * Called once a provider callback's signature verified (provider-signatures.ts): the address gets its
 * point back and the signer pays, from a budget sized by its messages in flight; throws 429 when it is
 * spent. A callback that does not verify never gets here and stays charged to its address, which was
 * charged before its body was read: a spent address is refused before anything looks its signature up.
 */
export async function chargeSigner(req: Request, res: Response, signer: CallbackSigner): Promise<void> {
  await signerCharges.get(req)?.(res, signer);
}

export function rateLimits({ budgets, routes, redis, keyPrefix = 'palanque:rl', keys, signedCallbacks }: RateLimitOptions): RequestHandler {
  const storeOf = (budget: Budget, name: string): BudgetStore =>
    redis ? new RedisBudgets(redis, budget.points, budget.seconds, `${keyPrefix}:${name}`) : new MemoryBudgets(budget.points, budget.seconds);
  const limiters = new Map<RateLimitGroup, { store: BudgetStore; budget: Budget }>();
  for (const [group, budget] of Object.entries(budgets) as Array<[RateLimitGroup, Budget | undefined]>) {
    if (!budget) continue;
    limiters.set(group, { store: storeOf(budget, group), budget });
  }
  const operationOf = operationLookup(routes);
  const signers = signedCallbacks && { store: storeOf(signedCallbacks, 'signed-callback'), budget: signedCallbacks };
  const callbacks = limiters.get('callback');

  /** The address's point back (when it paid one), then one from the signer's budget, refused past its allowance. */
  const moveToSigner = (address: string) => async (res: Response, signer: CallbackSigner) => {
    if (callbacks) await callbacks.store.refund(address);
    if (!signers) return;
    const { store, budget } = signers;
    const allowance = Math.min(budget.points, Math.max(budget.floor, (await signer.inFlight()) * budget.perMessage));
    let state: RateLimiterRes;
    try {
      state = await store.consume(`signer:${signer.id}`);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      state = rejection; // past the cap, so past the allowance too
    }
    const remaining = allowance - state.consumedPoints;
    res.setHeader('RateLimit-Policy', `${allowance};w=${budget.seconds}`);
    res.setHeader('RateLimit', `limit=${allowance}, remaining=${Math.max(0, remaining)}, reset=${Math.ceil(state.msBeforeNext / 1000)}`);
    if (remaining < 0) {
      res.locals.rateLimitedBudget = 'signed-callback';
      throw tooManyRequests(state);
    }
  };

  /** The API key a request sends to an operation that checks keys (not yet known to authenticate). */
  const keyToCheck = (req: Request, operationId: string | undefined): string | undefined =>
    keys && operationId && keys.operations.has(operationId) ? apiKeyIn(req.get('Authorization')) : undefined;

  const authenticates = async (req: Request, key: string): Promise<boolean> => {
    try {
      return Boolean(await authenticateOnce(req, key, keys!.authenticate));
    } catch {
      return false; // the security handler meets the same failure and answers it
    }
  };

  /** Charges the address, then, once the key authenticates, gives the address its point back and charges the key. */
  const chargeKeyHolder = async (store: BudgetStore, req: Request, address: string, key: string): Promise<RateLimiterRes> => {
    const state = await store.consume(address); // a spent address is refused before its key is looked up
    if (!(await authenticates(req, key))) return state;
    await store.refund(address);
    return store.consume(hashedKey(key));
  };

  return (req, res, next) => {
    const operationId = operationOf(req.method, req.path);
    const group = groupOf(operationId, req.method);
    if (group === 'callback' && (callbacks || signers)) signerCharges.set(req, moveToSigner(addressOf(req)));
    const entry = limiters.get(group);
    if (!entry) return next();
    const { store, budget } = entry;
    res.setHeader('RateLimit-Policy', `${budget.points};w=${budget.seconds}`);
    const pass = (state: RateLimiterRes) => {
      res.setHeader('RateLimit', describe(budget, state));
      next();
    };
    const refuse = (rejection: unknown) => {
      if (!(rejection instanceof RateLimiterRes)) return next(rejection);
      res.locals.rateLimitedBudget = group; // counted by the metrics (palanque_rate_limited_total)
      res.setHeader('RateLimit', describe(budget, rejection));
      next(tooManyRequests(rejection));
    };

    const address = addressOf(req);
    const key = keyToCheck(req, operationId);
    if (key) return void chargeKeyHolder(store, req, address, key).then(pass, refuse).catch(next);
    let charged: RateLimiterRes | Promise<RateLimiterRes>;
    try {
      charged = store.consume(address);
    } catch (rejection) {
      return refuse(rejection);
    }
    // In memory the charge is known at once and the request goes on in this tick.
    if (charged instanceof Promise) void charged.then(pass, refuse).catch(next);
    else pass(charged);
  };
}

function tooManyRequests(state: RateLimiterRes): ApiError {
  const retryAfter = Math.max(1, Math.ceil(state.msBeforeNext / 1000));
  return new ApiError(429, 'rate_limited', `Too many requests. Try again in ${retryAfter} seconds.`, [], { 'Retry-After': String(retryAfter) });
}

function describe(budget: Budget, state: RateLimiterRes): string {
  return `limit=${budget.points}, remaining=${Math.max(0, state.remainingPoints)}, reset=${Math.ceil(state.msBeforeNext / 1000)}`;
}

/** operationId of a method and path (findRoute remembers exact paths, so the hot path skips the regexes). */
function operationLookup(routes: Route[]): (method: string, path: string) => string | undefined {
  return (method, path) => findRoute(routes, path)?.operationIds[method === 'HEAD' ? 'GET' : method];
}
