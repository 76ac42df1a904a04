import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * SMS campaigns a team can account for (issue 23; src/messaging/):
 * - A campaign's own state (`queued`, `sending`, `completed`, `canceled`), when it finished and who
 *   canceled it, the entity it was sent for (its credential's, kept on the campaign so an entity's
 *   campaigns are listed by index), the footer and audience it was sent with, and the compliance
 *   warnings given when it was accepted, and once it finished, its messages counted by status and their cost.
 * - A message's price, when the provider reports one, and the contact it went to.
 * - A credential's footer: the sender's identification and the opt-out instruction, added to each message.
 * - An entity's contacts with the consent each gave, and their tags.
 * - An entity's compliance settings: the mode (`off`, `warn`, `enforce`; no row is `warn`) and the
 *   propaganda window typed for it when no linked election gives one.
 */
export const name = '0027-sms-campaign-reports-contacts';

/** SQLite's down rebuilds sms_messages, sms_campaigns and sms_credentials, which others reference (ON DELETE CASCADE): foreign key enforcement off, or the rebuild would delete their rows (src/db/migration-transaction.ts). */
export const sqliteForeignKeys = 'off';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.addColumn('sms_credentials', 'footer', { type: DataTypes.TEXT, allowNull: true });

  await queryInterface.addColumn('sms_campaigns', 'entity_id', { type: DataTypes.INTEGER, allowNull: true, references: { model: 'entities', key: 'id' }, onDelete: 'SET NULL' });
  await queryInterface.addColumn('sms_campaigns', 'state', { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'sending' });
  await queryInterface.addColumn('sms_campaigns', 'finished_at', { type: DataTypes.DATE, allowNull: true });
  await queryInterface.addColumn('sms_campaigns', 'canceled_by', { type: DataTypes.INTEGER, allowNull: true, references: { model: 'users', key: 'id' }, onDelete: 'SET NULL' });
  await queryInterface.addColumn('sms_campaigns', 'footer', { type: DataTypes.TEXT, allowNull: true });
  // JSON text: `{"tags": [...]}` for a campaign to the entity's contacts (no tags: all of them); null for a pasted list.
  await queryInterface.addColumn('sms_campaigns', 'audience', { type: DataTypes.TEXT, allowNull: true });
  // JSON text: the compliance mode and the warnings given when the campaign was accepted.
  await queryInterface.addColumn('sms_campaigns', 'compliance', { type: DataTypes.TEXT, allowNull: true });
  // JSON text: a finished campaign's messages counted by status and their cost, so its reads count nothing.
  await queryInterface.addColumn('sms_campaigns', 'tally', { type: DataTypes.TEXT, allowNull: true });
  await queryInterface.sequelize.query('UPDATE sms_campaigns SET entity_id = (SELECT c.entity_id FROM sms_credentials c WHERE c.id = sms_campaigns.credential_id)');
  await queryInterface.addIndex('sms_campaigns', ['entity_id', 'id'], { name: 'sms_campaigns_entity' });
  await queryInterface.addIndex('sms_campaigns', ['state'], { name: 'sms_campaigns_state' });

  // The provider's price for the message (a decimal as it writes it, negative for a charge) and its currency.
  await queryInterface.addColumn('sms_messages', 'price', { type: DataTypes.STRING(20), allowNull: true });
  await queryInterface.addColumn('sms_messages', 'price_unit', { type: DataTypes.STRING(3), allowNull: true });
  await queryInterface.addColumn('sms_messages', 'contact_id', { type: DataTypes.INTEGER, allowNull: true });

  await queryInterface.createTable('contacts', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    entity_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'entities', key: 'id' }, onDelete: 'CASCADE' },
    // E.164.
    phone: { type: DataTypes.STRING(20), allowNull: false },
    name: { type: DataTypes.STRING(200), allowNull: true },
    // Where and how the person gave the number (a form, an event...); null: no consent on record.
    consent_source: { type: DataTypes.STRING(200), allowNull: true },
    consent_given_at: { type: DataTypes.DATE, allowNull: true },
    // The text the person agreed to.
    consent_text: { type: DataTypes.TEXT, allowNull: true },
    created_by: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'users', key: 'id' }, onDelete: 'SET NULL' },
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('contacts', ['entity_id', 'phone'], { name: 'contacts_entity_phone', unique: true });

  await queryInterface.createTable('contact_tags', {
    contact_id: { type: DataTypes.INTEGER, primaryKey: true, references: { model: 'contacts', key: 'id' }, onDelete: 'CASCADE' },
    tag: { type: DataTypes.STRING(60), primaryKey: true },
  });
  await queryInterface.addIndex('contact_tags', ['tag', 'contact_id'], { name: 'contact_tags_tag' });

  await queryInterface.createTable('sms_compliance', {
    entity_id: { type: DataTypes.INTEGER, primaryKey: true, references: { model: 'entities', key: 'id' }, onDelete: 'CASCADE' },
    mode: { type: DataTypes.STRING(8), allowNull: false },
    // The propaganda window typed for the entity (both days included), used when no linked election gives one.
    window_starts_on: { type: DataTypes.DATEONLY, allowNull: true },
    window_ends_on: { type: DataTypes.DATEONLY, allowNull: true },
    updated_by: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'users', key: 'id' }, onDelete: 'SET NULL' },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  for (const table of ['sms_compliance', 'contact_tags', 'contacts']) await queryInterface.dropTable(table);
  for (const column of ['contact_id', 'price_unit', 'price']) await queryInterface.removeColumn('sms_messages', column);
  await queryInterface.removeIndex('sms_campaigns', 'sms_campaigns_state');
  await queryInterface.removeIndex('sms_campaigns', 'sms_campaigns_entity');
  for (const column of ['tally', 'compliance', 'audience', 'footer', 'canceled_by', 'finished_at', 'state', 'entity_id']) await queryInterface.removeColumn('sms_campaigns', column);
  await queryInterface.removeColumn('sms_credentials', 'footer');
}
