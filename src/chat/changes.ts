/**
 * The inbox's changes, numbered, and the polling cursor that reads them (listInboxChanges).
 *
 * The guarantee: every change of an entity's inbox after a cursor is answered exactly once across the
 * answers that follow it, whichever instance answers. It holds because a cursor is a change's id in the
 * database, and an entity's changes get their ids in the order they commit: every inbox write of an
 * entity runs under one lock per entity (on PostgreSQL an advisory lock held until its transaction
 * commits, so across instances; on SQLite one process), and inserts its change inside it. A reader
 * therefore never sees a change while an earlier-numbered one of the same entity is still uncommitted.
 *
 * A waiting poll is woken at once by a change committed in this process, and looks again every
 * POLL_INTERVAL_MS for changes committed by other instances.
 */
import { EventEmitter } from 'node:events';
import type { Sequelize, Transaction } from 'sequelize';
import { withLockedTransaction } from '../db/locks.js';
import { asNumber, readerOf } from '../db/reader.js';
import type { ChangeKind, ChatModels } from './models.js';

/** How often a waiting poll looks for changes committed by other instances. */
export const POLL_INTERVAL_MS = 1_000;

export interface ChangeRef {
  id: number;
  conversation_id: number;
  message_id: number | null;
  kind: ChangeKind;
}

/** Records a change of the write it is given to (see InboxChanges.write). */
export type RecordChange = (change: { conversation_id: number; message_id?: number | null; kind: ChangeKind }) => Promise<void>;

/** A person's message, stored and committed: its conversation and the message. */
export interface InboundMessage {
  entityId: number;
  conversationId: number;
  messageId: number;
}

export class InboxChanges {
  private readonly committed = new EventEmitter().setMaxListeners(0);
  private readonly inboundListeners: Array<(message: InboundMessage) => Promise<void>> = [];

  constructor(
    private readonly models: ChatModels,
    private readonly sequelize: Sequelize,
  ) {}

  /** Calls `listener` with each person's message once committed, SMS or messenger (the assignee is notified). */
  onInbound(listener: (message: InboundMessage) => Promise<void>): void {
    this.inboundListeners.push(listener);
  }

  /** Tells the listeners of a person's message that was just committed. */
  async inboundReceived(message: InboundMessage): Promise<void> {
    for (const listener of this.inboundListeners) await listener(message);
  }

  /** Runs an inbox write of `entityId` under its lock, in one transaction; its changes are numbered in commit order. */
  async write<T>(entityId: number, work: (transaction: Transaction, record: RecordChange) => Promise<T>): Promise<T> {
    const result = await withLockedTransaction(this.sequelize, [`inbox:${entityId}`], (transaction) =>
      work(transaction, async ({ conversation_id, message_id = null, kind }) => {
        await this.models.Change.create({ entity_id: entityId, conversation_id, message_id, kind, created_at: new Date() }, { transaction });
      }),
    );
    this.committed.emit(String(entityId));
    return result;
  }

  /** The cursor of the entity's latest change ('0' before any). */
  async current(entityId: number): Promise<string> {
    const row = await readerOf(this.sequelize).row<{ latest: unknown }>('SELECT MAX(id) AS latest FROM inbox_changes WHERE entity_id = ?', [entityId]);
    return String(row?.latest === null || row?.latest === undefined ? 0 : asNumber(row.latest));
  }

  /** Up to `limit` changes of the entity after `cursor`, oldest first, and whether more wait. */
  async after(entityId: number, cursor: number, limit: number): Promise<{ changes: ChangeRef[]; more: boolean }> {
    const rows = await readerOf(this.sequelize).rows<ChangeRef>(
      'SELECT id, conversation_id, message_id, kind FROM inbox_changes WHERE entity_id = ? AND id > ? ORDER BY id LIMIT ?',
      [entityId, cursor, limit + 1],
    );
    const changes = rows.slice(0, limit).map((row) => ({ ...row, id: asNumber(row.id), conversation_id: asNumber(row.conversation_id), message_id: row.message_id === null ? null : asNumber(row.message_id) }));
    return { changes, more: rows.length > limit };
  }

  /** `after`, waiting up to `waitMs` for a change when there is none yet (a long poll); stops early when `signal` aborts. */
  async waitAfter(entityId: number, cursor: number, limit: number, waitMs: number, signal?: AbortSignal): Promise<{ changes: ChangeRef[]; more: boolean }> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const found = await this.after(entityId, cursor, limit);
      const left = deadline - Date.now();
      if (found.changes.length > 0 || left <= 0 || signal?.aborted) return found;
      await this.nextChangeOrTick(entityId, Math.min(left, POLL_INTERVAL_MS), signal);
    }
  }

  /** Resolves on this process's next commit of the entity's inbox, after `ms`, or when `signal` aborts. */
  private nextChangeOrTick(entityId: number, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.committed.off(String(entityId), done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.committed.once(String(entityId), done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}
