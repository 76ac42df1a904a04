/**
 * User accounts: creation with the uniqueness rules (username case-insensitively, e-mail after
 * normalisation), lookups by login name, and the public shape that leaves the server (never a hash).
 */
import { Op, UniqueConstraintError } from 'sequelize';
import type { components } from '../../sdk/schema.js';
import { USERNAME_PATTERN } from './settings.js';
import { asBoolean, asDate, readerOf } from '../db/reader.js';
import type { KeyCache } from './key-cache.js';
import type { AccountModels, UserRow } from './models.js';
import { hashPassword } from './passwords.js';
import type { ProfileChanges } from './profile.js';

export type PublicUser = components['schemas']['User'];
/** A profile as someone else may see it (getUser). */
export type ProfileAsSeen = components['schemas']['UserAsSeen'];

export interface NewUser {
  username: string;
  email: string;
  password: string;
  first_name?: string;
  last_name?: string;
  phone?: string | null;
  is_admin?: boolean;
  is_active?: boolean;
}

export class DuplicateUserError extends Error {
  constructor(readonly field: 'username' | 'email') {
    super(`A user with this ${field} already exists.`);
    this.name = 'DuplicateUserError';
  }
}

/** Addresses are compared and stored trimmed and lower-cased: one mailbox, one account. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function usernameKey(username: string): string {
  return username.trim().toLowerCase();
}

export class UserDirectory {
  constructor(
    private readonly models: AccountModels,
    private readonly passwordHashCost: number,
    /** Told when a user is deactivated, so that their cached keys stop working at once (key-cache.ts). */
    private readonly keyCache?: KeyCache,
  ) {}

  async create(user: NewUser): Promise<UserRow> {
    const { password, ...rest } = user;
    return this.createWithHash({ ...rest, passwordHash: await hashPassword(password, this.passwordHashCost) });
  }

  /** Creates a user whose password was hashed before (a confirmed sign-up's). */
  async createWithHash(user: Omit<NewUser, 'password'> & { passwordHash: string }): Promise<UserRow> {
    if (!USERNAME_PATTERN.test(user.username)) throw new Error(`Invalid username "${user.username}": ${USERNAME_PATTERN}`);
    const email = normaliseEmail(user.email);
    if (await this.models.User.count({ where: { email } })) throw new DuplicateUserError('email');
    try {
      const row = await this.models.User.create({
        username: user.username,
        username_key: usernameKey(user.username),
        email,
        first_name: user.first_name ?? '',
        last_name: user.last_name ?? '',
        phone: user.phone ?? null,
        password_hash: user.passwordHash,
        is_admin: user.is_admin ?? false,
        is_active: user.is_active ?? true,
        date_joined: new Date(),
        last_login: null,
        deleted_at: null,
      });
      return row.get({ plain: true });
    } catch (error) {
      if (error instanceof UniqueConstraintError) {
        throw new DuplicateUserError(error.fields && 'email' in error.fields ? 'email' : 'username');
      }
      throw error;
    }
  }

  async byId(id: number): Promise<UserRow | undefined> {
    return ((await this.models.User.findByPk(id, { raw: true })) as UserRow | null) ?? undefined;
  }

  /** The users with these ids that exist, in one query. */
  async byIds(ids: number[]): Promise<UserRow[]> {
    if (ids.length === 0) return [];
    return (await this.models.User.findAll({ where: { id: { [Op.in]: ids } }, raw: true })) as unknown as UserRow[];
  }

  /**
   * User `id` if `viewer` may see their profile: their own, any for an admin, else a teammate's (a team
   * shared with the viewer). One Reader query, the visibility check joined with the read (issue 20).
   */
  async visibleTo(viewer: { id: number; isAdmin: boolean }, id: number): Promise<UserRow | undefined> {
    const reader = readerOf(this.models.User.sequelize!);
    const row =
      viewer.isAdmin || viewer.id === id
        ? await reader.row<UserRow>(`SELECT ${USER_COLUMNS} FROM users u WHERE u.id = ?`, [id])
        : await reader.row<UserRow>(
            `SELECT ${USER_COLUMNS} FROM users u
             WHERE u.id = ? AND EXISTS (
               SELECT 1 FROM entity_members mine JOIN entity_members theirs ON theirs.entity_id = mine.entity_id
               WHERE mine.user_id = ? AND theirs.user_id = u.id)`,
            [id, viewer.id],
          );
    return row && userOf(row);
  }

  async byEmail(email: string): Promise<UserRow | undefined> {
    return ((await this.models.User.findOne({ where: { email: normaliseEmail(email) }, raw: true })) as UserRow | null) ?? undefined;
  }

  /** A login name is an e-mail address when it has an `@` (usernames cannot), otherwise a username. */
  async byLoginName(name: string): Promise<UserRow | undefined> {
    if (name.includes('@')) return this.byEmail(name);
    return ((await this.models.User.findOne({ where: { username_key: usernameKey(name) }, raw: true })) as UserRow | null) ?? undefined;
  }

  async isEmailTaken(email: string): Promise<boolean> {
    return (await this.models.User.count({ where: { email: normaliseEmail(email) } })) > 0;
  }

  async count(): Promise<number> {
    return this.models.User.count();
  }

  /** One page of users ordered by id, and the total. */
  async page(page: number, pageSize: number): Promise<{ total: number; rows: UserRow[] }> {
    const { count, rows } = await this.models.User.findAndCountAll({ order: [['id', 'ASC']], limit: pageSize, offset: (page - 1) * pageSize, raw: true });
    return { total: count, rows: rows as unknown as UserRow[] };
  }

  async admins(): Promise<UserRow[]> {
    return (await this.models.User.findAll({ where: { is_admin: true, is_active: true }, order: [['id', 'ASC']], raw: true })) as unknown as UserRow[];
  }

  /** Changes the user's own profile fields (profile.ts checked them); the row as it now is. */
  async updateProfile(id: number, changes: ProfileChanges): Promise<UserRow | undefined> {
    if (Object.keys(changes).length > 0) await this.models.User.update(changes, { where: { id } });
    return this.byId(id);
  }

  /** Stores a hash made elsewhere (a stronger one of the same password, after a login). */
  async setPasswordHash(id: number, passwordHash: string): Promise<void> {
    await this.models.User.update({ password_hash: passwordHash }, { where: { id } });
  }

  /**
   * Stores a stronger hash of the same password, unless the hash changed since it was read: a password
   * changed or reset meanwhile wins over the re-hash of the old one. One UPDATE, so concurrent re-hashes
   * of one password are harmless (the last one stays, and either verifies).
   */
  async upgradePasswordHash(id: number, verifiedHash: string, strongerHash: string): Promise<boolean> {
    const [changed] = await this.models.User.update({ password_hash: strongerHash }, { where: { id, password_hash: verifiedHash } });
    return changed > 0;
  }

  async recordLogin(id: number, at: Date): Promise<void> {
    await this.models.User.update({ last_login: at }, { where: { id } });
  }

  async setActive(id: number, active: boolean): Promise<void> {
    await this.models.User.update({ is_active: active }, { where: { id } });
    if (!active) await this.keyCache?.revoke({ userId: id });
  }
}

