/**
 * The real application on a test database, listening on a free loopback port: migrated, optionally loaded
 * with the shared municipality file, with its logs captured so tests can read them.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterEach } from 'vitest';
import type { Redis } from 'ioredis';
import type { Sequelize } from 'sequelize';
import { createApp, type AppConfig } from '../../src/app.js';
import { openDatabase, poolStatsOf } from '../../src/db/database.js';
import { Metrics } from '../../src/http/metrics.js';
import { IdempotencyStore, type IdempotencySettings } from '../../src/http/idempotency.js';
import type { OperationHandlers } from '../../src/http/operations.js';
import { migrate } from '../../src/db/migrator.js';
import { MunicipalityCatalog } from '../../src/municipalities/catalog.js';
import { importMunicipalities } from '../../src/municipalities/import.js';
import { defineMunicipalityModel, loadAllMunicipalities, type Municipality } from '../../src/municipalities/model.js';
import { DEFAULT_MUNICIPIOS_SHA256 } from '../../src/config.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createAccounts, type Accounts, type AccountSettings } from '../../src/accounts/index.js';
import { createMailer, type Mailer } from '../../src/mail/mailer.js';
import { createEntities, type Entities } from '../../src/entities/index.js';
import { createResearchBookmarks } from '../../src/research/bookmarks.js';
import { createNewsSources } from '../../src/news/sources.js';
import { statusSourcesOf, type StatusSources } from '../../src/control/status.js';

/** Accounts as configured by default, except a cheap password hash: tests log in hundreds of times. */
export const testAccountSettings: AccountSettings = {
  tokenLifetimeMs: 7 * 24 * 3600_000,
  loginLock: { maxFailures: 5, windowMs: 15 * 60_000 },
  passwordResetLifetimeMs: 30 * 60_000,
  passwordHashCost: 12,
};

/** Tests and CI read the municipality list from the shared folder, never from the network. */
export const SHARED_MUNICIPIOS = process.env.MUNICIPIOS_TEST_SOURCE ?? fileURLToPath(new URL('../../../shared/data/municipios.csv', import.meta.url));
export const SHARED_MUNICIPIOS_SHA256 = DEFAULT_MUNICIPIOS_SHA256;

export const defaultAppConfig: AppConfig = {
  basePath: '',
  publicUrl: undefined,
  trustProxy: false,
  bodyLimit: 1024 * 1024,
  validateResponses: true,
  corsOrigins: [],
  metricsToken: undefined,
  assistants: [],
  docsUrl: undefined,
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
  accounts?: Partial<AccountSettings>;
  /** Send mail through this instead of .eml files in a temporary folder. */
  mailer?: Mailer;
  /** Replace what basicStatus reads (by default the test database, and an idle job queue: the test app runs none). */
  status?: Partial<StatusSources>;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) logs.push(JSON.parse(line));
      done();
    },
  }));
  const database: TestDatabase = options.database ?? (await createTestDatabase());
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
  const entities = createEntities(sequelize);
  const idempotencyKeys = new IdempotencyStore(sequelize, { ttlMs: 24 * 3600_000, abandonAfterMs: 60_000, ...options.idempotency });
  const app = createApp({
    config: { ...defaultAppConfig, ...options.config },
    logger,
    municipalities: catalog,
    municipalityModel: model,
    accounts,
    entities,
    researchBookmarks: createResearchBookmarks(sequelize),
    newsSources: createNewsSources(sequelize),
    status: { ...statusSourcesOf(sequelize, async () => ({ queued: 0, running: 0, failed: 0 })), ...options.status },
    fastPaths: !options.withoutFastPaths,
    metrics: new Metrics({ poolStats: () => poolStatsOf(sequelize) }),
    redis: options.redis,
    rateLimitPrefix: options.rateLimitPrefix,
    idempotencyKeys,
    handlers: options.handlers,
  });
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    sequelize,
    catalog,
    idempotencyKeys,
    database,
    accounts,
    entities,
    mailDir,
    logs,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
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
