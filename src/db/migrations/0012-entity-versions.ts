import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Entity versions and authors (issue 17): `version` counts the writes of an entity and is its `ETag`
 * (an `addEntity` with a stale `If-Match` is refused), and `updated_by` is the user who wrote it last.
 * Entities written before this migration start at version 1, last written by their owner.
 */
export const name = '0012-entity-versions';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.addColumn('entities', 'version', { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 });
  await queryInterface.addColumn('entities', 'updated_by', {
    type: DataTypes.INTEGER,
    allowNull: true,
    references: { model: 'users', key: 'id' },
    onDelete: 'SET NULL',
  });
  await queryInterface.sequelize.query('UPDATE entities SET updated_by = owner_id');
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeColumn('entities', 'updated_by');
  await queryInterface.removeColumn('entities', 'version');
}
