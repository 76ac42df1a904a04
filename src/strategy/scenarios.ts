/**
 * Scenario requests and their states (the contract's ScenarioState):
 *   pending -> approved -> running -> completed | failed, or pending -> rejected.
 * Every change of state is a conditional update (`WHERE state = <the state it leaves>`), so two approvals
 * racing, or a run racing a rejection, cannot both win: the loser sees the state the winner left.
 */
import { Op } from 'sequelize';
import type { components } from '../../sdk/schema.js';
import { asDate, asNumber, readerOf } from '../db/reader.js';
import type { TeamRole } from '../entities/models.js';
import type { ScenarioProjection } from './projection.js';
import type { ScenarioEntityRow, ScenarioModels, ScenarioRow, ScenarioState } from './models.js';

export type ScenarioRequest = components['schemas']['ScenarioRequest'];

export interface NewScenario {
  monitorId: number;
  entityIds: number[];
  horizonDays: number;
  requestedBy: number;
}

export interface Decision {
  deciderId: number;
  now?: Date;
}

export class ScenarioStore {
  constructor(private readonly models: ScenarioModels) {}

  async create(scenario: NewScenario, now = new Date()): Promise<ScenarioRequest> {
    const id = await this.models.Scenario.sequelize!.transaction(async (transaction) => {
      const row = await this.models.Scenario.create(
        { monitor_id: scenario.monitorId, horizon_days: scenario.horizonDays, state: 'pending', requested_by: scenario.requestedBy, created_at: now, updated_at: now },
        { transaction },
      );
      const scenarioId = Number(row.get('id'));
      await this.models.ScenarioEntity.bulkCreate(
        scenario.entityIds.map((entityId, position) => ({ scenario_id: scenarioId, position, entity_id: entityId })),
        { transaction },
      );
      return scenarioId;
    });
    return (await this.byId(id))!;
  }

  async byId(id: number): Promise<ScenarioRequest | undefined> {
    const row = (await this.models.Scenario.findByPk(id, { raw: true })) as ScenarioRow | null;
    return row ? (await this.views([row]))[0] : undefined;
  }

  /** Which of these ids are requests of the monitor (ids of other monitors are left out). */
  async idsOnMonitor(monitorId: number, ids: number[]): Promise<Set<number>> {
    const rows = (await this.models.Scenario.findAll({ attributes: ['id'], where: { monitor_id: monitorId, id: { [Op.in]: ids } }, raw: true })) as unknown as ScenarioRow[];
    return new Set(rows.map((row) => row.id));
  }

  /** A page of the monitor's requests, newest first, optionally in one state. */
  async page(monitorId: number, state: ScenarioState | undefined, page: number, pageSize: number): Promise<{ total: number; requests: ScenarioRequest[] }> {
    const { total, requests } = await this.pageFor({ id: null, isAdmin: true }, monitorId, state, page, pageSize);
    return { total, requests };
  }

  /**
   * A page of the monitor's requests as `page` gives it, read with the monitor's entity and the viewer's
   * role in its team (null where they have none), for the access check: `monitor` is undefined when there
   * is no such monitor, and the requests stay empty unless the viewer is in the team or a platform admin.
   * One query through a Reader: the monitor and the viewer's membership, the page (with each request's
   * entities, one row each) and the total as a scalar subquery, whether the page has rows or not.
   */
  async pageFor(viewer: { id: number | null; isAdmin: boolean }, monitorId: number, state: ScenarioState | undefined, page: number, pageSize: number): Promise<ScenarioPage> {
    const reader = readerOf(this.models.Scenario.sequelize!);
    const stateValue = state === undefined ? [] : [state];
    const rows = await reader.rows<PageRow>(state === undefined ? PAGE_QUERY.all : PAGE_QUERY.inState, [
      ...stateValue,
      viewer.id,
      monitorId,
      ...stateValue,
      pageSize,
      (page - 1) * pageSize,
      viewer.isAdmin,
      monitorId,
    ]);
    const first = rows[0];
    if (!first) return { monitor: undefined, total: 0, requests: [] };
    const monitor = { entity_id: Number(first.monitor_entity_id), role: first.member_role };
    return { monitor, total: asNumber(first.total), requests: requestsOf(rows) };
  }

  /** pending -> approved; false when the request was not pending any more. */
  async approve(id: number, { deciderId, now = new Date() }: Decision): Promise<boolean> {
    return this.move(id, 'pending', { state: 'approved', decided_by: deciderId, decided_at: now, updated_at: now });
  }

  /** approved -> pending, when its run could not be queued: the approval is undone rather than left without a run. */
  async undoApproval(id: number): Promise<void> {
    await this.move(id, 'approved', { state: 'pending', decided_by: null, decided_at: null, updated_at: new Date() });
  }

  async setJob(id: number, jobId: string): Promise<void> {
    await this.models.Scenario.update({ job_id: jobId }, { where: { id } });
  }

  /** pending -> rejected, keeping the reason; false when the request was not pending any more. */
  async reject(id: number, reason: string | null, { deciderId, now = new Date() }: Decision): Promise<boolean> {
    return this.move(id, 'pending', { state: 'rejected', decided_by: deciderId, decided_at: now, rejection_reason: reason, updated_at: now });
  }

