/** The accounts domain, assembled: one object the app and the tests build from a database and settings. */
import type { Sequelize } from 'sequelize';
import type { Logger } from '../logger.js';
import type { Mailer } from '../mail/mailer.js';
import { KeyCache, type RevocationChannel } from './key-cache.js';
import { DEFAULT_LOGIN_DEVICE_SETTINGS, LoginDevices } from './login-devices.js';
import { LoginLock } from './login-lock.js';
import { LoginUnlocks } from './login-unlock.js';
import { defineAccountModels, type AccountModels, type SocialLoginRow } from './models.js';
import { PasswordChanges } from './password-change.js';
import { DEFAULT_MIN_LENGTH } from './password-policy.js';
import { PasswordResets } from './password-reset.js';
import { Sessions } from './sessions.js';
import { AccountDeletions } from './account-deletion.js';
import { AuditLog } from './audit-log.js';
import { EmailChanges } from './email-change.js';
import { SignUps } from './signup.js';
import type { AccountSettings } from './settings.js';
import { TokenStore } from './tokens.js';
import { UserDirectory } from './users.js';

/** Expired and revoked API keys are kept this long (for investigating a session), then deleted. */
const DEAD_KEYS_KEPT_MS = 30 * 24 * 3600_000;

/** Sign-up as SIGNUP and its companions default (settings.ts, accountsEnvironment). */
const DEFAULT_SIGNUP = { mode: 'invite', linkLifetimeMs: 48 * 3600_000, resendIntervalMs: 60_000 } as const;
/** AUDIT_RETENTION_DAYS's default: five years. */
const DEFAULT_AUDIT_RETENTION_MS = 5 * 365 * 86_400_000;

export interface Accounts {
  models: AccountModels;
  users: UserDirectory;
  tokens: TokenStore;
  /** Live keys remembered for a few seconds; `listen()` hears the other instances' revocations. */
  keyCache: KeyCache;
  lock: LoginLock;
  /** Device tokens and mailed unlock tokens, by which a login escapes others' failures (login-devices.ts). */
  devices: LoginDevices;
  /** Unlock tokens mailed to an owner whose name is delayed (login-unlock.ts). */
  unlocks: LoginUnlocks;
  sessions: Sessions;
  resets: PasswordResets;
  /** A user's change of their own password, which revokes their other keys. */
  passwordChanges: PasswordChanges;
  /** The fewest characters a new password may have (PASSWORD_MIN_LENGTH; password-policy.ts). */
  passwordMinLength: number;
  /** Sign-ups waiting for their address to be confirmed, and the confirmation (signup.ts). */
  signUps: SignUps;
  /** A user's change of their own address, confirmed from the new one (email-change.ts). */
  emailChanges: EmailChanges;
  /** Security events, for platform admins (audit-log.ts). */
  audit: AuditLog;
  /** A user's deletion of their own account: erased, under a pseudonym (account-deletion.ts). */
  deletions: AccountDeletions;
  /** The mail the accounts send (links, notices); other domains mail through it too (team invitations). */
  mailer: Mailer;
  /** The user's linked accounts, without their tokens. */
  socialLoginsOf(userId: number): Promise<Array<Pick<SocialLoginRow, 'provider' | 'external_id' | 'display_name' | 'linked_at'>>>;
  /** Housekeeping: forgets failures, expired device and unlock tokens, reset tokens, long-dead keys and expired sign-ups and e-mail changes, and audit events past their retention; returns how many rows went. */
  purgeExpired(): Promise<number>;
}

/**
 * `revocations` tells the other instances about revoked keys, and them this one (the server's: Redis or
 * PostgreSQL, see revocations.ts); without it, revocations reach only this process's key cache.
 */
export function createAccounts(
  sequelize: Sequelize,
  settings: AccountSettings,
  mailer: Mailer,
  logger: Logger,
  revocations?: RevocationChannel,
): Accounts {
  const models = defineAccountModels(sequelize);
  const keyCache = new KeyCache({ ttlMs: settings.keyCacheMs ?? 0, channel: revocations, logger });
  const audit = new AuditLog(models, logger, settings.auditRetentionMs ?? DEFAULT_AUDIT_RETENTION_MS);
  const users = new UserDirectory(models, settings.passwordHashCost, keyCache);
  const tokens = new TokenStore(models, settings.tokenLifetimeMs, keyCache);
  const lock = new LoginLock(models, settings.loginLock);
  const devices = new LoginDevices(models, { ...DEFAULT_LOGIN_DEVICE_SETTINGS, ...settings.loginDevices });
  const resets = new PasswordResets(models, users, mailer, logger, settings.passwordResetLifetimeMs, settings.passwordHashCost, keyCache, audit);
  const signUpSettings = settings.signUp ?? DEFAULT_SIGNUP;
  const signUps = new SignUps(models, users, mailer, logger, { ...signUpSettings, passwordHashCost: settings.passwordHashCost }, audit);
  const sessions = new Sessions(users, tokens, lock, devices, settings.passwordHashCost, signUps, audit);
  const emailChanges = new EmailChanges(models, users, sessions, mailer, logger, signUpSettings.linkLifetimeMs, audit);
  const passwordRules = { passwordHashCost: settings.passwordHashCost, passwordMinLength: settings.passwordMinLength ?? DEFAULT_MIN_LENGTH };
  return {
    models,
    users,
    tokens,
    keyCache,
    lock,
    devices,
    unlocks: new LoginUnlocks(users, devices, mailer, logger),
    sessions,
    resets,
    passwordChanges: new PasswordChanges(models, sessions, mailer, logger, passwordRules, keyCache, audit),
    passwordMinLength: passwordRules.passwordMinLength,
    signUps,
    emailChanges,
    audit,
    deletions: new AccountDeletions(models, sessions, keyCache, audit),
    mailer,
    async socialLoginsOf(userId) {
      const attributes = ['provider', 'external_id', 'display_name', 'linked_at'] as const;
      return (await models.SocialLogin.findAll({ attributes: [...attributes], where: { user_id: userId }, order: [['linked_at', 'ASC']], raw: true })) as unknown as SocialLoginRow[];
    },
    async purgeExpired() {
      return (await lock.purgeExpired()) + (await devices.purgeExpired()) + (await resets.purgeExpired()) + (await tokens.purgeDead(DEAD_KEYS_KEPT_MS)) + (await signUps.purgeExpired()) + (await emailChanges.purgeExpired()) + (await audit.purgeExpired());
    },
  };
}

export type { AccountSettings } from './settings.js';
export { publicUser, displayName, normaliseEmail, DuplicateUserError } from './users.js';
