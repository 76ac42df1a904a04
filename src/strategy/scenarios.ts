/**
 * Scenario requests and their states (the contract's ScenarioState):
 *   pending -> approved -> running -> completed | failed, or pending -> rejected.
 * Every change of state is a conditional update (`WHERE state = <the state it leaves>`), so two approvals
 * racing, or a run racing a rejection, cannot both win: the loser sees the state the winner left.
 */
import { Op } from 'sequelize';
import type { components } from '../../sdk/schema.js';
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
    const where = { monitor_id: monitorId, ...(state ? { state } : {}) };
    const { count, rows } = await this.models.Scenario.findAndCountAll({
      where,
      order: [['created_at', 'DESC'], ['id', 'DESC']],
      limit: pageSize,
      offset: (page - 1) * pageSize,
      raw: true,
    });
    return { total: count, requests: await this.views(rows as unknown as ScenarioRow[]) };
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
    return rows.map((row) => ({
      id: row.id,
      monitor_id: row.monitor_id,
      entity_ids: links.filter((link) => link.scenario_id === row.id).map((link) => link.entity_id),
      horizon_days: row.horizon_days,
      state: row.state,
      requested_by: row.requested_by,
      decided_by: row.decided_by,
      decided_at: row.decided_at ? new Date(row.decided_at).toISOString() : null,
      rejection_reason: row.rejection_reason,
      failure_reason: row.failure_reason,
      projection: row.state === 'completed' && row.projection ? (JSON.parse(row.projection) as ScenarioProjection) : null,
      created_at: new Date(row.created_at).toISOString(),
      updated_at: new Date(row.updated_at).toISOString(),
    }));
  }
}
