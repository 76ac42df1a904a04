import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * The edit history of entities (issue 21; src/entities/history.ts): every change to an entity, its team,
 * its monitors and its SMS credentials, with who made it, when, and each field's value before and after.
 * `actor_id` is a plain integer, not a foreign key: the history outlives its actors' accounts (a deleted
 * account keeps its row, pseudonymised, and its id), and names them through `users` when it is read.
 * The entity's rows go with the entity.
 */
export const name = '0024-edit-history';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('edit_history', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    entity_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'entities', key: 'id' }, onDelete: 'CASCADE' },
    // What changed: the entity itself, its team, one of its monitors or one of its SMS credentials (`subject_id`).
    subject: { type: DataTypes.STRING(20), allowNull: false },
    subject_id: { type: DataTypes.INTEGER, allowNull: true },
    action: { type: DataTypes.STRING(40), allowNull: false },
    actor_id: { type: DataTypes.INTEGER, allowNull: true },
    occurred_at: { type: DataTypes.DATE, allowNull: false },
    // JSON text: an array of { field, before, after }; a secret is only ever the marker "[secret]".
    changes: { type: DataTypes.TEXT, allowNull: false },
  });
  await queryInterface.addIndex('edit_history', ['entity_id', 'occurred_at'], { name: 'edit_history_entity_time' });
  await queryInterface.addIndex('edit_history', ['occurred_at'], { name: 'edit_history_time' });
  await queryInterface.addIndex('edit_history', ['actor_id'], { name: 'edit_history_actor' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('edit_history');
}
