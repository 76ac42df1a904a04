/**
 * Starting the server: opens and migrates the database, loads the municipality list (importing it on
 * first start), assembles the domains and the app, starts the housekeeping timers, and listens. `npm start` (server.ts) runs it as
 * configured; the sandbox and the hybrid mode (src/sandbox/, src/hybrid/) run the same server with a few
 * additions, so all three serve exactly the same code.
 */
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express, RequestHandler } from 'express';
import type { Sequelize } from 'sequelize';
import { Redis } from 'ioredis';
import { createApp } from './app.js';
import { configWarnings, type Config } from './config.js';
import { openDatabase, poolStatsOf } from './db/database.js';
import { knownMigrationNames, migrate } from './db/migrator.js';
import { isOutage } from './db/outages.js';
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
import { adminCliOf, ensureFirstAdmin } from './accounts/first-admin.js';
import { createMailer } from './mail/mailer.js';
import { statusSourcesOf } from './control/status.js';
import { startupSteps } from './startup-steps.js';
import { probeApp } from './control/probe-app.js';
import { checkReadiness, readinessSourcesOf, type ReadinessSources } from './control/readiness.js';
import { SERVICE_VERSION } from './control/service.js';
import { readerOf } from './db/reader.js';
import { MunicipalityCatalog } from './municipalities/catalog.js';
import { importMunicipalities } from './municipalities/import.js';
import { defineMunicipalityModel, loadAllMunicipalities, municipalitiesFingerprint } from './municipalities/model.js';
import { projectRoot } from './project-root.js';

export interface ServerParts {
  sequelize: Sequelize;
  accounts: Accounts;
  domains: Domains;
  jobs: JobQueue;
  municipalities: MunicipalityCatalog;
  logger: Logger;
}

