/**
 * The first start's hint works as written (issue 46 §4): `npm install` puts no `palanque` on the PATH (npm
 * links a package's bin for the packages that depend on it, never for itself), and the CLI's default
 * server is 127.0.0.1:8000, so the banner's commands name the CLI by its path (node and the built file;
 * tsx and the sources for a server run from its sources) with --base-url set to the server's own address.
 * Here a built server on an empty database, on a terminal (script(1)) and on a port other than 8000,
 * prints the banner; its login line, run as it is written from another folder, asks for the password and
 * logs in.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCliOf } from '../src/accounts/first-admin.js';
import { localUrlOf } from '../src/serve.js';
import { SHARED_MUNICIPIOS, SHARED_MUNICIPIOS_SHA256 } from './helpers/app.js';
import { buildCli, runProcess, shown, type BuiltCli, type CliResult } from './helpers/cli.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { freePort, waitFor } from './helpers/process.js';

const root = fileURLToPath(new URL('..', import.meta.url));
let built: BuiltCli;
/** The built project's folder (its package.json and node_modules link back to the repository's). */
let project: string;
const databases: TestDatabase[] = [];

/** The environment without the test's own PALANQUE_* and DATABASE_URL. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PALANQUE_') && name !== 'DATABASE_URL'));
  return { ...env, NO_COLOR: '1', ...extra };
}

/** Runs a shell command line on a terminal (script(1)), typing each answer once its prompt is up. */
function onTerminal(commandLine: string, cwd: string, env: NodeJS.ProcessEnv, answers: Array<[prompt: string, typed: string]>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/script', ['-qec', commandLine, '/dev/null'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let next = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (next < answers.length && stdout.includes(answers[next]![0])) child.stdin.write(`${answers[next++]![1]}\r`);
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr: '' }));
  });
}

beforeAll(async () => {
  built = await buildCli();
  project = join(built.work, 'build');
}, 180_000);

afterAll(async () => {
  await Promise.all(databases.map((database) => database.drop()));
  await built?.remove();
});

describe.skipIf(!existsSync('/usr/bin/script'))('the first start on a terminal', () => {
  it('prints a login command that, run as written from any folder, logs in to this server', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const port = await freePort();
    expect(port).not.toBe(8000);
    const config = join(built.work, 'first-start.json');
    const elsewhere = await mkdtemp(join(tmpdir(), 'palanque-elsewhere-'));
    // The built server, as `npm start` runs it once built (and the image does).
    const server = spawn('/usr/bin/script', ['-qec', `'${process.execPath}' dist/src/server.js`, '/dev/null'], {
      cwd: project,
      env: cleanEnv({
        PORT: String(port),
        HOST: '0.0.0.0',
        LOG_LEVEL: 'info',
        DATABASE_URL: database.url,
        MUNICIPIOS_SOURCE: SHARED_MUNICIPIOS,
        MUNICIPIOS_SHA256: SHARED_MUNICIPIOS_SHA256,
        ADMIN_USERNAME: '',
        ADMIN_EMAIL: '',
        ADMIN_PASSWORD: '',
        PASSWORD_HASH_COST: '12',
      }),
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise((resolve) => server.once('close', resolve));
    try {
      await waitFor(() => (output.includes('Ctrl-C stops it.') ? true : undefined), { timeoutMs: 90_000, what: 'the start line', output: () => output });
      const lines = output.split(/\r?\n/);
      const password = lines.flatMap((line) => /^ {4}password: (\S+)$/.exec(line)?.slice(1) ?? [])[0]!;
      const intro = lines.indexOf('  Log in with the admin command line and change it:');
      expect(intro, output).toBeGreaterThan(-1);
      const loginLine = lines[intro + 1]!.trim();
      // HOST 0.0.0.0 is reached on loopback; the port is the server's, not the CLI's default 8000.
      const cli = `node ${join(project, 'dist', 'cli', 'palanque.js')}`;
      expect(loginLine).toBe(`${cli} login -u admin --base-url http://127.0.0.1:${port}`);
      expect(lines[intro + 2]!.trim()).toBe(`${cli} password`);

      // As written, from another folder, on a terminal: it asks for the password and logs in.
      const login = await onTerminal(loginLine, elsewhere, cleanEnv({ PALANQUE_CONFIG: config }), [['Password for admin', password]]);
      expect(login.code, shown(login)).toBe(0);
      expect(login.stdout).toContain(`Logged in to http://127.0.0.1:${port} as admin (admin)`);
      const stored = JSON.parse(await readFile(config, 'utf8'));
      expect(stored.profiles.default).toMatchObject({ baseUrl: `http://127.0.0.1:${port}`, username: 'admin', token: expect.stringMatching(/^plq_/) });
    } finally {
      process.kill(-server.pid!, 'SIGTERM');
      await exited;
      await rm(elsewhere, { recursive: true, force: true });
    }
  }, 240_000);
});

describe('the admin command line the hint names', () => {
  /** Runs a hint's command, split into words as a shell would (no word here holds a space), with `--version`, from a folder of no project. */
  async function versionOf(command: string): Promise<CliResult> {
    const elsewhere = await mkdtemp(join(tmpdir(), 'palanque-elsewhere-'));
    try {
      const [program, ...args] = command.split(' ');
      return await runProcess(program!, [...args, '--version'], elsewhere, cleanEnv({}));
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  }

  it('a built server (npm start, the image): node and the built file\'s path, which run from any folder', async () => {
    const cli = adminCliOf(project, 'http://127.0.0.1:8123', false);
    expect(cli).toEqual({ command: `node ${join(project, 'dist', 'cli', 'palanque.js')}`, baseUrl: 'http://127.0.0.1:8123' });
    const version = await versionOf(cli.command);
    expect(version.code, shown(version)).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('a server run from its sources (npm run dev): the project\'s tsx and the CLI\'s sources, from any folder', async () => {
    const cli = adminCliOf(root, 'http://127.0.0.1:8123', true);
    expect(cli).toEqual({ command: `${join(root, 'node_modules', '.bin', 'tsx')} ${join(root, 'cli', 'palanque.ts')}`, baseUrl: 'http://127.0.0.1:8123' });
    const version = await versionOf(cli.command);
    expect(version.code, shown(version)).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  }, 60_000);

  it('quotes a path with a space for the shell', () => {
    expect(adminCliOf('/srv/my palanque', 'http://127.0.0.1:8000', false).command).toBe("node '/srv/my palanque/dist/cli/palanque.js'");
  });

  it("names the server's own address: a wildcard host on loopback, IPv6 in brackets, the base path", () => {
    expect(localUrlOf({ host: '0.0.0.0', port: 8001, basePath: '' })).toBe('http://127.0.0.1:8001');
    expect(localUrlOf({ host: '::', port: 8000, basePath: '/v1' })).toBe('http://127.0.0.1:8000/v1');
    expect(localUrlOf({ host: '::1', port: 8000, basePath: '' })).toBe('http://[::1]:8000');
    expect(localUrlOf({ host: 'localhost', port: 9000, basePath: '' })).toBe('http://localhost:9000');
  });
});
