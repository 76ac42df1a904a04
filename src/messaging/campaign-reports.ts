/**
 * SMS campaigns as a team accounts for them (issue 23): an entity's campaigns with their messages counted
 * by status and what the provider charged, a campaign's per-recipient statuses and their CSV export, its
 * state, and its cancel.
 *
 * What holds:
 * - State. A campaign goes `queued` -> `sending` (Sms.enqueueSending) -> `completed`, or from `queued` or
 *   `sending` to `canceled`, and never otherwise: each move is one UPDATE conditional on the state it
 *   leaves, so of two instances moving it at once (a receipt on one, the sweep on another) one does, once.
 * - Completion. A campaign completes once none of its messages is open: `queued`, or with the provider
 *   (accepted to sent) and touched within SMS_RECEIPT_TIMEOUT_HOURS. It is checked after each receipt
 *   and each send that gives one of its messages a final status, every check after its own write
 *   committed, so of two messages settling at once at least one check sees both; and by the housekeeping
 *   sweep, for the messages that time out and for a check lost with its process.
 * - Cancel. One transaction moves the campaign to `canceled` and cancels its messages that no send attempt
 *   has claimed (`queued`, `send_attempts` 0). A claim (sending.ts, step 2) moves `send_attempts` only
 *   while the message is `queued`, so each such message is either claimed, and handed over by the
 *   exactly-once protocol, or canceled: never both, never neither. A message claimed before is left to its
 *   job: the provider took it (it keeps its receipts), or the job, which looks at the campaign before it
 *   claims another attempt, cancels it. So a cancel sends nothing twice and loses nothing; a few messages
 *   may stay `queued` for up to the send timeout after it.
 * - Personal data. A number is whole only for the roles that may readPersonalData; the others read it
 *   masked (@palanque/rules/phones), in the list and in the CSV alike. The numbers a campaign skipped as not mobile
 *   (`not_mobile_examples`) are kept masked from the start and read so by every role.
 * - Tallies. A campaign that finished (`completed` or `canceled`) keeps its counts and cost (`tally`),
 *   written when it finishes and again whenever one of its messages changes after that (a late receipt, a
 *   claimed message its job cancels), each time under a lock on the campaign and after the change
 *   committed, so the last tally written counts every change. Its reads then count nothing: a report of
 *   10,000 messages costs what one of 10 does. A campaign still sending is counted as it is read.
 * - The export is streamed: rows are read EXPORT_BATCH at a time by id, and each batch is written, and
 *   drained by the client, before the next is read, so its memory stays flat whatever the campaign's size.
 */
import { Op, type Sequelize } from 'sequelize';
import { withLocks } from '../db/locks.js';
import type { components } from '../../sdk/schema.js';
import { displayName } from '../accounts/users.js';
import { asIsoTimestamp, asNumber, readerOf, type Reader } from '../db/reader.js';
import type { Caller } from '../http/auth.js';
import { ApiError, notFound } from '../http/errors.js';
import type { Teams } from '../entities/teams.js';
import type { TeamRole } from '../entities/models.js';
import type { CampaignRow, MessageRow, SmsModels } from './models.js';
import { warningsOf } from './compliance.js';
import { maskPhone } from '@palanque/rules/phones';
import { CANCELED_WITH_CAMPAIGN, FINAL_STATUSES, OPTED_OUT_BEFORE_SENDING, WITH_PROVIDER_STATUSES } from './statuses.js';

export type SmsCampaignReport = components['schemas']['SmsCampaignReport'];
export type SmsCampaignMessage = components['schemas']['SmsCampaignMessage'];
export type SmsMessageStatus = components['schemas']['SmsMessageStatus'];
export type SmsCampaignState = components['schemas']['SmsCampaignState'];
type MessageCounts = components['schemas']['SmsCampaignMessageCounts'];
type Cost = components['schemas']['SmsCost'];

/** SMS_RECEIPT_TIMEOUT_HOURS's default: a message with the provider and no receipt for this long counts as final. */
export const DEFAULT_RECEIPT_TIMEOUT_MS = 72 * 3600_000;
/** Rows the CSV export reads at a time. */
const EXPORT_BATCH = 500;
/** The CSV's columns, in order (the contract lists them in exportSmsCampaignMessages). */
export const EXPORT_COLUMNS = ['id', 'recipient', 'contact_id', 'status', 'provider_status', 'error_code', 'error_message', 'price', 'price_unit', 'updated_at'] as const;

