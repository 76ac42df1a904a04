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
 * - PostgreSQL: a few connections of its own through postgres.js, each read a read-only transaction
 *   sent in one round trip, its statement prepared per connection unless DATABASE_PREPARED_STATEMENTS
 *   is false (see `postgresReader`).
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
import { availableParallelism } from 'node:os';
import postgres from 'postgres';
import type { Sequelize } from 'sequelize';

export interface Reader {
  /** The rows of one SELECT; `?` marks each parameter, `values` gives them in order. */
  rows<Row extends object>(sql: string, values?: readonly unknown[]): Promise<Row[]>;
  /** The first row, if any. */
  row<Row extends object>(sql: string, values?: readonly unknown[]): Promise<Row | undefined>;
  /**
   * The rows of `SELECT <columns> <rest>`, for a page of many rows of many columns. Each column is
   * `expression AS name` or `table.name`, and the rows have those names. On SQLite each row comes as
   * one JSON text that SQLite writes (an array, see `jsonArrayOf`): node-sqlite3 makes every value of
   * every row a JavaScript value on the main thread, about 0.7 µs each, and the campaign list's 30 rows of 26 columns took 0.6 ms
   * that way against 0.3 ms as JSON (half of what the request cost). Values read as `rows` gives them
   * (numbers, text, null); no BLOBs. PostgreSQL's driver reads rows fast: the query runs as written.
   */
  wideRows<Row extends object>(columns: readonly string[], rest: string, values?: readonly unknown[]): Promise<Row[]>;
  close(): Promise<void>;
  /** Its connections at most, and the reads under way on them (for the metrics). */
  stats?(): { connections: number; inFlight: number };
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

/** Refuses anything but a SELECT before it runs (the connections below refuse writes too). */
function withFirstRow(run: Reader['rows'], close: () => Promise<void>, rowsAsJson: boolean, connections: number): Reader {
  let inFlight = 0;
  const done = () => void (inFlight -= 1);
  const counted: Reader['rows'] = <Row extends object>(sql: string, values?: readonly unknown[]) => {
    inFlight += 1;
    const read = run<Row>(sql, values);
    read.then(done, done);
    return read;
  };
  const rows: Reader['rows'] = (sql, values) => (SELECT.test(sql) ? counted(sql, values) : Promise.reject(new Error(`A Reader runs SELECTs only, not: ${sql.slice(0, 60)}`)));
  const wideRows: Reader['wideRows'] = async (columns, rest, values) => {
    const { select, rowOf } = jsonArrayOf(columns); // checks the names on either database
    if (!rowsAsJson) return rows(`SELECT ${columns.join(', ')} ${rest}`, values);
    const found = await rows<{ row: string }>(`${select} ${rest}`, values);
    return found.map(({ row }) => rowOf(JSON.parse(row) as unknown[])) as never;
  };
  return { rows, row: async (sql, values) => (await rows(sql, values))[0] as never, wideRows, close, stats: () => ({ connections, inFlight }) };
}

/** How `wideRows` reads a list of columns on SQLite: made once per list (the lists are constants). */
interface JsonArrayRead {
  /** `SELECT json_array(expression, ...) AS row`. */
  select: string;
  /** The row, named, from the array's values. */
  rowOf: (values: unknown[]) => object;
}

const jsonArrayReads = new Map<string, JsonArrayRead>();

/**
 * Each row as a JSON array rather than an object: parsing 30 rows of the conversation list took 50 µs as
 * objects (every row repeats its 33 names) against 17 µs as arrays. The names are then given by a
 * function made for the list, `(values) => ({ id: values[0], ... })`: an object literal of one shape,
 * where setting the names one by one in a loop took longer than parsing the objects.
 */
function jsonArrayOf(columns: readonly string[]): JsonArrayRead {
  const key = columns.join('\n');
  let read = jsonArrayReads.get(key);
  if (!read) {
    const members = columns.map(memberOf);
    // The names are identifiers (memberOf checks), so the function's text is only names and indexes.
    const rowOf = new Function('values', `return { ${members.map(({ name }, index) => `${name}: values[${index}]`).join(', ')} };`) as JsonArrayRead['rowOf'];
    read = { select: `SELECT json_array(${members.map(({ expression }) => expression).join(', ')}) AS row`, rowOf };
    jsonArrayReads.set(key, read);
  }
  return read;
}

/** The expression and the name of `expression AS name` or `table.name`. */
function memberOf(column: string): { expression: string; name: string } {
  const [, expression, alias] = /^\s*(.+?)(?:\s+AS\s+(\w+))?\s*$/is.exec(column) ?? [];
  const name = alias ?? /(\w+)$/.exec(expression ?? '')?.[1];
  // A name becomes a property of an object literal: `__proto__` there would set the row's prototype.
  if (!expression || !name || !/^[A-Za-z_]\w*$/.test(name) || name === '__proto__') throw new Error(`Not a column a Reader can name: ${column}`);
  return { expression, name };
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
  return withFirstRow(rows, close, true, storage === ':memory:' ? 1 : SQLITE_READ_CONNECTIONS);
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

/** What a Reader needs of Sequelize's parsed DATABASE_URL (`sequelize.config`). */
interface PostgresConfig {
  host?: string;
  port?: number | string;
  username?: string;
  password?: string | null;
  database?: string;
  dialectOptions?: { ssl?: unknown };
}

/** How a database's Reader connects to PostgreSQL: `openDatabase` sets it from the configuration (`readerSettings`). */
export interface PostgresReaderSettings {
  /** DB_READ_POOL_MAX: the Reader's connections (two per core by default). */
  connections?: number;
  /**
   * DATABASE_PREPARED_STATEMENTS: each SQL text prepared once per connection (named statements, the
   * default) or sent unnamed each time. A transaction pooler (PgBouncer before 1.21, or without
   * max_prepared_statements) hands each transaction any server connection, where a name prepared on
   * another does not exist (`prepared statement "…" does not exist`).
   */
  preparedStatements?: boolean;
  /** DB_STATEMENT_TIMEOUT_MS: each read is cancelled past it (0 or unset: no bound). */
  statementTimeoutMs?: number;
}

const readerSettings = new WeakMap<Sequelize, PostgresReaderSettings>();

/** The settings of the Reader of `sequelize`, given before its first read (`openDatabase` does). */
export function configureReader(sequelize: Sequelize, settings: PostgresReaderSettings): void {
  readerSettings.set(sequelize, settings);
}

/**
 * The Reader's own connections, through postgres.js, beside Sequelize's pool. postgres.js sends a query
 * on a busy connection without waiting for the one before it to finish (pipelining), where Sequelize's
 * pool of node-postgres clients lent a client for each read and took it back: in `bench:profile` A/Bs
 * on PostgreSQL (docs/benchmarks.md) the read without a key went from 2,860 to 3,880 a second and the
 * caller's account from 2,350 to 3,190. Two connections per core kept the server's few cores busiest:
 * ten (the pool's size) were slower for the entity list than four on two cores. They close after
 * IDLE_SECONDS unused, as the pool's do, and with the database (see `readerOf`).
 *
 * Reads run in read-only transactions, `BEGIN READ ONLY`, (`SET LOCAL statement_timeout`), the SELECTs,
 * `COMMIT`, sent together on one connection (one round trip): a write that got past `withFirstRow` is
 * refused, as on SQLite, and each statement is bounded as Sequelize's are (DB_STATEMENT_TIMEOUT_MS,
 * db/deadlines.ts). A connection is lent to one transaction at a time, so the reads that wait for one
 * share the next transaction (see `pump`). Fifty callers reading one row each in turn, on a loaded
 * two-core machine: about 5,000 reads a second pipelined outside transactions (this Reader before
 * issue 43), 1,200 with one transaction per read, 4,200 sharing. Unprepared (DATABASE_PREPARED_STATEMENTS
 * false), a read with parameters takes two round trips, its parameters' types asked first, and
 * PostgreSQL's statement timer runs from the first. Nothing is set for the session and no startup parameter
 * but `application_name` is sent, so the same connections work through a transaction pooler
 * (PgBouncer refuses `default_transaction_read_only` and `statement_timeout` as startup parameters, and
 * would hand a session setting to whichever client gets that server connection next).
 */
const DEFAULT_POSTGRES_READ_CONNECTIONS = 2 * availableParallelism();
const IDLE_SECONDS = 10;
export const READER_APPLICATION_NAME = 'palanque-reader';

/** Reads in one transaction at most: a read that fails sends those after it to another one. */
const READS_PER_TRANSACTION = 32;
/** PostgreSQL's code for a statement refused because an earlier one aborted its transaction. */
const IN_FAILED_TRANSACTION = '25P02';

interface PendingRead {
  text: string;
  values: readonly unknown[];
  resolve(rows: unknown[]): void;
  reject(error: unknown): void;
}

function postgresReader(sequelize: Sequelize): Reader {
  const config = (sequelize as unknown as { config: PostgresConfig }).config;
  const settings = readerSettings.get(sequelize) ?? {};
  const prepare = settings.preparedStatements ?? true;
  const timeoutMs = Math.floor(settings.statementTimeoutMs ?? 0);
  const maxConnections = settings.connections ?? DEFAULT_POSTGRES_READ_CONNECTIONS;
  const connections = postgres({
    host: config.host,
    port: config.port === undefined ? undefined : Number(config.port),
    user: config.username,
    password: config.password ?? undefined,
    database: config.database,
    ssl: sslOf(config.dialectOptions?.ssl),
    max: maxConnections,
    idle_timeout: IDLE_SECONDS,
    prepare,
    types: NODE_POSTGRES_TYPES,
    // A parameter left undefined is NULL, as node-postgres sent it (postgres.js would refuse the query).
    transform: { undefined: null },
    onnotice: () => undefined,
    // Named for pg_stat_activity (PgBouncer passes application_name on).
    connection: { application_name: READER_APPLICATION_NAME },
  });
  /** `?` → `$1`, `$2`, ..., once per SQL text. */
  const numbered = new Map<string, string>();
  const textOf = (sql: string) => {
    let text = numbered.get(sql);
    if (text === undefined) {
      let index = 0;
      text = sql.replace(/\?/g, () => `$${(index += 1)}`);
      numbered.set(sql, text);
    }
    return text;
  };

  // Reads wait here for a connection; each free connection takes those waiting (up to
  // READS_PER_TRANSACTION) into one transaction, so that reads still share a round trip under load as
  // they did pipelined on a connection outside transactions.
  const waiting: PendingRead[] = [];
  const workers = settings.connections ?? DEFAULT_POSTGRES_READ_CONNECTIONS;
  let working = 0;
  let pumping = false;
  const pump = () => {
    pumping = false;
    while (working < workers && waiting.length > 0) {
      const take = Math.min(READS_PER_TRANSACTION, Math.ceil(waiting.length / (workers - working)));
      working += 1;
      void inOneTransaction(waiting.splice(0, take)).finally(() => {
        working -= 1;
        pump();
      });
    }
  };
  /** One read-only transaction on one connection: BEGIN, the bound, the reads, COMMIT, sent together. */
  const inOneTransaction = async (reads: PendingRead[]) => {
    let connection: postgres.ReservedSql;
    try {
      connection = await connections.reserve();
    } catch (error) {
      for (const read of reads) read.reject(error);
      return;
    }
    try {
      // Sent in this order without waiting for each answer (postgres.js pipelines on a connection).
      const opening = [
        connection.unsafe('BEGIN READ ONLY').execute(),
        ...(timeoutMs > 0 ? [connection.unsafe(`SET LOCAL statement_timeout = ${timeoutMs}`).execute()] : []),
      ];
      const answers = reads.map((read) => connection.unsafe(read.text, read.values as postgres.ParameterOrJSON<never>[], { prepare }).execute());
      const commit = connection.unsafe('COMMIT').execute();
      const outcomes = await Promise.allSettled([...opening, ...answers, commit]);
      // A failed read aborts the transaction: the reads after it fail with 25P02 and wait again, for
      // another transaction (each round settles at least the read that failed). COMMIT then rolls back.
      let aborted = false;
      const again: PendingRead[] = [];
      reads.forEach((read, index) => {
        const outcome = outcomes[opening.length + index]!;
        if (outcome.status === 'fulfilled') read.resolve(outcome.value as unknown[]);
        else if (aborted && (outcome.reason as { code?: string }).code === IN_FAILED_TRANSACTION) again.push(read);
        else {
          aborted = true;
          read.reject(outcome.reason);
        }
      });
      waiting.unshift(...again);
    } finally {
      connection.release();
    }
  };

  const rows = <Row extends object>(sql: string, values: readonly unknown[] = []): Promise<Row[]> =>
    new Promise<Row[]>((resolve, reject) => {
      waiting.push({ text: textOf(sql), values, resolve: resolve as PendingRead['resolve'], reject });
      // The reads asked in one turn of the event loop are shared out together.
      if (!pumping) {
        pumping = true;
        queueMicrotask(pump);
      }
    });
  return withFirstRow(rows, () => connections.end({ timeout: 5 }), false, maxConnections);
}

/**
 * Values as node-postgres sent and read them for Sequelize, where postgres.js would differ. postgres.js
 * writes a parameter by the type the server describes for it, so a JSON parameter given as text (as
 * `entities/teams.ts` gives its list of ids) would be encoded once more as a JSON string, and a boolean
 * one given as anything but `true` would be false; node-postgres sent each value's text. It also reads a
 * DATE column (no time) as a Date, where Sequelize gives its text.
 */
const sentAsText = (value: unknown): string => (value instanceof Date ? value.toISOString() : typeof value === 'object' ? JSON.stringify(value) : String(value));
const NODE_POSTGRES_TYPES = {
  boolean: { to: 16, from: [16], serialize: sentAsText, parse: (text: string) => text === 't' },
  json: { to: 114, from: [114, 3802], serialize: sentAsText, parse: (text: string) => JSON.parse(text) as unknown },
  dateOnly: { to: 1082, from: [1082], serialize: sentAsText, parse: (text: string) => text },
  timestamp: { to: 1184, from: [1114, 1184], serialize: sentAsText, parse: (text: string) => new Date(text) },
};

/** Sequelize's `ssl` (DATABASE_URL's `?ssl=true`, or tls.connect options) as postgres.js takes it. */
function sslOf(ssl: unknown): boolean | object {
  if (ssl === 'true' || ssl === true) return true;
  return typeof ssl === 'object' && ssl !== null ? ssl : false;
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
