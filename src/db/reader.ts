/**
 * Reads that go around Sequelize's model layer: the reads a front end makes all day (issue 20).
 *
 * A query through Sequelize costs more main-thread time than SQLite takes to answer it (it builds the
 * SQL, makes an Error for the stack, runs lodash over the options and the rows), and on SQLite every
 * query waits its turn on the one connection Sequelize keeps, behind every other read and write. A
 * `Reader` runs one plain SELECT with positional `?` parameters and returns plain rows:
 * - SQLite on a file: a few read-only connections of its own (WAL lets them read while Sequelize's
 *   connection writes), each query on the least busy one. A read sees what was committed before it
 *   started, as Sequelize's own reads outside a transaction do.
 * - SQLite in memory (tests): Sequelize's one connection, since another would open another database.
 * - PostgreSQL: a client of Sequelize's pool, with the statement prepared once per connection.
 *
 * Rows come as each driver gives them: on SQLite, timestamps are text and booleans 0 or 1; on
 * PostgreSQL, timestamps are Dates, counts (bigint) and decimals are text and JSON is parsed. `asDate`,
 * `asBoolean`, `asNumber` and `asJson` read either. A read inside a transaction must use Sequelize with
 * that transaction, not a Reader.
 *
 * SQL given to a Reader is fixed text (each distinct text is prepared once per PostgreSQL connection):
 * values go in parameters, never in the text, and a list of ids is a join or a subquery, not `IN (?, ?…)`
 * of a varying length. A `?` inside a string literal would be taken for a parameter.
 */
import { createHash } from 'node:crypto';
import type { Sequelize } from 'sequelize';

export interface Reader {
  /** The rows of one SELECT; `?` marks each parameter, `values` gives them in order. */
  rows<Row extends object>(sql: string, values?: readonly unknown[]): Promise<Row[]>;
  /** The first row, if any. */
  row<Row extends object>(sql: string, values?: readonly unknown[]): Promise<Row | undefined>;
  close(): Promise<void>;
}

/** Read-only SQLite connections of a Reader: more than the cores only adds contention. */
const SQLITE_READ_CONNECTIONS = 2;

const readers = new WeakMap<Sequelize, Reader>();

/**
 * The Reader of a database, made at its first use and closed with it (`sequelize.close()` closes the
 * Reader's connections first, whoever calls it).
 */
export function readerOf(sequelize: Sequelize): Reader {
  let reader = readers.get(sequelize);
  if (reader) return reader;
  reader = sequelize.getDialect() === 'postgres' ? postgresReader(sequelize) : sqliteReader(sequelize);
  readers.set(sequelize, reader);
  const close = sequelize.close.bind(sequelize);
  const opened = reader;
  sequelize.close = async () => {
    await opened.close();
    return close();
  };
  return reader;
}

/** Refuses anything but a SELECT before it runs (on PostgreSQL the pool's clients could write). */
function withFirstRow(run: Reader['rows'], close: () => Promise<void>): Reader {
  const rows: Reader['rows'] = (sql, values) => (SELECT.test(sql) ? run(sql, values) : Promise.reject(new Error(`A Reader runs SELECTs only, not: ${sql.slice(0, 60)}`)));
  return { rows, row: async (sql, values) => (await rows(sql, values))[0] as never, close };
}

const SELECT = /^\s*(SELECT|WITH)\b/i;

// --- SQLite ----------------------------------------------------------------------------------------

/** What node-sqlite3's Database offers (Sequelize loads the module; its types are not a dependency of ours). */
interface SqliteDatabase {
  all(sql: string, values: readonly unknown[], callback: (error: Error | null, rows: object[]) => void): void;
  exec(sql: string, callback: (error: Error | null) => void): void;
  close(callback: (error: Error | null) => void): void;
}

interface SqliteModule {
  Database: new (file: string, mode: number, callback: (error: Error | null) => void) => SqliteDatabase;
  OPEN_READONLY: number;
}

interface ReadConnection {
  database: SqliteDatabase;
  /** Queries sent and not yet answered. */
  busy: number;
}

