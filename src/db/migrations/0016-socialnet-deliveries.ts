import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Replayed social-network deliveries (src/socialnet/deliveries.ts): the SHA-256 of every delivery body
 * processed, unique, so a delivery sent again (a replay, or a copy arriving at the same moment) is
 * recognised and ignored; kept SOCIALNET_REPLAY_WINDOW_SECONDS. And the time of the change a metric
 * snapshot came from, so an older change cannot overwrite it (src/monitors/store.ts).
 */
export const name = '0016-socialnet-deliveries';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('socialnet_deliveries', {
    body_hash: { type: DataTypes.STRING(64), primaryKey: true },
    // When the delivery was claimed for processing; the purge reads it.
    received_at: { type: DataTypes.DATE, allowNull: false },
    // Null while it is being processed: a claim left unfinished by a process that died can be taken over.
    processed_at: { type: DataTypes.DATE, allowNull: true },
  });
  await queryInterface.addIndex('socialnet_deliveries', ['received_at'], { name: 'socialnet_deliveries_received' });
  // Null: no time of its own (imports, and snapshots stored before this migration); taken_at stands for it.
  await queryInterface.addColumn('metric_snapshots', 'changed_at', { type: DataTypes.DATE, allowNull: true });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  // Not removeColumn: on SQLite it rebuilds the table and loses its indexes; both databases drop a column in place.
  await queryInterface.sequelize.query('ALTER TABLE metric_snapshots DROP COLUMN changed_at');
  await queryInterface.dropTable('socialnet_deliveries');
}
