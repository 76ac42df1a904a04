/**
 * The database, chosen by DATABASE_URL: `sqlite:<file>` (the embedded default, no set-up; the folder is
 * created) or `sqlite::memory:`, and `postgres://...` in production.
 */
import { mkdirSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Sequelize, Transaction, type TransactionOptions } from 'sequelize';
import type { PoolStats } from '../http/metrics.js';
import type { Logger } from '../logger.js';
import { projectRoot } from '../project-root.js';
import { watchStatements } from './deadlines.js';
import { configureReader } from './reader.js';

export type Dialect = 'sqlite' | 'postgres';

export function dialectOf(databaseUrl: string): Dialect {
  return databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres';
}

export interface DatabaseOptions {
  /**
   * DB_STATEMENT_TIMEOUT_MS: a statement running longer is cancelled (PostgreSQL's statement_timeout,
   * SQLite's interrupt; see deadlines.ts). Unset or 0: no bound (the command-line tasks: imports, migrations).
   */
  statementTimeoutMs?: number;
  /** DB_POOL_MAX: Sequelize's pool of PostgreSQL connections (10 by default). */
  poolMax?: number;
  /** DB_READ_POOL_MAX: the Reader's PostgreSQL connections (two per core by default, reader.ts). */
  readPoolMax?: number;
  /** DATABASE_PREPARED_STATEMENTS: the Reader's named prepared statements (on by default, reader.ts). */
  preparedStatements?: boolean;
}

export async function openDatabase(databaseUrl: string, logger: Logger, options: DatabaseOptions = {}): Promise<Sequelize> {
  const logging = (sql: string) => logger.trace({ sql }, 'sql');
  const statementTimeoutMs = options.statementTimeoutMs ?? 0;
  const sequelize =
    dialectOf(databaseUrl) === 'sqlite'
      ? new Sequelize({ dialect: 'sqlite', storage: sqliteStorage(databaseUrl), logging })
      : new Sequelize(databaseUrl, {
          dialect: 'postgres',
          logging,
          pool: { max: options.poolMax ?? 10, idle: 10_000 },
          // No statement_timeout startup parameter (node-postgres's dialectOptions): a transaction pooler
          // such as PgBouncer refuses the connection for it. deadlines.ts bounds each statement instead.
        });
  if (dialectOf(databaseUrl) === 'sqlite') serialiseTransactions(sequelize);
  else configureReader(sequelize, { connections: options.readPoolMax, preparedStatements: options.preparedStatements, statementTimeoutMs });
  // Every statement is watched: the statement timeout, and the request deadlines (both in deadlines.ts).
  watchStatements(sequelize, statementTimeoutMs);
  await sequelize.authenticate();
  if (dialectOf(databaseUrl) === 'sqlite') {
    // WAL lets readers work while a writer (an import) runs.
    await sequelize.query('PRAGMA journal_mode = WAL');
    await sequelize.query('PRAGMA foreign_keys = ON');
  }
  return sequelize;
}

/** `sqlite:data/palanque.sqlite` (relative to the project), `sqlite:/abs/file`, `sqlite::memory:`. */
function sqliteStorage(databaseUrl: string): string {
  const location = databaseUrl.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
  if (location === ':memory:' || location === '') return ':memory:';
  const file = isAbsolute(location) ? location : resolve(projectRoot, location);
  mkdirSync(dirname(file), { recursive: true });
  return file;
}

/** How long a SQLite connection waits for another one's write lock before it fails (SQLITE_BUSY). */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;
/** How long a SQLite transaction waits for its turn (see serialiseTransactions) before it gives up. */
export const SQLITE_TRANSACTION_WAIT_MS = 30_000;

/** How long closing the database waits for the transactions queued before it (see closeAfterTransactions). */
export const SQLITE_CLOSE_WAIT_MS = 5000;

/** A SQLite transaction waited too long for the ones before it (the server is overloaded, or one is stuck); it did not run. */
export class DatabaseBusyError extends Error {
  constructor(waitedMs: number) {
    super(`The database was busy: a transaction waited ${waitedMs} ms for the ones before it to finish`);
    this.name = 'DatabaseBusyError';
  }
}