const USER_COLUMNS = 'u.id, u.username, u.username_key, u.email, u.first_name, u.last_name, u.phone, u.password_hash, u.is_admin, u.is_active, u.date_joined, u.last_login, u.deleted_at, u.contact_visible_to_team';

/** A users row as a Reader gives it, with the Dates and booleans Sequelize's raw rows had. */
function userOf(row: UserRow): UserRow {
  return {
    ...row,
    is_admin: asBoolean(row.is_admin),
    is_active: asBoolean(row.is_active),
    date_joined: asDate(row.date_joined),
    last_login: row.last_login === null ? null : asDate(row.last_login),
    deleted_at: row.deleted_at === null || row.deleted_at === undefined ? null : asDate(row.deleted_at),
    contact_visible_to_team: asBoolean(row.contact_visible_to_team ?? false),
  };
}

/** What a user looks like outside the server. */
export function publicUser(row: UserRow): PublicUser {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    phone: row.phone,
    is_admin: Boolean(row.is_admin),
    is_active: Boolean(row.is_active),
    date_joined: new Date(row.date_joined).toISOString(),
    last_login: row.last_login ? new Date(row.last_login).toISOString() : null,
    deleted_at: row.deleted_at ? new Date(row.deleted_at).toISOString() : null,
    contact_visible_to_team: Boolean(row.contact_visible_to_team),
  };
}

/** Who reads a profile: the user themself and platform admins see it whole. */
export interface ProfileReader {
  id: number;
  is_admin: boolean;
}

/** Whether `reader` may see the contact (e-mail, phone) of `user`: their own, a platform admin, or shared with teammates. */
export function seesContactOf(reader: ProfileReader, user: Pick<UserRow, 'id' | 'contact_visible_to_team'>): boolean {
  return reader.id === user.id || Boolean(reader.is_admin) || Boolean(user.contact_visible_to_team);
}

/**
 * A profile as `reader` may see it (the contract's UserAsSeen): whole to the user and platform admins; to
 * a teammate without the e-mail and phone unless shared, and without the last login.
 */
export function profileAsSeenBy(reader: ProfileReader, row: UserRow): ProfileAsSeen {
  const whole = publicUser(row);
  if (reader.id === row.id || reader.is_admin) return whole;
  const shared = seesContactOf(reader, row);
  return { ...whole, email: shared ? whole.email : null, phone: shared ? whole.phone : null, last_login: null };
}

/** A deleted account's username starts with this (account-deletion.ts). */
export const PSEUDONYM_PREFIX = 'excluido-';

/** How people see a user: their name, else their username; a deleted account as "Conta excluída 4f2a09bc". */
export function displayName(row: Pick<UserRow, 'first_name' | 'last_name' | 'username'> & { deleted_at?: unknown }): string {
  if (row.deleted_at) return `Conta excluída ${row.username.startsWith(PSEUDONYM_PREFIX) ? row.username.slice(PSEUDONYM_PREFIX.length) : row.username}`;
  return `${row.first_name} ${row.last_name}`.trim() || row.username;
}
