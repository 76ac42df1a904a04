/** The servers the benchmark measures, each in its own process on this machine. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, stopProcess, waitFor } from '../helpers/process.js';

export const root = fileURLToPath(new URL('../..', import.meta.url));

export interface RunningServer {
  baseUrl: string;
  /** Resident memory of the server process, in MiB. */
  residentMiB(): number;
  /** Its resident memory by kind (/proc's smaps_rollup), in MiB: the heaps' anonymous pages, mapped files. */
  residentByKind(): { anonymous: number; files: number };
  stop(): Promise<void>;
}

export interface PalanqueSettings {
  databaseUrl: string;
  validateResponses: boolean;
  municipiosSource: string;
  secretsKey: string;
  /** Options for node itself, before the script (`--cpu-prof`). */
  nodeArguments?: string[];
  /** The checkout whose built server runs (default this one; `npm run bench:ab` runs another beside it). */
  directory?: string;
  /** Settings over the bench's own (the sends' row points SMS_PROVIDER_URL at the simulator). */
  environment?: Record<string, string>;
}

/**
 * The real server as `npm start` runs it (built, `dist/src/server.js`: under tsx every database query
 * paid for source-mapped stack traces, about 30% of the entity list's time), with budgets the one load
 * generator cannot spend. The caller builds first (buildServer).
 */
export async function startPalanque(settings: PalanqueSettings): Promise<RunningServer> {
  const port = await freePort();
  const directory = settings.directory ?? root;
  const start = startCommand(directory);
  const child = spawn(process.execPath, [...start.nodeArguments, ...(settings.nodeArguments ?? []), 'dist/src/server.js'], {
    cwd: directory,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      ...process.env,
      ...start.environment,
      NODE_ENV: 'production',
      PORT: String(port),
      // Required in production; the bench's links are never followed.
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: settings.databaseUrl,
      MUNICIPIOS_SOURCE: settings.municipiosSource,
      MUNICIPIOS_SHA256: '',
      VALIDATE_RESPONSES: String(settings.validateResponses),
      LOG_LEVEL: 'warn',
      SECRETS_KEY: settings.secretsKey,
      // Sends fail at once and are retried later with backoff: the campaign benchmark measures accepting
      // campaigns, not a provider, and leaves little background work behind.
      SMS_PROVIDER_URL: 'http://127.0.0.1:9',
      // The limiter stays in the path (its cost counts) but one client cannot exhaust it.
      RATE_LIMIT_AUTH: '9999999/60',
      RATE_LIMIT_READ: '9999999/60',
      RATE_LIMIT_WRITE: '9999999/60',
      RATE_LIMIT_CALLBACK: '9999999/60',
      // The login lock counts a password check as pending while it runs (so parallel guesses cannot pass
      // an open lock): of 50 connections logging in at once for one identifier and one address, those
      // past the default 5 wait for the checks before them. The bench measures the login itself, so the
      // lock's limit is out of reach.
      LOGIN_MAX_FAILURES: '1000',
      ...settings.environment,
    },
  });
  return serving(child, `http://127.0.0.1:${port}`, '/api/municipios/');
}

/**
 * What `npm start` sets (package.json's `start`: `[NAME=value ...] node <options> dist/src/server.js`):
 * the environment before `node`, and node's options.
 */
function startCommand(directory: string): { environment: Record<string, string>; nodeArguments: string[] } {
  const start = (JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const words = start.split(/\s+/);
  const node = words.indexOf('node');
  const environment = Object.fromEntries(words.slice(0, node).map((word) => word.split('=', 2) as [string, string]));
  return { environment, nodeArguments: words.slice(node + 1, words.indexOf('dist/src/server.js')) };
}

/** `npm run build`: the server the benchmark measures is the one `npm start` serves. */
export function buildServer(): void {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
}

/** The Prism mock of the contract, serving its examples. */
export async function startPrism(): Promise<RunningServer> {
  const port = await freePort();
  const child = spawn(`${root}node_modules/.bin/prism`, ['mock', '--host', '127.0.0.1', '--port', String(port), 'sdk/openapi.json'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return serving(child, `http://127.0.0.1:${port}`, '/api/municipios/');
}

/** A plain Express app answering each request with the fixed answer of `answersFile` (see ceiling-server.ts). */
export async function startCeiling(answersFile: string, probePath: string): Promise<RunningServer> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/bench/ceiling-server.ts', String(port), answersFile], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return serving(child, `http://127.0.0.1:${port}`, probePath);
}

async function serving(child: ChildProcess, baseUrl: string, probePath: string): Promise<RunningServer> {
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const answers = async () => ((await fetch(`${baseUrl}${probePath}`).catch(() => undefined))?.ok ? true : undefined);
  await waitFor(answers, {
    timeoutMs: 60_000,
    intervalMs: 100,
    what: baseUrl,
    failEarly: () => (child.exitCode !== null ? `exited with ${child.exitCode}` : undefined),
    output: () => output,
  });
  return {
    baseUrl,
    residentMiB: () => residentMiB(child.pid!),
    residentByKind: () => residentByKind(child.pid!),
    stop: () => stopProcess(child),
  };
}

/** Anonymous and file-backed resident memory of a process, from /proc (Linux). */
function residentByKind(pid: number): { anonymous: number; files: number } {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(rollup)?.[1] ?? NaN);
  return { anonymous: Math.round(kib('Anonymous') / 1024), files: Math.round((kib('Rss') - kib('Anonymous')) / 1024) };
}

/** VmRSS of a process, from /proc (Linux). */
function residentMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return Math.round(kib / 1024);
}
