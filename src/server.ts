/**
 * `npm start`: reads the configuration, opens and migrates the database, loads the municipality list
 * (importing it on first start), and serves the API until SIGTERM or SIGINT.
 */
import 'dotenv/config';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { openDatabase, poolStatsOf } from './db/database.js';
import { IdempotencyStore } from './http/idempotency.js';
import { createJobQueue } from './jobs/index.js';
import { createHttpServer } from './http/listen.js';
import { Metrics } from './http/metrics.js';
import { migrate } from './db/migrator.js';
import { createShutdown } from './lifecycle.js';
import { createLogger, endLogging, type Logger } from './logger.js';
import { MunicipalityCatalog } from './municipalities/catalog.js';
import { importMunicipalities } from './municipalities/import.js';
import { defineMunicipalityModel, loadAllMunicipalities, municipalitiesFingerprint } from './municipalities/model.js';
import type { Sequelize } from 'sequelize';
import { Redis } from 'ioredis';
import { createAccounts, type Accounts } from './accounts/index.js';
import { ensureFirstAdmin } from './accounts/first-admin.js';
import { createMailer } from './mail/mailer.js';
import { statusSourcesOf } from './control/status.js';
import { createDomains } from './domains.js';

async function main(): Promise<void> {
  const config = readConfigOrExit();
  const logger = createLogger(config.logLevel);
  const sequelize = await openDatabase(config.databaseUrl, logger);
  await migrate(sequelize, logger);

  const model = defineMunicipalityModel(sequelize);
  const municipalities = new MunicipalityCatalog(
    () => loadAllMunicipalities(model),
    () => municipalitiesFingerprint(model),
  );
  await municipalities.reload();
  if (municipalities.size === 0) await importOnFirstStart(sequelize, config, logger, municipalities);

  const accounts = createAccounts(sequelize, config.accounts, createMailer(config.mail, logger), logger);
  await ensureFirstAdmin(accounts.users, config.firstAdmin, logger);

  const jobs = createJobQueue(config.databaseUrl, sequelize, logger);
  await jobs.start();
  const metrics = new Metrics({ poolStats: () => poolStatsOf(sequelize), jobStats: () => jobs.stats() });
  const redis = config.redisUrl ? connectRedis(config.redisUrl, logger) : undefined;
  const idempotencyKeys = new IdempotencyStore(sequelize, {
    ttlMs: config.idempotencyTtlMs,
    abandonAfterMs: Math.max(60_000, 2 * config.requestTimeoutMs),
  });
  const purge = setInterval(() => void purgeExpiredRows(idempotencyKeys, accounts, logger), PURGE_INTERVAL_MS);
  purge.unref();
  // A municipality created on another instance, or an import, reaches this instance's list within the interval.
  const refresh = setInterval(() => void refreshMunicipalities(municipalities, logger), config.municipiosRefreshMs);
  refresh.unref();
  const domains = await createDomains(sequelize, { accounts, jobs, logger, settings: config });
  const app = createApp({
    config,
    logger,
    municipalities,
    municipalityModel: model,
    accounts,
    ...domains,
    status: statusSourcesOf(sequelize, () => jobs.stats()),
    metrics,
    redis,
    rateLimitPrefix: config.rateLimitPrefix,
    idempotencyKeys,
  });
  const server = createHttpServer(app, config).listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const { address, port } = server.address() as AddressInfo;
  logger.info({ address, port, base_path: config.basePath, database: sequelize.getDialect() }, `listening on http://${address}:${port}${config.basePath}`);

  const shutdown = createShutdown(server, {
    timeoutMs: config.shutdownTimeoutMs,
    logger,
    release: async () => {
      clearInterval(purge);
      clearInterval(refresh);
      await jobs.stop();
      await redis?.quit();
      await sequelize.close();
    },
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    // Exit only once the asynchronous log destination has written everything, in order.
    process.once(signal, () => void shutdown(signal).then(() => endLogging(logger)).then(() => process.exit(0)));
  }
}

/**
 * Redis for the shared rate limits. Commands fail fast while it is down (no offline queue) and the
 * limiter falls back to memory, so an outage degrades the limits instead of the API.
 */
function connectRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  redis.on('error', (error: Error) => logger.warn({ reason: error.message }, 'redis unavailable; rate limits fall back to this instance'));
  return redis;
}

const PURGE_INTERVAL_MS = 10 * 60_000;

/** Housekeeping: idempotency keys, login failures and reset tokens that no longer count. */
async function purgeExpiredRows(store: IdempotencyStore, accounts: Accounts, logger: Logger): Promise<void> {
  try {
    const purged = (await store.purgeExpired()) + (await accounts.purgeExpired());
    if (purged > 0) logger.info({ purged }, 'expired rows purged');
  } catch (error) {
    logger.warn({ err: error }, 'could not purge expired rows');
  }
}

let refreshing = false;

async function refreshMunicipalities(catalog: MunicipalityCatalog, logger: Logger): Promise<void> {
  if (refreshing) return;
  refreshing = true;
  try {
    if (await catalog.refreshIfChanged()) logger.info({ municipalities: catalog.size }, 'municipality list reloaded: it changed in the database');
  } catch (error) {
    logger.warn({ err: error }, 'could not check the municipality list for changes');
  } finally {
    refreshing = false;
  }
}

function readConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}

/** An empty list is imported from MUNICIPIOS_SOURCE; if that fails the server still starts, answering 503. */
async function importOnFirstStart(sequelize: Sequelize, config: Config, logger: Logger, catalog: MunicipalityCatalog): Promise<void> {
  try {
    const report = await importMunicipalities(sequelize, { source: config.municipiosSource, sha256: config.municipiosSha256 });
    logger.info(report, 'municipality list imported');
    await catalog.reload();
  } catch (error) {
    logger.warn(
      { source: config.municipiosSource, reason: (error as Error).message },
      'The municipality list is not loaded, so GET /api/municipios/ answers 503. Load it with ' +
        '`npm run municipios:import -- --source <file or URL>`, or set MUNICIPIOS_SOURCE and restart.',
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
