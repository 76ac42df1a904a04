/** Sequelize models of the chat inbox's tables (migration 0028). */
import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';

export type Channel = 'sms';
export type Direction = 'in' | 'out';
/** What an inbox change is (see InboxChanges). */
export type ChangeKind = 'message' | 'status' | 'read' | 'assigned';

export interface ConversationRow {
  id: number;
  entity_id: number;
  channel: Channel;
  credential_id: number | null;
  /** The person: an E.164 number for SMS. */
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
  /** An inbound message's id at the provider. */
  external_id: string | null;
  /** An outbound SMS's row in sms_messages: its status. */
  sms_message_id: number | null;
  sent_by: number | null;
  /** The idempotent request that wrote a reply. */
  creation_key: string | null;
  created_at: Date;
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
        external_id: DataTypes.STRING(64),
        sms_message_id: DataTypes.INTEGER,
        sent_by: DataTypes.INTEGER,
        creation_key: DataTypes.STRING(64),
        created_at: DataTypes.DATE,
      },
      options('conversation_messages'),
    ),
    Change: sequelize.define<Model<InboxChangeRow, Partial<InboxChangeRow>>>(
      'InboxChange',
      { id, entity_id: DataTypes.INTEGER, conversation_id: DataTypes.INTEGER, message_id: DataTypes.INTEGER, kind: DataTypes.STRING(16), created_at: DataTypes.DATE },
      options('inbox_changes'),
    ),
  };
}
