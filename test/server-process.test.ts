/**
 * The real entry point, `src/server.ts`, run as a process the way `npm start` runs it (through tsx instead
 * of the build): configured only by its environment, on a fresh test database (SQLite, or PostgreSQL when
 * TEST_DATABASE_URL is set). The in-process app tests cannot prove what only the entry point does:
 * migrating and importing on first start (and not again), creating the first admin (off a terminal without
 * a password, with a log line naming the command that sets one; on a terminal with a generated password
 * shown once), starting without reachable reference data and
 * picking it up later without a restart, JSON logs tagged with the request id (and, on a terminal only, one
 * plain line with the addresses of the API and its documentation), a clean exit on SIGTERM
 * and SIGINT, and refusing to start on a bad configuration.
 *
 * The last part tests createShutdown (src/lifecycle.ts) in process on a plain node:http server, where the
 * timing of requests in flight can be controlled: they finish, new connections are refused, the database
 * is released after the server closed, and the bound cuts what does not finish.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Agent, createServer, get, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import { createShutdown } from '../src/lifecycle.js';
import { startLine } from '../src/serve.js';
import type { Logger } from '../src/logger.js';
import { importMunicipalities } from '../src/municipalities/import.js';
import { SHARED_MUNICIPIOS, SHARED_MUNICIPIOS_SHA256 } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { freePort, waitFor } from './helpers/process.js';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
// A start builds the contract's validator and imports 5,570 municipalities: over 30 s once on a machine loaded by
// three test files at a time and a second suite.
const PROCESS_TEST_TIMEOUT = 150_000;
const START_TIMEOUT_MS = 60_000;

type LogLine = Record<string, unknown>;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface ServerProcess {
  port: number;
  baseUrl: string;
  /** stdout, one parsed JSON object per line (a line that is not JSON is kept as `{ raw }`). */
  lines: LogLine[];
  stderr(): string;
  /** Everything the process wrote, for failure messages. */
  output(): string;
  /** Resolves once the process exited and its output was read to the end. */
  exit: Promise<Exit>;
  exited(): boolean;
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

const processes = new Set<ServerProcess>();
const databases: TestDatabase[] = [];

afterEach(async () => {
  await Promise.all([...processes].map((server) => (server.exited() ? server.exit : server.stop('SIGKILL'))));
  processes.clear();
  await Promise.all(databases.splice(0).map((database) => database.drop()));
});

afterAll(async () => {
  // Nothing should be left; this only guards against a failure inside afterEach itself.
  await Promise.all([...processes].map((server) => server.stop('SIGKILL')));
});

async function newDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase();
  databases.push(database);
  return database;
}

/** Spawns `node --import tsx src/server.ts` with the test's environment, without waiting for it. */
async function spawnServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const port = env.PORT !== undefined && /^\d+$/.test(env.PORT) ? Number(env.PORT) : await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: projectRoot,
    // A cheap password hash: a start on an empty database hashes the first admin's password.
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', PASSWORD_HASH_COST: '12', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  const rawStdout: string[] = [];
  let stderr = '';
  createInterface({ input: child.stdout }).on('line', (line) => {
    rawStdout.push(line);
    try {
      lines.push(JSON.parse(line) as LogLine);
    } catch {
      lines.push({ raw: line });
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let hasExited = false;
  const exit = new Promise<Exit>((resolve) => {
    child.once('close', (code, signal) => {
      hasExited = true;
      resolve({ code, signal });
    });
  });
  const server: ServerProcess = {
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    lines,
    stderr: () => stderr,
    output: () => `--- stdout ---\n${rawStdout.join('\n')}\n--- stderr ---\n${stderr}`,
    exit,
    exited: () => hasExited,
    stop(signal = 'SIGTERM') {
      if (!hasExited) child.kill(signal);
      return exit;
    },
  };
  processes.add(server);
  return server;
}

/** Spawns the server and waits for its `listening on` line. */
async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const server = await spawnServerProcess(env);
  await waitFor(() => server.lines.find((line) => messageOf(line).startsWith('listening on')), {
    timeoutMs: START_TIMEOUT_MS,
    what: 'the server to log "listening on"',
    failEarly: () => (server.exited() ? 'the server exited' : undefined),
    output: server.output,
  });
  return server;
}

/** A command with this environment and standard input, from the project's folder. */
function runCommand(command: string, args: string[], env: Record<string, string>, input: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: projectRoot, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
    child.stdin.end(input);
  });
}

