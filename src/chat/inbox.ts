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
 * - Messenger conversations (a connected Page and a person) come from the social network's webhook and
 *   are answered through its send API: messenger/channel.ts.
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
import { maskPhone } from '@palanque/rules/phones';
import type { SmsOptOut } from '../messaging/opt-outs.js';
import type { Sms, SmsConversationListener } from '../messaging/sms.js';
import type { ChangeRef, InboxChanges } from './changes.js';
import type { MessengerChannel } from './messenger/channel.js';
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

const userColumns = (alias: string, prefix: string) => ['id', 'username', 'first_name', 'last_name', 'deleted_at'].map((name) => `${alias}.${name} AS ${prefix}_${name}`);
/**
 * The columns messageView reads, without their prefix, and where each comes from: the message (`alias`),
 * its sms_messages row (`m`) and its sender (`u`), as MESSAGE_JOINS joins them.
 */
const MESSAGE_VIEW_COLUMNS = [
  'id', 'conversation_id', 'direction', 'body', 'created_at', 'own_status', 'own_error_code', 'sms_status', 'error_code', 'error_message',
  'sender_id', 'sender_username', 'sender_first_name', 'sender_last_name', 'sender_deleted_at',
] as const;
type MessageColumn = (typeof MESSAGE_VIEW_COLUMNS)[number];
const messageColumnSource = (alias: string): Record<MessageColumn, string> => ({
  id: `${alias}.id`,
  conversation_id: `${alias}.conversation_id`,
  direction: `${alias}.direction`,
  body: `${alias}.body`,
  created_at: `${alias}.created_at`,
  // A messenger answer's own status and error; an SMS answer's are its sms_messages row's.
  own_status: `${alias}.status`,
  own_error_code: `${alias}.error_code`,
  sms_status: 'm.status',
  error_code: 'm.error_code',
  error_message: 'm.error_message',
  sender_id: 'u.id',
  sender_username: 'u.username',
  sender_first_name: 'u.first_name',
  sender_last_name: 'u.last_name',
  sender_deleted_at: 'u.deleted_at',
});
const MESSAGE_COLUMNS = (alias: string, prefix: string) => {
  const source = messageColumnSource(alias);
  return MESSAGE_VIEW_COLUMNS.map((name) => `${source[name]} AS ${prefix}_${name}`);
};
const MESSAGE_JOINS = (alias: string) => `LEFT JOIN sms_messages m ON m.id = ${alias}.sms_message_id LEFT JOIN users u ON u.id = ${alias}.sent_by`;
/** A conversation with its contact's name, its assignee, and its last message (`last_` columns), read in one query. */
const CONVERSATION_COLUMNS = [
  ...['id', 'entity_id', 'channel', 'credential_id', 'page_id', 'participant', 'contact_id', 'assignee_id', 'unread_count', 'last_message_id', 'created_at'].map((name) => `c.${name}`),
  'ct.name AS contact_name',
  ...userColumns('a', 'assignee'),
  ...MESSAGE_COLUMNS('lm', 'last'),
];
/** The joins of CONVERSATION_COLUMNS, from `conversations c` or from a subquery named `c`. */
const conversationsFrom = (source: string) =>
  `FROM ${source} LEFT JOIN contacts ct ON ct.id = c.contact_id LEFT JOIN users a ON a.id = c.assignee_id LEFT JOIN conversation_messages lm ON lm.id = c.last_message_id ${MESSAGE_JOINS('lm')}`;
const CONVERSATION_FROM = conversationsFrom('conversations c');
const NEWEST_FIRST = 'ORDER BY c.last_message_at DESC, c.id DESC';
const THREAD_COLUMNS = MESSAGE_COLUMNS('cm', 'message');
const THREAD_FROM = `FROM conversation_messages cm ${MESSAGE_JOINS('cm')}`;
const ACCESS_SQL = 'SELECT c.*, m.role AS caller_role FROM conversations c LEFT JOIN entity_members m ON m.entity_id = c.entity_id AND m.user_id = ? WHERE c.id = ?';

/** A user's columns read beside a row under a prefix (`assignee_id`...): null when there is no user. */
type UserColumns<Prefix extends string> = { [Column in 'id' | 'username' | 'first_name' | 'last_name' as `${Prefix}_${Column}`]: Column extends 'id' ? number | null : string | null } & { [Column in `${Prefix}_deleted_at`]: unknown };
/** A message's columns and its sender's, read under a prefix (`last_body`, `last_sender_id`...): see MESSAGE_COLUMNS. */
type MessageColumns<Prefix extends string> = Record<`${Prefix}_${string}`, unknown>;
type ConversationViewRow = Omit<ConversationRow, 'last_message_at'> & { contact_name: string | null } & UserColumns<'assignee'> & MessageColumns<'last'>;
type MessageViewRow = MessageColumns<'message'>;

