/** `npm run db:migrate`: applies pending migrations to DATABASE_URL. */
import 'dotenv/config';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { openDatabase } from './database.js';
import { migrate } from './migrator.js';

const config = loadConfig();
const logger = createLogger(config.logLevel);
const sequelize = await openDatabase(config.databaseUrl, logger);
try {
  const applied = await migrate(sequelize, logger);
  logger.info({ applied }, applied.length > 0 ? `applied ${applied.length} migration(s)` : 'database is up to date');
} finally {
  await sequelize.close();
}