/** A campaign the caller reached by its id, with their role in its entity's team (`admin` for platform admins). */
export interface CampaignAccess {
  campaign: Pick<CampaignRow, 'id' | 'entity_id'>;
  role: TeamRole;
  /** Whether the caller reads its numbers whole. */
  wholeNumbers: boolean;
}

/** Where a message's report status comes from: its status, and for `canceled` why (see reportStatusOf). */
const STATUS_SQL: Record<SmsMessageStatus, string> = {
  queued: "m.status = 'queued'",
  sending: "m.status IN ('accepted', 'scheduled', 'sending')",
  sent: "m.status = 'sent'",
  delivered: "m.status IN ('delivered', 'read')",
  undelivered: "m.status = 'undelivered'",
  failed: "m.status = 'failed'",
  canceled: "m.status = 'canceled' AND (m.error_message IS NULL OR m.error_message <> ?)",
  opted_out: "m.status = 'canceled' AND m.error_message = ?",
};
const STATUS_TAKES_REASON = new Set<SmsMessageStatus>(['canceled', 'opted_out']);

/** A message's status as a report shows it, from its status as recorded and its error message. */
export function reportStatusOf(status: string, errorMessage: string | null): SmsMessageStatus {
  if (status === 'canceled') return errorMessage === OPTED_OUT_BEFORE_SENDING ? 'opted_out' : 'canceled';
  if (status === 'read') return 'delivered';
  if (status === 'queued' || status === 'sent' || status === 'delivered' || status === 'undelivered' || status === 'failed') return status;
  return 'sending';
}

/** The provider's price as a report shows it: positive for a charge (the provider writes a charge negative). */
export function chargeOf(price: string): string {
  if (price.startsWith('-')) return price.slice(1);
  return /^0*(\.0*)?$/.test(price) ? price : `-${price}`;
}

/** What a campaign row with its sender and canceler reads as (Reader rows: timestamps as the driver gives them). */
interface CampaignReportRow {
  id: number;
  titulo: string;
  credential_id: number;
  accepted: number;
  rejected: number;
  opted_out_skipped: number;
  not_mobile_skipped: unknown;
  not_mobile_examples: string | null;
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
  state: SmsCampaignState;
  created_at: unknown;
  entity_id: number | null;
  finished_at: unknown;
  sender_id: number | null;
  sender_username: string | null;
  sender_first_name: string | null;
  sender_last_name: string | null;
  sender_deleted_at: unknown;
  canceler_id: number | null;
  canceler_username: string | null;
  canceler_first_name: string | null;
  canceler_last_name: string | null;
  canceler_deleted_at: unknown;
  tally: string | null;
  footer: string | null;
  audience: string | null;
  compliance: string | null;
  non_electoral_declaration: string | null;
  synthetic_content: string | null;
}

/** The columns of a report, one by one for a page's `wideRows`. */
const REPORT_COLUMN_LIST = [
  ...['id', 'titulo', 'credential_id', 'accepted', 'rejected', 'opted_out_skipped', 'not_mobile_skipped', 'not_mobile_examples', 'encoding', 'segments', 'state', 'created_at', 'entity_id', 'finished_at', 'tally', 'footer', 'audience', 'compliance', 'non_electoral_declaration', 'synthetic_content'].map(
    (name) => `c.${name}`,
  ),
  ...['id', 'username', 'first_name', 'last_name', 'deleted_at'].map((name) => `s.${name} AS sender_${name}`),
  ...['id', 'username', 'first_name', 'last_name', 'deleted_at'].map((name) => `x.${name} AS canceler_${name}`),
];
const REPORT_COLUMNS = REPORT_COLUMN_LIST.join(', ');
const REPORT_FROM = 'FROM sms_campaigns c LEFT JOIN users s ON s.id = c.created_by LEFT JOIN users x ON x.id = c.canceled_by';
/** The caller's membership in the campaign's entity (the caller's id is its parameter). */
const WITH_CALLER_ROLE = 'LEFT JOIN entity_members m ON m.entity_id = c.entity_id AND m.user_id = ?';
/** A campaign with the caller's membership (the contract bounds its id to an INTEGER). */
const ACCESS_SQL = `SELECT c.id, c.entity_id, m.role AS caller_role FROM sms_campaigns c ${WITH_CALLER_ROLE} WHERE c.id = ?`;
interface AccessRow {
  id: number;
  entity_id: number | null;
  caller_role: TeamRole | null;
}
/** An entity's campaigns, newest first, optionally in one state: the page's WHERE, ORDER and LIMIT, shared by its reads. */
const ENTITY_PAGE = 'WHERE c.entity_id = ? ORDER BY c.id DESC LIMIT ? OFFSET ?';
const ENTITY_STATE_PAGE = 'WHERE c.entity_id = ? AND c.state = ? ORDER BY c.id DESC LIMIT ? OFFSET ?';

