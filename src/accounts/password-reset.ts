/**
 * Password reset by e-mail, in two steps (the contract's GET /api/auth/generate_new_pass):
 * 1. `start`: for an active account with that address, a single-use token with a short lifetime is
 *    stored (its hash only) and e-mailed. Nothing tells the caller whether the address exists.
 * 2. `complete`: a valid token is consumed, a new random password is set and e-mailed, and every API
 *    key of the user is revoked (whoever held a session with the old password loses it), and every
 *    device and unlock token deleted (login-devices.ts).
 * An account an admin created without a password gets the same token by mail (`welcome`), so its owner
 * receives a password nobody else has seen.
 */
import { Op } from 'sequelize';
import type { Logger } from '../logger.js';
import type { Mailer } from '../mail/mailer.js';
import type { AuditLog } from './audit-log.js';
import type { KeyCache } from './key-cache.js';
import type { AccountModels, PasswordResetRow, UserRow } from './models.js';
import { newReadablePassword, newSecret, secretHash } from './secrets.js';
import { hashPassword } from './passwords.js';
import type { UserDirectory } from './users.js';
import { runAfterAnswer } from '../http/after-answer.js';

export interface ResetLinks {
  /** The address of step 2 for this e-mail and token, put in the mail so the user can click it. */
  completeUrl(email: string, token: string): string;
}

export class PasswordResets {
  constructor(
    private readonly models: AccountModels,
    private readonly users: UserDirectory,
    private readonly mailer: Mailer,
    private readonly logger: Logger,
    private readonly lifetimeMs: number,
    private readonly passwordHashCost: number,
    /** Told when a reset revoked the user's keys, so that no instance keeps them cached (key-cache.ts). */
    private readonly keyCache?: KeyCache,
    private readonly audit?: AuditLog,
  ) {}

  /**
   * Starts a reset. Only the lookup happens before the answer: the token is stored and mailed after it,
   * so the answer takes as long for an unknown address as for a known one. A failure then is logged,
   * and the user can ask again.
   */
  async start(email: string, links: ResetLinks): Promise<void> {
    const user = await this.users.byEmail(email);
    if (!user?.is_active) return;
    runAfterAnswer(this.logger, 'could not start a password reset', () => this.issueAndMail(user, links), { user_id: user.id });
  }

  /** Mails a new account's owner the link through which they receive their password (after the answer). */
  welcome(user: UserRow, links: ResetLinks): void {
    runAfterAnswer(this.logger, 'could not mail a new account its link', () => this.issueAndMail(user, links, 'welcome'), { user_id: user.id });
  }

  /** When the pair is valid (without consuming it): the token's expiry; otherwise undefined. */
  async check(email: string, token: string, now = new Date()): Promise<Date | undefined> {
    const found = await this.find(email, token, now);
    return found ? new Date(found.reset.expires_at) : undefined;
  }

  /**
   * Completes a reset; false when the token is not valid (unknown, used or expired) or, when an e-mail is
   * given, not that account's. The token alone is enough: its hash is unique, so it names one reset.
   */
  async complete(email: string | undefined, token: string, now = new Date()): Promise<boolean> {
    const found = await this.find(email, token, now);
    if (!found) return false;
    const password = newReadablePassword();
    const passwordHash = await hashPassword(password, this.passwordHashCost); // slow: outside the transaction
    // One transaction: the token is used up only if the password changes and the keys die with it.
    const completed = await this.models.PasswordReset.sequelize!.transaction(async (transaction) => {
      // Consume conditionally: of two concurrent uses of one token, exactly one gets past this.
      const [consumed] = await this.models.PasswordReset.update({ used_at: now }, { where: { id: found.reset.id, used_at: null }, transaction });
      if (consumed === 0) return false;
      // Other outstanding tokens of the user die with this one.
      await this.models.PasswordReset.update({ used_at: now }, { where: { user_id: found.user.id, used_at: null }, transaction });
      await this.models.User.update({ password_hash: passwordHash }, { where: { id: found.user.id }, transaction });
      await this.models.ApiToken.update({ revoked_at: now }, { where: { user_id: found.user.id, revoked_at: null }, transaction });
      await this.models.LoginDevice.destroy({ where: { user_id: found.user.id }, transaction });
      return true;
    });
    if (!completed) return false;
    await this.keyCache?.revoke({ userId: found.user.id });
    await this.audit?.record({ event: 'password_reset', userId: found.user.id, details: { keys_revoked: 'all' } }, now);
    this.sendInBackground({
      to: found.user.email,
      subject: 'Palanque: your new password',
      text:
        `Hello ${found.user.first_name || found.user.username},\n\n` +
        `Your password was reset. Your new password is:\n\n${password}\n\n` +
        `Every session of your account was closed; log in again with this password and change it.\n`,
    });
    return true;
  }

  /** Deletes tokens that expired or were used; returns how many. */
  async purgeExpired(now = new Date()): Promise<number> {
    return this.models.PasswordReset.destroy({ where: { [Op.or]: [{ expires_at: { [Op.lte]: now } }, { used_at: { [Op.ne]: null } }] } });
  }

  private async find(email: string | undefined, token: string, now: Date): Promise<{ user: UserRow; reset: PasswordResetRow } | undefined> {
    const reset = (await this.models.PasswordReset.findOne({
      where: { token_hash: secretHash(token), used_at: null, expires_at: { [Op.gt]: now } },
      raw: true,
    })) as PasswordResetRow | null;
    if (!reset) return undefined;
    const user = email === undefined ? await this.users.byId(reset.user_id) : await this.users.byEmail(email);
    // With an e-mail, the token must be that account's: another user's address is refused as before.
    if (!user?.is_active || user.id !== reset.user_id) return undefined;
    return { user, reset };
  }

  private async issueAndMail(user: UserRow, links: ResetLinks, kind: 'reset' | 'welcome' = 'reset'): Promise<void> {
    const token = newSecret('');
    const now = new Date();
    const expiresAt = new Date(now.getTime() + this.lifetimeMs);
    await this.models.PasswordReset.create({ user_id: user.id, token_hash: secretHash(token), created_at: now, expires_at: expiresAt });
    const link = links.completeUrl(user.email, token);
    const greeting = `Hello ${user.first_name || user.username},\n\n`;
    await this.mailer.send(
      kind === 'reset'
        ? {
            to: user.email,
            subject: 'Palanque: password reset',
            text:
              greeting +
              `Someone (hopefully you) asked to reset the password of your Palanque account.\n\n` +
              `Reset token: ${token}\n\n` +
              `Open this address to receive a new password by e-mail:\n${link}\n\n` +
              `The token works once, until ${expiresAt.toISOString()}. If you did not ask for this, ignore this message:\n` +
              `your password stays as it is.\n`,
          }
        : {
            to: user.email,
            subject: 'Palanque: your new account',
            text:
              greeting +
              `An administrator created a Palanque account for you. Your username is ${user.username}.\n\n` +
              `Reset token: ${token}\n\n` +
              `Open this address to receive your password by e-mail:\n${link}\n\n` +
              `The link works once, until ${expiresAt.toISOString()}; after that, ask for a password reset with this address.\n` +
              `Once logged in, change the password to one of your own (palanque password, or your settings page).\n`,
          },
    );
  }

  private sendInBackground(message: { to: string; subject: string; text: string }): void {
    this.mailer.send(message).catch((error: unknown) => this.logger.error({ err: error, subject: message.subject }, 'could not send mail'));
  }
}
