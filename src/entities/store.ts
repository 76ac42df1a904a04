/**
 * Reading and writing entities with their nested records (issue 17: no lost edits).
 *
 * What holds:
 * - An update changes only what its body names: a field left out keeps its stored value, a field sent as
 *   `null` clears it. The nested records keep their identity (and their ids): market-share entries are
 *   matched by `id`, social-network entries by (`nm_rede`, the profile's `id`); within a matched entry
 *   the same rule applies. A sent array is the new list: entries it leaves out are removed.
 * - Every write bumps the entity's `version` (its ETag) in the same UPDATE that changes its columns, so
 *   an expected version (If-Match) is checked and the write applied atomically: two operators editing
 *   the same version cannot both win. That UPDATE also takes the row's lock on PostgreSQL, so concurrent
 *   writes of one entity merge their nested records one after the other, each on the other's result.
 * - A write is one transaction: it applies whole or not at all.
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
import { entityRowOf, FLAG_FIELDS, LIST_FIELDS, SCALAR_FIELDS } from './models.js';
import type { TeamRole } from './models.js';
import { asBoolean, asDate, asNumber, readerOf } from '../db/reader.js';

/** What a list shows of an entity (the contract's EntitySummary), with the caller's role in its team. */
export type EntitySummaryRow = Pick<EntityRow, 'id' | 'tp' | 'nome' | 'nm_urna' | 'nr_urna' | 'partido' | 'uf' | 'cidade' | 'image_url' | 'created_at' | 'updated_at' | 'candidacy_id'> & {
  role: TeamRole;
};
const SUMMARY_COLUMNS = 'e.id, e.tp, e.nome, e.nm_urna, e.nr_urna, e.partido, e.uf, e.cidade, e.image_url, e.created_at, e.updated_at, e.candidacy_id';

type MarketshareEntry = NonNullable<CandidateEntity['marketshare']>[number];
type SocialNetworkEntry = NonNullable<NonNullable<CandidateEntity['referencia_social']>['social_network']>[number];
type ReferenciaSocial = NonNullable<CandidateEntity['referencia_social']>;

/** An entity as stored: the contract's fields, and what the store keeps about its writes. */
export interface StoredEntity {
  entity: CandidateEntity & { id: number };
  tp: EntityType;
  updatedAt: Date;
  /** The user who wrote it last; null when unknown. */
  updatedBy: number | null;
  /** Counts its writes; the ETag. */
  version: number;
}

export interface EntityWrite {
  /** Who writes (recorded as `updated_by`). */
  userId: number;
  /** Versions the change was made on (If-Match); the write happens only if one is current. Omitted: any. */
  expectedVersions?: number[];
}

export type UpdateOutcome = { written: true; version: number } | { written: false; currentVersion: number };

/** A market-share entry's `id` that is not one of the entity's entries. */
export class UnknownMarketshareEntry extends Error {
  override name = 'UnknownMarketshareEntry';

  constructor(
    readonly index: number,
    readonly entryId: number,
  ) {
    super(`marketshare entry ${entryId} is not one of this entity's entries`);
  }
}

export class EntityStore {
  constructor(private readonly models: EntityModels) {}

  /**
   * Creates an entity owned by `ownerId`, who becomes its team's owner; returns its id. `creationKey` (the
   * request's, see requestCreationKey) is stored with it, unique: a second create with it fails.
   */
  async create(tp: EntityType, ownerId: number, entity: CandidateEntity, outer?: Transaction, creationKey?: string): Promise<number> {
    return this.transaction(outer, async (transaction) => {
      const now = new Date();
      const row = await this.models.Entity.create(
        { ...allColumnsOf(entity), tp, owner_id: ownerId, created_at: now, updated_at: now, updated_by: ownerId, version: 1, creation_key: creationKey ?? null },
        { transaction },
      );
      const id = Number(row.get('id'));
      await this.models.Member.create({ entity_id: id, user_id: ownerId, role: 'owner', added_at: now }, { transaction });
      await this.writeNested(id, entity, transaction);
      return id;
    });
  }

