import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Synthetic content in SMS campaigns (issue 42; packages/rules/src/synthetic-content.ts): the declaration a campaign
 * was sent with, that it links or attaches content made or altered by artificial intelligence and with
 * which technology (Res. TSE 23.610/2019 art. 9-B), kept with the campaign for its report. JSON text
 * `{"technology": "..."}`; null for every campaign before it and for one that declared nothing.
 */
export const name = '0038-sms-synthetic-content';

/** SQLite's down rebuilds sms_campaigns, which others reference (ON DELETE CASCADE): foreign key enforcement off, or the rebuild would delete their rows (src/db/migration-transaction.ts). */
export const sqliteForeignKeys = 'off';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.addColumn('sms_campaigns', 'synthetic_content', { type: DataTypes.TEXT, allowNull: true });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeColumn('sms_campaigns', 'synthetic_content');
}
