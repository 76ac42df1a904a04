import { DataTypes, type QueryInterface } from 'sequelize';

/** The reference list of Brazilian municipalities (IBGE). */
export const name = '0001-municipalities';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('municipalities', {
    codigo_ibge: { type: DataTypes.INTEGER, primaryKey: true, allowNull: false },
    nome: { type: DataTypes.STRING(100), allowNull: false },
    latitude: { type: DataTypes.DOUBLE, allowNull: false },
    longitude: { type: DataTypes.DOUBLE, allowNull: false },
    capital: { type: DataTypes.BOOLEAN, allowNull: false },
    codigo_uf: { type: DataTypes.SMALLINT, allowNull: false },
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('municipalities', ['codigo_uf', 'codigo_ibge'], { name: 'municipalities_uf_code' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('municipalities');
}
