/**
 * Contacts kept no longer than the campaign they were collected for (issue 42, section 5; table
 * `contact_retention`, migration 0036). An entity's contacts are erased CONTACT_RETENTION_DAYS_AFTER_CERTIFICATION
 * days (a setting of the deployment, 180 by default, not a figure of the law) after the certification
 * (diplomação) of the winners of its election: the LGPD keeps personal data only while its purpose lasts
 * (Lei 13.709/2018 arts. 15 I and 16), and the purpose here is the campaign. The certification day comes
 * from the election calendar (src/elections/calendar.ts), through the injected `CertificationLookup`.
 *
 * What holds:
 * - Notice first: the entity's owner and admins get an in-app notification (`contacts_retention_notice`)
 *   30 days before the erasure day, once per day (a conditional update claims it, so two instances
 *   sweeping at once notify once), and the erasure never comes sooner than 30 days after that notice,
 *   whatever the setting or a late sweep did: an entity is never erased without 30 days' notice.
 * - A hold stops it: while proceedings that may need the contacts are pending (the action to challenge a
 *   mandate, AIME, may be filed within 15 days of the certification: CF art. 14 §10), a platform admin
 *   holds the erasure (`holdContactRetention`, with the case's reference) and releases it later; both
 *   are audited (`contact_retention_held`, `contact_retention_released`). Platform admins decide, not the
 *   entity: the hold keeps personal data past its purpose, so someone outside the campaign judges it.
 * - Each contact goes by Contacts.erase (its messages and replies masked, its unsent messages canceled),
 *   so the erasure never races the send job; a contact whose message is in flight is left for the next
 *   sweep, and the day counts as done only when none is left. The opt-out records (sms_opt_outs and the
 *   suppression list of migration 0034) are not touched: the entity must still honour them.
 * - The erasure is audited once per sweep that erased (`contacts_retention_erased`, with the count and the
 *   election; never a number or a name). Contacts added after an erasure stay until the next election's day.
 * - An entity linked to no election (no candidacy, no `disputa_eleitoral`) has no erasure day: its contacts
 *   are kept (the status says so). The sweep runs as a job (`contact_retention_sweep`), queued by the
 *   server's housekeeping timer; it is idempotent, so a repeated or concurrent run does no harm.
 */
