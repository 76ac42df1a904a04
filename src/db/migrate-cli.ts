/**
 * `npm run db:migrate [-- --status | --dry-run]`: applies pending migrations to DATABASE_URL, each in one
 * transaction; `--status` lists every migration (applied, with when if recorded, or pending) and
 * `--dry-run` the ones that would run, both without changing anything. `palanque db migrate` is the same
 * task with `--json` (cli/admin/tasks.ts); both use the migrator's status and its wording.
 */
import 'dotenv/config';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { openDatabase } from './database.js';
import { formatDryRun, formatMigrationStatus, migrate, migrationStatus } from './migrator.js';

const flags = process.argv.slice(2);
const unknown = flags.filter((flag) => flag !== '--status' && flag !== '--dry-run');
if (unknown.length > 0 || flags.length > 1) {
  process.stderr.write(`usage: npm run db:migrate [-- --status | --dry-run] (not: ${flags.join(' ')})\n`);
  process.exit(2);
}
const config = loadConfig();
const logger = createLogger(config.logLevel);
const sequelize = await openDatabase(config.databaseUrl, logger);
const database = config.databaseUrl.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
try {
  if (flags.length === 1) {
    const status = await migrationStatus(sequelize);
    process.stdout.write(flags[0] === '--dry-run' ? formatDryRun(status, database) : formatMigrationStatus(status, database));
  } else {
    const applied = await migrate(sequelize, logger);
    logger.info({ applied }, applied.length > 0 ? `applied ${applied.length} migration(s)` : 'database is up to date');
  }
} finally {
  await sequelize.close();
}
