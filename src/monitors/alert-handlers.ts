/**
 * The HTTP side of monitor alert rules (alerts.ts): every member of the monitor's team reads them; its
 * owner, admins and operators add and remove them (the `edit` permission, as for creating monitors).
 */
import { callerOf } from '../http/auth.js';
import { invalidBody } from '../http/body-fields.js';
import { sendEnvelope } from '../http/envelope.js';
import { notFound, type ErrorDetail } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import { alertRuleView, MAX_RULES_PER_MONITOR, THRESHOLD_BOUNDS, thresholdFits } from './alerts.js';
import type { Monitors } from './index.js';
import { counted } from '../http/counted.js';

type AlertOperations = 'listMonitorAlertRules' | 'addMonitorAlertRule' | 'removeMonitorAlertRule';

export function monitorAlertHandlers(monitors: Monitors): Pick<Required<OperationHandlers>, AlertOperations> {
  const { alerts } = monitors;
  return {
    async listMonitorAlertRules(req, res) {
      const { monitor } = await monitors.access(callerOf(res), Number(req.query.monitor_id), 'read', { location: 'query', field: 'monitor_id' });
      const rules = await alerts.list(monitor.id);
      sendEnvelope(res, 200, rules.map(alertRuleView), `${counted(rules.length, 'alert rule')}.`);
    },

    async addMonitorAlertRule(req, res) {
      const caller = callerOf(res);
      // The right to change the monitor is checked before the body is judged: a stranger learns nothing.
      const { monitor } = await monitors.access(caller, req.body.monitor_id, 'edit', { location: 'body', field: 'monitor_id' });
      const { kind, threshold } = req.body;
      const network = req.body.network ?? null;
      const problems: ErrorDetail[] = [];
      if (!thresholdFits(kind, threshold)) {
        problems.push({ location: 'body', field: 'threshold', rule: 'threshold_for_kind', message: `must be ${THRESHOLD_BOUNDS[kind].meaning} for ${kind}`, value: threshold });
      }
      const networks = [...(await monitors.store.networksOf(monitor.id))].sort();
      if (network !== null && !networks.includes(network)) {
        problems.push({ location: 'body', field: 'network', rule: 'monitored_network', message: `must be one of the monitor's networks: ${networks.join(', ') || 'none'}`, value: network });
      }
      if (problems.length > 0) throw invalidBody(problems);
      const added = await alerts.add({ monitor_id: monitor.id, kind, network, threshold, created_by: caller.user.id });
      if (added === 'max_rules') {
        throw invalidBody([{ location: 'body', field: 'monitor_id', rule: 'max_rules', message: `a monitor has at most ${MAX_RULES_PER_MONITOR} alert rules; remove one first`, value: monitor.id }]);
      }
      sendEnvelope(res, 201, alertRuleView(added), `Alert rule ${added.id} added to monitor ${monitor.id}.`);
    },

    async removeMonitorAlertRule(req, res) {
      const caller = callerOf(res);
      const id = req.params.rule_id;
      const rule = await alerts.byId(id);
      const missing = () =>
        notFound(`There is no alert rule ${id} on a monitor of your teams.`, [
          { location: 'path', field: 'rule_id', rule: 'in_your_teams', message: 'must be an alert rule of a monitor of one of your teams', value: id },
        ]);
      if (!rule) throw missing();
      // A rule of a monitor outside the caller's teams is missing to them, not forbidden.
      await monitors.access(caller, rule.monitor_id, 'edit', { location: 'path', field: 'rule_id' }).catch((error: unknown) => {
        throw (error as { status?: number }).status === 404 ? missing() : error;
      });
      await alerts.remove(rule.id);
      sendEnvelope(res, 200, alertRuleView(rule), `Alert rule ${rule.id} removed.`);
    },
  };
}
