import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Team invitations (issue 21; src/entities/invitations.ts): `addOperator` invites, and the person joins
 * only by accepting. The invitation names an address, not a user: it may have no account yet (its
 * token then admits a sign-up of that address). And the profile setting that lets teammates see a
 * member's e-mail and phone (off until the member turns it on).
 */
export const name = '0023-team-invitations';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('team_invitations', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    entity_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'entities', key: 'id' }, onDelete: 'CASCADE' },
    email: { type: DataTypes.STRING(254), allowNull: false },
    role: { type: DataTypes.STRING(20), allowNull: false },
    // Plain integers: an invitation outlives neither its entity nor its purpose, but its sender may leave.
    invited_by: { type: DataTypes.INTEGER, allowNull: true },
    // sha256 of the token the mail carries (it admits a sign-up under SIGNUP=invite).
    token_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    // pending, accepted, declined, withdrawn (expired is a pending one past expires_at).
    state: { type: DataTypes.STRING(12), allowNull: false },
    created_at: { type: DataTypes.DATE, allowNull: false },
    expires_at: { type: DataTypes.DATE, allowNull: false },
    answered_at: { type: DataTypes.DATE, allowNull: true },
    answered_by: { type: DataTypes.INTEGER, allowNull: true },
  });
  await queryInterface.addIndex('team_invitations', ['entity_id', 'state', 'expires_at'], { name: 'team_invitations_entity' });
  await queryInterface.addIndex('team_invitations', ['email', 'state'], { name: 'team_invitations_email' });
  await queryInterface.addColumn('users', 'contact_visible_to_team', { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  // Not removeColumn: on SQLite it rebuilds the table, which the foreign keys to users forbid; both databases drop a column in place.
  await queryInterface.sequelize.query('ALTER TABLE users DROP COLUMN contact_visible_to_team');
  await queryInterface.dropTable('team_invitations');
}
