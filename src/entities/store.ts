/**
 * Reading and writing entities with their nested records. An entity is written in one transaction: its
 * columns, then its social reference with the network entries and its market-share entries, which an
 * update replaces as a whole (the form posts the entity back complete).
 */
import { Op, QueryTypes, type Transaction } from 'sequelize';
import type {
  CandidateEntity,
  EntityModels,
  EntityRow,
  EntityType,
  MarketshareRow,
  SocialNetworkEntryRow,
  SocialReferenceRow,
} from './models.js';
import { FLAG_FIELDS, LIST_FIELDS, SCALAR_FIELDS } from './models.js';

export class EntityStore {
  constructor(private readonly models: EntityModels) {}

  /** Creates an entity owned by `ownerId`, who becomes its team's owner; returns its id. */
  async create(tp: EntityType, ownerId: number, entity: CandidateEntity, outer?: Transaction): Promise<number> {
    return this.transaction(outer, async (transaction) => {
      const now = new Date();
      const row = await this.models.Entity.create({ ...columnsOf(entity), tp, owner_id: ownerId, created_at: now, updated_at: now }, { transaction });
      const id = Number(row.get('id'));
      await this.models.Member.create({ entity_id: id, user_id: ownerId, role: 'owner', added_at: now }, { transaction });
      await this.writeNested(id, entity, transaction);
      return id;
    });
  }

  async update(id: number, entity: CandidateEntity, outer?: Transaction): Promise<void> {
    await this.transaction(outer, async (transaction) => {
      await this.models.Entity.update({ ...columnsOf(entity), updated_at: new Date() }, { where: { id }, transaction });
      await this.models.Marketshare.destroy({ where: { entity_id: id }, transaction });
      const reference = (await this.models.SocialReference.findOne({ where: { entity_id: id }, raw: true, transaction })) as SocialReferenceRow | null;
      if (reference) {
        await this.models.SocialNetworkEntry.destroy({ where: { social_reference_id: reference.id }, transaction });
        await this.models.SocialReference.destroy({ where: { id: reference.id }, transaction });
      }
      await this.writeNested(id, entity, transaction);
    });
  }

  /** The entity in the shape addEntity takes; undefined when there is none. */
  async load(id: number): Promise<CandidateEntity | undefined> {
    const row = (await this.models.Entity.findByPk(id, { raw: true })) as EntityRow | null;
    if (!row) return undefined;
    const reference = (await this.models.SocialReference.findOne({ where: { entity_id: id }, raw: true })) as SocialReferenceRow | null;
    const entries = reference
      ? ((await this.models.SocialNetworkEntry.findAll({ where: { social_reference_id: reference.id }, order: [['position', 'ASC']], raw: true })) as unknown as SocialNetworkEntryRow[])
      : [];
    const shares = (await this.models.Marketshare.findAll({ where: { entity_id: id }, order: [['position', 'ASC']], raw: true })) as unknown as MarketshareRow[];
    return {
      id: row.id,
      ...scalarsOf(row),
      ...(reference ? { referencia_social: referenceOf(reference, entries) } : {}),
      marketshare: shares.map(marketshareOf),
    };
  }

  /** Another entity with this CPF among the given ones (the caller's teams), if any. */
  async cpfTakenAmong(cpf: string, entityIds: number[], except?: number, transaction?: Transaction): Promise<number | undefined> {
    const other = (await this.models.Entity.findOne({
      attributes: ['id'],
      where: { cpf, id: { [Op.in]: entityIds, ...(except === undefined ? {} : { [Op.ne]: except }) } },
      raw: true,
      transaction,
    })) as Pick<EntityRow, 'id'> | null;
    return other?.id;
  }

  /**
   * A page of entities, ordered by id: those `memberId` has a role in (or all, for `undefined`), optionally
   * of one type. A member's page walks the membership index (user_id, entity_id) in order and stops after
   * the page, and the count reads that index alone: never a list of every id of the team, which made a
   * team of 100,000 entities 30 times slower than one of 1,000 (docs/benchmarks.md).
   */
  async page(memberId: number | undefined, tp: EntityType | undefined, page: number, pageSize: number): Promise<{ total: number; rows: EntityRow[] }> {
    const offset = (page - 1) * pageSize;
    if (memberId === undefined) {
      const { count, rows } = await this.models.Entity.findAndCountAll({ where: tp === undefined ? {} : { tp }, order: [['id', 'ASC']], limit: pageSize, offset, raw: true });
      return { total: count, rows: rows as unknown as EntityRow[] };
    }
    const sequelize = this.models.Entity.sequelize!;
    const ofType = tp === undefined ? '' : 'AND e.tp = :tp';
    const replacements = { memberId, tp: tp ?? null, limit: pageSize, offset };
    const ids = await sequelize.query<{ id: number }>(
      `SELECT e.id FROM entity_members m JOIN entities e ON e.id = m.entity_id WHERE m.user_id = :memberId ${ofType} ORDER BY m.entity_id LIMIT :limit OFFSET :offset`,
      { replacements, type: QueryTypes.SELECT },
    );
    const [counted] = await sequelize.query<{ total: number | string }>(
      tp === undefined
        ? 'SELECT COUNT(*) AS total FROM entity_members WHERE user_id = :memberId'
        : `SELECT COUNT(*) AS total FROM entity_members m JOIN entities e ON e.id = m.entity_id WHERE m.user_id = :memberId ${ofType}`,
      { replacements, type: QueryTypes.SELECT },
    );
    const rows = ids.length === 0 ? [] : await this.models.Entity.findAll({ where: { id: { [Op.in]: ids.map((row) => row.id) } }, order: [['id', 'ASC']], raw: true });
    return { total: Number(counted!.total), rows: rows as unknown as EntityRow[] };
  }

