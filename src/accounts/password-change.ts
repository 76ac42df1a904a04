/**
 * A user changes their own password with the current one. What holds once the answer is sent:
 * - the current password was checked as a login checks it (the login lock counts a wrong one, and a
 *   stolen key alone cannot change the password);
 * - the new password follows the password rules (password-policy.ts) and differs from the current one;
 * - every other key of the account is revoked, in the same transaction as the new hash, and dropped
 *   from the key caches of every instance; the key that asked keeps working;
 * - every device token and unlock token of the account is deleted in that transaction (login-devices.ts):
 *   a device trusted under the old password must log in once more, under the lock, to be trusted again;
 * - the account's address is told (after the answer: a mail failure is logged, the change stands).
 */
import { Op } from 'sequelize';
import { invalidBody } from '../http/body-fields.js';
import { ApiError, AUTH_CHALLENGE } from '../http/errors.js';
import type { Logger } from '../logger.js';
import type { Mailer } from '../mail/mailer.js';
import type { AuditLog } from './audit-log.js';
import type { KeyCache } from './key-cache.js';
import type { AccountModels, UserRow } from './models.js';
import { hashPassword } from './passwords.js';
import { passwordProblem } from './password-policy.js';
import type { Sessions } from './sessions.js';

/**
 * The caller's current password, checked as a login checks it (through the login lock), before a change
 * a stolen key alone must not make (the password, the e-mail address); a wrong one is 401 naming the field.
 */
export async function checkCurrentPassword(sessions: Pick<Sessions, 'confirm'>, caller: UserRow, currentPassword: string, address: string): Promise<void> {
  try {
    await sessions.confirm(caller, caller.username, currentPassword, address);
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'invalid_credentials') throw error;
    throw new ApiError(401, 'invalid_credentials', 'The current password is incorrect.', [
      { location: 'body', field: 'current_password', rule: 'current_password', message: "must be the account's current password" },
    ], AUTH_CHALLENGE);
  }
}

export interface PasswordChange {
  caller: UserRow;
  /** The key the request came with: it keeps working. */
  keptTokenId: number;
  currentPassword: string;
  newPassword: string;
  address: string;
}

export class PasswordChanges {
  constructor(
    private readonly models: AccountModels,
    private readonly sessions: Sessions,
    private readonly mailer: Mailer,
    private readonly logger: Logger,
    private readonly settings: { passwordHashCost: number; passwordMinLength: number },
    private readonly keyCache?: KeyCache,
    private readonly audit?: AuditLog,
  ) {}

  /** Changes the password; returns how many other keys were revoked. */
  async change({ caller, keptTokenId, currentPassword, newPassword, address }: PasswordChange): Promise<number> {
    const problem = passwordProblem(newPassword, caller, this.settings.passwordMinLength);
    if (problem) throw invalidBody([{ location: 'body', field: 'new_password', rule: problem.rule, message: problem.message }]);
    await checkCurrentPassword(this.sessions, caller, currentPassword, address);
    // The current password was just verified, so comparing the texts says what a second hash check would.
    if (newPassword === currentPassword) {
      throw invalidBody([{ location: 'body', field: 'new_password', rule: 'different_from_current', message: 'must differ from the current password' }]);
    }
    const passwordHash = await hashPassword(newPassword, this.settings.passwordHashCost); // slow: outside the transaction
    const now = new Date();
    const revoked = await this.models.User.sequelize!.transaction(async (transaction) => {
      await this.models.User.update({ password_hash: passwordHash }, { where: { id: caller.id }, transaction });
      const [count] = await this.models.ApiToken.update(
        { revoked_at: now },
        { where: { user_id: caller.id, revoked_at: null, id: { [Op.ne]: keptTokenId } }, transaction },
      );
      await this.models.LoginDevice.destroy({ where: { user_id: caller.id }, transaction });
      return count;
    });
    // Every cached key of the user goes; the kept one is simply looked up again.
    if (revoked > 0) await this.keyCache?.revoke({ userId: caller.id });
    await this.audit?.record({ event: 'password_changed', actorId: caller.id, userId: caller.id, address, details: { keys_revoked: revoked } }, now);
    this.tell(caller, revoked, now);
    return revoked;
  }


  private tell(user: UserRow, revoked: number, at: Date): void {
    const message = {
      to: user.email,
      subject: 'Palanque: your password was changed',
      text:
        `Hello ${user.first_name || user.username},\n\n` +
        `The password of your Palanque account was changed at ${at.toISOString()}` +
        (revoked > 0 ? `, and your other ${revoked} session(s) were closed.\n\n` : '.\n\n') +
        `If you did not do this, reset your password at once (it closes every session) and tell your team's administrator.\n`,
    };
    this.mailer.send(message).catch((error: unknown) => this.logger.error({ err: error, user_id: user.id }, 'could not send the password-change notice'));
  }
}
