/** Sequelize models of the chat inbox's tables (migrations 0028 and 0029). */
import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';

export type Channel = 'sms' | 'messenger';
/** A messenger answer's status (an SMS answer's is its sms_messages row's). */
export type MessengerStatus = 'queued' | 'sending' | 'sent' | 'delivered' | 'failed';
export type Direction = 'in' | 'out';
/** What an inbox change is (see InboxChanges). */
export type ChangeKind = 'message' | 'status' | 'read' | 'assigned';

export interface ConversationRow {
  id: number;
  entity_id: number;
  channel: Channel;
  /** SMS: the credential the person wrote to. */
  credential_id: number | null;
  /** Messenger: the Page the person wrote to. */
  page_id: string | null;
  /** The person: an E.164 number for SMS, a page-scoped id for messenger. */
  participant: string;
  contact_id: number | null;
  assignee_id: number | null;
  unread_count: number;
  last_message_id: number | null;
  last_message_at: Date | null;
  created_at: Date;
}

export interface ConversationMessageRow {
  id: number;
  conversation_id: number;
  direction: Direction;
  body: string;
  /** The message's id at the provider: an inbound message's, or a messenger answer's once sent. */
  external_id: string | null;
  /** An outbound SMS's row in sms_messages: its status. */
  sms_message_id: number | null;
  sent_by: number | null;
  /** The idempotent request that wrote a reply. */
  creation_key: string | null;
  /** A messenger answer's own status, error and send time (null for other messages). */
  status: MessengerStatus | null;
  error_code: string | null;
  error_message: string | null;
  sent_at: Date | null;
  updated_at: Date | null;
  created_at: Date;
}

/** A social-network Page connected to an entity's inbox. */
export interface MessengerPageRow {
  id: number;
  page_id: string;
  entity_id: number;
  name: string;
  /** The Page's access token, sealed with SECRETS_KEY (security/secret-box.ts). */
  access_token_sealed: string;
  connected_by: number | null;
  created_at: Date;
  updated_at: Date;
}

export interface InboxChangeRow {
  id: number;
  entity_id: number;
  conversation_id: number;
  message_id: number | null;
  kind: ChangeKind;
  created_at: Date;
}

type Static<Row extends object> = ModelStatic<Model<Row, Partial<Row>>>;

export interface ChatModels {
  Conversation: Static<ConversationRow>;
  Message: Static<ConversationMessageRow>;
  Change: Static<InboxChangeRow>;
  Page: Static<MessengerPageRow>;
}

const id = { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true };

export function defineChatModels(sequelize: Sequelize): ChatModels {
  const options = (tableName: string) => ({ tableName, timestamps: false });
  return {
    Conversation: sequelize.define<Model<ConversationRow, Partial<ConversationRow>>>(
      'Conversation',
      {
        id,
        entity_id: DataTypes.INTEGER,
        channel: DataTypes.STRING(16),
        credential_id: DataTypes.INTEGER,
        page_id: DataTypes.STRING(32),
        participant: DataTypes.STRING(64),
        contact_id: DataTypes.INTEGER,
        assignee_id: DataTypes.INTEGER,
        unread_count: { type: DataTypes.INTEGER, defaultValue: 0 },
        last_message_id: DataTypes.INTEGER,
        last_message_at: DataTypes.DATE,
        created_at: DataTypes.DATE,
      },
      options('conversations'),
    ),
    Message: sequelize.define<Model<ConversationMessageRow, Partial<ConversationMessageRow>>>(
      'ConversationMessage',
      {
        id,
        conversation_id: DataTypes.INTEGER,
        direction: DataTypes.STRING(3),
        body: DataTypes.TEXT,
        external_id: DataTypes.STRING(512),
        sms_message_id: DataTypes.INTEGER,
        sent_by: DataTypes.INTEGER,
        creation_key: DataTypes.STRING(64),
        status: DataTypes.STRING(16),
        error_code: DataTypes.STRING(16),
        error_message: DataTypes.TEXT,
        sent_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
        created_at: DataTypes.DATE,
      },
      options('conversation_messages'),
    ),
    Change: sequelize.define<Model<InboxChangeRow, Partial<InboxChangeRow>>>(
      'InboxChange',
      { id, entity_id: DataTypes.INTEGER, conversation_id: DataTypes.INTEGER, message_id: DataTypes.INTEGER, kind: DataTypes.STRING(16), created_at: DataTypes.DATE },
      options('inbox_changes'),
    ),
    Page: sequelize.define<Model<MessengerPageRow, Partial<MessengerPageRow>>>(
      'MessengerPage',
      {
        id,
        page_id: DataTypes.STRING(32),
        entity_id: DataTypes.INTEGER,
        name: DataTypes.STRING(200),
        access_token_sealed: DataTypes.TEXT,
        connected_by: DataTypes.INTEGER,
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      options('messenger_pages'),
    ),
  };
}
