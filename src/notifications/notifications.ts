/**
 * Each user's in-app notifications (issue 25): made when something happens that a user must hear of
 * (notices.ts names the events and words them), listed, counted and marked read by their user only.
 *
 * Making notifications never fails the work that caused them: the event has happened (a campaign ended,
 * a voter wrote), and a notification that could not be written is logged, not thrown.
 * Every new notification is also handed to `afterCreate` (the push to the user's devices).
 */
import { Op, QueryTypes, type Sequelize } from 'sequelize';
import type { Logger } from '../logger.js';
import type { TeamRole } from '../entities/models.js';
import type { NotificationModels, NotificationRow, NotificationSubjectKind, NotificationType } from './models.js';

/** How long a notification is kept. */
export const NOTIFICATIONS_KEPT_MS = 90 * 24 * 3600 * 1000;

/** What one event tells its users. */
export interface Notice {
  type: NotificationType;
  title: string;
  body: string;
  entityId: number | null;
  subject: { kind: NotificationSubjectKind; id: number };
}

export type NotificationView = ReturnType<typeof notificationView>;

export class Notifications {
  private afterCreate: (rows: NotificationRow[]) => Promise<void> = async () => {};

  constructor(
    private readonly models: NotificationModels,
    private readonly logger: Logger,
  ) {}

  private get sequelize(): Sequelize {
    return this.models.Notification.sequelize!;
  }

  /** Called with the notifications each `notify` made (the push to devices). */
  onCreate(listener: (rows: NotificationRow[]) => Promise<void>): void {
    this.afterCreate = listener;
  }

  /** Notifies each active user of `userIds` once. Logs instead of throwing (see the file's comment). */
  async notify(userIds: Iterable<number>, notice: Notice, now = new Date()): Promise<NotificationRow[]> {
    try {
      const recipients = await this.activeUsers([...new Set(userIds)]);
      if (recipients.length === 0) return [];
      const rows = await this.models.Notification.bulkCreate(
        recipients.map((userId) => ({
          user_id: userId,
          type: notice.type,
          title: truncate(notice.title, 200),
          body: truncate(notice.body, 1000),
          entity_id: notice.entityId,
          subject_kind: notice.subject.kind,
          subject_id: notice.subject.id,
          created_at: now,
          read_at: null,
        })),
      );
      const created = rows.map((row) => row.get({ plain: true }) as NotificationRow);
      await this.afterCreate(created);
      return created;
    } catch (error) {
      this.logger.error({ err: error, notice: notice.type, subject: notice.subject }, 'a notification could not be made');
      return [];
    }
  }

  /** The members of an entity's team, those with one of `roles` when given. */
  async teamMembers(entityId: number, roles?: readonly TeamRole[]): Promise<number[]> {
    const rows = await this.sequelize.query<{ user_id: number }>(
      `SELECT user_id FROM entity_members WHERE entity_id = ?${roles ? ` AND role IN (${roles.map(() => '?').join(', ')})` : ''}`,
      { replacements: [entityId, ...(roles ?? [])], type: QueryTypes.SELECT },
    );
    return rows.map((row) => Number(row.user_id));
  }

  /** A page of the user's notifications, the newest first, with their count and the unread count. */
  async page(userId: number, unreadOnly: boolean, page: number, pageSize: number): Promise<{ total: number; unread: number; rows: NotificationRow[] }> {
    const where = { user_id: userId, ...(unreadOnly ? { read_at: null } : {}) };
    const [total, unread, rows] = await Promise.all([
      this.models.Notification.count({ where }),
      this.unread(userId),
      this.models.Notification.findAll({ where, order: [['id', 'DESC']], limit: pageSize, offset: (page - 1) * pageSize, raw: true }),
    ]);
    return { total, unread, rows: rows as unknown as NotificationRow[] };
  }

  async unread(userId: number): Promise<number> {
    return this.models.Notification.count({ where: { user_id: userId, read_at: null } });
  }

  /** Marks the user's notification read (once: a second mark keeps the first time); undefined when the user has no such notification. */
  async markRead(userId: number, id: number, now = new Date()): Promise<NotificationRow | undefined> {
    await this.models.Notification.update({ read_at: now }, { where: { id, user_id: userId, read_at: null } });
    const row = await this.models.Notification.findOne({ where: { id, user_id: userId }, raw: true });
    return (row as unknown as NotificationRow | null) ?? undefined;
  }

  /** Marks every unread notification of the user read. */
  async markAllRead(userId: number, now = new Date()): Promise<{ marked: number; unread: number }> {
    const [marked] = await this.models.Notification.update({ read_at: now }, { where: { user_id: userId, read_at: null } });
    return { marked, unread: await this.unread(userId) };
  }

  /** Deletes the notifications older than NOTIFICATIONS_KEPT_MS (the housekeeping timer). */
  async purgeExpired(now = new Date()): Promise<number> {
    return this.models.Notification.destroy({ where: { created_at: { [Op.lt]: new Date(now.getTime() - NOTIFICATIONS_KEPT_MS) } } });
  }

  /** The users among `ids` whose accounts are active (a deactivated or deleted account hears nothing). */
  private async activeUsers(ids: number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await this.sequelize.query<{ id: number }>(
      `SELECT id FROM users WHERE id IN (${ids.map(() => '?').join(', ')}) AND is_active = ? AND deleted_at IS NULL ORDER BY id`,
      { replacements: [...ids, true], type: QueryTypes.SELECT },
    );
    return rows.map((row) => Number(row.id));
  }
}

/** A notification as the contract shows it. */
export function notificationView(row: NotificationRow) {
  return {
    id: row.id,
    type: row.type,
    title: row.title,
    body: row.body,
    entity_id: row.entity_id,
    subject: { kind: row.subject_kind, id: row.subject_id },
    created_at: new Date(row.created_at).toISOString(),
    read_at: row.read_at ? new Date(row.read_at).toISOString() : null,
  };
}

function truncate(text: string, length: number): string {
  return text.length <= length ? text : `${text.slice(0, length - 1)}…`;
}
