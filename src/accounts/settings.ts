import type { LoginDeviceSettings } from './login-devices.js';
import type { LoginLockSettings } from './login-lock.js';

/** Who may sign up (SIGNUP): anyone, the invited only, or nobody (signup.ts). */
export const SIGNUP_MODES = ['open', 'invite', 'closed'] as const;
export type SignUpMode = (typeof SIGNUP_MODES)[number];

/** The account rules a deployment tunes (see config.ts for the variables and defaults). */
export interface AccountSettings {
  /** How long an API key works after login. */
  tokenLifetimeMs: number;
  /** The login lock's rules (see login-lock.ts). */
  loginLock: LoginLockSettings;
  /** Device and unlock tokens (login-devices.ts); each unset value takes its default there. */
  loginDevices?: Partial<LoginDeviceSettings>;
  /**
   * How long a key that worked is remembered without asking the database (AUTH_CACHE_SECONDS); 0 or
   * unset, every request asks it. Revocations take effect at once anyway (key-cache.ts).
   */
  keyCacheMs?: number;
  /** How long a password-reset token can be used. */
  passwordResetLifetimeMs: number;
  /**
   * The cost of new password hashes (argon2id): 17 is OWASP's 19 MiB, 2 passes, 1 lane, and each step
   * halves or doubles the memory (see passwords.ts). Weaker hashes are upgraded at the next successful check.
   */
  passwordHashCost: number;
  /** The fewest characters a new password may have (PASSWORD_MIN_LENGTH; password-policy.ts). */
  passwordMinLength?: number;
  /** Sign-up: who may, how long a confirmation link works, how often one may be mailed again (signup.ts). */
  signUp?: { mode: SignUpMode; linkLifetimeMs: number; resendIntervalMs: number };
  /** How long security events are kept in the audit log (AUDIT_RETENTION_DAYS; five years by default). */
  auditRetentionMs?: number;
}
