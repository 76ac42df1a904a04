/**
 * An entity's inbox in the stateful mock (src/chat/inbox.ts): conversations started by the seed's SMS
 * replies that are not opt-outs, their messages, the numbered changes a front end polls, the opt-outs
 * recorded, and the Messenger Pages connected. Each State has its own inbox, made on first use, so
 * `reset()` forgets it with the State.
 */
import { isOptOut } from '../messaging/opt-outs.js';
import { maskPhone } from '../messaging/phones.js';
import { displayName, newId, now, seedReplies, type State } from '../store.js';

/** A conversation as the server keeps it (the mock's are SMS ones, from the seed's replies that are not opt-outs). */
export interface StoredConversation {
  id: number;
  entity_id: number;
  credential_id: number;
  participant: string;
  assignee_id: number | null;
  unread_count: number;
  created_at: string;
}
export interface StoredChatMessage {
  id: number;
  conversation_id: number;
  direction: 'in' | 'out';
  text: string;
  /** `received` in; an answer stays `queued` (the mock sends nothing). */
  status: string;
  sent_by: number | null;
  created_at: string;
}
export interface ChatState {
  conversations: Map<number, StoredConversation>;
  messages: StoredChatMessage[];
  /** Every change, numbered in order: what listInboxChanges reads after a cursor. */
  changes: Array<{ id: number; entity_id: number; conversation_id: number; message_id: number | null; kind: 'message' | 'status' | 'read' | 'assigned' }>;
  /** Numbers that opted out, by entity (the seed's opt-out replies). */
  optedOut: Set<string>;
  /** Messenger Pages connected to entities, by Page id (their tokens are not kept: the mock sends nothing). */
  pages: Map<string, StoredMessengerPage>;
}

export interface StoredMessengerPage {
  page_id: string;
  entity_id: number;
  name: string;
  connected_by: number;
  created_at: string;
  updated_at: string;
}

/** The inboxes of each mock state (kept beside it: reset replaces the state, and with it these). */
const chats = new WeakMap<State, ChatState>();

/** An opt-out as listed (SmsOptOut), by `entity:number`, for those the mock recorded (the seed's carry no detail). */
type MockOptOut = { phone: string; keyword: null; source: 'reply' | 'manual' | 'conversation'; phrase: null; opted_out_at: string };
const optOutRecords = new WeakMap<ChatState, Map<string, MockOptOut>>();

/** Opts `phone` out of the entity's campaigns, as SmsOptOuts.record does: the opt-out kept, and whether it is new. */
export function recordOptOut(chat: ChatState, entityId: number, phone: string, source: MockOptOut['source']): { optOut: MockOptOut; added: boolean } {
  const key = `${entityId}:${phone}`;
  const records = optOutRecords.get(chat) ?? new Map<string, MockOptOut>();
  optOutRecords.set(chat, records);
  const added = !chat.optedOut.has(key);
  chat.optedOut.add(key);
  if (!records.has(key)) records.set(key, { phone, keyword: null, source: added ? source : 'reply', phrase: null, opted_out_at: now() });
  return { optOut: records.get(key)!, added };
}

export function chatOf(state: State): ChatState {
  let chat = chats.get(state);
  if (chat) return chat;
  chat = { conversations: new Map(), messages: [], changes: [], optedOut: new Set(), pages: new Map() };
  chats.set(state, chat);
  for (const reply of (seedReplies.get(state) ?? []) as Array<{ from: string; to: string; account_id: string; body: string }>) {
    const credential = [...state.credentials.values()].find((candidate) => candidate.account_id === reply.account_id && candidate.sender_id === reply.to);
    if (!credential || credential.entity_id === null) continue;
    if (isOptOut(reply.body)) {
      chat.optedOut.add(`${credential.entity_id}:${reply.from}`);
      continue;
    }
    receiveChatMessage(state, chat, credential.entity_id, credential.id, reply.from, reply.body);
  }
  return chat;
}

function receiveChatMessage(state: State, chat: ChatState, entityId: number, credentialId: number, from: string, text: string): void {
  let conversation = [...chat.conversations.values()].find((candidate) => candidate.credential_id === credentialId && candidate.participant === from);
  if (!conversation) {
    conversation = { id: newId(state, chat.conversations.keys()), entity_id: entityId, credential_id: credentialId, participant: from, assignee_id: null, unread_count: 0, created_at: now() };
    chat.conversations.set(conversation.id, conversation);
  }
  const message: StoredChatMessage = { id: newId(state, chat.messages.map((stored) => stored.id)), conversation_id: conversation.id, direction: 'in', text, status: 'received', sent_by: null, created_at: now() };
  chat.messages.push(message);
  conversation.unread_count += 1;
  recordChatChange(chat, conversation, message.id, 'message');
}

export function recordChatChange(chat: ChatState, conversation: StoredConversation, messageId: number | null, kind: ChatState['changes'][number]['kind']): void {
  chat.changes.push({ id: (chat.changes.at(-1)?.id ?? 0) + 1, entity_id: conversation.entity_id, conversation_id: conversation.id, message_id: messageId, kind });
}

export function chatMessageView(state: State, message: StoredChatMessage) {
  const sender = message.sent_by === null ? undefined : state.users.find((user) => user.id === message.sent_by);
  return {
    id: message.id,
    conversation_id: message.conversation_id,
    direction: message.direction,
    text: message.text,
    status: message.status,
    error_code: null,
    sent_by: sender ? { id: sender.id, display_name: displayName(sender) } : null,
    created_at: message.created_at,
  };
}

export function conversationView(state: State, chat: ChatState, conversation: StoredConversation, whole: boolean) {
  const last = chat.messages.filter((message) => message.conversation_id === conversation.id).at(-1);
  const contact = [...state.contacts.values()].find((candidate) => candidate.entity_id === conversation.entity_id && candidate.phone === conversation.participant);
  const assignee = conversation.assignee_id === null ? undefined : state.users.find((user) => user.id === conversation.assignee_id);
  return {
    id: conversation.id,
    entity_id: conversation.entity_id,
    channel: 'sms',
    credential_id: conversation.credential_id,
    page_id: null,
    participant: whole ? conversation.participant : maskPhone(conversation.participant),
    contact: contact ? { id: contact.id, name: contact.name } : null,
    assignee: assignee ? { id: assignee.id, display_name: displayName(assignee) } : null,
    unread_count: conversation.unread_count,
    last_message: last ? chatMessageView(state, last) : null,
    created_at: conversation.created_at,
  };
}

export function messengerPageView(state: State, page: StoredMessengerPage) {
  const user = state.users.find((candidate) => candidate.id === page.connected_by);
  return { ...page, connected_by: user ? { id: user.id, display_name: displayName(user) } : null };
}
