/**
 * Where rate-limit budgets are counted: in this process's memory, or in Redis shared by every instance.
 *
 * The memory store answers at once, not through a promise, so that a request which needs no key lookup
 * goes on in the same tick. Waiting for an already-settled promise cost the municipality list's fast
 * path a tenth of its rate (docs/benchmarks.md, issue 20): rate-limiter-flexible's memory limiter only
 * answers through promises. The store keeps rate-limiter-flexible's semantics (a fixed window opened by
 * an id's first request, RateLimiterRes states) in an lru-cache, which also bounds its memory (10,000
 * ids a group): a flood of new addresses evicts the least recent ones instead of growing without end.
 * Redis stays with rate-limiter-flexible, whose insurance limiter counts in memory while Redis is down.
 */
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/** One group's budget: `points` per window of `seconds`. */
export interface BudgetStore {
  /** Charges one point to `id`: its state after the charge; throws (or rejects with) the state when the budget is spent. */
  consume(id: string): RateLimiterRes | Promise<RateLimiterRes>;
  /** Gives back a point charged to `id`. */
  refund(id: string): void | Promise<unknown>;
}

/**
 * Ids tracked at once per group in memory; past it the least recently charged are forgotten (they start
 * afresh). lru-cache sets aside room for all of them up front: 100,000 took 14 MB for the four groups.
 */
const MAX_TRACKED_IDS = 10_000;

export class MemoryBudgets implements BudgetStore {
  private readonly windows: LRUCache<string, { spent: number }>;

  constructor(private readonly points: number, seconds: number, maxIds = MAX_TRACKED_IDS) {
    // The window opens with an id's first charge and is not extended by later ones (no updateAgeOnGet).
    this.windows = new LRUCache({ max: maxIds, ttl: seconds * 1000 });
  }

  consume(id: string): RateLimiterRes {
    let window = this.windows.get(id);
    if (!window) {
      window = { spent: 0 };
      this.windows.set(id, window);
    }
    window.spent += 1;
    const state = new RateLimiterRes(Math.max(this.points - window.spent, 0), this.windows.getRemainingTTL(id), window.spent, window.spent === 1);
    if (window.spent > this.points) throw state;
    return state;
  }

  refund(id: string): void {
    const window = this.windows.get(id);
    // A request charged in a window that has since closed gives back nothing below zero (a provider
    // callback that spans a window's end would otherwise leave its address more than its budget).
    if (window && window.spent > 0) window.spent -= 1;
  }
}

export class RedisBudgets implements BudgetStore {
  private readonly limiter: RateLimiterRedis;

  constructor(redis: Redis, points: number, seconds: number, keyPrefix: string) {
    const insuranceLimiter = new RateLimiterMemory({ points, duration: seconds, keyPrefix });
    this.limiter = new RateLimiterRedis({ storeClient: redis, points, duration: seconds, keyPrefix, insuranceLimiter });
  }

  consume(id: string): Promise<RateLimiterRes> {
    return this.limiter.consume(id);
  }

  refund(id: string): Promise<RateLimiterRes> {
    return this.limiter.reward(id, 1);
  }
}
