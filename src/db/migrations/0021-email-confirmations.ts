import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Addresses waiting to be confirmed through a mailed link (issue 21), whose tokens are kept as hashes:
 * - `pending_signups`: a sign-up becomes an account only when its owner opens the link, so an address
 *   nobody confirmed never becomes one; until then the row holds the username and the chosen password's
 *   hash;
 * - `pending_email_changes`: a user's new address, which replaces the old one once confirmed from it.
 * Rows expire with their link and are purged by the housekeeping.
 */
export const name = '0021-email-confirmations';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('pending_signups', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    username: { type: DataTypes.STRING(150), allowNull: false },
    username_key: { type: DataTypes.STRING(150), allowNull: false },
    email: { type: DataTypes.STRING(254), allowNull: false },
    first_name: { type: DataTypes.STRING(150), allowNull: false, defaultValue: '' },
    last_name: { type: DataTypes.STRING(150), allowNull: false, defaultValue: '' },
    phone: { type: DataTypes.STRING(16), allowNull: true },
    password_hash: { type: DataTypes.STRING(255), allowNull: false },
    token_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    // When the last link was mailed: a new one is mailed at most every SIGNUP_RESEND_SECONDS.
    sent_at: { type: DataTypes.DATE, allowNull: false },
    expires_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('pending_signups', ['email'], { name: 'pending_signups_email' });
  await queryInterface.addIndex('pending_signups', ['username_key'], { name: 'pending_signups_username' });

  await queryInterface.createTable('pending_email_changes', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    user_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    email: { type: DataTypes.STRING(254), allowNull: false },
    token_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    expires_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('pending_email_changes', ['user_id'], { name: 'pending_email_changes_user' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('pending_email_changes');
  await queryInterface.dropTable('pending_signups');
}