export interface StartOptions {
  /** The contract to serve instead of sdk/openapi.json, one whole document (the hybrid mode may serve a copy being edited). */
  contractFile?: string;
  /** Answers the operations of the contract that have no handler, instead of 501 (the hybrid mode's mock). */
  unimplemented?: RequestHandler;
  /** Runs after the database is migrated and the list loaded, before the first admin and the app (the sandbox seeds here). */
  prepare?: (parts: ServerParts) => Promise<void>;
  /**
   * Handlers to use instead of (or beyond) the built-in ones, or a function building them on the server's
   * parts once they exist (the sandbox's resetSandbox, which resets those parts' data).
   */
  handlers?: OperationHandlers | ((parts: ServerParts) => OperationHandlers);
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

const IN_MEMORY = /^sqlite:(:memory:)?$/;

/**
 * Migrations run on a connection of their own, without DB_STATEMENT_TIMEOUT_MS: an index built on a
 * large table may take minutes, and an instance that starts beside a migrating one waits on the
 * migrations' lock as long. A statement timeout there would stop a rolling deploy halfway.
 */
async function migrateWithoutStatementTimeout(config: Config, logger: Logger): Promise<string[]> {
  if (IN_MEMORY.test(config.databaseUrl)) return [];
  const migrating = await openDatabase(config.databaseUrl, logger, { statementTimeoutMs: 0 });
  try {
    return await migrate(migrating, logger);
  } finally {
    await migrating.close();
  }
}

export async function startServer(config: Config, logger: Logger, options: StartOptions = {}): Promise<RunningServer> {
  // Settings that loadConfig accepts but that limit one another (config.ts configWarnings).
  for (const warning of configWarnings(config)) logger.warn(warning);
  // An api instance never migrates (PALANQUE_ROLE): a worker, or `npm run db:migrate`, does.
  const steps = startupSteps(logger);
  if (config.role !== 'api') steps.done('migrations', { applied: (await migrateWithoutStatementTimeout(config, logger)).length });
  const sequelize = await openDatabase(config.databaseUrl, logger, {
    statementTimeoutMs: config.dbStatementTimeoutMs,
    poolMax: config.dbPoolMax,
    readPoolMax: config.dbReadPoolMax,
    preparedStatements: config.databasePreparedStatements,
  });
  // An in-memory database is one connection's: it is migrated on the one it is served from.
  if (IN_MEMORY.test(config.databaseUrl)) await migrate(sequelize, logger);
  steps.done('database connected', { database: sequelize.getDialect() });
  // An api instance listens at once, answering /readyz 503 until its schema is there, then goes on.
  const waiting = config.role === 'api' ? await listenUntilSchemaIsThere(sequelize, config, logger) : undefined;

  const model = defineMunicipalityModel(sequelize);
  const municipalities = new MunicipalityCatalog(
    () => loadAllMunicipalities(model),
    () => municipalitiesFingerprint(model),
  );
  await municipalities.reload();
  const imported = municipalities.size === 0 && config.role !== 'api';
  if (imported) await importOnFirstStart(sequelize, config, logger, municipalities);
  steps.done('municipalities loaded', { municipalities: municipalities.size, first_start_import: imported });

  const redis = config.redisUrl ? connectRedis(config.redisUrl, logger) : undefined;
  // Revocations reach every instance's key cache through Redis, else PostgreSQL (src/accounts/revocations.ts).
  const revocations = revocationChannel({ databaseUrl: config.databaseUrl, listenUrl: config.databaseDirectUrl, sequelize, redis, redisPrefix: config.rateLimitPrefix, logger });
  const accounts = createAccounts(sequelize, config.accounts, createMailer(config.mail, logger), logger, revocations);
  await accounts.keyCache.listen();
  // An api instance enqueues (a campaign's sends) and reads jobs, but runs none: its workers do.
  const jobs = createJobQueue(config.databaseUrl, sequelize, logger, {
    jobTimeoutSeconds: config.jobTimeoutSeconds,
    runJobs: config.role !== 'api',
    batchSize: config.jobConcurrency,
    concurrency: config.jobConcurrency,
  });
  // Started first: the domains register their kinds of job, which pg-boss takes only once started.
  await jobs.start();
  steps.done('jobs started');
  const metrics = new Metrics({
    poolStats: () => poolStatsOf(sequelize),
    jobStats: () => jobs.stats(),
    jobs,
    readerStats: () => readerOf(sequelize).stats?.(),
    build: { version: SERVICE_VERSION, commit: config.gitCommit },
  });
  const domains = await createDomains(sequelize, { accounts, jobs, logger, settings: config, counts: metrics });
  steps.done('domains ready');
  await options.prepare?.({ sequelize, accounts, domains, jobs, municipalities, logger });
  // After `prepare`: the sandbox's demo users make the first admin unnecessary.
  // The CLI commands it prints name this server's address: the CLI's own default may be another.
  if (config.role !== 'api') await ensureFirstAdmin(accounts.users, config.firstAdmin, logger, undefined, accounts.audit, adminCliOf(projectRoot, localUrlOf(config)));

  const parts: ServerParts = { sequelize, accounts, domains, jobs, municipalities, logger };
  const idempotencyKeys = new IdempotencyStore(sequelize, {
    ttlMs: config.idempotencyTtlMs,
    abandonAfterMs: Math.max(60_000, 2 * config.requestTimeoutMs),
    box: config.secretsKey ? SecretBox.fromKey(config.secretsKey) : undefined,
  });
  if (!idempotencyKeys.sealsAnswers) {
    logger.warn('SECRETS_KEY is not set: idempotent answers (with the personal data they carry) are stored in clear for IDEMPOTENCY_TTL_SECONDS, and no SMS or OAuth secret can be stored. Production requires it.');
  }
  const seenDeliveries = { purgeExpired: () => domains.socialnetDeliveries.purgeExpired(config.socialnet.replayWindowMs) };
  // The sweeps below are a worker's (or an instance of role all): an api instance runs no timer but the list's refresh.
  const sweeps = config.role !== 'api';
  const purge = sweeps ? setInterval(() => void purgeExpiredRows([idempotencyKeys, accounts, domains.socialLinks, seenDeliveries, domains.entities.history, domains.entities.invitations], logger), PURGE_INTERVAL_MS) : undefined;
  purge?.unref();
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
      domains.sms.enqueueStalledCampaigns(stalledAfterMs),
      domains.inbox.messenger.enqueueStalledAnswers(stalledAfterMs),
      domains.sms.reports.completeFinishedCampaigns(),
    ]).catch((error: unknown) => logger.warn({ err: error }, 'could not look for messages left without jobs or campaigns left unfinished'));
  if (sweeps) sweepSms();
  const campaignSweep = sweeps ? setInterval(sweepSms, CAMPAIGN_SWEEP_INTERVAL_MS) : undefined;
  campaignSweep?.unref();
  // Contacts due for erasure after their entity's election, and the notices 30 days before (issue 42):
  // a job, queued now and every hour; it is idempotent, so instances queuing it at once do no harm.
  if (sweeps) void domains.contactRetention.enqueueSweep();
  const retentionSweep = sweeps ? setInterval(() => void domains.contactRetention.enqueueSweep(), RETENTION_SWEEP_INTERVAL_MS) : undefined;
  retentionSweep?.unref();
  // A worker serves only the probes and /metrics; every other path is 404.
  const app = config.role === 'worker'
    ? probeApp({ readiness: readinessSourcesOf(sequelize, knownMigrationNames(), redis), logger, metrics: { metrics, token: config.metricsToken }, otherwise: 'not_found' })
    : createApp({
    config,
    logger,
    municipalities,
    municipalityModel: model,
    accounts,
    ...domains,
    status: statusSourcesOf(sequelize, () => jobs.stats()),
    jobs,
    metrics,
    redis,
    rateLimitPrefix: config.rateLimitPrefix,
    idempotencyKeys,
    contractFile: options.contractFile,
    unimplemented: options.unimplemented,
    handlers: typeof options.handlers === 'function' ? options.handlers(parts) : options.handlers,
    responseHeaders: options.responseHeaders,
  });
  steps.done('app built');
  const server = waiting ? waiting.serve(app) : await listen(createHttpServer(app, config), config);
  const { address, port } = server.address() as AddressInfo;
  const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}${config.basePath}`;
  logger.info({ address, port, base_path: config.basePath, database: sequelize.getDialect(), role: config.role }, `listening on ${url}`);
  steps.finished({ port });

  const shutdown = createShutdown(server, {
    timeoutMs: config.shutdownTimeoutMs,
    logger,
    release: async () => {
      clearInterval(purge);
      clearInterval(refresh);
      clearInterval(campaignSweep);
      clearInterval(retentionSweep);
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
 * The address a command line on this machine reaches the server at, known before it listens: a wildcard
 * host (0.0.0.0, ::) is reached on loopback. PORT=0 (a port the system picks, tests only) is known only
 * once listening: `<port>` then stands for the one the `listening on` line gives.
 */
export function localUrlOf(config: Pick<Config, 'host' | 'port' | 'basePath'>): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port === 0 ? '<port>' : config.port}${config.basePath}`;
}

