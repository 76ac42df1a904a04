/**
 * Sign-up with e-mail confirmation (`signUp`, `resendSignUpConfirmation`, `verifyEmail`).
 *
 * A sign-up is a pending row (migration 0021) until its owner opens the single-use link mailed to the
 * address; only then is the account created, active. So an address nobody confirmed never becomes an
 * account, and a second sign-up with the same address replaces the first (nobody holds someone else's
 * address by signing up first). A pending sign-up holds its username until its link expires.
 *
 * Nothing tells the caller whether an address has an account: after the checks that do not depend on
 * the address (the body, the username, the invitation) and one password hash, the answer is given and
 * the rest happens after it. A free address gets the link; the owner of a taken one gets a mail saying
 * someone tried, and nothing else changes.
 */
import { Op } from 'sequelize';
import { ApiError } from '../http/errors.js';
import type { AuditLog } from './audit-log.js';
import type { Logger } from '../logger.js';
import type { Mailer } from '../mail/mailer.js';
import type { AccountModels, PendingSignUpRow, UserRow } from './models.js';
import { hashPassword } from './passwords.js';
import type { SignUpMode } from './settings.js';
import { newSecret, secretHash } from './secrets.js';
import { DuplicateUserError, normaliseEmail, usernameKey, type NewUser, type UserDirectory } from './users.js';
import { runAfterAnswer } from '../http/after-answer.js';

export interface SignUpSettings {
  mode: SignUpMode;
  /** How long a mailed link works (EMAIL_VERIFICATION_LIFETIME_HOURS). */
  linkLifetimeMs: number;
  /** The least time between two links mailed for one sign-up (SIGNUP_RESEND_SECONDS). */
  resendIntervalMs: number;
  passwordHashCost: number;
}

/** Whether an invitation token lets this address sign up while SIGNUP is `invite`. */
export interface InvitationGate {
  admits(invitation: string, email: string): Promise<boolean>;
}

/** Where the confirmation mail sends its reader. */
export interface SignUpLinks {
  confirmUrl(token: string): string;
}

/** A new account's fields as an admin's are (never an admin, active once confirmed), and the invitation. */
export type SignUpRequest = Omit<NewUser, 'is_admin' | 'is_active'> & { invitation?: string };

/** An invitation-only gate that admits nobody: until the domains wire the teams' invitations in (and in tools without them). */
export const NO_INVITATIONS: InvitationGate = { admits: async () => false };

export class SignUps {
  constructor(
    private readonly models: AccountModels,
    private readonly users: UserDirectory,
    private readonly mailer: Mailer,
    private readonly logger: Logger,
    private readonly settings: SignUpSettings,
    private readonly audit?: AuditLog,
  ) {}

  /** Under SIGNUP=invite, admit the sign-ups this gate admits (the teams' invitations, wired by the domains). */
  admitInvitationsWith(gate: InvitationGate): void {
    this.invitations = gate;
  }

  private invitations: InvitationGate = NO_INVITATIONS;

  get linkLifetimeMs(): number {
    return this.settings.linkLifetimeMs;
  }

  /**
   * Checks what does not depend on the address's owner (mode, invitation, username), hashes the
   * password, then answers; the lookup of the address and the mail happen after the answer. The caller
   * has checked the body's fields (422).
   */
  async signUp(request: SignUpRequest, links: SignUpLinks): Promise<void> {
    const email = normaliseEmail(request.email);
    await this.checkAdmitted(request.invitation, email);
    await this.checkUsernameFree(request.username, email);
    const passwordHash = await hashPassword(request.password, this.settings.passwordHashCost);
    runAfterAnswer(this.logger, 'could not record a sign-up', () => this.record({ ...request, email }, passwordHash, links));
  }

  /** Mails a new link for a pending sign-up of this address, unless one went out within the interval. */
  async resend(email: string, links: SignUpLinks): Promise<void> {
    const address = normaliseEmail(email);
    runAfterAnswer(this.logger, 'could not resend a sign-up link', async () => {
      const now = new Date();
      const pending = await this.pendingByEmail(address, now);
      if (!pending || now.getTime() - new Date(pending.sent_at).getTime() < this.settings.resendIntervalMs) return;
      const token = newSecret('');
      const expiresAt = new Date(now.getTime() + this.settings.linkLifetimeMs);
      // A new token replaces the old one: links mailed before stop working.
      await this.models.PendingSignUp.update({ token_hash: secretHash(token), sent_at: now, expires_at: expiresAt }, { where: { id: pending.id } });
      await this.mailLink(pending, token, expiresAt, links);
    });
  }

  /**
   * Confirms the sign-up of a token: the account is created, active, and the pending row goes. Undefined
   * when the token is unknown, used or expired; 409 when the username or address was taken meanwhile
   * (an admin created that account since).
   */
  async confirm(token: string, now = new Date()): Promise<UserRow | undefined> {
    const pending = (await this.models.PendingSignUp.findOne({ where: { token_hash: secretHash(token), expires_at: { [Op.gt]: now } }, raw: true })) as PendingSignUpRow | null;
    if (!pending) return undefined;
    // Consumed first: of two uses of one link, exactly one creates the account.
    if ((await this.models.PendingSignUp.destroy({ where: { id: pending.id } })) === 0) return undefined;
    const account = await this.users
      .createWithHash({
        username: pending.username,
        email: pending.email,
        passwordHash: pending.password_hash,
        first_name: pending.first_name,
        last_name: pending.last_name,
        phone: pending.phone,
      })
      .catch((error: unknown) => {
        if (!(error instanceof DuplicateUserError)) throw error;
        throw new ApiError(409, 'conflict', `Another account took this ${error.field === 'email' ? 'e-mail address' : 'username'} meanwhile; sign up again.`, [
          { location: 'query', field: 'token', rule: 'unique', message: `the sign-up's ${error.field} is taken by another account`, value: error.field === 'email' ? pending.email : pending.username },
        ]);
      });
    // Other pending sign-ups of the address are moot now.
    await this.models.PendingSignUp.destroy({ where: { email: pending.email } });
    await this.audit?.record({ event: 'account_created', actorId: account.id, userId: account.id, details: { via: 'signup' } });
    return account;
  }

