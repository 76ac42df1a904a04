import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * SMS sent exactly once (src/messaging/sending.ts): every call to the provider is recorded, with the
 * moment it started, before it is made, in `sms_send_attempts`; a message carries the number of its
 * last attempt (`send_attempts`, the counter a run claims an attempt on) and that attempt's start. A
 * campaign notes when its messages' jobs were queued, so that a campaign stored by a process that
 * died before queueing them is found and queued again.
 */
export const name = '0013-sms-send-attempts';

/** SQLite's down rebuilds sms_campaigns and sms_messages, which others reference (ON DELETE CASCADE): foreign key enforcement off, or the rebuild would delete their rows (src/db/migration-transaction.ts). */
export const sqliteForeignKeys = 'off';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('sms_send_attempts', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    message_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'sms_messages', key: 'id' }, onDelete: 'CASCADE' },
    // 1 for the first call to the provider; equal to the message's send_attempts when it is the last.
    attempt: { type: DataTypes.INTEGER, allowNull: false },
    started_at: { type: DataTypes.DATE, allowNull: false },
    finished_at: { type: DataTypes.DATE, allowNull: true },
    // pending (the call is under way, or its process died), accepted, refused, unknown (a timeout, a
    // reset connection, a 5xx: the provider may have taken it), found (an unknown or pending attempt
    // that the provider's message list shows was taken).
    outcome: { type: DataTypes.STRING(16), allowNull: false },
    provider_sid: { type: DataTypes.STRING(64), allowNull: true },
    detail: { type: DataTypes.TEXT, allowNull: true },
  });
  // Unique: two runs cannot both record attempt n of one message (the claim already prevents it).
  await queryInterface.addIndex('sms_send_attempts', ['message_id', 'attempt'], { name: 'sms_send_attempts_message_attempt', unique: true });

  await queryInterface.addColumn('sms_messages', 'send_attempts', { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 });
  await queryInterface.addColumn('sms_messages', 'last_attempt_at', { type: DataTypes.DATE, allowNull: true });

  await queryInterface.addColumn('sms_campaigns', 'jobs_enqueued_at', { type: DataTypes.DATE, allowNull: true });
  // Campaigns stored before this migration had their jobs queued when they were created.
  await queryInterface.sequelize.query('UPDATE sms_campaigns SET jobs_enqueued_at = created_at');
  // The idempotent request that created the campaign (src/http/idempotency.ts), unique: a retry whose
  // first answer was lost with a crashed instance finds the campaign instead of sending it twice.
  await queryInterface.addColumn('sms_campaigns', 'creation_key', { type: DataTypes.STRING(64), allowNull: true });
  await queryInterface.addIndex('sms_campaigns', ['creation_key'], { name: 'sms_campaigns_creation_key', unique: true });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeIndex('sms_campaigns', 'sms_campaigns_creation_key');
  await queryInterface.removeColumn('sms_campaigns', 'creation_key');
  await queryInterface.removeColumn('sms_campaigns', 'jobs_enqueued_at');
  await queryInterface.removeColumn('sms_messages', 'last_attempt_at');
  await queryInterface.removeColumn('sms_messages', 'send_attempts');
  await queryInterface.dropTable('sms_send_attempts');
}
