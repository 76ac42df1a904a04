import { DataTypes, type QueryInterface } from 'sequelize';
import { REGISTERED_PARTIES, REGISTERED_PARTIES_SOURCE } from '@palanque/rules/registered-parties';

/**
 * Reference data of its own (issue 42, section 7), not derived from imported candidacies:
 * - `registered_parties`: the parties registered with the electoral court (TSE) since 2020, keyed by
 *   number and registration day (numbers are reused: 25 was DEM's, is PRD's), with the day each ceased to
 *   exist and its successor. Seeded from packages/rules/src/registered-parties.ts as it stood when this migration was
 *   written, each row naming its source. The ballot-number and coalition rules judge an election by the
 *   parties of this table that could run in it (src/entities/electoral-rules.ts).
 * - `municipalities.siafi_id`: the municipality's SIAFI (TOM) code, which the municipality list carries;
 *   the candidacy import matches the court's 5-digit municipality codes with it (src/elections/tse/municipality-codes.ts).
 *   Null until the municipality list is imported again (the import fills it; an unchanged row gets it too).
 */
export const name = '0037-registered-parties';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('registered_parties', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    nr_partido: { type: DataTypes.INTEGER, allowNull: false },
    sg_partido: { type: DataTypes.STRING(30), allowNull: false },
    nm_partido: { type: DataTypes.STRING(120), allowNull: false },
    dt_registro: { type: DataTypes.DATEONLY, allowNull: false },
    dt_extincao: { type: DataTypes.DATEONLY, allowNull: true },
    tp_extincao: { type: DataTypes.STRING(20), allowNull: true },
    sg_sucessor: { type: DataTypes.STRING(30), allowNull: true },
    // JSON text: the earlier names, latest first.
    nomes_anteriores: { type: DataTypes.TEXT, allowNull: false, defaultValue: '[]' },
    fonte: { type: DataTypes.STRING(300), allowNull: false },
  });
  await queryInterface.addIndex('registered_parties', ['nr_partido', 'dt_registro'], { name: 'registered_parties_number_registration', unique: true });
  await queryInterface.bulkInsert(
    'registered_parties',
    REGISTERED_PARTIES.map((party) => ({ ...party, nomes_anteriores: JSON.stringify(party.nomes_anteriores), fonte: REGISTERED_PARTIES_SOURCE })),
  );
  await queryInterface.addColumn('municipalities', 'siafi_id', { type: DataTypes.INTEGER, allowNull: true });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeColumn('municipalities', 'siafi_id');
  await queryInterface.dropTable('registered_parties');
}
