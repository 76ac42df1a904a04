/**
 * News sources users ask Palanque to monitor. The list is public, so the row keeps who asked
 * (`requested_by`) for the team's review and abuse handling, and the public shape (publicNewsSource)
 * leaves it out. A source is requested once: addresses are compared by their normalised key. A user may
 * have at most `maxOpenRequests` sources awaiting review (`requested`): the public list is the work a
 * single account could otherwise make unbounded. The count and the insert hold a lock per user, so
 * parallel requests cannot pass the cap together.
 */
import { DataTypes, UniqueConstraintError, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import { withLocks } from '../db/locks.js';
import type { WebAddress } from '../web-address.js';

export type NewsSourceStatus = 'requested' | 'monitoring' | 'rejected';

export interface NewsSourceRow {
  id: number;
  name: string;
  /** The normalised address, as shown. */
  url: string;
  /** The normalised address without scheme and `www.` (unique). */
  url_key: string;
  status: NewsSourceStatus;
  /** The user who asked; never exposed (null once that account is deleted). */
  requested_by: number | null;
  requested_at: Date;
  updated_at: Date;
}

export type RequestResult =
  | { outcome: 'created'; source: NewsSourceRow }
  | { outcome: 'already_requested'; existing: NewsSourceRow }
  | { outcome: 'too_many_open'; open: number; max: number };

type NewsSourceModel = ModelStatic<Model<NewsSourceRow, Partial<NewsSourceRow>>>;

export class NewsSources {
  constructor(
    private readonly model: NewsSourceModel,
    private readonly maxOpenRequests: number,
  ) {}

  /** A page of the requested sources, newest request first, and how many there are in all. */
  async page(page: number, pageSize: number): Promise<{ total: number; rows: NewsSourceRow[] }> {
    const { count, rows } = await this.model.findAndCountAll({ order: [['requested_at', 'DESC'], ['id', 'DESC']], limit: pageSize, offset: (page - 1) * pageSize, raw: true });
    return { total: count, rows: rows as unknown as NewsSourceRow[] };
  }

  async request(name: string, address: WebAddress, requestedBy: number, now = new Date()): Promise<RequestResult> {
    const existing = await this.find(address.key);
    if (existing) return { outcome: 'already_requested', existing };
    try {
      return await withLocks(this.model.sequelize!, [`news-requests:${requestedBy}`], async (transaction): Promise<RequestResult> => {
        const open = await this.model.count({ where: { requested_by: requestedBy, status: 'requested' }, transaction });
        if (open >= this.maxOpenRequests) return { outcome: 'too_many_open', open, max: this.maxOpenRequests };
        const row = await this.model.create(
          { name, url: address.normalised, url_key: address.key, status: 'requested', requested_by: requestedBy, requested_at: now, updated_at: now },
          { transaction },
        );
        return { outcome: 'created', source: row.get({ plain: true }) };
      });
    } catch (error) {
      // A parallel request for the same source won.
      const raced = error instanceof UniqueConstraintError ? await this.find(address.key) : undefined;
      if (!raced) throw error;
      return { outcome: 'already_requested', existing: raced };
    }
  }

  private async find(urlKey: string): Promise<NewsSourceRow | undefined> {
    return ((await this.model.findOne({ where: { url_key: urlKey }, raw: true })) as unknown as NewsSourceRow | null) ?? undefined;
  }
}

/** What anyone may see of a source: never who requested it. */
export function publicNewsSource(row: NewsSourceRow) {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    status: row.status,
    requested_at: new Date(row.requested_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

export function createNewsSources(sequelize: Sequelize, maxOpenRequests: number): NewsSources {
  const model = sequelize.define<Model<NewsSourceRow, Partial<NewsSourceRow>>>(
    'NewsSource',
    {
      id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      name: DataTypes.STRING(200),
      url: DataTypes.STRING(2048),
      url_key: DataTypes.STRING(2048),
      status: DataTypes.STRING(20),
      requested_by: DataTypes.INTEGER,
      requested_at: DataTypes.DATE,
      updated_at: DataTypes.DATE,
    },
    { tableName: 'news_sources', timestamps: false },
  );
  return new NewsSources(model, maxOpenRequests);
}
