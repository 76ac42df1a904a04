/**
 * Team invitations (issue 21): `addOperator` invites an address to a team with a role, and the person
 * joins only by accepting.
 *
 * What holds:
 * - Nobody is put into a team without consent: a membership comes from `accept`, by the user whose
 *   address the invitation names (or from creating the entity, for its owner).
 * - Inviting answers the same whether the address has an account or not, after the same work: the
 *   only lookup before the answer (is the address already in this team?) is one query either way, and
 *   the mail (a note to log in, or a sign-up link) is written after the answer.
 * - An invitation is open while `pending` and unexpired; an entity has at most `maxOpenPerEntity` open
 *   ones, and an address at most one per entity. The checks and the insert run under a lock on the
 *   entity, so parallel invitations cannot overshoot.
 * - Answers are single transitions: an UPDATE on a pending, unexpired row decides between an accept,
 *   a decline and a withdrawal racing each other; exactly one wins.
 * - The mailed token is stored hashed; it admits a sign-up of the invited address under SIGNUP=invite
 *   (the InvitationGate of src/accounts/signup.ts) while the invitation is open.
 */
import { Op, QueryTypes, UniqueConstraintError, type Sequelize, type Transaction } from 'sequelize';
import type { AuditLog } from '../accounts/audit-log.js';
import type { UserRow } from '../accounts/models.js';
import { newSecret, secretHash } from '../accounts/secrets.js';
import type { InvitationGate } from '../accounts/signup.js';
import { displayName, normaliseEmail } from '../accounts/users.js';
import { withLocks } from '../db/locks.js';
import { asDate, asIsoTimestamp, readerOf } from '../db/reader.js';
import { ApiError, notFound } from '../http/errors.js';
import type { Logger } from '../logger.js';
import type { Mailer } from '../mail/mailer.js';
import type { EntityModels, EntityRow, InvitationRow, MemberRow, TeamRole } from './models.js';
import type { EditHistory, FieldChange } from './history.js';
import { MEMBER_ROLE_BY_ADDRESS_SQL } from './teams.js';
import { runAfterAnswer } from '../http/after-answer.js';

export type InvitationState = 'pending' | 'accepted' | 'declined' | 'withdrawn' | 'expired';

export interface InvitationSettings {
  /** How long an invitation stays open (INVITATION_LIFETIME_DAYS). */
  lifetimeMs: number;
  /** How many open invitations an entity may have at once (TEAM_MAX_OPEN_INVITATIONS). */
  maxOpenPerEntity: number;
}

export const DEFAULT_INVITATION_SETTINGS: InvitationSettings = { lifetimeMs: 7 * 86_400_000, maxOpenPerEntity: 20 };

/** How long an invitation is kept after it expired (whether it was answered or not): 90 days. */
export const INVITATIONS_KEPT_AFTER_EXPIRY_MS = 90 * 86_400_000;

/** Where an invitation's mail sends a person without an account. */
export interface InvitationLinks {
  signUpUrl(token: string, email: string): string;
}

/** An invitation as the contract's Invitation. */
export interface InvitationView {
  id: number;
  entity_id: number;
  entity_name: string;
  email: string;
  role: TeamRole;
  state: InvitationState;
  invited_by: { id: number; display_name: string } | null;
  created_at: string;
  expires_at: string;
  answered_at: string | null;
}

/** Who answers: the user, whose current address must be the invited one. */
type Invitee = Pick<UserRow, 'id' | 'email'>;

export class TeamInvitations implements InvitationGate {
  private readonly invitedListeners: Array<(invitation: InvitationRow, entityName: string, inviter: UserRow) => Promise<void>> = [];

  constructor(
    private readonly models: EntityModels,
    private readonly mailer: Mailer,
    private readonly logger: Logger,
    private readonly settings: InvitationSettings,
    private readonly history: EditHistory,
    private readonly audit?: AuditLog,
  ) {}

  get maxOpenPerEntity(): number {
    return this.settings.maxOpenPerEntity;
  }

