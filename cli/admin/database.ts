/**
 * The database tasks' common ground: the server's own configuration (the environment, or a `.env` file
 * in the current folder, exactly as `npm start` reads it), the database of DATABASE_URL (or
 * `--database-url`), and a logger on stderr that stays quiet unless `--verbose`.
 *
 * These modules are loaded only by the commands that need them, so API commands never load Sequelize.
 */
import 'dotenv/config';
import { pino } from 'pino';
import type { Sequelize } from 'sequelize';
import { ConfigError, loadConfig, type Config } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrator.js';
import { loggerOptions, type Logger } from '../../src/logger.js';
import { ReportedFailure } from '../errors.js';

export interface DatabaseOptions {
  databaseUrl?: string;
  verbose?: boolean;
}

export interface DatabaseTask {
  config: Config;
  sequelize: Sequelize;
  logger: Logger;
}

export async function withDatabase<T>(options: DatabaseOptions, work: (task: DatabaseTask) => Promise<T>): Promise<T> {
  let config: Config;
  try {
    config = loadConfig({ ...process.env, ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}) });
  } catch (error) {
    if (error instanceof ConfigError) throw new ReportedFailure(error.message);
    throw error;
  }
  const logger = pino(loggerOptions(options.verbose ? 'info' : 'warn'), pino.destination({ dest: 2, sync: true }));
  let sequelize: Sequelize;
  try {
    sequelize = await openDatabase(config.databaseUrl, logger);
  } catch (error) {
    throw new ReportedFailure(`Cannot open the database ${redacted(config.databaseUrl)}: ${(error as Error).message}`);
  }
  try {
    return await work({ config, sequelize, logger });
  } finally {
    await sequelize.close();
  }
}

/**
 * Applies pending migrations first, as every entry point does (`npm start`, the import and seed scripts):
 * a task never meets a schema older than its code. Says so on stderr when it applied any.
 */
export async function migrated({ sequelize, logger }: DatabaseTask): Promise<string[]> {
  const applied = await migrate(sequelize, logger);
  if (applied.length > 0) process.stderr.write(`Applied ${applied.length} pending migration(s) first: ${applied.join(', ')}\n`);
  return applied;
}

/** A database URL without its password, for messages. */
export function redacted(databaseUrl: string): string {
  return databaseUrl.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}