/**
 * What a failed start says, in one line an operator can act on (the port, the database, the migration),
 * and its code. The error itself goes with it to the log; DATABASE_URL is never quoted (it may hold a
 * password).
 */
export function startupFailure(error: unknown, config: Pick<Config, 'port' | 'host'>): { message: string; code: string | undefined } {
  const code = errorCode(error);
  const reason = error instanceof Error ? error.message : String(error);
  if (code === 'EADDRINUSE') return { code, message: `Could not start: port ${config.port} on ${config.host} is already in use. Stop what listens there, or set PORT.` };
  if (code === 'EACCES' && (error as { syscall?: string }).syscall === 'listen') {
    return { code, message: `Could not start: not allowed to listen on port ${config.port} on ${config.host}. Use a port above 1023, or set PORT.` };
  }
  if ((error as Error)?.name === 'MigrationError' || /^Migration \S+ \(\w+\) failed/.test(reason)) {
    return { code, message: `Could not start: a database migration failed, and the server does not run on a schema it does not know. ${reason} It was rolled back whole (the database stays at the migration before it): fix the cause and start again (palanque db migrate --status shows where it stands).` };
  }
  // A cancelled statement is an outage to a request (503), but at start the database did answer: the
  // operator's lead is the timeout or what held the statement up, not the connection.
  if (code === '57014') {
    return { code, message: 'Could not start: a database statement was cancelled (57014), by DB_STATEMENT_TIMEOUT_MS or the database\'s own statement_timeout. Raise it, or find what held the statement up (a lock, a large table).' };
  }
  if (isOutage(error) || /^Sequelize(Connection|HostNotFound|HostNotReachable|AccessDenied|InvalidConnection)/.test((error as Error)?.name ?? '')) {
    return { code, message: `Could not start: the database cannot be reached (${code ?? reason}). Check DATABASE_URL and that the database is up.` };
  }
  return { code, message: `Could not start: ${reason}` };
}

