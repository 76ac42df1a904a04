import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Social monitors (src/monitors/) with the profiles and keywords they watch and their metric snapshots,
 * and the strategy scenario requests made on them (src/strategy/). Lists live in tables of their own,
 * so they can be queried; only a completed run's projection, a document read whole, is stored as JSON text.
 */
export const name = '0007-monitors-scenarios';

const id = { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true };
const cascadeTo = (table: string) => ({ type: DataTypes.INTEGER, allowNull: false, references: { model: table, key: 'id' }, onDelete: 'CASCADE' });

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('social_monitors', {
    id,
    entity_id: cascadeTo('entities'),
    name: { type: DataTypes.STRING(200), allowNull: false },
    // The lower-cased name: unique per entity. Lower-casing can lengthen a text (`İ` becomes two characters).
    name_key: { type: DataTypes.STRING(800), allowNull: false },
    created_by: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'users', key: 'id' }, onDelete: 'SET NULL' },
    created_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('social_monitors', ['entity_id', 'name_key'], { name: 'social_monitors_entity_name', unique: true });

  await queryInterface.createTable('monitor_profiles', {
    id,
    monitor_id: cascadeTo('social_monitors'),
    position: { type: DataTypes.INTEGER, allowNull: false },
    nm_rede: { type: DataTypes.STRING(50), allowNull: false },
    username: { type: DataTypes.STRING(150), allowNull: true },
    link: { type: DataTypes.STRING(2048), allowNull: true },
  });
  await queryInterface.addIndex('monitor_profiles', ['monitor_id'], { name: 'monitor_profiles_monitor' });

  await queryInterface.createTable('monitor_keywords', {
    id,
    monitor_id: cascadeTo('social_monitors'),
    position: { type: DataTypes.INTEGER, allowNull: false },
    keyword: { type: DataTypes.STRING(100), allowNull: false },
  });
  await queryInterface.addIndex('monitor_keywords', ['monitor_id'], { name: 'monitor_keywords_monitor' });

  await queryInterface.createTable('metric_snapshots', {
    id,
    monitor_id: cascadeTo('social_monitors'),
    network: { type: DataTypes.STRING(50), allowNull: false },
    taken_at: { type: DataTypes.DATE, allowNull: false },
    followers: { type: DataTypes.BIGINT, allowNull: false },
    posts: { type: DataTypes.BIGINT, allowNull: false },
    engagement: { type: DataTypes.DOUBLE, allowNull: false },
    mentions: { type: DataTypes.BIGINT, allowNull: false },
    // Where it came from: `import` (an admin) or a provider's name (webhooks).
    source: { type: DataTypes.STRING(50), allowNull: false },
    received_at: { type: DataTypes.DATE, allowNull: false },
  });
  // One snapshot per network and moment (imports are idempotent); the index also serves the series.
  await queryInterface.addIndex('metric_snapshots', ['monitor_id', 'network', 'taken_at'], { name: 'metric_snapshots_moment', unique: true });

  await queryInterface.createTable('scenario_requests', {
    id,
    monitor_id: cascadeTo('social_monitors'),
    horizon_days: { type: DataTypes.INTEGER, allowNull: false },
    state: { type: DataTypes.STRING(20), allowNull: false },
    requested_by: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'users', key: 'id' }, onDelete: 'SET NULL' },
    decided_by: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'users', key: 'id' }, onDelete: 'SET NULL' },
    decided_at: { type: DataTypes.DATE, allowNull: true },
    rejection_reason: { type: DataTypes.TEXT, allowNull: true },
    job_id: { type: DataTypes.STRING(36), allowNull: true },
    failure_reason: { type: DataTypes.TEXT, allowNull: true },
    projection: { type: DataTypes.TEXT, allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('scenario_requests', ['monitor_id', 'state'], { name: 'scenario_requests_monitor_state' });

  await queryInterface.createTable('scenario_entities', {
    id,
    scenario_id: cascadeTo('scenario_requests'),
    position: { type: DataTypes.INTEGER, allowNull: false },
    entity_id: cascadeTo('entities'),
  });
  await queryInterface.addIndex('scenario_entities', ['scenario_id'], { name: 'scenario_entities_scenario' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  for (const table of ['scenario_entities', 'scenario_requests', 'metric_snapshots', 'monitor_keywords', 'monitor_profiles', 'social_monitors']) {
    await queryInterface.dropTable(table);
  }
}
