/** The account rules a deployment tunes (see config.ts for the variables and defaults). */
export interface AccountSettings {
  /** How long an API key works after login. */
  tokenLifetimeMs: number;
  /** Failed logins allowed per account and per address within the window, before logins are refused. */
  loginLock: { maxFailures: number; windowMs: number };
  /** How long a password-reset token can be used. */
  passwordResetLifetimeMs: number;
  /** log2 of scrypt's N for new hashes; older hashes are upgraded at the next successful login. */
  passwordHashCost: number;
}