/**
 * Makes concurrent SQLite transactions wait their turn instead of failing.
 *
 * Sequelize opens a connection of its own for each transaction, and SQLite lets one connection write
 * at a time. Left to SQLite, a transaction that read and then writes fails at once, without waiting,
 * when another wrote since its read (SQLITE_BUSY_SNAPSHOT under WAL), and one that waits for the lock
 * waits in node-sqlite3's thread pool (four threads), where the transaction holding the lock needs a
 * thread to finish: two concurrent contact imports answered 500. So the transactions of this process
 * run one at a time, queued here, and begin IMMEDIATE (taking the write lock at once). A transaction
 * begun inside another one's callback is not queued (it would wait for the outer one, which waits for
 * it) and begins DEFERRED, as all did before. Every connection also waits up to
 * SQLITE_BUSY_TIMEOUT_MS for the lock (node-sqlite3's default is one second), for writes outside a
 * transaction and for another process (a CLI import) writing the same file.
 */
export function serialiseTransactions(sequelize: Sequelize, waitMs = SQLITE_TRANSACTION_WAIT_MS): void {
  waitForLocks(sequelize);
  const begin = sequelize.transaction.bind(sequelize) as (options: TransactionOptions, work?: (transaction: Transaction) => Promise<unknown>) => Promise<unknown>;
  const inside = new AsyncLocalStorage<{ open: boolean }>();
  let queue: Promise<unknown> = Promise.resolve();
  const transaction = (optionsOrWork?: TransactionOptions | ((transaction: Transaction) => Promise<unknown>), maybeWork?: (transaction: Transaction) => Promise<unknown>) => {
    const [options, work] = typeof optionsOrWork === 'function' ? [{}, optionsOrWork] : [optionsOrWork ?? {}, maybeWork];
    // An unmanaged transaction (committed by its caller) cannot be queued: its end is not known here.
    if (!work) return begin(options);
    if (inside.getStore()?.open) return begin({ type: Transaction.TYPES.DEFERRED, ...options }, work);
    const previous = queue;
    let abandoned = false;
    const run = previous.then(() => {
      if (abandoned) return undefined;
      const scope = { open: true };
      return inside.run(scope, () => begin({ type: Transaction.TYPES.IMMEDIATE, ...options }, work)).finally(() => {
        scope.open = false;
      });
    });
    queue = run.catch(() => undefined);
    return new Promise((resolve, reject) => {
      // Its turn comes, or the request gives up: never a request left hanging behind a stuck one.
      const timer = setTimeout(() => {
        abandoned = true;
        reject(new DatabaseBusyError(waitMs));
      }, waitMs);
      void previous.then(() => clearTimeout(timer));
      run.then(resolve, reject);
    });
  };
  sequelize.transaction = transaction as unknown as Sequelize['transaction'];
  closeAfterTransactions(sequelize, () => queue, SQLITE_CLOSE_WAIT_MS);
}

/**
 * `sequelize.close()` first lets the queued transactions end (for at most `waitMs`). Closing under one
 * made it fail, and Sequelize then closed its already closed connection without a callback: node-sqlite3
 * emitted that SQLITE_MISUSE as an 'error' event, which nothing listens to, and a graceful shutdown
 * ended with exit code 1 (seen on CI: SIGTERM with a transaction in flight). The shutdown's own deadline (SHUTDOWN_TIMEOUT_MS)
 * still bounds the whole.
 */
function closeAfterTransactions(sequelize: Sequelize, lastQueued: () => Promise<unknown>, waitMs: number): void {
  const close = sequelize.close.bind(sequelize);
  sequelize.close = async () => {
    const deadline = Date.now() + waitMs;
    // Until the queue stops growing: a transaction that ends may have queued another.
    let tail: Promise<unknown>;
    do {
      tail = lastQueued();
      await settledWithin(tail, deadline - Date.now());
    } while (tail !== lastQueued() && Date.now() < deadline);
    return close();
  };
}

/** Resolves when `promise` settles or `ms` have passed, whichever comes first. */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise.catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms))))]);
  clearTimeout(timer);
}