interface MessageReadRow {
  id: number;
  recipient: string;
  contact_id: number | null;
  status: string;
  error_code: string | null;
  error_message: string | null;
  price: string | null;
  price_unit: string | null;
  updated_at: unknown;
}
const MESSAGE_COLUMNS = 'm.id, m.recipient, m.contact_id, m.status, m.error_code, m.error_message, m.price, m.price_unit, m.updated_at';

export class SmsCampaignReports {
  private readonly sequelize: Sequelize;
  private readonly completedListeners: Array<(campaign: CampaignRow) => Promise<void>> = [];

  constructor(
    private readonly models: SmsModels,
    private readonly teams: Teams,
    /** SMS_RECEIPT_TIMEOUT_HOURS, in milliseconds. */
    readonly receiptTimeoutMs: number = DEFAULT_RECEIPT_TIMEOUT_MS,
  ) {
    this.sequelize = models.Campaign.sequelize!;
  }

  private get reader(): Reader {
    return readerOf(this.sequelize);
  }

  /** Calls `listener` with each campaign once it completed, its tally stored (its creator is notified). */
  onCompleted(listener: (campaign: CampaignRow) => Promise<void>): void {
    this.completedListeners.push(listener);
  }

  // --- Access -----------------------------------------------------------------------------------

  /**
   * The campaign `campaignId` if the caller is in its entity's team (platform admins: any campaign, those
   * of credentials without an entity included); else 404, the same for a campaign that does not exist.
   * One query: the campaign with the caller's membership.
   */
  async access(caller: Caller, campaignId: number): Promise<CampaignAccess> {
    const row = Number.isSafeInteger(campaignId) ? await this.reader.row<AccessRow>(ACCESS_SQL, [caller.user.id, campaignId]) : undefined;
    return this.accessFrom(caller, campaignId, row);
  }

  /** The campaign's report, if the caller may read it (as `access` says): one query for both when it is finished. */
  async readableReport(caller: Caller, campaignId: number): Promise<SmsCampaignReport> {
    const row = Number.isSafeInteger(campaignId)
      ? await this.reader.row<CampaignReportRow & AccessRow>(`SELECT ${REPORT_COLUMNS}, m.role AS caller_role ${REPORT_FROM} ${WITH_CALLER_ROLE} WHERE c.id = ?`, [caller.user.id, campaignId])
      : undefined;
    this.accessFrom(caller, campaignId, row);
    return reportOf(row!, (await this.talliesOf([row!])).get(asNumber(row!.id)));
  }

  /** The access a campaign row read with the caller's membership gives; 404 when there is none. */
  private accessFrom(caller: Caller, campaignId: number, row: AccessRow | undefined): CampaignAccess {
    // A campaign of a credential without an entity is the platform admins' alone.
    const role = row && (row.entity_id === null ? (caller.user.is_admin ? 'admin' : undefined) : this.teams.roleFrom(caller, row.caller_role));
    if (!row || !role) {
      throw notFound(`There is no SMS campaign ${campaignId} in your teams.`, [
        { location: 'path', field: 'campaign_id', rule: 'in_your_teams', message: 'must be a campaign of one of your teams', value: campaignId },
      ]);
    }
    return { campaign: { id: asNumber(row.id), entity_id: row.entity_id === null ? null : asNumber(row.entity_id) }, role, wholeNumbers: this.teams.may(caller, role, 'readPersonalData') };
  }

  // --- Reads ------------------------------------------------------------------------------------

