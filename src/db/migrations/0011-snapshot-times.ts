import type { QueryInterface } from 'sequelize';

/**
 * Metric snapshots by monitor and moment: the 30-day series of `getSocialMonitorData` reads a range of
 * one monitor's moments across its networks, which the (monitor_id, network, taken_at) index cannot
 * give without reading every snapshot the monitor ever had (docs/benchmarks.md).
 */
export const name = '0011-snapshot-times';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.addIndex('metric_snapshots', ['monitor_id', 'taken_at'], { name: 'metric_snapshots_monitor_time' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeIndex('metric_snapshots', 'metric_snapshots_monitor_time');
}