/** The error's code, or the code of what it wraps (Sequelize keeps the driver's error as `parent`). */
function errorCode(error: unknown): string | undefined {
  let current = error as { code?: unknown; parent?: unknown; original?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth += 1) {
    if (typeof current.code === 'string') return current.code;
    current = (current.parent ?? current.original ?? current.cause) as typeof current;
  }
  return undefined;
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

async function listen(server: Server, config: Pick<Config, 'port' | 'host'>): Promise<Server> {
  server.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  return server;
}

/** How often an api instance looks again for the schema it waits for. */
const SCHEMA_POLL_MS = 1_000;

/**
 * An api instance (PALANQUE_ROLE=api) never migrates. It listens at once with only the probes and
 * /metrics (every other path 503), its /readyz naming the missing migrations, and returns once every
 * migration it knows is applied (and, on PostgreSQL, pg-boss's schema is installed), by a worker or
 * `npm run db:migrate`; `serve` then hands the same server (same port) to the API.
 */
async function listenUntilSchemaIsThere(sequelize: Sequelize, config: Config, logger: Logger): Promise<{ serve(app: RequestListener): Server }> {
  // /readyz stays 503 after the schema is there, until the API serves: the probe app answers every other path 503 meanwhile.
  let serving = false;
  const schemaReadiness: ReadinessSources = {
    ...readinessSourcesOf(sequelize, knownMigrationNames()),
    ...(sequelize.getDialect() === 'postgres' ? { jobQueueInstalled: () => pgBossInstalled(sequelize) } : {}),
  };
  const readiness: ReadinessSources = { ...schemaReadiness, serving: () => serving };
  let listener: RequestListener = probeApp({ readiness, logger, otherwise: 'not_ready' });
  const server = await listen(createHttpServer((req, res) => listener(req, res), config), config);
  let told = '';
  for (;;) {
    const result = await checkReadiness(schemaReadiness);
    if (result.status === 'ready') break;
    const reasons = Object.entries(result.checks).filter(([, check]) => check.state !== 'ok').map(([name, check]) => `${name}: ${check.reason ?? check.state}`).join('; ');
    if (reasons !== told) logger.warn({ checks: result.checks }, `api instance waiting for its schema (PALANQUE_ROLE=api never migrates): ${reasons}`);
    told = reasons;
    await new Promise((resolve) => setTimeout(resolve, SCHEMA_POLL_MS));
  }
  logger.info('the schema is there: the api instance starts serving the API');
  return {
    serve(app) {
      listener = app;
      serving = true;
      return server;
    },
  };
}

async function pgBossInstalled(sequelize: Sequelize): Promise<boolean> {
  const [rows] = await sequelize.query(`SELECT to_regclass('pgboss.version') IS NOT NULL AS installed`);
  return Boolean((rows as Array<{ installed: boolean }>)[0]?.installed);
}

const PURGE_INTERVAL_MS = 10 * 60_000;
const CAMPAIGN_SWEEP_INTERVAL_MS = 60_000;
/** How often the contact retention sweep is queued (its days are Brasília days: an hour is soon enough). */
const RETENTION_SWEEP_INTERVAL_MS = 3_600_000;

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
