/**
 * The chat operations of the stateful mock (src/chat/): conversations and their threads, replies (queued:
 * the mock sends nothing; refused to a number that opted out), opt-outs from a conversation or by hand,
 * read marks, assignments to a member who may reply, Messenger Pages, and the changes after a cursor
 * (answered at once: nothing changes in the mock but what a test does).
 */
import type { HttpHandler } from 'msw';
import { errorResponse } from '../../msw-validation.js';
import { envelope, forbidden, invalidBody, notFound } from '../answers.js';
import { entityFor, may, PERMISSION_TEXT, roleIn, type Context, type On, type Permission } from '../auth.js';
import { contactPhone, maskPhone } from '../messaging/phones.js';
import { pageOf } from '../paging.js';
import { newId, now, type TeamRole } from '../store.js';
import { chatMessageView, chatOf, conversationView, messengerPageView, recordChatChange, recordOptOut, type ChatState, type StoredChatMessage, type StoredConversation, type StoredMessengerPage } from './inbox.js';

const CONVERSATIONS_PER_PAGE = 30;
const CHAT_MESSAGES_PER_PAGE = 50;

export function chatHandlers(on: On): HttpHandler[] {
  const noConversation = (id: number) =>
    notFound(`There is no conversation ${id} in your teams.`, [{ location: 'path', field: 'conversation_id', rule: 'in_your_teams', message: 'must be a conversation of one of your teams', value: id }]);
  /** The conversation in the path and the caller's role in its entity: 404 for a stranger, 403 for a role that may not. */
  const conversationFor = (context: Context, permission: Permission): { conversation: StoredConversation; role: TeamRole; chat: ChatState } | Response => {
    const id = Number(context.url.pathname.split('/').filter(Boolean)[3]);
    const chat = chatOf(context.state);
    const conversation = chat.conversations.get(id);
    const entity = conversation && context.state.entities.get(conversation.entity_id);
    const role = entity && roleIn(entity, context.user);
    if (!conversation || !role) return noConversation(id);
    if (!may(context.user, role, permission)) return forbidden(`Your role in this team (${role}) may not answer or assign its conversations: its owner, admins and operators may.`);
    return { conversation, role, chat };
  };
  return [
    on('listConversations', (context) => {
      const { url, state, base } = context;
      const entity = entityFor(context, Number(url.searchParams.get('entity_id')), { location: 'query', field: 'entity_id' });
      if (entity instanceof Response) return entity;
      const chat = chatOf(state);
      const whole = may(context.user, roleIn(entity, context.user)!, 'readPersonalData');
      const unreadOnly = url.searchParams.get('unread_only') === 'true';
      const assignee = url.searchParams.get('assignee_id');
      const lastAt = (conversation: StoredConversation) => chat.messages.filter((message) => message.conversation_id === conversation.id).at(-1)?.id ?? 0;
      const found = [...chat.conversations.values()]
        .filter((conversation) => conversation.entity_id === entity.id && (!unreadOnly || conversation.unread_count > 0) && (assignee === null || conversation.assignee_id === Number(assignee)))
        .sort((a, b) => lastAt(b) - lastAt(a));
      const listUrl = new URL(`${base}/api/chat/conversations/`);
      listUrl.searchParams.set('entity_id', String(entity.id));
      const paged = pageOf(found.map((conversation) => conversationView(state, chat, conversation, whole)), Number(url.searchParams.get('page') ?? 1), CONVERSATIONS_PER_PAGE, listUrl);
      return paged instanceof Response ? paged : envelope(200, paged, `${found.length} conversation${found.length === 1 ? '' : 's'}.`);
    }),
    on('listConversationMessages', (context) => {
      const found = conversationFor(context, 'read');
      if (found instanceof Response) return found;
      const thread = found.chat.messages.filter((message) => message.conversation_id === found.conversation.id);
      const listUrl = new URL(`${context.base}/api/chat/conversations/${found.conversation.id}/messages/`);
      const paged = pageOf(thread.map((message) => chatMessageView(context.state, message)), Number(context.url.searchParams.get('page') ?? 1), CHAT_MESSAGES_PER_PAGE, listUrl);
      return paged instanceof Response ? paged : envelope(200, paged, `${thread.length} message${thread.length === 1 ? '' : 's'}.`);
    }),
    on('optOutConversation', (context) => {
      const found = conversationFor(context, 'edit');
      if (found instanceof Response) return found;
      const { conversation, role, chat } = found;
      const { optOut, added } = recordOptOut(chat, conversation.entity_id, conversation.participant, 'conversation');
      const whole = may(context.user, role, 'readPersonalData');
      const shown = whole ? optOut : { ...optOut, phone: maskPhone(optOut.phone) };
      const entity = conversation.entity_id;
      return envelope(
        added ? 201 : 200,
        shown,
        added ? `The number of conversation ${conversation.id} is opted out of entity ${entity}'s campaigns.` : `The number of conversation ${conversation.id} had opted out of entity ${entity}'s campaigns already.`,
      );
    }),
    on('optOutSmsNumber', (context) => {
      const entity = entityFor(context, Number(context.body.entity_id), { location: 'body', field: 'entity_id' }, 'edit');
      if (entity instanceof Response) return entity;
      const phone = contactPhone(String(context.body.phone));
      if (!phone) return invalidBody([{ location: 'body', field: 'phone', rule: 'phone_number', message: 'must be a valid phone number', value: String(context.body.phone) }]);
      const { optOut, added } = recordOptOut(chatOf(context.state), entity.id, phone, 'manual');
      return envelope(added ? 201 : 200, optOut, added ? `${phone} is opted out of entity ${entity.id}'s campaigns.` : `${phone} had opted out of entity ${entity.id}'s campaigns already.`);
    }),
    on('replyToConversation', (context) => {
      const found = conversationFor(context, 'edit');
      if (found instanceof Response) return found;
      const { conversation, chat } = found;
      if (chat.optedOut.has(`${conversation.entity_id}:${conversation.participant}`)) {
        return errorResponse(422, 'validation_failed', `The number of conversation ${conversation.id} opted out of entity ${conversation.entity_id}'s messages; it is not written to.`, [
          { location: 'path', field: 'conversation_id', rule: 'not_opted_out', message: 'must be a conversation with a number that did not opt out', value: conversation.id },
        ]);
      }
      const message: StoredChatMessage = { id: newId(context.state, chat.messages.map((stored) => stored.id)), conversation_id: conversation.id, direction: 'out', text: String(context.body.text), status: 'queued', sent_by: context.user.id, created_at: now() };
      chat.messages.push(message);
      conversation.unread_count = 0;
      recordChatChange(chat, conversation, message.id, 'message');
      return envelope(201, chatMessageView(context.state, message), `Reply ${message.id} queued for sending.`);
    }),
    on('markConversationRead', (context) => {
      const found = conversationFor(context, 'read');
      if (found instanceof Response) return found;
      const { conversation, role, chat } = found;
      if (conversation.unread_count > 0) {
        conversation.unread_count = 0;
        recordChatChange(chat, conversation, null, 'read');
      }
      return envelope(200, conversationView(context.state, chat, conversation, may(context.user, role, 'readPersonalData')), `Conversation ${conversation.id} marked read.`);
    }),
    on('assignConversation', (context) => {
      const found = conversationFor(context, 'edit');
      if (found instanceof Response) return found;
      const { conversation, role, chat } = found;
      const assigneeId = context.body.assignee_id === null ? null : Number(context.body.assignee_id);
      const member = context.state.entities.get(conversation.entity_id)!.members.find((candidate) => candidate.user_id === assigneeId);
      if (assigneeId !== null && (!member || !['owner', 'admin', 'operator'].includes(member.role))) {
        return invalidBody([{ location: 'body', field: 'assignee_id', rule: 'team_member_who_may_reply', message: "must be the entity's owner, an admin or an operator of its team", value: assigneeId }]);
      }
      if (conversation.assignee_id !== assigneeId) {
        conversation.assignee_id = assigneeId;
        recordChatChange(chat, conversation, null, 'assigned');
      }
      const view = conversationView(context.state, chat, conversation, may(context.user, role, 'readPersonalData'));
      return envelope(200, view, view.assignee ? `Conversation ${view.id} assigned to ${view.assignee.display_name}.` : `Conversation ${view.id} is assigned to nobody.`);
    }),
    on('listMessengerPages', (context) => {
      const entity = entityFor(context, Number(context.url.searchParams.get('entity_id')), { location: 'query', field: 'entity_id' });
      if (entity instanceof Response) return entity;
      const pages = [...chatOf(context.state).pages.values()].filter((page) => page.entity_id === entity.id).map((page) => messengerPageView(context.state, page));
      return envelope(200, pages, `${pages.length} Page${pages.length === 1 ? '' : 's'}.`);
    }),
    on('connectMessengerPage', (context) => {
      const entity = entityFor(context, Number(context.body.entity_id), { location: 'body', field: 'entity_id' }, 'manageTeam');
      if (entity instanceof Response) return entity;
      const pages = chatOf(context.state).pages;
      const pageId = String(context.body.page_id);
      const existing = pages.get(pageId);
      if (existing && existing.entity_id !== entity.id) {
        return errorResponse(422, 'validation_failed', `Page ${pageId} is connected to another entity; its admins must disconnect it first.`, [
          { location: 'body', field: 'page_id', rule: 'not_connected_elsewhere', message: 'must be a Page not connected to another entity', value: pageId },
        ]);
      }
      const at = now();
      const page: StoredMessengerPage = { page_id: pageId, entity_id: entity.id, name: String(context.body.name), connected_by: context.user.id, created_at: existing?.created_at ?? at, updated_at: at };
      pages.set(pageId, page);
      const message = existing ? `Page ${pageId}'s name and token renewed in entity ${entity.id}'s inbox.` : `Page ${pageId} connected to entity ${entity.id}'s inbox.`;
      return envelope(existing ? 200 : 201, messengerPageView(context.state, page), message);
    }),
    on('disconnectMessengerPage', (context) => {
      const pageId = decodeURIComponent(context.url.pathname.split('/').filter(Boolean)[4] ?? '');
      const pages = chatOf(context.state).pages;
      const page = pages.get(pageId);
      const entity = page && context.state.entities.get(page.entity_id);
      const role = entity && roleIn(entity, context.user);
      if (!page || !role) {
        return notFound(`There is no messenger Page ${pageId} connected to an entity of your teams.`, [
          { location: 'path', field: 'page_id', rule: 'in_your_teams', message: 'must be a Page connected to an entity of one of your teams', value: pageId },
        ]);
      }
      if (!may(context.user, role, 'manageTeam')) return forbidden(`Your role in this team (${role}) may not ${PERMISSION_TEXT.manageTeam}.`);
      pages.delete(pageId);
      return envelope(200, messengerPageView(context.state, page), `Page ${pageId} disconnected from entity ${page.entity_id}'s inbox.`);
    }),
    // The mock answers at once (no long poll): nothing changes in it but what a test does.
    on('listInboxChanges', (context) => {
      const { url, state } = context;
      const entity = entityFor(context, Number(url.searchParams.get('entity_id')), { location: 'query', field: 'entity_id' });
      if (entity instanceof Response) return entity;
      const chat = chatOf(state);
      const ofEntity = chat.changes.filter((change) => change.entity_id === entity.id);
      const cursor = url.searchParams.get('cursor');
      if (cursor === null) return envelope(200, { cursor: String(ofEntity.at(-1)?.id ?? 0), changes: [], more: false }, 'No changes.');
      const after = ofEntity.filter((change) => change.id > Number(cursor));
      const answered = after.slice(0, 100);
      const whole = may(context.user, roleIn(entity, context.user)!, 'readPersonalData');
      const changes = answered.map((change) => {
        const message = change.message_id === null ? undefined : chat.messages.find((stored) => stored.id === change.message_id);
        return { kind: change.kind, conversation: conversationView(state, chat, chat.conversations.get(change.conversation_id)!, whole), message: message ? chatMessageView(state, message) : null };
      });
      const next = answered.at(-1)?.id ?? Number(cursor);
      return envelope(200, { cursor: String(next), changes, more: after.length > answered.length }, changes.length === 0 ? 'No changes.' : `${changes.length} change${changes.length === 1 ? '' : 's'}.`);
    }),
  ];
}
