/**
 * The social-monitor domain: models, the store, and access to a monitor through its entity's team. A
 * monitor outside the caller's teams is 404 like a missing one, without naming its entity.
 */
import type { Sequelize } from 'sequelize';
import { asDate, readerOf } from '../db/reader.js';
import type { Caller } from '../http/auth.js';
import { notFound, type ErrorDetail } from '../http/errors.js';
import type { TeamRole } from '../entities/models.js';
import type { Permission, Teams } from '../entities/teams.js';
import { defineMonitorModels, type MonitorModels, type MonitorRow } from './models.js';
import { MonitorStore, type SocialMonitor, type Viewer } from './store.js';
import { MonitorAlerts } from './alerts.js';
import type { Notifications } from '../notifications/notifications.js';
import type { Logger } from '../logger.js';

export interface MonitorAccess {
  monitor: MonitorRow;
  role: TeamRole;
}

type Where = Pick<ErrorDetail, 'location' | 'field'>;

export class Monitors {
  readonly store: MonitorStore;
  readonly alerts: MonitorAlerts;

  constructor(
    readonly models: MonitorModels,
    private readonly teams: Teams,
    notifications: Notifications,
    logger: Logger,
  ) {
    this.store = new MonitorStore(models);
    this.alerts = new MonitorAlerts(models.Monitor.sequelize!, notifications, logger);
    // Snapshots that change something are checked against the monitor's alert rules.
    this.store.onRecorded(async (monitorId) => {
      await this.alerts.check(monitorId, (id) => this.store.byId(id));
    });
  }

  /**
   * The monitor and the caller's role on its entity, if the role allows `permission`; `where` names the
   * parameter. One query through a Reader: the monitor with the caller's membership of its entity's team.
   */
  async access(caller: Caller, monitorId: number, permission: Permission, where: Where): Promise<MonitorAccess> {
    const found = await readerOf(this.models.Monitor.sequelize!).row<MonitorRow & { role: TeamRole | null }>(
      `SELECT mo.id, mo.entity_id, mo.name, mo.name_key, mo.created_by, mo.created_at, m.role AS role
         FROM social_monitors mo LEFT JOIN entity_members m ON m.entity_id = mo.entity_id AND m.user_id = ?
        WHERE mo.id = CAST(? AS BIGINT)`, // BIGINT: an id past 2^31 names no monitor (PostgreSQL would refuse it as an INTEGER)
      [caller.user.id, monitorId],
    );
    const role = this.allowed(caller, monitorId, found, permission, where);
    const { role: _, ...monitor } = found!;
    return { monitor: { ...monitor, created_at: asDate(monitor.created_at) }, role };
  }

  /**
   * The caller's role on a monitor found with their membership role (`found.role`, null where they have
   * none), if it allows `permission`: 404 when the monitor is missing or outside the caller's teams, 403
   * when the role may not do this. The same rule as Teams.access.
   */
  allowed(caller: Caller, monitorId: number, found: { role: TeamRole | null } | undefined, permission: Permission, where: Where): TeamRole {
    const role = found ? this.teams.roleFrom(caller, found.role) : undefined;
    if (!role) {
      throw notFound(`There is no monitor ${monitorId} in your teams.`, [
        { ...where, rule: 'in_your_teams', message: 'must be a monitor of one of your teams', value: monitorId },
      ]);
    }
    this.teams.require(caller, role, permission);
    return role;
  }

  /** Monitor `monitorId` as the contract shows it, if the caller may read it (404 otherwise, as `access`). */
  async view(caller: Caller, monitorId: number, where: Where): Promise<SocialMonitor> {
    const [found] = await this.store.viewsIn(viewerOf(caller), { monitorId });
    this.allowed(caller, monitorId, found, 'read', where);
    return found!.view;
  }

  /** The monitors the caller may read as the contract shows them: those of the caller's teams, every one for platform admins. */
  async readable(caller: Caller): Promise<SocialMonitor[]> {
    return (await this.store.viewsIn(viewerOf(caller), 'readable')).map(({ view }) => view);
  }
}

export function viewerOf(caller: Caller): Viewer {
  return { id: caller.user.id, isAdmin: Boolean(caller.user.is_admin) };
}

export function createMonitors(sequelize: Sequelize, teams: Teams, notifications: Notifications, logger: Logger): Monitors {
  return new Monitors(defineMonitorModels(sequelize), teams, notifications, logger);
}
