/**
 * A server that cannot start says why in one JSON log line and exits 1 (issue 41): the port in use, the
 * database unreachable, a migration that fails. The entry point (`src/server.ts`) runs as a process, as
 * `npm start` runs it, configured only by its environment; the message names what to fix, and neither
 * a raw stack nor DATABASE_URL's password is written.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import sqlite3 from 'sqlite3';
import { afterEach, expect, it } from 'vitest';
import { startupFailure } from '../src/serve.js';
import { SHARED_MUNICIPIOS, SHARED_MUNICIPIOS_SHA256 } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { freePort } from './helpers/process.js';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
const EXIT_TIMEOUT_MS = 60_000;

const databases: TestDatabase[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(databases.splice(0).map((database) => database.drop()));
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

interface Outcome {
  code: number | null;
  lines: Array<Record<string, unknown>>;
  stdout: string;
  stderr: string;
}

/** Runs the server until it exits (it must, within EXIT_TIMEOUT_MS). */
function runServer(env: Record<string, string>): Promise<Outcome> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: projectRoot,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      PASSWORD_HASH_COST: '12',
      MUNICIPIOS_SOURCE: SHARED_MUNICIPIOS,
      MUNICIPIOS_SHA256: SHARED_MUNICIPIOS_SHA256,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the server did not exit:\n${stdout}\n${stderr}`));
    }, EXIT_TIMEOUT_MS);
    child.once('close', (code) => {
      clearTimeout(timer);
      const lines = stdout.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
      resolve({ code, lines, stdout, stderr });
    });
  });
}

/** Exit 1, nothing on stderr, only JSON on stdout, and exactly one failure line, the last, saying `message`. */
function expectOneFailureLine(outcome: Outcome, message: RegExp): Record<string, unknown> {
  const context = `${outcome.stdout}\n--- stderr ---\n${outcome.stderr}`;
  expect(outcome.code, context).toBe(1);
  expect(outcome.stderr, context).toBe('');
  const failures = outcome.lines.filter((line) => Number(line.level) >= 50);
  expect(failures, context).toHaveLength(1);
  expect(outcome.lines.at(-1)).toBe(failures[0]);
  expect(failures[0]!.level).toBe(60);
  expect(String(failures[0]!.msg)).toMatch(message);
  return failures[0]!;
}

async function sqliteDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase({ migrated: true });
  databases.push(database);
  return database;
}

it('the port in use', async () => {
  const database = await sqliteDatabase();
  const taken = createServer();
  servers.push(taken);
  const port = await new Promise<number>((resolve) => taken.listen(0, '127.0.0.1', () => resolve((taken.address() as { port: number }).port)));
  const outcome = await runServer({ PORT: String(port), DATABASE_URL: database.url });
  const line = expectOneFailureLine(outcome, new RegExp(`^Could not start: port ${port} on 127\\.0\\.0\\.1 is already in use`));
  expect(line.code).toBe('EADDRINUSE');
}, 90_000);

it('the database unreachable, without its password in the log', async () => {
  const closedPort = await freePort();
  const outcome = await runServer({ PORT: String(await freePort()), DATABASE_URL: `postgres://palanque:s3cret-password@127.0.0.1:${closedPort}/palanque` });
  const line = expectOneFailureLine(outcome, /^Could not start: the database cannot be reached \(ECONNREFUSED\)\. Check DATABASE_URL/);
  expect(line.code).toBe('ECONNREFUSED');
  expect(outcome.stdout).not.toContain('s3cret-password');
}, 90_000);

it('a migration that fails', async () => {
  // An SQLite file where the first migration's table exists without the migration being recorded.
  const folder = await mkdtemp(join(tmpdir(), 'palanque-bad-migration-'));
  databases.push({ url: '', dialect: 'sqlite', drop: () => rm(folder, { recursive: true, force: true }) });
  const file = join(folder, 'bad.sqlite');
  await new Promise<void>((resolve, reject) => {
    const db = new sqlite3.Database(file, (error) => {
      if (error) return reject(error);
      db.exec('CREATE TABLE municipalities (unexpected TEXT)', (failure) => db.close(() => (failure ? reject(failure) : resolve())));
    });
  });
  const outcome = await runServer({ PORT: String(await freePort()), DATABASE_URL: `sqlite:${file}` });
  expectOneFailureLine(outcome, /^Could not start: a database migration failed/);
}, 90_000);

it('a statement cancelled at start names the timeout, not the connection', () => {
  const cancelled = Object.assign(new Error('canceling statement due to statement timeout'), { name: 'SequelizeDatabaseError', parent: { code: '57014' }, original: { code: '57014' } });
  const failure = startupFailure(cancelled, { port: 3000, host: '127.0.0.1' });
  expect(failure.code).toBe('57014');
  expect(failure.message).toMatch(/^Could not start: a database statement was cancelled \(57014\), by DB_STATEMENT_TIMEOUT_MS/);
  expect(failure.message).not.toContain('cannot be reached');
});
