/**
 * `npm run bench:sandbox`: how long the sandbox takes to return to its demo data. Starts a sandbox, then
 * 20 times writes a few records (a bookmark, a news source, an entity's monitor, a campaign) and resets
 * through the API as its admin, timing the request from this client and reading the server's own
 * `duration_ms`. Prints the minimum, median, 95th percentile and maximum of each; the requirement is
 * under a second.
 */
import { join } from 'node:path';
import { pino } from 'pino';
import { startSandbox } from '../../src/sandbox/sandbox.js';
import { freePort } from '../helpers/process.js';
import { root } from './servers.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);

const sandbox = await startSandbox({
  logger: pino({ level: 'silent' }),
  simulators: false,
  environment: { ...process.env, PORT: String(await freePort()), MUNICIPIOS_SOURCE: process.env.MUNICIPIOS_SOURCE ?? join(root, 'test', 'fixtures', 'municipios-brasileiros', 'municipios.csv'), REDIS_URL: '' },
});
const key = (username: string) => ({ 'content-type': 'application/json', authorization: `Token ${sandbox.users.find((user) => user.username === username)!.key}` });
const post = async (path: string, username: string, body?: object) => {
  const response = await fetch(sandbox.url + path, { method: 'POST', headers: key(username), body: body ? JSON.stringify(body) : undefined });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as { data: Record<string, unknown> };
};

const client: number[] = [];
const server: number[] = [];
try {
  for (let round = 0; round < ROUNDS; round += 1) {
    await post('/api/research/add_research_bookmark/', 'carlos.pereira', { title: `Rodada ${round}`, url: `https://www.exemplo.com.br/rodada-${round}` });
    await post('/api/news/request_font/', 'carlos.pereira', { name: `Jornal ${round}`, url: `https://jornal-${round}.exemplo.com.br/` });
    await post('/api/monitor_social/add_monitor/', 'carlos.pereira', { entity_id: 12, name: `Monitor ${round}`, keywords: [`rodada ${round}`] });
    const started = performance.now();
    const reset = await post('/api/testes/reset_sandbox/', 'ana.souza');
    client.push(performance.now() - started);
    server.push(Number(reset.data.duration_ms));
  }
} finally {
  await sandbox.stop();
}

const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (share: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!);
  return `min ${at(0)}, median ${at(0.5)}, p95 ${at(0.95)}, max ${at(1)} ms`;
};
console.log(`Sandbox reset, ${ROUNDS} rounds, Node ${process.version}:`);
console.log(`  as the client sees it (the request):  ${summary(client)}`);
console.log(`  on the server (duration_ms):          ${summary(server)}`);
const worst = Math.max(...client);
console.log(`${worst < 1000 ? 'met' : 'MISSED'}: back to the demo data in under a second (slowest ${Math.round(worst)} ms)`);
if (worst >= 1000) process.exitCode = 1;
