/**
 * The audit log of security events (migration 0022): what happened to accounts and to who is in which
 * team (a role is changed by removing and adding again), who did it, from which
 * client address, and when. Platform admins read and filter it (`listAuditEvents`).
 *
 * Recording never fails a request: an event that cannot be written is logged as an error and the
 * request goes on (a login must not fail because the log is full). Nothing secret is written, nor what
 * a client typed: a failed login names the account only when one has that name, never the name as
 * typed (people type passwords into the username field). Events are kept AUDIT_RETENTION_DAYS (five
 * years by default), then purged by the housekeeping.
 */
import { Op, type WhereOptions } from 'sequelize';
import { asIsoTimestamp } from '../db/reader.js';
import type { Logger } from '../logger.js';
import type { AccountModels, AuditEventRow } from './models.js';

export const AUDIT_EVENTS = [
  'login_succeeded',
  'login_failed',
  'login_locked',
  'keys_revoked',
  'password_changed',
  'password_reset',
  'email_change_requested',
  'email_changed',
  'account_created',
  'account_deactivated',
  'account_reactivated',
  'account_deleted',
  'team_member_added',
  'team_member_removed',
  'invitation_sent',
  'invitation_accepted',
  'invitation_declined',
  'invitation_withdrawn',
  // A recorded person's data erased or corrected at their request (erasePersonalData, correctPersonalData).
  'personal_data_erased',
  'personal_data_corrected',
  // An entity's contact erased at the person's request (eraseContact, issue 23).
  'contact_erased',
  // An entity's contacts erased after its election, and a platform admin's hold on that (contact-retention.ts, issue 42).
  'contacts_retention_erased',
  'contact_retention_held',
  'contact_retention_released',
  // A platform admin relaxed an entity's SMS compliance mode to `warn` or `off` (setSmsCompliance, issue 42).
  'sms_compliance_relaxed',
  // A line of the election calendar created, updated or deleted by a platform admin (issue 42, src/elections/calendar-handlers.ts).
  'election_calendar_changed',
] as const;
export type AuditEventType = (typeof AUDIT_EVENTS)[number];

export interface AuditEvent {
  event: AuditEventType;
  /** Who did it; undefined when nobody was logged in (a login, a reset by e-mail). */
  actorId?: number;
  /** Whose account it concerns. */
  userId?: number;
  address?: string;
  /** Counts and reasons: never a secret or what a client typed. */
  details?: Record<string, string | number | boolean>;
}

export interface AuditFilter {
  event?: AuditEventType;
  /** Events done by this user or concerning them. */
  userId?: number;
  since?: Date;
  until?: Date;
}

export interface AuditEventView {
  id: number;
  occurred_at: string;
  event: AuditEventType;
  actor_id: number | null;
  user_id: number | null;
  address: string | null;
  details: Record<string, unknown>;
}

export class AuditLog {
  constructor(
    private readonly models: AccountModels,
    private readonly logger: Logger,
    /** How long events are kept (AUDIT_RETENTION_DAYS). */
    private readonly retentionMs: number,
  ) {}

  /** Writes an event; a failure is logged, not thrown. */
  async record(event: AuditEvent, at = new Date()): Promise<void> {
    try {
      await this.models.AuditEvent.create({
        occurred_at: at,
        event: event.event,
        actor_id: event.actorId ?? null,
        user_id: event.userId ?? null,
        address: event.address?.slice(0, 64) ?? null,
        details: event.details ? JSON.stringify(event.details) : null,
      });
    } catch (error) {
      this.logger.error({ err: error, event: event.event }, 'could not write an audit event');
    }
  }

  /** One page of events, the newest first, and how many match. */
  async page(filter: AuditFilter, page: number, pageSize: number): Promise<{ total: number; rows: AuditEventView[] }> {
    const where = whereOf(filter);
    const total = await this.models.AuditEvent.count({ where });
    const rows = (await this.models.AuditEvent.findAll({ where, order: [['occurred_at', 'DESC'], ['id', 'DESC']], limit: pageSize, offset: (page - 1) * pageSize, raw: true })) as unknown as AuditEventRow[];
    return { total, rows: rows.map(viewOf) };
  }

  /** Deletes events older than the retention; returns how many. */
  async purgeExpired(now = new Date()): Promise<number> {
    return this.models.AuditEvent.destroy({ where: { occurred_at: { [Op.lt]: new Date(now.getTime() - this.retentionMs) } } });
  }
}

function whereOf({ event, userId, since, until }: AuditFilter): WhereOptions<AuditEventRow> {
  const time = { ...(since ? { [Op.gte]: since } : {}), ...(until ? { [Op.lt]: until } : {}) };
  return {
    ...(event ? { event } : {}),
    ...(userId !== undefined ? { [Op.or]: [{ user_id: userId }, { actor_id: userId }] } : {}),
    ...(since || until ? { occurred_at: time } : {}),
  };
}

function viewOf(row: AuditEventRow): AuditEventView {
  return {
    id: row.id,
    occurred_at: asIsoTimestamp(row.occurred_at),
    event: row.event as AuditEventType,
    actor_id: row.actor_id,
    user_id: row.user_id,
    address: row.address,
    details: row.details ? (JSON.parse(row.details) as Record<string, unknown>) : {},
  };
}

