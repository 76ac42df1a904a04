/**
 * The strategy domain: scenario requests, their approval, and the background runs that compute their
 * projections. Approving queues a `scenario-run` job; the job moves the request to running, gathers the
 * stored data (projection.ts says which), and stores the projection or the reason it could not be made.
 * A scenario's entities must stay comparable for its requester (entities/guardianship.ts): the run checks
 * them again, and a stored projection is shown only while they still are (`shown`).
 */
import { Op, type Sequelize } from 'sequelize';
import type { Entities } from '../entities/index.js';
import type { EntityRow, MarketshareRow } from '../entities/models.js';
import type { JobAttempt, JobQueue } from '../jobs/index.js';
import type { Logger } from '../logger.js';
import type { Monitors } from '../monitors/index.js';
import { defineScenarioModels } from './models.js';
import { project, ProjectionError, WINDOW_DAYS, type ProjectionInput } from './projection.js';
import { ScenarioStore, type ScenarioRequest } from './scenarios.js';

export const SCENARIO_RUN_JOB = 'scenario-run';

/** A run that fails for another reason than its data (the database went away) is tried this many more times. */
const RUN_RETRIES = 2;
const DAY_MS = 86_400_000;

export type ApprovalOutcome =
  | { scenario_id: number; outcome: 'approved'; job_id: string; scenario: ScenarioRequest }
  | { scenario_id: number; outcome: 'not_pending'; job_id: null; scenario: ScenarioRequest }
  | { scenario_id: number; outcome: 'not_found'; job_id: null; scenario: null };

export type RejectionOutcome =
  | { scenario_id: number; outcome: 'rejected' | 'not_pending'; scenario: ScenarioRequest }
  | { scenario_id: number; outcome: 'not_found'; scenario: null };

export class Strategy {
  private readonly finishedListeners: Array<(scenario: ScenarioRequest) => Promise<void>> = [];

  constructor(
    readonly scenarios: ScenarioStore,
    private readonly monitors: Monitors,
    private readonly entities: Entities,
    private readonly jobs: JobQueue,
    private readonly logger: Logger,
  ) {}

  /** Makes this process run the queued scenario runs. */
  async registerRuns(): Promise<void> {
    await this.jobs.register(SCENARIO_RUN_JOB, (data, job) => this.run((data as { scenario_id: number }).scenario_id, job), {
      retryLimit: RUN_RETRIES,
    });
  }

  /** Approves the monitor's pending requests among `ids` and queues a run for each; one outcome per id, in order. */
  async approve(monitorId: number, ids: number[], deciderId: number): Promise<ApprovalOutcome[]> {
    const found = await this.scenarios.idsOnMonitor(monitorId, ids);
    const outcomes: ApprovalOutcome[] = [];
    for (const id of ids) {
      if (!found.has(id)) {
        outcomes.push({ scenario_id: id, outcome: 'not_found', job_id: null, scenario: null });
      } else if (!(await this.scenarios.approve(id, { deciderId }))) {
        outcomes.push({ scenario_id: id, outcome: 'not_pending', job_id: null, scenario: await this.shownById(id) });
      } else {
        const jobId = await this.queueRun(id);
        outcomes.push({ scenario_id: id, outcome: 'approved', job_id: jobId, scenario: await this.shownById(id) });
      }
    }
    return outcomes;
  }

  async reject(monitorId: number, ids: number[], reason: string | null, deciderId: number): Promise<RejectionOutcome[]> {
    const found = await this.scenarios.idsOnMonitor(monitorId, ids);
    const outcomes: RejectionOutcome[] = [];
    for (const id of ids) {
      if (!found.has(id)) {
        outcomes.push({ scenario_id: id, outcome: 'not_found', scenario: null });
        continue;
      }
      const rejected = await this.scenarios.reject(id, reason, { deciderId });
      outcomes.push({ scenario_id: id, outcome: rejected ? 'rejected' : 'not_pending', scenario: await this.shownById(id) });
    }
    return outcomes;
  }

  /** Calls `listener` with each request whose run ended, completed or failed (its requester is notified). */
  onFinished(listener: (scenario: ScenarioRequest) => Promise<void>): void {
    this.finishedListeners.push(listener);
  }

  private async finished(id: number): Promise<void> {
    const scenario = await this.scenarios.byId(id);
    if (scenario) for (const listener of this.finishedListeners) await listener(scenario);
  }

  /** The job: runs the projection of request `id` and stores the projection or why it failed. */
  async run(id: number, job: JobAttempt): Promise<{ state: string }> {
    if (!(await this.scenarios.start(id))) {
      // Rejected or finished meanwhile, or deleted with its monitor: nothing to do.
      return { state: (await this.scenarios.byId(id))?.state ?? 'deleted' };
    }
    try {
      const scenario = (await this.scenarios.byId(id))!;
      const barred = await this.notComparable(scenario);
      if (barred !== undefined) {
        throw new ProjectionError(`Entity ${barred} may no longer be compared on this monitor: it is neither in the requester's teams nor watched by the monitor's entity.`);
      }
      await this.scenarios.complete(id, project(await this.inputsOf(scenario)));
      await this.finished(id);
      return { state: 'completed' };
    } catch (error) {
      if (error instanceof ProjectionError) {
        await this.scenarios.fail(id, error.message);
        await this.finished(id);
        return { state: 'failed' };
      }
      // Not the data's fault: let the queue retry, and say so on the request only when no retry follows.
      if (job.lastAttempt) {
        await this.scenarios.fail(id, `The run failed ${job.attempt} times; the last error: ${(error as Error).message}`);
        await this.finished(id);
      }
      this.logger.warn({ scenario_id: id, attempt: job.attempt, err: error }, 'scenario run failed');
      throw error;
    }
  }

