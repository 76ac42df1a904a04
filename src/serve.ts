/**
 * Starting the server: opens and migrates the database, loads the municipality list (importing it on
 * first start), assembles the domains and the app, starts the housekeeping timers, and listens. `npm start` (server.ts) runs it as
 * configured; the sandbox and the hybrid mode (src/sandbox/, src/hybrid/) run the same server with a few
 * additions, so all three serve exactly the same code.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express, RequestHandler } from 'express';
import type { Sequelize } from 'sequelize';
import { Redis } from 'ioredis';
import { createApp } from './app.js';
import type { Config } from './config.js';
import { openDatabase, poolStatsOf } from './db/database.js';
import { migrate } from './db/migrator.js';
import { createDomains, type Domains } from './domains.js';
import { IdempotencyStore } from './http/idempotency.js';
import { SecretBox } from './security/secret-box.js';
import { createHttpServer } from './http/listen.js';
import { Metrics } from './http/metrics.js';
import type { OperationHandlers } from './http/operations.js';
import { createJobQueue, type JobQueue } from './jobs/index.js';
import { createShutdown } from './lifecycle.js';
import type { Logger } from './logger.js';
import { createAccounts, type Accounts } from './accounts/index.js';
import { revocationChannel } from './accounts/revocations.js';
import { ensureFirstAdmin } from './accounts/first-admin.js';
import { createMailer } from './mail/mailer.js';
import { statusSourcesOf } from './control/status.js';
import { MunicipalityCatalog } from './municipalities/catalog.js';
import { importMunicipalities } from './municipalities/import.js';
import { defineMunicipalityModel, loadAllMunicipalities, municipalitiesFingerprint } from './municipalities/model.js';
import type { SandboxControl } from './sandbox/control.js';

export interface ServerParts {
  sequelize: Sequelize;
  accounts: Accounts;
  domains: Domains;
  jobs: JobQueue;
  municipalities: MunicipalityCatalog;
  logger: Logger;
}

export interface StartOptions {
  /** The contract to serve instead of spec/openapi.yaml, a YAML file (the hybrid mode may serve a copy being edited). */
  contractFile?: string;
  /** Answers the operations of the contract that have no handler, instead of 501 (the hybrid mode's mock). */
  unimplemented?: RequestHandler;
  /** Runs after the database is migrated and the list loaded, before the first admin and the app (the sandbox seeds here). */
  prepare?: (parts: ServerParts) => Promise<void>;
  /** Makes the `resetSandbox` operation work (only the sandbox passes it). */
  sandbox?: (parts: ServerParts) => SandboxControl;
  /** Handlers to use instead of (or beyond) the built-in ones. */
  handlers?: OperationHandlers;
  /** Headers set on every response (the hybrid mode says who answered). */
  responseHeaders?: Record<string, string>;
}

export interface RunningServer extends ServerParts {
  app: Express;
  server: Server;
  /** Where it listens, with the base path: `http://127.0.0.1:8000`. */
  url: string;
  /** Stops taking requests, finishes those in flight (within SHUTDOWN_TIMEOUT_MS) and releases everything. */
  shutdown(reason: string): Promise<void>;
}

