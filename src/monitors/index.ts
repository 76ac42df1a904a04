/**
 * The social-monitor domain: models, the store, and access to a monitor through its entity's team. A
 * monitor outside the caller's teams is 404 like a missing one, without naming its entity.
 */
import type { Sequelize } from 'sequelize';
import type { Caller } from '../http/auth.js';
import { notFound, type ErrorDetail } from '../http/errors.js';
import type { TeamRole } from '../entities/models.js';
import type { Permission, Teams } from '../entities/teams.js';
import { defineMonitorModels, type MonitorModels, type MonitorRow } from './models.js';
import { MonitorStore } from './store.js';

export interface MonitorAccess {
  monitor: MonitorRow;
  role: TeamRole;
}

export class Monitors {
  readonly store: MonitorStore;

  constructor(
    readonly models: MonitorModels,
    private readonly teams: Teams,
  ) {
    this.store = new MonitorStore(models);
  }

  /** The monitor and the caller's role on its entity, if the role allows `permission`; `where` names the parameter. */
  async access(caller: Caller, monitorId: number, permission: Permission, where: Pick<ErrorDetail, 'location' | 'field'>): Promise<MonitorAccess> {
    const monitor = await this.store.byId(monitorId);
    const role = monitor ? await this.teams.roleOf(caller, monitor.entity_id) : undefined;
    if (!monitor || !role) {
      throw notFound(`There is no monitor ${monitorId} in your teams.`, [
        { ...where, rule: 'in_your_teams', message: 'must be a monitor of one of your teams', value: monitorId },
      ]);
    }
    this.teams.require(caller, role, permission);
    return { monitor, role };
  }

  /** The monitors the caller may read: those of the caller's teams, every one for platform admins. */
  async visibleTo(caller: Caller): Promise<MonitorRow[]> {
    return this.store.ofEntities(caller.user.is_admin ? undefined : await this.teams.entityIdsOf(caller.user.id));
  }
}

export function createMonitors(sequelize: Sequelize, teams: Teams): Monitors {
  return new Monitors(defineMonitorModels(sequelize), teams);
}
