/**
 * Rate limits (the contract's 429 on every operation), with rate-limiter-flexible.
 *
 * Each operation belongs to a group with its own budget: authentication and account checks are the
 * tightest (they invite guessing), provider callbacks the loosest (providers send bursts), other writes
 * and reads in between. Budgets live in memory, or in Redis (REDIS_URL) so that every instance shares
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
 *   user: one per device) has a budget of its own.
 * Charging first and refunding, rather than looking the key up first, is what bounds the lookups one
 * address can cause, even with many requests at once. The lookup is the security handler's own
 * (auth.ts `authenticateOnce`): a request's key is checked once.
 *
 * Every answer carries `RateLimit-Policy: <limit>;w=<window>` and `RateLimit: limit=, remaining=, reset=`
 * for the budget that paid; a request over budget gets 429 `rate_limited` with `Retry-After`.
 */
import type { Request, RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from './errors.js';
import { apiKeyIn, authenticateOnce, type KeyAuthenticator } from './auth.js';
import { addressOf, hashedKey } from './client.js';
import { findRoute, type Route } from './contract.js';

export type RateLimitGroup = 'auth' | 'read' | 'write' | 'callback';

/** `points` requests per `seconds`; undefined switches the group's limit off. */
export interface Budget {
  points: number;
  seconds: number;
}

export type RateLimitBudgets = Record<RateLimitGroup, Budget | undefined>;

export const DEFAULT_BUDGETS: RateLimitBudgets = {
  auth: { points: 20, seconds: 60 },
  read: { points: 1200, seconds: 60 },
  write: { points: 120, seconds: 60 },
  callback: { points: 600, seconds: 60 },
};

const AUTH_OPERATIONS = new Set([
  'login',
  'logout',
  'removeToken',
  'checkCredential',
  'generateNewPassword',
  'validatePasswordResetToken',
  'checkEmail',
  'checkLoginAttempt',
  'checkOperatorEmail',
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
}

export function rateLimits({ budgets, routes, redis, keyPrefix = 'palanque:rl', keys }: RateLimitOptions): RequestHandler {
  const limiters = new Map<RateLimitGroup, { limiter: RateLimiterAbstract; budget: Budget }>();
  for (const [group, budget] of Object.entries(budgets) as Array<[RateLimitGroup, Budget | undefined]>) {
    if (!budget) continue;
    const memory = new RateLimiterMemory({ points: budget.points, duration: budget.seconds, keyPrefix: `${keyPrefix}:${group}` });
    const limiter = redis
      ? new RateLimiterRedis({ storeClient: redis, points: budget.points, duration: budget.seconds, keyPrefix: `${keyPrefix}:${group}`, insuranceLimiter: memory })
      : memory;
    limiters.set(group, { limiter, budget });
  }
  const operationOf = operationLookup(routes);

  /** The key of a request that authenticates on its operation, if it has one. */
  const authenticatedKey = async (req: Request, operationId: string | undefined): Promise<string | undefined> => {
    if (!keys || !operationId || !keys.operations.has(operationId)) return undefined;
    const key = apiKeyIn(req.get('Authorization'));
    if (!key) return undefined;
    try {
      return (await authenticateOnce(req, key, keys.authenticate)) ? key : undefined;
    } catch {
      return undefined; // the security handler meets the same failure and answers it
    }
  };

  return async (req, res, next) => {
    const operationId = operationOf(req.method, req.path);
    const entry = limiters.get(groupOf(operationId, req.method));
    if (!entry) return next();
    const { limiter, budget } = entry;
    res.setHeader('RateLimit-Policy', `${budget.points};w=${budget.seconds}`);
    try {
      const address = addressOf(req);
      let state = await limiter.consume(address);
      const key = await authenticatedKey(req, operationId);
      if (key) {
        await limiter.reward(address, 1);
        state = await limiter.consume(hashedKey(key));
      }
      res.setHeader('RateLimit', describe(budget, state));
      next();
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) return next(rejection);
      const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
      res.setHeader('RateLimit', describe(budget, rejection));
      next(new ApiError(429, 'rate_limited', `Too many requests. Try again in ${retryAfter} seconds.`, [], { 'Retry-After': String(retryAfter) }));
    }
  };
}

function describe(budget: Budget, state: RateLimiterRes): string {
  return `limit=${budget.points}, remaining=${Math.max(0, state.remainingPoints)}, reset=${Math.ceil(state.msBeforeNext / 1000)}`;
}

/** operationId of a method and path (findRoute remembers exact paths, so the hot path skips the regexes). */
function operationLookup(routes: Route[]): (method: string, path: string) => string | undefined {
  return (method, path) => findRoute(routes, path)?.operationIds[method === 'HEAD' ? 'GET' : method];
}
