/**
 * An entity's inbox (issue 24): conversations with the people who write to its SMS credentials, their
 * threads, the team's replies, read marks and assignments. Every write goes through InboxChanges.write,
 * which numbers it for the polling cursor (changes.ts).
 *
 * - A voter's SMS that is not an opt-out keyword (messaging/sms.ts) starts or continues the conversation
 *   of the credential it was sent to and the sender's number, once per provider message id.
 * - A reply is a message without a campaign in `sms_messages`, sent by the campaigns' job, so it reaches
 *   the provider exactly once (messaging/sending.ts); its receipts update its status and add a change.
 * - A number that opted out of the entity's campaigns is never written to, whatever the compliance mode.
 */
import { literal, Op, QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { components } from '../../sdk/schema.js';
import { asIsoTimestamp, asNumber, readerOf, type Reader } from '../db/reader.js';
import type { TeamRole } from '../entities/models.js';
import { rolesThatMay, type Teams } from '../entities/teams.js';
import type { Caller } from '../http/auth.js';
import { invalidBody } from '../http/body-fields.js';
import { ApiError, notFound } from '../http/errors.js';
import { reportStatusOf, userRefOf } from '../messaging/campaign-reports.js';
import type { CredentialRow } from '../messaging/models.js';
import { maskPhone } from '../messaging/phones.js';
import type { Sms, SmsConversationListener } from '../messaging/sms.js';
import type { ChangeRef, InboxChanges } from './changes.js';
import type { ChatModels, ConversationRow } from './models.js';

export type Conversation = components['schemas']['Conversation'];
export type ConversationMessage = components['schemas']['ConversationMessage'];
export type InboxChange = components['schemas']['InboxChange'];

/** The caller's way into a conversation: its row and the caller's role in its entity's team. */
export interface ConversationAccess {
  conversation: ConversationRow;
  role: TeamRole;
  /** Whether the caller reads phone numbers whole (issue 12). */
  wholeNumbers: boolean;
}

const USER_COLUMNS = (alias: string, prefix: string) => ['id', 'username', 'first_name', 'last_name', 'deleted_at'].map((name) => `${alias}.${name} AS ${prefix}_${name}`).join(', ');
const CONVERSATION_SELECT = `SELECT c.*, ct.name AS contact_name, ${USER_COLUMNS('a', 'assignee')} FROM conversations c LEFT JOIN contacts ct ON ct.id = c.contact_id LEFT JOIN users a ON a.id = c.assignee_id`;
const MESSAGE_SELECT = `SELECT cm.id, cm.conversation_id, cm.direction, cm.body, cm.created_at, m.status AS sms_status, m.error_code, m.error_message, ${USER_COLUMNS('u', 'sender')} FROM conversation_messages cm LEFT JOIN sms_messages m ON m.id = cm.sms_message_id LEFT JOIN users u ON u.id = cm.sent_by`;
const ACCESS_SQL = 'SELECT c.*, m.role AS caller_role FROM conversations c LEFT JOIN entity_members m ON m.entity_id = c.entity_id AND m.user_id = ? WHERE c.id = ?';

/** A user's columns read beside a row under a prefix (`assignee_id`...): null when there is no user. */
type UserColumns<Prefix extends string> = { [Column in 'id' | 'username' | 'first_name' | 'last_name' as `${Prefix}_${Column}`]: Column extends 'id' ? number | null : string | null } & { [Column in `${Prefix}_deleted_at`]: unknown };
type ConversationViewRow = ConversationRow & { contact_name: string | null } & UserColumns<'assignee'>;
type MessageViewRow = { id: unknown; conversation_id: unknown; direction: 'in' | 'out'; body: string; created_at: unknown; sms_status: string | null; error_code: string | null; error_message: string | null } & UserColumns<'sender'>;

/** The team roles who may answer a conversation, and so be assigned one. */
const REPLYING_ROLES = rolesThatMay('edit');

export class Inbox implements SmsConversationListener {
  private readonly sequelize: Sequelize;

  constructor(
    private readonly models: ChatModels,
    private readonly sms: Sms,
    private readonly teams: Teams,
    readonly changes: InboxChanges,
  ) {
    this.sequelize = models.Conversation.sequelize!;
  }

  private get reader(): Reader {
    return readerOf(this.sequelize);
  }

  // --- What SMS tells the inbox -----------------------------------------------------------------

  async replyReceived({ credential, from, sid, body }: { credential: CredentialRow; from: string; sid: string; body: string }): Promise<void> {
    const entityId = credential.entity_id;
    if (entityId === null) return; // an admins-only credential has no inbox
    await this.changes.write(entityId, async (transaction, record) => {
      if (await this.models.Message.findOne({ where: { external_id: sid }, attributes: ['id'], transaction })) return; // delivered again
      const conversation = await this.conversationOf(entityId, credential.id, from, transaction);
      const now = new Date();
      const message = await this.models.Message.create({ conversation_id: conversation.id, direction: 'in', body, external_id: sid, created_at: now }, { transaction });
      const messageId = Number(message.get('id'));
      await this.models.Conversation.update(
        { unread_count: literal('unread_count + 1') as unknown as number, last_message_id: messageId, last_message_at: now },
        { where: { id: conversation.id }, transaction },
      );
      await record({ conversation_id: conversation.id, message_id: messageId, kind: 'message' });
    });
  }

  async replyStatusChanged(smsMessageId: number): Promise<void> {
    const row = await this.reader.row<{ id: unknown; conversation_id: unknown; entity_id: unknown }>(
      'SELECT cm.id, cm.conversation_id, c.entity_id FROM conversation_messages cm JOIN conversations c ON c.id = cm.conversation_id WHERE cm.sms_message_id = ?',
      [smsMessageId],
    );
    if (!row) return;
    await this.changes.write(asNumber(row.entity_id), (_transaction, record) => record({ conversation_id: asNumber(row.conversation_id), message_id: asNumber(row.id), kind: 'status' }));
  }

  /** The conversation of this credential and number, started (with the entity's contact of that number) if there is none. */
  private async conversationOf(entityId: number, credentialId: number, participant: string, transaction: Transaction): Promise<ConversationRow> {
    const found = await this.models.Conversation.findOne({ where: { credential_id: credentialId, participant }, raw: true, transaction });
    if (found) return found as unknown as ConversationRow;
    const [contact] = await this.sequelize.query<{ id: number }>('SELECT id FROM contacts WHERE entity_id = ? AND phone = ?', { replacements: [entityId, participant], type: QueryTypes.SELECT, transaction });
    const created = await this.models.Conversation.create(
      { entity_id: entityId, channel: 'sms', credential_id: credentialId, participant, contact_id: contact ? asNumber(contact.id) : null, unread_count: 0, created_at: new Date() },
      { transaction },
    );
    return created.get({ plain: true });
  }

  // --- Access -----------------------------------------------------------------------------------

  /** The conversation if the caller is in its entity's team (platform admins: any); else 404, the same for none. */
  async access(caller: Caller, conversationId: number): Promise<ConversationAccess> {
    const row = Number.isSafeInteger(conversationId) ? await this.reader.row<ConversationRow & { caller_role: TeamRole | null }>(ACCESS_SQL, [caller.user.id, conversationId]) : undefined;
    const role = row && this.teams.roleFrom(caller, row.caller_role);
    if (!row || !role) {
      throw notFound(`There is no conversation ${conversationId} in your teams.`, [
        { location: 'path', field: 'conversation_id', rule: 'in_your_teams', message: 'must be a conversation of one of your teams', value: conversationId },
      ]);
    }
    const conversation = { ...row, id: asNumber(row.id), entity_id: asNumber(row.entity_id), credential_id: row.credential_id === null ? null : asNumber(row.credential_id) };
    return { conversation, role, wholeNumbers: this.teams.may(caller, role, 'readPersonalData') };
  }

  /** Throws 403 unless the caller's role may answer (owner, admins, operators). */
  requireReplier(caller: Caller, role: TeamRole, what: string): void {
    if (!this.teams.may(caller, role, 'edit')) {
      throw new ApiError(403, 'forbidden', `Your role in this team (${role}) may not ${what}: its owner, admins and operators may.`);
    }
  }

  // --- Reads ------------------------------------------------------------------------------------

  /** A page of the entity's conversations, the latest message first. */
  async page(entityId: number, filters: { unreadOnly: boolean; assigneeId?: number }, page: number, pageSize: number, wholeNumbers: boolean): Promise<{ total: number; conversations: Conversation[] }> {
    const where = ['c.entity_id = ?', ...(filters.unreadOnly ? ['c.unread_count > 0'] : []), ...(filters.assigneeId === undefined ? [] : ['c.assignee_id = ?'])].join(' AND ');
    const values = [entityId, ...(filters.assigneeId === undefined ? [] : [filters.assigneeId])];
    const [totalRow, rows] = await Promise.all([
      this.reader.row<{ total: unknown }>(`SELECT COUNT(*) AS total FROM conversations c WHERE ${where}`, values),
      this.reader.rows<ConversationViewRow>(`${CONVERSATION_SELECT} WHERE ${where} ORDER BY c.last_message_at DESC, c.id DESC LIMIT ? OFFSET ?`, [...values, pageSize, (page - 1) * pageSize]),
    ]);
    return { total: asNumber(totalRow?.total ?? 0), conversations: await this.conversationViews(rows, wholeNumbers) };
  }

  /** The conversations as they are now, by id. */
  async conversations(ids: number[], wholeNumbers: boolean): Promise<Map<number, Conversation>> {
    if (ids.length === 0) return new Map();
    const rows = await this.reader.rows<ConversationViewRow>(`${CONVERSATION_SELECT} WHERE c.id IN (${ids.map(() => '?').join(', ')})`, ids);
    return new Map((await this.conversationViews(rows, wholeNumbers)).map((view) => [view.id, view]));
  }

  /** A page of a conversation's messages, oldest first. */
  async thread(conversationId: number, page: number, pageSize: number): Promise<{ total: number; messages: ConversationMessage[] }> {
    const [totalRow, rows] = await Promise.all([
      this.reader.row<{ total: unknown }>('SELECT COUNT(*) AS total FROM conversation_messages WHERE conversation_id = ?', [conversationId]),
      this.reader.rows<MessageViewRow>(`${MESSAGE_SELECT} WHERE cm.conversation_id = ? ORDER BY cm.id LIMIT ? OFFSET ?`, [conversationId, pageSize, (page - 1) * pageSize]),
    ]);
    return { total: asNumber(totalRow?.total ?? 0), messages: rows.map(messageView) };
  }

  /** The messages as they are now, by id. */
  async messages(ids: number[]): Promise<Map<number, ConversationMessage>> {
    if (ids.length === 0) return new Map();
    const rows = await this.reader.rows<MessageViewRow>(`${MESSAGE_SELECT} WHERE cm.id IN (${ids.map(() => '?').join(', ')})`, ids);
    return new Map(rows.map((row) => [asNumber(row.id), messageView(row)]));
  }

  /** Changes with their conversations and messages as they are now. */
  async changeViews(changes: ChangeRef[], wholeNumbers: boolean): Promise<InboxChange[]> {
    const [conversations, messages] = await Promise.all([
      this.conversations([...new Set(changes.map((change) => change.conversation_id))], wholeNumbers),
      this.messages([...new Set(changes.flatMap((change) => (change.message_id === null ? [] : [change.message_id])))]),
    ]);
    return changes.map((change) => ({
      kind: change.kind,
      conversation: conversations.get(change.conversation_id)!,
      message: change.message_id === null ? null : (messages.get(change.message_id) ?? null),
    }));
  }

  // --- Writes -----------------------------------------------------------------------------------

  /**
   * Queues a reply to the conversation's number from its credential; the one written by an earlier run
   * of the same idempotent request (`creationKey`) when there is one. Refuses an opted-out number (422).
   */
  async reply(caller: Caller, conversation: ConversationRow, text: string, creationKey: string | undefined): Promise<ConversationMessage> {
    const earlier = creationKey === undefined ? undefined : await this.reader.row<{ id: unknown }>('SELECT id FROM conversation_messages WHERE creation_key = ?', [creationKey]);
    if (earlier) return (await this.messages([asNumber(earlier.id)])).get(asNumber(earlier.id))!;
    const optedOut = await this.sms.optOuts.has(conversation.entity_id, conversation.participant);
    if (optedOut) {
      throw new ApiError(422, 'validation_failed', `The number of conversation ${conversation.id} opted out of entity ${conversation.entity_id}'s messages; it is not written to.`, [
        { location: 'path', field: 'conversation_id', rule: 'not_opted_out', message: 'must be a conversation with a number that did not opt out', value: conversation.id },
      ]);
    }
    const credential = (await this.sms.models.Credential.findByPk(conversation.credential_id!, { raw: true })) as CredentialRow | null;
    const { messageId, smsMessageId } = await this.changes.write(conversation.entity_id, async (transaction, record) => {
      const smsId = await this.sms.storeReply(credential!, conversation.participant, text, transaction);
      const now = new Date();
      const message = await this.models.Message.create(
        { conversation_id: conversation.id, direction: 'out', body: text, sms_message_id: smsId, sent_by: caller.user.id, creation_key: creationKey ?? null, created_at: now },
        { transaction },
      );
      const id = Number(message.get('id'));
      // Answering is reading: the team saw what it answers.
      await this.models.Conversation.update({ unread_count: 0, last_message_id: id, last_message_at: now }, { where: { id: conversation.id }, transaction });
      await record({ conversation_id: conversation.id, message_id: id, kind: 'message' });
      return { messageId: id, smsMessageId: smsId };
    });
    await this.sms.queueReply(smsMessageId);
    return (await this.messages([messageId])).get(messageId)!;
  }

  /** Sets the unread count to 0 (nothing changes, and no change is recorded, when it is 0 already). */
  async markRead(conversation: ConversationRow): Promise<void> {
    await this.changes.write(conversation.entity_id, async (transaction, record) => {
      const [changed] = await this.models.Conversation.update({ unread_count: 0 }, { where: { id: conversation.id, unread_count: { [Op.gt]: 0 } }, transaction });
      if (changed > 0) await record({ conversation_id: conversation.id, kind: 'read' });
    });
  }

  /** Assigns the conversation to a member of its team who may answer, or to nobody (`null`); 422 otherwise. */
  async assign(conversation: ConversationRow, assigneeId: number | null): Promise<void> {
    if (assigneeId !== null) {
      const member = Number.isSafeInteger(assigneeId)
        ? await this.reader.row<{ role: TeamRole }>('SELECT role FROM entity_members WHERE entity_id = ? AND user_id = ?', [conversation.entity_id, assigneeId])
        : undefined;
      if (!member || !REPLYING_ROLES.includes(member.role)) {
        throw invalidBody([{ location: 'body', field: 'assignee_id', rule: 'team_member_who_may_reply', message: "must be the entity's owner, an admin or an operator of its team", value: assigneeId }]);
      }
    }
    await this.changes.write(conversation.entity_id, async (transaction, record) => {
      const [changed] = await this.models.Conversation.update({ assignee_id: assigneeId }, { where: { id: conversation.id }, transaction });
      if (changed > 0 && conversation.assignee_id !== assigneeId) await record({ conversation_id: conversation.id, kind: 'assigned' });
    });
  }

  // --- Views ------------------------------------------------------------------------------------

  private async conversationViews(rows: ConversationViewRow[], wholeNumbers: boolean): Promise<Conversation[]> {
    const lastMessages = await this.messages(rows.flatMap((row) => (row.last_message_id === null ? [] : [asNumber(row.last_message_id)])));
    return rows.map((row) => ({
      id: asNumber(row.id),
      entity_id: asNumber(row.entity_id),
      channel: row.channel,
      credential_id: row.credential_id === null ? null : asNumber(row.credential_id),
      participant: wholeNumbers ? row.participant : maskPhone(row.participant),
      contact: row.contact_id === null ? null : { id: asNumber(row.contact_id), name: row.contact_name },
      assignee: userRefOf(row.assignee_id, row.assignee_username, row.assignee_first_name, row.assignee_last_name, row.assignee_deleted_at),
      unread_count: asNumber(row.unread_count),
      last_message: row.last_message_id === null ? null : (lastMessages.get(asNumber(row.last_message_id)) ?? null),
      created_at: asIsoTimestamp(row.created_at),
    }));
  }
}

function messageView(row: MessageViewRow): ConversationMessage {
  return {
    id: asNumber(row.id),
    conversation_id: asNumber(row.conversation_id),
    direction: row.direction,
    text: row.body,
    // A reply whose SMS row is gone (erased) shows as failed rather than as nothing.
    status: row.direction === 'in' ? 'received' : row.sms_status === null ? 'failed' : reportStatusOf(row.sms_status, row.error_message),
    error_code: row.error_code ?? null,
    sent_by: userRefOf(row.sender_id, row.sender_username, row.sender_first_name, row.sender_last_name, row.sender_deleted_at),
    created_at: asIsoTimestamp(row.created_at),
  };
}
