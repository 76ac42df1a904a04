import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Opt-outs that survive erasing the contact (issue 42, section 3; src/messaging/opt-outs.ts).
 *
 * - `sms_suppressions`: one row per entity and number that opted out of its campaigns, holding the
 *   number only as HMAC-SHA256 under the entity's own key, never the number. Erasing a contact at the
 *   person's request (LGPD art. 18 VI) removes the number everywhere else, this row stays, so a list
 *   pasted later still skips it (Lei 9.504/1997 art. 57-G: the sender must stop within 48 hours, and
 *   for good; LGPD art. 16 I lets the controller keep what a legal obligation needs).
 * - `sms_suppression_keys`: each entity's random 32-byte key, sealed under SECRETS_KEY (SecretBox).
 * - `sms_opt_outs` gains how each opt-out came (`source`: a reply, by hand, from a conversation), the
 *   phrase a free-text reply was read with, and who recorded one by hand.
 *
 * Existing opt-outs are not hashed here: a migration has no SECRETS_KEY to open keys with. They stay
 * honoured from `sms_opt_outs` as before, and an erasure of their number writes their suppression in
 * its own transaction before it removes the number (Contacts.erase), so they survive erasure too. Both
 * tables die with their entity (an entity's opt-outs move to the shared scope then, 0014; a hash under a
 * deleted entity's key could not be checked by anyone).
 */
export const name = '0034-sms-suppressions';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.sequelize.transaction(async (transaction) => {
    await queryInterface.createTable(
      'sms_suppression_keys',
      {
        entity_id: { type: DataTypes.INTEGER, primaryKey: true, references: { model: 'entities', key: 'id' }, onDelete: 'CASCADE' },
        key_sealed: { type: DataTypes.TEXT, allowNull: false },
        created_at: { type: DataTypes.DATE, allowNull: false },
      },
      { transaction },
    );
    await queryInterface.createTable(
      'sms_suppressions',
      {
        id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
        entity_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'entities', key: 'id' }, onDelete: 'CASCADE' },
        // HMAC-SHA256 of the E.164 number under the entity's key, hex.
        phone_hash: { type: DataTypes.STRING(64), allowNull: false },
        // 'reply', 'manual' or 'conversation'.
        source: { type: DataTypes.STRING(20), allowNull: false },
        suppressed_at: { type: DataTypes.DATE, allowNull: false },
      },
      { transaction },
    );
    await queryInterface.addIndex('sms_suppressions', ['entity_id', 'phone_hash'], { name: 'sms_suppressions_entity_hash', unique: true, transaction });
    // Null for the rows written before: they all came from replies.
    await queryInterface.addColumn('sms_opt_outs', 'source', { type: DataTypes.STRING(20), allowNull: true }, { transaction });
    await queryInterface.addColumn('sms_opt_outs', 'phrase', { type: DataTypes.STRING(40), allowNull: true }, { transaction });
    await queryInterface.addColumn('sms_opt_outs', 'created_by', { type: DataTypes.INTEGER, allowNull: true }, { transaction });
  });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.sequelize.transaction(async (transaction) => {
    await queryInterface.removeColumn('sms_opt_outs', 'created_by', { transaction });
    await queryInterface.removeColumn('sms_opt_outs', 'phrase', { transaction });
    await queryInterface.removeColumn('sms_opt_outs', 'source', { transaction });
    await queryInterface.dropTable('sms_suppressions', { transaction });
    await queryInterface.dropTable('sms_suppression_keys', { transaction });
  });
}
