import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Who created each guardianship link (issue 18): a link stands only while its creator could still create
 * it (src/entities/guardianship.ts), so the creator is recorded. Links made before this migration are
 * counted as created by their tutor's owner. Deleting the creator's account deletes their links, as it
 * deletes their memberships. The ward index serves the ward's list of the links that point at it.
 */
export const name = '0018-guardianship-creators';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.addColumn('guardianship_links', 'created_by', {
    type: DataTypes.INTEGER,
    allowNull: true,
    references: { model: 'users', key: 'id' },
    onDelete: 'CASCADE',
  });
  await queryInterface.sequelize.query('UPDATE guardianship_links SET created_by = (SELECT owner_id FROM entities WHERE entities.id = guardianship_links.tutor_id)');
  await queryInterface.addIndex('guardianship_links', ['ward_id'], { name: 'guardianship_links_ward' });
  await queryInterface.addIndex('guardianship_links', ['created_by'], { name: 'guardianship_links_creator' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeIndex('guardianship_links', 'guardianship_links_creator');
  await queryInterface.removeIndex('guardianship_links', 'guardianship_links_ward');
  await queryInterface.removeColumn('guardianship_links', 'created_by');
}
