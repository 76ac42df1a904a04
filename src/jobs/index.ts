/** The job queue for the configured database: pg-boss on PostgreSQL, the embedded runner on SQLite. */
import type { Sequelize } from 'sequelize';
import { dialectOf } from '../db/database.js';
import type { Logger } from '../logger.js';
import { PgBossJobQueue, type PgBossQueueOptions } from './pgboss-queue.js';
import type { JobQueue } from './queue.js';
import { TableJobQueue, type TableQueueOptions } from './table-queue.js';

export type { JobAttempt, JobQueue, JobRecord, JobStats, QueuePoolStats, QueueStats, RetryPolicy } from './queue.js';

export function createJobQueue(
  databaseUrl: string,
  sequelize: Sequelize,
  logger: Logger,
  options: TableQueueOptions & PgBossQueueOptions = {},
): JobQueue {
  return dialectOf(databaseUrl) === 'postgres'
    ? new PgBossJobQueue(databaseUrl, logger, options)
    : new TableJobQueue(sequelize, logger, options);
}
