/**
 * A copy of a whole SQLite database kept in memory, and put back in one transaction: the sandbox takes
 * one right after seeding and restores it on reset. Every table is copied as stored (ids, hashes, sealed
 * secrets, timestamps as text), `sqlite_sequence` included, so ids given after a reset are the same as
 * after the start. The sandbox's data is small (the municipalities are most of it), so a restore takes
 * a few tens of milliseconds.
 */
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

type Row = Record<string, unknown>;

interface TableCopy {
  name: string;
  columns: string[];
  rows: unknown[][];
}

/**
 * Parameters of one INSERT. Sequelize rewrites a statement's bind parameters in time that grows faster
 * than their number: measured on the sandbox's 5,700 rows, 30,000 per statement took 3.5 s, 2,000 took
 * 0.5 s, 300 took 0.17 s and 100 took 0.25 s (more statements).
 */
const MAX_PARAMETERS = 300;

export class DatabaseSnapshot {
  private constructor(private readonly tables: TableCopy[]) {}

  /** Reads every table. SQLite only: the sandbox's database. */
  static async take(sequelize: Sequelize): Promise<DatabaseSnapshot> {
    if (sequelize.getDialect() !== 'sqlite') throw new Error('A database snapshot is taken of SQLite only (the sandbox).');
    const names = await sequelize.query<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND (name NOT LIKE 'sqlite\\_%' ESCAPE '\\' OR name = 'sqlite_sequence') ORDER BY name",
      { type: QueryTypes.SELECT },
    );
    const tables: TableCopy[] = [];
    for (const { name } of names) {
      const columns = (await sequelize.query<{ name: string }>(`SELECT name FROM pragma_table_info(${sequelize.escape(name)})`, { type: QueryTypes.SELECT })).map(
        (column) => column.name,
      );
      const rows = await sequelize.query<Row>(`SELECT * FROM ${quoted(name)}`, { type: QueryTypes.SELECT, raw: true });
      tables.push({ name, columns, rows: rows.map((row) => columns.map((column) => row[column])) });
    }
    return new DatabaseSnapshot(tables);
  }

  /** Rows in the snapshot, all tables together. */
  get rowCount(): number {
    return this.tables.reduce((sum, table) => sum + table.rows.length, 0);
  }

  /** Empties every table and writes the snapshot's rows back, in one transaction. Tables created since are left alone. */
  async restore(sequelize: Sequelize): Promise<void> {
    await sequelize.transaction(async (transaction) => {
      // Foreign keys are checked at the commit, once every table is back, rather than row by row.
      await sequelize.query('PRAGMA defer_foreign_keys = ON', { transaction });
      for (const table of this.tables) await sequelize.query(`DELETE FROM ${quoted(table.name)}`, { transaction });
      for (const table of this.tables) await insertRows(sequelize, table, transaction);
    });
  }
}

async function insertRows(sequelize: Sequelize, table: TableCopy, transaction: Transaction): Promise<void> {
  if (table.rows.length === 0) return;
  const rowsPerStatement = Math.max(1, Math.floor(MAX_PARAMETERS / table.columns.length));
  const columnList = table.columns.map(quoted).join(', ');
  for (let start = 0; start < table.rows.length; start += rowsPerStatement) {
    const rows = table.rows.slice(start, start + rowsPerStatement);
    let parameter = 0;
    const values = rows.map(() => `(${table.columns.map(() => `$${(parameter += 1)}`).join(', ')})`).join(', ');
    await sequelize.query(`INSERT INTO ${quoted(table.name)} (${columnList}) VALUES ${values}`, { bind: rows.flat(), transaction });
  }
}

function quoted(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}
