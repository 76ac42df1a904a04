import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * The audit log of security events (issue 21; src/accounts/audit-log.ts): logins and their failures,
 * locks, key revocations, password and e-mail changes, accounts created, deactivated and reactivated,
 * members added to and removed from teams.
 * The user columns are plain integers, not foreign keys: the log outlives the accounts it names.
 */
export const name = '0022-audit-events';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('audit_events', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    occurred_at: { type: DataTypes.DATE, allowNull: false },
    event: { type: DataTypes.STRING(40), allowNull: false },
    // Who did it (null: nobody logged in, such as a failed login) and whose account it concerns.
    actor_id: { type: DataTypes.INTEGER, allowNull: true },
    user_id: { type: DataTypes.INTEGER, allowNull: true },
    address: { type: DataTypes.STRING(64), allowNull: true },
    // JSON text: counts and reasons, never a secret or what a client typed.
    details: { type: DataTypes.TEXT, allowNull: true },
  });
  await queryInterface.addIndex('audit_events', ['occurred_at'], { name: 'audit_events_time' });
  await queryInterface.addIndex('audit_events', ['event', 'occurred_at'], { name: 'audit_events_event_time' });
  await queryInterface.addIndex('audit_events', ['user_id', 'occurred_at'], { name: 'audit_events_user_time' });
  await queryInterface.addIndex('audit_events', ['actor_id', 'occurred_at'], { name: 'audit_events_actor_time' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('audit_events');
}