  /** Applies the fields `entity` names to entity `id`, unless `write.expectedVersions` are all stale. */
  async update(id: number, entity: CandidateEntity, write: EntityWrite, outer?: Transaction): Promise<UpdateOutcome> {
    return this.transaction(outer, async (transaction) => {
      const sequelize = this.models.Entity.sequelize!;
      const where = write.expectedVersions === undefined ? { id } : { id, version: { [Op.in]: write.expectedVersions } };
      const [changed] = await this.models.Entity.update(
        { ...sentColumnsOf(entity), version: sequelize.literal('version + 1') as unknown as number, updated_at: new Date(), updated_by: write.userId },
        { where, transaction },
      );
      const { version } = (await this.models.Entity.findByPk(id, { attributes: ['version'], raw: true, transaction })) as unknown as Pick<EntityRow, 'version'>;
      if (changed === 0) return { written: false, currentVersion: Number(version) };
      await this.writeNested(id, entity, transaction);
      return { written: true, version: Number(version) };
    });
  }

  /**
   * The entity as stored; undefined when there is none. `from.row` is its row when the caller has just
   * read it (Teams.access gives it), so it is not read again.
   *
   * Through a Reader (issue 20): the row, the social reference with its network entries (one join) and
   * the market share, read at once. (A write reads its nested records inside its own transaction.)
   */
  async load(id: number, from: { row?: EntityRow } = {}): Promise<StoredEntity | undefined> {
    const reader = readerOf(this.models.Entity.sequelize!);
    const [row, network, shares] = await Promise.all([
      from.row ?? reader.row<Record<string, unknown>>('SELECT * FROM entities WHERE id = ?', [id]).then((found) => found && entityRowOf(found)),
      reader.rows<NetworkJoinRow>(NETWORK_SQL, [id]),
      reader.rows<MarketshareRow>(MARKETSHARE_SQL, [id]),
    ]);
    if (!row) return undefined;
    const reference = network[0] && referenceRowOf(id, network[0]);
    const entries = network.filter((joined) => joined.id !== null).map(networkEntryRowOf);
    return storedEntityOf(row, reference, entries, shares.map(marketshareRowOf));
  }

  /**
   * The entity as stored, read inside `transaction` (with what the transaction wrote so far): what a
   * write compares before and after itself (the edit history). Undefined when there is none. On
   * PostgreSQL the row is locked (FOR UPDATE) until the transaction ends, so no other write of the entity
   * comes between this read and the transaction's own write.
   */
  async loadWithin(id: number, transaction: Transaction): Promise<StoredEntity | undefined> {
    const found = (await this.models.Entity.findByPk(id, { raw: true, transaction, lock: true })) as Record<string, unknown> | null;
    if (!found) return undefined;
    const reference = await this.referenceOf(id, transaction);
    const entries = reference ? await this.networkEntriesOf(reference.id, transaction) : [];
    return storedEntityOf(entityRowOf(found), reference, entries, await this.marketshareOf(id, transaction));
  }

  /** The entity created by the request with this creation key, if any. */
  async idByCreationKey(creationKey: string): Promise<number | undefined> {
    const row = (await this.models.Entity.findOne({ attributes: ['id'], where: { creation_key: creationKey }, raw: true })) as Pick<EntityRow, 'id'> | null;
    return row?.id;
  }

  /** Another entity with this CPF among the given ones (the caller's teams), if any. */
  async cpfTakenAmong(cpf: string, entityIds: number[], except?: number, transaction?: Transaction): Promise<number | undefined> {
    return this.takenAmong({ cpf }, entityIds, except, transaction);
  }

  /** Another entity linked to this candidacy among the given ones (the caller's teams), if any. */
  async candidacyTakenAmong(candidacyId: number, entityIds: number[], except?: number, transaction?: Transaction): Promise<number | undefined> {
    return this.takenAmong({ candidacy_id: candidacyId }, entityIds, except, transaction);
  }

  private async takenAmong(value: Partial<Pick<EntityRow, 'cpf' | 'candidacy_id'>>, entityIds: number[], except?: number, transaction?: Transaction): Promise<number | undefined> {
    const other = (await this.models.Entity.findOne({
      attributes: ['id'],
      where: { ...value, id: { [Op.in]: entityIds, ...(except === undefined ? {} : { [Op.ne]: except }) } },
      raw: true,
      transaction,
    })) as Pick<EntityRow, 'id'> | null;
    return other?.id;
  }

