/** The `municipalities` table (created by migration 0001). */
import { DataTypes, col, fn, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import { asStateCode, type Municipality } from './rules.js';

export type MunicipalityModel = ModelStatic<Model<Municipality, Municipality>>;

export function defineMunicipalityModel(sequelize: Sequelize): MunicipalityModel {
  return sequelize.define<Model<Municipality, Municipality>>(
    'Municipality',
    {
      codigo_ibge: { type: DataTypes.INTEGER, primaryKey: true },
      nome: { type: DataTypes.STRING(100), allowNull: false },
      latitude: { type: DataTypes.DOUBLE, allowNull: false },
      longitude: { type: DataTypes.DOUBLE, allowNull: false },
      capital: { type: DataTypes.BOOLEAN, allowNull: false },
      codigo_uf: { type: DataTypes.SMALLINT, allowNull: false },
    },
    { tableName: 'municipalities', underscored: true, createdAt: 'created_at', updatedAt: 'updated_at' },
  );
}

/** Every municipality, ordered by code, as plain records. */
export async function loadAllMunicipalities(model: MunicipalityModel): Promise<Municipality[]> {
  const rows = await model.findAll({
    attributes: ['codigo_ibge', 'nome', 'latitude', 'longitude', 'capital', 'codigo_uf'],
    order: [['codigo_ibge', 'ASC']],
    raw: true,
  });
  return (rows as unknown as Municipality[]).map(normalise);
}

/**
 * A cheap fingerprint of the table: its row count and latest change. Creates and imports only insert
 * and update (stamping updated_at), so any change of the list changes it.
 */
export async function municipalitiesFingerprint(model: MunicipalityModel): Promise<string> {
  const [row] = (await model.findAll({
    attributes: [
      [fn('count', col('codigo_ibge')), 'rows'],
      [fn('max', col('updated_at')), 'changed'],
    ],
    raw: true,
  })) as unknown as Array<{ rows: number | string; changed: Date | string | null }>;
  const changed = row?.changed ?? null;
  return `${Number(row?.rows ?? 0)}:${changed instanceof Date ? changed.toISOString() : String(changed)}`;
}

/** SQLite hands booleans back as 0/1 and PostgreSQL may hand numbers back as strings: make both exact. */
export function normalise(row: Municipality): Municipality {
  return {
    codigo_ibge: Number(row.codigo_ibge),
    nome: row.nome,
    latitude: Number(row.latitude),
    longitude: Number(row.longitude),
    capital: Boolean(row.capital),
    codigo_uf: asStateCode(Number(row.codigo_uf)),
  };
}
