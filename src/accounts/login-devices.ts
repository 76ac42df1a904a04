/**
 * Trusted devices at login: OWASP's "device cookie", for an API. The login lock (login-lock.ts) slows
 * every check of a name once others fail on it, and whoever fails on it again re-arms the delay: on its
 * own, the lock lets strangers keep an owner out. A device the owner has logged in from is not judged
 * by the strangers' failures, only by its own. What holds:
 *
 * - A successful login answers a **device token** (`plqd_` and 256 random bits), bound to its user; the
 *   table keeps only its SHA-256. It is no API key: keys live in api_tokens, so no operation accepts it.
 * - A login that carries a live device token of the account its `username` names is judged only by that
 *   token's failures: the lock's counts (the name, the name from the address, the address) neither refuse
 *   nor count it. A check with the token counts as one of its failures before it runs (one conditional
 *   UPDATE, so parallel guesses cannot overrun the budget) and a successful one clears them; after
 *   `maxFailures` the token is invalidated (deleted), and its holder is judged like anyone else.
 * - The token a successful login carried is answered back, its expiry moved on (`lifetimeMs` from its
 *   last use): a login loop does not pile up rows. A new token is made otherwise, and a user keeps at
 *   most `perUser` of them, the least recently used going first.
 * - A client without one (a seed-only front end, a new browser) may have an **unlock token** mailed to
 *   the account's address (`requestLoginUnlock`): it works like a device token for one successful login
 *   within `unlockLifetimeMs` (which answers a device token), and dies after `maxFailures` failures too.
 *   Asking answers the same whether or not the name has an account; at most one mail per account every
 *   `unlockResendMs`.
 * - A password change or reset, the end of every session (endUserSessions, a deactivation) and the
 *   account's deletion delete every token of the account.
 */
import { Op, type Transaction } from 'sequelize';
import type { AccountModels, LoginDeviceRow } from './models.js';
import { newSecret, secretHash } from './secrets.js';

export interface LoginDeviceSettings {
  /** How long a device token works after its last successful login. */
  lifetimeMs: number;
  /** The most device tokens one user keeps; the least recently used go first. */
  perUser: number;
  /** Failed checks with one token before it is invalidated. */
  maxFailures: number;
  /** How long a mailed unlock token works. */
  unlockLifetimeMs: number;
  /** The least time between two unlock mails to one account. */
  unlockResendMs: number;
}

export const DEFAULT_LOGIN_DEVICE_SETTINGS: LoginDeviceSettings = {
  lifetimeMs: 180 * 86_400_000,
  perUser: 10,
  maxFailures: 5,
  unlockLifetimeMs: 15 * 60_000,
  unlockResendMs: 60_000,
};

/** Prefixes that tell a device token and an unlock token from an API key (`plq_`), to people and scanners. */
export const DEVICE_TOKEN_PREFIX = 'plqd_';
export const UNLOCK_TOKEN_PREFIX = 'plqu_';

/** The tokens a login may carry (the body's `device_token` and `unlock_token`). */
export interface LoginTrust {
  deviceToken?: string;
  unlockToken?: string;
}

/** A check reserved with a token: its row, and the token as presented (answered back when it is a device's). */
export interface TrustedCheck {
  id: number;
  userId: number;
  kind: LoginDeviceRow['kind'];
  token: string;
}

export class LoginDevices {
  constructor(
    private readonly models: AccountModels,
    readonly settings: LoginDeviceSettings = DEFAULT_LOGIN_DEVICE_SETTINGS,
  ) {}

