/**
 * The HTTP side of the erasure of an entity's contacts after its election (issue 42; contact-retention.ts):
 * its status, read by the entity's owner and admins (and platform admins), who also get the notice; and
 * the hold while proceedings are pending (CF art. 14 §10), placed and released by platform admins only,
 * audited. A stranger to the entity gets 404, as for an entity that does not exist.
 */
import type { Teams } from '../entities/teams.js';
import { callerOf, requireAdmin } from '../http/auth.js';
import { invalidBody } from '../http/body-fields.js';
import { sendEnvelope } from '../http/envelope.js';
import { notFound } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import type { ContactRetention } from './contact-retention.js';

type RetentionOperations = 'getContactRetention' | 'holdContactRetention' | 'releaseContactRetention';

export function contactRetentionHandlers({ retention, teams }: { retention: ContactRetention; teams: Teams }): Pick<Required<OperationHandlers>, RetentionOperations> {
  return {
    async getContactRetention(req, res) {
      const caller = callerOf(res);
      const { entity } = await teams.access(caller, Number(req.query.entity_id), 'manageTeam', { location: 'query', field: 'entity_id' });
      const status = await retention.status(entity.id);
      const when = status.erase_on ? `erased on ${status.erase_on}${status.hold ? ' unless the hold is released first: held' : ''}` : 'kept: the entity has no election with a certification day';
      sendEnvelope(res, 200, status, `The contacts of entity ${entity.id}: ${when}.`);
    },

    async holdContactRetention(req, res) {
      const caller = callerOf(res);
      requireAdmin(caller);
      const { entity } = await teams.access(caller, Number(req.query.entity_id), 'read', { location: 'query', field: 'entity_id' });
      const reason = String(req.body.reason ?? '').trim();
      if (reason === '') throw invalidBody([{ location: 'body', field: 'reason', rule: 'not_blank', message: 'must not be blank: the reference of the pending case', value: req.body.reason }]);
      const status = await retention.hold(entity.id, caller.user.id, reason, req.ip);
      sendEnvelope(res, 200, status, `The erasure of the contacts of entity ${entity.id} is held.`);
    },

    async releaseContactRetention(req, res) {
      const caller = callerOf(res);
      requireAdmin(caller);
      const { entity } = await teams.access(caller, Number(req.query.entity_id), 'read', { location: 'query', field: 'entity_id' });
      if (!(await retention.release(entity.id, caller.user.id, req.ip))) {
        throw notFound(`The erasure of the contacts of entity ${entity.id} is not held.`, [
          { location: 'query', field: 'entity_id', rule: 'held', message: 'must name an entity whose erasure is held', value: entity.id },
        ]);
      }
      const status = await retention.status(entity.id);
      sendEnvelope(res, 200, status, `The hold on the erasure of the contacts of entity ${entity.id} was released.`);
    },
  };
}