/** The team roles who may answer a conversation, and so be assigned one. */
const REPLYING_ROLES = rolesThatMay('edit');

export class Inbox implements SmsConversationListener {
  private readonly sequelize: Sequelize;

  constructor(
    private readonly models: ChatModels,
    private readonly sms: Sms,
    private readonly teams: Teams,
    readonly changes: InboxChanges,
    readonly messenger: MessengerChannel,
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
    const received = await this.changes.write(entityId, async (transaction, record) => {
      if (await this.models.Message.findOne({ where: { external_id: sid }, attributes: ['id'], transaction })) return undefined; // delivered again
      const conversation = await this.conversationOf(entityId, credential.id, from, transaction);
      const now = new Date();
      const message = await this.models.Message.create({ conversation_id: conversation.id, direction: 'in', body, external_id: sid, created_at: now }, { transaction });
      const messageId = Number(message.get('id'));
      await this.models.Conversation.update(
        { unread_count: literal('unread_count + 1') as unknown as number, last_message_id: messageId, last_message_at: now },
        { where: { id: conversation.id }, transaction },
      );
      await record({ conversation_id: conversation.id, message_id: messageId, kind: 'message' });
      return { entityId, conversationId: conversation.id, messageId };
    });
    if (received) await this.changes.inboundReceived(received);
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

  /**
   * A page of the entity's conversations, the latest message first. One query, as the campaign list
   * reads its page (messaging/campaign-reports.ts): each row carries its last message and the count of
   * every such conversation; a page with no row counts on its own (page 1: none at all). The page's
   * conversations are chosen before the joins: PostgreSQL otherwise joined all 500 of the bench's
   * conversations to their messages and then kept 30 (2.4 ms against 0.9 ms).
   */
  async page(entityId: number, filters: { unreadOnly: boolean; assigneeId?: number }, page: number, pageSize: number, wholeNumbers: boolean): Promise<{ total: number; conversations: Conversation[] }> {
    const where = (alias: string) =>
      [`${alias}.entity_id = ?`, ...(filters.unreadOnly ? [`${alias}.unread_count > 0`] : []), ...(filters.assigneeId === undefined ? [] : [`${alias}.assignee_id = ?`])].join(' AND ');
    const filter = [entityId, ...(filters.assigneeId === undefined ? [] : [filters.assigneeId])];
    const countSql = `SELECT COUNT(*) FROM conversations t WHERE ${where('t')}`;
    const rows = await this.reader.wideRows<ConversationViewRow & { total: unknown }>(
      [...CONVERSATION_COLUMNS, `(${countSql}) AS total`],
      `${conversationsFrom(`(SELECT * FROM conversations c WHERE ${where('c')} ${NEWEST_FIRST} LIMIT ? OFFSET ?) c`)} ${NEWEST_FIRST}`,
      [...filter, ...filter, pageSize, (page - 1) * pageSize],
    );
    const total = rows.length > 0 ? asNumber(rows[0]!.total) : page === 1 ? 0 : asNumber((await this.reader.row<{ total: unknown }>(countSql.replace('COUNT(*)', 'COUNT(*) AS total'), filter))?.total ?? 0);
    return { total, conversations: rows.map((row) => conversationView(row, wholeNumbers)) };
  }

  /** The conversations as they are now, by id. */
  async conversations(ids: number[], wholeNumbers: boolean): Promise<Map<number, Conversation>> {
    if (ids.length === 0) return new Map();
    const rows = await this.reader.wideRows<ConversationViewRow>(CONVERSATION_COLUMNS, `${CONVERSATION_FROM} WHERE c.id IN (${ids.map(() => '?').join(', ')})`, ids);
    return new Map(rows.map((row) => [asNumber(row.id), conversationView(row, wholeNumbers)]));
  }

  /** A page of a conversation's messages, oldest first. */
  async thread(conversationId: number, page: number, pageSize: number): Promise<{ total: number; messages: ConversationMessage[] }> {
    const [totalRow, rows] = await Promise.all([
      this.reader.row<{ total: unknown }>('SELECT COUNT(*) AS total FROM conversation_messages WHERE conversation_id = ?', [conversationId]),
      this.reader.wideRows<MessageViewRow>(THREAD_COLUMNS, `${THREAD_FROM} WHERE cm.conversation_id = ? ORDER BY cm.id LIMIT ? OFFSET ?`, [conversationId, pageSize, (page - 1) * pageSize]),
    ]);
    return { total: asNumber(totalRow?.total ?? 0), messages: rows.map((row) => messageView(row, 'message')!) };
  }

  /** The messages as they are now, by id. */
  async messages(ids: number[]): Promise<Map<number, ConversationMessage>> {
    if (ids.length === 0) return new Map();
    const rows = await this.reader.wideRows<MessageViewRow>(THREAD_COLUMNS, `${THREAD_FROM} WHERE cm.id IN (${ids.map(() => '?').join(', ')})`, ids);
    return new Map(rows.map((row) => [asNumber(row.message_id), messageView(row, 'message')!]));
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
    if (conversation.channel === 'messenger') return this.answerOnMessenger(caller, conversation, text, creationKey);
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

  /** Queues an answer to the person from the conversation's Page (422 outside the network's window, or once the Page is gone). */
  private async answerOnMessenger(caller: Caller, conversation: ConversationRow, text: string, creationKey: string | undefined): Promise<ConversationMessage> {
    await this.messenger.checkAnswerable(conversation);
    const messageId = await this.changes.write(conversation.entity_id, (transaction, record) =>
      this.messenger.storeAnswer(conversation, text, { userId: caller.user.id, creationKey: creationKey ?? null }, transaction, record),
    );
    await this.messenger.queue(messageId);
    return (await this.messages([messageId])).get(messageId)!;
  }

  /**
   * Opts the conversation's number out of its entity's campaigns, by hand (opt-outs.ts): the
   * opt-out kept, and whether it is new. 422 for a messenger conversation, which has no number.
   */
  async optOut(caller: Caller, conversation: ConversationRow): Promise<{ optOut: SmsOptOut; added: boolean }> {
    if (conversation.channel !== 'sms') {
      throw new ApiError(422, 'validation_failed', `Conversation ${conversation.id} is a messenger conversation; only an SMS conversation has a number to opt out.`, [
        { location: 'path', field: 'conversation_id', rule: 'sms_conversation', message: 'must be an SMS conversation', value: conversation.id },
      ]);
    }
    const added = await this.sms.optOuts.record([conversation.entity_id], conversation.participant, { source: 'conversation', createdBy: caller.user.id });
    const optOut = await this.sms.optOuts.find(conversation.entity_id, conversation.participant);
    // An erased number is known only by its suppression: it is answered as an opt-out of now.
    return { optOut: optOut ?? { phone: conversation.participant, keyword: null, source: 'conversation', phrase: null, opted_out_at: new Date().toISOString() }, added };
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

}

function conversationView(row: ConversationViewRow, wholeNumbers: boolean): Conversation {
  return {
    id: asNumber(row.id),
    entity_id: asNumber(row.entity_id),
    channel: row.channel,
    credential_id: row.credential_id === null ? null : asNumber(row.credential_id),
    page_id: row.page_id,
    // A page-scoped id names nobody outside its Page: only phone numbers are masked.
    participant: wholeNumbers || row.channel !== 'sms' ? row.participant : maskPhone(row.participant),
    contact: row.contact_id === null ? null : { id: asNumber(row.contact_id), name: row.contact_name },
    assignee: userRefOf(row.assignee_id, row.assignee_username, row.assignee_first_name, row.assignee_last_name, row.assignee_deleted_at),
    unread_count: asNumber(row.unread_count),
    last_message: messageView(row, 'last'),
    created_at: asIsoTimestamp(row.created_at),
  };
}

/** Each column's name under each prefix, made once: a list of 30 conversations built 450 names a request. */
const prefixed = (prefix: string) => Object.fromEntries(MESSAGE_VIEW_COLUMNS.map((name) => [name, `${prefix}_${name}`])) as Record<MessageColumn, string>;
const MESSAGE_KEYS = { last: prefixed('last'), message: prefixed('message') };

/** The message read under `prefix`, or null when there is none (a conversation without messages). */
function messageView(row: object, prefix: 'last' | 'message'): ConversationMessage | null {
  const columns = row as Record<string, unknown>;
  const key = MESSAGE_KEYS[prefix];
  const column = <Value = unknown>(name: MessageColumn) => columns[key[name]] as Value;
  if (column('id') == null) return null;
  const direction = column<'in' | 'out'>('direction');
  const ownStatus = column<ConversationMessage['status'] | null>('own_status');
  const smsStatus = column<string | null>('sms_status');
  return {
    id: asNumber(column('id')),
    conversation_id: asNumber(column('conversation_id')),
    direction,
    text: column<string>('body'),
    // A reply whose SMS row is gone (erased) shows as failed rather than as nothing.
    status: direction === 'in' ? 'received' : (ownStatus ?? (smsStatus === null ? 'failed' : reportStatusOf(smsStatus, column<string | null>('error_message')))),
    error_code: column<string | null>('own_error_code') ?? column<string | null>('error_code') ?? null,
    sent_by: userRefOf(column<number | null>('sender_id'), column<string | null>('sender_username'), column<string | null>('sender_first_name'), column<string | null>('sender_last_name'), column('sender_deleted_at')),
    created_at: asIsoTimestamp(column('created_at')),
  };
}