export async function startServer(config: Config, logger: Logger, options: StartOptions = {}): Promise<RunningServer> {
  const sequelize = await openDatabase(config.databaseUrl, logger);
  await migrate(sequelize, logger);

  const model = defineMunicipalityModel(sequelize);
  const municipalities = new MunicipalityCatalog(
    () => loadAllMunicipalities(model),
    () => municipalitiesFingerprint(model),
  );
  await municipalities.reload();
  if (municipalities.size === 0) await importOnFirstStart(sequelize, config, logger, municipalities);

  const redis = config.redisUrl ? connectRedis(config.redisUrl, logger) : undefined;
  // Revocations reach every instance's key cache through Redis, else PostgreSQL (src/accounts/revocations.ts).
  const revocations = revocationChannel({ databaseUrl: config.databaseUrl, sequelize, redis, redisPrefix: config.rateLimitPrefix, logger });
  const accounts = createAccounts(sequelize, config.accounts, createMailer(config.mail, logger), logger, revocations);
  await accounts.keyCache.listen();
  const jobs = createJobQueue(config.databaseUrl, sequelize, logger, { jobTimeoutSeconds: config.jobTimeoutSeconds });
  // Started first: the domains register their kinds of job, which pg-boss takes only once started.
  await jobs.start();
  const domains = await createDomains(sequelize, { accounts, jobs, logger, settings: config });
  await options.prepare?.({ sequelize, accounts, domains, jobs, municipalities, logger });
  // After `prepare`: the sandbox's demo users make the first admin unnecessary.
  await ensureFirstAdmin(accounts.users, config.firstAdmin, logger);

  const parts: ServerParts = { sequelize, accounts, domains, jobs, municipalities, logger };
  const metrics = new Metrics({ poolStats: () => poolStatsOf(sequelize), jobStats: () => jobs.stats() });
  const idempotencyKeys = new IdempotencyStore(sequelize, {
    ttlMs: config.idempotencyTtlMs,
    abandonAfterMs: Math.max(60_000, 2 * config.requestTimeoutMs),
    box: config.secretsKey ? SecretBox.fromKey(config.secretsKey) : undefined,
  });
  if (!idempotencyKeys.sealsAnswers) {
    logger.warn('SECRETS_KEY is not set: idempotent answers (with the personal data they carry) are stored in clear for IDEMPOTENCY_TTL_SECONDS, and no SMS or OAuth secret can be stored. Production requires it.');
  }
  const seenDeliveries = { purgeExpired: () => domains.socialnetDeliveries.purgeExpired(config.socialnet.replayWindowMs) };
  const purge = setInterval(() => void purgeExpiredRows([idempotencyKeys, accounts, domains.socialLinks, seenDeliveries, domains.entities.history, domains.entities.invitations], logger), PURGE_INTERVAL_MS);
  purge.unref();
  // A municipality created on another instance, or an import, reaches this instance's list within the interval.
  const refreshMunicipalities = municipalityRefresher(municipalities, logger);
  const refresh = setInterval(() => void refreshMunicipalities(), config.municipiosRefreshMs);
  refresh.unref();
  // SMS and messenger answers whose jobs were lost with a process (a campaign stored before its jobs were
  // queued, a job whose last try died) are queued again, now and every minute. A message is stalled once nothing touched
  // it for longer than its job's retries and a dead worker's timeout can take. Campaigns whose last
  // messages waited SMS_RECEIPT_TIMEOUT_HOURS for a receipt in vain become completed.
  const stalledAfterMs = 2 * config.jobTimeoutSeconds * 1000 + 2 * 60_000;
  const sweepSms = () =>
    void Promise.all([
      domains.sms.enqueueForgottenCampaigns(),
      domains.sms.enqueueStalledMessages(stalledAfterMs),
      domains.inbox.messenger.enqueueStalledAnswers(stalledAfterMs),
      domains.sms.reports.completeFinishedCampaigns(),
    ]).catch((error: unknown) => logger.warn({ err: error }, 'could not look for messages left without jobs or campaigns left unfinished'));
  sweepSms();
  const campaignSweep = setInterval(sweepSms, CAMPAIGN_SWEEP_INTERVAL_MS);
  campaignSweep.unref();
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
    contractFile: options.contractFile,
    unimplemented: options.unimplemented,
    sandbox: options.sandbox?.(parts),
    handlers: options.handlers,
    responseHeaders: options.responseHeaders,
  });
  const server = createHttpServer(app, config).listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const { address, port } = server.address() as AddressInfo;
  const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}${config.basePath}`;
  logger.info({ address, port, base_path: config.basePath, database: sequelize.getDialect() }, `listening on ${url}`);

  const shutdown = createShutdown(server, {
    timeoutMs: config.shutdownTimeoutMs,
    logger,
    release: async () => {
      clearInterval(purge);
      clearInterval(refresh);
      clearInterval(campaignSweep);
      await jobs.stop();
      await revocations?.close();
      await redis?.quit();
      await sequelize.close();
    },
  });
  return { ...parts, app, server, url, shutdown };
}

/**
 * What `npm start` says to a person at a terminal, in one plain line: where the API and its documentation
 * page are. Off a terminal (a container, a pipe, a log collector) nothing: every line there stays a JSON
 * log line, and the `listening on` line carries the address.
 */
export function startLine(url: string, onTerminal: boolean): string | undefined {
  if (!onTerminal) return undefined;
  return `Palanque API on ${url}/ (documentation: ${url}/docs). Ctrl-C stops it.`;
}

/**
 * Redis for the shared rate limits and key revocations. Commands fail fast while it is down (no offline
 * queue): the limiter falls back to memory, and a revocation notice is lost (the key cache's lifetime bounds
 * it), so an outage degrades the limits instead of the API.
 */
function connectRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  redis.on('error', (error: Error) => logger.warn({ reason: error.message }, 'redis unavailable; rate limits fall back to this instance'));
  return redis;
}

const PURGE_INTERVAL_MS = 10 * 60_000;
const CAMPAIGN_SWEEP_INTERVAL_MS = 60_000;

/** Housekeeping: idempotency keys, login failures, reset tokens, OAuth pending links, social-network delivery hashes and edit history that no longer count. */
async function purgeExpiredRows(stores: Array<{ purgeExpired(): Promise<number> }>, logger: Logger): Promise<void> {
  try {
    let purged = 0;
    for (const store of stores) purged += await store.purgeExpired();
    if (purged > 0) logger.info({ purged }, 'expired rows purged');
  } catch (error) {
    logger.warn({ err: error }, 'could not purge expired rows');
  }
}

/**
 * Checks whether the municipality list changed in the database and reloads it if so; a check still under
 * way when the next is due is not doubled. One per server, so that servers in one process keep apart.
 */
function municipalityRefresher(catalog: MunicipalityCatalog, logger: Logger): () => Promise<void> {
  let refreshing = false;
  return async () => {
    if (refreshing) return;
    refreshing = true;
    try {
      if (await catalog.refreshIfChanged()) logger.info({ municipalities: catalog.size }, 'municipality list reloaded: it changed in the database');
    } catch (error) {
      logger.warn({ err: error }, 'could not check the municipality list for changes');
    } finally {
      refreshing = false;
    }
  };
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
