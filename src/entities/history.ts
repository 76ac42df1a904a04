/**
 * The edit history of entities (issue 21, migration 0024): every change to an entity, its team, its
 * monitors and its SMS credentials, with who made it, when, and each changed field before and after.
 *
 * What holds:
 * - A row is written in the transaction of the change it describes (`record(entry, transaction)`), so
 *   the history has a row for a change exactly when the change committed.
 * - The actor is kept as a user id only, never their name: the history names them through `users` when
 *   it is read, so it follows the account (a pseudonymised account reads pseudonymised) and outlives it.
 * - A secret is never written: credentials' secrets are recorded as the marker `[secret]` ("it was set").
 * - Personal data is kept as written and masked on the way out, for the reader's team role, with the
 *   masks of personal-data.ts. Erasing a person's data (`erase`) redacts it here too, as `[erased]`.
 * - Rows are kept HISTORY_RETENTION_DAYS (five years by default), then purged by the housekeeping.
 */
import { DataTypes, Op, Transaction, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import { displayName } from '../accounts/users.js';
import { asIsoTimestamp, asNumber, readerOf } from '../db/reader.js';
import { maskedFieldValue } from './personal-data.js';
import { SCALAR_FIELDS } from './models.js';
import type { EntityStore, StoredEntity } from './store.js';

/** What a history row is about: the entity itself, its team, one of its monitors or SMS credentials, its SMS compliance settings. */
export const HISTORY_SUBJECTS = ['entity', 'team', 'monitor', 'sms_credential', 'sms_compliance'] as const;
export type HistorySubject = (typeof HISTORY_SUBJECTS)[number];

/**
 * The actions a row records. The entity's own: `created`, `updated`, `personal_data_erased`,
 * `personal_data_corrected`; its team's: `member_added`, `member_removed`, `invited`,
 * `invitation_withdrawn`, `invitation_accepted`, `invitation_declined`; a monitor's or credential's:
 * `created` (and `updated`, `removed` when they gain such operations).
 */
export type HistoryAction =
  | 'created'
  | 'updated'
  | 'removed'
  | 'member_added'
  | 'member_removed'
  | 'invited'
  | 'invitation_withdrawn'
  | 'invitation_accepted'
  | 'invitation_declined'
  | 'personal_data_erased'
  | 'personal_data_corrected';

/** One field's change; `before` is null for a field set by a creation, `after` null for one cleared. */
export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

export interface HistoryEntry {
  entityId: number;
  subject: HistorySubject;
  /** The monitor's, credential's or team member's (user) id; omitted for the entity itself. */
  subjectId?: number | null;
  action: HistoryAction;
  /** The user who made the change; omitted when nobody did (a job, a script). */
  actorId?: number | null;
  /** The fields that changed; for a team change, e.g. `[{ field: 'role', before: null, after: 'operator' }]`. */
  changes: FieldChange[];
}

/** What `listEntityHistory` shows of a row. */
export interface HistoryItem {
  id: number;
  occurred_at: string;
  subject: HistorySubject;
  subject_id: number | null;
  action: string;
  actor: { id: number; display_name: string | null } | null;
  changes: FieldChange[];
}

/** Stands for a secret that was set or changed: its value is never written. */
export const SECRET_MARKER = '[secret]';
/** Stands for a value erased at its data subject's request (erasePersonalData). */
export const ERASED_MARKER = '[erased]';
const MARKERS: ReadonlySet<unknown> = new Set([SECRET_MARKER, ERASED_MARKER]);

/** HISTORY_RETENTION_DAYS's default: five years. */
export const DEFAULT_HISTORY_RETENTION_MS = 5 * 365 * 86_400_000;

interface EditHistoryRow {
  id: number;
  entity_id: number;
  subject: HistorySubject;
  subject_id: number | null;
  action: string;
  actor_id: number | null;
  occurred_at: Date;
  /** JSON text of FieldChange[]. */
  changes: string;
}
type EditHistoryModel = ModelStatic<Model<EditHistoryRow, Partial<EditHistoryRow>>>;

/** A row as the list reads it, with its actor's names (null when the account is gone). */
type JoinedRow = Omit<EditHistoryRow, 'occurred_at'> & { occurred_at: unknown; username: string | null; first_name: string | null; last_name: string | null; deleted_at: unknown };

export class EditHistory {
  private readonly model: EditHistoryModel;

  constructor(
    private readonly sequelize: Sequelize,
    /** How long rows are kept (HISTORY_RETENTION_DAYS). */
    private readonly retentionMs: number = DEFAULT_HISTORY_RETENTION_MS,
  ) {
    this.model = sequelize.define<Model<EditHistoryRow, Partial<EditHistoryRow>>>(
      'EditHistory',
      {
        id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
        entity_id: DataTypes.INTEGER,
        subject: DataTypes.STRING(20),
        subject_id: DataTypes.INTEGER,
        action: DataTypes.STRING(40),
        actor_id: DataTypes.INTEGER,
        occurred_at: DataTypes.DATE,
        changes: DataTypes.TEXT,
      },
      { tableName: 'edit_history', timestamps: false },
    );
  }

  /**
   * Records one change of entity `entry.entityId` (or of its team, monitor or credential: `subject`,
   * with `subjectId`), made by `actorId`, now. Pass the transaction of the change itself, so the row
   * commits or rolls back with it. An `updated` entry without changes is not written (nothing changed).
   *
   *   await entities.history.record(
   *     { entityId, subject: 'team', subjectId: user.id, action: 'member_added', actorId: caller.user.id,
   *       changes: [{ field: 'role', before: null, after: 'operator' }] },
   *     transaction,
   *   );
   *
   * Values are written as given (personal data whole: the list masks it by the reader's role); never
   * give a secret: write SECRET_MARKER in its place. Never copy a user's name: give their id.
   */
  async record(entry: HistoryEntry, transaction?: Transaction): Promise<void> {
    if (entry.changes.length === 0 && entry.action === 'updated') return;
    await this.model.create(
      {
        entity_id: entry.entityId,
        subject: entry.subject,
        subject_id: entry.subjectId ?? null,
        action: entry.action,
        actor_id: entry.actorId ?? null,
        occurred_at: new Date(),
        changes: JSON.stringify(entry.changes.map(({ field, before, after }) => ({ field, before: before ?? null, after: after ?? null }))),
      },
      { transaction },
    );
  }

  /**
   * One page of the entity's history, the newest first, and how many rows match. `wholeView`: the
   * reader may read personal data whole (teams.ts `readPersonalData`); otherwise it is masked.
   */
  async page(entityId: number, filter: { subject?: HistorySubject }, page: number, pageSize: number, wholeView: boolean): Promise<{ total: number; rows: HistoryItem[] }> {
    const reader = readerOf(this.sequelize);
    // COALESCE: with no subject given, every subject matches (one SQL text for both).
    const subject = filter.subject ?? null;
    const [counted] = await reader.rows<{ total: unknown }>('SELECT COUNT(*) AS total FROM edit_history WHERE entity_id = ? AND subject = COALESCE(?, subject)', [entityId, subject]);
    const rows = await reader.rows<JoinedRow>(
      `SELECT h.id, h.entity_id, h.subject, h.subject_id, h.action, h.actor_id, h.occurred_at, h.changes, u.username, u.first_name, u.last_name, u.deleted_at
         FROM edit_history h LEFT JOIN users u ON u.id = h.actor_id
        WHERE h.entity_id = ? AND h.subject = COALESCE(?, h.subject)
        ORDER BY h.occurred_at DESC, h.id DESC LIMIT ? OFFSET ?`,
      [entityId, subject, pageSize, (page - 1) * pageSize],
    );
    return { total: asNumber(counted?.total ?? 0), rows: rows.map((row) => itemOf(row, wholeView)) };
  }

  /**
   * Erasure at the data subject's request: in every row of the entity, the values of `fields` (before
   * and after) become ERASED_MARKER (a value that was null stays null). Returns how many rows changed.
   */
  async erase(entityId: number, fields: readonly string[], transaction: Transaction): Promise<number> {
    const erasing = new Set(fields);
    const rows = (await this.model.findAll({ where: { entity_id: entityId }, raw: true, transaction })) as unknown as EditHistoryRow[];
    let redacted = 0;
    for (const row of rows) {
      const changes = JSON.parse(row.changes) as FieldChange[];
      if (!changes.some((change) => erasing.has(change.field))) continue;
      const erased = changes.map((change) => (erasing.has(change.field) ? { field: change.field, before: erasedValue(change.before), after: erasedValue(change.after) } : change));
      await this.model.update({ changes: JSON.stringify(erased) }, { where: { id: row.id }, transaction });
      redacted += 1;
    }
    return redacted;
  }

  /** Deletes rows older than the retention; returns how many (the housekeeping's purge). */
  async purgeExpired(now = new Date()): Promise<number> {
    return this.model.destroy({ where: { occurred_at: { [Op.lt]: new Date(now.getTime() - this.retentionMs) } } });
  }
}

/**
 * Runs `work` in a transaction that reads the entity before it writes it (its history's `before`). On
 * SQLite it begins IMMEDIATE, taking the write lock first: under WAL, a transaction that has read cannot
 * write once another wrote meanwhile (SQLITE_BUSY_SNAPSHOT), so concurrent edits would fail instead of
 * waiting their turn. On PostgreSQL, `loadWithin` locks the entity's row instead.
 */
export function readThenWrite<T>(sequelize: Sequelize, work: (transaction: Transaction) => Promise<T>): Promise<T> {
  if (sequelize.getDialect() === 'sqlite') return sequelize.transaction({ type: Transaction.TYPES.IMMEDIATE }, work);
  return sequelize.transaction(work);
}

/** An entity's fields as its history lists them: the scalar fields, then each nested list as one field. */
export const ENTITY_HISTORY_FIELDS: readonly string[] = [...SCALAR_FIELDS, 'referencia_social', 'marketshare'];

/**
 * Records a write of entity `entityId` in its history: the fields that differ between `before` (as
 * stored just before the write; undefined for a creation) and the entity as stored now, both read in
 * the write's `transaction`.
 */
export async function recordEntityEdit(
  entities: { store: Pick<EntityStore, 'loadWithin'>; history: EditHistory },
  entityId: number,
  before: StoredEntity | undefined,
  action: Extract<HistoryAction, 'created' | 'updated' | 'personal_data_corrected'>,
  actorId: number,
  transaction: Transaction,
): Promise<void> {
  const after = (await entities.store.loadWithin(entityId, transaction))!;
  const changes = changedFields(before?.entity, after.entity, ENTITY_HISTORY_FIELDS);
  await entities.history.record({ entityId, subject: 'entity', action, actorId, changes }, transaction);
}

/**
 * The fields that differ between two views of a record (the contract's fields, nested arrays as whole
 * values), in the order of `fields`; a field absent from a view counts as null. With `before` undefined
 * (a creation), the fields `after` sets.
 */
export function changedFields(before: Record<string, unknown> | undefined, after: Record<string, unknown>, fields: readonly string[]): FieldChange[] {
  const changes: FieldChange[] = [];
  for (const field of fields) {
    const was = emptyAsNull(before?.[field]);
    const is = emptyAsNull(after[field]);
    if (JSON.stringify(was) !== JSON.stringify(is)) changes.push({ field, before: was, after: is });
  }
  return changes;
}

/** Absent, null and an empty list all mean "no value" (a new entity's `marketshare` is `[]`). */
function emptyAsNull(value: unknown): unknown {
  if (value === undefined || (Array.isArray(value) && value.length === 0)) return null;
  return value;
}

function erasedValue(value: unknown): unknown {
  return value === null || value === undefined ? null : ERASED_MARKER;
}

function itemOf(row: JoinedRow, wholeView: boolean): HistoryItem {
  const changes = JSON.parse(row.changes) as FieldChange[];
  const shown = wholeView
    ? changes
    : changes.map(({ field, before, after }) => ({ field, before: maskedFieldValue(field, before, MARKERS), after: maskedFieldValue(field, after, MARKERS) }));
  const actor =
    row.actor_id === null
      ? null
      : { id: row.actor_id, display_name: row.username === null ? null : displayName({ username: row.username, first_name: row.first_name ?? '', last_name: row.last_name ?? '', deleted_at: row.deleted_at }) };
  return { id: row.id, occurred_at: asIsoTimestamp(row.occurred_at), subject: row.subject, subject_id: row.subject_id, action: row.action, actor, changes: shown };
}
