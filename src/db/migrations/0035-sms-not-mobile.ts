import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Numbers that cannot receive an SMS (issue 42, section 4; packages/rules/src/phones.ts isBrazilianMobile):
 * a campaign keeps how many of its numbers it skipped because they are not Brazilian mobiles
 * (landlines, toll-free, foreign numbers) and the first few of them, masked (a JSON array of
 * `+55******1234`: masked when stored, so erasing a contact never has to look for them). Campaigns
 * created before it skipped none: 0 and no examples.
 */
export const name = '0035-sms-not-mobile';

/** SQLite's down rebuilds sms_campaigns, which others reference (ON DELETE CASCADE): foreign key enforcement off, or the rebuild would delete their rows (src/db/migration-transaction.ts). */
export const sqliteForeignKeys = 'off';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.addColumn('sms_campaigns', 'not_mobile_skipped', { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 });
  await queryInterface.addColumn('sms_campaigns', 'not_mobile_examples', { type: DataTypes.TEXT, allowNull: true });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeColumn('sms_campaigns', 'not_mobile_examples');
  await queryInterface.removeColumn('sms_campaigns', 'not_mobile_skipped');
}
