import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Entity versions and authors (issue 17): `version` counts the writes of an entity and is its `ETag`
 * (an `addEntity` with a stale `If-Match` is refused), and `updated_by` is the user who wrote it last.
 * Entities written before this migration start at version 1, last written by their owner.
 * `creation_key` names the idempotent request that created an entity (src/http/idempotency.ts), unique:
 * a retry whose first answer was lost with a crashed instance finds the entity instead of making another.
 */
export const name = '0012-entity-versions';

/** SQLite's down rebuilds entities, which others reference (ON DELETE CASCADE): foreign key enforcement off, or the rebuild would delete their rows (src/db/migration-transaction.ts). */
export const sqliteForeignKeys = 'off';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.addColumn('entities', 'version', { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 });
  await queryInterface.addColumn('entities', 'updated_by', {
    type: DataTypes.INTEGER,
    allowNull: true,
    references: { model: 'users', key: 'id' },
    onDelete: 'SET NULL',
  });
  await queryInterface.sequelize.query('UPDATE entities SET updated_by = owner_id');
  await queryInterface.addColumn('entities', 'creation_key', { type: DataTypes.STRING(64), allowNull: true });
  await queryInterface.addIndex('entities', ['creation_key'], { name: 'entities_creation_key', unique: true });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeIndex('entities', 'entities_creation_key');
  await queryInterface.removeColumn('entities', 'creation_key');
  await queryInterface.removeColumn('entities', 'updated_by');
  await queryInterface.removeColumn('entities', 'version');
}
