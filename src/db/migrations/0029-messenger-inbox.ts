import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * The messenger channel of the chat inbox (issue 24; src/chat/messenger/):
 * - The social network's Pages connected to an entity, with their access tokens sealed (SECRETS_KEY).
 * - A messenger conversation is a Page and a person's page-scoped id; it keeps its Page's id after the
 *   Page is disconnected, so no foreign key.
 * - A messenger answer has no `sms_messages` row: its own status, error and send time live on its
 *   message, which its send job and the network's delivery events update.
 * - Message ids of the network (`mid`) are longer than an SMS provider's sid.
 */
export const name = '0029-messenger-inbox';

/** SQLite's down rebuilds `conversations`, which others reference: foreign key enforcement off (src/db/migration-transaction.ts). */
export const sqliteForeignKeys = 'off';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('messenger_pages', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    // One inbox per Page: its messages cannot land in two entities'.
    page_id: { type: DataTypes.STRING(32), allowNull: false, unique: true },
    entity_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'entities', key: 'id' }, onDelete: 'CASCADE' },
    name: { type: DataTypes.STRING(200), allowNull: false },
    access_token_sealed: { type: DataTypes.TEXT, allowNull: false },
    connected_by: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'users', key: 'id' }, onDelete: 'SET NULL' },
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('messenger_pages', ['entity_id'], { name: 'messenger_pages_entity' });

  await queryInterface.addColumn('conversations', 'page_id', { type: DataTypes.STRING(32), allowNull: true });
  await queryInterface.addIndex('conversations', ['page_id', 'participant'], { name: 'conversations_messenger_participant', unique: true });

  for (const [column, type] of [
    ['status', DataTypes.STRING(16)],
    ['error_code', DataTypes.STRING(16)],
    ['error_message', DataTypes.TEXT],
    ['sent_at', DataTypes.DATE],
    ['updated_at', DataTypes.DATE],
  ] as const) {
    await queryInterface.addColumn('conversation_messages', column, { type, allowNull: true });
  }
  // SQLite does not enforce a VARCHAR's length; PostgreSQL widens it in place, keeping its unique index.
  if (queryInterface.sequelize.getDialect() === 'postgres') {
    await queryInterface.sequelize.query('ALTER TABLE conversation_messages ALTER COLUMN external_id TYPE VARCHAR(512)');
  }
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  const { sequelize } = queryInterface;
  // Messenger conversations go with the channel, their messages and changes deleted here: on SQLite
  // foreign keys are off (no CASCADE).
  for (const table of ['inbox_changes', 'conversation_messages']) {
    await sequelize.query(`DELETE FROM ${table} WHERE conversation_id IN (SELECT id FROM conversations WHERE page_id IS NOT NULL)`);
  }
  await sequelize.query('DELETE FROM conversations WHERE page_id IS NOT NULL');
  if (sequelize.getDialect() === 'postgres') await sequelize.query('ALTER TABLE conversation_messages ALTER COLUMN external_id TYPE VARCHAR(64)');
  // SQLite removes a column by rebuilding the table: foreign keys off, or its rows' dependants would go with it.
  for (const column of ['updated_at', 'sent_at', 'error_message', 'error_code', 'status']) await queryInterface.removeColumn('conversation_messages', column);
  await queryInterface.removeIndex('conversations', 'conversations_messenger_participant');
  await queryInterface.removeColumn('conversations', 'page_id');
  await queryInterface.dropTable('messenger_pages');
}
