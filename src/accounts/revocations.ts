/**
 * The revocation channel: how an instance that revoked keys tells the others to drop them from their key
 * caches (key-cache.ts), so that a revoked key is refused everywhere within a second, not only once the
 * entries expire.
 *
 * - With REDIS_URL, through Redis pub/sub, on `<RATE_LIMIT_PREFIX>:key-revocations` (the deployment's
 *   namespace in Redis).
 * - Otherwise on PostgreSQL, through LISTEN/NOTIFY on `palanque_key_revocations` (one database, one
 *   deployment). The notices are sent through DATABASE_URL; the listener, whose LISTEN lasts as long as
 *   its session, connects to `listenUrl` (DATABASE_DIRECT_URL): a transaction pooler would hand its
 *   server connection to others after the LISTEN, and deliver nothing.
 * - On SQLite without Redis there is no channel: a single instance is assumed, which drops its own
 *   revocations at once; a second instance on the same file would honour them only once its entries expire.
 *
 * Delivery is at most once: a subscriber that was disconnected has lost what was sent meanwhile, so on
 * reconnecting it tells its listener (which empties the cache). A publish fails fast when the channel is
 * down; the key cache logs it and the entries' lifetime bounds the cost.
 */
import pg from 'pg';
import { Redis } from 'ioredis';
import type { Sequelize } from 'sequelize';
import { dialectOf } from '../db/database.js';
import type { Logger } from '../logger.js';
import { decodeRevocation, encodeRevocation, type Revocation, type RevocationChannel, type RevocationListener } from './key-cache.js';

export const POSTGRES_REVOCATION_CHANNEL = 'palanque_key_revocations';

/** The Redis channel of a deployment, under its Redis namespace (RATE_LIMIT_PREFIX). */
export function redisRevocationChannel(prefix: string): string {
  return `${prefix}:key-revocations`;
}

/** How long start-up waits for the subscription before going on without it (it keeps trying). */
const LISTEN_WAIT_MS = 3_000;
/** Between attempts to reconnect a PostgreSQL listener. */
const RECONNECT_DELAY_MS = 1_000;

export interface RevocationChannelOptions {
  databaseUrl: string;
  /** Where the PostgreSQL listener connects: PostgreSQL itself, not a transaction pooler (DATABASE_DIRECT_URL); `databaseUrl` when unset. */
  listenUrl?: string;
  /** The server's database, which publishes the PostgreSQL notices. */
  sequelize: Sequelize;
  /** The server's Redis connection (it publishes; a duplicate subscribes), when REDIS_URL is set. */
  redis?: Redis;
  /** The deployment's namespace in Redis (RATE_LIMIT_PREFIX). */
  redisPrefix: string;
  logger: Logger;
}

/** Redis when there is one, else PostgreSQL, else nothing (SQLite: a single instance). */
export function revocationChannel(options: RevocationChannelOptions): RevocationChannel | undefined {
  if (options.redis) return new RedisRevocations(options.redis, redisRevocationChannel(options.redisPrefix), options.logger);
  if (dialectOf(options.databaseUrl) === 'postgres') return new PostgresRevocations(options.listenUrl ?? options.databaseUrl, options.sequelize, options.logger);
  return undefined;
}

/**
 * One notice from a process that revokes keys without serving requests (the admin CLI), on the channel the
 * servers listen to; its connection is closed after. A failure is logged (the servers' cache entries
 * expire within AUTH_CACHE_SECONDS anyway) and reported as false.
 */
export async function publishRevocation(
  options: Omit<RevocationChannelOptions, 'redis'> & { redisUrl: string | undefined },
  revocation: Revocation,
): Promise<boolean> {
  const redis = options.redisUrl ? new Redis(options.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null }) : undefined;
  redis?.on('error', () => undefined); // reported below, once
  try {
    await redis?.connect();
    await revocationChannel({ ...options, redis })?.publish(revocation);
    return true;
  } catch (error) {
    options.logger.warn({ reason: (error as Error).message }, 'could not tell the servers about the revoked keys; they refuse them once their cache entries expire (AUTH_CACHE_SECONDS)');
    return false;
  } finally {
    redis?.disconnect();
  }
}

