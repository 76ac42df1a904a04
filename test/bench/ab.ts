/**
 * `npm run bench:ab -- <read> [<read> ...]`: this checkout's built server against another checkout's,
 * on the same data (bench:profile's, see reads.ts), to tell whether a change made a read faster.
 *
 * Both servers run at once and are loaded in turns, AB_ROUNDS rounds (default 8) of AB_SECONDS each
 * (default 3, 50 connections), the order swapped every round, after a warm-up of each. On a machine whose
 * speed drifts from minute to minute (docs/benchmarks.md) a round's two runs are seconds apart, so the
 * round's ratio is what counts: the script prints each round's and their median. A change is shown when
 * the rounds agree, not by one run.
 *
 * AB_BASELINE: the other checkout, built (`git worktree add /tmp/before <commit>`, a link to this
 * checkout's node_modules, `npm run build` there). This checkout is built by the script.
 */
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { keyless, logInOwner, municipiosSource, preparedData, reads } from './reads.js';
import { buildServer, startPalanque, type RunningServer } from './servers.js';

const names = process.argv.slice(2);
const baseline = process.env.AB_BASELINE;
if (!baseline || names.length === 0 || names.some((name) => !reads[name])) {
  console.error(`Usage: AB_BASELINE=<a built checkout> npm run bench:ab -- <${Object.keys(reads).join('|')}> ...`);
  process.exit(2);
}
const rounds = Number(process.env.AB_ROUNDS ?? 8);
const seconds = Number(process.env.AB_SECONDS ?? 3);

buildServer();
const data = await preparedData();
const secretsKey = randomBytes(32).toString('base64');
const start = (directory?: string) => startPalanque({ databaseUrl: data.url, validateResponses: false, municipiosSource, secretsKey, directory });
const sides: Array<{ label: string; server: RunningServer }> = [];
try {
  sides.push({ label: 'baseline', server: await start(baseline) });
  sides.push({ label: 'this checkout', server: await start() });
  for (const name of names) await compare(name);
} finally {
  for (const { server } of sides) await server.stop();
}

async function compare(name: string): Promise<void> {
  const requests = await Promise.all(
    sides.map(async ({ server }) => {
      const session = await logInOwner(server.baseUrl, data);
      return { url: `${server.baseUrl}${reads[name]!(data.bench, session.user.id)}`, headers: keyless.includes(name) ? {} : { authorization: `Token ${session.token}` } };
    }),
  );
  const load = async (side: number, duration: number) => {
    const result = await autocannon({ ...requests[side]!, connections: 50, duration });
    if (result.non2xx > 0) throw new Error(`${sides[side]!.label}: ${result.non2xx} answers to ${name} were not 2xx`);
    return result.requests.total / result.duration;
  };
  for (const side of [0, 1]) await load(side, 2); // warm-up: JIT, caches, pools
  const ratios: number[] = [];
  const rates: number[][] = [[], []];
  for (let round = 0; round < rounds; round += 1) {
    for (const side of round % 2 === 0 ? [0, 1] : [1, 0]) rates[side]!.push(await load(side, seconds));
    ratios.push(rates[1]![round]! / rates[0]![round]!);
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log(
    `${name}: baseline ${Math.round(median(rates[0]!))} req/s, this checkout ${Math.round(median(rates[1]!))} req/s; ` +
      `this / baseline by round ${ratios.map((ratio) => ratio.toFixed(2)).join(' ')}, median ${median(ratios).toFixed(3)}`,
  );
}
