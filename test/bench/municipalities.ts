/**
 * `npm run bench`: GET /api/municipios/ on Palanque (the real server, SQLite, in its own process) side by
 * side with a plain Express handler returning a fixed page, measured with autocannon in one run on this
 * machine. Prints a table and writes it as JSON to bench-results/municipalities.json.
 *
 * Environment: BENCH_DURATION (seconds per run, default 5), BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 50),
 * MUNICIPIOS_SOURCE (default ../shared/data/municipios.csv).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { freePort, stopProcess, waitFor } from '../helpers/process.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const duration = Number(process.env.BENCH_DURATION ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const source = process.env.MUNICIPIOS_SOURCE ?? join(root, '..', 'shared', 'data', 'municipios.csv');

interface Target {
  name: string;
  start: (port: number, workdir: string) => ChildProcess;
  path: string;
}

const palanque = (validateResponses: boolean, logLevel: string) => (port: number, workdir: string) =>
  spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(port),
      DATABASE_URL: `sqlite:${join(workdir, `bench-${port}.sqlite`)}`,
      MUNICIPIOS_SOURCE: source,
      VALIDATE_RESPONSES: String(validateResponses),
      LOG_LEVEL: logLevel,
      // One client sends all the load: keep the limiter in the path (its cost counts) but out of reach.
      RATE_LIMIT_READ: '9999999/60',
    },
  });

async function main(): Promise<void> {
  const workdir = mkdtempSync(join(tmpdir(), 'palanque-bench-'));
  try {
    const pageOne = await fetchPageOne(workdir);
    const bodyFile = join(workdir, 'page1.json');
    writeFileSync(bodyFile, pageOne);
    const ceilingPort = await freePort();
    const ceiling = spawn(process.execPath, ['--import', 'tsx', 'test/bench/baseline-server.ts', String(ceilingPort), bodyFile], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const ceilingUrl = `http://127.0.0.1:${ceilingPort}/api/municipios/`;
    const targets: Target[] = [
      { name: 'validation on, page 1', start: palanque(true, 'warn'), path: '/api/municipios/' },
      { name: 'validation on, codigo_uf=35&page=2', start: palanque(true, 'warn'), path: '/api/municipios/?codigo_uf=35&page=2' },
      { name: 'validation on, last page (186)', start: palanque(true, 'warn'), path: '/api/municipios/?page=186' },
      { name: 'validation on, request logs on (LOG_LEVEL=info)', start: palanque(true, 'info'), path: '/api/municipios/' },
      { name: 'validation off, page 1', start: palanque(false, 'warn'), path: '/api/municipios/' },
    ];
    const rows = [];
    try {
      await waitUntilServing(ceilingUrl);
      for (const target of targets) rows.push(await measurePaired(target, ceilingUrl, workdir));
    } finally {
      await stopProcess(ceiling);
    }
    console.log(`\nGET /api/municipios/, ${connections} connections, ${ROUNDS} alternating rounds of ${duration} s, Node ${process.version}\n`);
    console.log('| Palanque | req/s | p50 ms | p99 ms | ceiling req/s (same rounds) | % of ceiling |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const row of rows) {
      console.log(`| ${row.name} | ${row.requestsPerSecond} | ${row.p50} | ${row.p99} | ${row.ceiling} | ${row.ofCeiling}% |`);
    }
    mkdirSync(join(root, 'bench-results'), { recursive: true });
    writeFileSync(join(root, 'bench-results', 'municipalities.json'), JSON.stringify({ connections, duration, rounds: ROUNDS, node: process.version, results: rows }, null, 2));
  } finally {
    rmSync(workdir, { recursive: true, force: true });
  }
}

/**
 * The machine is shared, so its speed drifts: each target is measured in rounds that alternate with the
 * ceiling, and compared with the ceiling's figures from the same rounds.
 */
async function measurePaired(target: Target, ceilingUrl: string, workdir: string) {
  const port = await freePort();
  const server = target.start(port, workdir);
  try {
    const url = `http://127.0.0.1:${port}${target.path}`;
    await waitUntilServing(url);
    await run(url, 2); // warm-up: JIT, caches
    const ours = [];
    const theirs = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      theirs.push(await run(ceilingUrl, duration));
      ours.push(await run(url, duration));
    }
    const mean = (values: number[]) => values.reduce((total, value) => total + value, 0) / values.length;
    const requestsPerSecond = Math.round(mean(ours.map((result) => result.requests.average)));
    const ceiling = Math.round(mean(theirs.map((result) => result.requests.average)));
    return {
      name: target.name,
      requestsPerSecond,
      p50: Math.max(...ours.map((result) => result.latency.p50)),
      p99: Math.max(...ours.map((result) => result.latency.p99)),
      ceiling,
      ofCeiling: Math.round((requestsPerSecond / ceiling) * 1000) / 10,
    };
  } finally {
    await stopProcess(server);
  }
}

async function run(url: string, seconds: number) {
  const result = await autocannon({ url, connections, duration: seconds });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result;
}

/** The body the ceiling serves: Palanque's own page 1, so both send the same bytes. */
async function fetchPageOne(workdir: string): Promise<string> {
  const port = await freePort();
  const server = palanque(true, 'warn')(port, workdir);
  try {
    await waitUntilServing(`http://127.0.0.1:${port}/api/municipios/`);
    return await (await fetch(`http://127.0.0.1:${port}/api/municipios/`)).text();
  } finally {
    await stopProcess(server);
  }
}

function waitUntilServing(url: string): Promise<true> {
  const serving = async () => ((await fetch(url).catch(() => undefined))?.ok ? true : undefined);
  return waitFor(serving, { timeoutMs: 30_000, intervalMs: 100, what: url });
}

await main();