class RedisRevocations implements RevocationChannel {
  private subscriber: Redis | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly channel: string,
    private readonly logger: Logger,
  ) {}

  async publish(revocation: Revocation): Promise<void> {
    await this.redis.publish(this.channel, encodeRevocation(revocation));
  }

  async listen(listener: RevocationListener): Promise<void> {
    // A connection of its own (a subscribed connection takes no other command), which queues the
    // SUBSCRIBE until Redis answers and subscribes again after every reconnection.
    const subscriber = this.redis.duplicate({ lazyConnect: false, enableOfflineQueue: true, maxRetriesPerRequest: null, autoResubscribe: true });
    this.subscriber = subscriber;
    let connectedBefore = false;
    subscriber.on('ready', () => {
      if (connectedBefore) listener.mayHaveMissedSome();
      connectedBefore = true;
    });
    subscriber.on('error', (error: Error) => this.logger.warn({ reason: error.message }, 'redis unavailable; key revocations from other instances wait for it (or for AUTH_CACHE_SECONDS)'));
    subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.channel) return;
      const revocation = decodeRevocation(message);
      if (revocation) listener.revoked(revocation);
      else this.logger.warn({ channel }, 'ignored a malformed key revocation notice');
    });
    await waitAtMost(subscriber.subscribe(this.channel), this.logger, 'redis');
  }

  async close(): Promise<void> {
    await this.subscriber?.quit().catch(() => this.subscriber?.disconnect());
  }
}

class PostgresRevocations implements RevocationChannel {
  private client: pg.Client | undefined;
  private closed = false;
  private reconnect: NodeJS.Timeout | undefined;

  constructor(
    private readonly listenUrl: string,
    private readonly sequelize: Sequelize,
    private readonly logger: Logger,
  ) {}

  async publish(revocation: Revocation): Promise<void> {
    await this.sequelize.query('SELECT pg_notify(:channel, :payload)', { replacements: { channel: POSTGRES_REVOCATION_CHANNEL, payload: encodeRevocation(revocation) } });
  }

  async listen(listener: RevocationListener): Promise<void> {
    await waitAtMost(this.connect(listener, false), this.logger, 'postgresql');
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnect);
    await this.client?.end().catch(() => undefined);
  }

  /** One connection that only listens; when it breaks, another, until it works (then the cache is emptied). */
  private async connect(listener: RevocationListener, reconnecting: boolean): Promise<void> {
    const client = new pg.Client({ connectionString: this.listenUrl });
    this.client = client;
    let retried = false;
    const retry = (error?: Error) => {
      if (retried || this.closed) return;
      retried = true;
      this.logger.warn({ reason: error?.message ?? 'connection ended' }, 'key revocation listener lost its database connection; reconnecting');
      client.end().catch(() => undefined);
      this.reconnect = setTimeout(() => void this.connect(listener, true).catch(() => undefined), RECONNECT_DELAY_MS);
      this.reconnect.unref();
    };
    client.on('error', retry);
    client.on('end', () => retry());
    client.on('notification', (notice) => {
      if (notice.channel !== POSTGRES_REVOCATION_CHANNEL) return;
      const revocation = notice.payload ? decodeRevocation(notice.payload) : undefined;
      if (revocation) listener.revoked(revocation);
      else this.logger.warn({ channel: notice.channel }, 'ignored a malformed key revocation notice');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${POSTGRES_REVOCATION_CHANNEL}`);
    } catch (error) {
      retry(error as Error);
      throw error;
    }
    if (this.closed) await client.end().catch(() => undefined);
    else if (reconnecting) listener.mayHaveMissedSome();
  }
}

/** Start-up waits for the subscription a few seconds at most: a channel that is down must not keep the API down. */
async function waitAtMost(subscribed: Promise<unknown>, logger: Logger, store: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), LISTEN_WAIT_MS);
    timer.unref();
  });
  try {
    const outcome = await Promise.race([subscribed.then(() => 'subscribed' as const), gaveUp]);
    if (outcome === 'timeout') logger.warn({ store }, 'not yet listening for key revocations; still trying (meanwhile AUTH_CACHE_SECONDS bounds them)');
  } catch (error) {
    logger.warn({ store, reason: (error as Error).message }, 'not listening for key revocations; retrying (meanwhile AUTH_CACHE_SECONDS bounds them)');
  } finally {
    clearTimeout(timer);
  }
}