/** The generated password in the first admin's banner (first-admin.ts), if the server printed one. */
function printedPasswords(server: ServerProcess): string[] {
  return server.lines.flatMap((line) => (typeof line.raw === 'string' ? (/^ {4}password: (\S+)$/.exec(line.raw)?.slice(1) ?? []) : []));
}

function messageOf(line: LogLine): string {
  return typeof line.msg === 'string' ? line.msg : '';
}

interface HttpResult {
  status: number;
  headers: Headers;
  body: unknown;
}

async function request(url: string, headers: Record<string, string> = {}): Promise<HttpResult> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body };
}

/** Whether a TCP connection to the port is refused (nothing listens). */
function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') resolve(true);
      else reject(error);
    });
  });
}

/** A source URL that cannot be reached: a free loopback port with nothing listening on it. */
async function unreachableSource(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}/municipios.csv`;
}

function sqliteFile(database: TestDatabase): string {
  return database.url.slice('sqlite:'.length);
}

describe('npm start (src/server.ts as a process)', () => {
  it(
    'migrates an empty database, imports the municipality list, serves it, and does not import again on restart',
    async () => {
      const database = await newDatabase();
      const env = { DATABASE_URL: database.url, MUNICIPIOS_SOURCE: SHARED_MUNICIPIOS, MUNICIPIOS_SHA256: SHARED_MUNICIPIOS_SHA256 };

      const first = await startServerProcess(env);
      expect(first.lines).toContainEqual(expect.objectContaining({ msg: 'migration', event: 'migrated', name: '0001-municipalities' }));
      expect(first.lines).toContainEqual(
        expect.objectContaining({ msg: 'municipality list imported', rows: 5570, inserted: 5570, sha256: SHARED_MUNICIPIOS_SHA256 }),
      );
      expect(first.lines).toContainEqual(
        expect.objectContaining({ msg: `listening on http://127.0.0.1:${first.port}`, port: first.port, database: database.dialect }),
      );

      const list = await request(`${first.baseUrl}/api/municipios/`);
      expect(list.status).toBe(200);
      expect(list.headers.get('content-type')).toMatch(/^application\/json/);
      expect(list.body).toMatchObject({ count: 5570, total_pages: 186 });
      expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });

      const second = await startServerProcess(env);
      expect(second.lines.filter((line) => messageOf(line) === 'municipality list imported'), second.output()).toEqual([]);
      expect(second.lines.filter((line) => line.event === 'migrated'), 'no migration is applied twice').toEqual([]);
      const again = await request(`${second.baseUrl}/api/municipios/?page=186`);
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ count: 5570, total_pages: 186, links: { next: null } });
    },
    PROCESS_TEST_TIMEOUT,
  );

  it(
    'starts without reachable reference data, answers 503 in the error model, and serves the data once imported, without a restart',
    async () => {
      const database = await newDatabase();
      const source = await unreachableSource();
      const server = await startServerProcess({ DATABASE_URL: database.url, MUNICIPIOS_SOURCE: source, MUNICIPIOS_SHA256: SHARED_MUNICIPIOS_SHA256 });

      const howToLoad = server.lines.filter((line) => line.level === 40 && messageOf(line).includes('municipios:import'));
      expect(howToLoad, server.output()).toHaveLength(1);
      expect(howToLoad[0]).toMatchObject({ source, reason: expect.stringContaining(source) });
      expect(server.lines.filter((line) => messageOf(line) === 'municipality list imported')).toEqual([]);

      const unavailable = await request(`${server.baseUrl}/api/municipios/`);
      expect(unavailable.status).toBe(503);
      expect(unavailable.headers.get('content-type')).toMatch(/^application\/json/);
      expect(unavailable.body).toMatchObject({
        success: false,
        error: { code: 'reference_data_unavailable', message: expect.stringContaining('municipios:import') },
        request_id: unavailable.headers.get('x-request-id'),
      });
      expect(unavailable.headers.get('x-request-id')).toBeTruthy();

      // What an administrator does next: `npm run municipios:import` against the same database.
      const sequelize = await openDatabase(database.url, pino({ level: 'silent' }));
      try {
        const report = await importMunicipalities(sequelize, { source: SHARED_MUNICIPIOS, sha256: SHARED_MUNICIPIOS_SHA256 });
        expect(report.inserted).toBe(5570);
      } finally {
        await sequelize.close();
      }

      // The catalog retries an empty list at most every 5 s, so the data shows up within that delay.
      const served = await waitFor(
        async () => {
          const attempt = await request(`${server.baseUrl}/api/municipios/`);
          return attempt.status === 200 ? attempt : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 250, what: 'the running server to serve the imported list', output: server.output },
      );
      expect(served.body).toMatchObject({ count: 5570, total_pages: 186 });
      expect(server.exited()).toBe(false);
    },
    PROCESS_TEST_TIMEOUT,
  );

  it(
    'logs JSON lines carrying the request id on every line of a request',
    async () => {
      const database = await newDatabase();
      const server = await startServerProcess({
        DATABASE_URL: database.url,
        MUNICIPIOS_SOURCE: SHARED_MUNICIPIOS,
        MUNICIPIOS_SHA256: SHARED_MUNICIPIOS_SHA256,
      });

      const tagged = await request(`${server.baseUrl}/api/municipios/`, { 'X-Request-Id': 'test-req-42' });
      expect(tagged.status).toBe(200);
      expect(tagged.headers.get('x-request-id')).toBe('test-req-42');

      const generated = await request(`${server.baseUrl}/api/municipios/?page=2`);
      const generatedId = generated.headers.get('x-request-id');
      expect(generatedId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

      // Requests that end in errors are logged with their id too.
      expect((await request(`${server.baseUrl}/api/municipios/?page=0`, { 'X-Request-Id': 'test-req-bad-page' })).status).toBe(400);
      expect((await request(`${server.baseUrl}/api/no-such-path`, { 'X-Request-Id': 'test-req-no-path' })).status).toBe(404);

      const requestLines = await waitFor(
        () => {
          const found = server.lines.filter((line) => 'req' in line || 'res' in line);
          return found.length >= 4 ? found : undefined;
        },
        { timeoutMs: 10_000, what: 'the four request log lines', output: server.output },
      );

      const ofTagged = server.lines.filter((line) => line.request_id === 'test-req-42');
      expect(ofTagged.length, server.output()).toBeGreaterThanOrEqual(1);
      expect(ofTagged).toContainEqual(
        expect.objectContaining({ level: 30, req: expect.objectContaining({ method: 'GET', url: '/api/municipios/' }), res: expect.objectContaining({ statusCode: 200 }) }),
      );
      expect(server.lines.filter((line) => line.request_id === generatedId)).toHaveLength(1);
      for (const id of ['test-req-bad-page', 'test-req-no-path']) {
        expect(server.lines.filter((line) => line.request_id === id), id).toHaveLength(1);
      }
      for (const line of requestLines) {
        expect(line.request_id, JSON.stringify(line)).toEqual(expect.any(String));
        expect(line.request_id).not.toBe('');
      }
      // Off a terminal every stdout line is a JSON log line of the service: no start line, no password banner.
      expect(server.lines.filter((line) => 'raw' in line || line.service !== 'palanque')).toEqual([]);
      expect(server.lines.find((line) => messageOf(line).startsWith('listening on'))).toMatchObject({ port: server.port });
    },
    PROCESS_TEST_TIMEOUT,
  );

  it(
    'off a terminal, creates the first admin without a password and logs how to set one; the command it names sets one, and a restart prints nothing',
    async () => {
      const database = await newDatabase();
      // No ADMIN_* (empty means unset): on a terminal a password would be generated and shown; here stdout is a pipe.
      const env = {
        DATABASE_URL: database.url,
        MUNICIPIOS_SOURCE: await unreachableSource(),
        MUNICIPIOS_SHA256: '',
        ADMIN_USERNAME: '',
        ADMIN_EMAIL: '',
        ADMIN_PASSWORD: '',
        PASSWORD_HASH_COST: '12',
        SECRETS_KEY: '',
      };
      const login = async (baseUrl: string, password: string) => {
        const response = await fetch(`${baseUrl}/api/auth/login`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ username: 'admin', password }),
        });
        return { status: response.status, body: (await response.json()) as { data?: { user?: { is_admin?: boolean } } } };
      };

      const first = await startServerProcess(env);
      expect(printedPasswords(first), first.output()).toEqual([]);
      expect(first.lines.filter((line) => 'raw' in line), 'only JSON log lines off a terminal').toEqual([]);
      expect(first.lines).toContainEqual(expect.objectContaining({ msg: 'first admin created', username: 'admin', service: 'palanque' }));
      const howTo = first.lines.find((line) => messageOf(line).startsWith('the first admin has no password yet'));
      expect(howTo, first.output()).toMatchObject({ level: 40, username: 'admin' });
      // The CLI named by its path, as written runnable from any folder (issue 46 §4: no palanque on the PATH).
      const named = /`([^`]*\/cli\/palanque\.(?:ts|js) user set-password admin)`/.exec(messageOf(howTo!))?.[1];
      expect(named, messageOf(howTo!)).toBeDefined();
      // Without SECRETS_KEY (development) idempotent answers are kept in clear: said once, at start.
      expect(first.lines.filter((line) => /^SECRETS_KEY is not set/.test(messageOf(line) ?? '')), first.output()).toHaveLength(1);
      expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });

      // What the line says to do, on the same database.
      const password = 'a-senha-escolhida-pelo-admin';
      const [command, ...words] = named!.split(' ');
      const cli = await runCommand(command!, [...words, '--password-stdin'], { DATABASE_URL: database.url, PASSWORD_HASH_COST: '12', LOG_LEVEL: 'warn' }, `${password}\n`);
      expect(cli.code, cli.output).toBe(0);

      const second = await startServerProcess(env);
      expect(printedPasswords(second), second.output()).toEqual([]);
      expect(second.lines.filter((line) => messageOf(line) === 'first admin created')).toEqual([]);
      expect(second.lines.filter((line) => messageOf(line).startsWith('the first admin has no password yet'))).toEqual([]);
      const session = await login(second.baseUrl, password);
      expect(session.status, JSON.stringify(session.body)).toBe(200);
      expect(session.body.data?.user?.is_admin).toBe(true);
      // No secret in any line of either start.
      expect(JSON.stringify([first.lines, second.lines])).not.toContain(password);
    },
    PROCESS_TEST_TIMEOUT * 2,
  );

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'shuts down gracefully on %s: exit code 0, "shutdown complete", the database closed and the port free',
    async (signal) => {
      const database = await newDatabase();
      const server = await startServerProcess({ DATABASE_URL: database.url, MUNICIPIOS_SOURCE: await unreachableSource(), MUNICIPIOS_SHA256: '' });
      // Leaves an idle keep-alive connection in this process's pool: it must not hold the shutdown.
      expect((await request(`${server.baseUrl}/api/municipios/`)).status).toBe(503);

      const started = Date.now();
      const exit = await server.stop(signal);
      const elapsed = Date.now() - started;
      expect(exit, server.output()).toEqual({ code: 0, signal: null });
      expect(elapsed).toBeLessThan(5_000);

      const last = server.lines.slice(-2);
      expect(last, server.output()).toEqual([
        expect.objectContaining({ msg: 'shutting down: finishing requests in flight', reason: signal }),
        expect.objectContaining({ msg: 'shutdown complete' }),
      ]);
      expect(server.stderr()).toBe('');
      expect(await connectionRefused(server.port)).toBe(true);
      if (database.dialect === 'sqlite') {
        // SQLite removes the write-ahead log when the last connection closes cleanly (a killed process leaves it).
        expect(existsSync(`${sqliteFile(database)}-wal`)).toBe(false);
      }
    },
    PROCESS_TEST_TIMEOUT,
  );

  it.skipIf(!existsSync('/usr/bin/script'))(
    'on a terminal, shows the first admin\'s generated password once (it logs in, and is in no log line), and one plain line with the addresses of the API and of /docs',
    async () => {
      const database = await newDatabase();
      const port = await freePort();
      // script(1) gives the server a terminal; its output is what the terminal shows. No ADMIN_*: `npm start`'s quick start.
      const child = spawn('/usr/bin/script', ['-qec', `'${process.execPath}' --import tsx src/server.ts`, '/dev/null'], {
        cwd: projectRoot,
        env: {
          ...process.env,
          PORT: String(port),
          HOST: '127.0.0.1',
          LOG_LEVEL: 'info',
          DATABASE_URL: database.url,
          MUNICIPIOS_SOURCE: SHARED_MUNICIPIOS,
          MUNICIPIOS_SHA256: SHARED_MUNICIPIOS_SHA256,
          ADMIN_USERNAME: '',
          ADMIN_EMAIL: '',
          ADMIN_PASSWORD: '',
          PASSWORD_HASH_COST: '12',
        },
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise((resolve) => child.once('close', resolve));
      try {
        await waitFor(() => (output.includes('Ctrl-C stops it.') ? true : undefined), { timeoutMs: START_TIMEOUT_MS, what: 'the start line', output: () => output });
        const base = `http://127.0.0.1:${port}`;
        const lines = output.split(/\r?\n/);
        expect(lines).toContain(`Palanque API on ${base}/ (documentation: ${base}/docs). Ctrl-C stops it.`);
        expect((await fetch(`${base}/docs`)).status).toBe(200);
        const password = lines.flatMap((line) => /^ {4}password: (\S+)$/.exec(line)?.slice(1) ?? []);
        expect(password, output).toHaveLength(1);
        expect(lines.filter((line) => line.startsWith('{') && line.includes(password[0]!)), 'the password in a log line').toEqual([]);
        const session = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: password[0] }) });
        expect(session.status, await session.clone().text()).toBe(200);
      } finally {
        process.kill(-child.pid!, 'SIGTERM');
        await exited;
      }
    },
    PROCESS_TEST_TIMEOUT,
  );

  it('decides the start line from whether stdout is a terminal', () => {
    expect(startLine('http://127.0.0.1:8000', true)).toBe('Palanque API on http://127.0.0.1:8000/ (documentation: http://127.0.0.1:8000/docs). Ctrl-C stops it.');
    expect(startLine('https://api.palanque.app/v1', true)).toContain('documentation: https://api.palanque.app/v1/docs');
    expect(startLine('http://127.0.0.1:8000', false)).toBeUndefined();
  });

  it(
    'refuses to start on an invalid configuration, naming the variable',
    async () => {
      const database = await newDatabase();
      const server = await spawnServerProcess({ PORT: 'abc', NODE_ENV: 'production', PUBLIC_URL: '', SECRETS_KEY: '', DATABASE_URL: database.url, MUNICIPIOS_SOURCE: SHARED_MUNICIPIOS });

      const exit = await Promise.race([
        server.exit,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still running after 30 s\n${server.output()}`)), START_TIMEOUT_MS)),
      ]);
      expect(exit.code, server.output()).not.toBe(0);
      expect(exit.code).not.toBeNull();
      expect(server.stderr()).toMatch(/Invalid configuration:[\s\S]*PORT: /);
      expect(server.stderr(), 'production requires PUBLIC_URL and SECRETS_KEY').toMatch(/PUBLIC_URL: is required when NODE_ENV=production[\s\S]*SECRETS_KEY: is required/);
      expect(server.lines, 'no log line: the configuration is checked before anything starts').toEqual([]);
      if (database.dialect === 'sqlite') {
        expect(existsSync(sqliteFile(database)), 'the database is not even opened').toBe(false);
      }
    },
    PROCESS_TEST_TIMEOUT,
  );
});

describe('createShutdown (in process)', () => {
  const servers: Server[] = [];

  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      if (server.listening) await new Promise((resolve) => server.close(resolve));
    }
  });

  function capturingLogger(): { logger: Logger; lines: LogLine[] } {
    const lines: LogLine[] = [];
    const logger = pino(
      { level: 'debug' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as LogLine);
          done();
        },
      }),
    );
    return { logger, lines };
  }

  async function listen(handler: RequestListener): Promise<{ server: Server; port: number }> {
    const server = createServer(handler);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, port: (server.address() as AddressInfo).port };
  }

  /** GET / with node:http; `agent: false` sends Connection: close, a keep-alive Agent keeps the socket. */
  function httpGet(port: number, agent: Agent | false = false): Promise<{ status: number; body: string; connection: string | undefined }> {
    return new Promise((resolve, reject) => {
      get({ host: '127.0.0.1', port, path: '/', agent }, (res: IncomingMessage) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }));
        res.on('error', reject);
      }).on('error', reject);
    });
  }

  /** A handler that answers after `delayMs`, and a promise resolved when a request reached it. */
  function slowHandler(delayMs: number): { handler: RequestListener; reached: Promise<void> } {
    let markReached = () => {};
    const reached = new Promise<void>((resolve) => (markReached = resolve));
    const handler = (_req: IncomingMessage, res: ServerResponse) => {
      markReached();
      setTimeout(() => res.end('done'), delayMs);
    };
    return { handler, reached };
  }

  it('lets the request in flight finish, refuses new connections, then releases once; a second call returns the same promise', async () => {
    const { handler, reached } = slowHandler(300);
    const { server, port } = await listen(handler);
    const { logger, lines } = capturingLogger();
    const events: string[] = [];
    server.on('close', () => events.push('server closed'));
    const release = vi.fn(async () => {
      events.push(server.listening ? 'release while listening' : 'release');
    });
    const shutdown = createShutdown(server, { timeoutMs: 5_000, logger, release });

    let inFlightDone = false;
    const inFlight = httpGet(port).finally(() => (inFlightDone = true));
    await reached;

    const started = Date.now();
    const first = shutdown('test');
    expect(shutdown('again')).toBe(first);
    expect(await connectionRefused(port)).toBe(true);
    expect(inFlightDone, 'the new connection was refused while the request was still in flight').toBe(false);

    expect(await inFlight).toMatchObject({ status: 200, body: 'done' });
    await first;
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(release).toHaveBeenCalledTimes(1);
    expect(events).toEqual(['server closed', 'release']);
    expect(shutdown('third')).toBe(first);
    expect(release).toHaveBeenCalledTimes(1);
    expect(lines.map(messageOf)).toEqual(['shutting down: finishing requests in flight', 'shutdown complete']);
    expect(lines[0]).toMatchObject({ reason: 'test', timeout_ms: 5_000 });
  });

  it('closes idle keep-alive connections at once', async () => {
    const { server, port } = await listen((_req, res) => res.end('ok'));
    const agent = new Agent({ keepAlive: true });
    try {
      expect(await httpGet(port, agent)).toMatchObject({ status: 200, connection: 'keep-alive' });
      const release = vi.fn(async () => {});
      const started = Date.now();
      await createShutdown(server, { timeoutMs: 5_000, logger: pino({ level: 'silent' }), release })('test');
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(release).toHaveBeenCalledTimes(1);
    } finally {
      agent.destroy();
    }
  });

  it('closes a keep-alive connection as soon as its in-flight request is answered, well before the timeout', async () => {
    const { handler, reached } = slowHandler(200);
    const { server, port } = await listen(handler);
    const agent = new Agent({ keepAlive: true });
    try {
      const inFlight = httpGet(port, agent);
      await reached;
      const started = Date.now();
      const done = createShutdown(server, { timeoutMs: 5_000, logger: pino({ level: 'silent' }), release: async () => {} })('test');
      expect(await inFlight).toMatchObject({ status: 200, body: 'done' });
      await done;
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      agent.destroy();
    }
  });

  it('cuts the connections still open when the timeout is reached', async () => {
    let markReached = () => {};
    const reached = new Promise<void>((resolve) => (markReached = resolve));
    const { server, port } = await listen(() => markReached()); // never answers
    const { logger, lines } = capturingLogger();
    const release = vi.fn(async () => {});
    const hanging = httpGet(port).then(
      () => 'answered',
      (error: NodeJS.ErrnoException) => error.code,
    );
    await reached;

    const started = Date.now();
    await createShutdown(server, { timeoutMs: 100, logger, release })('test');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await hanging).toBe('ECONNRESET');
    expect(release).toHaveBeenCalledTimes(1);
    expect(lines).toContainEqual(expect.objectContaining({ level: 40, msg: 'shutdown timeout reached: closing the remaining connections' }));
    expect(lines.at(-1)).toMatchObject({ msg: 'shutdown complete' });
  });
});
