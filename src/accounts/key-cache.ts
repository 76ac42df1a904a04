/**
 * A short-lived, bounded cache of API keys: key digest -> what the key says about its user, so that a
 * client sending the same key again within a few seconds is not looked up in the database again.
 *
 * What holds:
 * - only live keys are remembered, and of their user only identity, admin flag and active flag
 *   (`KeyHolder`); never memberships, team roles or any record a caller may see, which every request reads
 *   afresh, since they change under it (issue 12);
 * - an entry lives at most `ttlMs` (AUTH_CACHE_SECONDS) and never past its key's expiry; a cached key past
 *   its expiry is refused;
 * - a revocation made through this cache (`revoke`: logout, removeToken, a password reset, a deactivation)
 *   drops the entries it concerns before the revoking request answers, so the key is refused at once on
 *   this instance; it is then published on the revocation channel (revocations.ts: Redis or PostgreSQL),
 *   which drops them on every other instance, normally within milliseconds;
 * - a lookup that began before a revocation is not remembered after it (the generation counter), so a
 *   request racing a logout cannot put the revoked key back;
 * - a notice that never arrives (the channel down, a revoking process killed between its write and its
 *   notice, a change written to the database by hand) costs at most `ttlMs`: the entry expires and the next
 *   request asks the database. A channel that reconnects empties the cache, since it may have missed some.
 * Notices only ever remove entries, so whoever can publish on the channel can cost a database lookup,
 * never grant access. Keys are held by their SHA-256 (the database's own key_hash), never in clear.
 */
import { LRUCache } from 'lru-cache';
import type { Caller } from '../http/auth.js';
import type { Logger } from '../logger.js';

/** What a key says about its user (the columns of UserRow it carries): who they are and what the platform lets them do. */
export type KeyHolder = Caller['user'];

/** The holder of a live key, the key's id and when it expires: the caller, as the HTTP plumbing has it. */
export type Authenticated = Caller;

/** One key (by its id), or every key of a user. */
export type Revocation = { tokenId: number } | { userId: number };

export interface RevocationListener {
  revoked(revocation: Revocation): void;
  /** The channel was cut and is back: notices sent meanwhile are lost. */
  mayHaveMissedSome(): void;
}

/** How instances tell each other about revocations (revocations.ts). */
export interface RevocationChannel {
  publish(revocation: Revocation): Promise<void>;
  /** Starts delivering every instance's notices (this one's included) to `listener`; resolves once listening. */
  listen(listener: RevocationListener): Promise<void>;
  close(): Promise<void>;
}

export interface KeyCacheSettings {
  /** How long a lookup is remembered; 0 turns the cache off (every request asks the database). */
  ttlMs: number;
  /** The most keys remembered; the least recently used go first. */
  max?: number;
  /** Where revocations are published and heard; without it, only this instance learns of them. */
  channel?: RevocationChannel;
  logger?: Logger;
}

export const DEFAULT_KEY_CACHE_ENTRIES = 10_000;

export class KeyCache {
  private readonly entries: LRUCache<string, Authenticated> | undefined;
  private readonly ttlMs: number;
  /** Bumped by every revocation: a lookup remembers its answer only if none happened while it ran. */
  private revocations = 0;

  constructor(private readonly settings: KeyCacheSettings) {
    this.ttlMs = settings.ttlMs;
    this.entries = settings.ttlMs > 0 ? new LRUCache({ max: settings.max ?? DEFAULT_KEY_CACHE_ENTRIES, ttl: settings.ttlMs }) : undefined;
  }

  /** How many keys are remembered now. */
  get size(): number {
    return this.entries?.size ?? 0;
  }

  /** A mark to hand to `remember`, taken before the database is asked. */
  mark(): number {
    return this.revocations;
  }

  /** The remembered holder of the key with this digest, unless the key has expired since. */
  lookup(digest: string, now: Date): Authenticated | undefined {
    const found = this.entries?.get(digest);
    if (!found) return undefined;
    if (found.expiresAt.getTime() <= now.getTime()) {
      this.entries!.delete(digest);
      return undefined;
    }
    return found;
  }

  /** Remembers a live key found in the database, unless a revocation happened after `mark`. */
  remember(digest: string, found: Authenticated, mark: number, now: Date): void {
    if (!this.entries || mark !== this.revocations) return;
    const ttl = Math.min(this.ttlMs, found.expiresAt.getTime() - now.getTime());
    // Frozen: every request with this key shares the object, so none may change it for the others.
    if (ttl > 0) this.entries.set(digest, Object.freeze({ ...found, user: Object.freeze({ ...found.user }) }), { ttl });
  }

  /**
   * Drops what a revocation (already written to the database) concerns here, then tells the other
   * instances. A failed notice is logged, not thrown: the revocation stands, and elsewhere the entry
   * expires within `ttlMs`.
   */
  async revoke(revocation: Revocation): Promise<void> {
    this.forget(revocation);
    try {
      await this.settings.channel?.publish(revocation);
    } catch (error) {
      this.settings.logger?.warn(
        { err: error, revocation },
        'could not publish a key revocation; other instances refuse the key once their cache entry expires (AUTH_CACHE_SECONDS)',
      );
    }
  }

  /** Hears the revocations of every instance, through the channel (if there is one). */
  async listen(): Promise<void> {
    await this.settings.channel?.listen({ revoked: (revocation) => this.forget(revocation), mayHaveMissedSome: () => this.forgetAll() });
  }

  forget(revocation: Revocation): void {
    this.revocations += 1;
    if (!this.entries) return;
    const concerned: string[] = [];
    for (const [digest, found] of this.entries.entries()) {
      if ('tokenId' in revocation ? found.tokenId === revocation.tokenId : found.user.id === revocation.userId) concerned.push(digest);
    }
    for (const digest of concerned) this.entries.delete(digest);
  }

  forgetAll(): void {
    this.revocations += 1;
    this.entries?.clear();
  }
}

/** A notice as published: `{"token":12}` or `{"user":3}`. */
export function encodeRevocation(revocation: Revocation): string {
  return JSON.stringify('tokenId' in revocation ? { token: revocation.tokenId } : { user: revocation.userId });
}

/** The revocation a notice carries, or undefined for anything else. */
export function decodeRevocation(text: string): Revocation | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { token, user } = parsed as { token?: unknown; user?: unknown };
  if (Number.isSafeInteger(token)) return { tokenId: token as number };
  if (Number.isSafeInteger(user)) return { userId: user as number };
  return undefined;
}
