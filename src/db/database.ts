/**
 * The database, chosen by DATABASE_URL: `sqlite:<file>` (the embedded default, no set-up; the folder is
 * created) or `sqlite::memory:`, and `postgres://...` in production.
 */
import { mkdirSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { Sequelize } from 'sequelize';
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
  await sequelize.authenticate();
  if (dialectOf(databaseUrl) === 'sqlite') {
    // WAL lets readers work while a writer (an import) runs; the timeout waits out a brief lock.
    await sequelize.query('PRAGMA journal_mode = WAL');
    await sequelize.query('PRAGMA busy_timeout = 5000');
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

/** Connection-pool figures for the metrics (PostgreSQL; SQLite keeps one connection and no pool). */
export function poolStatsOf(sequelize: Sequelize): PoolStats | undefined {
  const pool = (sequelize.connectionManager as unknown as { pool?: Partial<PoolStats> }).pool;
  if (sequelize.getDialect() === 'sqlite' || !pool) return undefined;
  return { size: pool.size ?? 0, available: pool.available ?? 0, using: pool.using ?? 0, waiting: pool.waiting ?? 0 };
}
