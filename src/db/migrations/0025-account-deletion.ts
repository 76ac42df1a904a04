import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Account deletion (issue 21, LGPD; src/accounts/account-deletion.ts): `users.deleted_at` says when the
 * account's owner deleted it. The row itself stays, under a pseudonym and with its personal fields
 * erased, so that the audit log and the edit history keep naming its actions; null for every live
 * (or merely deactivated) account.
 */
export const name = '0025-account-deletion';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.addColumn('users', 'deleted_at', { type: DataTypes.DATE, allowNull: true });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  // Not removeColumn: on SQLite it rebuilds the table, which the foreign keys to users forbid; both databases drop a column in place.
  await queryInterface.sequelize.query('ALTER TABLE users DROP COLUMN deleted_at');
}
