import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * SMS (src/messaging/): provider credentials with their secret sealed (src/security/secret-box.ts),
 * campaigns and one row per recipient message with its provider id and delivery status, the replies
 * received, and the numbers that opted out of campaigns.
 */
export const name = '0009-sms';

const id = { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true };

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('sms_credentials', {
    id,
    name: { type: DataTypes.STRING(120), allowNull: false },
    provider: { type: DataTypes.STRING(20), allowNull: false },
    account_id: { type: DataTypes.STRING(64), allowNull: false },
    sender_id: { type: DataTypes.STRING(32), allowNull: false },
    secret_sealed: { type: DataTypes.TEXT, allowNull: false },
    entity_id: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'entities', key: 'id' }, onDelete: 'SET NULL' },
    created_by: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'users', key: 'id' }, onDelete: 'SET NULL' },
    created_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('sms_credentials', ['account_id', 'sender_id'], { name: 'sms_credentials_account_sender', unique: true });

  await queryInterface.createTable('sms_campaigns', {
    id,
    titulo: { type: DataTypes.STRING(120), allowNull: false },
    credential_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'sms_credentials', key: 'id' }, onDelete: 'CASCADE' },
    body: { type: DataTypes.TEXT, allowNull: false },
    encoding: { type: DataTypes.STRING(10), allowNull: false },
    segments: { type: DataTypes.INTEGER, allowNull: false },
    accepted: { type: DataTypes.INTEGER, allowNull: false },
    rejected: { type: DataTypes.INTEGER, allowNull: false },
    opted_out_skipped: { type: DataTypes.INTEGER, allowNull: false },
    created_by: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'users', key: 'id' }, onDelete: 'SET NULL' },
    created_at: { type: DataTypes.DATE, allowNull: false },
  });

  await queryInterface.createTable('sms_messages', {
    id,
    campaign_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'sms_campaigns', key: 'id' }, onDelete: 'CASCADE' },
    recipient: { type: DataTypes.STRING(20), allowNull: false },
    // queued until the provider took it, then the provider's statuses (see messaging/statuses.ts).
    status: { type: DataTypes.STRING(20), allowNull: false },
    provider_sid: { type: DataTypes.STRING(64), allowNull: true, unique: true },
    error_code: { type: DataTypes.STRING(16), allowNull: true },
    error_message: { type: DataTypes.TEXT, allowNull: true },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('sms_messages', ['campaign_id', 'status'], { name: 'sms_messages_campaign_status' });

  await queryInterface.createTable('sms_replies', {
    id,
    message_sid: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    account_id: { type: DataTypes.STRING(64), allowNull: false },
    sender: { type: DataTypes.STRING(32), allowNull: false },
    recipient: { type: DataTypes.STRING(32), allowNull: false },
    body: { type: DataTypes.TEXT, allowNull: false },
    received_at: { type: DataTypes.DATE, allowNull: false },
  });

  await queryInterface.createTable('sms_opt_outs', {
    phone: { type: DataTypes.STRING(20), primaryKey: true },
    opted_out_at: { type: DataTypes.DATE, allowNull: false },
  });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  for (const table of ['sms_opt_outs', 'sms_replies', 'sms_messages', 'sms_campaigns', 'sms_credentials']) await queryInterface.dropTable(table);
}
