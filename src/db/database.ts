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

export type Dialect = 'sqlite' | 'postgres';

export function dialectOf(databaseUrl: string): Dialect {
  return databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres';
}

export async function openDatabase(databaseUrl: string, logger: Logger): Promise<Sequelize> {
  const logging = (sql: string) => logger.trace({ sql }, 'sql');
  const sequelize =
    dialectOf(databaseUrl) === 'sqlite'
      ? new Sequelize({ dialect: 'sqlite', storage: sqliteStorage(databaseUrl), logging })
      : new Sequelize(databaseUrl, { dialect: 'postgres', logging, pool: { max: 10, idle: 10_000 } });
  if (dialectOf(databaseUrl) === 'sqlite') serialiseTransactions(sequelize);
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
}

/** Every Sequelize SQLite connection waits SQLITE_BUSY_TIMEOUT_MS for a lock (node-sqlite3 gives one second). */
function waitForLocks(sequelize: Sequelize): void {
  type Connection = { configure(option: 'busyTimeout', milliseconds: number): void };
  const manager = sequelize.connectionManager as unknown as { getConnection(options?: unknown): Promise<Connection> };
  const open = manager.getConnection.bind(manager);
  const configured = new WeakSet<Connection>();
  manager.getConnection = async (options) => {
    const connection = await open(options);
    if (!configured.has(connection)) {
      connection.configure('busyTimeout', SQLITE_BUSY_TIMEOUT_MS);
      configured.add(connection);
    }
    return connection;
  };
}

/** Connection-pool figures for the metrics (PostgreSQL; SQLite has no pool: a connection per transaction). */
export function poolStatsOf(sequelize: Sequelize): PoolStats | undefined {
  const pool = (sequelize.connectionManager as unknown as { pool?: Partial<PoolStats> }).pool;
  if (sequelize.getDialect() === 'sqlite' || !pool) return undefined;
  return { size: pool.size ?? 0, available: pool.available ?? 0, using: pool.using ?? 0, waiting: pool.waiting ?? 0 };
}
