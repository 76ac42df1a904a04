/**
 * Research bookmarks: the items a user saved while researching (title, address, source, notes). They are
 * personal, so every method takes the owner's id and never reaches another user's rows. A user saves a
 * page once (addresses compared by their normalised key) and keeps at most MAX_BOOKMARKS_PER_USER, which
 * keeps the unpaginated list of the contract bounded.
 */
import { DataTypes, UniqueConstraintError, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import { asDate, readerOf } from '../db/reader.js';
import type { WebAddress } from '../web-address.js';

export const MAX_BOOKMARKS_PER_USER = 1000;

export interface ResearchBookmarkRow {
  id: number;
  user_id: number;
  title: string;
  /** The address as sent (parsed and re-serialised). */
  url: string;
  /** The normalised address without scheme and `www.` (unique per user). */
  url_key: string;
  source: string | null;
  notes: string | null;
  created_at: Date;
}

export interface NewBookmark {
  title: string;
  address: WebAddress;
  source: string | null;
  notes: string | null;
}

export type SaveResult =
  | { outcome: 'created' | 'unchanged'; bookmark: ResearchBookmarkRow }
  /** The user saved this page before, with another title, source or notes. */
  | { outcome: 'saved_differently'; existing: ResearchBookmarkRow }
  | { outcome: 'limit_reached' };

type BookmarkModel = ModelStatic<Model<ResearchBookmarkRow, Partial<ResearchBookmarkRow>>>;

export class ResearchBookmarks {
  constructor(private readonly model: BookmarkModel) {}

  /** The user's bookmarks, newest first: one Reader query (issue 20). */
  async list(userId: number): Promise<ResearchBookmarkRow[]> {
    const rows = await readerOf(this.model.sequelize!).rows<ResearchBookmarkRow>(
      `SELECT id, user_id, title, url, url_key, source, notes, created_at FROM research_bookmarks
       WHERE user_id = ? ORDER BY created_at DESC, id DESC`,
      [userId],
    );
    return rows.map((row) => ({ ...row, created_at: asDate(row.created_at) }));
  }

  async save(userId: number, bookmark: NewBookmark, now = new Date()): Promise<SaveResult> {
    const existing = await this.find(userId, bookmark.address.key);
    if (existing) return compared(existing, bookmark);
    if ((await this.model.count({ where: { user_id: userId } })) >= MAX_BOOKMARKS_PER_USER) return { outcome: 'limit_reached' };
    try {
      const row = await this.model.create({
        user_id: userId,
        title: bookmark.title,
        url: bookmark.address.href,
        url_key: bookmark.address.key,
        source: bookmark.source,
        notes: bookmark.notes,
        created_at: now,
      });
      return { outcome: 'created', bookmark: row.get({ plain: true }) };
    } catch (error) {
      // A parallel request saved the same page first: answer as if it had come before.
      const raced = error instanceof UniqueConstraintError ? await this.find(userId, bookmark.address.key) : undefined;
      if (!raced) throw error;
      return compared(raced, bookmark);
    }
  }

  /** Removes the user's bookmark `id`; false when the user has none with this id. */
  async remove(userId: number, id: number): Promise<boolean> {
    return (await this.model.destroy({ where: { id, user_id: userId } })) > 0;
  }

  private async find(userId: number, urlKey: string): Promise<ResearchBookmarkRow | undefined> {
    const row = await this.model.findOne({ where: { user_id: userId, url_key: urlKey }, raw: true });
    return (row as unknown as ResearchBookmarkRow | null) ?? undefined;
  }
}

function compared(existing: ResearchBookmarkRow, bookmark: NewBookmark): SaveResult {
  const same = existing.title === bookmark.title && existing.source === bookmark.source && existing.notes === bookmark.notes;
  return same ? { outcome: 'unchanged', bookmark: existing } : { outcome: 'saved_differently', existing };
}

export function createResearchBookmarks(sequelize: Sequelize): ResearchBookmarks {
  const model = sequelize.define<Model<ResearchBookmarkRow, Partial<ResearchBookmarkRow>>>(
    'ResearchBookmark',
    {
      id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      user_id: DataTypes.INTEGER,
      title: DataTypes.STRING(300),
      url: DataTypes.STRING(2048),
      url_key: DataTypes.STRING(2048),
      source: DataTypes.STRING(200),
      notes: DataTypes.TEXT,
      created_at: DataTypes.DATE,
    },
    { tableName: 'research_bookmarks', timestamps: false },
  );
  return new ResearchBookmarks(model);
}
