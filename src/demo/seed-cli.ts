/**
 * `npm run db:seed`: writes the demo data of fixtures/ into DATABASE_URL. It migrates the database,
 * imports the municipality list from MUNICIPIOS_SOURCE when the table is empty (the entities name
 * municipalities), seeds, prints what it created and what was there already, and prints the passwords of
 * the users it created, once. SEED_PASSWORD (12 characters or more) gives every user it creates that
 * password instead of a generated one. Running it again changes nothing. It refuses to run with
 * NODE_ENV=production (it creates a platform admin) unless SEED_IN_PRODUCTION=yes.
 */
import 'dotenv/config';
import { writeSync } from 'node:fs';
import type { Sequelize } from 'sequelize';
import { createAccounts } from '../accounts/index.js';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { createDomains } from '../domains.js';
import { refusingJobQueue } from '../jobs/refusing-queue.js';
import { createLogger, endLogging, type Logger } from '../logger.js';
import { createMailer } from '../mail/mailer.js';
import { MunicipalityCatalog } from '../municipalities/catalog.js';
import { importMunicipalities } from '../municipalities/import.js';
import { defineMunicipalityModel, loadAllMunicipalities } from '../municipalities/model.js';
import { openDatabase } from '../db/database.js';
import { migrate } from '../db/migrator.js';
import { formatSeedPasswords, formatSeedReport } from './seed-report.js';
import { seedDemoData, SeedError } from './seed.js';

/** The seed queues nothing (no scenario run, no SMS), so nothing can slip through. */
const noJobs = refusingJobQueue('The seed queues no jobs');

// Synchronous writes, as for the first admin's password: the report must be out before the process ends.
const print = (text: string) => writeSync(1, text.endsWith('\n') ? text : `${text}\n`);

async function main(): Promise<number> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  }
  if (config.env === 'production' && process.env.SEED_IN_PRODUCTION !== 'yes') {
    console.error('NODE_ENV is production: the demo data includes a platform admin. Set SEED_IN_PRODUCTION=yes to seed anyway.');
    return 1;
  }
  const logger = createLogger(config.logLevel);
  const sequelize = await openDatabase(config.databaseUrl, logger);
  try {
    await migrate(sequelize, logger);
    const municipalities = await loadedMunicipalities(sequelize, config, logger);
    const accounts = createAccounts(sequelize, config.accounts, createMailer(config.mail, logger), logger);
    // Quieter: assembling the SMS domain warns when PUBLIC_URL is unset, which does not matter here (nothing is sent).
    const domains = await createDomains(sequelize, { accounts, jobs: noJobs, logger: logger.child({}, { level: 'error' }), settings: config });
    const report = await seedDemoData(
      { sequelize, accounts, municipalities, ...domains },
      { passwordHashCost: config.accounts.passwordHashCost, password: process.env.SEED_PASSWORD || undefined, secretsKey: config.secretsKey, logger },
    );
    print(`\nDemo data in ${sequelize.getDialect()} database:\n${formatSeedReport(report)}\n`);
    const passwords = formatSeedPasswords(report);
    if (passwords) print(`\n${passwords}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof SeedError)) throw error;
    console.error(error.message);
    return 1;
  } finally {
    await sequelize.close();
    await endLogging(logger);
  }
}

/** The list as the entity rules read it; imported from MUNICIPIOS_SOURCE first when the table is empty. */
async function loadedMunicipalities(sequelize: Sequelize, config: Config, logger: Logger): Promise<MunicipalityCatalog> {
  const model = defineMunicipalityModel(sequelize);
  const catalog = new MunicipalityCatalog(() => loadAllMunicipalities(model));
  await catalog.reload();
  if (catalog.size > 0) return catalog;
  try {
    const report = await importMunicipalities(sequelize, { source: config.municipiosSource, sha256: config.municipiosSha256 });
    logger.info(report, 'municipality list imported');
  } catch (error) {
    throw new SeedError(
      `The municipality list is empty and could not be imported from ${config.municipiosSource} (${(error as Error).message}). ` +
        'Set MUNICIPIOS_SOURCE to a copy of the list, or run `npm run municipios:import -- --source <file or URL>`, then seed again.',
    );
  }
  await catalog.reload();
  return catalog;
}

process.exitCode = await main();
