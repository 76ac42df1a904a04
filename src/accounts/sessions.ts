/**
 * Checking a password: at login, and when a logged-in user re-confirms theirs before a sensitive action.
 * Both go through the login lock, do the same hashing work whether or not the account exists (an
 * unknown user is checked against a decoy argon2id hash at the current cost), and answer wrong
 * credentials with one message, so that neither the answer nor its timing reveals an account. A
 * password that matches a weaker hash (scrypt, or argon2id below the current cost) is re-hashed.
 */
import { ApiError, AUTH_CHALLENGE } from '../http/errors.js';
import type { AuditLog } from './audit-log.js';
import { normaliseIdentifier, type Attempt, type LoginLock } from './login-lock.js';
import type { UserRow } from './models.js';
import { decoyHash, hashPassword, verifyPassword } from './passwords.js';
import type { SignUps } from './signup.js';
import type { IssuedKey, TokenStore } from './tokens.js';
import type { UserDirectory } from './users.js';

export const WRONG_CREDENTIALS = 'The username or password is incorrect.';

export interface Session extends IssuedKey {
  user: UserRow;
}

export class Sessions {
  /** Computed once at start, at the current cost, so that the first unknown-user login is not faster. */
  private readonly decoy: Promise<string>;

  constructor(
    private readonly users: UserDirectory,
    private readonly tokens: TokenStore,
    private readonly lock: LoginLock,
    private readonly passwordHashCost: number,
    /** Pending sign-ups: their owner's login is told to confirm the address first. */
    private readonly signUps?: Pick<SignUps, 'pendingFor'>,
    private readonly audit?: AuditLog,
  ) {
    this.decoy = decoyHash(passwordHashCost);
  }

  /** `device` is the client's User-Agent, kept with the key for the user's list of sessions. */
  async login(loginName: string, password: string, address: string, device?: string): Promise<Session> {
    const user = await this.users.byLoginName(loginName);
    const attempt = { identifier: loginName, address };
    const reservation = await this.reserveCheck(attempt, user);
    // Without an account, a pending sign-up's hash takes the decoy's place: the same single verification.
    const pending = user ? undefined : await this.signUps?.pendingFor(loginName);
    if (pending) {
      const matches = await this.settle(reservation, async () => (await verifyPassword(password, pending.password_hash, this.passwordHashCost)).valid);
      if (!matches) throw new ApiError(401, 'invalid_credentials', WRONG_CREDENTIALS, [], AUTH_CHALLENGE);
      throw new ApiError(403, 'email_not_verified', `Confirm your e-mail address first: open the link sent to ${pending.email}, or ask for a new one.`);
    }
    if (!(await this.checkReserved(reservation, user, password))) {
      await this.audit?.record({ event: 'login_failed', userId: user?.id, address });
      throw new ApiError(401, 'invalid_credentials', WRONG_CREDENTIALS, [], AUTH_CHALLENGE);
    }
    const account = user!;
    if (!account.is_active) throw new ApiError(403, 'account_inactive', 'This account is deactivated. Ask an administrator to reactivate it.');
    await this.lock.forget(attempt);
    const now = new Date();
    await this.users.recordLogin(account.id, now);
    const key = await this.tokens.issue(account.id, now, device);
    await this.audit?.record({ event: 'login_succeeded', actorId: account.id, userId: account.id, address }, now);
    return { ...key, user: { ...account, last_login: now } };
  }

  /** Re-checks the caller's own password; `loginName` must name the caller (username or e-mail). */
  async confirm(caller: UserRow, loginName: string, password: string, address: string): Promise<void> {
    const name = normaliseIdentifier(loginName);
    if (name !== caller.username_key && name !== caller.email) {
      throw new ApiError(403, 'forbidden', 'You can only confirm your own password.', [
        { location: 'body', field: 'username', rule: 'own_account', message: "must be the caller's own username or e-mail" },
      ]);
    }
    const reservation = await this.reserveCheck({ identifier: loginName, address }, caller);
    if (!(await this.checkReserved(reservation, caller, password))) {
      await this.audit?.record({ event: 'login_failed', actorId: caller.id, userId: caller.id, address, details: { during: 'password_confirmation' } });
      throw new ApiError(401, 'invalid_credentials', 'The password is incorrect.', [], AUTH_CHALLENGE);
    }
  }

  /** The state of an address's failure budget across identifiers, for the login page. */
  stateOf(address: string) {
    return this.lock.addressState(address);
  }

  /** Counts the coming password check against the lock, or refuses it with 429 while locked. */
  private async reserveCheck(attempt: Attempt, user: UserRow | undefined): Promise<number[]> {
    const reservation = await this.lock.reserve(attempt);
    if ('ids' in reservation) return reservation.ids;
    const seconds = reservation.retryAfterSeconds;
    await this.audit?.record({ event: 'login_locked', userId: user?.id, address: attempt.address, details: { retry_after_seconds: seconds } });
    throw new ApiError(429, 'login_locked', `Too many failed attempts. Try again in ${seconds} seconds.`, [], { 'Retry-After': String(seconds) });
  }

  /** Checks the password of a reserved check, then settles the reservation: a failure unless it matched. */
  private async checkReserved(reservation: number[], user: UserRow | undefined, password: string): Promise<boolean> {
    return this.settle(reservation, () => this.passwordMatches(user, password));
  }

  /** Runs a reserved password check, then settles the reservation: a failure unless it matched. */
  private async settle(reservation: number[], check: () => Promise<boolean>): Promise<boolean> {
    let matches = false;
    try {
      matches = await check();
    } finally {
      await (matches ? this.lock.release(reservation) : this.lock.fail(reservation));
    }
    return matches;
  }

  /** Always one verification: against the user's hash, or against the decoy when there is no user. */
  private async passwordMatches(user: UserRow | undefined, password: string): Promise<boolean> {
    const { valid, needsRehash } = await verifyPassword(password, user?.password_hash ?? (await this.decoy), this.passwordHashCost);
    if (!user || !valid) return false;
    if (needsRehash) await this.users.upgradePasswordHash(user.id, user.password_hash, await hashPassword(password, this.passwordHashCost));
    return true;
  }
}