  /**
   * Invites `email` to the team of `entity` with `role`. `created` is false when an open invitation of
   * this address with this role was there already (a retry: nothing is sent again). 409 when the address
   * is in the team, has an open invitation with another role, or the entity has its maximum open.
   */
  async invite(entity: Pick<EntityRow, 'id' | 'nome'>, email: string, role: TeamRole, inviter: UserRow, links: InvitationLinks): Promise<{ invitation: InvitationView; created: boolean }> {
    const address = normaliseEmail(email);
    const outcome = await withLocks(this.sequelize(), [`team-invitations:${entity.id}`], async (transaction) => {
      await this.refuseMember(entity.id, address, transaction);
      const open = await this.openInvitationOf(entity.id, address, transaction);
      if (open) return this.sameOrConflict(open, role);
      await this.refuseOverLimit(entity.id, transaction);
      const token = newSecret('');
      const row = await this.insert({ entity_id: entity.id, email: address, role, invited_by: inviter.id, token_hash: secretHash(token) }, transaction);
      // The team's history names the invitation, not the address (listTeamInvitations shows that to the managers).
      await this.history.record({ entityId: entity.id, subject: 'team', action: 'invited', actorId: inviter.id, changes: invitationChanges(row) }, transaction);
      return { row, token };
    });
    if (!('token' in outcome)) return { invitation: await this.view(outcome.row), created: false };
    const { row, token } = outcome;
    const entityName = entity.nome ?? `entity ${entity.id}`;
    await this.audit?.record({ event: 'invitation_sent', actorId: inviter.id, details: { entity_id: entity.id, invitation_id: row.id, role } });
    runAfterAnswer(this.logger, 'could not mail an invitation', () => this.mailInvitation(row, entityName, inviter, token, links));
    for (const listener of this.invitedListeners) runAfterAnswer(this.logger, 'could not announce an invitation', () => listener(row, entityName, inviter));
    return { invitation: viewOf(row, entityName, inviter), created: true };
  }

  /** Calls `listener` after the answer with each new invitation (the invited account, if there is one, is notified). */
  onInvited(listener: (invitation: InvitationRow, entityName: string, inviter: UserRow) => Promise<void>): void {
    this.invitedListeners.push(listener);
  }

  /** The open invitation of an address to a team, if any (for checkOperatorEmail). */
  async openFor(entityId: number, email: string): Promise<InvitationRow | undefined> {
    return this.openInvitationOf(entityId, normaliseEmail(email));
  }

  /** How many invitations of the entity are open now. */
  async openCount(entityId: number, transaction?: Transaction): Promise<number> {
    return this.models.Invitation.count({ where: { entity_id: entityId, state: 'pending', expires_at: { [Op.gt]: new Date() } }, transaction });
  }

  /** The entity's invitations, newest first, optionally in one state; with the total for paging. */
  async ofEntity(entityId: number, state: InvitationState | undefined, page: number, pageSize: number): Promise<{ total: number; views: InvitationView[] }> {
    const filter = stateFilter(state);
    const where = `i.entity_id = ?${filter.sql}`;
    const params = [entityId, ...filter.params];
    const total = Number((await this.reader().row<{ n: unknown }>(`SELECT COUNT(*) AS n FROM team_invitations i WHERE ${where}`, params))?.n ?? 0);
    const rows = await this.reader().rows<ListedRow>(`${LIST_SQL} WHERE ${where} ORDER BY i.id DESC LIMIT ? OFFSET ?`, [...params, pageSize, (page - 1) * pageSize]);
    return { total, views: rows.map(listedView) };
  }

  /** The open invitations to the user's address, oldest first. */
  async openForUser(user: Invitee): Promise<InvitationView[]> {
    const open = stateFilter('pending');
    const rows = await this.reader().rows<ListedRow>(`${LIST_SQL} WHERE i.email = ?${open.sql} ORDER BY i.id`, [normaliseEmail(user.email), ...open.params]);
    return rows.map(listedView);
  }

  /**
   * The invitee joins the team with the invitation's role; returns the membership. A repeated accept
   * of one's own accepted invitation answers the membership again (a safe retry).
   */
  async accept(invitationId: number, invitee: Invitee): Promise<{ membership: MemberRow; invitation: InvitationRow; repeated: boolean }> {
    const invitation = await this.addressedTo(invitationId, invitee);
    if (invitation.state === 'accepted' && invitation.answered_by === invitee.id) {
      const membership = await this.models.Member.findOne({ where: { entity_id: invitation.entity_id, user_id: invitee.id }, raw: true });
      if (membership) return { membership: membership as unknown as MemberRow, invitation, repeated: true };
    }
    const membership = await this.sequelize().transaction(async (transaction) => {
      await this.answer(invitation, 'accepted', invitee.id, transaction);
      const joined = await this.join(invitation, invitee.id, transaction);
      await this.history.record({ entityId: invitation.entity_id, subject: 'team', subjectId: invitee.id, action: 'member_added', actorId: invitee.id, changes: invitationChanges(invitation) }, transaction);
      return joined;
    });
    await this.audit?.record({ event: 'invitation_accepted', actorId: invitee.id, userId: invitee.id, details: { entity_id: invitation.entity_id, invitation_id: invitation.id, role: invitation.role } });
    const details = { entity_id: invitation.entity_id, role: invitation.role, invitation_id: invitation.id, ...(invitation.invited_by === null ? {} : { invited_by: invitation.invited_by }) };
    await this.audit?.record({ event: 'team_member_added', actorId: invitee.id, userId: invitee.id, details });
    return { membership, invitation: { ...invitation, state: 'accepted', answered_by: invitee.id }, repeated: false };
  }

