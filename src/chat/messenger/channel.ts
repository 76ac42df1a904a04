/**
 * The messenger channel of the inbox (issue 24): the social network's Pages connected to entities, the
 * people's messages its webhook delivers, and the team's answers sent through its send API.
 *
 * - A person's message to a connected Page starts or continues the conversation of that Page and the
 *   person's page-scoped id, once per message id (`mid`): the network may deliver it more than once.
 * - An answer is a conversation message with its own status, queued in the request's transaction and
 *   sent by the MESSENGER_SEND_JOB. The send API takes no idempotency key, so the job sends **at most
 *   once**: it claims the message (`queued` → `sending`) before calling the network, and a claimed
 *   message is never sent again. A send the network refused, or did not take (a rate limit, no
 *   connection), is `failed` with its code, or `queued` again for the job's next try; one whose outcome is
 *   unknown (a timeout, a lost connection, a crash between the claim and the answer) is `failed` with
 *   `outcome_unknown`, for the team to decide.
 * - The network's delivery events mark answers `delivered`, by their mids or below a watermark.
 * Every change goes through InboxChanges.write (the polling cursor, changes.ts).
 */
import { literal, Op, UniqueConstraintError, type Sequelize, type Transaction } from 'sequelize';
import type { components } from '../../../sdk/schema.js';
import { asDate, asIsoTimestamp, asNumber, readerOf } from '../../db/reader.js';
import type { JobAttempt, JobQueue } from '../../jobs/index.js';
import type { Logger } from '../../logger.js';
import type { Caller } from '../../http/auth.js';
import { ApiError, notFound } from '../../http/errors.js';
import { userRefOf } from '../../messaging/campaign-reports.js';
import { ProviderError } from '../../messaging/provider.js';
import type { SecretBox } from '../../security/secret-box.js';
import type { MessagingEvent, MessagingOutcome, MessagingReceiver } from '../../socialnet/events.js';
import type { InboxChanges, RecordChange } from '../changes.js';
import type { ChatModels, ConversationMessageRow, ConversationRow, MessengerPageRow } from '../models.js';
import type { MessengerSendApi } from './send-api.js';

export type MessengerPage = components['schemas']['MessengerPage'];

export const MESSENGER_SEND_JOB = 'messenger-send';
/** The network takes a `RESPONSE` within 24 hours of the person's last message. */
export const MESSAGING_WINDOW_MS = 24 * 3600_000;
/** Tries of a send the network did not take (rate limits, no connection); the job queue spaces them. */
const SEND_RETRIES = 4;
/** The longest text a conversation message keeps (the network's own limit). */
const MAX_TEXT = 2000;

export interface MessengerDependencies {
  jobs: JobQueue;
  api: MessengerSendApi;
  /** Seals and opens the Pages' tokens; without it (no SECRETS_KEY) no Page can be connected. */
  box: SecretBox | undefined;
  logger: Logger;
  /** How long a send may take (the API client's timeout): a claim older than this and a margin was cut off. */
  sendTimeoutMs: number;
}

const PAGE_SELECT =
  'SELECT p.page_id, p.entity_id, p.name, p.created_at, p.updated_at, p.connected_by, u.username, u.first_name, u.last_name, u.deleted_at FROM messenger_pages p LEFT JOIN users u ON u.id = p.connected_by';
type PageViewRow = Pick<MessengerPageRow, 'page_id' | 'name' | 'connected_by'> & { entity_id: unknown; created_at: unknown; updated_at: unknown; username: string | null; first_name: string | null; last_name: string | null; deleted_at: unknown };

export class MessengerChannel implements MessagingReceiver {
  private readonly sequelize: Sequelize;

  constructor(
    private readonly models: ChatModels,
    private readonly changes: InboxChanges,
    private readonly dependencies: MessengerDependencies,
  ) {
    this.sequelize = models.Page.sequelize!;
  }

  get canStoreTokens(): boolean {
    return this.dependencies.box !== undefined;
  }

  async registerJobs(): Promise<void> {
    await this.dependencies.jobs.register(MESSENGER_SEND_JOB, (data, job) => this.send((data as { message_id: number }).message_id, job), { retryLimit: SEND_RETRIES });
  }