  /**
   * A page of entities, ordered by id, each with the caller's role in its team: those `caller` has a
   * role in, or all of them for a platform admin (`admin` where they have none). Optionally of one type.
   *
   * One query answers a front end's most frequent read (issue 20): the page, the roles and the total
   * together, through a Reader. A member's page walks the membership index (user_id, entity_id) in
   * order and stops after the page: never a list of every id of the team, which made a team of 100,000
   * entities 30 times slower than one of 1,000 (docs/benchmarks.md). A member's total is read from the
   * counts the database keeps by user and type (migration 0019), not counted each time. Only a page past
   * the end, which has no row to carry the total, asks again.
   */
  async page(caller: { id: number; isAdmin: boolean }, tp: EntityType | undefined, page: number, pageSize: number): Promise<{ total: number; rows: EntitySummaryRow[] }> {
    const reader = readerOf(this.models.Entity.sequelize!);
    const offset = (page - 1) * pageSize;
    const ofType = tp === undefined ? '' : 'AND e.tp = ?';
    const typeValue = tp === undefined ? [] : [tp];
    const count = caller.isAdmin
      ? `SELECT COUNT(*) FROM entities e WHERE 1 = 1 ${ofType}`
      : `SELECT COALESCE(SUM(c.total), 0) FROM entity_member_counts c WHERE c.user_id = ? ${tp === undefined ? '' : 'AND c.tp = ?'}`;
    const countValues = caller.isAdmin ? typeValue : [caller.id, ...typeValue];
    const pageQuery = caller.isAdmin
      ? `SELECT ${SUMMARY_COLUMNS}, COALESCE(m.role, 'admin') AS role, (${count}) AS total
         FROM entities e LEFT JOIN entity_members m ON m.entity_id = e.id AND m.user_id = ?
         WHERE 1 = 1 ${ofType} ORDER BY e.id LIMIT ? OFFSET ?`
      : tp === undefined
        ? // The page of memberships first, then its entities: joined whole, PostgreSQL merged the memberships
          // with the entity table read from its first id, 11,000 rows before a late team's first (10 ms).
          `SELECT ${SUMMARY_COLUMNS}, m.role AS role, (${count}) AS total
           FROM (SELECT entity_id, role FROM entity_members WHERE user_id = ? ORDER BY entity_id LIMIT ? OFFSET ?) m
           JOIN entities e ON e.id = m.entity_id ORDER BY m.entity_id`
        : `SELECT ${SUMMARY_COLUMNS}, m.role AS role, (${count}) AS total
           FROM entity_members m JOIN entities e ON e.id = m.entity_id
           WHERE m.user_id = ? ${ofType} ORDER BY m.entity_id LIMIT ? OFFSET ?`;
    const rows = await reader.rows<EntitySummaryRow & { total: unknown }>(pageQuery, [...countValues, caller.id, ...typeValue, pageSize, offset]);
    if (rows.length > 0) return { total: asNumber(rows[0]!.total), rows };
    const [counted] = await reader.rows<{ total: unknown }>(`SELECT (${count}) AS total`, countValues);
    return { total: asNumber(counted?.total ?? 0), rows: [] };
  }

  // --- Nested records ------------------------------------------------------------------------------

  /** Writes the nested records `entity` names (an omitted one is left as it is). */
  private async writeNested(entityId: number, entity: CandidateEntity, transaction: Transaction): Promise<void> {
    if (entity.referencia_social !== undefined) await this.writeReference(entityId, entity.referencia_social, transaction);
    if (entity.marketshare !== undefined) await this.writeMarketshare(entityId, entity.marketshare ?? [], transaction);
  }

  private async writeReference(entityId: number, sent: ReferenciaSocial | null, transaction: Transaction): Promise<void> {
    const stored = await this.referenceOf(entityId, transaction);
    if (sent === null) {
      if (stored) await this.removeReference(stored.id, transaction);
      return;
    }
    const fields = pick(sent, ['tipo', 'nm', 'origem_name']);
    let referenceId = stored?.id;
    if (referenceId === undefined) {
      const created = await this.models.SocialReference.create({ entity_id: entityId, tipo: null, nm: null, origem_name: null, ...fields }, { transaction });
      referenceId = Number(created.get('id'));
    } else if (Object.keys(fields).length > 0) {
      await this.models.SocialReference.update(fields, { where: { id: referenceId }, transaction });
    }
    if (sent.social_network !== undefined) await this.writeNetworkEntries(referenceId, sent.social_network ?? [], transaction);
  }

  private async removeReference(referenceId: number, transaction: Transaction): Promise<void> {
    await this.models.SocialNetworkEntry.destroy({ where: { social_reference_id: referenceId }, transaction });
    await this.models.SocialReference.destroy({ where: { id: referenceId }, transaction });
  }