  /** The invitee says no; a repeated decline answers the same. */
  async decline(invitationId: number, invitee: Invitee): Promise<InvitationRow> {
    const invitation = await this.addressedTo(invitationId, invitee);
    if (invitation.state === 'declined') return invitation;
    const answered = await this.answer(invitation, 'declined', invitee.id);
    await this.history.record({ entityId: invitation.entity_id, subject: 'team', subjectId: invitee.id, action: 'invitation_declined', actorId: invitee.id, changes: invitationChanges(invitation) });
    await this.audit?.record({ event: 'invitation_declined', actorId: invitee.id, userId: invitee.id, details: { entity_id: invitation.entity_id, invitation_id: invitation.id } });
    return answered;
  }

  /** The invitation of entity `entityId` with this id (404 otherwise), for its team's managers. */
  async ofEntityById(entityId: number, invitationId: number): Promise<InvitationRow> {
    const row = Number.isSafeInteger(invitationId) ? await this.models.Invitation.findOne({ where: { id: invitationId, entity_id: entityId }, raw: true }) : null;
    if (!row) throw unknownInvitation(`There is no invitation ${invitationId} of this entity.`, invitationId, 'must be an invitation of this entity');
    return row as unknown as InvitationRow;
  }

  /** A team manager takes an open invitation back; a repeated withdrawal answers the same. */
  async withdraw(invitation: InvitationRow, by: number): Promise<InvitationRow> {
    if (invitation.state === 'withdrawn') return invitation;
    const answered = await this.answer(invitation, 'withdrawn', by);
    await this.history.record({ entityId: invitation.entity_id, subject: 'team', action: 'invitation_withdrawn', actorId: by, changes: invitationChanges(invitation) });
    await this.audit?.record({ event: 'invitation_withdrawn', actorId: by, details: { entity_id: invitation.entity_id, invitation_id: invitation.id } });
    return answered;
  }

  /** An invitation with the entity's name and its sender, as the contract shows it. */
  async view(invitation: InvitationRow): Promise<InvitationView> {
    const row = await this.reader().row<ListedRow>(`${LIST_SQL} WHERE i.id = ?`, [invitation.id]);
    return listedView(row!);
  }

  /** InvitationGate: whether `token` is an open invitation to `email`, which then may sign up. */
  async admits(token: string, email: string): Promise<boolean> {
    const now = new Date();
    const found = await this.models.Invitation.count({ where: { token_hash: secretHash(token), email: normaliseEmail(email), state: 'pending', expires_at: { [Op.gt]: now } } });
    return found > 0;
  }

  /**
   * Housekeeping: deletes invitations that expired more than INVITATIONS_KEPT_AFTER_EXPIRY_MS ago, answered
   * or not. What happened to the team stays in its edit history; the invitation row (an address that may
   * belong to no account) is not kept longer than managers need to see why someone did not join.
   */
  async purgeExpired(now = new Date()): Promise<number> {
    return this.models.Invitation.destroy({ where: { expires_at: { [Op.lte]: new Date(now.getTime() - INVITATIONS_KEPT_AFTER_EXPIRY_MS) } } });
  }

  private async refuseMember(entityId: number, email: string, transaction?: Transaction): Promise<void> {
    // One query whether or not the address has an account: the timing tells nothing about it. In the
    // lock's transaction (not the reader's connection), to see what the invite itself will see.
    const [member] = await this.sequelize().query<{ role: TeamRole }>(MEMBER_ROLE_BY_ADDRESS_SQL, { replacements: [entityId, email], type: QueryTypes.SELECT, transaction });
    if (member) {
      throw new ApiError(409, 'conflict', `This address is already ${member.role} of this team.`, [
        { location: 'body', field: 'email', rule: 'not_in_team', message: `is already ${member.role} of this team`, value: email },
      ]);
    }
  }

