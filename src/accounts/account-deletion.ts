/**
 * A user deletes their own account (`deleteMyAccount`; LGPD art. 18, VI). What holds once the answer is sent:
 * - the current password was checked as a login checks it (through the login lock), so a stolen key
 *   alone cannot delete an account; and the body said `confirm: "DELETE"` (the contract checks it);
 * - the steps below ran in ONE transaction: all of them happened, or (a 409, a crash) none did;
 * - the users row stays, with the same id, under a pseudonym (`excluido-<8 hex>`, shown as "Conta
 *   excluída <8 hex>"): the audit log, the authors of entities, monitors, scenarios and campaigns keep
 *   pointing at it. Its personal fields are erased, its e-mail address is freed (a placeholder under
 *   the reserved `.invalid` domain takes its place, so the same address can sign up again), its
 *   password hash is one no password matches, it is inactive and `deleted_at` says when;
 * - every key of the account is revoked, and after the commit every instance's key cache is told
 *   (the path changePassword uses), so the old key is refused everywhere;
 * - the `account_deleted` audit event is written after the commit, with counts only.
 *
 * An entity the user owns: when its team has another admin, the longest-standing one (earliest
 * `added_at`) becomes its owner; when its team has other members but no admin, the deletion is refused
 * (409 `no_successor`, naming the entities) before anything changed; when the user is alone in its
 * team, the entity goes with everything that hangs off it.
 *
 * Each table that names a user, and what happens to its rows (data-export.ts maps the same tables):
 * - erased, as purely the user's own data or pending requests: api_tokens (revoked now; purged with
 *   the other dead keys later), login_devices (the device and unlock tokens), password_reset_tokens, pending_email_changes, pending_signups of the
 *   address, login_failures of the username and the address, oauth_states, oauth_pending_links,
 *   social_logins (with the provider tokens), research_bookmarks (private to their owner),
 *   entity_members (the user leaves every team), entity_member_counts, guardianship_links created by
 *   the user (a link stands only while its creator's memberships do: guardianship.ts), team_invitations
 *   addressed to the user's address (the ones they sent stay, `invited_by` naming the pseudonym);
 * - kept under the pseudonym, as records of the teams' or the platform's work rather than the user's
 *   personal data: edit_history.actor_id, entities.owner_id (handed over, or the entity deleted, as above), entities.updated_by,
 *   social_monitors.created_by, scenario_requests.requested_by and decided_by, sms_credentials.created_by,
 *   sms_campaigns.created_by, news_sources.requested_by, elections_panel_syncs.user_id,
 *   socialnet_removals.user_id (the proof a removal request was honoured), audit_events (their details
 *   scrubbed of e-mail addresses).
 *
 * A new table that names a user adds a step to DELETION_STEPS: a name and what it does inside the transaction.
 */
