import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * The device a key was issued to (issue 21): what the login's `User-Agent` said, so that a user who
 * lists their sessions can tell their phone's key from a forgotten laptop's before revoking one. Keys
 * issued before this migration have none.
 */
export const name = '0020-api-token-devices';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.addColumn('api_tokens', 'device', { type: DataTypes.STRING(200), allowNull: true });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeColumn('api_tokens', 'device');
}