  // --- Pages ------------------------------------------------------------------------------------

  /** Connects the Page to the entity (or renews its name and token there); 422 when another entity has it. */
  async connect(caller: Caller, entityId: number, page: { pageId: string; name: string; accessToken: string }): Promise<{ page: MessengerPage; created: boolean }> {
    try {
      return await this.connectOnce(caller, entityId, page);
    } catch (error) {
      // Two connections of a new Page at once: the one that lost the insert finds the other's row.
      if (!(error instanceof UniqueConstraintError)) throw error;
      return this.connectOnce(caller, entityId, page);
    }
  }

  private async connectOnce(caller: Caller, entityId: number, page: { pageId: string; name: string; accessToken: string }): Promise<{ page: MessengerPage; created: boolean }> {
    const sealed = this.dependencies.box!.seal(page.accessToken);
    const now = new Date();
    const created = await this.sequelize.transaction(async (transaction) => {
      const existing = await this.models.Page.findOne({ where: { page_id: page.pageId }, transaction, lock: transaction.LOCK.UPDATE });
      if (existing && existing.get('entity_id') !== entityId) {
        throw new ApiError(422, 'validation_failed', `Page ${page.pageId} is connected to another entity; its admins must disconnect it first.`, [
          { location: 'body', field: 'page_id', rule: 'not_connected_elsewhere', message: 'must be a Page not connected to another entity', value: page.pageId },
        ]);
      }
      const values = { name: page.name, access_token_sealed: sealed, connected_by: caller.user.id, updated_at: now };
      if (existing) await existing.update(values, { transaction });
      else await this.models.Page.create({ page_id: page.pageId, entity_id: entityId, ...values, created_at: now }, { transaction });
      return !existing;
    });
    return { page: (await this.pageViews('p.page_id = ?', [page.pageId]))[0]!, created };
  }

  /** The entity's Pages, oldest first. */
  async pages(entityId: number): Promise<MessengerPage[]> {
    return this.pageViews('p.entity_id = ? ORDER BY p.created_at, p.id', [entityId]);
  }

  /** The Page with its entity, if one is connected with this id. */
  async page(pageId: string): Promise<MessengerPage | undefined> {
    return (await this.pageViews('p.page_id = ?', [pageId]))[0];
  }

  /** Forgets the Page and its token; its conversations stay, and answers not yet handed over are not sent. */
  async disconnect(pageId: string): Promise<void> {
    await this.models.Page.destroy({ where: { page_id: pageId } });
  }

  private async pageViews(where: string, values: unknown[]): Promise<MessengerPage[]> {
    const rows = await readerOf(this.sequelize).rows<PageViewRow>(`${PAGE_SELECT} WHERE ${where}`, values);
    return rows.map((row) => ({
      page_id: row.page_id,
      entity_id: asNumber(row.entity_id),
      name: row.name,
      connected_by: userRefOf(row.connected_by, row.username, row.first_name, row.last_name, row.deleted_at),
      created_at: asIsoTimestamp(row.created_at),
      updated_at: asIsoTimestamp(row.updated_at),
    }));
  }

  // --- What the webhook delivers ----------------------------------------------------------------

  /** A delivery's messaging events, in order: people's messages into the inbox, delivery events onto answers. */
  async receive(events: Array<{ pageId: string; event: MessagingEvent }>): Promise<MessagingOutcome> {
    const outcome: MessagingOutcome = { messages: 0, deliveries: 0, ignored: 0 };
    const pages = new Map<string, number | undefined>();
    const entityOf = async (pageId: string) => {
      if (!pages.has(pageId)) pages.set(pageId, ((await this.models.Page.findOne({ where: { page_id: pageId }, attributes: ['entity_id'], raw: true })) as { entity_id: number } | null)?.entity_id);
      return pages.get(pageId);
    };
    for (const { pageId, event } of events) {
      const message = event.message;
      const isMessage = message !== undefined && message.is_echo !== true && typeof message.mid === 'string' && event.recipient.id === pageId;
      const entityId = isMessage || event.delivery ? await entityOf(pageId) : undefined;
      // Ignored too: a message stored before (the network delivered it again), a delivery event that changed nothing.
      if (entityId === undefined) outcome.ignored += 1;
      else if (isMessage) {
        if (await this.messageReceived(entityId, pageId, event)) outcome.messages += 1;
        else outcome.ignored += 1;
      } else {
        const delivered = await this.delivered(entityId, pageId, event);
        if (delivered > 0) outcome.deliveries += delivered;
        else outcome.ignored += 1;
      }
    }
    return outcome;
  }

