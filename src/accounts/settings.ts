import type { LoginLockSettings } from './login-lock.js';

/** The account rules a deployment tunes (see config.ts for the variables and defaults). */
export interface AccountSettings {
  /** How long an API key works after login. */
  tokenLifetimeMs: number;
  /** The login lock's rules (see login-lock.ts). */
  loginLock: LoginLockSettings;
  /** How long a password-reset token can be used. */
  passwordResetLifetimeMs: number;
  /** log2 of scrypt's N for new hashes; older hashes are upgraded at the next successful login. */
  passwordHashCost: number;
}
