/**
 * API keys. A key is 256 random bits shown to the client once, at login; the table keeps only its
 * sha256, with creation, last use, expiry and revocation times. A key works while it is neither expired
 * nor revoked and its user is active.
 *
 * A key that worked is remembered for a few seconds (key-cache.ts), so a client's next requests skip the
 * database; every revocation goes through that cache, which drops the key at once here and tells the
 * other instances.
 */
import { Op } from 'sequelize';
import { asBoolean, asDate, readerOf } from '../db/reader.js';
import { KeyCache, type Authenticated } from './key-cache.js';
import type { AccountModels, ApiTokenRow } from './models.js';
import { newSecret, secretHash } from './secrets.js';

export type { Authenticated, KeyHolder } from './key-cache.js';

/** Keys start with this, so that secret scanners and people can recognise a leaked Palanque key. */
export const KEY_PREFIX = 'plq_';

/** Writing last_used_at on every request would turn every read into a write; once a minute is enough. */
const LAST_USE_RESOLUTION_MS = 60_000;

/**
 * A key's row and the user columns it carries (`KeyHolder`: never the password hash or the profile), as
 * a Reader gives them (timestamps and booleans in either driver's form).
 */
interface KeyWithHolder {
  id: number;
  expires_at: unknown;
  revoked_at: unknown;
  last_used_at: unknown;
  user_id: number;
  username: string;
  is_admin: unknown;
  is_active: unknown;
}

export interface IssuedKey {
  key: string;
  expiresAt: Date;
}

/** A live key as its owner sees it in their list of sessions: never the key, nor its hash. */
export type SessionKey = Pick<ApiTokenRow, 'id' | 'device' | 'created_at' | 'last_used_at' | 'expires_at'>;

/** The most of a User-Agent kept as a key's device: enough to tell a browser and system apart. */
const DEVICE_LENGTH = 200;

export class TokenStore {
  constructor(
    private readonly models: AccountModels,
    private readonly lifetimeMs: number,
    /** Remembers live keys, and hears and spreads revocations; off unless given one. */
    private readonly cache: KeyCache = new KeyCache({ ttlMs: 0 }),
  ) {}

  /** A new key for the user; `device` is the login's User-Agent, shown back in the user's sessions. */
  async issue(userId: number, now = new Date(), device?: string): Promise<IssuedKey> {
    return this.issueGiven(userId, newSecret(KEY_PREFIX), now, device);
  }

  /** Stores a key the caller made (the sandbox's fixed demo keys, SANDBOX_DEMO_KEYS=fixed); everything else uses `issue`. */
  async issueGiven(userId: number, key: string, now = new Date(), device?: string): Promise<IssuedKey> {
    const expiresAt = new Date(now.getTime() + this.lifetimeMs);
    const deviceName = device?.trim().slice(0, DEVICE_LENGTH) || null;
    await this.models.ApiToken.create({ user_id: userId, key_hash: secretHash(key), created_at: now, expires_at: expiresAt, device: deviceName });
    return { key, expiresAt };
  }

  /** A page of the user's live keys (neither expired nor revoked), the newest first, and how many there are. */
  async liveKeysOf(userId: number, page: number, perPage: number, now = new Date()): Promise<{ total: number; rows: SessionKey[] }> {
    const { count, rows } = await this.models.ApiToken.findAndCountAll({
      attributes: ['id', 'device', 'created_at', 'last_used_at', 'expires_at'],
      where: { user_id: userId, revoked_at: null, expires_at: { [Op.gt]: now } },
      order: [['created_at', 'DESC'], ['id', 'DESC']],
      offset: (page - 1) * perPage,
      limit: perPage,
      raw: true,
    });
    return { total: count, rows: rows as unknown as SessionKey[] };
  }

