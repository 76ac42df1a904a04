/**
 * The HTTP side of social monitors: read them with their metrics, create one for an entity, and (admins)
 * import metric snapshots. Access goes through the monitor's entity team (index.ts).
 */
import { callerOf, requireAdmin } from '../http/auth.js';
import { invalidBody, requiredText } from '../http/body-fields.js';
import { sendEnvelope } from '../http/envelope.js';
import { ApiError, notFound, type ErrorDetail } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import type { Teams } from '../entities/teams.js';
import type { EditHistory } from '../entities/history.js';
import { viewerOf, type Monitors } from './index.js';
import { checkKeywords, checkProfiles, checkSnapshots } from './rules.js';
import { counted } from '../http/counted.js';

type MonitorOperations = 'getSocialMonitorData' | 'createSocialMonitor' | 'importMonitorMetrics';

/** `history`: where a monitor's creation is recorded, in its entity's edit history. */
export function monitorHandlers(monitors: Monitors, teams: Teams, history?: EditHistory): Pick<Required<OperationHandlers>, MonitorOperations> {
  const { store } = monitors;
  return {
    async getSocialMonitorData(req, res) {
      const caller = callerOf(res);
      const views =
        req.query.id_monitor === undefined
          ? await monitors.readable(caller)
          : [await monitors.view(caller, Number(req.query.id_monitor), { location: 'query', field: 'id_monitor' })];
      sendEnvelope(res, 200, views, `${counted(views.length, 'monitor')}.`);
    },

    async createSocialMonitor(req, res) {
      const caller = callerOf(res);
      // The right to change the entity is checked before the body is judged: a stranger learns nothing.
      const { entity } = await teams.access(caller, req.body.entity_id, 'edit', { location: 'body', field: 'entity_id' });
      const problems: ErrorDetail[] = [];
      const name = requiredText('name', req.body.name, problems);
      const keywords = checkKeywords(req.body.keywords ?? [], problems);
      const profiles = checkProfiles(req.body.profiles ?? [], problems);
      if (keywords.length === 0 && profiles.length === 0) {
        problems.push({ location: 'body', field: 'profiles', rule: 'profiles_or_keywords', message: 'a monitor watches at least one profile or keyword' });
      }
      if (problems.length > 0) throw invalidBody(problems);

      const changes = [
        { field: 'name', before: null, after: name },
        { field: 'keywords', before: null, after: keywords.length > 0 ? keywords : null },
        { field: 'profiles', before: null, after: profiles.length > 0 ? profiles : null },
      ].filter((change) => change.after !== null);
      const created = await store.create({ entityId: entity.id, name, keywords, profiles, createdBy: caller.user.id }, new Date(), (row, transaction) =>
        history ? history.record({ entityId: entity.id, subject: 'monitor', subjectId: row.id, action: 'created', actorId: caller.user.id, changes }, transaction) : Promise.resolve(),
      );
      if (created === 'name_taken') {
        throw new ApiError(409, 'conflict', `${entity.nome} already has a monitor named "${name}".`, [
          { location: 'body', field: 'name', rule: 'unique_per_entity', message: 'is the name of another monitor of this entity', value: name },
        ]);
      }
      const [shown] = await store.viewsIn(viewerOf(caller), { monitorId: created.id });
      sendEnvelope(res, 201, shown!.view, `Monitor ${created.id} created.`);
    },

    async importMonitorMetrics(req, res) {
      requireAdmin(callerOf(res));
      const { monitor_id: monitorId } = req.body;
      if (!(await store.byId(monitorId))) {
        throw notFound(`There is no monitor ${monitorId}.`, [{ location: 'body', field: 'monitor_id', rule: 'existing_monitor', message: 'must be the id of a monitor', value: monitorId }]);
      }
      const problems: ErrorDetail[] = [];
      const snapshots = checkSnapshots(req.body.snapshots, await store.networksOf(monitorId), new Date(), problems);
      if (problems.length > 0) throw invalidBody(problems);

      // Imports carry no change times: none is ever outdated.
      const { created, replaced, unchanged } = await store.record(monitorId, snapshots, 'import');
      const data = { monitor_id: monitorId, received: snapshots.length, created, replaced, unchanged };
      sendEnvelope(res, 200, data, `${counted(snapshots.length, 'snapshot')} imported into monitor ${monitorId}.`);
    },
  };
}
