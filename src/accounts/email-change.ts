/**
 * A user changes their own e-mail address (`changeMyEmail`, confirmed through `verifyEmail`):
 * - the current password is checked first, as changePassword checks it: a stolen key alone cannot move
 *   the account to another mailbox (and from there reset its password);
 * - the new address takes effect only when its owner opens the single-use link mailed to it; a newer
 *   request replaces an older one, whose link stops working;
 * - the old address is told twice: when the change is asked (with what to do if it was not them) and
 *   when it is done;
 * - the answer is the same whether or not another account has the new address (the lookup and the mails
 *   come after it); that account's owner is told someone tried, and nothing changes.
 */
import { Op } from 'sequelize';
import { invalidBody } from '../http/body-fields.js';
import { ApiError } from '../http/errors.js';
import type { Logger } from '../logger.js';
import type { AuditLog } from './audit-log.js';
import type { Mailer } from '../mail/mailer.js';
import type { AccountModels, PendingEmailChangeRow, UserRow } from './models.js';
import { checkCurrentPassword } from './password-change.js';
import type { Sessions } from './sessions.js';
import { newSecret, secretHash } from './secrets.js';
import type { SignUpLinks } from './signup.js';
import { normaliseEmail, type UserDirectory } from './users.js';
import { runAfterAnswer } from '../http/after-answer.js';

export interface EmailChangeRequest {
  caller: UserRow;
  newEmail: string;
  currentPassword: string;
  address: string;
}

export class EmailChanges {
  constructor(
    private readonly models: AccountModels,
    private readonly users: UserDirectory,
    private readonly sessions: Pick<Sessions, 'confirm'>,
    private readonly mailer: Mailer,
    private readonly logger: Logger,
    /** How long a mailed link works (EMAIL_VERIFICATION_LIFETIME_HOURS, as for sign-ups). */
    private readonly linkLifetimeMs: number,
    private readonly audit?: AuditLog,
  ) {}

  /** Checks the request and the password, then answers; what follows depends on the address and comes after. */
  async request({ caller, newEmail, currentPassword, address }: EmailChangeRequest, links: SignUpLinks): Promise<void> {
    const email = normaliseEmail(newEmail);
    if (email === caller.email) {
      throw invalidBody([{ location: 'body', field: 'new_email', rule: 'different_from_current', message: "must differ from the account's current address", value: email }]);
    }
    await checkCurrentPassword(this.sessions, caller, currentPassword, address);
    await this.audit?.record({ event: 'email_change_requested', actorId: caller.id, userId: caller.id, address });
    runAfterAnswer(this.logger, 'could not record an e-mail change', () => this.record(caller, email, links), { user_id: caller.id });
  }

  /**
   * Applies the change a token confirms; undefined when the token is unknown, used or expired. 409 when
   * another account took the address meanwhile.
   */
  async confirm(token: string, now = new Date()): Promise<UserRow | undefined> {
    const pending = (await this.models.PendingEmailChange.findOne({ where: { token_hash: secretHash(token), expires_at: { [Op.gt]: now } }, raw: true })) as PendingEmailChangeRow | null;
    if (!pending) return undefined;
    if ((await this.models.PendingEmailChange.destroy({ where: { id: pending.id } })) === 0) return undefined;
    const user = await this.users.byId(pending.user_id);
    if (!user) return undefined;
    if (await this.users.isEmailTaken(pending.email)) {
      throw new ApiError(409, 'conflict', 'Another account took this e-mail address meanwhile; ask for the change again with another address.', [
        { location: 'query', field: 'token', rule: 'unique', message: 'the new address is taken by another account', value: pending.email },
      ]);
    }
    await this.models.User.update({ email: pending.email }, { where: { id: user.id } });
    await this.audit?.record({ event: 'email_changed', userId: user.id }, now);
    this.send({
      to: user.email,
      subject: 'Palanque: your e-mail address was changed',
      text:
        `Hello ${user.first_name || user.username},\n\n` +
        `The e-mail address of your Palanque account (username ${user.username}) is now ${pending.email}, confirmed from that\n` +
        `address on ${now.toISOString()}. This address no longer receives the account's mail.\n\n` +
        `If you did not ask for this, contact an administrator at once.\n`,
    });
    return { ...user, email: pending.email };
  }

  /** Deletes requests whose link expired; returns how many. */
  async purgeExpired(now = new Date()): Promise<number> {
    return this.models.PendingEmailChange.destroy({ where: { expires_at: { [Op.lte]: now } } });
  }

  private async record(caller: UserRow, email: string, links: SignUpLinks): Promise<void> {
    const holder = await this.users.byEmail(email);
    if (holder) {
      this.send({
        to: holder.email,
        subject: 'Palanque: someone tried to use your address',
        text:
          `Hello ${holder.first_name || holder.username},\n\n` +
          `Someone asked to move another Palanque account to this address, which belongs to your account (username\n` +
          `${holder.username}). Nothing changed, and nothing of yours was touched. You need not do anything.\n`,
      });
      return;
    }
    const now = new Date();
    const token = newSecret('');
    const expiresAt = new Date(now.getTime() + this.linkLifetimeMs);
    await this.models.PendingEmailChange.sequelize!.transaction(async (transaction) => {
      // A newer request replaces the older ones: their links stop working.
      await this.models.PendingEmailChange.destroy({ where: { user_id: caller.id }, transaction });
      await this.models.PendingEmailChange.create({ user_id: caller.id, email, token_hash: secretHash(token), created_at: now, expires_at: expiresAt }, { transaction });
    });
    const greeting = `Hello ${caller.first_name || caller.username},\n\n`;
    // One after the other: the link first, then the notice (a failure is logged by the caller of record).
    await this.mailer.send({
      to: email,
      subject: 'Palanque: confirm your new e-mail address',
      text:
        greeting +
        `The Palanque account ${caller.username} asked to use this address from now on. Open this address to confirm it:\n` +
        `${links.confirmUrl(token)}\n\nThe link works once, until ${expiresAt.toISOString()}. If you did not ask for this, ignore this message.\n`,
    });
    await this.mailer.send({
      to: caller.email,
      subject: 'Palanque: a change of your e-mail address was asked',
      text:
        greeting +
        `Someone logged in as ${caller.username} asked to change the account's address to ${email}. It changes only once\n` +
        `confirmed from that address, and this address will be told.\n\n` +
        `If it was not you, change your password now (which also ends the other sessions) and tell an administrator.\n`,
    });
  }

  private send(message: { to: string; subject: string; text: string }): void {
    this.mailer.send(message).catch((error: unknown) => this.logger.error({ err: error, subject: message.subject }, 'could not send mail'));
  }
}
