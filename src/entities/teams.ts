/**
 * Teams: who may do what with an entity. An entity's team is its owner (who added it) and the users
 * added with a role. Every entity operation asks `access` first: an entity outside the caller's teams
 * is 404 (its existence is not revealed), a role that may read but not do the thing asked is 403.
 * Platform admins are treated as team admins of every entity.
 */
import { Op } from 'sequelize';
import { readerOf, type Reader } from '../db/reader.js';
import type { UserRow } from '../accounts/models.js';
import type { Caller } from '../http/auth.js';
import { ApiError, notFound, type ErrorDetail } from '../http/errors.js';
import { entityRowOf, type EntityModels, type EntityRow, type MemberRow, type TeamRole } from './models.js';

/** What each role may do, from the contract's TeamRole description. */
const MAY = {
  read: new Set<TeamRole>(['owner', 'admin', 'operator', 'viewer']),
  edit: new Set<TeamRole>(['owner', 'admin', 'operator']),
  manageTeam: new Set<TeamRole>(['owner', 'admin']),
  /** Approve or reject the strategy scenario requests made on the entity's monitors. */
  decideScenarios: new Set<TeamRole>(['owner', 'admin']),
  /** Read (and so write) CPF, voter id, race and the base address whole (personal-data.ts). */
  readPersonalData: new Set<TeamRole>(['owner', 'admin']),
} as const;

export type Permission = keyof typeof MAY;

/** The team roles that allow `permission` (for rules checked inside a query, such as a link's standing). */
export function rolesThatMay(permission: Permission): TeamRole[] {
  return [...MAY[permission]];
}

export interface Access {
  entity: EntityRow;
  /** The caller's role; `admin` for a platform admin outside the team. */
  role: TeamRole;
}

/** A member with what a team list shows of their user; `added_at` as the Reader gives it (see asDate). */
export type MemberWithUser = Omit<MemberRow, 'added_at'> & { added_at: unknown } & Pick<UserRow, 'username' | 'first_name' | 'last_name' | 'email' | 'contact_visible_to_team'>;

export class Teams {
  constructor(private readonly models: EntityModels) {}

  /**
   * The entity and the caller's role in its team, if the role allows `permission`. `where` names the
   * parameter that carried the id, for the error details.
   */
  async access(caller: Caller, entityId: number, permission: Permission, where: Pick<ErrorDetail, 'location' | 'field'>): Promise<Access> {
    // One read: the entity with the caller's membership, if any (issue 20). An id no column can hold
    // (a body's integer has no maximum) names no entity; PostgreSQL would refuse it as a parameter.
    const found = Number.isSafeInteger(entityId)
      ? await this.reader().row<Record<string, unknown> & { caller_role: TeamRole | null }>(ACCESS_SQL, [caller.user.id, entityId])
      : undefined;
    const { caller_role: membership, ...entity } = found ?? { caller_role: null };
    const role = found ? this.roleFrom(caller, membership) : undefined;
    if (!found || !role) {
      throw notFound(`There is no entity ${entityId} in your teams.`, [
        { ...where, rule: 'in_your_teams', message: 'must be an entity of one of your teams', value: entityId },
      ]);
    }
    this.require(caller, role, permission);
    return { entity: entityRowOf(entity), role };
  }

  /** The caller's role in a team given their membership's (null where they have none): a platform admin outside it is `admin`. */
  roleFrom(caller: Caller, membership: TeamRole | null | undefined): TeamRole | undefined {
    return membership ?? (caller.user.is_admin ? 'admin' : undefined);
  }

  /** Whether `role` (the caller's in some team) allows `permission`. */
  may(caller: Caller, role: TeamRole, permission: Permission): boolean {
    // A platform admin keeps admin rights even where a membership gives a lesser role.
    return MAY[permission].has(role) || (caller.user.is_admin && MAY[permission].has('admin'));
  }

  /** Throws 403 unless `role` (the caller's in some team) allows `permission`. */
  require(caller: Caller, role: TeamRole, permission: Permission): void {
    if (!this.may(caller, role, permission)) {
      throw new ApiError(403, 'forbidden', `Your role in this team (${role}) may not ${describe(permission)}.`);
    }
  }

  /** The caller's role in each of these entities (admins: `admin` where they are not members). */
  async rolesOf(caller: Caller, entityIds: number[]): Promise<Map<number, TeamRole>> {
    // The ids go as one JSON array parameter, so the SQL text stays the same whatever their number.
    const memberships = await this.reader().rows<Pick<MemberRow, 'entity_id' | 'role'>>(rolesSqlOf(this.models.Member.sequelize!.getDialect()), [
      caller.user.id,
      JSON.stringify(entityIds),
    ]);
    const roles = new Map<number, TeamRole>(caller.user.is_admin ? entityIds.map((id) => [id, 'admin']) : []);
    for (const membership of memberships) roles.set(membership.entity_id, membership.role);
    return roles;
  }

