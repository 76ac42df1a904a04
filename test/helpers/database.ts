/**
 * A fresh database per test file: a temporary SQLite file by default, or, when TEST_DATABASE_URL is set
 * (CI sets it to postgres://postgres@127.0.0.1:5432/test), a new PostgreSQL database created for the
 * file and dropped after it, so test files never see each other's rows. Empty, or `migrated`: a copy of
 * the template test/global-setup.ts migrated once for the run (empty when there is no template, as in
 * a script outside vitest; the app's own `migrate` then does the work).
 */
import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { inject } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrator.js';

export interface TestDatabase {
  url: string;
  dialect: 'sqlite' | 'postgres';
  drop(): Promise<void>;
}

/** Where the migrated template is: a SQLite file, or a PostgreSQL database's name on TEST_DATABASE_URL's server. */
export type DatabaseTemplate = { dialect: 'sqlite'; file: string } | { dialect: 'postgres'; name: string };

export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  const template = options.migrated ? migratedTemplate() : undefined;
  if (serverUrl) return createPostgresDatabase(serverUrl, template?.dialect === 'postgres' ? template.name : undefined);
  return createSqliteDatabase(template?.dialect === 'sqlite' ? template.file : undefined);
}

/** The template test/global-setup.ts provided, if this runs under vitest with it. */
function migratedTemplate(): DatabaseTemplate | undefined {
  try {
    return inject('migratedDatabaseTemplate');
  } catch {
    return undefined; // not in a vitest worker
  }
}

async function createSqliteDatabase(templateFile?: string): Promise<TestDatabase> {
  const dir = await mkdtemp(join(tmpdir(), 'palanque-db-'));
  const file = join(dir, 'test.sqlite');
  if (templateFile) await copyFile(templateFile, file);
  return {
    url: `sqlite:${file}`,
    dialect: 'sqlite',
    drop: () => rm(dir, { recursive: true, force: true }),
  };
}

/**
 * A new database on the PostgreSQL server at `serverUrl` (a copy of `template` when given), for tests
 * that need PostgreSQL whatever the suite runs on.
 */
export async function createPostgresDatabase(serverUrl: string, template?: string): Promise<TestDatabase> {
  const name = `palanque_test_${randomBytes(6).toString('hex')}`;
  await withClient(serverUrl, (client) => client.query(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    dialect: 'postgres',
    drop: () => withClient(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Migrates a database for test apps to copy (test/global-setup.ts). On SQLite its file is closed before
 * anyone copies it, so the write-ahead log is folded in; a PostgreSQL template must have no connection
 * while it is copied, so the migrating one is closed too.
 */
export async function createMigratedTemplate(): Promise<{ descriptor: DatabaseTemplate; drop(): Promise<void> }> {
  const database = await createTestDatabase();
  const sequelize = await openDatabase(database.url, pino({ level: 'silent' }));
  try {
    await migrate(sequelize, pino({ level: 'silent' }));
  } finally {
    await sequelize.close();
  }
  const descriptor: DatabaseTemplate =
    database.dialect === 'sqlite' ? { dialect: 'sqlite', file: database.url.slice('sqlite:'.length) } : { dialect: 'postgres', name: new URL(database.url).pathname.slice(1) };
  return { descriptor, drop: database.drop };
}
