/**
 * The HTTP side of strategy scenarios: ask for one on a monitor, list a monitor's requests, and approve
 * or reject pending ones. Access goes through the monitor's entity team: every role reads, owners, admins
 * and operators ask, owners and admins decide.
 */
import { callerOf, type Caller } from '../http/auth.js';
import { invalidBody, optionalText } from '../http/body-fields.js';
import { sendEnvelope } from '../http/envelope.js';
import type { ErrorDetail } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import { pageOf } from '../http/pagination.js';
import { apiBaseUrl, type PublicUrlSettings } from '../http/public-url.js';
import type { Entities } from '../entities/index.js';
import { viewerOf, type Monitors } from '../monitors/index.js';
import type { Strategy } from './index.js';
import { counted } from '../http/counted.js';

const REQUESTS_PER_PAGE = 30;

type StrategyOperations = 'createScenarioRequest' | 'listScenarioRequests' | 'approvePendingScenarioRequests' | 'rejectPendingScenarioRequests';

export interface StrategyHandlerDependencies {
  strategy: Strategy;
  monitors: Monitors;
  entities: Entities;
  urls: PublicUrlSettings;
}

export function strategyHandlers({ strategy, monitors, entities, urls }: StrategyHandlerDependencies): Pick<Required<OperationHandlers>, StrategyOperations> {
  return {
    async createScenarioRequest(req, res) {
      const caller = callerOf(res);
      const { monitor } = await monitors.access(caller, req.body.monitor_id, 'edit', { location: 'body', field: 'monitor_id' });
      const problems = await entitiesNotComparable(caller, monitor.entity_id, req.body.entity_ids);
      if (problems.length > 0) throw invalidBody(problems);
      const scenario = await strategy.scenarios.create({
        monitorId: monitor.id,
        entityIds: req.body.entity_ids,
        horizonDays: req.body.horizon_days,
        requestedBy: caller.user.id,
      });
      sendEnvelope(res, 201, scenario, `Scenario request ${scenario.id} is pending approval.`);
    },

    async listScenarioRequests(req, res) {
      const caller = callerOf(res);
      const monitorId = Number(req.query.monitor_id);
      const page = req.query.page ?? 1;
      // The access check is read with the page, in one query; nothing of the page is used before it passes.
      const found = await strategy.scenarios.pageFor(viewerOf(caller), monitorId, req.query.state, page, REQUESTS_PER_PAGE);
      monitors.allowed(caller, monitorId, found.monitor, 'read', { location: 'query', field: 'monitor_id' });
      const { total, requests: stored } = found;
      const requests = await strategy.shown(stored, found.monitor!.entity_id);
      const listUrl = new URL(apiBaseUrl(req, urls) + '/api/strategy/get_scenario_requests/');
      listUrl.searchParams.set('monitor_id', String(monitorId));
      if (req.query.state) listUrl.searchParams.set('state', req.query.state);
      sendEnvelope(res, 200, pageOf(requests, total, page, REQUESTS_PER_PAGE, listUrl.toString()), `${counted(total, 'scenario request')}.`);
    },

    async approvePendingScenarioRequests(req, res) {
      const caller = callerOf(res);
      const { selectedMonitorId, scenarios_list: ids } = req.body;
      const { monitor } = await monitors.access(caller, selectedMonitorId, 'decideScenarios', { location: 'body', field: 'selectedMonitorId' });
      const results = await strategy.approve(monitor.id, ids, caller.user.id);
      const approved = results.filter((result) => result.outcome === 'approved').length;
      sendEnvelope(res, 200, { monitor_id: monitor.id, approved, results }, `${approved} of ${ids.length} scenario requests approved.`);
    },

    async rejectPendingScenarioRequests(req, res) {
      const caller = callerOf(res);
      const { selectedMonitorId, scenarios_list: ids } = req.body;
      const { monitor } = await monitors.access(caller, selectedMonitorId, 'decideScenarios', { location: 'body', field: 'selectedMonitorId' });
      const results = await strategy.reject(monitor.id, ids, optionalText(req.body.reason), caller.user.id);
      const rejected = results.filter((result) => result.outcome === 'rejected').length;
      sendEnvelope(res, 200, { monitor_id: monitor.id, rejected, results }, `${rejected} of ${ids.length} scenario requests rejected.`);
    },
  };

  /**
   * One problem per id the scenario may not compare: an entity may be compared when the caller may read it,
   * or when the monitor's entity watches it through a standing guardianship link (entities/guardianship.ts).
   * Missing and foreign ids get the same answer: ids reveal nothing.
   */
  async function entitiesNotComparable(caller: Caller, monitorEntityId: number, ids: number[]): Promise<ErrorDetail[]> {
    const comparable = await entities.guardianship.comparable(caller.user.id, monitorEntityId, ids);
    return ids.flatMap((id, index) =>
      comparable.has(id)
        ? []
        : [{ location: 'body' as const, field: `entity_ids.${index}`, rule: 'comparable_entity', message: "must be an entity of your teams or one the monitor's entity watches", value: id }],
    );
  }
}