  /**
   * The requests as they may be shown now: a completed projection that compares an entity its requester
   * may no longer compare on monitors of `monitorEntityId` is withheld, saying so (by the entity's id only).
   */
  async shown(requests: ScenarioRequest[], monitorEntityId: number): Promise<ScenarioRequest[]> {
    const comparable = await this.comparableByRequester(requests.filter((request) => request.projection !== null), monitorEntityId);
    return requests.map((request) => {
      if (request.projection === null) return request;
      const barred = request.entity_ids.find((id) => !comparable.get(request.requested_by)!.has(id));
      if (barred === undefined) return request;
      return { ...request, projection: null, failure_reason: `The projection is withheld: entity ${barred} may no longer be compared on this monitor.` };
    });
  }

  /**
   * Which of their requests' entities each requester may compare on monitors of `monitorEntityId`: one
   * check per requester, not per request (what a user may compare does not depend on the request).
   */
  private async comparableByRequester(requests: ScenarioRequest[], monitorEntityId: number): Promise<Map<number | null, Set<number>>> {
    const asked = new Map<number | null, Set<number>>();
    for (const request of requests) {
      const ids = asked.get(request.requested_by) ?? new Set<number>();
      for (const id of request.entity_ids) ids.add(id);
      asked.set(request.requested_by, ids);
    }
    const checked = await Promise.all(
      [...asked].map(async ([requester, ids]) => [requester, await this.entities.guardianship.comparable(requester, monitorEntityId, [...ids])] as const),
    );
    return new Map(checked);
  }

  private async shownById(id: number): Promise<ScenarioRequest> {
    const request = (await this.scenarios.byId(id))!;
    const monitor = await this.monitors.store.byId(request.monitor_id);
    return (await this.shown([request], monitor!.entity_id))[0]!;
  }

  /** The first of the request's entities its requester may no longer compare on its monitor, if any. */
  private async notComparable(request: ScenarioRequest): Promise<number | undefined> {
    const entityId = (await this.monitors.store.byId(request.monitor_id))!.entity_id;
    const comparable = await this.entities.guardianship.comparable(request.requested_by, entityId, request.entity_ids);
    return request.entity_ids.find((id) => !comparable.has(id));
  }

  /** Queues the run of a just-approved request; if the queue refuses, the approval is undone and the error surfaces. */
  private async queueRun(id: number): Promise<string> {
    try {
      const jobId = await this.jobs.enqueue(SCENARIO_RUN_JOB, { scenario_id: id });
      await this.scenarios.setJob(id, jobId);
      return jobId;
    } catch (error) {
      await this.scenarios.undoApproval(id);
      throw error;
    }
  }

  /** What the projection reads: each entity's name, marketshare entries and the snapshots of its monitors in the window. */
  private async inputsOf(scenario: ScenarioRequest): Promise<ProjectionInput> {
    const { Entity, Marketshare } = this.entities.models;
    const ids = scenario.entity_ids;
    const entities = (await Entity.findAll({ attributes: ['id', 'nome'], where: { id: { [Op.in]: ids } }, raw: true })) as unknown as EntityRow[];
    const shares = (await Marketshare.findAll({ where: { entity_id: { [Op.in]: ids } }, order: [['position', 'ASC']], raw: true })) as unknown as MarketshareRow[];
    const monitors = await this.monitors.store.ofEntities(ids);
    const monitorIds = monitors.map((monitor) => monitor.id);
    const asOf = await this.monitors.store.newestSnapshotTime(monitorIds);
    const snapshots = asOf ? await this.monitors.store.snapshotsBetween(monitorIds, new Date(asOf.getTime() - WINDOW_DAYS * DAY_MS), asOf) : [];
    const entityOfMonitor = new Map(monitors.map((monitor) => [monitor.id, monitor.entity_id]));
    return {
      horizonDays: scenario.horizon_days,
      asOf,
      entities: ids.map((entityId) => ({
        id: entityId,
        nome: entities.find((entity) => entity.id === entityId)?.nome ?? '',
        monitored: monitors.some((monitor) => monitor.entity_id === entityId),
        marketshare: shares.filter((share) => share.entity_id === entityId),
        snapshots: snapshots.filter((snapshot) => entityOfMonitor.get(snapshot.monitor_id) === entityId),
      })),
    };
  }
}

export function createStrategy(sequelize: Sequelize, dependencies: { monitors: Monitors; entities: Entities; jobs: JobQueue; logger: Logger }): Strategy {
  const { monitors, entities, jobs, logger } = dependencies;
  return new Strategy(new ScenarioStore(defineScenarioModels(sequelize)), monitors, entities, jobs, logger);
}
