/**
 * Checking a password: at login, and when a logged-in user re-confirms theirs before a sensitive action.
 * Both go through the login lock, do the same hashing work whether or not the account exists (an
 * unknown user is checked against a decoy argon2id hash at the current cost), and answer wrong
 * credentials with one message, so that neither the answer nor its timing reveals an account. A
 * password that matches a weaker hash (scrypt, or argon2id below the current cost) is re-hashed.
 *
 * A login that carries a live device token or unlock token of the account it names is judged by that
 * token's own failures instead of the lock's (login-devices.ts): others' failures never delay or lock
 * it, and its own neither count toward the lock nor clear it. Every successful login answers a device token.
 */
import { ApiError, AUTH_CHALLENGE } from '../http/errors.js';
import type { AuditLog } from './audit-log.js';
import type { LoginDevices, LoginTrust, TrustedCheck } from './login-devices.js';
import { normaliseIdentifier, type Attempt, type LoginLock } from './login-lock.js';
import type { UserRow } from './models.js';
import { decoyHash, hashPassword, verifyPassword } from './passwords.js';
import type { SignUps } from './signup.js';
import type { IssuedKey, TokenStore } from './tokens.js';
import type { UserDirectory } from './users.js';

export const WRONG_CREDENTIALS = 'The username or password is incorrect.';

export interface Session extends IssuedKey {
  user: UserRow;
  /** The device token to keep for the next login: the one the login carried, or a new one. */
  deviceToken: string;
}

export class Sessions {
  /** Computed once at start, at the current cost, so that the first unknown-user login is not faster. */
  private readonly decoy: Promise<string>;

  constructor(
    private readonly users: UserDirectory,
    private readonly tokens: TokenStore,
    private readonly lock: LoginLock,
    /** Device and unlock tokens: a login carrying one is judged by it (login-devices.ts). */
    private readonly devices: LoginDevices,
    private readonly passwordHashCost: number,
    /** Pending sign-ups: their owner's login is told to confirm the address first. */
    private readonly signUps?: Pick<SignUps, 'pendingFor'>,
    private readonly audit?: AuditLog,
  ) {
    this.decoy = decoyHash(passwordHashCost);
  }

  /**
   * `device` is the client's User-Agent, kept with the key for the user's list of sessions; `trust`, the
   * device or unlock token the login carries, if any.
   */
  async login(loginName: string, password: string, address: string, device?: string, trust: LoginTrust = {}): Promise<Session> {
    const user = await this.users.byLoginName(loginName);
    const trusted = await this.devices.reserve(user?.id, trust);
    if (trusted) return this.loginTrusted(user!, trusted, password, address, device);
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
    const deviceToken = await this.devices.issue(account.id, now);
    return this.open(account, address, device, deviceToken, now);
  }

  /**
   * A login judged by its token alone: the lock neither refuses nor counts it, and it leaves the name's
   * failures as they are (they are someone else's, and keep slowing them down).
   */
  private async loginTrusted(user: UserRow, trusted: TrustedCheck, password: string, address: string, device: string | undefined): Promise<Session> {
    let matches = false;
    try {
      matches = await this.passwordMatches(user, password);
    } finally {
      if (!matches) await this.devices.failed(trusted);
    }
    if (!matches) {
      await this.audit?.record({ event: 'login_failed', userId: user.id, address, details: { with: `${trusted.kind}_token` } });
      throw new ApiError(401, 'invalid_credentials', WRONG_CREDENTIALS, [], AUTH_CHALLENGE);
    }
    if (!user.is_active) throw new ApiError(403, 'account_inactive', 'This account is deactivated. Ask an administrator to reactivate it.');
    const now = new Date();
    const deviceToken = await this.devices.succeeded(trusted, now);
    return this.open(user, address, device, deviceToken, now, { with: `${trusted.kind}_token` });
  }

  /** Issues the key of a successful login. */
  private async open(account: UserRow, address: string, device: string | undefined, deviceToken: string, now: Date, details?: Record<string, string>): Promise<Session> {
    await this.users.recordLogin(account.id, now);
    const key = await this.tokens.issue(account.id, now, device);
    await this.audit?.record({ event: 'login_succeeded', actorId: account.id, userId: account.id, address, details }, now);
    return { ...key, user: { ...account, last_login: now }, deviceToken };
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

  /**
   * Always one verification: against the user's hash, or against the decoy when there is no user or
   * the user has no usable password (a first admin created without one): the refusal then takes as long
   * as any other, and says nothing about the account.
   */
  private async passwordMatches(user: UserRow | undefined, password: string): Promise<boolean> {
    const usableHash = user?.password_hash.startsWith('$') ? user.password_hash : undefined;
    const { valid, needsRehash } = await verifyPassword(password, usableHash ?? (await this.decoy), this.passwordHashCost);
    if (!user || !usableHash || !valid) return false;
    if (needsRehash) await this.users.upgradePasswordHash(user.id, user.password_hash, await hashPassword(password, this.passwordHashCost));
    return true;
  }
}