  /** Stores a person's message (false when its mid was stored before). */
  private async messageReceived(entityId: number, pageId: string, event: MessagingEvent): Promise<boolean> {
    const { mid, text, attachments } = event.message!;
    const body = (text ?? (attachments ?? []).map((attachment) => `[${attachment.type ?? 'attachment'}]`).join(' ')).slice(0, MAX_TEXT) || '[message]';
    // The window for answers runs from when the person wrote, as the network counts it.
    const writtenAt = event.timestamp === undefined ? new Date() : new Date(event.timestamp);
    const received = await this.changes.write(entityId, async (transaction, record) => {
      if (await this.models.Message.findOne({ where: { external_id: mid! }, attributes: ['id'], transaction })) return undefined;
      const conversation = await this.conversationOf(entityId, pageId, event.sender.id, transaction);
      const created = await this.models.Message.create({ conversation_id: conversation.id, direction: 'in', body, external_id: mid!, created_at: writtenAt }, { transaction });
      const messageId = Number(created.get('id'));
      await this.models.Conversation.update(
        { unread_count: literal('unread_count + 1') as unknown as number, last_message_id: messageId, last_message_at: new Date() },
        { where: { id: conversation.id }, transaction },
      );
      await record({ conversation_id: conversation.id, message_id: messageId, kind: 'message' });
      return { entityId, conversationId: conversation.id, messageId };
    });
    if (received) await this.changes.inboundReceived(received);
    return received !== undefined;
  }

  /** Marks the Page's answers to the person delivered, by mids or below the watermark; how many changed. */
  private async delivered(entityId: number, pageId: string, event: MessagingEvent): Promise<number> {
    const { mids, watermark } = event.delivery!;
    return this.changes.write(entityId, async (transaction, record) => {
      const conversation = (await this.models.Conversation.findOne({ where: { page_id: pageId, participant: event.sender.id }, attributes: ['id'], raw: true, transaction })) as { id: number } | null;
      if (!conversation) return 0;
      const which = mids && mids.length > 0 ? { external_id: { [Op.in]: mids } } : watermark === undefined ? undefined : { sent_at: { [Op.lte]: new Date(watermark) } };
      if (!which) return 0;
      const where = { conversation_id: conversation.id, direction: 'out' as const, status: 'sent' as const, ...which };
      const reached = (await this.models.Message.findAll({ where, attributes: ['id'], raw: true, transaction })) as unknown as Array<{ id: number }>;
      if (reached.length === 0) return 0;
      await this.models.Message.update({ status: 'delivered', updated_at: new Date() }, { where: { id: { [Op.in]: reached.map((row) => row.id) } }, transaction });
      for (const row of reached) await record({ conversation_id: conversation.id, message_id: asNumber(row.id), kind: 'status' });
      return reached.length;
    });
  }

  /** The conversation of this Page and person, started if there is none. */
  private async conversationOf(entityId: number, pageId: string, participant: string, transaction: Transaction): Promise<ConversationRow> {
    const found = await this.models.Conversation.findOne({ where: { page_id: pageId, participant }, raw: true, transaction });
    if (found) return found as unknown as ConversationRow;
    const created = await this.models.Conversation.create(
      { entity_id: entityId, channel: 'messenger', credential_id: null, page_id: pageId, participant, contact_id: null, unread_count: 0, created_at: new Date() },
      { transaction },
    );
    return created.get({ plain: true });
  }

  // --- Answers ----------------------------------------------------------------------------------