  /**
   * One page of an entity's campaigns, newest first, optionally those in `state`. One query: the page
   * with the count of every such campaign beside each row (SQLite computes that subquery once, its
   * parameters bound before the page's); a page with no row counts on its own (page 1: none at all).
   */
  async page(entityId: number, state: SmsCampaignState | undefined, page: number, pageSize: number): Promise<{ total: number; campaigns: SmsCampaignReport[] }> {
    const pageWhere = state === undefined ? ENTITY_PAGE : ENTITY_STATE_PAGE;
    const filter = [entityId, ...(state === undefined ? [] : [state])];
    const countSql = `SELECT COUNT(*) FROM sms_campaigns t WHERE t.entity_id = ?${state === undefined ? '' : ' AND t.state = ?'}`;
    const rows = await this.reader.wideRows<CampaignReportRow & { total: unknown }>([...REPORT_COLUMN_LIST, `(${countSql}) AS total`], `${REPORT_FROM} ${pageWhere}`, [
      ...filter,
      ...filter,
      pageSize,
      (page - 1) * pageSize,
    ]);
    const total = rows.length > 0 ? asNumber(rows[0]!.total) : page === 1 ? 0 : asNumber((await this.reader.row<{ total: unknown }>(countSql.replace('COUNT(*)', 'COUNT(*) AS total'), filter))?.total ?? 0);
    const tallies = await this.talliesOf(rows);
    return { total, campaigns: rows.map((row) => reportOf(row, tallies.get(asNumber(row.id)))) };
  }

  /** The campaign's report. */
  async report(campaignId: number): Promise<SmsCampaignReport> {
    const row = await this.reader.row<CampaignReportRow>(`SELECT ${REPORT_COLUMNS} ${REPORT_FROM} WHERE c.id = ?`, [campaignId]);
    return reportOf(row!, (await this.talliesOf([row!])).get(campaignId));
  }

  /** Each campaign's tally: the one kept with a finished campaign, counted now for the others. */
  private async talliesOf(rows: CampaignReportRow[]): Promise<Map<number, Tally>> {
    const tallies = new Map<number, Tally>(rows.filter((row) => row.tally !== null).map((row) => [asNumber(row.id), JSON.parse(row.tally!) as Tally]));
    const uncounted = rows.map((row) => asNumber(row.id)).filter((id) => !tallies.has(id));
    if (uncounted.length === 0) return tallies;
    const where = `m.campaign_id IN (${uncounted.map(() => '?').join(', ')})`;
    const [counts, costs] = await Promise.all([countMessages(this.reader, where, uncounted), chargedCosts(this.sequelize, where, uncounted)]);
    for (const id of uncounted) tallies.set(id, { counts: counts.get(id) ?? [], cost: costs.get(id) ?? [] });
    return tallies;
  }

  /** One page of the campaign's messages by id, optionally those in one report status. */
  async messagePage(access: CampaignAccess, status: SmsMessageStatus | undefined, page: number, pageSize: number): Promise<{ total: number; messages: SmsCampaignMessage[] }> {
    const filter = status === undefined ? '' : ` AND ${STATUS_SQL[status]}`;
    const values = [access.campaign.id, ...(status !== undefined && STATUS_TAKES_REASON.has(status) ? [OPTED_OUT_BEFORE_SENDING] : [])];
    const [totalRow, rows] = await Promise.all([
      this.reader.row<{ total: unknown }>(`SELECT COUNT(*) AS total FROM sms_messages m WHERE m.campaign_id = ?${filter}`, values),
      this.reader.rows<MessageReadRow>(`SELECT ${MESSAGE_COLUMNS} FROM sms_messages m WHERE m.campaign_id = ?${filter} ORDER BY m.id LIMIT ? OFFSET ?`, [...values, pageSize, (page - 1) * pageSize]),
    ]);
    return { total: asNumber(totalRow?.total ?? 0), messages: rows.map((row) => messageOf(row, access.wholeNumbers)) };
  }

  /** Every message of the campaign, EXPORT_BATCH at a time by id, as the list shows them. */
  async *exportedMessages(access: CampaignAccess): AsyncGenerator<SmsCampaignMessage[]> {
    let after = 0;
    for (;;) {
      const rows = await this.reader.rows<MessageReadRow>(`SELECT ${MESSAGE_COLUMNS} FROM sms_messages m WHERE m.campaign_id = ? AND m.id > ? ORDER BY m.id LIMIT ?`, [
        access.campaign.id,
        after,
        EXPORT_BATCH,
      ]);
      if (rows.length === 0) return;
      yield rows.map((row) => messageOf(row, access.wholeNumbers));
      if (rows.length < EXPORT_BATCH) return;
      after = asNumber(rows.at(-1)!.id);
    }
  }

