import { DataTypes, type QueryInterface } from 'sequelize';
import { SEEDED_CALENDAR } from '@palanque/rules/election-calendar';

/**
 * The election calendar (issue 42; src/elections/calendar.ts): one line per election (a supplementary
 * one names its state and municipality), with its registration deadline, propaganda start, voting days
 * and certification (diplomação), each with its legal source (`sources`, JSON by field). Seeded with the
 * 2024 municipal, 2026 general and 2028 municipal elections (packages/rules/src/election-calendar.ts SEEDED_CALENDAR);
 * platform admins change it afterwards (audited). Dates are Brasília days.
 */
export const name = '0032-election-calendar';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('election_calendar', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    title: { type: DataTypes.STRING(200), allowNull: false },
    year: { type: DataTypes.INTEGER, allowNull: false },
    // 'municipal' or 'general' (federal and state offices).
    scope: { type: DataTypes.STRING(10), allowNull: false },
    supplementary: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    uf: { type: DataTypes.STRING(2), allowNull: true },
    municipality_ibge: { type: DataTypes.INTEGER, allowNull: true },
    registration_deadline: { type: DataTypes.DATEONLY, allowNull: false },
    propaganda_starts_on: { type: DataTypes.DATEONLY, allowNull: false },
    first_round_on: { type: DataTypes.DATEONLY, allowNull: false },
    second_round_on: { type: DataTypes.DATEONLY, allowNull: true },
    certification_on: { type: DataTypes.DATEONLY, allowNull: false },
    // JSON text: the legal source of each date, by field.
    sources: { type: DataTypes.TEXT, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
    updated_by: { type: DataTypes.INTEGER, allowNull: true },
  });
  await queryInterface.addIndex('election_calendar', ['first_round_on'], { name: 'election_calendar_first_round' });
  const now = new Date();
  await queryInterface.bulkInsert(
    'election_calendar',
    SEEDED_CALENDAR.map(({ sources, ...line }) => ({ ...line, sources: JSON.stringify(sources), updated_at: now, updated_by: null })),
  );
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.dropTable('election_calendar');
}
