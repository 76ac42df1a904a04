/** Sequelize models of the scenario tables (migration 0007). */
import { DataTypes, type Model, type ModelAttributes, type ModelStatic, type Sequelize } from 'sequelize';
import type { components } from '../../sdk/schema.js';

export type ScenarioState = components['schemas']['ScenarioState'];

export interface ScenarioRow {
  id: number;
  monitor_id: number;
  horizon_days: number;
  state: ScenarioState;
  requested_by: number | null;
  decided_by: number | null;
  decided_at: Date | null;
  rejection_reason: string | null;
  job_id: string | null;
  failure_reason: string | null;
  /** The completed run's ScenarioProjection, as JSON text. */
  projection: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface ScenarioEntityRow {
  id: number;
  scenario_id: number;
  position: number;
  entity_id: number;
}

type Static<Row extends object> = ModelStatic<Model<Row, Partial<Row>>>;

export interface ScenarioModels {
  Scenario: Static<ScenarioRow>;
  ScenarioEntity: Static<ScenarioEntityRow>;
}

const id = { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true };

export function defineScenarioModels(sequelize: Sequelize): ScenarioModels {
  const define = <Row extends object>(name: string, attributes: ModelAttributes, tableName: string) =>
    sequelize.define<Model<Row, Partial<Row>>>(name, attributes, { tableName, timestamps: false });
  return {
    Scenario: define<ScenarioRow>(
      'ScenarioRequest',
      {
        id,
        monitor_id: DataTypes.INTEGER,
        horizon_days: DataTypes.INTEGER,
        state: DataTypes.STRING(20),
        requested_by: DataTypes.INTEGER,
        decided_by: DataTypes.INTEGER,
        decided_at: DataTypes.DATE,
        rejection_reason: DataTypes.TEXT,
        job_id: DataTypes.STRING(36),
        failure_reason: DataTypes.TEXT,
        projection: DataTypes.TEXT,
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      'scenario_requests',
    ),
    ScenarioEntity: define<ScenarioEntityRow>(
      'ScenarioEntity',
      { id, scenario_id: DataTypes.INTEGER, position: DataTypes.INTEGER, entity_id: DataTypes.INTEGER },
      'scenario_entities',
    ),
  };
}
