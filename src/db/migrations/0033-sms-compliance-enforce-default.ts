import { DataTypes, QueryTypes, type QueryInterface } from 'sequelize';
import type { Logger } from '../../logger.js';

/**
 * The safe path is the default (issue 42; src/messaging/compliance.ts): an entity without SMS compliance
 * settings is now in `enforce`, where it was in `warn`. So that nothing changes for the entities that
 * exist when it runs, this migration first writes an explicit `warn` row for each of them that has no
 * row (updated by nobody), and logs how many it wrote; entities created after it start in `enforce`.
 * It also adds `sms_campaigns.non_electoral_declaration`: a campaign's declaration that it is not
 * electoral propaganda (Lei 9.504/1997 art. 36-A), JSON `{text, declared_by, declared_at}`.
 *
 * Down drops the column and the `warn` rows it wrote (those still updated by nobody and in `warn`).
 */
export const name = '0033-sms-compliance-enforce-default';

/** SQLite's down rebuilds sms_campaigns, which others reference (ON DELETE CASCADE): foreign key enforcement off, or the rebuild would delete their rows (src/db/migration-transaction.ts). */
export const sqliteForeignKeys = 'off';

export async function up({ context: queryInterface, logger }: { context: QueryInterface; logger?: Logger }): Promise<void> {
  const { sequelize } = queryInterface;
  const now = new Date();
  const [before] = await sequelize.query<{ total: number | string }>('SELECT COUNT(*) AS total FROM sms_compliance', { type: QueryTypes.SELECT });
  await sequelize.query(
    `INSERT INTO sms_compliance (entity_id, mode, window_starts_on, window_ends_on, updated_by, updated_at)
     SELECT e.id, 'warn', NULL, NULL, NULL, :now FROM entities e
     WHERE NOT EXISTS (SELECT 1 FROM sms_compliance s WHERE s.entity_id = e.id)`,
    { replacements: { now } },
  );
  const [after] = await sequelize.query<{ total: number | string }>('SELECT COUNT(*) AS total FROM sms_compliance', { type: QueryTypes.SELECT });
  const written = Number(after?.total ?? 0) - Number(before?.total ?? 0);
  logger?.info(
    { migration: name, entities_kept_in_warn: written },
    `SMS compliance: ${written} existing ${written === 1 ? 'entity keeps' : 'entities keep'} mode warn (an explicit row); entities created from now on start in enforce`,
  );
  await queryInterface.addColumn('sms_campaigns', 'non_electoral_declaration', { type: DataTypes.TEXT, allowNull: true });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeColumn('sms_campaigns', 'non_electoral_declaration');
  await queryInterface.sequelize.query("DELETE FROM sms_compliance WHERE mode = 'warn' AND updated_by IS NULL AND window_starts_on IS NULL");
}
