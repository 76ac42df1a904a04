import { DataTypes, type QueryInterface } from 'sequelize';

/** Jobs of the embedded runner (src/jobs/table-queue.ts); PostgreSQL deployments use pg-boss's own schema. */
export const name = '0003-jobs';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('jobs', {
    id: { type: DataTypes.STRING(36), primaryKey: true },
    name: { type: DataTypes.STRING(100), allowNull: false },
    data: { type: DataTypes.TEXT, allowNull: false },
    state: { type: DataTypes.STRING(20), allowNull: false },
    attempts: { type: DataTypes.INTEGER, allowNull: false },
    max_attempts: { type: DataTypes.INTEGER, allowNull: false },
    retry_delay_ms: { type: DataTypes.INTEGER, allowNull: false },
    backoff: { type: DataTypes.BOOLEAN, allowNull: false },
    run_after: { type: DataTypes.DATE, allowNull: false },
    output: { type: DataTypes.TEXT, allowNull: true },
    error: { type: DataTypes.TEXT, allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('jobs', ['state', 'run_after'], { name: 'jobs_due' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('jobs');
}
