/**
 * Monitor alerts (issue 25): rules on a monitor, checked each time snapshots arrive for it (an import or
 * the social network's webhook), per network, on the newest snapshot of the network:
 * - `followers_drop`: followers down by `threshold`% or more from the newest snapshot taken at least 24
 *   hours before it;
 * - `mentions_spike`: mentions at `threshold` times or more the average of the snapshots of the 7 days
 *   before it (an average of 0 never breaches: there is nothing to be a multiple of);
 * - `profile_inactive`: posts not grown since the newest snapshot taken at least `threshold` days before.
 *
 * A rule fires once per breach: it keeps the networks that breach it now, and fires for a network only
 * when it enters that list (a notification to the team, a `monitor.alert` event to the entity's
 * webhooks); a snapshot that no longer breaches takes the network out, so the next breach fires again.
 * Checks of one monitor take turns (a named lock), so two deliveries at once cannot both fire.
 */
import { DataTypes, QueryTypes, type Model, type ModelStatic, type Sequelize, type Transaction } from 'sequelize';
import { withLockedTransaction } from '../db/locks.js';
import type { Logger } from '../logger.js';
import type { components } from '../../sdk/schema.js';
import type { Notice, Notifications } from '../notifications/notifications.js';
import type { MonitorRow, SnapshotRow } from './models.js';

export type MonitorAlertKind = components['schemas']['MonitorAlertKind'];
export type MonitorAlertRule = components['schemas']['MonitorAlertRule'];

export const MAX_RULES_PER_MONITOR = 20;
const DAY_MS = 24 * 3600 * 1000;
const MENTIONS_WINDOW_MS = 7 * DAY_MS;

/** What `threshold` may be for each kind, and what it means (for the 422's message). */
export const THRESHOLD_BOUNDS: Record<MonitorAlertKind, { min: number; max: number; integer: boolean; meaning: string }> = {
  followers_drop: { min: 0, max: 100, integer: false, meaning: 'over 0 and at most 100 (a percentage)' },
  mentions_spike: { min: 1, max: 1000, integer: false, meaning: 'over 1 and at most 1000 (a multiple of the 7-day average)' },
  profile_inactive: { min: 0, max: 365, integer: true, meaning: 'a whole number of days from 1 to 365' },
};

/** Whether `threshold` is within THRESHOLD_BOUNDS for `kind` (addMonitorAlertRule's rule `threshold_for_kind`). */
export function thresholdFits(kind: MonitorAlertKind, threshold: number): boolean {
  const { min, max, integer } = THRESHOLD_BOUNDS[kind];
  return threshold > min && threshold <= max && (!integer || Number.isInteger(threshold));
}

export interface AlertRuleRow {
  id: number;
  monitor_id: number;
  kind: MonitorAlertKind;
  network: string | null;
  threshold: number;
  breached_networks: string;
  last_fired_at: Date | null;
  created_by: number | null;
  created_at: Date;
}

/** Something for the rule's team and the entity's webhooks: a rule that became breached on a network. */
export interface MonitorAlert {
  rule: AlertRuleRow;
  monitor: Pick<MonitorRow, 'id' | 'entity_id' | 'name'>;
  network: string;
  /** What was compared, in words (Portuguese) and in numbers. */
  summary: string;
  measured: { value: number; reference: number };
}

/** Where an alert goes besides the team's notifications (the entity's outbound webhooks). */
export interface AlertListener {
  (alert: MonitorAlert): Promise<void>;
}

type Snapshot = Pick<SnapshotRow, 'taken_at' | 'followers' | 'posts' | 'mentions'>;

export class MonitorAlerts {
  readonly Rule: ModelStatic<Model<AlertRuleRow, Partial<AlertRuleRow>>>;
  private listeners: AlertListener[] = [];

  constructor(
    private readonly sequelize: Sequelize,
    private readonly notifications: Notifications,
    private readonly logger: Logger,
  ) {
    this.Rule = sequelize.define<Model<AlertRuleRow, Partial<AlertRuleRow>>>(
      'MonitorAlertRule',
      {
        id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
        monitor_id: DataTypes.INTEGER,
        kind: DataTypes.STRING(20),
        network: DataTypes.STRING(50),
        threshold: DataTypes.DOUBLE,
        breached_networks: DataTypes.STRING(500),
        last_fired_at: DataTypes.DATE,
        created_by: DataTypes.INTEGER,
        created_at: DataTypes.DATE,
      },
      { tableName: 'monitor_alert_rules', timestamps: false },
    );
  }

  /** Also hands every alert to `listener` (the outbound webhooks). */
  onAlert(listener: AlertListener): void {
    this.listeners.push(listener);
  }