import { randomBytes } from 'node:crypto';
import { Op, QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { ApiError } from '../http/errors.js';
import type { AuditLog } from './audit-log.js';
import type { KeyCache } from './key-cache.js';
import { lockSubjects } from './login-lock.js';
import type { AccountModels, AuditEventRow, UserRow } from './models.js';
import { checkCurrentPassword } from './password-change.js';
import type { Sessions } from './sessions.js';
import { PSEUDONYM_PREFIX } from './users.js';

/** The domain of a deleted account's placeholder address: reserved (RFC 2606), so it never delivers. */
const PLACEHOLDER_DOMAIN = 'excluido.invalid';
/** A hash no password matches (verifyPassword knows only `$argon2id$` and `$scrypt$`). */
const UNUSABLE_PASSWORD_HASH = '!account-deleted';

/** What the steps share: the account, its pseudonym, the transaction, and what they report. */
export interface DeletionContext {
  readonly user: UserRow;
  readonly pseudonym: string;
  readonly now: Date;
  readonly transaction: Transaction;
  readonly sequelize: Sequelize;
  readonly models: AccountModels;
  readonly outcome: DeletionOutcome;
}

export interface DeletionOutcome {
  keysRevoked: number;
  teamsLeft: number;
  /** Entities the user owned that another admin of their team now owns. */
  entitiesHandedOver: number[];
  /** Entities the user owned alone, deleted with what hangs off them. */
  entitiesDeleted: number[];
}

export interface DeletionStep {
  name: string;
  run(context: DeletionContext): Promise<void>;
}

/** Runs one statement in the step's transaction; `?` takes the values in order. */
async function execute(context: DeletionContext, sql: string, values: unknown[]): Promise<void> {
  await context.sequelize.query(sql, { replacements: values, transaction: context.transaction });
}

async function select<Row extends object>(context: DeletionContext, sql: string, values: unknown[]): Promise<Row[]> {
  return context.sequelize.query<Row>(sql, { replacements: values, transaction: context.transaction, type: QueryTypes.SELECT });
}

/** `IN (?, ?, ...)` for a non-empty list. */
const placeholders = (values: unknown[]) => values.map(() => '?').join(', ');

/**
 * The owned entities first: the only step that can refuse (409), so it runs before anything changes.
 * A solo entity's SMS credentials and opt-outs are deleted explicitly (their entity_id is ON DELETE SET
 * NULL, which would leave sealed secrets nobody can use and widen opt-outs to another scope); everything
 * else that hangs off an entity goes by its ON DELETE CASCADE (members, social references, market
 * shares, guardianship links, monitors with their profiles, keywords, snapshots and scenarios).
 */
const ownedEntities: DeletionStep = {
  name: 'owned_entities',
  async run(context) {
    const owned = await select<{ id: number }>(context, 'SELECT id FROM entities WHERE owner_id = ? ORDER BY id', [context.user.id]);
    if (owned.length === 0) return;
    const ids = owned.map((row) => row.id);
    const others = await select<{ entity_id: number; user_id: number; role: string }>(
      context,
      `SELECT entity_id, user_id, role FROM entity_members WHERE entity_id IN (${placeholders(ids)}) AND user_id <> ? ORDER BY added_at, id`,
      [...ids, context.user.id],
    );
    const successors = new Map<number, number>();
    const withoutAdmin = new Set<number>();
    for (const id of ids) {
      const team = others.filter((member) => member.entity_id === id);
      const admin = team.find((member) => member.role === 'admin'); // the longest-standing: ordered by added_at
      if (admin) successors.set(id, admin.user_id);
      else if (team.length > 0) withoutAdmin.add(id);
    }
    if (withoutAdmin.size > 0) throw noSuccessor([...withoutAdmin]);
    for (const [entityId, successor] of successors) {
      await execute(context, 'UPDATE entities SET owner_id = ? WHERE id = ?', [successor, entityId]);
      await execute(context, "UPDATE entity_members SET role = 'owner' WHERE entity_id = ? AND user_id = ?", [entityId, successor]);
      context.outcome.entitiesHandedOver.push(entityId);
    }
    const solo = ids.filter((id) => !successors.has(id));
    if (solo.length === 0) return;
    await execute(context, `DELETE FROM sms_opt_outs WHERE entity_id IN (${placeholders(solo)})`, solo);
    await execute(context, `DELETE FROM sms_credentials WHERE entity_id IN (${placeholders(solo)})`, solo); // campaigns and messages cascade
    await execute(context, `DELETE FROM entities WHERE id IN (${placeholders(solo)})`, solo);
    context.outcome.entitiesDeleted.push(...solo);
  },
};

/** The user leaves every team; the guardianship links they created go with their memberships (guardianship.ts). */
const memberships: DeletionStep = {
  name: 'memberships',
  async run(context) {
    const [counted] = await select<{ total: number | string }>(context, 'SELECT COUNT(*) AS total FROM entity_members WHERE user_id = ?', [context.user.id]);
    // The teams of the entities deleted before were left with them.
    context.outcome.teamsLeft = Number(counted?.total ?? 0) + context.outcome.entitiesDeleted.length;
    await execute(context, 'DELETE FROM guardianship_links WHERE created_by = ?', [context.user.id]);
    await execute(context, 'DELETE FROM entity_members WHERE user_id = ?', [context.user.id]); // the triggers count them out
    await execute(context, 'DELETE FROM entity_member_counts WHERE user_id = ?', [context.user.id]);
  },
};

/** Every live key revoked (the key caches are told after the commit, by AccountDeletions), every device and unlock token deleted. */
const keys: DeletionStep = {
  name: 'keys',
  async run({ user, now, transaction, models, outcome }) {
    const [revoked] = await models.ApiToken.update({ revoked_at: now }, { where: { user_id: user.id, revoked_at: null }, transaction });
    outcome.keysRevoked = revoked;
    await models.LoginDevice.destroy({ where: { user_id: user.id }, transaction });
  },
};

/** Requests still waiting for the user, and the login lock's counts of their names. */
const pendingRequests: DeletionStep = {
  name: 'pending_requests',
  async run(context) {
    const { user } = context;
    for (const table of ['password_reset_tokens', 'pending_email_changes', 'oauth_states', 'oauth_pending_links']) {
      await execute(context, `DELETE FROM ${table} WHERE user_id = ?`, [user.id]);
    }
    await execute(context, 'DELETE FROM pending_signups WHERE email = ?', [user.email]);
    for (const name of [user.username, user.email]) {
      await execute(context, 'DELETE FROM login_failures WHERE subject LIKE ? OR subject = ?', [`${lockSubjects.identifierFromAddress(name, '')}%`, lockSubjects.identifier(name)]);
    }
  },
};

/**
 * The invitations to teams addressed to the user's address, in any state: the address is theirs, and
 * an open one would otherwise admit a sign-up of it. The ones they sent stay (`invited_by` names the pseudonym).
 */
const invitationsReceived: DeletionStep = {
  name: 'invitations_received',
  async run(context) {
    await execute(context, 'DELETE FROM team_invitations WHERE email = ?', [context.user.email]);
  },
};

/** Purely the user's own: the linked accounts at OAuth providers (with their tokens), the private bookmarks, notifications and push devices. */
const personalRecords: DeletionStep = {
  name: 'personal_records',
  async run(context) {
    for (const table of ['social_logins', 'research_bookmarks', 'notifications', 'push_subscriptions']) {
      await execute(context, `DELETE FROM ${table} WHERE user_id = ?`, [context.user.id]);
    }
  },
};

/** E-mail addresses in the details of the events done by or about the user become "[removido]". */
const auditDetails: DeletionStep = {
  name: 'audit_details',
  async run(context) {
    const { user, models, transaction } = context;
    const rows = (await models.AuditEvent.findAll({
      attributes: ['id', 'details'],
      where: { [Op.or]: [{ user_id: user.id }, { actor_id: user.id }], details: { [Op.like]: '%@%' } },
      transaction,
      raw: true,
    })) as unknown as Array<Pick<AuditEventRow, 'id' | 'details'>>;
    for (const row of rows) {
      const scrubbed = row.details!.replace(EMAIL_ADDRESS, '[removido]');
      if (scrubbed !== row.details) await models.AuditEvent.update({ details: scrubbed }, { where: { id: row.id }, transaction });
    }
  },
};

/** Something@domain inside JSON text (a value's quotes end it). */
const EMAIL_ADDRESS = /[^\s"@\\]+@[^\s"@\\]+\.[^\s"@\\]+/g;

/** Last, the row itself: the pseudonym, the personal fields erased, inactive, deleted now. */
const profile: DeletionStep = {
  name: 'profile',
  async run({ user, pseudonym, now, transaction, models }) {
    await models.User.update(
      {
        username: pseudonym,
        username_key: pseudonym,
        email: `${pseudonym}@${PLACEHOLDER_DOMAIN}`,
        first_name: '',
        last_name: '',
        phone: null,
        password_hash: UNUSABLE_PASSWORD_HASH,
        is_active: false,
        is_admin: false,
        contact_visible_to_team: false, // a preference about the erased address
        deleted_at: now,
      },
      { where: { id: user.id }, transaction },
    );
  },
};

/** In order; `owned_entities` first (it alone may refuse), `profile` last. */
export const DELETION_STEPS: readonly DeletionStep[] = [ownedEntities, memberships, keys, pendingRequests, invitationsReceived, personalRecords, auditDetails, profile];

export interface AccountDeletionRequest {
  /** The stored row of the caller. */
  caller: UserRow;
  currentPassword: string;
  address: string;
}

export interface DeletedAccount extends DeletionOutcome {
  pseudonym: string;
  deletedAt: Date;
}

export class AccountDeletions {
  constructor(
    private readonly models: AccountModels,
    private readonly sessions: Pick<Sessions, 'confirm'>,
    private readonly keyCache?: KeyCache,
    private readonly audit?: AuditLog,
    private readonly steps: readonly DeletionStep[] = DELETION_STEPS,
  ) {}

  async delete({ caller, currentPassword, address }: AccountDeletionRequest, now = new Date()): Promise<DeletedAccount> {
    await checkCurrentPassword(this.sessions, caller, currentPassword, address);
    const sequelize = this.models.User.sequelize!;
    const outcome: DeletionOutcome = { keysRevoked: 0, teamsLeft: 0, entitiesHandedOver: [], entitiesDeleted: [] };
    const pseudonym = await sequelize.transaction(async (transaction) => {
      const chosen = await this.freePseudonym(transaction);
      const context: DeletionContext = { user: caller, pseudonym: chosen, now, transaction, sequelize, models: this.models, outcome };
      for (const step of this.steps) await step.run(context);
      return chosen;
    });
    // After the commit: an instance that looked the key up meanwhile saw it live, and must drop it.
    await this.keyCache?.revoke({ userId: caller.id });
    const details = {
      keys_revoked: outcome.keysRevoked,
      teams_left: outcome.teamsLeft,
      entities_handed_over: outcome.entitiesHandedOver.length,
      entities_deleted: outcome.entitiesDeleted.length,
    };
    await this.audit?.record({ event: 'account_deleted', actorId: caller.id, userId: caller.id, address, details }, now);
    return { ...outcome, pseudonym, deletedAt: now };
  }

  /** A pseudonym no account has (a live user may have chosen a name that looks like one). */
  private async freePseudonym(transaction: Transaction): Promise<string> {
    for (;;) {
      const candidate = PSEUDONYM_PREFIX + randomBytes(4).toString('hex');
      if ((await this.models.User.count({ where: { username_key: candidate }, transaction })) === 0) return candidate;
    }
  }
}

/** 409 naming the owned entities whose teams have members but no admin to take them over. */
function noSuccessor(entityIds: number[]): ApiError {
  const list = entityIds.join(', ');
  return new ApiError(409, 'conflict', `You own entities whose teams have other members but no admin to take them over (${list}): make a member admin first, or remove the members.`, [
    // Not a field of the request: the owned entities (exportMyData's `entities_owned`) that block it.
    { field: 'entities_owned', rule: 'no_successor', message: 'have other members but no admin to become their owner: make a member admin first', value: entityIds },
  ]);
}