  /** approved -> running; also true when it is already running (a retry of an interrupted run). */
  async start(id: number): Promise<boolean> {
    return this.move(id, ['approved', 'running'], { state: 'running', updated_at: new Date() });
  }

  async complete(id: number, projection: ScenarioProjection): Promise<void> {
    await this.move(id, 'running', { state: 'completed', projection: JSON.stringify(projection), failure_reason: null, updated_at: new Date() });
  }

  async fail(id: number, reason: string): Promise<void> {
    await this.move(id, 'running', { state: 'failed', failure_reason: reason, updated_at: new Date() });
  }

  private async move(id: number, from: ScenarioState | ScenarioState[], change: Partial<ScenarioRow>): Promise<boolean> {
    const [moved] = await this.models.Scenario.update(change, { where: { id, state: Array.isArray(from) ? { [Op.in]: from } : from } });
    return moved > 0;
  }

  /** Rows as the contract shows them, with their entities in the order asked. */
  private async views(rows: ScenarioRow[]): Promise<ScenarioRequest[]> {
    if (rows.length === 0) return [];
    const links = (await this.models.ScenarioEntity.findAll({
      where: { scenario_id: { [Op.in]: rows.map((row) => row.id) } },
      order: [['scenario_id', 'ASC'], ['position', 'ASC']],
      raw: true,
    })) as unknown as ScenarioEntityRow[];
    return rows.map((row) => requestOf(row, links.filter((link) => link.scenario_id === row.id).map((link) => link.entity_id)));
  }
}

export interface ScenarioPage {
  /** The monitor's entity and the viewer's role in its team; undefined when there is no such monitor. */
  monitor: { entity_id: number; role: TeamRole | null } | undefined;
  total: number;
  requests: ScenarioRequest[];
}

/** A row of `PAGE_QUERY`: the monitor, the viewer's role and the total, then a request of the page (null when none) and one of its entities. */
type PageRow = { [Column in keyof ScenarioRow]: ScenarioRow[Column] | string | null } & {
  monitor_entity_id: unknown;
  member_role: TeamRole | null;
  total: unknown;
  entity_id: number | null;
};

/**
 * See `pageFor`. The page is taken in a derived table, so LIMIT counts requests, not their entities; the
 * LEFT JOINs keep the monitor's row when the page is empty or the viewer may not read it (the page joins
 * only for a member of the team or a platform admin). The monitor id is cast to BIGINT: PostgreSQL would
 * type the parameter as the column's INTEGER and refuse an id past 2^31, which names no monitor.
 */
function pageQuery(withState: boolean): string {
  const inState = (alias: string) => (withState ? `AND ${alias}.state = ?` : '');
  return `SELECT mo.entity_id AS monitor_entity_id, m.role AS member_role,
         (SELECT COUNT(*) FROM scenario_requests c WHERE c.monitor_id = mo.id ${inState('c')}) AS total,
         s.id, s.monitor_id, s.horizon_days, s.state, s.requested_by, s.decided_by, s.decided_at, s.rejection_reason,
         s.job_id, s.failure_reason, s.projection, s.created_at, s.updated_at, se.entity_id AS entity_id
    FROM social_monitors mo
    LEFT JOIN entity_members m ON m.entity_id = mo.entity_id AND m.user_id = ?
    LEFT JOIN (SELECT r.* FROM scenario_requests r WHERE r.monitor_id = CAST(? AS BIGINT) ${inState('r')}
                ORDER BY r.created_at DESC, r.id DESC LIMIT ? OFFSET ?) s
      ON m.role IS NOT NULL OR ?
    LEFT JOIN scenario_entities se ON se.scenario_id = s.id
   WHERE mo.id = CAST(? AS BIGINT)
   ORDER BY s.created_at DESC, s.id DESC, se."position"`;
}

const PAGE_QUERY = { all: pageQuery(false), inState: pageQuery(true) };

/** The requests of `PAGE_QUERY`'s rows, in their order, each with its entities. */
function requestsOf(rows: PageRow[]): ScenarioRequest[] {
  const requests: ScenarioRequest[] = [];
  let last: ScenarioRequest | undefined;
  for (const row of rows) {
    if (row.id === null) continue;
    if (last?.id !== Number(row.id)) requests.push((last = requestOf(row, [])));
    if (row.entity_id !== null) last.entity_ids.push(Number(row.entity_id));
  }
  return requests;
}

/** A row as the contract shows it, from Sequelize or a Reader (timestamps as text on SQLite). */
function requestOf(row: { [Column in keyof ScenarioRow]: ScenarioRow[Column] | string | null }, entityIds: number[]): ScenarioRequest {
  return {
    id: Number(row.id),
    monitor_id: Number(row.monitor_id),
    entity_ids: entityIds,
    horizon_days: Number(row.horizon_days),
    state: row.state as ScenarioState,
    requested_by: row.requested_by === null ? null : Number(row.requested_by),
    decided_by: row.decided_by === null ? null : Number(row.decided_by),
    decided_at: row.decided_at ? asDate(row.decided_at).toISOString() : null,
    rejection_reason: row.rejection_reason as string | null,
    failure_reason: row.failure_reason as string | null,
    projection: row.state === 'completed' && row.projection ? (JSON.parse(row.projection as string) as ScenarioProjection) : null,
    created_at: asDate(row.created_at).toISOString(),
    updated_at: asDate(row.updated_at).toISOString(),
  };
}