import { DataTypes, Op, QueryTypes, UniqueConstraintError, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import type { components } from '../../sdk/schema.js';
import type { AuditLog } from '../accounts/audit-log.js';
import { addDays, brasiliaDay } from '../brasilia-time.js';
import { asIsoTimestamp } from '../db/reader.js';
import { electionCalendarOf } from '../elections/calendar.js';
import type { JobQueue } from '../jobs/index.js';
import type { Logger } from '../logger.js';
import type { Notifications } from '../notifications/notifications.js';
import type { Contacts } from './contacts.js';
import type { ContactRow, SmsModels } from './models.js';

export type ContactRetentionStatus = components['schemas']['ContactRetention'];

/** Days between the notice and the erasure. */
export const NOTICE_DAYS = 30;
export const CONTACT_RETENTION_SWEEP_JOB = 'contact_retention_sweep';
/** Contacts read per batch of an erasure. */
const ERASE_BATCH = 200;

/** The election that judges an entity, as far as retention needs it (a CalendarElection's fields). */
export interface RetentionElection {
  id: number;
  title: string;
  /** The certification (diplomação) of its winners, a Brasília day (YYYY-MM-DD). */
  certification_on: string;
}

/** The entity's election by its candidacy or `disputa_eleitoral` (never by its office alone); undefined when it has none. */
export type CertificationLookup = (entity: { id: number; candidacy_id: number | null; disputa_eleitoral: number | null }, today: string) => Promise<RetentionElection | undefined>;

export interface ContactRetentionDependencies {
  sequelize: Sequelize;
  models: SmsModels;
  contacts: Contacts;
  notifications: Pick<Notifications, 'notify' | 'teamMembers'>;
  audit: Pick<AuditLog, 'record'>;
  lookup: CertificationLookup;
  /** CONTACT_RETENTION_DAYS_AFTER_CERTIFICATION. */
  retentionDays: number;
  jobs?: JobQueue;
  logger: Logger;
}

interface RetentionRow {
  entity_id: number;
  certification_on: string | null;
  erase_on: string | null;
  noticed_for: string | null;
  noticed_at: Date | null;
  erased_for: string | null;
  erased_at: Date | null;
  erased_count: number | null;
  held_at: Date | null;
  held_by: number | null;
  hold_reason: string | null;
  updated_at?: Date;
}

/** The `contact_retention` table (migration 0036), defined once per Sequelize. */
function retentionModel(sequelize: Sequelize): ModelStatic<Model<RetentionRow, Partial<RetentionRow> & { updated_at?: Date }>> {
  return (sequelize.models.ContactRetention as ModelStatic<Model<RetentionRow, Partial<RetentionRow>>> | undefined) ??
    sequelize.define<Model<RetentionRow, Partial<RetentionRow>>>(
      'ContactRetention',
      {
        entity_id: { type: DataTypes.INTEGER, primaryKey: true },
        certification_on: DataTypes.DATEONLY,
        erase_on: DataTypes.DATEONLY,
        noticed_for: DataTypes.DATEONLY,
        noticed_at: DataTypes.DATE,
        erased_for: DataTypes.DATEONLY,
        erased_at: DataTypes.DATE,
        erased_count: DataTypes.INTEGER,
        held_at: DataTypes.DATE,
        held_by: DataTypes.INTEGER,
        hold_reason: DataTypes.STRING(500),
        updated_at: DataTypes.DATE,
      },
      { tableName: 'contact_retention', timestamps: false },
    );
}

export class ContactRetention {
  private readonly table;

  constructor(private readonly dependencies: ContactRetentionDependencies) {
    this.table = retentionModel(dependencies.sequelize);
  }

  private get sequelize(): Sequelize {
    return this.dependencies.sequelize;
  }

  get retentionDays(): number {
    return this.dependencies.retentionDays;
  }

  async registerJobs(): Promise<void> {
    await this.dependencies.jobs?.register(CONTACT_RETENTION_SWEEP_JOB, async () => this.sweep(), { retryLimit: 2 });
  }

  /** Queues a sweep (the housekeeping timer calls it); a failure is logged. */
  async enqueueSweep(): Promise<void> {
    await this.dependencies.jobs?.enqueue(CONTACT_RETENTION_SWEEP_JOB, {}).catch((error: unknown) => this.dependencies.logger.warn({ err: error }, 'could not queue the contact retention sweep'));
  }

  /** What will happen to the entity's contacts, and what did. */
  async status(entityId: number, today = brasiliaDay()): Promise<ContactRetentionStatus> {
    const election = await this.electionOf(entityId, today);
    const row = await this.row(entityId);
    const planned = election ? this.plan(election, row) : undefined;
    return {
      entity_id: entityId,
      retention_days: this.retentionDays,
      election: election ? { id: election.id, title: election.title, certification_on: election.certification_on } : null,
      notice_on: planned?.noticeOn ?? null,
      erase_on: planned?.eraseOn ?? null,
      noticed_at: row?.noticed_at && planned && row.noticed_for === planned.day ? iso(row.noticed_at) : null,
      erased_at: row?.erased_at && planned && row.erased_for === planned.day ? iso(row.erased_at) : null,
      erased_count: row?.erased_at && planned && row.erased_for === planned.day ? (row.erased_count ?? 0) : null,
      hold: row?.held_at ? { held_at: iso(row.held_at), held_by: row.held_by, reason: row.hold_reason ?? '' } : null,
    };
  }

  /** Holds the erasure of the entity's contacts (a platform admin's decision, audited). */
  async hold(entityId: number, actorId: number, reason: string, address: string | undefined, now = new Date()): Promise<ContactRetentionStatus> {
    await this.ensureRow(entityId, now);
    await this.table.update({ held_at: now, held_by: actorId, hold_reason: reason, updated_at: now }, { where: { entity_id: entityId } });
    await this.dependencies.audit.record({ event: 'contact_retention_held', actorId, address, details: { entity_id: entityId, reason } });
    return this.status(entityId);
  }

  /** Releases a hold; whether there was one. The erasure then comes on its day (or at the next sweep, when that day has passed). */
  async release(entityId: number, actorId: number, address: string | undefined, now = new Date()): Promise<boolean> {
    const [released] = await this.table.update({ held_at: null, held_by: null, hold_reason: null, updated_at: now }, { where: { entity_id: entityId, held_at: { [Op.ne]: null } } });
    if (released === 0) return false;
    await this.dependencies.audit.record({ event: 'contact_retention_released', actorId, address, details: { entity_id: entityId } });
    return true;
  }

  /** Sends the notices due and erases the contacts due, for every entity with contacts. */
  async sweep(now = new Date()): Promise<{ noticed: number; erased: number }> {
    const today = brasiliaDay(now);
    const entities = await this.sequelize.query<{ entity_id: number }>('SELECT DISTINCT entity_id FROM contacts ORDER BY entity_id', { type: QueryTypes.SELECT });
    let noticed = 0;
    let erased = 0;
    for (const { entity_id } of entities) {
      try {
        const done = await this.sweepEntity(Number(entity_id), today, now);
        noticed += done.noticed ? 1 : 0;
        erased += done.erased;
      } catch (error) {
        this.dependencies.logger.error({ err: error, entity: entity_id }, 'the contact retention sweep failed for an entity');
      }
    }
    return { noticed, erased };
  }

  private async sweepEntity(entityId: number, today: string, now: Date): Promise<{ noticed: boolean; erased: number }> {
    const election = await this.electionOf(entityId, today);
    if (!election) return { noticed: false, erased: 0 };
    await this.ensureRow(entityId, now);
    let row = (await this.row(entityId))!;
    const { day, noticeOn } = this.plan(election, row);
    if (row.erased_for === day) return { noticed: false, erased: 0 };
    await this.table.update({ certification_on: election.certification_on, erase_on: day, updated_at: now }, { where: { entity_id: entityId } });
    let noticed = false;
    if (today >= noticeOn && row.noticed_for !== day) {
      // Claimed by a conditional update: of two sweeps at once, one notifies.
      const [claimed] = await this.table.update({ noticed_for: day, noticed_at: now }, { where: { entity_id: entityId, [Op.or]: [{ noticed_for: null }, { noticed_for: { [Op.ne]: day } }] } });
      if (claimed === 1) {
        noticed = true;
        row = (await this.row(entityId))!;
        await this.notify(entityId, election, this.plan(election, row).eraseOn);
      }
    }
    const { eraseOn } = this.plan(election, row);
    if (row.noticed_for !== day || today < eraseOn || row.held_at) return { noticed, erased: 0 };
    const { erased, left } = await this.eraseContacts(entityId);
    if (left === 0) {
      await this.table.update({ erased_for: day, erased_at: now, erased_count: erased, updated_at: now }, { where: { entity_id: entityId } });
    }
    if (erased > 0 || left === 0) {
      await this.dependencies.audit.record({
        event: 'contacts_retention_erased',
        details: { entity_id: entityId, election_id: election.id, certification_on: election.certification_on, erased, left_in_flight: left },
      });
    }
    return { noticed, erased };
  }

  /**
   * The erasure day counted from the certification (`day`, the row's key), the notice day, and the day
   * the erasure may happen: `day`, or 30 days after a notice sent late, whichever is later.
   */
  private plan(election: RetentionElection, row: RetentionRow | undefined): { day: string; noticeOn: string; eraseOn: string } {
    const day = addDays(election.certification_on, this.retentionDays);
    const noticeOn = addDays(day, -NOTICE_DAYS);
    const noticedDay = row?.noticed_for === day && row.noticed_at ? brasiliaDay(new Date(asIsoTimestamp(row.noticed_at))) : undefined;
    const afterNotice = noticedDay ? addDays(noticedDay, NOTICE_DAYS) : undefined;
    return { day, noticeOn, eraseOn: afterNotice && afterNotice > day ? afterNotice : day };
  }

  private async notify(entityId: number, election: RetentionElection, eraseOn: string): Promise<void> {
    const admins = await this.dependencies.notifications.teamMembers(entityId, ['owner', 'admin']);
    await this.dependencies.notifications.notify(admins, {
      type: 'contacts_retention_notice',
      title: `Os contatos da entidade ${entityId} serão apagados em ${dayMonthYear(eraseOn)}`,
      body:
        `A diplomação dos eleitos de ${election.title} foi em ${dayMonthYear(election.certification_on)}. ` +
        `Os contatos coletados para a campanha serão apagados em ${dayMonthYear(eraseOn)} (${this.retentionDays} dias depois, configuração da plataforma). ` +
        'Os pedidos de descadastro continuam guardados. Havendo processo pendente (CF art. 14 §10), peça a um administrador da plataforma que suspenda a exclusão.',
      entityId,
      subject: { kind: 'entity', id: entityId },
    });
  }

  /** Erases every contact of the entity, batch by batch; how many went and how many were left (a message in flight). */
  private async eraseContacts(entityId: number): Promise<{ erased: number; left: number }> {
    let erased = 0;
    let left = 0;
    let after = 0;
    for (;;) {
      const batch = (await this.dependencies.models.Contact.findAll({ where: { entity_id: entityId, id: { [Op.gt]: after } }, order: [['id', 'ASC']], limit: ERASE_BATCH, raw: true })) as unknown as ContactRow[];
      if (batch.length === 0) break;
      for (const contact of batch) {
        const result = await this.dependencies.contacts.erase(contact);
        if (result === 'gone') continue;
        if ('inFlight' in result) left += 1;
        else erased += 1;
      }
      after = batch.at(-1)!.id;
    }
    return { erased, left };
  }

  private async electionOf(entityId: number, today: string): Promise<RetentionElection | undefined> {
    const [entity] = await this.sequelize.query<{ candidacy_id: number | null; disputa_eleitoral: number | null }>('SELECT candidacy_id, disputa_eleitoral FROM entities WHERE id = ?', {
      replacements: [entityId],
      type: QueryTypes.SELECT,
    });
    if (!entity) return undefined;
    const hints = { id: entityId, candidacy_id: entity.candidacy_id == null ? null : Number(entity.candidacy_id), disputa_eleitoral: entity.disputa_eleitoral == null ? null : Number(entity.disputa_eleitoral) };
    if (hints.candidacy_id === null && hints.disputa_eleitoral === null) return undefined;
    return this.dependencies.lookup(hints, today);
  }

  private async row(entityId: number): Promise<RetentionRow | undefined> {
    const row = (await this.table.findByPk(entityId, { raw: true })) as unknown as RetentionRow | null;
    if (!row) return undefined;
    return {
      ...row,
      entity_id: Number(row.entity_id),
      certification_on: dayOf(row.certification_on),
      erase_on: dayOf(row.erase_on),
      noticed_for: dayOf(row.noticed_for),
      erased_for: dayOf(row.erased_for),
      held_by: row.held_by == null ? null : Number(row.held_by),
      erased_count: row.erased_count == null ? null : Number(row.erased_count),
    };
  }

  private async ensureRow(entityId: number, now: Date): Promise<void> {
    try {
      if (await this.table.findByPk(entityId, { attributes: ['entity_id'], raw: true })) return;
      await this.table.create({ entity_id: entityId, updated_at: now });
    } catch (error) {
      // Another sweep or hold inserted it meanwhile.
      if (!(error instanceof UniqueConstraintError)) throw error;
    }
  }
}

function dayOf(value: unknown): string | null {
  if (value == null) return null;
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  return String(value).slice(0, 10);
}

function iso(value: Date | string): string {
  return new Date(asIsoTimestamp(value)).toISOString();
}

/** 2026-08-20 -> 20/08/2026. */
function dayMonthYear(day: string): string {
  const [year, month, date] = day.split('-');
  return `${date}/${month}/${year}`;
}

/**
 * The certification day of an entity's election from the election calendar (src/elections/calendar.ts):
 * its linked candidacy's election, else the one `disputa_eleitoral` names (never the next election of
 * its office alone: that one moves forward every year, and an entity's contacts would never be due).
 */
export function calendarCertificationLookup(sequelize: Sequelize): CertificationLookup {
  const calendar = electionCalendarOf(sequelize);
  return async (entity, today) => {
    const election = await calendar.electionFor({ candidacy_id: entity.candidacy_id, disputa_eleitoral: entity.disputa_eleitoral }, today);
    return election && { id: election.id, title: election.title, certification_on: election.certification_on };
  };
}