  /** The sent entries become the list, in their order: matched by (nm_rede, profile id), updated, created or removed. */
  private async writeNetworkEntries(referenceId: number, sent: SocialNetworkEntry[], transaction: Transaction): Promise<void> {
    const stored = await this.networkEntriesOf(referenceId, transaction);
    const keyOf = (nmRede: string, profileId: string | null | undefined) => JSON.stringify([nmRede, profileId ?? null]);
    const unmatched = new Map<string, SocialNetworkEntryRow[]>();
    for (const row of stored) unmatched.set(keyOf(row.nm_rede, row.profile_id), [...(unmatched.get(keyOf(row.nm_rede, row.profile_id)) ?? []), row]);
    for (const [position, entry] of sent.entries()) {
      const match = unmatched.get(keyOf(entry.nm_rede, entry.id))?.shift();
      const columns = { ...networkColumnsOf(entry), position };
      if (match) await this.models.SocialNetworkEntry.update(columns, { where: { id: match.id }, transaction });
      else await this.models.SocialNetworkEntry.create({ ...EMPTY_NETWORK_ENTRY, ...columns, social_reference_id: referenceId }, { transaction });
    }
    const leftOut = [...unmatched.values()].flat().map((row) => row.id);
    if (leftOut.length > 0) await this.models.SocialNetworkEntry.destroy({ where: { id: { [Op.in]: leftOut } }, transaction });
  }

  /** The sent entries become the list, in their order: matched by `id`, updated, created or removed. */
  private async writeMarketshare(entityId: number, sent: MarketshareEntry[], transaction: Transaction): Promise<void> {
    const stored = new Map((await this.marketshareOf(entityId, transaction)).map((row) => [row.id, row]));
    const kept = new Set<number>();
    for (const [position, entry] of sent.entries()) {
      const columns = { ...pick(entry, ['principal', 'marketshare', 'tendency', 'notes', 'evaluations']), position };
      if (entry.id === undefined) {
        await this.models.Marketshare.create({ ...EMPTY_MARKETSHARE, ...columns, entity_id: entityId }, { transaction });
        continue;
      }
      if (!stored.has(entry.id) || kept.has(entry.id)) throw new UnknownMarketshareEntry(position, entry.id);
      kept.add(entry.id);
      await this.models.Marketshare.update(columns, { where: { id: entry.id }, transaction });
    }
    const leftOut = [...stored.keys()].filter((id) => !kept.has(id));
    if (leftOut.length > 0) await this.models.Marketshare.destroy({ where: { id: { [Op.in]: leftOut } }, transaction });
  }

  private async referenceOf(entityId: number, transaction?: Transaction): Promise<SocialReferenceRow | undefined> {
    return ((await this.models.SocialReference.findOne({ where: { entity_id: entityId }, raw: true, transaction })) as SocialReferenceRow | null) ?? undefined;
  }

  private async networkEntriesOf(referenceId: number, transaction?: Transaction): Promise<SocialNetworkEntryRow[]> {
    const rows = await this.models.SocialNetworkEntry.findAll({ where: { social_reference_id: referenceId }, order: [['position', 'ASC'], ['id', 'ASC']], raw: true, transaction });
    return rows as unknown as SocialNetworkEntryRow[];
  }

  private async marketshareOf(entityId: number, transaction?: Transaction): Promise<MarketshareRow[]> {
    const rows = await this.models.Marketshare.findAll({ where: { entity_id: entityId }, order: [['position', 'ASC'], ['id', 'ASC']], raw: true, transaction });
    return rows as unknown as MarketshareRow[];
  }

  /** Runs in the caller's transaction when it has one, otherwise in a new one. */
  private transaction<T>(outer: Transaction | undefined, work: (transaction: Transaction) => Promise<T>): Promise<T> {
    return outer ? work(outer) : this.models.Entity.sequelize!.transaction(work);
  }
}

const EMPTY_NETWORK_ENTRY = {
  exist_or_active: null,
  profile_id: null,
  img: null,
  img_url: null,
  last_full_evaluation_date: null,
  link: null,
  tipo: null,
  user: null,
  username: null,
} satisfies Partial<SocialNetworkEntryRow>;

const EMPTY_MARKETSHARE = { principal: null, tendency: null, notes: null, evaluations: null } satisfies Partial<MarketshareRow>;

/** An entity's social reference (one at most) with its network entries in order: a row per entry, or one of nulls. */
const NETWORK_SQL = `SELECT r.id AS reference_id, r.tipo AS reference_tipo, r.nm AS reference_nm, r.origem_name AS reference_origem_name,
    n.id, n.social_reference_id, n."position", n.nm_rede, n.exist_or_active, n.profile_id, n.img, n.img_url,
    n.last_full_evaluation_date, n.link, n.tipo, n."user", n.username
  FROM social_references r LEFT JOIN social_network_entries n ON n.social_reference_id = r.id
  WHERE r.entity_id = ? ORDER BY n."position", n.id`;