  async list(monitorId: number): Promise<AlertRuleRow[]> {
    return (await this.Rule.findAll({ where: { monitor_id: monitorId }, order: [['id', 'ASC']], raw: true })) as unknown as AlertRuleRow[];
  }

  async count(monitorId: number): Promise<number> {
    return this.Rule.count({ where: { monitor_id: monitorId } });
  }

  async byId(id: number): Promise<AlertRuleRow | undefined> {
    return ((await this.Rule.findByPk(id, { raw: true })) as unknown as AlertRuleRow | null) ?? undefined;
  }

  /** Adds a rule; `max_rules` when the monitor has MAX_RULES_PER_MONITOR already (checked under the monitor's lock). */
  async add(rule: Pick<AlertRuleRow, 'monitor_id' | 'kind' | 'network' | 'threshold' | 'created_by'>, now = new Date()): Promise<AlertRuleRow | 'max_rules'> {
    return withLockedTransaction(this.sequelize, [lockOf(rule.monitor_id)], async (transaction) => {
      if ((await this.Rule.count({ where: { monitor_id: rule.monitor_id }, transaction })) >= MAX_RULES_PER_MONITOR) return 'max_rules';
      const row = await this.Rule.create({ ...rule, breached_networks: '', last_fired_at: null, created_at: now }, { transaction });
      return row.get({ plain: true });
    });
  }

  async remove(id: number): Promise<void> {
    await this.Rule.destroy({ where: { id } });
  }

  /**
   * Checks the monitor's rules against its newest snapshots (called once snapshots were recorded), and
   * fires the alerts of the rules that became breached, after the rules' new state is committed.
   */
  async check(monitorId: number, monitorOf: (id: number) => Promise<Pick<MonitorRow, 'id' | 'entity_id' | 'name'> | undefined>, now = new Date()): Promise<MonitorAlert[]> {
    try {
      // Most monitors have no rule: their imports read nothing more, take no lock and open no transaction.
      if ((await this.count(monitorId)) === 0) return [];
      const monitor = await monitorOf(monitorId);
      if (!monitor) return [];
      const alerts = await withLockedTransaction(this.sequelize, [lockOf(monitor.id)], (transaction) => this.evaluate(monitor, now, transaction));
      for (const alert of alerts) await this.fire(alert);
      return alerts;
    } catch (error) {
      // The snapshots are stored; an alert that could not be checked must not fail their delivery.
      this.logger.error({ err: error, monitor: monitorId }, 'monitor alert rules could not be checked');
      return [];
    }
  }

  private async evaluate(monitor: Pick<MonitorRow, 'id' | 'entity_id' | 'name'>, now: Date, transaction: Transaction): Promise<MonitorAlert[]> {
    const rules = (await this.Rule.findAll({ where: { monitor_id: monitor.id }, raw: true, transaction })) as unknown as AlertRuleRow[];
    if (rules.length === 0) return [];
    const networks = await this.networksWithSnapshots(monitor.id, transaction);
    const alerts: MonitorAlert[] = [];
    for (const rule of rules) {
      const breached = new Set<string>();
      const previously = new Set(rule.breached_networks ? rule.breached_networks.split(',') : []);
      for (const network of rule.network ? [rule.network] : networks) {
        const breach = await this.breachOf(rule, monitor.id, network, transaction);
        if (!breach) continue;
        breached.add(network);
        if (!previously.has(network)) alerts.push({ rule, monitor, network, ...breach });
      }
      const fired = alerts.some((alert) => alert.rule === rule);
      const breachedNetworks = [...breached].sort().join(',');
      if (breachedNetworks !== rule.breached_networks || fired) {
        await this.Rule.update({ breached_networks: breachedNetworks, ...(fired ? { last_fired_at: now } : {}) }, { where: { id: rule.id }, transaction });
        Object.assign(rule, { breached_networks: breachedNetworks, ...(fired ? { last_fired_at: now } : {}) });
      }
    }
    return alerts;
  }

