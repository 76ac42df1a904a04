/**
 * Social monitors and their alert rules in the stateful mock (src/monitors/): the monitors of the
 * caller's teams, a new one (a name unique per entity, watching at least one profile or keyword), and
 * alert rules judged as the server judges them (a threshold within its kind's bounds, a network the
 * monitor watches, at most MAX_ALERT_RULES). The mock keeps no metrics, so no rule is ever breached.
 */
import type { HttpHandler } from 'msw';
import type { ErrorDetail } from '../../msw-validation.js';
import { conflict, envelope, forbidden, invalidBody, notFound } from '../answers.js';
import { entityFor, may, PERMISSION_TEXT, roleIn, type Context, type On, type Permission } from '../auth.js';
import { newId, now, type AlertKind, type Json, type StoredAlertRule } from '../store.js';

export function monitorHandlers(on: On): HttpHandler[] {
  return [
    on('getSocialMonitorData', ({ url, user, state }) => {
      const asked = url.searchParams.get('id_monitor');
      const visible = [...state.monitors.values()].filter((monitor) => {
        const entity = state.entities.get(monitor.entity_id);
        return entity !== undefined && roleIn(entity, user) !== undefined;
      });
      if (asked === null) return envelope(200, visible, `${visible.length} monitor${visible.length === 1 ? '' : 's'}.`);
      const monitor = visible.find((candidate) => candidate.id === Number(asked));
      if (!monitor) return notFound(`There is no monitor ${asked} in your teams.`, [{ location: 'query', field: 'id_monitor', rule: 'in_your_teams', message: 'must be a monitor of one of your teams', value: Number(asked) }]);
      return envelope(200, [monitor], '1 monitor.');
    }),
    on('createSocialMonitor', (context) => {
      const { body, state, user } = context;
      const entity = entityFor(context, Number(body.entity_id), { location: 'body', field: 'entity_id' }, 'edit');
      if (entity instanceof Response) return entity;
      const name = String(body.name).trim();
      const keywords = (body.keywords ?? []) as string[];
      const profiles = (body.profiles ?? []) as Json[];
      const problems: ErrorDetail[] = [];
      if (name === '') problems.push({ location: 'body', field: 'name', rule: 'not_blank', message: 'must not be blank' });
      if (keywords.length === 0 && profiles.length === 0) problems.push({ location: 'body', field: 'profiles', rule: 'profiles_or_keywords', message: 'a monitor watches at least one profile or keyword' });
      if (problems.length > 0) return invalidBody(problems);
      if ([...state.monitors.values()].some((monitor) => monitor.entity_id === entity.id && monitor.name === name)) {
        return conflict(`${String(entity.record.nome)} already has a monitor named "${name}".`, [{ location: 'body', field: 'name', rule: 'unique_per_entity', message: 'is the name of another monitor of this entity', value: name }]);
      }
      const id = newId(state, state.monitors.keys());
      const monitor = { id, entity_id: entity.id, name, keywords, profiles, created_at: now(), latest_metrics: [], daily_series: [] };
      state.monitors.set(id, monitor);
      return envelope(201, monitor, `Monitor ${id} created.`);
    }),
  ];
}

const MAX_ALERT_RULES = 20;

/** What `threshold` may be for each kind (src/monitors/alerts.ts THRESHOLD_BOUNDS). */
const THRESHOLDS: Record<AlertKind, { min: number; max: number; integer: boolean; meaning: string }> = {
  followers_drop: { min: 0, max: 100, integer: false, meaning: 'over 0 and at most 100 (a percentage)' },
  mentions_spike: { min: 1, max: 1000, integer: false, meaning: 'over 1 and at most 1000 (a multiple of the 7-day average)' },
  profile_inactive: { min: 0, max: 365, integer: true, meaning: 'a whole number of days from 1 to 365' },
};