function sqliteReader(sequelize: Sequelize): Reader {
  const manager = sequelize.connectionManager as unknown as { lib: SqliteModule; getConnection(): Promise<SqliteDatabase> };
  const storage = (sequelize as unknown as { options: { storage?: string } }).options.storage ?? ':memory:';
  let connections: Promise<ReadConnection[]> | undefined;
  const open = (): Promise<ReadConnection[]> => {
    if (storage === ':memory:') return manager.getConnection().then((database) => [{ database, busy: 0 }]);
    return Promise.all(Array.from({ length: SQLITE_READ_CONNECTIONS }, () => openReadOnly(manager.lib, storage)));
  };

  const rows = async <Row extends object>(sql: string, values: readonly unknown[] = []): Promise<Row[]> => {
    const pool = await (connections ??= open());
    const connection = pool.reduce((least, candidate) => (candidate.busy < least.busy ? candidate : least));
    connection.busy += 1;
    try {
      return await new Promise<Row[]>((resolve, reject) =>
        connection.database.all(sql, values.map(sqliteValue), (error, found) => (error ? reject(error) : resolve(found as Row[]))),
      );
    } finally {
      connection.busy -= 1;
    }
  };

  const close = async () => {
    const pool = connections;
    connections = undefined;
    if (!pool || storage === ':memory:') return; // the in-memory connection is Sequelize's to close
    for (const { database } of await pool) await new Promise<void>((resolve) => database.close(() => resolve()));
  };
  return withFirstRow(rows, close);
}

async function openReadOnly(sqlite: SqliteModule, file: string): Promise<ReadConnection> {
  const database = await new Promise<SqliteDatabase>((resolve, reject) => {
    const opened = new sqlite.Database(file, sqlite.OPEN_READONLY, (error) => (error ? reject(error) : resolve(opened)));
  });
  // A read waits out a writer's brief lock (a checkpoint), as Sequelize's connection does.
  await new Promise<void>((resolve, reject) => database.exec('PRAGMA busy_timeout = 5000', (error) => (error ? reject(error) : resolve())));
  return { database, busy: 0 };
}

/** Parameters as Sequelize writes them on SQLite: dates as its text form, so comparisons with stored values hold. */
function sqliteValue(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString().replace('T', ' ').replace('Z', ' +00:00');
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

// --- PostgreSQL ------------------------------------------------------------------------------------

interface PostgresClient {
  query(config: { name: string; text: string; values: readonly unknown[] }): Promise<{ rows: object[] }>;
}

function postgresReader(sequelize: Sequelize): Reader {
  const manager = sequelize.connectionManager as unknown as {
    getConnection(options: { type: 'read' }): Promise<PostgresClient>;
    releaseConnection(client: PostgresClient): Promise<void>;
  };
  /** `?` → `$1`, `$2`, ... and a statement name, once per SQL text. */
  const statements = new Map<string, { name: string; text: string }>();
  const statementOf = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      let index = 0;
      statement = { name: `reader_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`, text: sql.replace(/\?/g, () => `$${(index += 1)}`) };
      statements.set(sql, statement);
    }
    return statement;
  };

  const rows = async <Row extends object>(sql: string, values: readonly unknown[] = []): Promise<Row[]> => {
    const client = await manager.getConnection({ type: 'read' });
    try {
      return (await client.query({ ...statementOf(sql), values })).rows as Row[];
    } finally {
      await manager.releaseConnection(client);
    }
  };
  return withFirstRow(rows, async () => undefined);
}

// --- Values as either driver gives them ------------------------------------------------------------

/** A timestamp column: a Date (PostgreSQL) or Sequelize's text form (SQLite). */
export function asDate(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}

/** Sequelize's text form of a UTC timestamp on SQLite: `2026-11-26 06:04:48.502 +00:00`. */
const SQLITE_UTC_TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \+00:00$/;

/**
 * A timestamp column as the contract writes it (ISO 8601, UTC). Sequelize's SQLite text is rewritten
 * without parsing a Date: a list of 30 entities or a year of snapshots has many, and each parse showed
 * in a CPU profile.
 */
export function asIsoTimestamp(value: unknown): string {
  if (typeof value === 'string' && SQLITE_UTC_TIMESTAMP.test(value)) return `${value.slice(0, 10)}T${value.slice(11, 23)}Z`;
  return asDate(value).toISOString();
}

/** A boolean column: true/false (PostgreSQL) or 1/0 (SQLite). */
export function asBoolean(value: unknown): boolean {
  return value === true || value === 1 || value === '1';
}

/** A number that PostgreSQL may give as text (bigint, numeric). */
export function asNumber(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

/** A JSON column: parsed already (PostgreSQL) or its text (SQLite); null stays null. */
export function asJson<T>(value: unknown): T | null {
  if (value === null || value === undefined) return null;
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}