  /** The pending sign-up a login name (username or address) and password would confirm, for the login's answer. */
  async pendingFor(loginName: string, now = new Date()): Promise<PendingSignUpRow | undefined> {
    const where = loginName.includes('@') ? { email: normaliseEmail(loginName) } : { username_key: usernameKey(loginName) };
    const row = await this.models.PendingSignUp.findOne({ where: { ...where, expires_at: { [Op.gt]: now } }, order: [['created_at', 'DESC']], raw: true });
    return (row as PendingSignUpRow | null) ?? undefined;
  }

  /** Deletes sign-ups whose link expired; returns how many. */
  async purgeExpired(now = new Date()): Promise<number> {
    return this.models.PendingSignUp.destroy({ where: { expires_at: { [Op.lte]: now } } });
  }

  private async checkAdmitted(invitation: string | undefined, email: string): Promise<void> {
    if (this.settings.mode === 'closed') throw new ApiError(403, 'signup_closed', 'This server takes no sign-ups; ask an administrator for an account.');
    if (this.settings.mode === 'open') return;
    if (invitation !== undefined && (await this.invitations.admits(invitation, email))) return;
    throw new ApiError(403, 'invitation_required', "Sign-up on this server needs an invitation to this address from an entity's team.", [
      { location: 'body', field: 'invitation', rule: 'open_invitation', message: 'must be the token of an open invitation to this e-mail address' },
    ]);
  }

  /** 409 when an account has the username, or a live sign-up of another address holds it. */
  private async checkUsernameFree(username: string, email: string): Promise<void> {
    const key = usernameKey(username);
    const account = await this.models.User.count({ where: { username_key: key } });
    const heldByAnother = await this.models.PendingSignUp.count({ where: { username_key: key, email: { [Op.ne]: email }, expires_at: { [Op.gt]: new Date() } } });
    if (account + heldByAnother > 0) {
      throw new ApiError(409, 'conflict', 'Another account already has this username.', [
        { location: 'body', field: 'username', rule: 'unique', message: 'is taken by another account', value: username },
      ]);
    }
  }

  /** After the answer: a link for a free address, a warning to the owner of a taken one. */
  private async record(request: SignUpRequest & { email: string }, passwordHash: string, links: SignUpLinks): Promise<void> {
    const owner = await this.users.byEmail(request.email);
    if (owner) return this.warnOwner(owner);
    const now = new Date();
    const token = newSecret('');
    const expiresAt = new Date(now.getTime() + this.settings.linkLifetimeMs);
    await this.models.PendingSignUp.sequelize!.transaction(async (transaction) => {
      await this.models.PendingSignUp.destroy({ where: { email: request.email }, transaction });
      await this.models.PendingSignUp.create(
        {
          username: request.username,
          username_key: usernameKey(request.username),
          email: request.email,
          // Already trimmed by the handler's profile check (profile.ts).
          first_name: request.first_name ?? '',
          last_name: request.last_name ?? '',
          phone: request.phone ?? null,
          password_hash: passwordHash,
          token_hash: secretHash(token),
          created_at: now,
          sent_at: now,
          expires_at: expiresAt,
        },
        { transaction },
      );
    });
    await this.mailLink({ ...request, first_name: request.first_name ?? '' }, token, expiresAt, links);
  }

  private async mailLink(to: Pick<PendingSignUpRow, 'email' | 'username' | 'first_name'>, token: string, expiresAt: Date, links: SignUpLinks): Promise<void> {
    await this.mailer.send({
      to: to.email,
      subject: 'Palanque: confirm your e-mail address',
      text:
        `Hello ${to.first_name || to.username},\n\n` +
        `Someone (hopefully you) signed up for a Palanque account with this address, username ${to.username}.\n\n` +
        `Open this address to confirm it; the account is created then, and you can log in:\n${links.confirmUrl(token)}\n\n` +
        `The link works once, until ${expiresAt.toISOString()}. If you did not sign up, ignore this message: no account is created.\n`,
    });
  }

  private async warnOwner(owner: UserRow): Promise<void> {
    await this.mailer.send({
      to: owner.email,
      subject: 'Palanque: someone tried to sign up with your address',
      text:
        `Hello ${owner.first_name || owner.username},\n\n` +
        `Someone tried to sign up for a Palanque account with this address, which already belongs to your account\n` +
        `(username ${owner.username}). No account was created and nothing of yours changed.\n\n` +
        `If it was you: log in with your username or this address; if you forgot the password, ask for a reset\n` +
        `with this address on the login page.\n\n` +
        `If it was not you, you need not do anything.\n`,
    });
  }

  private async pendingByEmail(email: string, now: Date): Promise<PendingSignUpRow | undefined> {
    const row = await this.models.PendingSignUp.findOne({ where: { email, expires_at: { [Op.gt]: now } }, raw: true });
    return (row as PendingSignUpRow | null) ?? undefined;
  }
}

