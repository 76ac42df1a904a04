/**
 * `npm run municipios:import [-- --source <file or URL>] [--sha256 <hex>]`: loads the municipality list
 * into DATABASE_URL. Defaults come from MUNICIPIOS_SOURCE and MUNICIPIOS_SHA256. A running server picks
 * the data up by itself while its list is empty; otherwise restart it.
 */
import 'dotenv/config';
import { loadConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { migrate } from '../db/migrator.js';
import { createLogger } from '../logger.js';
import { scriptArguments } from '../script-args.js';
import { ImportError, importMunicipalities } from './import.js';

const USAGE = `Usage: npm run municipios:import -- [--source <file or URL>] [--sha256 <hex>]

Loads the municipality list into the database of DATABASE_URL (the environment, or .env), after
applying pending migrations: one transaction, idempotent. A running server picks the data up by
itself while its list is empty; otherwise restart it.

Options:
  --source <file or URL>  the CSV (default: MUNICIPIOS_SOURCE, else the pinned upstream file)
  --sha256 <hex>          its expected sha256; empty skips the check (default: MUNICIPIOS_SHA256, else the pinned digest)
  -h, --help              this help

The same with a progress bar and a summary: palanque municipios import [--source ...] [--sha256 ...]`;

const values = scriptArguments(USAGE, { source: { type: 'string' }, sha256: { type: 'string' } });
const config = loadConfig();
const logger = createLogger(config.logLevel);
const sequelize = await openDatabase(config.databaseUrl, logger);
try {
  await migrate(sequelize, logger);
  const sha256 = values.sha256 !== undefined ? values.sha256 || undefined : config.municipiosSha256;
  const report = await importMunicipalities(sequelize, { source: values.source ?? config.municipiosSource, sha256 });
  logger.info(report, `imported ${report.rows} municipalities: ${report.inserted} inserted, ${report.updated} updated, ${report.unchanged} unchanged`);
} catch (error) {
  if (!(error instanceof ImportError)) throw error;
  logger.error(error.message);
  process.exitCode = 1;
} finally {
  await sequelize.close();
}
