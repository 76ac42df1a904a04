/**
 * The real application on a test database, listening on a free loopback port: migrated, optionally loaded
 * with the shared municipality file, with its logs captured so tests can read them.
 */
import type { VapidKeys } from '../../src/push/sender.js';
import type { LookupAll, OutboundPolicy } from '../../src/webhooks/outbound-http.js';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from '../../src/webhooks/settings.js';
import type { Server } from 'node:http';
import type { InvitationSettings } from '../../src/entities/invitations.js';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterEach } from 'vitest';
import type { Redis } from 'ioredis';
import type { Sequelize } from 'sequelize';
import { createApp, type AppConfig } from '../../src/app.js';
import { openDatabase, poolStatsOf } from '../../src/db/database.js';
import { readerOf } from '../../src/db/reader.js';
import { Metrics } from '../../src/http/metrics.js';
import { IdempotencyStore, type IdempotencySettings } from '../../src/http/idempotency.js';
import { SecretBox } from '../../src/security/secret-box.js';
import type { OperationHandlers } from '../../src/http/operations.js';
import { migrate } from '../../src/db/migrator.js';
import { MunicipalityCatalog } from '../../src/municipalities/catalog.js';
import { importMunicipalities } from '../../src/municipalities/import.js';
import { defineMunicipalityModel, loadAllMunicipalities } from '../../src/municipalities/model.js';
import type { Municipality } from '../../src/municipalities/rules.js';
import { loadConfig } from '../../src/config.js';
import { DEFAULT_MUNICIPIOS_SHA256 } from '../../src/municipalities/settings.js';
import type { OAuthClientSettings } from '../../src/oauth/settings.js';
import { createHttpServer, type ServerLimits } from '../../src/http/listen.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createAccounts, type Accounts, type AccountSettings } from '../../src/accounts/index.js';
import { createMailer, type Mailer } from '../../src/mail/mailer.js';
import type { Entities } from '../../src/entities/index.js';
import { createDomains, type DomainSettings } from '../../src/domains.js';
import { statusSourcesOf, type StatusSources } from '../../src/control/status.js';
import type { Monitors } from '../../src/monitors/index.js';
import type { Strategy } from '../../src/strategy/index.js';
import { createJobQueue, type JobQueue } from '../../src/jobs/index.js';
import { refusingJobQueue } from '../../src/jobs/refusing-queue.js';
import type { SocialnetRemovals } from '../../src/socialnet/removals.js';
import type { SeenDeliveries } from '../../src/socialnet/deliveries.js';
import type { Inbox } from '../../src/chat/index.js';
import type { Sms } from '../../src/messaging/sms.js';
import type { CertificationLookup } from '../../src/messaging/contact-retention.js';
import type { SocialLinks } from '../../src/oauth/index.js';
import type { ElectionsPanelSyncs } from '../../src/elections/index.js';
import type { CourtImports } from '../../src/elections/tse/imports.js';
import { freePort } from './process.js';
import { loggerOptions } from '../../src/logger.js';

/** The SECRETS_KEY of test apps (32 bytes, base64): credentials can be stored unless a test unsets it. */
export const TEST_SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');

/**
 * SMS_SEND_TIMEOUT_MS of test apps: short, since a run that finds a send's outcome unknown waits this
 * (and a margin) before asking the provider, yet far above what a loopback simulator takes.
 */
export const TEST_SMS_SEND_TIMEOUT_MS = 2_000;

/** The server's timeouts and header bound as an empty environment configures them. */
const PRODUCTION_SERVER_LIMITS: ServerLimits = loadConfig({});

/** Accounts as configured by default, except a cheap password hash: tests log in hundreds of times. */
export const testAccountSettings: AccountSettings = {
  tokenLifetimeMs: 7 * 24 * 3600_000,
  loginLock: { maxFailures: 5, addressMaxFailures: 100, maxDelayMs: 30_000, windowMs: 15 * 60_000 },
  passwordResetLifetimeMs: 30 * 60_000,
  passwordHashCost: 12,
};