  private async openInvitationOf(entityId: number, email: string, transaction?: Transaction): Promise<InvitationRow | undefined> {
    const row = await this.models.Invitation.findOne({ where: { entity_id: entityId, email, state: 'pending', expires_at: { [Op.gt]: new Date() } }, raw: true, transaction });
    return (row as unknown as InvitationRow | null) ?? undefined;
  }

  private sameOrConflict(open: InvitationRow, role: TeamRole): { row: InvitationRow } {
    if (open.role === role) return { row: open };
    throw new ApiError(409, 'conflict', `This address already has an open invitation to this team as ${open.role}; withdraw it first to invite with another role.`, [
      { location: 'body', field: 'email', rule: 'no_open_invitation', message: `has open invitation ${open.id} as ${open.role}`, value: open.email },
    ]);
  }

  private async refuseOverLimit(entityId: number, transaction?: Transaction): Promise<void> {
    const open = await this.openCount(entityId, transaction);
    if (open >= this.settings.maxOpenPerEntity) {
      throw new ApiError(409, 'conflict', `This entity has ${open} open invitations, the most it may have; withdraw one or wait for answers.`, [
        { location: 'body', field: 'entity_id', rule: 'max_open_invitations', message: `may have at most ${this.settings.maxOpenPerEntity} open invitations`, value: entityId },
      ]);
    }
  }

  private async insert(fields: Pick<InvitationRow, 'entity_id' | 'email' | 'role' | 'invited_by' | 'token_hash'>, transaction?: Transaction): Promise<InvitationRow> {
    const now = new Date();
    const expiresAt = new Date(now.getTime() + this.settings.lifetimeMs);
    const row = await this.models.Invitation.create({ ...fields, state: 'pending', created_at: now, expires_at: expiresAt, answered_at: null, answered_by: null }, { transaction });
    return row.get({ plain: true });
  }

  /** The invitation `invitationId` if it names the user's address; 404 otherwise (others' invitations are not revealed). */
  private async addressedTo(invitationId: number, invitee: Invitee): Promise<InvitationRow> {
    const row = Number.isSafeInteger(invitationId) ? await this.models.Invitation.findOne({ where: { id: invitationId, email: normaliseEmail(invitee.email) }, raw: true }) : null;
    if (!row) throw unknownInvitation(`There is no invitation ${invitationId} to your address.`, invitationId, 'must be an invitation to your e-mail address');
    return row as unknown as InvitationRow;
  }

  /** Moves a pending, unexpired invitation to `state`; 409 naming its state when it is not open (any more). */
  private async answer(invitation: InvitationRow, state: 'accepted' | 'declined' | 'withdrawn', by: number, transaction?: Transaction): Promise<InvitationRow> {
    const now = new Date();
    const [changed] = await this.models.Invitation.update(
      { state, answered_at: now, answered_by: by },
      { where: { id: invitation.id, state: 'pending', expires_at: { [Op.gt]: now } }, transaction },
    );
    if (changed === 0) {
      const current = (await this.models.Invitation.findOne({ where: { id: invitation.id }, raw: true, transaction })) as unknown as InvitationRow;
      throw closedInvitation(current, now);
    }
    return { ...invitation, state, answered_at: now, answered_by: by };
  }

  private async join(invitation: InvitationRow, userId: number, transaction: Transaction): Promise<MemberRow> {
    try {
      const row = await this.models.Member.create({ entity_id: invitation.entity_id, user_id: userId, role: invitation.role, added_at: new Date() }, { transaction });
      return row.get({ plain: true });
    } catch (error) {
      if (!(error instanceof UniqueConstraintError)) throw error;
      throw new ApiError(409, 'conflict', 'You are already in this team.', [
        { location: 'body', field: 'id', rule: 'not_in_team', message: 'is an invitation to a team you are already in', value: invitation.id },
      ]);
    }
  }