  /**
   * Counts a check with the first of the tokens that is live for this user and has failures left: the
   * check to run, or undefined when none is (the login is then judged by the lock). A token is looked up
   * whether or not the name has an account (`userId` undefined), so the time taken tells nothing.
   */
  async reserve(userId: number | undefined, trust: LoginTrust, now = new Date()): Promise<TrustedCheck | undefined> {
    const presented: Array<[LoginDeviceRow['kind'], string | undefined]> = [['device', trust.deviceToken], ['unlock', trust.unlockToken]];
    for (const [kind, token] of presented) {
      if (!token) continue;
      const row = (await this.models.LoginDevice.findOne({
        attributes: ['id', 'user_id'],
        where: { token_hash: secretHash(token), kind, expires_at: { [Op.gt]: now }, failures: { [Op.lt]: this.settings.maxFailures } },
        raw: true,
      })) as Pick<LoginDeviceRow, 'id' | 'user_id'> | null;
      if (!row || userId === undefined || row.user_id !== userId) continue;
      // Conditional: of parallel checks with one token, no more than maxFailures get past this.
      const [counted] = await this.models.LoginDevice.update(
        { failures: this.models.LoginDevice.sequelize!.literal('failures + 1') as unknown as number },
        { where: { id: row.id, failures: { [Op.lt]: this.settings.maxFailures } } },
      );
      if (counted === 1) return { id: row.id, userId, kind, token };
    }
    return undefined;
  }

  /**
   * Settles a successful check; returns the device token to answer: the one presented (its failures
   * cleared, its expiry moved on), or a new one in place of a used unlock token.
   */
  async succeeded(check: TrustedCheck, now = new Date()): Promise<string> {
    if (check.kind === 'unlock') {
      await this.models.LoginDevice.destroy({ where: { id: check.id } });
      return this.issue(check.userId, now);
    }
    const expiresAt = new Date(now.getTime() + this.settings.lifetimeMs);
    await this.models.LoginDevice.update({ failures: 0, last_used_at: now, expires_at: expiresAt }, { where: { id: check.id } });
    return check.token;
  }

  /** Settles a failed check: the failure stays counted, and a token out of failures is deleted. */
  async failed(check: TrustedCheck): Promise<void> {
    await this.models.LoginDevice.destroy({ where: { id: check.id, failures: { [Op.gte]: this.settings.maxFailures } } });
  }

  /** A new device token for the user; beyond `perUser`, the least recently used ones go. */
  async issue(userId: number, now = new Date()): Promise<string> {
    const token = newSecret(DEVICE_TOKEN_PREFIX);
    await this.models.LoginDevice.create({
      user_id: userId,
      kind: 'device',
      token_hash: secretHash(token),
      created_at: now,
      last_used_at: now,
      expires_at: new Date(now.getTime() + this.settings.lifetimeMs),
      failures: 0,
    });
    const kept = (await this.models.LoginDevice.findAll({
      attributes: ['id'],
      where: { user_id: userId, kind: 'device' },
      order: [['last_used_at', 'DESC'], ['id', 'DESC']],
      raw: true,
    })) as unknown as Array<Pick<LoginDeviceRow, 'id'>>;
    const evicted = kept.slice(this.settings.perUser).map((row) => row.id);
    if (evicted.length > 0) await this.models.LoginDevice.destroy({ where: { id: evicted } });
    return token;
  }

  /**
   * A new unlock token for the user, or undefined when one was made less than `unlockResendMs` ago
   * (the mail it went out in is still on its way or in the inbox).
   */
  async issueUnlock(userId: number, now = new Date()): Promise<{ token: string; expiresAt: Date } | undefined> {
    const recent = await this.models.LoginDevice.count({
      where: { user_id: userId, kind: 'unlock', created_at: { [Op.gt]: new Date(now.getTime() - this.settings.unlockResendMs) } },
    });
    if (recent > 0) return undefined;
    const token = newSecret(UNLOCK_TOKEN_PREFIX);
    const expiresAt = new Date(now.getTime() + this.settings.unlockLifetimeMs);
    await this.models.LoginDevice.create({ user_id: userId, kind: 'unlock', token_hash: secretHash(token), created_at: now, last_used_at: null, expires_at: expiresAt, failures: 0 });
    return { token, expiresAt };
  }

  /** Deletes every token of the user (password changed or reset, sessions ended, account deleted); returns how many. */
  async revokeAllOf(userId: number, transaction?: Transaction): Promise<number> {
    return this.models.LoginDevice.destroy({ where: { user_id: userId }, transaction });
  }

  /** Deletes expired tokens; returns how many. */
  async purgeExpired(now = new Date()): Promise<number> {
    return this.models.LoginDevice.destroy({ where: { expires_at: { [Op.lte]: now } } });
  }
}