/**
 * Tests and CI read the municipality list from the repository's test copy (test/fixtures/, with its
 * licence), never from the network, so a clone with nothing beside it passes.
 */
export const SHARED_MUNICIPIOS = process.env.MUNICIPIOS_TEST_SOURCE ?? fileURLToPath(new URL('../fixtures/municipios-brasileiros/municipios.csv', import.meta.url));
export const SHARED_MUNICIPIOS_SHA256 = DEFAULT_MUNICIPIOS_SHA256;

export const defaultAppConfig: AppConfig = {
  basePath: '',
  publicUrl: undefined,
  frontendResetUrl: undefined,
  frontendVerifyUrl: undefined,
  frontendSignUpUrl: undefined,
  trustProxy: false,
  bodyLimit: 1024 * 1024,
  validateResponses: true,
  corsOrigins: [],
  metricsToken: undefined,
  assistants: [],
  docsUrl: undefined,
  socialnet: { verifyToken: undefined, appSecret: undefined, replayWindowMs: 3 * 24 * 3600_000, removalMaxAgeMs: 24 * 3600_000 },
  // Off unless a test sets them: tests send many requests from one address.
  rateLimits: { auth: undefined, read: undefined, write: undefined, callback: undefined },
};

export interface TestApp {
  baseUrl: string;
  sequelize: Sequelize;
  catalog: MunicipalityCatalog;
  idempotencyKeys: IdempotencyStore;
  database: TestDatabase;
  accounts: Accounts;
  entities: Entities;
  monitors: Monitors;
  strategy: Strategy;
  socialnetRemovals: SocialnetRemovals;
  socialnetDeliveries: SeenDeliveries;
  sms: Sms;
  inbox: Inbox;
  socialLinks: SocialLinks;
  electionsPanelSyncs: ElectionsPanelSyncs;
  courtImports: CourtImports;
  /** The running job queue, when the app was started `withJobs`. */
  jobs?: JobQueue;
  /** Where the app writes its mail (.eml files), unless a test passed its own mailer. */
  mailDir: string;
  logs: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  config?: Partial<AppConfig>;
  /** Import the shared municipality file before serving. */
  withMunicipalities?: boolean;
  /** Replace how the catalog reads the database (to simulate failures or bad data). */
  fetchMunicipalities?: () => Promise<Municipality[]>;
  /** Leave the catalog unloaded, so the first request reads the database itself. */
  skipInitialLoad?: boolean;
  /** Send every request through the full contract pipeline (no fast paths). */
  withoutFastPaths?: boolean;
  /** Share rate-limit budgets through this Redis, under this key prefix. */
  redis?: Redis;
  rateLimitPrefix?: string;
  /** Use this database (shared with another app) instead of a fresh one; the caller drops it. */
  database?: TestDatabase;
  idempotency?: Partial<IdempotencySettings>;
  handlers?: OperationHandlers;
  /** Serve this contract instead of sdk/openapi.json (a copy a test changed). */
  contractFile?: string;
  accounts?: Partial<AccountSettings>;
  /** Send mail through this instead of .eml files in a temporary folder. */
  mailer?: Mailer;
  /** Replace what basicStatus reads (by default the test database, and the job queue's figures). */
  status?: Partial<StatusSources>;
  /**
   * Run a real job queue (pg-boss on PostgreSQL, the table runner on SQLite), polling often. Without it
   * the app runs no jobs, and an operation that queues one fails.
   */
  withJobs?: boolean;
  /**
   * SMS settings: the provider's address (its simulator), SECRETS_KEY (TEST_SECRETS_KEY unless set; null
   * for none) and SMS_SEND_TIMEOUT_MS (TEST_SMS_SEND_TIMEOUT_MS unless set).
   */
  sms?: { providerUrl?: string; secretsKey?: string | null; sendTimeoutMs?: number; maxRecipients?: number };
  /** NEWS_MAX_OPEN_REQUESTS (100 by default). */
  newsMaxOpenRequests?: number;
  /** Team invitations' lifetime and limit (defaults: 7 days, 20 open per entity). */
  invitations?: InvitationSettings;
  /** OAuth clients (their simulator's endpoints); unset, no provider is configured. */
  oauth?: { searchnet?: Partial<OAuthClientSettings>; socialvideo?: Partial<OAuthClientSettings> };
  /** OAUTH_PENDING_LINK_SECONDS, in milliseconds (10 minutes by default). */
  oauthPendingLinkMs?: number;
  /** ELECTIONS_PANEL_URL (its simulator); unset, syncs answer 503. */
  electionsPanelUrl?: string;
  /** ELECTIONS_IMPORT_HOSTS (the court's open-data hosts by default). */
  electionsImportHosts?: string[];
  /** SOCIALNET_GRAPH_URL (the messenger's send API; its simulator). Unset, an address nothing answers. */
  socialnetGraphUrl?: string;
  /**
   * Listen on a port chosen beforehand and make it the app's PUBLIC_URL, so that addresses the app gives
   * out for later calls (the SMS delivery-receipt callback) reach it.
   */
  selfPublicUrl?: boolean;
  /** VAPID keys: pushes are sent (to the push service simulator); unset, this app sends none. */
  vapid?: VapidKeys;
  /** Where webhooks and pushes may go: by default http and private addresses too (the tests' stand-ins are on loopback). */
  outbound?: Partial<OutboundPolicy>;
  /** Webhook retries and disabling (WEBHOOK_*): by default 1 s doubled, 10 retries, a day. */
  webhooks?: Partial<WebhookSettings>;
  /** How webhook endpoints' names resolve (the system's DNS by default). */
  lookupAll?: LookupAll;
  /** The certification day of an entity's election for the contact retention (the election calendar's when unset). */
  certificationLookup?: CertificationLookup;
}

