/**
 * `npm run bench`: GET /api/municipios/ on Palanque (the real server, SQLite, in its own process) side by
 * side with a plain Express handler returning a fixed page, measured with autocannon in one run on this
 * machine. Prints a table and writes it as JSON to bench-results/municipalities.json.
 *
 * Environment: BENCH_DURATION (seconds per run, default 10), BENCH_CONNECTIONS (default 50),
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
const duration = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
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
    },
  });

async function main(): Promise<void> {
  const workdir = mkdtempSync(join(tmpdir(), 'palanque-bench-'));
  try {
    const pageOne = await fetchPageOne(workdir);
    const bodyFile = join(workdir, 'page1.json');
    writeFileSync(bodyFile, pageOne);
    const targets: Target[] = [
      {
        name: 'plain Express, fixed page (ceiling)',
        start: (port) => spawn(process.execPath, ['--import', 'tsx', 'test/bench/baseline-server.ts', String(port), bodyFile], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] }),
        path: '/api/municipios/',
      },
      { name: 'Palanque, validation on, page 1', start: palanque(true, 'warn'), path: '/api/municipios/' },
      { name: 'Palanque, validation on, uf=35 page 2', start: palanque(true, 'warn'), path: '/api/municipios/?codigo_uf=35&page=2' },
      { name: 'Palanque, validation on, last page', start: palanque(true, 'warn'), path: '/api/municipios/?page=186' },
      { name: 'Palanque, validation on, request logs on', start: palanque(true, 'info'), path: '/api/municipios/' },
      { name: 'Palanque, validation off, page 1', start: palanque(false, 'warn'), path: '/api/municipios/' },
    ];
    const rows = [];
    for (const target of targets) rows.push(await measure(target, workdir));
    const ceiling = rows[0]!.requestsPerSecond;
    const table = rows.map((row) => ({ ...row, ofCeiling: Math.round((row.requestsPerSecond / ceiling) * 1000) / 10 }));
    console.log(`\nGET /api/municipios/, ${connections} connections, ${duration} s each, Node ${process.version}\n`);
    console.log('| target | req/s | p50 ms | p99 ms | % of ceiling |');
    console.log('|---|---:|---:|---:|---:|');
    for (const row of table) console.log(`| ${row.name} | ${row.requestsPerSecond} | ${row.p50} | ${row.p99} | ${row.ofCeiling}% |`);
    mkdirSync(join(root, 'bench-results'), { recursive: true });
    writeFileSync(join(root, 'bench-results', 'municipalities.json'), JSON.stringify({ connections, duration, node: process.version, results: table }, null, 2));
  } finally {
    rmSync(workdir, { recursive: true, force: true });
  }
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

async function measure(target: Target, workdir: string) {
  const port = await freePort();
  const server = target.start(port, workdir);
  try {
    const url = `http://127.0.0.1:${port}${target.path}`;
    await waitUntilServing(url);
    await autocannon({ url, connections, duration: 2 }); // warm-up: JIT, caches
    const result = await autocannon({ url, connections, duration });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${target.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    return { name: target.name, requestsPerSecond: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99 };
  } finally {
    await stopProcess(server);
  }
}

function waitUntilServing(url: string): Promise<true> {
  const serving = async () => ((await fetch(url).catch(() => undefined))?.ok ? true : undefined);
  return waitFor(serving, { timeoutMs: 30_000, intervalMs: 100, what: url });
}

await main();
