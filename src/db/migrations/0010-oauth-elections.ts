import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * OAuth links (src/oauth/): the provider tokens of a linked account, sealed (src/security/secret-box.ts),
 * on its social login; the `state` of each flow started, by the hash of its nonce, with the PKCE
 * verifier sealed, so that a state is used once. Elections-panel syncs (src/elections/): one row per
 * sync, holding the panel token sealed until the sync ends.
 */
export const name = '0010-oauth-elections';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.addColumn('social_logins', 'access_token_sealed', { type: DataTypes.TEXT, allowNull: true });
  await queryInterface.addColumn('social_logins', 'refresh_token_sealed', { type: DataTypes.TEXT, allowNull: true });
  await queryInterface.addColumn('social_logins', 'token_expires_at', { type: DataTypes.DATE, allowNull: true });
  await queryInterface.addColumn('social_logins', 'scope', { type: DataTypes.STRING(1024), allowNull: true });

  await queryInterface.createTable('oauth_states', {
    nonce_hash: { type: DataTypes.STRING(64), primaryKey: true },
    user_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    provider: { type: DataTypes.STRING(20), allowNull: false },
    redirect_uri: { type: DataTypes.STRING(2048), allowNull: false },
    verifier_sealed: { type: DataTypes.TEXT, allowNull: false },
    expires_at: { type: DataTypes.DATE, allowNull: false },
    used_at: { type: DataTypes.DATE, allowNull: true },
  });
  await queryInterface.addIndex('oauth_states', ['expires_at'], { name: 'oauth_states_expiry' });

  await queryInterface.createTable('elections_panel_syncs', {
    id: { type: DataTypes.STRING(36), primaryKey: true },
    user_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    state: { type: DataTypes.STRING(20), allowNull: false },
    attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    token_sealed: { type: DataTypes.TEXT, allowNull: true },
    entities_sent: { type: DataTypes.INTEGER, allowNull: true },
    panel_reference: { type: DataTypes.STRING(255), allowNull: true },
    error: { type: DataTypes.TEXT, allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('elections_panel_syncs', ['user_id', 'state'], { name: 'elections_panel_syncs_user_state' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('elections_panel_syncs');
  await queryInterface.dropTable('oauth_states');
  for (const column of ['scope', 'token_expires_at', 'refresh_token_sealed', 'access_token_sealed']) {
    await queryInterface.removeColumn('social_logins', column);
  }
}
