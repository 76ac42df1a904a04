/**
 * Guardianship links. A link says that its tutor entity watches its ward; the tutor's team may then compare
 * the ward in strategy scenarios, and so read the ward's name, marketshare and share of voice in their
 * projections, without being in the ward's team.
 *
 * The guarantee: a link grants something only while it *stands*, that is while the check that created it
 * would still pass for the user who created it: an active account that may change the tutor (owner, admin or
 * operator of its team) and may read the ward (any role in its team), or an active platform admin. Every use
 * (listing links, judging which entities a scenario may compare, running a projection, showing a stored
 * one) asks this in the same query that reads the links, at that moment, so a membership that has ended
 * grants nothing even if a link was left behind. Removing a member also deletes the links they created
 * from or to that entity (`forgetMember`), and the ward's owner and admins list and remove the links that
 * point at their entity (`pointingAt`, `removePointingAt`).
 */
import { Op, QueryTypes, UniqueConstraintError, type Sequelize, type Transaction } from 'sequelize';
import type { EntityModels, GuardianshipRow } from './models.js';
import { rolesThatMay } from './teams.js';

/** The SQL condition "link `l` stands"; its replacements are `STANDING_REPLACEMENTS`. */
const STANDING = `EXISTS (
  SELECT 1 FROM users creator WHERE creator.id = l.created_by AND creator.is_active = :yes AND (
    creator.is_admin = :yes OR (
      EXISTS (SELECT 1 FROM entity_members tutor_team WHERE tutor_team.entity_id = l.tutor_id AND tutor_team.user_id = creator.id AND tutor_team.role IN (:editors))
      AND EXISTS (SELECT 1 FROM entity_members ward_team WHERE ward_team.entity_id = l.ward_id AND ward_team.user_id = creator.id))))`;
const STANDING_REPLACEMENTS = { yes: true, editors: rolesThatMay('edit') };

export type WardLinkRow = GuardianshipRow & { standing: boolean };

export class GuardianshipLinks {
  private readonly sequelize: Sequelize;

  constructor(private readonly models: EntityModels) {
    this.sequelize = models.Guardianship.sequelize!;
  }

  /**
   * Adds the link as made by `creatorId`, who has just passed the creation check. Adding a standing link
   * again changes nothing; adding one that no longer stands makes `creatorId` its creator.
   */
  async add(tutorId: number, wardId: number, creatorId: number): Promise<void> {
    try {
      await this.models.Guardianship.create({ tutor_id: tutorId, ward_id: wardId, created_by: creatorId, created_at: new Date() });
    } catch (error) {
      if (!(error instanceof UniqueConstraintError)) throw error;
      await this.sequelize.query(
        `UPDATE guardianship_links SET created_by = :creatorId WHERE id IN (
          SELECT l.id FROM guardianship_links l WHERE l.tutor_id = :tutorId AND l.ward_id = :wardId AND NOT ${STANDING})`,
        { replacements: { ...STANDING_REPLACEMENTS, creatorId, tutorId, wardId } },
      );
    }
  }

  async remove(tutorId: number, wardId: number): Promise<void> {
    await this.models.Guardianship.destroy({ where: { tutor_id: tutorId, ward_id: wardId } });
  }

  /** The standing links whose tutor is one of `tutorIds` (every standing link when undefined), by id. */
  async standingFrom(tutorIds: number[] | undefined): Promise<GuardianshipRow[]> {
    if (tutorIds?.length === 0) return [];
    const rows = await this.withStanding(tutorIds === undefined ? '1 = 1' : 'l.tutor_id IN (:tutorIds)', { tutorIds });
    return rows.filter((row) => row.standing);
  }

  /** Every link that points at the entity, standing or not, by id: what the ward's owner and admins see. */
  async pointingAt(wardId: number): Promise<WardLinkRow[]> {
    return this.withStanding('l.ward_id = :wardId', { wardId });
  }

  /** Removes link `linkId` if it points at `wardId`; false when there is no such link. */
  async removePointingAt(wardId: number, linkId: number): Promise<boolean> {
    return (await this.models.Guardianship.destroy({ where: { id: linkId, ward_id: wardId } })) > 0;
  }

  /** Deletes the links `userId` created from or to the entity: called when they leave its team. */
  async forgetMember(entityId: number, userId: number, transaction?: Transaction): Promise<void> {
    await this.models.Guardianship.destroy({ where: { created_by: userId, [Op.or]: [{ tutor_id: entityId }, { ward_id: entityId }] }, transaction });
  }

  /**
   * Which of `ids` user `userId` may compare on a monitor of entity `monitorEntityId`, now: that entity
   * itself, the entities of the user's teams (every one for an active platform admin), and the entities it
   * watches through a standing link. A null user (a deleted account) has no teams.
   */
  async comparable(userId: number | null, monitorEntityId: number, ids: number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const rows = await this.sequelize.query<{ id: number }>(
      `SELECT e.id FROM entities e WHERE e.id IN (:ids) AND (
        e.id = :monitorEntityId
        OR EXISTS (SELECT 1 FROM entity_members m WHERE m.entity_id = e.id AND m.user_id = :userId)
        OR EXISTS (SELECT 1 FROM users u WHERE u.id = :userId AND u.is_admin = :yes AND u.is_active = :yes)
        OR EXISTS (SELECT 1 FROM guardianship_links l WHERE l.tutor_id = :monitorEntityId AND l.ward_id = e.id AND ${STANDING}))`,
      { replacements: { ...STANDING_REPLACEMENTS, ids, monitorEntityId, userId }, type: QueryTypes.SELECT },
    );
    return new Set(rows.map((row) => Number(row.id)));
  }

  /** The links matching `condition` (on alias `l`), each with whether it stands; the rows come through the model, for its types. */
  private async withStanding(condition: string, replacements: Record<string, unknown>): Promise<WardLinkRow[]> {
    const found = await this.sequelize.query<{ id: number; standing: number | string | boolean }>(
      `SELECT l.id, CASE WHEN ${STANDING} THEN 1 ELSE 0 END AS standing FROM guardianship_links l WHERE ${condition}`,
      { replacements: { ...STANDING_REPLACEMENTS, ...replacements }, type: QueryTypes.SELECT },
    );
    if (found.length === 0) return [];
    const standing = new Map(found.map((row) => [Number(row.id), Number(row.standing) === 1]));
    const rows = (await this.models.Guardianship.findAll({ where: { id: { [Op.in]: [...standing.keys()] } }, order: [['id', 'ASC']], raw: true })) as unknown as GuardianshipRow[];
    return rows.map((row) => ({ ...row, standing: standing.get(row.id) ?? false }));
  }
}
