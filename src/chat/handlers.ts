/**
 * The HTTP side of the chat inbox (inbox.ts): an entity's conversations, a thread, a reply, read marks,
 * assignments, and the polling cursor of its changes (changes.ts). Every member of an entity's team reads
 * its inbox; its owner, admins and operators answer and assign; anyone else is told a conversation does
 * not exist (404).
 */
import { callerOf } from '../http/auth.js';
import { sendEnvelope } from '../http/envelope.js';
import { requestCreationKey } from '../http/idempotency.js';
import type { OperationHandlers } from '../http/operations.js';
import { pageOf } from '../http/pagination.js';
import { apiBaseUrl, type PublicUrlSettings } from '../http/public-url.js';
import type { Teams } from '../entities/teams.js';
import type { Inbox } from './inbox.js';
import { counted } from '../http/counted.js';
import { maskPhone } from '@palanque/rules/phones';

type ChatOperations = 'listConversations' | 'listConversationMessages' | 'replyToConversation' | 'optOutConversation' | 'markConversationRead' | 'assignConversation' | 'listInboxChanges';

const CONVERSATIONS_PER_PAGE = 30;
const MESSAGES_PER_PAGE = 50;
const CHANGES_PER_ANSWER = 100;

export interface ChatHandlerDependencies {
  inbox: Inbox;
  teams: Teams;
  urls: PublicUrlSettings;
}

export function chatHandlers({ inbox, teams, urls }: ChatHandlerDependencies): Pick<Required<OperationHandlers>, ChatOperations> {
  return {
    async listConversations(req, res) {
      const caller = callerOf(res);
      const { entity, role } = await teams.access(caller, Number(req.query.entity_id), 'read', { location: 'query', field: 'entity_id' });
      const page = req.query.page ?? 1;
      const assigneeId = req.query.assignee_id === undefined ? undefined : Number(req.query.assignee_id);
      const unreadOnly = req.query.unread_only === true;
      const { total, conversations } = await inbox.page(entity.id, { unreadOnly, assigneeId }, page, CONVERSATIONS_PER_PAGE, teams.may(caller, role, 'readPersonalData'));
      const listUrl = new URL(apiBaseUrl(req, urls) + '/api/chat/conversations/');
      listUrl.searchParams.set('entity_id', String(entity.id));
      if (unreadOnly) listUrl.searchParams.set('unread_only', 'true');
      if (assigneeId !== undefined) listUrl.searchParams.set('assignee_id', String(assigneeId));
      sendEnvelope(res, 200, pageOf(conversations, total, page, CONVERSATIONS_PER_PAGE, listUrl.toString()), `${counted(total, 'conversation')}.`);
    },

    async listConversationMessages(req, res) {
      const { conversation } = await inbox.access(callerOf(res), req.params.conversation_id);
      const page = req.query.page ?? 1;
      const { total, messages } = await inbox.thread(conversation.id, page, MESSAGES_PER_PAGE);
      const listUrl = `${apiBaseUrl(req, urls)}/api/chat/conversations/${conversation.id}/messages/`;
      sendEnvelope(res, 200, pageOf(messages, total, page, MESSAGES_PER_PAGE, listUrl), `${counted(total, 'message')}.`);
    },

    async replyToConversation(req, res) {
      const caller = callerOf(res);
      const { conversation, role } = await inbox.access(caller, req.params.conversation_id);
      inbox.requireReplier(caller, role, 'answer its conversations');
      const message = await inbox.reply(caller, conversation, req.body.text, requestCreationKey(res));
      sendEnvelope(res, 201, message, `Reply ${message.id} queued for sending.`);
    },

    async optOutConversation(req, res) {
      const caller = callerOf(res);
      const { conversation, role, wholeNumbers } = await inbox.access(caller, req.params.conversation_id);
      inbox.requireReplier(caller, role, 'opt its conversations out');
      const { optOut, added } = await inbox.optOut(caller, conversation);
      const shown = wholeNumbers ? optOut : { ...optOut, phone: maskPhone(optOut.phone) };
      const entity = conversation.entity_id;
      sendEnvelope(
        res,
        added ? 201 : 200,
        shown,
        added ? `The number of conversation ${conversation.id} is opted out of entity ${entity}'s campaigns.` : `The number of conversation ${conversation.id} had opted out of entity ${entity}'s campaigns already.`,
      );
    },

    async markConversationRead(req, res) {
      const caller = callerOf(res);
      const { conversation, wholeNumbers } = await inbox.access(caller, req.params.conversation_id);
      await inbox.markRead(conversation);
      const view = (await inbox.conversations([conversation.id], wholeNumbers)).get(conversation.id)!;
      sendEnvelope(res, 200, view, `Conversation ${conversation.id} marked read.`);
    },

    async assignConversation(req, res) {
      const caller = callerOf(res);
      const { conversation, role, wholeNumbers } = await inbox.access(caller, req.params.conversation_id);
      inbox.requireReplier(caller, role, 'assign its conversations');
      await inbox.assign(conversation, req.body.assignee_id);
      const view = (await inbox.conversations([conversation.id], wholeNumbers)).get(conversation.id)!;
      sendEnvelope(res, 200, view, view.assignee ? `Conversation ${view.id} assigned to ${view.assignee.display_name}.` : `Conversation ${view.id} is assigned to nobody.`);
    },

    async listInboxChanges(req, res) {
      const caller = callerOf(res);
      const { entity, role } = await teams.access(caller, Number(req.query.entity_id), 'read', { location: 'query', field: 'entity_id' });
      if (req.query.cursor === undefined) {
        sendEnvelope(res, 200, { cursor: await inbox.changes.current(entity.id), changes: [], more: false }, 'No changes.');
        return;
      }
      const cursor = Number(req.query.cursor);
      // A client that goes away ends its wait.
      const gone = new AbortController();
      res.on('close', () => gone.abort());
      const found = await inbox.changes.waitAfter(entity.id, cursor, CHANGES_PER_ANSWER, (req.query.wait ?? 0) * 1000, gone.signal);
      const changes = await inbox.changeViews(found.changes, teams.may(caller, role, 'readPersonalData'));
      const next = found.changes.length === 0 ? String(cursor) : String(found.changes[found.changes.length - 1]!.id);
      sendEnvelope(res, 200, { cursor: next, changes, more: found.more }, changes.length === 0 ? 'No changes.' : `${counted(changes.length, 'change')}.`);
    },
  };
}
