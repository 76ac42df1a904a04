import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Data-removal requests the social network sends (src/socialnet/removals.ts): one per signed request,
 * found again by its hash, with the confirmation code given to the network and what the removal deleted.
 */
export const name = '0008-socialnet-removals';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('socialnet_removals', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    // SHA-256 of the signed request: the same request sent again finds its first answer.
    request_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    confirmation_code: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    // The network's app-scoped id of the person.
    app_user_id: { type: DataTypes.STRING(255), allowNull: false },
    // The Palanque user whose linked account it was (who may read the status); null when none was linked.
    user_id: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'users', key: 'id' }, onDelete: 'SET NULL' },
    status: { type: DataTypes.STRING(20), allowNull: false },
    removed_social_logins: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    removed_provider_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    removed_profiles: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    received_at: { type: DataTypes.DATE, allowNull: false },
    completed_at: { type: DataTypes.DATE, allowNull: true },
  });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('socialnet_removals');
}