/** The monitor if the caller's role in its team allows `permission`: otherwise the server's 404 or 403. */
function monitorFor(context: Context, id: number, where: Pick<ErrorDetail, 'location' | 'field'>, permission: Permission) {
  const monitor = context.state.monitors.get(id);
  const entity = monitor && context.state.entities.get(monitor.entity_id);
  const role = entity && roleIn(entity, context.user);
  if (!monitor || !role) return notFound(`There is no monitor ${id} in your teams.`, [{ ...where, rule: 'in_your_teams', message: 'must be a monitor of one of your teams', value: id }]);
  if (!may(context.user, role, permission)) return forbidden(`Your role in this team (${role}) may not ${PERMISSION_TEXT[permission]}.`);
  return monitor;
}

export function alertRuleHandlers(on: On): HttpHandler[] {
  const plural = (count: number) => `${count} alert rule${count === 1 ? '' : 's'}`;
  return [
    on('listMonitorAlertRules', (context) => {
      const monitor = monitorFor(context, Number(context.url.searchParams.get('monitor_id')), { location: 'query', field: 'monitor_id' }, 'read');
      if (monitor instanceof Response) return monitor;
      const rules = [...context.state.alertRules.values()].filter((rule) => rule.monitor_id === monitor.id);
      return envelope(200, rules, `${plural(rules.length)}.`);
    }),
    on('addMonitorAlertRule', (context) => {
      const { body, state } = context;
      const monitor = monitorFor(context, Number(body.monitor_id), { location: 'body', field: 'monitor_id' }, 'edit');
      if (monitor instanceof Response) return monitor;
      const kind = body.kind as AlertKind;
      const threshold = Number(body.threshold);
      const network = (body.network ?? null) as string | null;
      const problems: ErrorDetail[] = [];
      const { min, max, integer, meaning } = THRESHOLDS[kind];
      if (!(threshold > min && threshold <= max && (!integer || Number.isInteger(threshold)))) {
        problems.push({ location: 'body', field: 'threshold', rule: 'threshold_for_kind', message: `must be ${meaning} for ${kind}`, value: threshold });
      }
      const networks = [...new Set(((monitor.profiles ?? []) as Json[]).map((profile) => String(profile.nm_rede)))].sort();
      if (network !== null && !networks.includes(network)) {
        problems.push({ location: 'body', field: 'network', rule: 'monitored_network', message: `must be one of the monitor's networks: ${networks.join(', ') || 'none'}`, value: network });
      }
      if (problems.length > 0) return invalidBody(problems);
      if ([...state.alertRules.values()].filter((rule) => rule.monitor_id === monitor.id).length >= MAX_ALERT_RULES) {
        return invalidBody([{ location: 'body', field: 'monitor_id', rule: 'max_rules', message: `a monitor has at most ${MAX_ALERT_RULES} alert rules; remove one first`, value: monitor.id }]);
      }
      const id = newId(state, state.alertRules.keys());
      const rule: StoredAlertRule = { id, monitor_id: monitor.id, kind, network, threshold, breached: false, last_fired_at: null, created_at: now() };
      state.alertRules.set(id, rule);
      return envelope(201, rule, `Alert rule ${id} added to monitor ${monitor.id}.`);
    }),
    on('removeMonitorAlertRule', (context) => {
      const id = Number(context.url.pathname.split('/').filter(Boolean).at(-1));
      const rule = context.state.alertRules.get(id);
      const missing = notFound(`There is no alert rule ${id} on a monitor of your teams.`, [
        { location: 'path', field: 'rule_id', rule: 'in_your_teams', message: 'must be an alert rule of a monitor of one of your teams', value: id },
      ]);
      if (!rule) return missing;
      const monitor = monitorFor(context, rule.monitor_id, { location: 'path', field: 'rule_id' }, 'edit');
      if (monitor instanceof Response) return monitor.status === 404 ? missing : monitor;
      context.state.alertRules.delete(id);
      return envelope(200, rule, `Alert rule ${id} removed.`);
    }),
  ];
}
