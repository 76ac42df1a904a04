/**
 * Rate limits (the contract's 429 on every operation), with rate-limiter-flexible.
 *
 * Each operation belongs to a group with its own budget: authentication and account checks are the
 * tightest (they invite guessing), provider callbacks the loosest (providers send bursts), other writes
 * and reads in between. A client is its API key (hashed: raw keys never reach the store) when it sends
 * one, otherwise its address. Budgets live in memory, or in Redis (REDIS_URL) so that every instance
 * shares them; if Redis fails, each instance falls back to its own memory rather than refusing traffic.
 *
 * Every answer carries `RateLimit-Policy: <limit>;w=<window>` and `RateLimit: limit=, remaining=, reset=`;
 * a request over budget gets 429 `rate_limited` with `Retry-After`.
 */
import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from './errors.js';
import { clientKey } from './client.js';
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
}

export function rateLimits({ budgets, routes, redis, keyPrefix = 'palanque:rl' }: RateLimitOptions): RequestHandler {
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

  return async (req, res, next) => {
    const entry = limiters.get(groupOf(operationOf(req.method, req.path), req.method));
    if (!entry) return next();
    const { limiter, budget } = entry;
    res.setHeader('RateLimit-Policy', `${budget.points};w=${budget.seconds}`);
    try {
      const state = await limiter.consume(clientKey(req));
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

/** operationId of a method and path, remembering exact paths so the hot path skips the regexes. */
function operationLookup(routes: Route[]): (method: string, path: string) => string | undefined {
  const known = new Map<string, Route | null>();
  return (method, path) => {
    let route = known.get(path);
    if (route === undefined) {
      route = findRoute(routes, path) ?? null;
      if (known.size < 10_000) known.set(path, route);
    }
    const effective = method === 'HEAD' ? 'GET' : method;
    return route?.operationIds[effective];
  };
}
