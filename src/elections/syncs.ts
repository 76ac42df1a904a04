/**
 * Syncs with the elections panel. A sync is a row (its state, tries, outcome, and the user's panel token
 * sealed until it ends) and a background job that sends the user's candidates. One sync per user is
 * under way at a time: asking again while one is queued, running or waiting for a retry gets that one.
 */
import { randomUUID } from 'node:crypto';
import { DataTypes, Op, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import type { components } from '../../sdk/schema.js';
import { withLocks } from '../db/locks.js';
import type { Entities } from '../entities/index.js';
import type { CandidateEntity } from '../entities/models.js';
import type { JobAttempt, JobQueue } from '../jobs/index.js';
import type { Logger } from '../logger.js';
import type { SecretBox } from '../security/secret-box.js';
import { PanelError, type CandidateCard, type ElectionsPanel } from './panel.js';

export type Job = components['schemas']['Job'];

export const PANEL_SYNC_JOB = 'elections-panel-sync';
const SYNC_RETRIES = 4;
const UNDER_WAY: Array<Job['state']> = ['queued', 'running', 'failed'];

interface SyncRow {
  id: string;
  user_id: number;
  state: Job['state'];
  attempts: number;
  token_sealed: string | null;
  entities_sent: number | null;
  panel_reference: string | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface SyncDependencies {
  jobs: JobQueue;
  entities: Entities;
  logger: Logger;
  /** Unset when ELECTIONS_PANEL_URL is not configured. */
  panel: ElectionsPanel | undefined;
  /** Unset when SECRETS_KEY is not configured. */
  box: SecretBox | undefined;
}

export class ElectionsPanelSyncs {
  private readonly model: ModelStatic<Model<SyncRow, Partial<SyncRow>>>;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly dependencies: SyncDependencies,
  ) {
    this.model = sequelize.define<Model<SyncRow, Partial<SyncRow>>>(
      'ElectionsPanelSync',
      {
        id: { type: DataTypes.STRING(36), primaryKey: true },
        user_id: DataTypes.INTEGER,
        state: DataTypes.STRING(20),
        attempts: DataTypes.INTEGER,
        token_sealed: DataTypes.TEXT,
        entities_sent: DataTypes.INTEGER,
        panel_reference: DataTypes.STRING(255),
        error: DataTypes.TEXT,
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      { tableName: 'elections_panel_syncs', timestamps: false },
    );
  }

  /** The variables this deployment lacks to sync; empty when it can. */
  missingSettings(): string[] {
    return [...(this.dependencies.panel ? [] : ['ELECTIONS_PANEL_URL']), ...(this.dependencies.box ? [] : ['SECRETS_KEY'])];
  }

  async registerJobs(): Promise<void> {
    await this.dependencies.jobs.register(PANEL_SYNC_JOB, (data, job) => this.run((data as { sync_id: string }).sync_id, job), { retryLimit: SYNC_RETRIES });
  }

  /** Queues a sync for the user, or gives the one already under way (`created` false). */
  async request(userId: number, token: string): Promise<{ created: boolean; job: Job }> {
    const box = this.dependencies.box;
    if (!box || !this.dependencies.panel) throw new Error(`Syncs need ${this.missingSettings().join(' and ')}`);
    const outcome = await withLocks(this.sequelize, [`elections-panel-sync:${userId}`], async (transaction) => {
      const underWay = (await this.model.findOne({ where: { user_id: userId, state: { [Op.in]: UNDER_WAY } }, order: [['created_at', 'DESC']], raw: true, transaction })) as SyncRow | null;
      if (underWay) return { created: false, row: underWay };
      const now = new Date();
      const row: SyncRow = { id: randomUUID(), user_id: userId, state: 'queued', attempts: 0, token_sealed: box.seal(token), entities_sent: null, panel_reference: null, error: null, created_at: now, updated_at: now };
      await this.model.create(row, { transaction });
      return { created: true, row };
    });
    // Queued once the row is committed, so the job always finds it. A sync that cannot be queued is
    // closed at once: left `queued`, it would stand in for every later request of the user.
    if (outcome.created) {
      try {
        await this.dependencies.jobs.enqueue(PANEL_SYNC_JOB, { sync_id: outcome.row.id });
      } catch (error) {
        await this.finish(outcome.row.id, { state: 'dead', error: 'The sync could not be queued; ask again.' });
        throw error;
      }
    }
    return { created: outcome.created, job: viewOf(outcome.row) };
  }

  /** The sync, if the caller asked for it or is an admin. */
  async readableBy(id: string, caller: { id: number; is_admin: boolean }): Promise<Job | undefined> {
    const row = (await this.model.findByPk(id, { raw: true })) as SyncRow | null;
    return row && (caller.is_admin || row.user_id === caller.id) ? viewOf(row) : undefined;
  }

  /**
   * The job: sends the user's candidate cards with their token. A refusal that would repeat (the token
   * is refused) ends the sync at once without a retry; any other failure is retried by the queue until
   * its last try. The token is erased when the sync ends, either way.
   */
  async run(id: string, job: JobAttempt): Promise<{ state: Job['state'] }> {
    const { panel, box } = this.dependencies;
    const row = (await this.model.findByPk(id, { raw: true })) as SyncRow | null;
    if (!row || !row.token_sealed || row.state === 'completed' || row.state === 'dead') return { state: row?.state ?? 'dead' };
    if (!panel || !box) throw new Error(`Syncs need ${this.missingSettings().join(' and ')}`);
    await this.model.update({ state: 'running', attempts: row.attempts + 1, updated_at: new Date() }, { where: { id } });
    try {
      const cards = await this.cardsOf(row.user_id);
      const receipt = await panel.sendCandidates(box.open(row.token_sealed), id, cards);
      await this.finish(id, { state: 'completed', entities_sent: receipt.received, panel_reference: receipt.batchId, error: null });
      return { state: 'completed' };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const permanent = error instanceof PanelError && error.permanent;
      if (permanent || job.lastAttempt) {
        await this.finish(id, { state: 'dead', error: reason });
        this.dependencies.logger.warn({ sync_id: id, reason }, 'elections panel sync failed for good');
        if (permanent) return { state: 'dead' }; // nothing for the queue to retry
      } else {
        await this.model.update({ state: 'failed', error: reason, updated_at: new Date() }, { where: { id } });
      }
      throw error;
    }
  }

  private async finish(id: string, outcome: Partial<SyncRow>): Promise<void> {
    await this.model.update({ ...outcome, token_sealed: null, updated_at: new Date() }, { where: { id } });
  }

  /** The public cards of the candidates in the user's teams. */
  private async cardsOf(userId: number): Promise<CandidateCard[]> {
    const { teams, models, store } = this.dependencies.entities;
    const ids = await teams.entityIdsOf(userId);
    const candidates = (await models.Entity.findAll({ attributes: ['id'], where: { id: { [Op.in]: ids }, tp: 'candidato' }, order: [['id', 'ASC']], raw: true })) as unknown as Array<{ id: number }>;
    const cards: CandidateCard[] = [];
    for (const { id } of candidates) {
      const stored = await store.load(id);
      if (stored) cards.push(cardOf(id, stored.entity));
    }
    return cards;
  }
}

function cardOf(id: number, entity: CandidateEntity): CandidateCard {
  return {
    palanque_id: id,
    name: entity.nome ?? null,
    ballot_name: entity.nm_urna ?? null,
    ballot_number: entity.nr_urna ?? null,
    party: entity.partido ?? null,
    office: entity.position ?? null,
    state: entity.estado_disputa ?? null,
    municipality: entity.municipio_disputa ?? null,
    reelection: entity.reeleicao ?? null,
    profiles: (entity.referencia_social?.social_network ?? []).map((profile) => ({
      network: profile.nm_rede,
      username: profile.username ?? null,
      link: profile.link ?? null,
    })),
  };
}

function viewOf(row: SyncRow): Job {
  const completed = row.state === 'completed' && row.panel_reference !== null;
  return {
    id: row.id,
    kind: 'elections_panel_sync',
    state: row.state,
    attempts: Number(row.attempts),
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
    error: row.error,
    result: completed ? { entities_sent: Number(row.entities_sent ?? 0), panel_reference: row.panel_reference! } : null,
  };
}
