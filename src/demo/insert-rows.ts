/**
 * Writing the demo data's rows with the ids the fixtures (and the spec's examples) give them, when those
 * ids are free, and reaching the tables whose domains keep their models to themselves.
 */
import { QueryTypes, type Model, type ModelStatic, type Sequelize, type Transaction } from 'sequelize';
import { createNewsSources, type NewsSourceRow } from '../news/sources.js';
import { createResearchBookmarks, type ResearchBookmarkRow } from '../research/bookmarks.js';
import { defineScenarioModels, type ScenarioEntityRow, type ScenarioRow } from '../strategy/models.js';

export type Static<Row extends object> = ModelStatic<Model<Row, Partial<Row>>>;

/**
 * Inserts a row with the id `preferredId` when no row has it, otherwise with the next id of the table;
 * returns the id given. On PostgreSQL the table's sequence is first moved past an id chosen here, so
 * that later inserts do not pick it (SQLite's AUTOINCREMENT follows explicit ids by itself).
 */
export async function insertRow<Row extends object>(model: Static<Row>, preferredId: number | undefined, values: Partial<Row>, transaction?: Transaction): Promise<number> {
  const free = preferredId !== undefined && !(await model.findByPk(preferredId, { attributes: ['id'], transaction }));
  if (free) await reserveId(model as unknown as ModelStatic<Model>, preferredId, transaction);
  const untyped = model as unknown as ModelStatic<Model>;
  const row = await untyped.create({ ...values, ...(free ? { id: preferredId } : {}) }, { transaction });
  return Number(row.get('id'));
}

async function reserveId(model: ModelStatic<Model>, id: number, transaction?: Transaction): Promise<void> {
  const sequelize = model.sequelize!;
  if (sequelize.getDialect() !== 'postgres') return;
  const [found] = await sequelize.query<{ sequence: string | null }>("SELECT pg_get_serial_sequence(:table, 'id') AS sequence", {
    replacements: { table: model.tableName },
    type: QueryTypes.SELECT,
    transaction,
  });
  if (!found?.sequence) return;
  // The name comes from the catalog, quoted as needed.
  const [state] = await sequelize.query<{ last_value: string | number; is_called: boolean }>(`SELECT last_value, is_called FROM ${found.sequence}`, {
    type: QueryTypes.SELECT,
    transaction,
  });
  const next = state!.is_called ? Number(state!.last_value) + 1 : Number(state!.last_value);
  if (next <= id) await sequelize.query('SELECT setval(:sequence, :id, true)', { replacements: { sequence: found.sequence, id }, transaction });
}

/** The scenario tables' models, as createStrategy defined them on this database. */
export function scenarioModels(sequelize: Sequelize): { Scenario: Static<ScenarioRow>; ScenarioEntity: Static<ScenarioEntityRow> } {
  if (!sequelize.isDefined('ScenarioRequest') || !sequelize.isDefined('ScenarioEntity')) {
    const { Scenario, ScenarioEntity } = defineScenarioModels(sequelize);
    return { Scenario, ScenarioEntity };
  }
  return { Scenario: sequelize.model('ScenarioRequest') as Static<ScenarioRow>, ScenarioEntity: sequelize.model('ScenarioEntity') as Static<ScenarioEntityRow> };
}

/** The bookmark and news-source tables' models (their domains keep them to themselves). */
export function researchModels(sequelize: Sequelize): { Bookmark: Static<ResearchBookmarkRow>; NewsSource: Static<NewsSourceRow> } {
  if (!sequelize.isDefined('ResearchBookmark')) createResearchBookmarks(sequelize);
  if (!sequelize.isDefined('NewsSource')) createNewsSources(sequelize, Number.POSITIVE_INFINITY); // only its model is used here
  return { Bookmark: sequelize.model('ResearchBookmark') as Static<ResearchBookmarkRow>, NewsSource: sequelize.model('NewsSource') as Static<NewsSourceRow> };
}