  private async writeNested(entityId: number, entity: CandidateEntity, transaction: Transaction): Promise<void> {
    const reference = entity.referencia_social;
    if (reference) {
      const created = await this.models.SocialReference.create(
        { entity_id: entityId, tipo: reference.tipo ?? null, nm: reference.nm ?? null, origem_name: reference.origem_name ?? null },
        { transaction },
      );
      const referenceId = Number(created.get('id'));
      await this.models.SocialNetworkEntry.bulkCreate(
        (reference.social_network ?? []).map((entry, position) => ({
          social_reference_id: referenceId,
          position,
          nm_rede: entry.nm_rede,
          exist_or_active: entry.exist_or_active ?? null,
          profile_id: entry.id ?? null,
          img: entry.img ?? null,
          img_url: entry.img_url ?? null,
          last_full_evaluation_date: entry.last_full_evaluation_date ? new Date(entry.last_full_evaluation_date) : null,
          link: entry.link ?? null,
          tipo: entry.tipo ?? null,
          user: entry.user ?? null,
          username: entry.username ?? null,
        })),
        { transaction },
      );
    }
    await this.models.Marketshare.bulkCreate(
      (entity.marketshare ?? []).map((share, position) => ({
        entity_id: entityId,
        position,
        principal: share.principal ?? null,
        marketshare: share.marketshare,
        tendency: share.tendency ?? null,
        notes: share.notes ?? null,
        evaluations: share.evaluations ?? null,
      })),
      { transaction },
    );
  }

  /** Runs in the caller's transaction when it has one, otherwise in a new one. */
  private transaction<T>(outer: Transaction | undefined, work: (transaction: Transaction) => Promise<T>): Promise<T> {
    return outer ? work(outer) : this.models.Entity.sequelize!.transaction(work);
  }
}

/** The scalar fields of a body as columns (absent fields are stored as null). */
function columnsOf(entity: CandidateEntity): Partial<EntityRow> {
  return Object.fromEntries(SCALAR_FIELDS.map((field) => [field, entity[field] ?? null])) as Partial<EntityRow>;
}

/** The stored columns back as contract fields: nulls become absent (except nr_urna and municipioBase, which are nullable). */
function scalarsOf(row: EntityRow): Omit<CandidateEntity, 'id' | 'referencia_social' | 'marketshare'> {
  const nullable = new Set(['nr_urna', 'municipioBase']);
  const scalars: Record<string, unknown> = {};
  for (const field of SCALAR_FIELDS) {
    let value: unknown = row[field];
    if (value === null || value === undefined) {
      if (nullable.has(field)) scalars[field] = null;
      continue;
    }
    if (FLAG_FIELDS.has(field)) value = Boolean(value);
    if (LIST_FIELDS.has(field) && typeof value === 'string') value = JSON.parse(value);
    scalars[field] = value;
  }
  return scalars as Omit<CandidateEntity, 'id' | 'referencia_social' | 'marketshare'> & { nome: string };
}

function referenceOf(reference: SocialReferenceRow, entries: SocialNetworkEntryRow[]): NonNullable<CandidateEntity['referencia_social']> {
  return withoutNulls({
    id: reference.id,
    tipo: reference.tipo,
    nm: reference.nm,
    origem_name: reference.origem_name,
    social_network: entries.map((entry) => ({
      ...withoutNulls({
        exist_or_active: entry.exist_or_active === null ? null : Boolean(entry.exist_or_active),
        id: entry.profile_id,
        img: entry.img,
        img_url: entry.img_url,
        link: entry.link,
        nm_rede: entry.nm_rede,
        tipo: entry.tipo,
        user: entry.user,
        username: entry.username,
      }),
      nm_rede: entry.nm_rede,
      last_full_evaluation_date: entry.last_full_evaluation_date ? new Date(entry.last_full_evaluation_date).toISOString() : null,
      referencia_social: reference.id,
    })),
  }) as NonNullable<CandidateEntity['referencia_social']>;
}

function marketshareOf(share: MarketshareRow): NonNullable<CandidateEntity['marketshare']>[number] {
  return {
    id: share.id,
    ...withoutNulls({ principal: share.principal === null ? null : Boolean(share.principal), tendency: share.tendency, evaluations: share.evaluations }),
    marketshare: share.marketshare,
    notes: share.notes,
  };
}

function withoutNulls<T extends Record<string, unknown>>(record: T): { [K in keyof T]?: NonNullable<T[K]> } {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null && value !== undefined)) as { [K in keyof T]?: NonNullable<T[K]> };
}