/** Every Sequelize SQLite connection waits SQLITE_BUSY_TIMEOUT_MS for a lock (node-sqlite3 gives one second). */
function waitForLocks(sequelize: Sequelize): void {
  type Connection = { configure(option: 'busyTimeout', milliseconds: number): void; on(event: 'error', listener: (error: Error) => void): void };
  const manager = sequelize.connectionManager as unknown as { getConnection(options?: unknown): Promise<Connection> };
  const open = manager.getConnection.bind(manager);
  const configured = new WeakSet<Connection>();
  manager.getConnection = async (options) => {
    const uuid = (options as { uuid?: string } | undefined)?.uuid;
    const connection = await open(options);
    const foreignKeysOff = withoutForeignKeys.getStore();
    // The first transaction begun in withoutSqliteForeignKeys's scope: its connection, before its BEGIN.
    if (foreignKeysOff && !foreignKeysOff.connection && uuid && uuid !== 'default') {
      foreignKeysOff.connection = connection as unknown as SqliteConnection;
      await turnForeignKeysOff(foreignKeysOff.connection);
    }
    if (!configured.has(connection)) {
      connection.configure('busyTimeout', SQLITE_BUSY_TIMEOUT_MS);
      // Sequelize runs a PRAGMA and closes a transaction's connection without a callback, so node-sqlite3
      // reports their failures as 'error' events: unheard, one would end the process. Each also fails
      // the transaction's next statement, which is where the caller hears of it.
      connection.on('error', () => undefined);
      configured.add(connection);
    }
    return connection;
  };
}

type SqliteConnection = {
  filename: string;
  get(sql: string, callback: (error: Error | null, row?: Record<string, unknown>) => void): void;
  run(sql: string, callback?: (error: Error | null) => void): void;
};

const withoutForeignKeys = new AsyncLocalStorage<{ connection?: SqliteConnection }>();

/**
 * Runs `work`, which begins one transaction, with SQLite's foreign key enforcement off on that
 * transaction's connection. `PRAGMA foreign_keys` is a no-op inside a transaction, so it is set on the
 * connection before its BEGIN (as SQLite's own procedure for rebuilding a table says: dropping the old
 * table would otherwise run its children's ON DELETE actions, and `defer_foreign_keys` does not stop
 * those). The caller checks the keys itself before committing (`PRAGMA foreign_key_check`), and reads
 * `PRAGMA foreign_keys` inside the transaction to know it holds. The shared connection of an in-memory
 * database gets its enforcement back afterwards; a file's transaction connection is closed with it.
 */
export async function withoutSqliteForeignKeys<T>(work: () => Promise<T>): Promise<T> {
  const scope: { connection?: SqliteConnection } = {};
  try {
    return await withoutForeignKeys.run(scope, work);
  } finally {
    if (scope.connection?.filename === ':memory:') await sqliteStatement(scope.connection, 'PRAGMA foreign_keys = ON');
  }
}

async function turnForeignKeysOff(connection: SqliteConnection): Promise<void> {
  // Sequelize turns enforcement on when it opens a connection, with a statement it does not wait for:
  // wait until that one has run, or it could run after ours. node-sqlite3's four threads may all be
  // waiting out other connections' locks (SQLITE_BUSY_TIMEOUT_MS each) on a loaded machine: one second
  // was not enough on a full test run, so this waits as long as a transaction may wait for its turn.
  for (let waited = 0; waited < SQLITE_TRANSACTION_WAIT_MS; waited += 10) {
    const row = await new Promise<Record<string, unknown> | undefined>((resolve, reject) => connection.get('PRAGMA foreign_keys', (error, found) => (error ? reject(error) : resolve(found))));
    if (Number(row?.foreign_keys) === 1) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await sqliteStatement(connection, 'PRAGMA foreign_keys = OFF');
}

function sqliteStatement(connection: SqliteConnection, sql: string): Promise<void> {
  return new Promise((resolve, reject) => connection.run(sql, (error) => (error ? reject(error) : resolve())));
}

/** Connection-pool figures for the metrics (PostgreSQL; SQLite has no pool: a connection per transaction). */
export function poolStatsOf(sequelize: Sequelize): PoolStats | undefined {
  const pool = (sequelize.connectionManager as unknown as { pool?: Partial<PoolStats> }).pool;
  if (sequelize.getDialect() === 'sqlite' || !pool) return undefined;
  return { size: pool.size ?? 0, available: pool.available ?? 0, using: pool.using ?? 0, waiting: pool.waiting ?? 0 };
}
