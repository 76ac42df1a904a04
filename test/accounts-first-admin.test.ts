/**
 * The first admin (src/accounts/first-admin.ts), called directly on a fresh migrated database: with no
 * password configured and a terminal on stdout it creates an admin and prints a generated password exactly
 * once, which then logs in through POST /api/auth/login and has admin powers; off a terminal it creates the
 * admin without a usable password, prints nothing and logs how to set one (no secret in any line); with
 * ADMIN_* settings it uses them and prints nothing; it does nothing once any user exists, and two instances
 * starting together create one admin.
 * The same through the real entry point (src/server.ts as a process) is in server-process.test.ts; the
 * last test here runs that entry point to show that a first start loses no log line at shutdown.
 * Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ensureFirstAdmin, NO_PASSWORD_HASH, type FirstAdminSettings } from '../src/accounts/first-admin.js';
import type { UserRow } from '../src/accounts/models.js';
import type { Logger } from '../src/logger.js';
import { createUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { freePort, waitFor } from './helpers/process.js';

let app: TestApp;

function capturingLogger(): { logger: Logger; text: () => string } {
  let text = '';
  const logger = pino({ level: 'debug' }, new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  }));
  return { logger, text: () => text };
}

async function login(username: string, password: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${app.baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  return { status: response.status, body: await response.json() };
}

async function allUsers(): Promise<UserRow[]> {
  return (await app.accounts.models.User.findAll({ raw: true })) as unknown as UserRow[];
}

const DEFAULTS: FirstAdminSettings = { username: 'admin', email: 'admin@palanque.app', password: undefined };

/** A stdout a person reads (a generated password may be shown there), printing to `print`. */
const terminal = (print: (text: string) => void) => ({ terminal: true, print });
/** A stdout read by a service manager or a log collector. */
const pipe = (print: (text: string) => void) => ({ terminal: false, print });

