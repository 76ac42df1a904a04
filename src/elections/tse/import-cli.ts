/**
 * `npm run elections:import -- --source <file, zip or URL> [--sha256 <hex>]`: imports the electoral
 * court's candidacy files into DATABASE_URL (import.ts says what holds). A URL must name a host of
 * ELECTIONS_IMPORT_HOSTS. The report is logged (a JSON line with `report`); a refused import logs why and
 * exits 1.
 */
import 'dotenv/config';
import { loadConfig } from '../../config.js';
import { openDatabase } from '../../db/database.js';
import { migrate } from '../../db/migrator.js';
import { createLogger, endLogging } from '../../logger.js';
import { scriptArguments } from '../../script-args.js';
import { CandidacyImportError, importCandidacies } from './import.js';

const USAGE = `Usage: npm run elections:import -- --source <file, zip or URL> [--sha256 <hex>]

Imports the electoral court's candidacy file (consulta_cand_<year>_<UF>.csv) or zip of them
(consulta_cand_<year>.zip) into the database of DATABASE_URL (the environment, or .env), after
applying pending migrations. A URL must name a host of ELECTIONS_IMPORT_HOSTS. The report is logged
as a JSON line; a refused import (wrong digest, not the court's layout) logs why and exits 1.

Options:
  --source <file, zip or URL>  what to import
  --sha256 <hex>               the source's expected sha256: nothing is written when it differs
  -h, --help                   this help

With a progress count, a summary table (or --json), and Ctrl-C that reports what was committed:
  palanque elections import --file <file or zip> [--sha256 <hex>] [--json]`;

const values = scriptArguments(USAGE, { source: { type: 'string' }, sha256: { type: 'string' } });
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
      maxRecordBytes: config.electionsImportMaxRecordBytes,
      allowPrivateAddresses: config.outbound.allowPrivateAddresses,
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