  /** Throws 422 unless the conversation's Page is connected and its person wrote within the window. */
  async checkAnswerable(conversation: ConversationRow, now = new Date()): Promise<void> {
    const refuse = (rule: string, message: string, detail: string) => {
      throw new ApiError(422, 'validation_failed', message, [{ location: 'path', field: 'conversation_id', rule, message: detail, value: conversation.id }]);
    };
    const page = await this.models.Page.findOne({ where: { page_id: conversation.page_id!, entity_id: conversation.entity_id }, attributes: ['id'] });
    if (!page) refuse('page_connected', `The Page of conversation ${conversation.id} is no longer connected to entity ${conversation.entity_id}; it cannot be answered.`, 'must be a conversation of a connected Page');
    const last = await readerOf(this.sequelize).row<{ at: unknown }>("SELECT MAX(created_at) AS at FROM conversation_messages WHERE conversation_id = ? AND direction = 'in'", [conversation.id]);
    const wroteAt = last?.at === null || last?.at === undefined ? undefined : asDate(last.at);
    if (!wroteAt || now.getTime() - wroteAt.getTime() > MESSAGING_WINDOW_MS) {
      const until = wroteAt ? new Date(wroteAt.getTime() + MESSAGING_WINDOW_MS).toISOString() : 'now';
      refuse(
        'within_messaging_window',
        `The person of conversation ${conversation.id} last wrote at ${wroteAt?.toISOString() ?? 'no time'}: the network takes answers within 24 hours of that, until ${until}.`,
        'must be a messenger conversation whose person wrote in the last 24 hours',
      );
    }
  }

  /** Stores an answer, queued, inside the inbox write that records it (its job is queued after the commit: `queue`). */
  async storeAnswer(conversation: ConversationRow, text: string, writer: { userId: number; creationKey: string | null }, transaction: Transaction, record: RecordChange): Promise<number> {
    const now = new Date();
    const message = await this.models.Message.create(
      { conversation_id: conversation.id, direction: 'out', body: text, sent_by: writer.userId, creation_key: writer.creationKey, status: 'queued', updated_at: now, created_at: now },
      { transaction },
    );
    const id = Number(message.get('id'));
    // Answering is reading: the team saw what it answers.
    await this.models.Conversation.update({ unread_count: 0, last_message_id: id, last_message_at: now }, { where: { id: conversation.id }, transaction });
    await record({ conversation_id: conversation.id, message_id: id, kind: 'message' });
    return id;
  }

  async queue(messageId: number): Promise<void> {
    await this.dependencies.jobs.enqueue(MESSENGER_SEND_JOB, { message_id: messageId });
  }

  /**
   * Queues again the answers whose job was lost with a process: queued, or claimed by a run that died,
   * and untouched for `stalledAfterMs`. A claimed one is then settled as `outcome_unknown`, never sent
   * again (`send`). Returns how many.
   */
  async enqueueStalledAnswers(stalledAfterMs: number): Promise<number> {
    const stalled = (await this.models.Message.findAll({
      attributes: ['id'],
      where: { status: { [Op.in]: ['queued', 'sending'] }, updated_at: { [Op.lt]: new Date(Date.now() - stalledAfterMs) } },
      order: [['id', 'ASC']],
      raw: true,
    })) as unknown as Array<{ id: number }>;
    if (stalled.length === 0) return 0;
    const ids = stalled.map((message) => asNumber(message.id));
    this.dependencies.logger.warn({ message_ids: ids.slice(0, 20), messages: ids.length }, 'messenger answers left without a job: queueing them again');
    // Touched, so that the next sweep leaves them to this run (a claim keeps its time: it tells how old it is).
    await this.models.Message.update({ updated_at: new Date() }, { where: { id: { [Op.in]: ids }, status: 'queued' } });
    await this.dependencies.jobs.enqueueMany(MESSENGER_SEND_JOB, ids.map((messageId) => ({ message_id: messageId })));
    return ids.length;
  }

