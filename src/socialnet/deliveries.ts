/**
 * The webhook's seen deliveries: a delivery is processed at most once while its hash is kept. Every
 * delivery body is claimed by inserting its SHA-256 under a unique key, so of two copies arriving at the
 * same moment (on one instance or several) exactly one wins; a copy sent later, by the network retrying
 * or by someone replaying a recorded delivery with its valid signature, finds the hash and is ignored.
 * A claim whose processing fails is released, so the network's retry is processed; a claim left
 * unfinished by a process that died is taken over by the next copy after STALE_CLAIM_MS. Hashes are
 * purged once older than the replay window (SOCIALNET_REPLAY_WINDOW_SECONDS): past it, a replay is
 * processed again, and only the snapshots' change times (src/monitors/store.ts) keep it from undoing a
 * later correction.
 */
import { createHash } from 'node:crypto';
import { DataTypes, Op, UniqueConstraintError, type Model, type ModelStatic, type Sequelize } from 'sequelize';

interface DeliveryRow {
  body_hash: string;
  received_at: Date;
  processed_at: Date | null;
}

/** Longer than a request may run: a claim this old and unfinished was left by a process that died. */
const STALE_CLAIM_MS = 10 * 60_000;

export class SeenDeliveries {
  private readonly model: ModelStatic<Model<DeliveryRow, Partial<DeliveryRow>>>;

  constructor(sequelize: Sequelize) {
    this.model = sequelize.define<Model<DeliveryRow, Partial<DeliveryRow>>>(
      'SocialnetDelivery',
      { body_hash: { type: DataTypes.STRING(64), primaryKey: true }, received_at: DataTypes.DATE, processed_at: DataTypes.DATE },
      { tableName: 'socialnet_deliveries', timestamps: false },
    );
  }

  /**
   * Claims the delivery with these raw bytes for processing: its hash when this call won it (pass it to
   * `processed` or `release`), undefined when it was seen before or another copy is being processed.
   */
  async claim(rawBody: Buffer, now = new Date()): Promise<string | undefined> {
    const bodyHash = createHash('sha256').update(rawBody).digest('hex');
    try {
      await this.model.create({ body_hash: bodyHash, received_at: now, processed_at: null });
      return bodyHash;
    } catch (error) {
      if (!(error instanceof UniqueConstraintError)) throw error;
    }
    // One conditional update: of two copies taking over the same stale claim, one changes the row.
    const [takenOver] = await this.model.update(
      { received_at: now },
      { where: { body_hash: bodyHash, processed_at: null, received_at: { [Op.lt]: new Date(now.getTime() - STALE_CLAIM_MS) } } },
    );
    return takenOver === 1 ? bodyHash : undefined;
  }

  async processed(bodyHash: string, now = new Date()): Promise<void> {
    await this.model.update({ processed_at: now }, { where: { body_hash: bodyHash } });
  }

  /** Forgets an unfinished claim (its processing failed), so that the network's retry is processed. */
  async release(bodyHash: string): Promise<void> {
    await this.model.destroy({ where: { body_hash: bodyHash, processed_at: null } });
  }

  /** Deletes the hashes of deliveries received longer than `windowMs` before `now`; returns how many. */
  async purgeExpired(windowMs: number, now = new Date()): Promise<number> {
    return this.model.destroy({ where: { received_at: { [Op.lt]: new Date(now.getTime() - windowMs) } } });
  }
}
