/**
 * The HTTP side of guardianship links (guardianship.ts says when a link stands). From the tutor's side,
 * `manageGuardianship` lists the standing links of the caller's entities and adds or removes one; from the
 * ward's side, its owner and admins list every link that points at their entity (`listWardLinks`) and
 * remove one (`removeWardLink`). As everywhere in entities, the team rules are asked first: an entity
 * outside the caller's teams is 404, a role that may read it but not do this is 403.
 */
import { Op } from 'sequelize';
import type { Accounts } from '../accounts/index.js';
import { displayName } from '../accounts/users.js';
import { callerOf } from '../http/auth.js';
import { sendEnvelope } from '../http/envelope.js';
import { badRequest, notFound } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import type { WardLinkRow } from './guardianship.js';
import type { Entities } from './index.js';
import type { EntityRow, GuardianshipRow } from './models.js';

type GuardianshipOperations = 'manageGuardianship' | 'listWardLinks' | 'removeWardLink';

export interface GuardianshipHandlerDependencies {
  entities: Entities;
  accounts: Accounts;
}

export function guardianshipHandlers({ entities, accounts }: GuardianshipHandlerDependencies): Pick<Required<OperationHandlers>, GuardianshipOperations> {
  const { teams, guardianship, models } = entities;

  return {
    async manageGuardianship(req, res) {
      const caller = callerOf(res);
      const { tutor, ward, action } = req.query;
      const given = [tutor, ward, action].filter((value) => value !== undefined).length;
      if (given !== 0 && given !== 3) {
        throw badRequest('The request is malformed: tutor, ward and action go together.', [
          ...(['tutor', 'ward', 'action'] as const)
            .filter((field) => req.query[field] === undefined)
            .map((field) => ({ location: 'query' as const, field, rule: 'required_together', message: 'is required with the other two' })),
        ]);
      }
      if (given === 3) {
        if (tutor === ward) throw badRequest('The request is malformed: an entity cannot watch itself.', [{ location: 'query', field: 'ward', rule: 'not_tutor', message: 'must differ from tutor', value: ward }]);
        // The creation check; the link stands as long as it would still pass for the caller.
        await teams.access(caller, Number(tutor), 'edit', { location: 'query', field: 'tutor' });
        await teams.access(caller, Number(ward), 'read', { location: 'query', field: 'ward' });
        if (action === 'add') await guardianship.add(Number(tutor), Number(ward), caller.user.id);
        else await guardianship.remove(Number(tutor), Number(ward));
      }
      const links = await describeLinks(await guardianship.standingFrom(caller.user.is_admin ? undefined : await teams.entityIdsOf(caller.user.id)));
      sendEnvelope(res, 200, links, `${links.length} links.`);
    },

    async listWardLinks(req, res) {
      if (req.query.id === undefined) {
        throw badRequest('The request is malformed: id is required.', [{ location: 'query', field: 'id', rule: 'required', message: 'is required' }]);
      }
      const { entity } = await teams.access(callerOf(res), Number(req.query.id), 'manageTeam', { location: 'query', field: 'id' });
      const links = await describeWardLinks(await guardianship.pointingAt(entity.id));
      sendEnvelope(res, 200, links, links.length === 1 ? '1 link points at this entity.' : `${links.length} links point at this entity.`);
    },

    async removeWardLink(req, res) {
      const { entity } = await teams.access(callerOf(res), req.body.entity_id, 'manageTeam', { location: 'body', field: 'entity_id' });
      if (!(await guardianship.removePointingAt(entity.id, req.body.link_id))) {
        throw notFound(`There is no link ${req.body.link_id} pointing at this entity.`, [
          { location: 'body', field: 'link_id', rule: 'points_at_entity', message: 'must be a link that points at the entity', value: req.body.link_id },
        ]);
      }
      sendEnvelope(res, 200, { removed: true as const }, 'The link was removed.');
    },
  };

  /** The links as the contract shows them, with the names and types of their entities. */
  async function describeLinks(links: GuardianshipRow[]) {
    const ids = [...new Set(links.flatMap((link) => [link.tutor_id, link.ward_id]))];
    const rows = ids.length === 0 ? [] : ((await models.Entity.findAll({ attributes: ['id', 'nome', 'tp'], where: { id: { [Op.in]: ids } }, raw: true })) as unknown as EntityRow[]);
    const byId = new Map(rows.map((row) => [row.id, row]));
    return links.map((link) => ({
      id: link.id,
      tutor_id: link.tutor_id,
      tutor_nome: byId.get(link.tutor_id)?.nome ?? '',
      ward_id: link.ward_id,
      ward_nome: byId.get(link.ward_id)?.nome ?? '',
      ward_tp: byId.get(link.ward_id)?.tp ?? 'concorrente',
      created_at: new Date(link.created_at).toISOString(),
    }));
  }

  /** The links as the ward's owner and admins see them: who created each, and whether it stands. */
  async function describeWardLinks(links: WardLinkRow[]) {
    const described = await describeLinks(links);
    const creatorIds = links.flatMap((link) => (link.created_by === null ? [] : [link.created_by]));
    const creators = new Map((await accounts.users.byIds([...new Set(creatorIds)])).map((user) => [user.id, user]));
    return described.map((link, index) => {
      const creator = creators.get(links[index]!.created_by ?? 0);
      return { ...link, created_by: creator ? { id: creator.id, display_name: displayName(creator) } : null, standing: links[index]!.standing };
    });
  }
}
