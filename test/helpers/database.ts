/**
 * A fresh, empty database per test file: a temporary SQLite file by default, or, when TEST_DATABASE_URL
 * is set (CI sets it to postgres://postgres@127.0.0.1:5432/test), a new PostgreSQL database created for
 * the file and dropped after it, so test files never see each other's rows.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface TestDatabase {
  url: string;
  dialect: 'sqlite' | 'postgres';
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  return serverUrl ? createPostgresDatabase(serverUrl) : createSqliteDatabase();
}

async function createSqliteDatabase(): Promise<TestDatabase> {
  const dir = await mkdtemp(join(tmpdir(), 'palanque-db-'));
  return {
    url: `sqlite:${join(dir, 'test.sqlite')}`,
    dialect: 'sqlite',
    drop: () => rm(dir, { recursive: true, force: true }),
  };
}

/** A new database on the PostgreSQL server at `serverUrl`, for tests that need PostgreSQL whatever the suite runs on. */
export async function createPostgresDatabase(serverUrl: string): Promise<TestDatabase> {
  const name = `palanque_test_${randomBytes(6).toString('hex')}`;
  await withClient(serverUrl, (client) => client.query(`CREATE DATABASE ${name}`));
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