  // --- State ------------------------------------------------------------------------------------

  /**
   * Cancels the campaign and its messages that no send attempt has claimed, in one transaction; the
   * campaign's state when it was not `queued` or `sending` (nothing changed then).
   */
  async cancel(campaignId: number, canceledBy: number): Promise<{ canceled: number } | { state: SmsCampaignState }> {
    const now = new Date();
    const outcome = await this.sequelize.transaction(async (transaction) => {
      const [moved] = await this.models.Campaign.update(
        { state: 'canceled', finished_at: now, canceled_by: canceledBy },
        { where: { id: campaignId, state: { [Op.in]: ['queued', 'sending'] } }, transaction },
      );
      if (moved !== 1) return undefined;
      const [canceled] = await this.models.Message.update(
        { status: 'canceled', error_message: CANCELED_WITH_CAMPAIGN, updated_at: now },
        { where: { campaign_id: campaignId, status: 'queued', send_attempts: 0 }, transaction },
      );
      return { canceled };
    });
    if (outcome) {
      await storeCampaignTally(this.models, campaignId);
      return outcome;
    }
    const campaign = (await this.models.Campaign.findByPk(campaignId, { attributes: ['state'], raw: true })) as Pick<CampaignRow, 'state'> | null;
    return { state: campaign?.state ?? 'canceled' };
  }

  /**
   * After a message's status changed (and committed): a finished campaign's tally is counted again; an
   * unfinished one completes if the message is final and no other is open.
   */
  async afterMessageSettled(messageId: number): Promise<void> {
    const message = (await this.models.Message.findByPk(messageId, { attributes: ['campaign_id', 'status'], raw: true })) as Pick<MessageRow, 'campaign_id' | 'status'> | null;
    if (!message || message.campaign_id === null) return; // a conversation's reply has no campaign
    const campaign = (await this.models.Campaign.findByPk(message.campaign_id, { attributes: ['state'], raw: true })) as Pick<CampaignRow, 'state'> | null;
    if (campaign?.state === 'completed' || campaign?.state === 'canceled') await storeCampaignTally(this.models, message.campaign_id);
    else if (FINAL_STATUSES.includes(message.status)) await this.completeIfDone(message.campaign_id);
  }

  /** Completes the campaign if it is `queued` or `sending` and none of its messages is open; whether it did. */
  async completeIfDone(campaignId: number, now = new Date()): Promise<boolean> {
    const open = await this.models.Message.findOne({
      attributes: ['id'],
      where: {
        campaign_id: campaignId,
        [Op.or]: [{ status: 'queued' }, { status: { [Op.in]: [...WITH_PROVIDER_STATUSES] }, updated_at: { [Op.gte]: new Date(now.getTime() - this.receiptTimeoutMs) } }],
      },
      raw: true,
    });
    if (open) return false;
    const [moved] = await this.models.Campaign.update({ state: 'completed', finished_at: now }, { where: { id: campaignId, state: { [Op.in]: ['queued', 'sending'] } } });
    if (moved !== 1) return false;
    await storeCampaignTally(this.models, campaignId);
    const campaign = (await this.models.Campaign.findByPk(campaignId, { raw: true })) as CampaignRow | null;
    // Only the call that moved the campaign gets here: its listeners hear of it once.
    if (campaign) for (const listener of this.completedListeners) await listener(campaign);
    return true;
  }

  /**
   * The housekeeping sweep: completes the campaigns whose last open messages timed out waiting for a
   * receipt (or whose completion a stopped process did not record); returns how many.
   */
  async completeFinishedCampaigns(now = new Date()): Promise<number> {
    const unfinished = (await this.models.Campaign.findAll({ attributes: ['id'], where: { state: { [Op.in]: ['queued', 'sending'] } }, order: [['id', 'ASC']], raw: true })) as unknown as Array<Pick<CampaignRow, 'id'>>;
    let completed = 0;
    for (const { id } of unfinished) if (await this.completeIfDone(id, now)) completed += 1;
    return completed;
  }
}

/** A campaign's messages counted by report status and what they cost: kept with a finished campaign. */
interface Tally {
  counts: Array<{ status: SmsMessageStatus; count: number }>;
  cost: Cost[];
}