  /**
   * Revokes every live key of the user (an admin's `endUserSessions`, a deactivation); returns how many.
   * The user's device and unlock tokens go too (login-devices.ts): every device logs in again under the lock.
   */
  async revokeAllOf(userId: number, now = new Date()): Promise<number> {
    const [revoked] = await this.models.ApiToken.update({ revoked_at: now }, { where: { user_id: userId, revoked_at: null, expires_at: { [Op.gt]: now } } });
    await this.models.LoginDevice.destroy({ where: { user_id: userId } });
    // Only live keys are remembered, and each earlier revocation was announced: none revoked, nothing to tell.
    if (revoked > 0) await this.cache.revoke({ userId });
    return revoked;
  }

  /** Revokes one of the user's own live keys by its id; false when the user has no such live key. */
  async revokeOwn(userId: number, tokenId: number, now = new Date()): Promise<boolean> {
    const [revoked] = await this.models.ApiToken.update({ revoked_at: now }, { where: { id: tokenId, user_id: userId, revoked_at: null, expires_at: { [Op.gt]: now } } });
    if (revoked === 0) return false;
    await this.cache.revoke({ tokenId });
    return true;
  }

  /** The user behind a live key, or undefined for an unknown, expired or revoked key or an inactive user. */
  async authenticate(key: string, now = new Date()): Promise<Authenticated | undefined> {
    const digest = secretHash(key);
    const remembered = this.cache.lookup(digest, now);
    if (remembered) return remembered;
    const mark = this.cache.mark();
    const found = await this.lookUp(digest, now);
    if (found) this.cache.remember(digest, found, mark, now);
    return found;
  }

  /** Revokes a live key by its value; false when there is none. */
  async revokeKey(key: string, now = new Date()): Promise<boolean> {
    const live = (await this.models.ApiToken.findOne({
      attributes: ['id'],
      where: { key_hash: secretHash(key), revoked_at: null, expires_at: { [Op.gt]: now } },
      raw: true,
    })) as Pick<ApiTokenRow, 'id'> | null;
    if (!live) return false;
    // Conditional, so that of two concurrent revocations one reports it.
    const [revoked] = await this.models.ApiToken.update({ revoked_at: now }, { where: { id: live.id, revoked_at: null } });
    if (revoked === 0) return false;
    await this.cache.revoke({ tokenId: live.id });
    return true;
  }

  async revokeById(id: number, now = new Date()): Promise<void> {
    await this.models.ApiToken.update({ revoked_at: now }, { where: { id, revoked_at: null } });
    await this.cache.revoke({ tokenId: id });
  }

  /**
   * Deletes keys that stopped working more than `keepForMs` ago (expired or revoked); until then they
   * stay, for whoever investigates a session. Returns how many went.
   */
  async purgeDead(keepForMs: number, now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - keepForMs);
    return this.models.ApiToken.destroy({ where: { [Op.or]: [{ expires_at: { [Op.lt]: before } }, { revoked_at: { [Op.lt]: before } }] } });
  }

  /**
   * The key with its user in one Reader query (issue 20), and the key's last use written at most once a
   * minute. The checks are the same as ever: unknown, revoked or expired key, or inactive user: none.
   */
  private async lookUp(digest: string, now: Date): Promise<Authenticated | undefined> {
    const found = await readerOf(this.models.ApiToken.sequelize!).row<KeyWithHolder>(
      `SELECT t.id, t.expires_at, t.revoked_at, t.last_used_at, u.id AS user_id, u.username, u.is_admin, u.is_active
       FROM api_tokens t JOIN users u ON u.id = t.user_id
       WHERE t.key_hash = ?`,
      [digest],
    );
    if (!found || found.revoked_at !== null || asDate(found.expires_at) <= now || !asBoolean(found.is_active)) return undefined;
    if (found.last_used_at === null || now.getTime() - asDate(found.last_used_at).getTime() > LAST_USE_RESOLUTION_MS) {
      await this.models.ApiToken.update({ last_used_at: now }, { where: { id: found.id } });
    }
    return {
      user: { id: found.user_id, username: found.username, is_admin: asBoolean(found.is_admin), is_active: true },
      tokenId: found.id,
      expiresAt: asDate(found.expires_at),
    };
  }
}