  /** Ids of the entities whose team includes the user. */
  async entityIdsOf(userId: number): Promise<number[]> {
    const memberships = (await this.models.Member.findAll({ attributes: ['entity_id'], where: { user_id: userId }, raw: true })) as unknown as MemberRow[];
    return memberships.map((membership) => membership.entity_id);
  }

  /** The team's members with their users (a member whose user is gone is left out), by id; only those of `role` if given. */
  async membersWithUsers(entityId: number, role?: TeamRole): Promise<MemberWithUser[]> {
    // COALESCE: with no role given, every role matches (one SQL text for both).
    return this.reader().rows<MemberWithUser>(
      `SELECT m.id, m.entity_id, m.user_id, m.role, m.added_at, u.username, u.first_name, u.last_name, u.email, u.contact_visible_to_team
       FROM entity_members m JOIN users u ON u.id = m.user_id
       WHERE m.entity_id = ? AND m.role = COALESCE(?, m.role) ORDER BY m.id`,
      [entityId, role ?? null],
    );
  }

  /** The role in the team of the account with this (normalised) address, if it is in the team. */
  async roleOfAddress(entityId: number, email: string): Promise<TeamRole | undefined> {
    const member = await this.reader().row<{ role: TeamRole }>(MEMBER_ROLE_BY_ADDRESS_SQL, [entityId, email]);
    return member?.role;
  }

  /** Who shares a team with the user, and in which entities with which role: for chat contacts and profiles. */
  async teammatesOf(userId: number): Promise<Map<number, Array<{ entity_id: number; entity_name: string; role: TeamRole }>>> {
    const entityIds = await this.entityIdsOf(userId);
    const teammates = new Map<number, Array<{ entity_id: number; entity_name: string; role: TeamRole }>>();
    if (entityIds.length === 0) return teammates;
    const memberships = (await this.models.Member.findAll({ where: { entity_id: { [Op.in]: entityIds }, user_id: { [Op.ne]: userId } }, raw: true })) as unknown as MemberRow[];
    const entities = (await this.models.Entity.findAll({ attributes: ['id', 'nome'], where: { id: { [Op.in]: entityIds } }, raw: true })) as unknown as EntityRow[];
    const names = new Map(entities.map((entity) => [entity.id, entity.nome]));
    for (const membership of memberships) {
      const shared = teammates.get(membership.user_id) ?? [];
      shared.push({ entity_id: membership.entity_id, entity_name: names.get(membership.entity_id) ?? '', role: membership.role });
      teammates.set(membership.user_id, shared);
    }
    return teammates;
  }

  private reader(): Reader {
    return readerOf(this.models.Entity.sequelize!);
  }
}

function describe(permission: Permission): string {
  return {
    read: 'read this entity',
    edit: 'change this entity',
    manageTeam: 'manage this team',
    decideScenarios: 'approve or reject scenario requests',
    readPersonalData: 'read personal data whole',
  }[permission];
}

/**
 * The role in team `?` of the account with address `?`: one query whether or not an account has the
 * address, so its timing tells nothing about that (invitations.ts).
 */
export const MEMBER_ROLE_BY_ADDRESS_SQL = 'SELECT m.role FROM users u JOIN entity_members m ON m.user_id = u.id AND m.entity_id = ? WHERE u.email = ?';

/**
 * The entity and the caller's membership in its team. The id is cast to BIGINT: an id beyond
 * PostgreSQL's INTEGER (IdString allows 10 digits) names no entity (404) rather than failing as a parameter.
 */
const ACCESS_SQL = `SELECT e.*, m.role AS caller_role
  FROM entities e LEFT JOIN entity_members m ON m.entity_id = e.id AND m.user_id = ?
  WHERE e.id = CAST(? AS BIGINT)`;

/** The caller's memberships among a JSON array of entity ids (each database reads a JSON array its own way). */
function rolesSqlOf(dialect: string): string {
  const ids = dialect === 'postgres' ? 'SELECT CAST(value AS INTEGER) FROM json_array_elements_text(CAST(? AS JSON))' : 'SELECT value FROM json_each(?)';
  return `SELECT entity_id, role FROM entity_members WHERE user_id = ? AND entity_id IN (${ids})`;
}