type NetworkJoinRow = { reference_id: number; reference_tipo: string | null; reference_nm: string | null; reference_origem_name: string | null } & {
  [Column in keyof SocialNetworkEntryRow]: SocialNetworkEntryRow[Column] | null;
};

const MARKETSHARE_SQL = `SELECT id, entity_id, "position", principal, marketshare, tendency, notes, evaluations
  FROM marketshare_entries WHERE entity_id = ? ORDER BY "position", id`;

function referenceRowOf(entityId: number, joined: NetworkJoinRow): SocialReferenceRow {
  return { id: joined.reference_id, entity_id: entityId, tipo: joined.reference_tipo, nm: joined.reference_nm, origem_name: joined.reference_origem_name };
}

/** A network entry of the join (one that has one), with the types its row promises on either database. */
function networkEntryRowOf(joined: NetworkJoinRow): SocialNetworkEntryRow {
  return {
    id: joined.id!,
    social_reference_id: joined.social_reference_id!,
    position: joined.position!,
    nm_rede: joined.nm_rede!,
    exist_or_active: joined.exist_or_active === null ? null : asBoolean(joined.exist_or_active),
    profile_id: joined.profile_id,
    img: joined.img,
    img_url: joined.img_url,
    last_full_evaluation_date: joined.last_full_evaluation_date === null ? null : asDate(joined.last_full_evaluation_date),
    link: joined.link,
    tipo: joined.tipo,
    user: joined.user,
    username: joined.username,
  };
}

function marketshareRowOf(share: MarketshareRow): MarketshareRow {
  return { ...share, principal: share.principal === null ? null : asBoolean(share.principal) };
}

function storedEntityOf(row: EntityRow, reference: SocialReferenceRow | undefined, entries: SocialNetworkEntryRow[], shares: MarketshareRow[]): StoredEntity {
  return {
    entity: {
      id: row.id,
      ...scalarsOf(row),
      ...(reference ? { referencia_social: referenceView(reference, entries) } : {}),
      marketshare: shares.map(marketshareView),
    },
    tp: row.tp,
    updatedAt: new Date(row.updated_at),
    updatedBy: row.updated_by,
    version: Number(row.version),
  };
}

/** Every scalar field of a new entity as columns (absent fields are stored as null). */
function allColumnsOf(entity: CandidateEntity): Partial<EntityRow> {
  return Object.fromEntries(SCALAR_FIELDS.map((field) => [field, entity[field] ?? null])) as Partial<EntityRow>;
}

/** The scalar fields an update names, as columns (`null` clears). */
function sentColumnsOf(entity: CandidateEntity): Partial<EntityRow> {
  return Object.fromEntries(SCALAR_FIELDS.filter((field) => entity[field] !== undefined).map((field) => [field, entity[field]])) as Partial<EntityRow>;
}

/** The columns of the fields a social-network entry names (its `id` is the profile's, its `referencia_social` read-only). */
function networkColumnsOf(entry: SocialNetworkEntry): Partial<SocialNetworkEntryRow> {
  const { id, last_full_evaluation_date, ...rest } = pick(entry, [
    'nm_rede', 'exist_or_active', 'id', 'img', 'img_url', 'last_full_evaluation_date', 'link', 'tipo', 'user', 'username',
  ]);
  return {
    ...rest,
    ...(id === undefined ? {} : { profile_id: id }),
    ...(last_full_evaluation_date === undefined ? {} : { last_full_evaluation_date: last_full_evaluation_date === null ? null : new Date(last_full_evaluation_date) }),
  } as Partial<SocialNetworkEntryRow>;
}

/** The named keys of `record` that are present (undefined ones are left out). */
function pick<T extends object, K extends keyof T>(record: T, keys: readonly K[]): Partial<Pick<T, K>> {
  return Object.fromEntries(keys.filter((key) => record[key] !== undefined).map((key) => [key, record[key]])) as Partial<Pick<T, K>>;
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

function referenceView(reference: SocialReferenceRow, entries: SocialNetworkEntryRow[]): ReferenciaSocial {
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
  }) as ReferenciaSocial;
}

function marketshareView(share: MarketshareRow): MarketshareEntry {
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