  /** Whether the newest snapshot of `network` breaches the rule, with what was compared. */
  private async breachOf(rule: AlertRuleRow, monitorId: number, network: string, transaction: Transaction): Promise<Pick<MonitorAlert, 'summary' | 'measured'> | undefined> {
    const newest = await this.newestSnapshot(monitorId, network, undefined, transaction);
    if (!newest) return undefined;
    const takenAt = new Date(newest.taken_at).getTime();
    const format = (value: number) => value.toLocaleString('pt-BR', { maximumFractionDigits: 1 });
    switch (rule.kind) {
      case 'followers_drop': {
        const before = await this.newestSnapshot(monitorId, network, new Date(takenAt - DAY_MS), transaction);
        const [now, then] = [Number(newest.followers), Number(before?.followers ?? 0)];
        if (!before || then <= 0) return undefined;
        const drop = ((then - now) / then) * 100;
        if (drop < rule.threshold) return undefined;
        return { summary: `os seguidores no ${network} caíram ${format(drop)}% em um dia (${format(then)} para ${format(now)}), acima do limite de ${format(rule.threshold)}%`, measured: { value: now, reference: then } };
      }
      case 'mentions_spike': {
        const average = await this.averageMentions(monitorId, network, new Date(takenAt - MENTIONS_WINDOW_MS), new Date(takenAt), transaction);
        const mentions = Number(newest.mentions);
        if (!average || mentions < rule.threshold * average) return undefined;
        // Multiples to two decimals: to one, 1.18 against a limit of 1.15 read as "1,2 vezes ... o limite é 1,2 vezes".
        const multiple = (value: number) => value.toLocaleString('pt-BR', { maximumFractionDigits: 2 });
        return { summary: `${format(mentions)} menções no ${network}, ${multiple(mentions / average)} vezes a média dos 7 dias anteriores (${format(average)}); o limite é ${multiple(rule.threshold)} vezes`, measured: { value: mentions, reference: average } };
      }
      case 'profile_inactive': {
        const before = await this.newestSnapshot(monitorId, network, new Date(takenAt - rule.threshold * DAY_MS), transaction);
        if (!before || Number(newest.posts) > Number(before.posts)) return undefined;
        return { summary: `nenhuma publicação nova no ${network} em ${format(rule.threshold)} dias (${format(Number(newest.posts))} publicações)`, measured: { value: Number(newest.posts), reference: Number(before.posts) } };
      }
    }
  }

  /** The network's newest snapshot, or its newest taken at `notAfter` or before. */
  private async newestSnapshot(monitorId: number, network: string, notAfter: Date | undefined, transaction: Transaction): Promise<Snapshot | undefined> {
    const [row] = await this.sequelize.query<Snapshot>(
      `SELECT taken_at, followers, posts, mentions FROM metric_snapshots WHERE monitor_id = ? AND network = ?${notAfter ? ' AND taken_at <= ?' : ''} ORDER BY taken_at DESC LIMIT 1`,
      { replacements: [monitorId, network, ...(notAfter ? [notAfter] : [])], type: QueryTypes.SELECT, transaction },
    );
    return row;
  }

  private async averageMentions(monitorId: number, network: string, from: Date, before: Date, transaction: Transaction): Promise<number> {
    const [row] = await this.sequelize.query<{ average: number | string | null }>(
      'SELECT AVG(mentions) AS average FROM metric_snapshots WHERE monitor_id = ? AND network = ? AND taken_at >= ? AND taken_at < ?',
      { replacements: [monitorId, network, from, before], type: QueryTypes.SELECT, transaction },
    );
    return Number(row?.average ?? 0);
  }

  private async networksWithSnapshots(monitorId: number, transaction: Transaction): Promise<string[]> {
    const rows = await this.sequelize.query<{ network: string }>('SELECT DISTINCT network FROM metric_snapshots WHERE monitor_id = ? ORDER BY network', {
      replacements: [monitorId],
      type: QueryTypes.SELECT,
      transaction,
    });
    return rows.map((row) => row.network);
  }

  private async fire(alert: MonitorAlert): Promise<void> {
    const members = await this.notifications.teamMembers(alert.monitor.entity_id);
    await this.notifications.notify(members, alertNotice(alert));
    for (const listener of this.listeners) {
      await listener(alert).catch((error: unknown) => this.logger.error({ err: error, rule: alert.rule.id }, 'a monitor alert could not be passed on'));
    }
  }
}

const TITLES: Record<MonitorAlertKind, string> = {
  followers_drop: 'seguidores em queda',
  mentions_spike: 'pico de menções',
  profile_inactive: 'perfil inativo',
};

function alertNotice(alert: MonitorAlert): Notice {
  return {
    type: 'monitor_alert',
    title: `Alerta: ${TITLES[alert.rule.kind]} (${alert.network})`,
    body: `Monitor ${alert.monitor.name}: ${alert.summary}.`,
    entityId: alert.monitor.entity_id,
    subject: { kind: 'monitor', id: alert.monitor.id },
  };
}

/** A rule as the contract shows it. */
export function alertRuleView(row: AlertRuleRow): MonitorAlertRule {
  return {
    id: row.id,
    monitor_id: row.monitor_id,
    kind: row.kind,
    network: row.network,
    threshold: Number(row.threshold),
    breached: row.breached_networks !== '',
    last_fired_at: row.last_fired_at ? new Date(row.last_fired_at).toISOString() : null,
    created_at: new Date(row.created_at).toISOString(),
  };
}

function lockOf(monitorId: number): string {
  return `monitor-alerts:${monitorId}`;
}