/** A provider without credentials: linking its accounts answers 503. */
const unconfiguredOAuth: OAuthClientSettings = {
  clientId: undefined,
  clientSecret: undefined,
  authorizeUrl: 'http://127.0.0.1:9/authorize',
  tokenUrl: 'http://127.0.0.1:9/token',
  profileUrl: 'http://127.0.0.1:9/profile',
  redirectUri: undefined,
};

/** The queue of a test app started without jobs: it holds nothing, and queueing is an error. */
const noJobs = refusingJobQueue('This test app runs no jobs (start it withJobs to queue one)');

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const logs: Array<Record<string, unknown>> = [];
  // The server's options (its redaction included), at debug level.
  const logger = pino(loggerOptions('debug'), new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) logs.push(JSON.parse(line));
      done();
    },
  }));
  const database: TestDatabase = options.database ?? (await createTestDatabase({ migrated: true }));
  const sequelize = await openDatabase(database.url, logger);
  await migrate(sequelize, logger);
  if (options.withMunicipalities) {
    await importMunicipalities(sequelize, { source: SHARED_MUNICIPIOS, sha256: SHARED_MUNICIPIOS_SHA256 });
  }
  const model = defineMunicipalityModel(sequelize);
  const catalog = new MunicipalityCatalog(options.fetchMunicipalities ?? (() => loadAllMunicipalities(model)));
  if (!options.skipInitialLoad) await catalog.reload();

  const mailDir = await mkdtemp(path.join(tmpdir(), 'palanque-mail-'));
  const mailer = options.mailer ?? createMailer({ smtpUrl: undefined, from: 'Palanque <no-reply@palanque.app>', directory: mailDir }, logger);
  const accounts = createAccounts(sequelize, { ...testAccountSettings, ...options.accounts }, mailer, logger);
  const jobs = options.withJobs ? createJobQueue(database.url, sequelize, logger, { pollIntervalMs: 50, pollingIntervalSeconds: 0.5 }) : noJobs;
  await jobs.start();
  const port = options.selfPublicUrl ? await freePort() : 0; // 0: any free port
  const config = { ...defaultAppConfig, ...options.config, ...(options.selfPublicUrl ? { publicUrl: `http://127.0.0.1:${port}` } : {}) };
  const secretsKey = options.sms?.secretsKey === null ? undefined : (options.sms?.secretsKey ?? TEST_SECRETS_KEY);
  const settings: DomainSettings = {
    secretsKey,
    smsProviderUrl: options.sms?.providerUrl ?? 'http://127.0.0.1:9',
    smsSendTimeoutMs: options.sms?.sendTimeoutMs ?? TEST_SMS_SEND_TIMEOUT_MS,
    smsMaxRecipients: options.sms?.maxRecipients ?? 10_000,
    newsMaxOpenRequests: options.newsMaxOpenRequests ?? 100,
    invitations: options.invitations,
    publicUrl: config.publicUrl,
    basePath: config.basePath,
    oauth: { searchnet: { ...unconfiguredOAuth, ...options.oauth?.searchnet }, socialvideo: { ...unconfiguredOAuth, ...options.oauth?.socialvideo } },
    oauthPendingLinkMs: options.oauthPendingLinkMs,
    electionsPanelUrl: options.electionsPanelUrl,
    electionsImportHosts: options.electionsImportHosts,
    socialnetGraph: { graphUrl: options.socialnetGraphUrl ?? 'http://127.0.0.1:9', graphVersion: 'v25.0' },
    vapid: options.vapid,
    outbound: { allowHttp: true, allowPrivateAddresses: true, timeoutMs: 5_000, ...options.outbound },
    webhooks: { ...DEFAULT_WEBHOOK_SETTINGS, retryDelaySeconds: 1, ...options.webhooks },
    lookupAll: options.lookupAll,
    certificationLookup: options.certificationLookup,
  };
  // As the server wires it (serve.ts): the domains count SMS and webhook failures into it.
  const metrics = new Metrics({ poolStats: () => poolStatsOf(sequelize), jobs, readerStats: () => readerOf(sequelize).stats?.() });
  const domains = await createDomains(sequelize, { accounts, jobs, logger, settings, counts: metrics });
  const idempotencyKeys = new IdempotencyStore(sequelize, {
    ttlMs: 24 * 3600_000,
    abandonAfterMs: 60_000,
    box: secretsKey ? SecretBox.fromKey(secretsKey) : undefined,
    ...options.idempotency,
  });
  const app = createApp({
    config,
    logger,
    municipalities: catalog,
    municipalityModel: model,
    accounts,
    ...domains,
    status: { ...statusSourcesOf(sequelize, () => jobs.stats()), ...options.status },
    jobs,
    fastPaths: !options.withoutFastPaths,
    metrics,
    redis: options.redis,
    rateLimitPrefix: options.rateLimitPrefix,
    idempotencyKeys,
    handlers: options.handlers,
    contractFile: options.contractFile,
  });
  // The HTTP server production runs (src/serve.ts), with its default limits. Node's own default keeps an
  // idle connection 5 s: on a loaded machine fetch reused one the server was closing (ECONNRESET).
  const server: Server = await new Promise((resolve) => {
    const listening = createHttpServer(app, PRODUCTION_SERVER_LIMITS).listen(port, '127.0.0.1', () => resolve(listening));
  });
  const { port: listeningPort } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${listeningPort}`,
    sequelize,
    catalog,
    idempotencyKeys,
    database,
    accounts,
    ...domains,
    jobs: options.withJobs ? jobs : undefined,
    mailDir,
    logs,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await jobs.stop();
      await sequelize.close();
      if (!options.database) await database.drop();
      await rm(mailDir, { recursive: true, force: true });
    },
  };
}

/**
 * For a file that starts apps with special settings inside its tests: returns a starter whose apps are
 * closed after each test (call it at the file's top level, where it registers the afterEach hook).
 */
export function appsClosedAfterEach(): (options?: TestAppOptions) => Promise<TestApp> {
  const started: TestApp[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((app) => app.close()));
  });
  return async (options) => {
    const app = await startTestApp(options);
    started.push(app);
    return app;
  };
}
