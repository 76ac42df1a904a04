import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * OAuth links wait for their owner (src/oauth/pending-links.ts): a callback no longer links the provider
 * account, it keeps a pending link (the account, its tokens sealed, the user who started the flow and an
 * expiry) that only that user's confirmation turns into a social login.
 */
export const name = '0015-oauth-pending-links';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('oauth_pending_links', {
    id: { type: DataTypes.STRING(36), primaryKey: true },
    user_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    provider: { type: DataTypes.STRING(20), allowNull: false },
    external_id: { type: DataTypes.STRING(255), allowNull: false },
    display_name: { type: DataTypes.STRING(255), allowNull: false },
    // Null once confirmed: the tokens then live on the social login only.
    access_token_sealed: { type: DataTypes.TEXT, allowNull: true },
    refresh_token_sealed: { type: DataTypes.TEXT, allowNull: true },
    token_expires_at: { type: DataTypes.DATE, allowNull: true },
    scope: { type: DataTypes.STRING(1024), allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    expires_at: { type: DataTypes.DATE, allowNull: false },
    confirmed_at: { type: DataTypes.DATE, allowNull: true },
  });
  await queryInterface.addIndex('oauth_pending_links', ['expires_at'], { name: 'oauth_pending_links_expiry' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('oauth_pending_links');
}
