/**
 * Each migration is applied whole or not at all: it runs in one transaction, and its row in the
 * `migrations` table is written (or, going down, deleted) in that same transaction. PostgreSQL and
 * SQLite both roll DDL back, so a migration that fails halfway (a statement refused, the process killed)
 * leaves the schema and the `migrations` table exactly as the previous migration left them, and the run
 * after the cause is fixed starts it again from its first statement. A migration whose row is already
 * there when its transaction begins (another process applied it meanwhile) is skipped.
 *
 * The transaction cannot be forgotten: the query interface a migration receives (`context`, and its
 * `sequelize`) runs every statement in it, including the statements Sequelize issues for one call (a
 * SQLite column removal rebuilds the table in several); a transaction the migration begins itself is a
 * savepoint inside it. test/migrations-transactional.test.ts fails if any statement of any migration
 * runs outside its migration's transaction.
 *
 * SQLite ignores `PRAGMA foreign_keys` inside a transaction, and rebuilding a table that others reference
 * (dropping the old one) would run their ON DELETE actions even with `defer_foreign_keys`. A migration
 * that rebuilds such a table exports `sqliteForeignKeys = 'off'`: its transaction's connection has
 * enforcement turned off before BEGIN (database.ts), and before COMMIT `PRAGMA foreign_key_check` must
 * find no violation that was not there before, or the migration is rolled back. Rows such a migration
 * deletes lose no dependants by cascade: it deletes those itself.
 */
import { DataTypes, QueryTypes, type QueryInterface, type Sequelize, type Transaction } from 'sequelize';
import type { Logger } from '../logger.js';
import { withoutSqliteForeignKeys } from './database.js';

/** What a migration's `up` and `down` receive. */
export interface MigrationParams {
  /** Every statement through it (and its `sequelize`) runs in the migration's transaction. */
  context: QueryInterface;
  /** The migration's transaction, for code that needs it by name. */
  transaction: Transaction;
  logger?: Logger;
}

/** A module of src/db/migrations/. */
export interface MigrationModule {
  name: string;
  up(params: MigrationParams): Promise<void>;
  down?(params: MigrationParams): Promise<void>;
  /** SQLite: run with foreign key enforcement off (see the opening comment). PostgreSQL ignores it. */
  sqliteForeignKeys?: 'off';
}

/** How many times a migration that needs SQLite's foreign keys off is tried (see runMigration). */
const FOREIGN_KEYS_OFF_ATTEMPTS = 5;

/** The table umzug's SequelizeStorage created (its name stays, so applied migrations stay applied). */
export const MIGRATIONS_TABLE = 'migrations';

/** Applies (`up`) or reverts (`down`) one migration in one transaction, with its row. */
export async function runMigration(sequelize: Sequelize, migration: MigrationModule, direction: 'up' | 'down', logger?: Logger): Promise<void> {
  const step = migration[direction];
  if (!step) throw new Error(`Migration ${migration.name} has no ${direction} step`);
  const sqlite = sequelize.getDialect() === 'sqlite';
  const foreignKeysOff = sqlite && migration.sqliteForeignKeys === 'off';
  const work = async (transaction: Transaction) => {
    const { queryInterface } = boundToTransaction(sequelize, transaction);
    await ensureMigrationsTable(queryInterface);
    const recorded = await isRecorded(queryInterface, migration.name);
    if (recorded === (direction === 'down' ? false : true)) {
      logger?.info({ migration: migration.name, direction }, `migration ${migration.name} already ${direction === 'up' ? 'applied' : 'reverted'} by another process: skipped`);
      return;
    }
    const before = foreignKeysOff ? await foreignKeyViolations(queryInterface) : undefined;
    await step({ context: queryInterface, transaction, logger });
    if (before) {
      const introduced = (await foreignKeyViolations(queryInterface)).filter((violation) => !before.includes(violation));
      if (introduced.length > 0) {
        throw new Error(`Migration ${migration.name} (${direction}) would leave rows whose foreign keys point nowhere (${introduced.slice(0, 5).join('; ')}); rolled back`);
      }
    }
    if (direction === 'up') await queryInterface.bulkInsert(MIGRATIONS_TABLE, [{ name: migration.name, applied_at: new Date() }]);
    else await queryInterface.bulkDelete(MIGRATIONS_TABLE, { name: migration.name });
  };
  if (!foreignKeysOff) return void (await sequelize.transaction(work));
  // Turning enforcement off races a statement Sequelize does not wait for (database.ts,
  // turnForeignKeysOff); on a loaded machine it lost now and then. Nothing is changed when it does (the
  // check comes before the migration's first statement), so the migration is simply tried again.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return void (await withoutSqliteForeignKeys(() => sequelize.transaction(work)));
    } catch (error) {
      if (!(error instanceof ForeignKeysStillOn) || attempt >= FOREIGN_KEYS_OFF_ATTEMPTS) throw error;
      logger?.warn({ migration: migration.name, attempt }, 'SQLite foreign key enforcement was still on: the migration is tried again');
    }
  }
}

