/**
 * `npm run elections:import -- --source <file, zip or URL> [--sha256 <hex>]`: imports the electoral
 * court's candidacy files into DATABASE_URL (import.ts says what holds). A URL must name a host of
 * ELECTIONS_IMPORT_HOSTS. The report is logged (a JSON line with `report`); a refused import logs why and
 * exits 1.
 */
import 'dotenv/config';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../config.js';
import { openDatabase } from '../../db/database.js';
import { migrate } from '../../db/migrator.js';
import { createLogger, endLogging } from '../../logger.js';
import { CandidacyImportError, importCandidacies } from './import.js';

const { values } = parseArgs({ options: { source: { type: 'string' }, sha256: { type: 'string' } } });
const config = loadConfig();
const logger = createLogger(config.logLevel);
if (values.source) {
  const sequelize = await openDatabase(config.databaseUrl, logger);
  try {
    await migrate(sequelize, logger);
    const report = await importCandidacies(sequelize, {
      source: values.source,
      sha256: values.sha256 || undefined,
      allowedHosts: config.electionsImportHosts,
      onProgress: (rows) => logger.debug({ rows }, 'candidacy rows read'),
    });
    const { rows, inserted, updated, unchanged, rejected } = report;
    logger.info({ report }, `read ${rows} candidacy rows: ${inserted} inserted, ${updated} updated, ${unchanged} unchanged, ${rejected} rejected`);
  } catch (error) {
    if (!(error instanceof CandidacyImportError)) throw error;
    logger.error(error.message);
    process.exitCode = 1;
  } finally {
    await sequelize.close();
  }
} else {
  logger.error('Nothing to import: give --source <file, zip or URL> [--sha256 <hex>]');
  process.exitCode = 1;
}
await endLogging(logger);
