/**
 * Checking a password: at login, and when a logged-in user re-confirms theirs before a sensitive action.
 * Both go through the login lock, do the same scrypt work whether or not the account exists, and answer
 * wrong credentials with one message, so that neither the answer nor its timing reveals an account.
 */
import { ApiError, AUTH_CHALLENGE } from '../http/errors.js';
import { lockSubjects, type LoginLock } from './login-lock.js';
import type { UserRow } from './models.js';
import { decoyHash, hashPassword, verifyPassword } from './passwords.js';
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
  ) {
    this.decoy = decoyHash(passwordHashCost);
  }

  async login(loginName: string, password: string, address: string): Promise<Session> {
    const user = await this.users.byLoginName(loginName);
    const subjects = [user ? lockSubjects.account(user.id) : lockSubjects.unknownName(loginName), lockSubjects.address(address)];
    const reservation = await this.reserveCheck(subjects);
    // A wrong password keeps the reservation: it was a failure.
    if (!(await this.passwordMatches(user, password))) throw new ApiError(401, 'invalid_credentials', WRONG_CREDENTIALS, [], AUTH_CHALLENGE);
    await this.lock.release(reservation);
    const account = user!;
    if (!account.is_active) throw new ApiError(403, 'account_inactive', 'This account is deactivated. Ask an administrator to reactivate it.');
    await this.lock.forget(lockSubjects.account(account.id));
    const now = new Date();
    await this.users.recordLogin(account.id, now);
    const key = await this.tokens.issue(account.id, now);
    return { ...key, user: { ...account, last_login: now } };
  }

  /** Re-checks the caller's own password; `loginName` must name the caller (username or e-mail). */
  async confirm(caller: UserRow, loginName: string, password: string, address: string): Promise<void> {
    const name = loginName.trim().toLowerCase();
    if (name !== caller.username_key && name !== caller.email) {
      throw new ApiError(403, 'forbidden', 'You can only confirm your own password.', [
        { location: 'body', field: 'username', rule: 'own_account', message: "must be the caller's own username or e-mail" },
      ]);
    }
    const subjects = [lockSubjects.account(caller.id), lockSubjects.address(address)];
    const reservation = await this.reserveCheck(subjects);
    if (!(await this.passwordMatches(caller, password))) throw new ApiError(401, 'invalid_credentials', 'The password is incorrect.', [], AUTH_CHALLENGE);
    await this.lock.release(reservation);
  }

  /** The lock state of an address, for the login page. */
  stateOf(address: string) {
    return this.lock.state([lockSubjects.address(address)]);
  }

  /** Counts the coming password check against the lock, or refuses it with 429 while locked. */
  private async reserveCheck(subjects: string[]): Promise<number[]> {
    const reservation = await this.lock.reserve(subjects);
    if ('ids' in reservation) return reservation.ids;
    const state = reservation.locked;
    throw new ApiError(
      429,
      'login_locked',
      `Too many failed attempts. Try again in ${state.retryAfterSeconds} seconds.`,
      [],
      { 'Retry-After': String(state.retryAfterSeconds) },
    );
  }

  /** Always one scrypt verification: against the user's hash, or against the decoy when there is no user. */
  private async passwordMatches(user: UserRow | undefined, password: string): Promise<boolean> {
    const { valid, needsRehash } = await verifyPassword(password, user?.password_hash ?? (await this.decoy), this.passwordHashCost);
    if (!user || !valid) return false;
    if (needsRehash) await this.users.setPasswordHash(user.id, await hashPassword(password, this.passwordHashCost));
    return true;
  }
}