/**
 * A view of `sequelize` and its query interface whose every statement runs in `transaction` (unless the
 * call names another), and whose `transaction()` begins a savepoint inside it.
 */
export function boundToTransaction(sequelize: Sequelize, transaction: Transaction): { sequelize: Sequelize; queryInterface: QueryInterface } {
  type Query = (sql: unknown, options?: { transaction?: Transaction | null }) => Promise<unknown>;
  type Begin = (options?: object, work?: (transaction: Transaction) => Promise<unknown>) => Promise<unknown>;
  let queryInterface: QueryInterface | undefined;
  const bound = new Proxy(sequelize, {
    get(target, property) {
      if (property === 'query') {
        return (sql: unknown, options?: { transaction?: Transaction | null }) =>
          (Reflect.get(target, 'query') as Query).call(target, sql, { ...options, transaction: options?.transaction ?? transaction });
      }
      if (property === 'transaction') {
        return (optionsOrWork?: object | ((transaction: Transaction) => Promise<unknown>), maybeWork?: (transaction: Transaction) => Promise<unknown>) => {
          const [options, work] = typeof optionsOrWork === 'function' ? [{}, optionsOrWork as (transaction: Transaction) => Promise<unknown>] : [optionsOrWork ?? {}, maybeWork];
          return (Reflect.get(target, 'transaction') as Begin).call(target, { transaction, ...options }, work);
        };
      }
      if (property === 'getQueryInterface') return () => queryInterface;
      if (property === 'queryInterface') return queryInterface;
      return Reflect.get(target, property);
    },
  });
  // The dialect's query interface, its `sequelize` (through which each of its methods runs its statements) bound.
  queryInterface = Object.create(sequelize.getQueryInterface(), { sequelize: { value: bound } }) as QueryInterface;
  return { sequelize: bound, queryInterface };
}

/** The `migrations` table as umzug's SequelizeStorage made it, with when each was applied (null before issue 43). */
async function ensureMigrationsTable(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.createTable(MIGRATIONS_TABLE, {
    name: { type: DataTypes.STRING, allowNull: false, primaryKey: true },
    applied_at: { type: DataTypes.DATE, allowNull: true },
  });
  const columns = await queryInterface.describeTable(MIGRATIONS_TABLE);
  if (!('applied_at' in columns)) await queryInterface.addColumn(MIGRATIONS_TABLE, 'applied_at', { type: DataTypes.DATE, allowNull: true });
}

async function isRecorded(queryInterface: QueryInterface, name: string): Promise<boolean> {
  const rows = await queryInterface.sequelize.query(`SELECT name FROM ${MIGRATIONS_TABLE} WHERE name = :name`, { replacements: { name }, type: QueryTypes.SELECT });
  return rows.length > 0;
}

class ForeignKeysStillOn extends Error {
  constructor() {
    super('SQLite foreign key enforcement could not be turned off for this migration; nothing was changed, run it again');
    this.name = 'ForeignKeysStillOn';
  }
}

/** SQLite's foreign key violations, each as one comparable line; and a check that enforcement is really off. */
async function foreignKeyViolations(queryInterface: QueryInterface): Promise<string[]> {
  const { sequelize } = queryInterface;
  const [state] = await sequelize.query<{ foreign_keys: number }>('PRAGMA foreign_keys', { type: QueryTypes.SELECT });
  if (Number(state?.foreign_keys) !== 0) throw new ForeignKeysStillOn();
  const rows = await sequelize.query<{ table: string; rowid: number | null; parent: string; fkid: number }>('PRAGMA foreign_key_check', { type: QueryTypes.SELECT });
  return rows.map((row) => `${row.table} row ${row.rowid ?? '?'} -> ${row.parent} (#${row.fkid})`);
}

export interface AppliedMigration {
  name: string;
  /** When it was applied, where the `migrations` table says (migrations applied before issue 43: null). */
  appliedAt: string | null;
}

/** The rows of the `migrations` table, read only: nothing is created when it does not exist yet. */
export async function appliedMigrations(sequelize: Sequelize): Promise<AppliedMigration[]> {
  const queryInterface = sequelize.getQueryInterface();
  if (!(await queryInterface.tableExists(MIGRATIONS_TABLE))) return [];
  const columns = await queryInterface.describeTable(MIGRATIONS_TABLE);
  const rows = await sequelize.query<{ name: string; applied_at?: Date | string | null }>(
    `SELECT name${'applied_at' in columns ? ', applied_at' : ''} FROM ${MIGRATIONS_TABLE}`,
    { type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({ name: row.name, appliedAt: timestamp(row.applied_at) }));
}

function timestamp(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? String(value) : date.toISOString();
}
