import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * The login lock counts failures against the identifier as typed, from one address and from anywhere,
 * and against the address (src/accounts/login-lock.ts). A password check is recorded as pending while it
 * runs, so that the checks after it wait for its outcome instead of counting it as a failure.
 */
export const name = '0017-login-failures-pending';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  // Rows before this migration are failures that have settled.
  await queryInterface.addColumn('login_failures', 'pending', { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false });
  // Failures counted per account (`user:<id>`) or per unknown name as typed (`login:<name>`) no longer
  // count for anything, and the second kept typed names in clear.
  await queryInterface.sequelize.query("DELETE FROM login_failures WHERE subject LIKE 'user:%' OR subject LIKE 'login:%'");
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  // Checks still pending were not failures.
  await queryInterface.sequelize.query('DELETE FROM login_failures WHERE pending = :pending', { replacements: { pending: true } });
  await queryInterface.removeColumn('login_failures', 'pending');
}
