import { z } from 'zod';
import type { LoginDeviceSettings } from './login-devices.js';
import type { LoginLockSettings } from './login-lock.js';

/** Usernames: no `@`, so that a login name is either a username or an e-mail address, never both. */
export const USERNAME_PATTERN = /^[A-Za-z0-9._+-]{1,150}$/;

/** Who may sign up (SIGNUP): anyone, the invited only, or nobody (signup.ts). */
export const SIGNUP_MODES = ['open', 'invite', 'closed'] as const;
export type SignUpMode = (typeof SIGNUP_MODES)[number];

/** The account rules a deployment tunes (the variables and defaults: accountsEnvironment, below). */
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

/** The first admin, created on an empty database (a password is generated when unset). */
export interface FirstAdminSettings {
  username: string;
  email: string;
  password: string | undefined;
}

/** The variables of the account rules and the first admin, with their bounds and defaults. */
export const accountsEnvironment = z.object({
  TOKEN_LIFETIME_HOURS: z.coerce.number().int().min(1).max(24 * 365).default(24 * 7),
  // A few seconds: it bounds what a lost revocation notice can cost (key-cache.ts).
  AUTH_CACHE_SECONDS: z.coerce.number().int().min(0).max(60).default(5),
  LOGIN_MAX_FAILURES: z.coerce.number().int().min(1).max(1000).default(5),
  LOGIN_LOCK_WINDOW_SECONDS: z.coerce.number().int().min(1).max(24 * 3600).default(15 * 60),
  // High enough for an office behind one address: a lock after this many failures across identifiers.
  LOGIN_ADDRESS_MAX_FAILURES: z.coerce.number().int().min(1).max(100_000).default(100),
  // Seconds, not minutes: the owner of a targeted identifier waits at most this from another address.
  LOGIN_MAX_DELAY_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  PASSWORD_RESET_LIFETIME_MINUTES: z.coerce.number().int().min(1).max(24 * 60).default(30),
  // argon2id's memory in steps of 2x: 17 is OWASP's first choice (19 MiB, t=2, p=1) in production; tests
  // lower it to stay fast (see argon2ParametersFor in passwords.ts).
  PASSWORD_HASH_COST: z.coerce.number().int().min(10).max(20).default(17),
  // Length over composition (password-policy.ts): OWASP's floor is 8, NIST's 15 for a password used alone.
  PASSWORD_MIN_LENGTH: z.coerce.number().int().min(8).max(64).default(12),
  // Who may sign up (signup.ts): invitations only unless a deployment opens it.
  SIGNUP: z.enum(SIGNUP_MODES).default('invite'),
  EMAIL_VERIFICATION_LIFETIME_HOURS: z.coerce.number().int().min(1).max(30 * 24).default(48),
  SIGNUP_RESEND_SECONDS: z.coerce.number().int().min(1).max(24 * 3600).default(60),
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(100 * 366).default(5 * 365),
  ADMIN_USERNAME: z.string().regex(USERNAME_PATTERN, 'must be 1-150 letters, digits or . _ + - (no @)').optional(),
  ADMIN_EMAIL: z.string().email('must be an e-mail address').optional(),
  ADMIN_PASSWORD: z.string().min(12, 'must be at least 12 characters').max(256).optional(),
});

type AccountsEnvironment = z.output<typeof accountsEnvironment>;

export function accountSettingsOf(env: AccountsEnvironment): AccountSettings {
  return {
    tokenLifetimeMs: env.TOKEN_LIFETIME_HOURS * 3600_000,
    keyCacheMs: env.AUTH_CACHE_SECONDS * 1000,
    loginLock: {
      maxFailures: env.LOGIN_MAX_FAILURES,
      addressMaxFailures: env.LOGIN_ADDRESS_MAX_FAILURES,
      maxDelayMs: env.LOGIN_MAX_DELAY_SECONDS * 1000,
      windowMs: env.LOGIN_LOCK_WINDOW_SECONDS * 1000,
    },
    passwordResetLifetimeMs: env.PASSWORD_RESET_LIFETIME_MINUTES * 60_000,
    passwordHashCost: env.PASSWORD_HASH_COST,
    passwordMinLength: env.PASSWORD_MIN_LENGTH,
    signUp: { mode: env.SIGNUP, linkLifetimeMs: env.EMAIL_VERIFICATION_LIFETIME_HOURS * 3600_000, resendIntervalMs: env.SIGNUP_RESEND_SECONDS * 1000 },
    auditRetentionMs: env.AUDIT_RETENTION_DAYS * 86_400_000,
  };
}

export function firstAdminOf(env: AccountsEnvironment): FirstAdminSettings {
  return { username: env.ADMIN_USERNAME ?? 'admin', email: env.ADMIN_EMAIL ?? 'admin@palanque.app', password: env.ADMIN_PASSWORD };
}
