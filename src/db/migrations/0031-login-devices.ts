import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Trusted devices at login (issue 41; src/accounts/login-devices.ts): the device tokens a login hands
 * out, and the unlock tokens mailed to an owner whose name is delayed, kept as their SHA-256 only. A
 * login carrying one is judged by the token's own failures, never by the failures counted against its
 * name or address. The rows die with their user (deleted by account deletion, cascaded otherwise).
 */
export const name = '0031-login-devices';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('login_devices', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    user_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    // 'device' (handed out by a login, long-lived) or 'unlock' (mailed, short-lived, used once).
    kind: { type: DataTypes.STRING(10), allowNull: false },
    token_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    last_used_at: { type: DataTypes.DATE, allowNull: true },
    expires_at: { type: DataTypes.DATE, allowNull: false },
    // Password checks made with the token and not yet known to have succeeded (a check counts before it runs).
    failures: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
  });
  await queryInterface.addIndex('login_devices', ['user_id', 'kind'], { name: 'login_devices_user_kind' });
  await queryInterface.addIndex('login_devices', ['expires_at'], { name: 'login_devices_expiry' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('login_devices');
}