/**
 * Counts campaign `campaignId`'s messages and keeps the tally with it, under a lock on the campaign: of two
 * tallies after two changes, the one written last was counted after both committed.
 */
export async function storeCampaignTally(models: SmsModels, campaignId: number): Promise<void> {
  const sequelize = models.Campaign.sequelize!;
  await withLocks(sequelize, [`sms-campaign-tally:${campaignId}`], async (transaction) => {
    const where = 'm.campaign_id = ?';
    const [counts, costs] = await Promise.all([countMessages(readerOf(sequelize), where, [campaignId]), chargedCosts(sequelize, where, [campaignId])]);
    const tally: Tally = { counts: counts.get(campaignId) ?? [], cost: costs.get(campaignId) ?? [] };
    await models.Campaign.update({ tally: JSON.stringify(tally) }, { where: { id: campaignId }, transaction });
  });
}

/** Messages counted by report status, per campaign, for the messages matching `where`. */
export async function countMessages(reader: Reader, where: string, values: unknown[]): Promise<Map<number, Array<{ status: SmsMessageStatus; count: number }>>> {
  const rows = await reader.rows<{ campaign_id: number; status: string; opted_out: unknown; messages: unknown }>(
    `SELECT m.campaign_id, m.status, CASE WHEN m.status = 'canceled' AND m.error_message = ? THEN 1 ELSE 0 END AS opted_out, COUNT(*) AS messages
     FROM sms_messages m WHERE ${where} GROUP BY 1, 2, 3`,
    [OPTED_OUT_BEFORE_SENDING, ...values],
  );
  const byCampaign = new Map<number, Array<{ status: SmsMessageStatus; count: number }>>();
  for (const row of rows) {
    const status = reportStatusOf(row.status, asNumber(row.opted_out) === 1 ? OPTED_OUT_BEFORE_SENDING : null);
    const campaignId = asNumber(row.campaign_id);
    byCampaign.set(campaignId, [...(byCampaign.get(campaignId) ?? []), { status, count: asNumber(row.messages) }]);
  }
  return byCampaign;
}

/**
 * What the provider charged, per campaign and currency, for the messages matching `where`. PostgreSQL
 * sums the decimals exactly; SQLite sums them as doubles, which are exact again once rounded to the most
 * decimals a price has (prices have a handful of digits, and a campaign at most SMS_MAX_RECIPIENTS).
 */
export async function chargedCosts(sequelize: Sequelize, where: string, values: unknown[]): Promise<Map<number, Cost[]>> {
  const postgres = sequelize.getDialect() === 'postgres';
  const sum = postgres ? 'SUM(CAST(m.price AS NUMERIC))' : 'SUM(CAST(m.price AS REAL))';
  const point = postgres ? "STRPOS(m.price, '.')" : "INSTR(m.price, '.')";
  const rows = await readerOf(sequelize).rows<{ campaign_id: number; price_unit: string | null; total: unknown; decimals: unknown; messages: unknown }>(
    `SELECT m.campaign_id, m.price_unit, ${sum} AS total, MAX(CASE WHEN ${point} > 0 THEN LENGTH(m.price) - ${point} ELSE 0 END) AS decimals, COUNT(*) AS messages
     FROM sms_messages m WHERE ${where} AND m.price IS NOT NULL GROUP BY m.campaign_id, m.price_unit ORDER BY m.price_unit`,
    values,
  );
  const byCampaign = new Map<number, Cost[]>();
  for (const row of rows) {
    const total = typeof row.total === 'number' ? row.total.toFixed(asNumber(row.decimals)) : String(row.total);
    const cost = { currency: row.price_unit ?? '', amount: chargeOf(total), messages: asNumber(row.messages) };
    const campaignId = asNumber(row.campaign_id);
    byCampaign.set(campaignId, [...(byCampaign.get(campaignId) ?? []), cost]);
  }
  return byCampaign;
}

/** A user as a report names them (UserRef), from the user's columns read beside it; null without a user. */
export function userRefOf(id: number | null, username: string | null, firstName: string | null, lastName: string | null, deletedAt: unknown): components['schemas']['UserRef'] | null {
  if (id === null || username === null) return null;
  return { id: asNumber(id), display_name: displayName({ username, first_name: firstName ?? '', last_name: lastName ?? '', deleted_at: deletedAt }) };
}