describe('ensureFirstAdmin', () => {
  beforeEach(async () => {
    app = await startTestApp();
  });

  afterEach(async () => {
    await app?.close();
  });

  it('on an empty database with a terminal, creates an admin and prints its generated password once; that password logs in', async () => {
    expect(await app.accounts.users.count()).toBe(0);
    const { logger, text: logText } = capturingLogger();
    const print = vi.fn<(text: string) => void>();

    expect(await ensureFirstAdmin(app.accounts.users, DEFAULTS, logger, terminal(print))).toBe(true);

    expect(print).toHaveBeenCalledTimes(1);
    const banner = print.mock.calls[0]![0];
    expect(banner).toMatch(/^\s+username: admin$/m);
    const password = /^\s+password: (\S+)$/m.exec(banner)?.[1];
    expect(password).toMatch(/^[A-Za-z2-9]{20}$/);
    // How to change it: the CLI's database task, or a reset link.
    expect(banner).toMatch(/^ {4}palanque user set-password admin$/m);
    expect(banner).toContain('palanque auth reset-password --email admin@palanque.app');
    // Logged, but never with the password.
    expect(logText()).toContain('first admin created');
    expect(logText()).not.toContain(password!);

    const users = await allUsers();
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ username: 'admin', email: 'admin@palanque.app', first_name: 'Admin' });
    expect(Boolean(users[0]!.is_admin)).toBe(true);
    expect(Boolean(users[0]!.is_active)).toBe(true);
    expect(users[0]!.password_hash).not.toContain(password!);

    const session = await login('admin', password!);
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    expect(session.body.data.user).toMatchObject({ username: 'admin', is_admin: true });
    const list = await fetch(`${app.baseUrl}/api/auth/account`, { headers: { Authorization: `Token ${session.body.data.token}` } });
    expect(list.status, 'the new admin has admin powers').toBe(200);

    expect((await login('admin', 'not-the-password-at-all')).status).toBe(401);
  });

  it('generates a different password on each empty database', async () => {
    const print = vi.fn<(text: string) => void>();
    await ensureFirstAdmin(app.accounts.users, DEFAULTS, pino({ level: 'silent' }), terminal(print));
    const other = await startTestApp();
    try {
      await ensureFirstAdmin(other.accounts.users, DEFAULTS, pino({ level: 'silent' }), terminal(print));
    } finally {
      await other.close();
    }
    const passwords = print.mock.calls.map(([text]) => /password: (\S+)/.exec(text)?.[1]);
    expect(passwords).toHaveLength(2);
    expect(passwords[0]).not.toBe(passwords[1]);
  });

  it('off a terminal, creates the admin without a usable password, prints nothing, and logs how to set one', async () => {
    const { logger, text: logText } = capturingLogger();
    const print = vi.fn<(text: string) => void>();

    expect(await ensureFirstAdmin(app.accounts.users, DEFAULTS, logger, pipe(print))).toBe(true);

    expect(print).not.toHaveBeenCalled();
    const users = await allUsers();
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ username: 'admin', email: 'admin@palanque.app', password_hash: NO_PASSWORD_HASH });
    expect(Boolean(users[0]!.is_admin)).toBe(true);
    // No password matches it, not even the stored text itself.
    for (const password of [NO_PASSWORD_HASH, 'admin', 'admin@palanque.app']) expect((await login('admin', password)).status, password).toBe(401);

    const lines = logText().trim().split('\n').map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(lines.map((line) => line.msg)).toEqual(['first admin created', expect.stringContaining('the first admin has no password yet')]);
    expect(lines[1]!.level, 'a warning: someone must act').toBe(40);
    expect(lines[1]!.msg).toContain('`palanque user set-password admin`');
    expect(lines[1]!.msg).toContain('ADMIN_PASSWORD');
    expect(logText()).not.toMatch(/password: \S/);
  });

  it('uses ADMIN_USERNAME / ADMIN_EMAIL / ADMIN_PASSWORD when given, on a terminal or not, and prints nothing', async () => {
    const print = vi.fn<(text: string) => void>();
    const settings = { username: 'Ana.Souza', email: '  Ana.Souza@Palanque.App ', password: 'c4mp4nh4-S3gura!' };
    const { logger, text: logText } = capturingLogger();

    expect(await ensureFirstAdmin(app.accounts.users, settings, logger, terminal(print))).toBe(true);
    expect(logText()).not.toContain(settings.password);
    expect(logText()).not.toContain('no password yet');

    expect(print).not.toHaveBeenCalled();
    const users = await allUsers();
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ username: 'Ana.Souza', email: 'ana.souza@palanque.app' });
    expect(Boolean(users[0]!.is_admin)).toBe(true);
    for (const name of ['ana.souza', 'ana.souza@palanque.app']) {
      const session = await login(name, 'c4mp4nh4-S3gura!');
      expect(session.status, JSON.stringify(session.body)).toBe(200);
      expect(session.body.data.user).toMatchObject({ username: 'Ana.Souza', is_admin: true });
    }
  });

  it('does nothing when a user exists, even a non-admin one', async () => {
    const existing = await createUser(app);
    const print = vi.fn<(text: string) => void>();

    expect(await ensureFirstAdmin(app.accounts.users, DEFAULTS, pino({ level: 'silent' }), terminal(print))).toBe(false);
    expect(await ensureFirstAdmin(app.accounts.users, { ...DEFAULTS, password: 'uma-senha-bem-longa' }, pino({ level: 'silent' }), terminal(print))).toBe(false);

    expect(print).not.toHaveBeenCalled();
    const users = await allUsers();
    expect(users.map((user) => user.id)).toEqual([existing.user.id]);
    expect(Boolean(users[0]!.is_admin)).toBe(false);
  });

  it('does nothing on a second start: one admin, one printed password', async () => {
    const print = vi.fn<(text: string) => void>();
    expect(await ensureFirstAdmin(app.accounts.users, DEFAULTS, pino({ level: 'silent' }), terminal(print))).toBe(true);
    expect(await ensureFirstAdmin(app.accounts.users, DEFAULTS, pino({ level: 'silent' }), terminal(print))).toBe(false);
    expect(print).toHaveBeenCalledTimes(1);
    expect(await app.accounts.users.count()).toBe(1);
  });

  it('creates one admin when two instances start together on the same empty database', async () => {
    const print = vi.fn<(text: string) => void>();
    const results = await Promise.all([
      ensureFirstAdmin(app.accounts.users, DEFAULTS, pino({ level: 'silent' }), terminal(print)),
      ensureFirstAdmin(app.accounts.users, DEFAULTS, pino({ level: 'silent' }), terminal(print)),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(print).toHaveBeenCalledTimes(1);
    expect(await app.accounts.users.count()).toBe(1);
    const password = /password: (\S+)/.exec(print.mock.calls[0]![0])?.[1];
    expect((await login('admin', password!)).status, 'the printed password is the stored one').toBe(200);
  });
});

