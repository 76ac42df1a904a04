import { DataTypes, type QueryInterface } from 'sequelize';

/** Stored answers of POSTs sent with an Idempotency-Key (see src/http/idempotency.ts). */
export const name = '0002-idempotency-keys';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('idempotency_keys', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    key: { type: DataTypes.STRING(255), allowNull: false },
    caller: { type: DataTypes.STRING(100), allowNull: false },
    method: { type: DataTypes.STRING(10), allowNull: false },
    path: { type: DataTypes.STRING(500), allowNull: false },
    fingerprint: { type: DataTypes.STRING(64), allowNull: false },
    state: { type: DataTypes.STRING(20), allowNull: false },
    status_code: { type: DataTypes.INTEGER, allowNull: true },
    headers: { type: DataTypes.TEXT, allowNull: true },
    body: { type: DataTypes.TEXT, allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    expires_at: { type: DataTypes.DATE, allowNull: false },
  });
  // The unique key is what makes two racing requests run the operation once, on any number of instances.
  await queryInterface.addIndex('idempotency_keys', ['key', 'caller', 'method', 'path'], { unique: true, name: 'idempotency_keys_identity' });
  await queryInterface.addIndex('idempotency_keys', ['expires_at'], { name: 'idempotency_keys_expiry' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('idempotency_keys');
}