function reportOf(row: CampaignReportRow, { counts, cost }: Tally = { counts: [], cost: [] }): SmsCampaignReport {
  const messages: MessageCounts = { queued: 0, sending: 0, sent: 0, delivered: 0, undelivered: 0, failed: 0, canceled: 0, opted_out: asNumber(row.opted_out_skipped) };
  for (const { status, count } of counts) messages[status] += count;
  return {
    id: asNumber(row.id),
    titulo: row.titulo,
    credencial: asNumber(row.credential_id),
    accepted: asNumber(row.accepted),
    rejected: asNumber(row.rejected),
    opted_out_skipped: asNumber(row.opted_out_skipped),
    ...notMobileOf(row),
    encoding: row.encoding,
    segments: asNumber(row.segments),
    state: row.state,
    created_at: asIsoTimestamp(row.created_at),
    entity_id: row.entity_id === null ? null : asNumber(row.entity_id),
    sent_by: userRefOf(row.sender_id, row.sender_username, row.sender_first_name, row.sender_last_name, row.sender_deleted_at),
    finished_at: row.finished_at === null || row.finished_at === undefined ? null : asIsoTimestamp(row.finished_at),
    canceled_by: userRefOf(row.canceler_id, row.canceler_username, row.canceler_first_name, row.canceler_last_name, row.canceler_deleted_at),
    footer: row.footer,
    audience: row.audience === null ? null : (JSON.parse(row.audience) as { tags: string[] }),
    messages,
    cost,
    // The warnings it was accepted with, as its create answered them (under `warn` and `off`).
    ...warningsOf(row.compliance),
    ...declarationOf(row),
    ...syntheticContentOf(row.synthetic_content),
  };
}

/** A campaign's `synthetic_content` field (issue 42): the declaration it was sent with, left out when none. */
export function syntheticContentOf(stored: string | null | undefined): { synthetic_content?: { technology: string } } {
  if (stored === null || stored === undefined) return {};
  return { synthetic_content: JSON.parse(stored) as { technology: string } };
}

/** Its declaration that it is not electoral propaganda (Lei 9.504/1997 art. 36-A), made by its sender when it was sent; left out when none. */
function declarationOf(row: CampaignReportRow): Pick<SmsCampaignReport, 'non_electoral_declaration'> {
  if (row.non_electoral_declaration === null || row.non_electoral_declaration === undefined) return {};
  const declared = JSON.parse(row.non_electoral_declaration) as { text: string; declared_at: string };
  const declaredBy = userRefOf(row.sender_id, row.sender_username, row.sender_first_name, row.sender_last_name, row.sender_deleted_at);
  return { non_electoral_declaration: { text: declared.text, declared_by: declaredBy, declared_at: declared.declared_at } };
}

/**
 * The numbers a campaign skipped because they cannot receive an SMS (campaign-plan.ts, rule `not_mobile`):
 * how many, and the first few, stored masked (migration 0035), so every role reads them alike.
 */
export function notMobileOf(row: { not_mobile_skipped?: unknown; not_mobile_examples?: string | null }): { not_mobile_skipped: number; not_mobile_examples: string[] } {
  const examples = row.not_mobile_examples ? (JSON.parse(row.not_mobile_examples) as string[]) : [];
  return { not_mobile_skipped: row.not_mobile_skipped === undefined || row.not_mobile_skipped === null ? 0 : asNumber(row.not_mobile_skipped), not_mobile_examples: examples };
}

function messageOf(row: MessageReadRow, wholeNumbers: boolean): SmsCampaignMessage {
  return {
    id: asNumber(row.id),
    recipient: wholeNumbers ? row.recipient : maskPhone(row.recipient),
    contact_id: row.contact_id === null ? null : asNumber(row.contact_id),
    status: reportStatusOf(row.status, row.error_message),
    provider_status: row.status,
    error_code: row.error_code,
    error_message: row.error_message,
    price: row.price === null ? null : chargeOf(row.price),
    price_unit: row.price_unit,
    updated_at: asIsoTimestamp(row.updated_at),
  };
}

/** A 409 for a campaign that can no longer be canceled. */
export function notCancelable(campaignId: number, state: SmsCampaignState): ApiError {
  return new ApiError(409, 'conflict', `Campaign ${campaignId} is ${state}; only a queued or sending campaign can be canceled.`, [
    { location: 'path', field: 'campaign_id', rule: 'cancelable_state', message: 'must be a queued or sending campaign', value: state },
  ]);
}