  /** An account holder is told to log in and answer; an address without one gets the sign-up link. */
  private async mailInvitation(row: InvitationRow, entityName: string, inviter: UserRow, token: string, links: InvitationLinks): Promise<void> {
    const [account] = await this.sequelize().query<{ is_active: unknown }>('SELECT is_active FROM users WHERE email = ?', { replacements: [row.email], type: QueryTypes.SELECT });
    if (account && !account.is_active) return; // a deactivated account could not answer
    const opening =
      `${displayName(inviter)} invited you to join the team of ${entityName} on Palanque as ${row.role}.\n\n` +
      `You join only if you accept. The invitation is open until ${row.expires_at.toISOString()}.\n\n`;
    const how = account
      ? 'Log in to Palanque and answer it among your invitations (the front end, or `palanque invitations mine`).\n'
      : `You have no Palanque account with this address yet. Create one with this link (it works once your address is confirmed), then accept:\n${links.signUpUrl(token, row.email)}\n`;
    await this.mailer.send({ to: row.email, subject: `Palanque: invitation to the team of ${entityName}`, text: `Hello,\n\n${opening}${how}\nIf you do not know why you got this, ignore it: nothing happens.\n` });
  }

  private sequelize(): Sequelize {
    return this.models.Invitation.sequelize!;
  }

  private reader() {
    return readerOf(this.sequelize());
  }
}

type ListedRow = Omit<InvitationRow, 'created_at' | 'expires_at' | 'answered_at'> & {
  created_at: unknown;
  expires_at: unknown;
  answered_at: unknown;
  entity_name: string;
  inviter_username: string | null;
  inviter_first_name: string | null;
  inviter_last_name: string | null;
  inviter_deleted_at: unknown;
};

const LIST_SQL = `SELECT i.*, e.nome AS entity_name, u.username AS inviter_username, u.first_name AS inviter_first_name, u.last_name AS inviter_last_name, u.deleted_at AS inviter_deleted_at
  FROM team_invitations i JOIN entities e ON e.id = i.entity_id LEFT JOIN users u ON u.id = i.invited_by`;

/** SQL that keeps only invitations in `state` now (expired: pending past its time). */
function stateFilter(state: InvitationState | undefined): { sql: string; params: unknown[] } {
  const now = new Date();
  if (state === undefined) return { sql: '', params: [] };
  if (state === 'pending') return { sql: " AND i.state = 'pending' AND i.expires_at > ?", params: [now] };
  if (state === 'expired') return { sql: " AND i.state = 'pending' AND i.expires_at <= ?", params: [now] };
  return { sql: ' AND i.state = ?', params: [state] };
}

function stateOf(row: Pick<InvitationRow, 'state'> & { expires_at: unknown }, now = new Date()): InvitationState {
  return row.state === 'pending' && asDate(row.expires_at).getTime() <= now.getTime() ? 'expired' : row.state;
}

function viewOf(row: InvitationRow, entityName: string, inviter: (Pick<UserRow, 'id' | 'username' | 'first_name' | 'last_name'> & { deleted_at?: unknown }) | undefined): InvitationView {
  return {
    id: row.id,
    entity_id: row.entity_id,
    entity_name: entityName,
    email: row.email,
    role: row.role,
    state: stateOf(row),
    invited_by: inviter ? { id: inviter.id, display_name: displayName(inviter) } : null,
    created_at: asIsoTimestamp(row.created_at),
    expires_at: asIsoTimestamp(row.expires_at),
    answered_at: row.answered_at === null ? null : asIsoTimestamp(row.answered_at),
  };
}

function listedView(row: ListedRow): InvitationView {
  const inviter =
    row.invited_by !== null && row.inviter_username !== null
      ? { id: row.invited_by, username: row.inviter_username, first_name: row.inviter_first_name ?? '', last_name: row.inviter_last_name ?? '', deleted_at: row.inviter_deleted_at }
      : undefined;
  const plain = { ...row, created_at: asDate(row.created_at), expires_at: asDate(row.expires_at), answered_at: row.answered_at === null ? null : asDate(row.answered_at) };
  return viewOf(plain, row.entity_name, inviter);
}

/** What the team's history says of an invitation: which one, and the role it offers. */
function invitationChanges(invitation: Pick<InvitationRow, 'id' | 'role'>): FieldChange[] {
  return [
    { field: 'invitation', before: null, after: invitation.id },
    { field: 'role', before: null, after: invitation.role },
  ];
}

function unknownInvitation(message: string, invitationId: number, rule: string): ApiError {
  return notFound(message, [{ location: 'body', field: 'id', rule: 'existing_invitation', message: rule, value: invitationId }]);
}

function closedInvitation(current: InvitationRow, now: Date): ApiError {
  const state = stateOf(current, now);
  return new ApiError(409, 'conflict', `Invitation ${current.id} is ${state}, no longer open.`, [
    { location: 'body', field: 'id', rule: 'open_invitation', message: `is ${state}`, value: current.id },
  ]);
}
