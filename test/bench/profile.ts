/**
 * `npm run bench:profile`: where one read's time goes. Prepares the benchmark's SQLite data (or reuses
 * PROFILE_DIR's), starts the built server under `node --cpu-prof`, loads one read with autocannon
 * (50 connections, PROFILE_SECONDS, default 10) and prints the profile's self time by package.
 *
 * Usage: npm run bench:profile -- <read>, where <read> is one of the names printed without an argument.
 * Environment: PROFILE_DIR (default a temporary directory), VALIDATE_RESPONSES (default false),
 * PROFILE_DATABASE_URL (a PostgreSQL server to profile against instead of SQLite), PROFILE_OWNER (whose
 * team the read sees: 0, 1 or 2 for the owners of 1,000, 10,000 and 100,000 entities; default 0).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { dataDirectory, keyless, logInOwner, municipiosSource, preparedData, reads } from './reads.js';
import { buildServer, root, startPalanque } from './servers.js';

const name = process.argv[2];
if (!name || !reads[name]) {
  console.error(`Usage: npm run bench:profile -- <${Object.keys(reads).join('|')}>`);
  process.exit(2);
}
const seconds = Number(process.env.PROFILE_SECONDS ?? 10);
/** PROFILE_CPU=false measures without the profiler (its overhead is part of a profiled run's rate). */
const profiling = process.env.PROFILE_CPU !== 'false';

buildServer();
const data = await preparedData();
const profiles = join(dataDirectory, `cpu-${Date.now()}`);
const server = await startPalanque({
  databaseUrl: data.url,
  validateResponses: process.env.VALIDATE_RESPONSES === 'true',
  municipiosSource,
  secretsKey: randomBytes(32).toString('base64'),
  nodeArguments: profiling ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : [],
});
try {
  const session = await logInOwner(server.baseUrl, data);
  const path = reads[name]!(data.bench, session.user.id);
  const headers = keyless.includes(name) ? {} : { authorization: `Token ${session.token}` };
  const idle = server.residentByKind();
  await autocannon({ url: `${server.baseUrl}${path}`, headers, connections: 50, duration: 2 }); // warm-up: JIT, caches
  const result = await autocannon({ url: `${server.baseUrl}${path}`, headers, connections: 50, duration: seconds });
  console.log(`${name}: ${Math.round(result.requests.average)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}`);
  const loaded = server.residentByKind();
  console.log(`resident MiB before the load: ${idle.anonymous} anonymous + ${idle.files} files; after: ${loaded.anonymous} anonymous + ${loaded.files} files`);
} finally {
  await server.stop();
}
if (profiling) summarise(join(profiles, readdirSync(profiles)[0]!));

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  hitCount: number;
  children?: number[];
}

/** Self time by package (node_modules/<name>), our code, Node's internals and the idle/GC/program pseudo-frames. */
function summarise(file: string): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[] };
  const byGroup = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    total += node.hitCount;
    const group = groupOf(node.callFrame.url, node.callFrame.functionName);
    byGroup.set(group, (byGroup.get(group) ?? 0) + node.hitCount);
    const fn = `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.replace(/^.*node_modules\//, '').replace(`file://${root}`, '')}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + node.hitCount);
  }
  const top = (map: Map<string, number>, count: number) =>
    [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, count).map(([key, hits]) => `${((hits / total) * 100).toFixed(1).padStart(5)}%  ${key}`);
  console.log(`\nSelf time by group (${file}):\n${top(byGroup, 25).join('\n')}`);
  console.log(`\nTop functions (self):\n${top(byFunction, 30).join('\n')}`);
  console.log(`\nTop functions (inclusive: with what they call):\n${top(inclusiveTimes(profile.nodes), 40).join('\n')}`);
}

/** Each function's hits with everything below it, counted once where it calls itself. */
function inclusiveTimes(nodes: ProfileNode[]): Map<string, number> {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const totals = new Map<string, number>();
  const nameOf = (node: ProfileNode) => `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.replace(/^.*node_modules\//, '').replace(`file://${root}`, '')}`;
  const walk = (node: ProfileNode, open: Set<string>): number => {
    let hits = node.hitCount;
    const name = nameOf(node);
    const counted = !open.has(name);
    if (counted) open.add(name);
    for (const child of node.children ?? []) hits += walk(byId.get(child)!, open);
    if (counted) {
      open.delete(name);
      totals.set(name, (totals.get(name) ?? 0) + hits);
    }
    return hits;
  };
  walk(nodes[0]!, new Set());
  return totals;
}

function groupOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const nodeModule = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nodeModule) return nodeModule[1]!;
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  if (url.includes('/dist/src/')) return 'src/' + url.split('/dist/src/')[1]!.split('/')[0];
  return url;
}
