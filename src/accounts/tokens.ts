/**
 * API keys. A key is 256 random bits shown to the client once, at login; the table keeps only its
 * sha256, with creation, last use, expiry and revocation times. A key works while it is neither expired
 * nor revoked and its user is active.
 */
import { Op } from 'sequelize';
import type { AccountModels, ApiTokenRow, UserRow } from './models.js';
import { newSecret, secretHash } from './secrets.js';

/** Keys start with this, so that secret scanners and people can recognise a leaked Palanque key. */
export const KEY_PREFIX = 'plq_';

/** Writing last_used_at on every request would turn every read into a write; once a minute is enough. */
const LAST_USE_RESOLUTION_MS = 60_000;

export interface IssuedKey {
  key: string;
  expiresAt: Date;
}

export interface Authenticated {
  user: UserRow;
  tokenId: number;
}

export class TokenStore {
  constructor(
    private readonly models: AccountModels,
    private readonly lifetimeMs: number,
  ) {}

  async issue(userId: number, now = new Date()): Promise<IssuedKey> {
    return this.issueGiven(userId, newSecret(KEY_PREFIX), now);
  }

  /** Stores a key the caller made (the sandbox's fixed demo keys, SANDBOX_DEMO_KEYS=fixed); everything else uses `issue`. */
  async issueGiven(userId: number, key: string, now = new Date()): Promise<IssuedKey> {
    const expiresAt = new Date(now.getTime() + this.lifetimeMs);
    await this.models.ApiToken.create({ user_id: userId, key_hash: secretHash(key), created_at: now, expires_at: expiresAt });
    return { key, expiresAt };
  }

  /** The user behind a live key, or undefined for an unknown, expired or revoked key or an inactive user. */
  async authenticate(key: string, now = new Date()): Promise<Authenticated | undefined> {
    const token = await this.liveToken(key, now);
    if (!token) return undefined;
    const user = (await this.models.User.findByPk(token.user_id, { raw: true })) as UserRow | null;
    if (!user?.is_active) return undefined;
    if (!token.last_used_at || now.getTime() - new Date(token.last_used_at).getTime() > LAST_USE_RESOLUTION_MS) {
      await this.models.ApiToken.update({ last_used_at: now }, { where: { id: token.id } });
    }
    return { user, tokenId: token.id };
  }

  /** Revokes a live key by its value; false when there is none. */
  async revokeKey(key: string, now = new Date()): Promise<boolean> {
    const [revoked] = await this.models.ApiToken.update(
      { revoked_at: now },
      { where: { key_hash: secretHash(key), revoked_at: null, expires_at: { [Op.gt]: now } } },
    );
    return revoked > 0;
  }

  async revokeById(id: number, now = new Date()): Promise<void> {
    await this.models.ApiToken.update({ revoked_at: now }, { where: { id, revoked_at: null } });
  }

  /**
   * Deletes keys that stopped working more than `keepForMs` ago (expired or revoked); until then they
   * stay, for whoever investigates a session. Returns how many went.
   */
  async purgeDead(keepForMs: number, now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - keepForMs);
    return this.models.ApiToken.destroy({ where: { [Op.or]: [{ expires_at: { [Op.lt]: before } }, { revoked_at: { [Op.lt]: before } }] } });
  }

  private async liveToken(key: string, now: Date): Promise<ApiTokenRow | undefined> {
    const token = (await this.models.ApiToken.findOne({ where: { key_hash: secretHash(key) }, raw: true })) as ApiTokenRow | null;
    if (!token || token.revoked_at || new Date(token.expires_at) <= now) return undefined;
    return token;
  }
}
