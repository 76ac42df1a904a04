/** The Sequelize models of the accounts tables (created by migration 0004-accounts; 0017 made failures pending first, 0020 gave keys their device, 0021 added pending sign-ups and e-mail changes, 0022 the audit log, 0025 deleted accounts, 0031 trusted login devices). */
import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';

export interface UserRow {
  id: number;
  username: string;
  username_key: string;
  email: string;
  first_name: string;
  last_name: string;
  phone: string | null;
  password_hash: string;
  is_admin: boolean;
  is_active: boolean;
  date_joined: Date;
  last_login: Date | null;
  /** When its owner deleted the account (migration 0025; account-deletion.ts); null otherwise. */
  deleted_at: Date | null;
  /** Whether teammates see the e-mail and phone (migration 0023; off until the user turns it on). */
  contact_visible_to_team: boolean;
}

export interface ApiTokenRow {
  id: number;
  user_id: number;
  key_hash: string;
  created_at: Date;
  last_used_at: Date | null;
  expires_at: Date;
  revoked_at: Date | null;
  /** The login's User-Agent, cut to 200 characters (migration 0020); null when it sent none or before then. */
  device: string | null;
}

export interface PasswordResetRow {
  id: number;
  user_id: number;
  token_hash: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

/** A sign-up waiting for its address to be confirmed (migration 0021; signup.ts). */
export interface PendingSignUpRow {
  id: number;
  username: string;
  username_key: string;
  email: string;
  first_name: string;
  last_name: string;
  phone: string | null;
  password_hash: string;
  token_hash: string;
  created_at: Date;
  sent_at: Date;
  expires_at: Date;
}

/** A user's new address waiting to be confirmed from it (migration 0021; email-change.ts). */
export interface PendingEmailChangeRow {
  id: number;
  user_id: number;
  email: string;
  token_hash: string;
  created_at: Date;
  expires_at: Date;
}

/** One security event (migration 0022; audit-log.ts). */
export interface AuditEventRow {
  id: number;
  occurred_at: Date;
  event: string;
  actor_id: number | null;
  user_id: number | null;
  address: string | null;
  /** JSON text, or null. */
  details: string | null;
}

/** A device token or a mailed unlock token (migration 0031; login-devices.ts): its hash only. */
export interface LoginDeviceRow {
  id: number;
  user_id: number;
  kind: 'device' | 'unlock';
  token_hash: string;
  created_at: Date;
  last_used_at: Date | null;
  expires_at: Date;
  /** Password checks made with it that did not succeed (counted before each check runs). */
  failures: number;
}

export interface LoginFailureRow {
  id: number;
  subject: string;
  failed_at: Date;
  /** The password check is still running (or its process died); false once it failed. */
  pending: boolean;
}

export interface SocialLoginRow {
  id: number;
  user_id: number;
  provider: 'searchnet' | 'socialvideo' | 'socialnet';
  external_id: string;
  display_name: string;
  linked_at: Date;
  /** The provider's tokens, sealed (src/security/secret-box.ts); null when none are held. */
  access_token_sealed: string | null;
  refresh_token_sealed: string | null;
  token_expires_at: Date | null;
  scope: string | null;
}

type Static<Row extends object> = ModelStatic<Model<Row, Partial<Row>>>;

export interface AccountModels {
  User: Static<UserRow>;
  ApiToken: Static<ApiTokenRow>;
  PasswordReset: Static<PasswordResetRow>;
  LoginFailure: Static<LoginFailureRow>;
  SocialLogin: Static<SocialLoginRow>;
  PendingSignUp: Static<PendingSignUpRow>;
  PendingEmailChange: Static<PendingEmailChangeRow>;
  AuditEvent: Static<AuditEventRow>;
  LoginDevice: Static<LoginDeviceRow>;
}

const id = { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true };
const plain = { timestamps: false } as const;

export function defineAccountModels(sequelize: Sequelize): AccountModels {
  const User = sequelize.define<Model<UserRow, Partial<UserRow>>>(
    'User',
    {
      id,
      username: DataTypes.STRING(150),
      username_key: DataTypes.STRING(150),
      email: DataTypes.STRING(254),
      first_name: DataTypes.STRING(150),
      last_name: DataTypes.STRING(150),
      phone: DataTypes.STRING(16),
      password_hash: DataTypes.STRING(255),
      is_admin: DataTypes.BOOLEAN,
      is_active: DataTypes.BOOLEAN,
      date_joined: DataTypes.DATE,
      last_login: DataTypes.DATE,
      deleted_at: DataTypes.DATE,
      contact_visible_to_team: DataTypes.BOOLEAN,
    },
    { tableName: 'users', ...plain },
  );
  const ApiToken = sequelize.define<Model<ApiTokenRow, Partial<ApiTokenRow>>>(
    'ApiToken',
    {
      id,
      user_id: DataTypes.INTEGER,
      key_hash: DataTypes.STRING(64),
      created_at: DataTypes.DATE,
      last_used_at: DataTypes.DATE,
      expires_at: DataTypes.DATE,
      revoked_at: DataTypes.DATE,
      device: DataTypes.STRING(200),
    },
    { tableName: 'api_tokens', ...plain },
  );
  const PasswordReset = sequelize.define<Model<PasswordResetRow, Partial<PasswordResetRow>>>(
    'PasswordReset',
    {
      id,
      user_id: DataTypes.INTEGER,
      token_hash: DataTypes.STRING(64),
      created_at: DataTypes.DATE,
      expires_at: DataTypes.DATE,
      used_at: DataTypes.DATE,
    },
    { tableName: 'password_reset_tokens', ...plain },
  );
  const LoginFailure = sequelize.define<Model<LoginFailureRow, Partial<LoginFailureRow>>>(
    'LoginFailure',
    { id, subject: DataTypes.STRING(300), failed_at: DataTypes.DATE, pending: { type: DataTypes.BOOLEAN, defaultValue: false } },
    { tableName: 'login_failures', ...plain },
  );
  const SocialLogin = sequelize.define<Model<SocialLoginRow, Partial<SocialLoginRow>>>(
    'SocialLogin',
    {
      id,
      user_id: DataTypes.INTEGER,
      provider: DataTypes.STRING(20),
      external_id: DataTypes.STRING(255),
      display_name: DataTypes.STRING(255),
      linked_at: DataTypes.DATE,
      access_token_sealed: DataTypes.TEXT,
      refresh_token_sealed: DataTypes.TEXT,
      token_expires_at: DataTypes.DATE,
      scope: DataTypes.STRING(1024),
    },
    { tableName: 'social_logins', ...plain },
  );
  const PendingSignUp = sequelize.define<Model<PendingSignUpRow, Partial<PendingSignUpRow>>>(
    'PendingSignUp',
    {
      id,
      username: DataTypes.STRING(150),
      username_key: DataTypes.STRING(150),
      email: DataTypes.STRING(254),
      first_name: DataTypes.STRING(150),
      last_name: DataTypes.STRING(150),
      phone: DataTypes.STRING(16),
      password_hash: DataTypes.STRING(255),
      token_hash: DataTypes.STRING(64),
      created_at: DataTypes.DATE,
      sent_at: DataTypes.DATE,
      expires_at: DataTypes.DATE,
    },
    { tableName: 'pending_signups', ...plain },
  );
  const PendingEmailChange = sequelize.define<Model<PendingEmailChangeRow, Partial<PendingEmailChangeRow>>>(
    'PendingEmailChange',
    { id, user_id: DataTypes.INTEGER, email: DataTypes.STRING(254), token_hash: DataTypes.STRING(64), created_at: DataTypes.DATE, expires_at: DataTypes.DATE },
    { tableName: 'pending_email_changes', ...plain },
  );
  const AuditEvent = sequelize.define<Model<AuditEventRow, Partial<AuditEventRow>>>(
    'AuditEvent',
    { id, occurred_at: DataTypes.DATE, event: DataTypes.STRING(40), actor_id: DataTypes.INTEGER, user_id: DataTypes.INTEGER, address: DataTypes.STRING(64), details: DataTypes.TEXT },
    { tableName: 'audit_events', ...plain },
  );
  const LoginDevice = sequelize.define<Model<LoginDeviceRow, Partial<LoginDeviceRow>>>(
    'LoginDevice',
    {
      id,
      user_id: DataTypes.INTEGER,
      kind: DataTypes.STRING(10),
      token_hash: DataTypes.STRING(64),
      created_at: DataTypes.DATE,
      last_used_at: DataTypes.DATE,
      expires_at: DataTypes.DATE,
      failures: { type: DataTypes.INTEGER, defaultValue: 0 },
    },
    { tableName: 'login_devices', ...plain },
  );
  return { User, ApiToken, PasswordReset, LoginFailure, SocialLogin, PendingSignUp, PendingEmailChange, AuditEvent, LoginDevice };
}