/**
 * A first start off a terminal (stdout a pipe, read by a log shipper) prints no password: it logs how to
 * set one. The logs go through pino's asynchronous destination on fd 1; when whoever reads stdout falls
 * behind, a log write fails with EAGAIN and waits for a retry; the shutdown must still get every line out
 * before exiting. Here the reader pauses while the server logs 400 requests and is asked to stop.
 * (Under tsx, as here, fd 1 is non-blocking from the start.)
 */
describe('the server process on its first start', () => {
  const projectRoot = fileURLToPath(new URL('..', import.meta.url));
  let database: TestDatabase | undefined;

  afterAll(async () => {
    await database?.drop();
  });

  it(
    'prints no password on a pipe, and loses no log line at shutdown when stdout is read late',
    async () => {
      database = await createTestDatabase();
      const port = await freePort();
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
        cwd: projectRoot,
        env: {
          ...process.env,
          PORT: String(port),
          HOST: '127.0.0.1',
          LOG_LEVEL: 'info',
          DATABASE_URL: database.url,
          MUNICIPIOS_SOURCE: `http://127.0.0.1:${await freePort()}/municipios.csv`,
          MUNICIPIOS_SHA256: '',
          PASSWORD_HASH_COST: '12',
          ADMIN_USERNAME: '',
          ADMIN_EMAIL: '',
          ADMIN_PASSWORD: '',
          RATE_LIMIT_READ: '',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const ids = Array.from({ length: 400 }, (_, i) => `flood-${i}`);
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const exit = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
      try {
        await waitFor(() => (stdout.includes('"msg":"listening on') ? true : undefined), {
          timeoutMs: 60_000, // a build-free start, but slow when the machine is busy with the rest of the suite
          what: 'the server to listen',
          output: () => stdout + stderr,
        });
        expect(stdout, 'no password on a pipe').not.toMatch(/password: \S/);
        // Run from its sources, the server names the CLI's sources and the project's tsx, by their paths (test/cli-first-start.test.ts runs them).
        expect(stdout).toContain(`${projectRoot}node_modules/.bin/tsx ${projectRoot}cli/palanque.ts user set-password admin`);
        expect(stdout).toContain(`auth reset-password --email <its e-mail> --base-url http://127.0.0.1:${port}`);

        // The reader falls behind: the pipe fills while the server logs the requests, then it stops.
        child.stdout.pause();
        for (let i = 0; i < ids.length; i += 20) {
          await Promise.all(ids.slice(i, i + 20).map((id) => fetch(`http://127.0.0.1:${port}/api/municipios/`, { headers: { 'X-Request-Id': id } }).then((r) => r.text())));
        }
        child.kill('SIGTERM');
        await new Promise((resolve) => setTimeout(resolve, 500));
        child.stdout.resume();
        expect(await exit, stdout + stderr).toBe(0);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }

      const lines = stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
      const logged = new Set(lines.map((line) => line.request_id));
      expect(ids.filter((id) => !logged.has(id)), 'request log lines lost').toEqual([]);
      expect(lines.at(-1)).toMatchObject({ msg: 'shutdown complete' });
    },
    90_000,
  );
});
