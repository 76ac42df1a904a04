import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Accounts (src/accounts/): users, their API keys and password-reset tokens (hashes only), the failed
 * logins that drive the login lock, and the social accounts linked by the OAuth callbacks.
 */
export const name = '0004-accounts';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('users', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    username: { type: DataTypes.STRING(150), allowNull: false },
    // Lower-cased username: the unique index makes usernames unique case-insensitively on both databases.
    username_key: { type: DataTypes.STRING(150), allowNull: false, unique: true },
    email: { type: DataTypes.STRING(254), allowNull: false, unique: true },
    first_name: { type: DataTypes.STRING(150), allowNull: false, defaultValue: '' },
    last_name: { type: DataTypes.STRING(150), allowNull: false, defaultValue: '' },
    phone: { type: DataTypes.STRING(16), allowNull: true },
    password_hash: { type: DataTypes.STRING(255), allowNull: false },
    is_admin: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    is_active: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    date_joined: { type: DataTypes.DATE, allowNull: false },
    last_login: { type: DataTypes.DATE, allowNull: true },
  });

  await queryInterface.createTable('api_tokens', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    user_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    key_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    last_used_at: { type: DataTypes.DATE, allowNull: true },
    expires_at: { type: DataTypes.DATE, allowNull: false },
    revoked_at: { type: DataTypes.DATE, allowNull: true },
  });
  await queryInterface.addIndex('api_tokens', ['user_id'], { name: 'api_tokens_user' });

  await queryInterface.createTable('password_reset_tokens', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    user_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    token_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    expires_at: { type: DataTypes.DATE, allowNull: false },
    used_at: { type: DataTypes.DATE, allowNull: true },
  });
  await queryInterface.addIndex('password_reset_tokens', ['user_id'], { name: 'password_reset_tokens_user' });

  await queryInterface.createTable('login_failures', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    // `user:<id>`, `login:<name>` (no such account) or `ip:<address>`.
    subject: { type: DataTypes.STRING(300), allowNull: false },
    failed_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('login_failures', ['subject', 'failed_at'], { name: 'login_failures_subject_time' });

  await queryInterface.createTable('social_logins', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    user_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    provider: { type: DataTypes.STRING(20), allowNull: false },
    external_id: { type: DataTypes.STRING(255), allowNull: false },
    display_name: { type: DataTypes.STRING(255), allowNull: false },
    linked_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('social_logins', ['provider', 'external_id'], { name: 'social_logins_account', unique: true });
  await queryInterface.addIndex('social_logins', ['user_id'], { name: 'social_logins_user' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  for (const table of ['social_logins', 'login_failures', 'password_reset_tokens', 'api_tokens', 'users']) {
    await queryInterface.dropTable(table);
  }
}
