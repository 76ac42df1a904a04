import { DataTypes, QueryTypes, type QueryInterface } from 'sequelize';

/**
 * The chat inbox (issue 24; src/chat/):
 * - A conversation: one channel's exchange between an entity and one person (for SMS, a credential of
 *   the entity and a phone number), with the contact it is, who on the team it is assigned to, and how
 *   many of its inbound messages nobody read.
 * - Its messages, inbound and outbound. An outbound SMS is also an `sms_messages` row, so that it is
 *   sent exactly once by the send job (messaging/sending.ts) and its receipts update it: such a row has
 *   no campaign, and carries its own text.
 * - The inbox's changes, numbered: what a front end's polling cursor reads (chat/changes.ts).
 */
export const name = '0028-chat-inbox';

/** SQLite rebuilds `sms_messages`, which others reference: with foreign key enforcement off (src/db/migration-transaction.ts). */
export const sqliteForeignKeys = 'off';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('conversations', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    // A credential without an entity (platform admins only) has no inbox.
    entity_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'entities', key: 'id' }, onDelete: 'CASCADE' },
    channel: { type: DataTypes.STRING(16), allowNull: false },
    credential_id: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'sms_credentials', key: 'id' }, onDelete: 'CASCADE' },
    // The person: a phone number in E.164 for SMS.
    participant: { type: DataTypes.STRING(64), allowNull: false },
    contact_id: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'contacts', key: 'id' }, onDelete: 'SET NULL' },
    assignee_id: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'users', key: 'id' }, onDelete: 'SET NULL' },
    unread_count: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    last_message_id: { type: DataTypes.INTEGER, allowNull: true },
    last_message_at: { type: DataTypes.DATE, allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('conversations', ['credential_id', 'participant'], { name: 'conversations_sms_participant', unique: true });
  await queryInterface.addIndex('conversations', ['entity_id', 'last_message_at'], { name: 'conversations_entity_recent' });

  await queryInterface.createTable('conversation_messages', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    conversation_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'conversations', key: 'id' }, onDelete: 'CASCADE' },
    // `in` (from the person) or `out` (from the team).
    direction: { type: DataTypes.STRING(3), allowNull: false },
    body: { type: DataTypes.TEXT, allowNull: false },
    // An inbound message's id at the provider: a copy delivered again is recognised by it.
    external_id: { type: DataTypes.STRING(64), allowNull: true, unique: true },
    // An outbound SMS: the message the send job hands to the provider (its status is that row's).
    sms_message_id: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'sms_messages', key: 'id' }, onDelete: 'SET NULL' },
    sent_by: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'users', key: 'id' }, onDelete: 'SET NULL' },
    // The idempotent request that wrote a reply (src/http/idempotency.ts): a retry after a crash finds it.
    creation_key: { type: DataTypes.STRING(64), allowNull: true, unique: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('conversation_messages', ['conversation_id', 'id'], { name: 'conversation_messages_thread' });
  await queryInterface.addIndex('conversation_messages', ['sms_message_id'], { name: 'conversation_messages_sms' });

  await queryInterface.createTable('inbox_changes', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    entity_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'entities', key: 'id' }, onDelete: 'CASCADE' },
    conversation_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'conversations', key: 'id' }, onDelete: 'CASCADE' },
    message_id: { type: DataTypes.INTEGER, allowNull: true },
    // `message` (a new one), `status` (an outbound message's delivery), `read`, `assigned`.
    kind: { type: DataTypes.STRING(16), allowNull: false },
    created_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('inbox_changes', ['entity_id', 'id'], { name: 'inbox_changes_entity' });

  // A reply's own credential and text (a campaign's messages take their campaign's).
  await queryInterface.addColumn('sms_messages', 'credential_id', { type: DataTypes.INTEGER, allowNull: true, references: { model: 'sms_credentials', key: 'id' }, onDelete: 'CASCADE' });
  await queryInterface.addColumn('sms_messages', 'body', { type: DataTypes.TEXT, allowNull: true });
  await allowMessagesWithoutCampaign(queryInterface);
}

/**
 * `sms_messages.campaign_id` becomes optional (a reply has no campaign). PostgreSQL alters the column;
 * SQLite cannot, so the table is rebuilt from its own definition with the constraint dropped, with
 * foreign keys off (`sqliteForeignKeys`, set before the migration's transaction begins: inside one the
 * pragma does nothing): dropping the old table would otherwise delete its send attempts (CASCADE).
 */
async function allowMessagesWithoutCampaign(queryInterface: QueryInterface): Promise<void> {
  const { sequelize } = queryInterface;
  if (sequelize.getDialect() !== 'sqlite') {
    await sequelize.query('ALTER TABLE sms_messages ALTER COLUMN campaign_id DROP NOT NULL');
    return;
  }
  const [table] = await sequelize.query<{ sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'sms_messages'", { type: QueryTypes.SELECT });
  const indexes = await sequelize.query<{ sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'sms_messages' AND sql IS NOT NULL", { type: QueryTypes.SELECT });
  const rebuilt = table!.sql.replace(/^CREATE TABLE `?sms_messages`?/, 'CREATE TABLE `sms_messages_rebuilt`').replace(/(`campaign_id` INTEGER) NOT NULL/, '$1');
  if (rebuilt === table!.sql || !rebuilt.includes('sms_messages_rebuilt')) throw new Error(`Unexpected definition of sms_messages: ${table!.sql}`);
  await sequelize.query(rebuilt);
  await sequelize.query('INSERT INTO sms_messages_rebuilt SELECT * FROM sms_messages');
  await sequelize.query('DROP TABLE sms_messages');
  await sequelize.query('ALTER TABLE sms_messages_rebuilt RENAME TO sms_messages');
  for (const index of indexes) await sequelize.query(index.sql);
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  // Replies have no campaign: they go with the inbox (campaign_id stays optional).
  // Their send attempts go with them, deleted here: on SQLite foreign keys are off (no CASCADE).
  const { sequelize } = queryInterface;
  await sequelize.query('DELETE FROM sms_send_attempts WHERE message_id IN (SELECT id FROM sms_messages WHERE campaign_id IS NULL)');
  await sequelize.query('DELETE FROM sms_messages WHERE campaign_id IS NULL');
  // SQLite removes a column by rebuilding the table: foreign keys off, or the send attempts would go with it.
  for (const column of ['body', 'credential_id']) await queryInterface.removeColumn('sms_messages', column);
  for (const table of ['inbox_changes', 'conversation_messages', 'conversations']) await queryInterface.dropTable(table);
}