  /** The send job: at most one call to the network per answer (see the top of this file). */
  async send(messageId: number, job: JobAttempt): Promise<{ status: string }> {
    const answer = await this.claim(messageId);
    if (answer === 'in_flight') throw new Error(`Messenger answer ${messageId} is being sent by another run; this run looks again later.`);
    if (answer === 'cut_off') return this.settle(messageId, { status: 'failed', error_code: 'outcome_unknown', error_message: 'The send was cut off before the network answered; the person may have the message.' });
    if (answer === undefined) return { status: 'settled' };
    const token = answer.page ? this.openToken(answer.page) : undefined;
    if (!token) return this.settle(messageId, { status: 'failed', error_code: 'disconnected', error_message: 'The Page was disconnected before the answer was sent.' });
    // When it was handed over: the network sent it after this, so a delivery watermark later than the network's send time is later than this too.
    const handedAt = new Date();
    try {
      const { messageId: mid } = await this.dependencies.api.send({ pageId: answer.conversation.page_id!, accessToken: token, recipientId: answer.conversation.participant, text: answer.text });
      return this.settle(messageId, { status: 'sent', external_id: mid, sent_at: handedAt });
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      if (error.outcome === 'not_accepted' && !job.lastAttempt) {
        // Not taken: back in the queue for the job's next try, which claims it again.
        await this.models.Message.update({ status: 'queued', updated_at: new Date() }, { where: { id: messageId, status: 'sending' } });
        throw error;
      }
      const code = error.outcome === 'unknown' ? 'outcome_unknown' : (error.code ?? 'refused');
      this.dependencies.logger.warn({ messageId, outcome: error.outcome, code: error.code }, 'messenger answer not sent');
      return this.settle(messageId, { status: 'failed', error_code: code.slice(0, 16), error_message: error.message });
    }
  }

  /**
   * Claims a queued answer for sending. `in_flight` when another run claimed it moments ago; `cut_off`
   * when a claim is older than a send can take (its run died between the claim and the answer);
   * undefined when it was settled already.
   */
  private async claim(messageId: number): Promise<{ conversation: ConversationRow; text: string; page: MessengerPageRow | null } | 'in_flight' | 'cut_off' | undefined> {
    const now = new Date();
    const [claimed] = await this.models.Message.update({ status: 'sending', updated_at: now }, { where: { id: messageId, status: 'queued' } });
    const message = (await this.models.Message.findByPk(messageId, { raw: true })) as ConversationMessageRow | null;
    if (!message) return undefined;
    if (claimed === 0) {
      if (message.status !== 'sending') return undefined;
      const claimedAt = message.updated_at ? asDate(message.updated_at).getTime() : 0;
      return now.getTime() - claimedAt > this.dependencies.sendTimeoutMs + 30_000 ? 'cut_off' : 'in_flight';
    }
    const conversation = (await this.models.Conversation.findByPk(message.conversation_id, { raw: true })) as ConversationRow | null;
    if (!conversation) return undefined;
    const page = (await this.models.Page.findOne({ where: { page_id: conversation.page_id!, entity_id: conversation.entity_id }, raw: true })) as MessengerPageRow | null;
    return { conversation, text: message.body, page };
  }

  private openToken(page: MessengerPageRow): string | undefined {
    try {
      return this.dependencies.box?.open(page.access_token_sealed);
    } catch (error) {
      this.dependencies.logger.error({ pageId: page.page_id, err: error }, 'a Page token cannot be opened (SECRETS_KEY changed?)');
      return undefined;
    }
  }

  /** Records the outcome of a claimed answer, and its change. */
  private async settle(messageId: number, outcome: { status: 'sent' | 'failed'; external_id?: string; sent_at?: Date; error_code?: string; error_message?: string }): Promise<{ status: string }> {
    const row = await readerOf(this.sequelize).row<{ conversation_id: unknown; entity_id: unknown }>(
      'SELECT cm.conversation_id, c.entity_id FROM conversation_messages cm JOIN conversations c ON c.id = cm.conversation_id WHERE cm.id = ?',
      [messageId],
    );
    if (!row) return { status: 'settled' };
    await this.changes.write(asNumber(row.entity_id), async (transaction, record) => {
      const [changed] = await this.models.Message.update({ ...outcome, updated_at: new Date() }, { where: { id: messageId, status: 'sending' }, transaction });
      if (changed > 0) await record({ conversation_id: asNumber(row.conversation_id), message_id: messageId, kind: 'status' });
    });
    return { status: outcome.status };
  }
}

/** The 404 of a Page outside the caller's teams (or none). */
export function pageNotFound(pageId: string): ApiError {
  return notFound(`There is no messenger Page ${pageId} connected to an entity of your teams.`, [
    { location: 'path', field: 'page_id', rule: 'in_your_teams', message: 'must be a Page connected to an entity of one of your teams', value: pageId },
  ]);
}

