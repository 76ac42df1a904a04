/**
 * `npm run bench`: Palanque's main operations measured with autocannon, side by side in one run on this
 * machine, against the Prism mock of the same contract and a plain Express handler returning a fixed
 * body (the ceiling). Palanque runs on SQLite and on PostgreSQL, with response validation on and off.
 * Prints the tables and writes them as JSON to bench-results/bench.json. docs/benchmarks.md explains
 * the method and the results.
 *
 * Environment: BENCH_DURATION (seconds per run, default 3), BENCH_ROUNDS (alternating rounds of the
 * ceiling and the server per row, default 3; a row is their median), BENCH_CONNECTIONS (default 50),
 * BENCH_DATABASE_URL (the PostgreSQL server, default postgres://postgres@127.0.0.1:5432/test; `none`
 * skips PostgreSQL), MUNICIPIOS_SOURCE (default test/fixtures/municipios-brasileiros/municipios.csv), BENCH_ONLY (a regular
 * expression: measure only the operations whose names match it, such as `municipalities`, or `refusal`
 * for issue 41's refusals alone; a partial run prints its rows but judges no target, except the refusals'
 * and the sends'). `BENCH_ONLY='SMS sends'` runs issue 43's row alone: a campaign of 20,000 sent through
 * the provider simulator by two instances on PostgreSQL, while a cheap read is measured on both.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { JSON_BODY_LIMITS } from '../../src/http/validation.js';
import { BENCH_PASSWORD, HISTORY_YEARS, TEAM_SIZES, adminQuery, copyDatabase, prepareDatabase, type BenchData } from './data.js';
import { buildServer, root, startCeiling, startPalanque, startPrism, type RunningServer } from './servers.js';
import { SmsProviderSimulator } from '../../src/simulators/sms-provider.js';

const duration = Number(process.env.BENCH_DURATION ?? 3);
/** Alternating rounds of the ceiling and the server per row; the row is their median (the machine drifts). */
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const postgresServer = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const municipiosSource = process.env.MUNICIPIOS_SOURCE ?? join(root, 'test', 'fixtures', 'municipios-brasileiros', 'municipios.csv');
const secretsKey = randomBytes(32).toString('base64');
const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : undefined;
const selected = (operation: Operation) => !only || only.test(operation.name);

/** What a request needs from the server it goes to: keys, and ids that differ per database. */
interface Session {
  tokens: Map<string, string>;
  /** The ids of the users logged in, by username. */
  userIds: Map<string, number>;
  data: BenchData;
  credentialId: number;
}

interface Operation {
  name: string;
  method: 'GET' | 'POST';
  /** A read is held to the read targets (3x Prism, p99 under 50 ms). */
  read: boolean;
  path: (session: Session) => string;
  /** Whose key to send, if any. */
  as?: (session: Session) => string;
  body?: (session: Session) => string;
  /** Fewer connections for work that is slow by design (a connection waits for its answer). */
  connections?: number;
  /** Seconds per run at least, for work that takes a large part of a second per request. */
  minSeconds?: number;
}

const tenThousandNumbers = Array.from({ length: 10_000 }, (_, index) => `+55119${String(80_000_000 + index)}`).join(',');

const municipalityOperations: Operation[] = [
  { name: 'municipalities, page 1', method: 'GET', read: true, path: () => '/api/municipios/' },
  { name: 'municipalities, codigo_uf=35&page=2', method: 'GET', read: true, path: () => '/api/municipios/?codigo_uf=35&page=2' },
  { name: 'municipalities, last page (186)', method: 'GET', read: true, path: () => '/api/municipios/?page=186' },
];

const entityList = (size: number): Operation => ({
  name: `entity list, team of ${size.toLocaleString('en')}`,
  method: 'GET',
  read: true,
  path: () => '/api/entidade/',
  as: (session) => session.data.owners[TEAM_SIZES.indexOf(size as never)]!,
});

const monitorData = (years: number): Operation => ({
  name: `monitor data, ${years} year${years === 1 ? '' : 's'} of daily snapshots`,
  method: 'GET',
  read: true,
  path: (session) => `/api/monitor_social/data/?id_monitor=${session.data.monitorIds[HISTORY_YEARS.indexOf(years as never)]}`,
  as: (session) => session.data.owners[0]!,
});

/**
 * A login costs one password hash at the production cost (argon2id, 19 MiB, 2 passes: about 13 ms of a
 * core) on libuv's threads: one connection shows a login's latency, four the rate the machine sustains
 * (50 would only queue behind the hashes).
 */
const login = (load: 1 | 4): Operation => ({
  name: `login, ${load} connection${load === 1 ? '' : 's'}`,
  method: 'POST',
  read: false,
  path: () => '/api/auth/login',
  body: (session) => JSON.stringify({ username: session.data.loginUser, password: BENCH_PASSWORD }),
  connections: load,
});
const LOGIN_TARGETS = { p50AtOneConnectionMs: 100, perSecondAtFourConnections: 40 };

const smsCampaign: Operation = {
  name: 'SMS campaign, 10,000 recipients',
  method: 'POST',
  read: false,
  path: () => '/api/sms/list_credentials/',
  as: (session) => session.data.owners[0]!,
  body: (session) => JSON.stringify({ titulo: 'Lembrete', credencial: session.credentialId, mensagem: { mensagem: 'Comício amanhã às 18h na praça.', recipient_list_str: tenThousandNumbers } }),
  connections: 2,
  minSeconds: 10,
};

/** A read a front end makes all day, as the owner of the team of 1,000 (issue 20's list). */
const everydayRead = (name: string, path: (session: Session) => string): Operation => ({ name, method: 'GET', read: true, path, as: (session) => session.data.owners[0]! });

const everydayReads: Operation[] = [
  everydayRead('account (the caller)', (session) => `/api/usuario/${session.userIds.get(session.data.owners[0]!)}/`),
  everydayRead('get entity', (session) => `/api/entidade/data/?id=${session.data.entityId}`),
  everydayRead('operators of an entity', (session) => `/api/operators/get_operators/?id=${session.data.entityId}`),
  everydayRead('research bookmarks', () => '/api/research/get_user_research_bookmarks/'),
  everydayRead('scenario requests of a monitor', (session) => `/api/strategy/get_scenario_requests/?monitor_id=${session.data.monitorIds[0]}`),
  everydayRead('SMS credentials', () => '/api/sms/list_credentials/'),
  // Issue 23: an entity's campaigns (301 of them, the first page) and a report of its latest (10,000 messages).
  everydayRead('SMS campaigns of an entity', (session) => `/api/sms/campaigns/?entity_id=${session.data.entityId}`),
  everydayRead('SMS campaign report, 10,000 messages', (session) => `/api/sms/campaigns/${session.data.campaignId}/`),
  // Issue 24: the entity's inbox (500 conversations, the first page), and a front end's poll 10 changes behind.
  everydayRead('conversations of an entity', (session) => `/api/chat/conversations/?entity_id=${session.data.entityId}`),
  everydayRead('inbox changes after a cursor', (session) => `/api/chat/changes/?entity_id=${session.data.entityId}&cursor=${session.data.inboxCursor}`),
];

/** Issue 22: the candidacy search over the 100,000 imported candidacies, by name and by office and state. */
const courtOperations: Operation[] = [
  { name: 'candidacy search, by name (100,000 candidacies)', method: 'GET', read: true, path: () => '/api/elections/candidacies/?nome=maria%20silva&cd_eleicao=619', as: (session) => session.data.owners[0]! },
  { name: 'candidacy search, councillors of SP (100,000 candidacies)', method: 'GET', read: true, path: () => '/api/elections/candidacies/?cd_eleicao=619&cd_cargo=13&uf=SP&page=3', as: (session) => session.data.owners[0]! },
];

/** A read without a key: what a login page asks before anything else. */
const loginAttempt: Operation = { name: 'login attempt (no key)', method: 'GET', read: true, path: () => '/api/check/login_attempt/' };

/**
 * Issue 20's targets, with response validation off as in production: every authenticated read at
 * 15% of the ceiling or more with p99 under 100 ms, a read without a key at 40% or more.
 */
const READ_TARGETS = { authenticatedOfCeiling: 15, authenticatedP99Ms: 100, keylessOfCeiling: 40 };
/** Issue 20: resident memory of each server after the bench under 300 MB (286 MiB). */
const MEMORY_TARGET_MIB = 286;

/** Compared with Prism and the ceiling; the SMS campaign comes last, since it leaves jobs behind. */
const mainOperations = [...municipalityOperations, loginAttempt, entityList(TEAM_SIZES[0]), monitorData(HISTORY_YEARS[0]), ...everydayReads, login(1), login(4), smsCampaign];
/** Measured on Palanque only, with validation on: the same reads over 10x and 100x the rows. */
const scaledOperations = [entityList(TEAM_SIZES[1]), entityList(TEAM_SIZES[2]), monitorData(HISTORY_YEARS[1]), monitorData(HISTORY_YEARS[2]), ...courtOperations];

/**
 * Issue 41: the worst body within BODY_LIMIT for each operation whose refusals cost seconds, sent back to
 * back on one connection while READER_CONNECTIONS read a municipality page: the refusals' p99 under
 * 100 ms, the read's under 50 ms. Each operation's worst body is the slowest of a few shapes, probed first.
 */
const REFUSAL_TARGETS = { refusalP99Ms: 100, readP99Ms: 50 };
const READER_CONNECTIONS = 10;
const BODY_LIMIT = 1024 * 1024; // the default, which the bench's servers keep
const CHEAP_READ = '/api/municipios/?page=2';

interface Refusal {
  name: string;
  path: string;
  as?: (session: Session) => string;
  /** Bodies of a few shapes, each as large as BODY_LIMIT allows, by shape. */
  shapes: () => Record<string, string>;
}

/** `head`, then `item` repeated (comma-separated), then `tail`, within BODY_LIMIT. */
function filled(head: string, item: (index: number) => string, tail: string, most = Infinity): string {
  const parts: string[] = [];
  let size = head.length + tail.length + 64;
  for (let index = 0; index < most; index += 1) {
    const next = item(index);
    if ((size += next.length + 1) > BODY_LIMIT) break;
    parts.push(next);
  }
  return `${head}${parts.join(',')}${tail}`;
}

/** As many values as the JSON limits let through, less a few for the fields around the array. */
const MOST_VALUES = JSON_BODY_LIMITS.values - 10;
/** An object of as many members as the limits allow (63 and its braces: 64 values), and how many fit. */
const CROWDED = `{${Array.from({ length: JSON_BODY_LIMITS.membersPerObject - 1 }, (_, index) => `"k${index}":0`).join(',')}}`;
const MOST_CROWDED = Math.floor(MOST_VALUES / JSON_BODY_LIMITS.membersPerObject);
const count = (n: number) => n.toLocaleString('en');

/** The shapes of an array field: the issue's, then the costliest items the JSON limits let through. */
function arrayShapes(head: string, tail: string): Record<string, string> {
  const shortTexts = JSON_BODY_LIMITS.shortTexts - 10;
  const emptyObjects = Math.min(JSON_BODY_LIMITS.containers, MOST_VALUES) - 10;
  return {
    "the issue's 5,000 strings": filled(head, (index) => `"x${index}"`, tail, 5_000),
    'numbers to BODY_LIMIT': filled(head, () => '0', tail),
    [`${count(MOST_VALUES)} numbers`]: filled(head, () => '0', tail, MOST_VALUES),
    [`${count(MOST_VALUES)} texts of 16 characters`]: filled(head, (index) => `"${String(index).padStart(16, 'x')}"`, tail, MOST_VALUES),
    [`${count(shortTexts)} short texts, then numbers`]: filled(head, (index) => (index < shortTexts ? `"x${index}"` : '0'), tail, MOST_VALUES),
    [`${count(emptyObjects)} empty objects, then numbers`]: filled(head, (index) => (index < emptyObjects ? '{}' : '0'), tail, MOST_VALUES),
    [`${count(MOST_CROWDED)} objects of 63 members`]: filled(head, () => CROWDED, tail, MOST_CROWDED),
    'one long text': `${head}"${'a.'.repeat(BODY_LIMIT / 2 - 100)}"${tail}`,
  };
}

const refusals: Refusal[] = [
  { name: 'refusal, social network webhook (no key)', path: '/api/webhook/socialnet/', shapes: () => arrayShapes('{"object":"page","entry":[', ']}') },
  { name: 'refusal, createSocialMonitor', path: '/api/monitor_social/add_monitor/', as: (session) => session.data.owners[0]!, shapes: () => arrayShapes('{"entity_id":1,"name":"Monitor","profiles":[', ']}') },
  { name: 'refusal, importMonitorMetrics', path: '/api/monitor_social/import_metrics/', as: (session) => session.data.admin, shapes: () => arrayShapes('{"monitor_id":1,"snapshots":[', ']}') },
  {
    name: 'refusal, signUp (no key)',
    path: '/api/auth/signup/',
    shapes: () => {
      const head = '{"username":"ana","email":"ana@exemplo.com.br","password":"uma senha longa o bastante",';
      return {
        "the issue's 60,000 unknown keys": filled(head, (index) => `"campo${index}":"x"`, '}', 60_000),
        '127 unknown keys of long texts': filled(head, (index) => `"campo${index}":"${'x'.repeat(Math.floor(BODY_LIMIT / 130))}"`, '}', 127),
        'a long e-mail address': `{"username":"ana","password":"uma senha longa o bastante","email":"${'a.'.repeat(BODY_LIMIT / 2 - 100)}"}`,
        'a long user name': `{"email":"ana@exemplo.com.br","password":"uma senha longa o bastante","username":"${'a'.repeat(BODY_LIMIT - 200)}"}`,
        'objects of 63 members under an unknown key': `${head}${filled('"lista":[', () => CROWDED, ']', MOST_CROWDED)}}`,
      };
    },
  },
];

/**
 * Issue 43: a campaign of SENDS_MESSAGES sent through the provider simulator (in this process, answering
 * at once) by two instances on one PostgreSQL database, while READER_CONNECTIONS read CHEAP_READ, half
 * on each instance. The rate is the messages the simulator took from the campaign's 201 to its last,
 * which the provider's speed should bound, not ours; the read's p99 must stay under 100 ms meanwhile.
 */
const SENDS_ROW = 'SMS sends, 20,000 messages, two instances';
const SENDS_MESSAGES = 20_000;
const SENDS_TARGETS = { messagesPerSecond: 350, readP99Ms: 100 };

interface SendsRow {
  operation: string;
  server: string;
  messages: number;
  /** From the campaign's 201 to the simulator's first message, and to its last. */
  firstMessageMs: number;
  seconds: number;
  messagesPerSecond: number;
  /** Sends the simulator received: one per message when none was sent twice. */
  providerCalls: number;
  readP50: number;
  readP99: number;
  readErrors: number;
  /** The machine's load average (1 min) before and after. */
  loadBefore: number;
  loadAfter: number;
}

/**
 * On a database of its own, new (the row needs an admin, an entity and a credential, not the bench's
 * data): the first instance migrates it and creates the admin, the second starts on it.
 */
async function measureSends(server: string, label: string, cleanups: Array<() => Promise<void>>): Promise<SendsRow> {
  const simulator = new SmsProviderSimulator();
  await simulator.start();
  const account = `AC${randomBytes(16).toString('hex')}`;
  const token = randomBytes(16).toString('hex');
  simulator.addAccount(account, token);
  const url = postgresDatabaseUrl(server);
  await adminQuery(url, `CREATE DATABASE ${new URL(url).pathname.slice(1)}`);
  cleanups.push(() => adminQuery(url, `DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`));
  const admin = { username: 'admin.envios', password: BENCH_PASSWORD };
  const environment = { SMS_PROVIDER_URL: simulator.url, ADMIN_USERNAME: admin.username, ADMIN_PASSWORD: admin.password };
  const instances: RunningServer[] = [];
  try {
    // One after the other, as a deployment rolls them out.
    for (let n = 0; n < 2; n += 1) instances.push(await startPalanque({ databaseUrl: url, validateResponses: false, municipiosSource, secretsKey, environment }));
    const [a, b] = instances as [RunningServer, RunningServer];
    const adminToken = (await call(a.baseUrl, 'POST', '/api/auth/login', undefined, admin)).data.token as string;
    const entity = await call(a.baseUrl, 'POST', '/api/entidade/add/', adminToken, { nome: 'Maria Envios' });
    // The sends are measured, not the electoral rules: the platform admin relaxes the new entity to warn.
    await call(a.baseUrl, 'PUT', `/api/sms/compliance/?entity_id=${entity.data.id}`, adminToken, { mode: 'warn', window: null });
    const credential = await call(a.baseUrl, 'POST', '/api/sms/add_credential/', adminToken, { name: 'Envios (benchmark)', account_id: account, sender_id: '+5511940028933', secret: token, entity_id: entity.data.id });
    // Two campaigns of 10,000 (a request's list holds at most 200,000 characters), posted at once.
    const lists = [0, 1].map((half) => Array.from({ length: SENDS_MESSAGES / 2 }, (_, index) => `+55219${String(80_000_000 + half * (SENDS_MESSAGES / 2) + index)}`).join(','));
    const body = `Comício amanhã às 18h na praça. ${randomBytes(3).toString('hex')}`;
    const ours = () => simulator.messages.filter((message) => message.body.startsWith(body)).length;
    const loadBefore = loadavg()[0]!;
    const readers = [a, b].map((server) => {
      let stop = () => {};
      const result = new Promise<autocannon.Result>((resolve, reject) => {
        const instance = autocannon({ url: `${server.baseUrl}${CHEAP_READ}`, connections: READER_CONNECTIONS / 2, duration: 3_600, timeout: 60 }, (error, done) => (error ? reject(error) : resolve(done)));
        stop = () => instance.stop();
      });
      return { result, stop: () => stop() };
    });
    let created: number;
    let first = 0;
    try {
      const started = performance.now();
      await Promise.all(lists.map((numbers, half) => call([a, b][half]!.baseUrl, 'POST', '/api/sms/list_credentials/', adminToken, { titulo: 'Envios', credencial: credential.data.id, mensagem: { mensagem: body, recipient_list_str: numbers } })));
      log(`  two campaigns of ${(SENDS_MESSAGES / 2).toLocaleString('en')} created in ${Math.round(performance.now() - started)} ms`);
      created = started;
      const deadline = created + 600_000;
      let seen = 0;
      while (seen < SENDS_MESSAGES && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        seen = ours();
        if (seen > 0 && first === 0) first = performance.now();
      }
    } finally {
      for (const reader of readers) reader.stop();
    }
    const finished = performance.now();
    const reads = await Promise.all(readers.map((reader) => reader.result));
    const sent = ours();
    const seconds = (finished - created) / 1000;
    return {
      operation: SENDS_ROW,
      server: label,
      messages: sent,
      firstMessageMs: Math.round(first - created),
      seconds: Math.round(seconds * 10) / 10,
      messagesPerSecond: Math.round((sent / seconds) * 10) / 10,
      providerCalls: simulator.attempts,
      readP50: Math.max(...reads.map((read) => read.latency.p50)),
      readP99: Math.max(...reads.map((read) => read.latency.p99)),
      readErrors: reads.reduce((total, read) => total + read.errors + read.timeouts + read.non2xx, 0),
      loadBefore: Math.round(loadBefore * 100) / 100,
      loadAfter: Math.round(loadavg()[0]! * 100) / 100,
    };
  } finally {
    for (const instance of instances) await instance.stop();
    await simulator.stop();
  }
}

function sendsVerdict(rows: SendsRow[]): string {
  const missed = rows.filter((row) => row.messages < SENDS_MESSAGES || row.messagesPerSecond < SENDS_TARGETS.messagesPerSecond || row.readP99 >= SENDS_TARGETS.readP99Ms || row.providerCalls !== row.messages);
  return `${missed.length === 0 ? 'met' : 'MISSED'}: ${SENDS_MESSAGES.toLocaleString('en')} SMS sent once each through the simulator by two instances at ${SENDS_TARGETS.messagesPerSecond}/s or more, a cheap read's p99 under ${SENDS_TARGETS.readP99Ms} ms meanwhile (issue 43)${
    missed.length ? ` (not: ${missed.map((row) => `${row.server}, ${row.messages} messages in ${row.seconds} s, ${row.messagesPerSecond}/s, ${row.providerCalls} provider calls, read p99 ${row.readP99} ms`).join('; ')})` : ''
  }`;
}

interface RefusalRow {
  operation: string;
  shape: string;
  server: string;
  status: number;
  refusalsPerSecond: number;
  p50: number;
  p99: number;
  readP50: number;
  readP99: number;
  /** The same read alone, just before: what the refusals add to it on this machine at this minute. */
  readAloneP99: number;
  errors: number;
}

interface PreparedDatabase {
  dialect: string;
  url: string;
  data?: BenchData;
}

interface Measurement {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
}

interface Row extends Measurement {
  operation: string;
  server: string;
  /** The ceiling's rate for the same operation, measured just before (the machine's speed drifts). */
  ceiling: number;
}

async function main(): Promise<void> {
  buildServer();
  const workdir = mkdtempSync(join(tmpdir(), 'palanque-bench-'));
  const databases: PreparedDatabase[] = [{ dialect: 'SQLite', url: `sqlite:${join(workdir, 'bench.sqlite')}` }];
  if (postgresServer !== 'none') databases.push({ dialect: 'PostgreSQL', url: postgresDatabaseUrl(postgresServer) });
  const cleanups: Array<() => Promise<void>> = [];
  try {
    if (only && only.test(SENDS_ROW) && ![...mainOperations, ...scaledOperations].some(selected) && !refusals.some((refusal) => only.test(refusal.name))) {
      // Issue 43's row alone needs none of the bench's data.
      const sendsRows = postgresServer === 'none' ? [] : [await measureSends(postgresServer, 'PostgreSQL, validation off', cleanups)];
      report({ rows: [], refusalRows: [], sendsRows, memory: [] }, []);
      return;
    }
    for (const database of databases) {
      if (database.dialect === 'PostgreSQL') {
        await adminQuery(database.url, `CREATE DATABASE ${new URL(database.url).pathname.slice(1)}`);
        cleanups.push(() => adminQuery(database.url, `DROP DATABASE IF EXISTS ${new URL(database.url).pathname.slice(1)} WITH (FORCE)`));
      }
      const started = Date.now();
      database.data = await prepareDatabase(database.url, municipiosSource);
      log(`${database.dialect}: data prepared in ${Math.round((Date.now() - started) / 1000)} s`);
      const court = database.data.candidacyImport;
      log(`${database.dialect}: ${court.rows.toLocaleString('en')} candidacies imported in ${court.seconds} s (${court.rowsPerSecond.toLocaleString('en')} rows/s)`);
    }
    const results = await measureEverything(databases, workdir, cleanups);
    report(results, databases);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error) => log(`cleanup failed: ${error}`));
    rmSync(workdir, { recursive: true, force: true });
  }
}

async function measureEverything(databases: PreparedDatabase[], workdir: string, cleanups: Array<() => Promise<void>>) {
  const rows: Row[] = [];
  const refusalRows: RefusalRow[] = [];
  const sendsRows: SendsRow[] = [];
  const memory: Array<{ server: string; residentMiB: number }> = [];
  let ceiling: RunningServer | undefined;
  let ceilingSession: Session | undefined;
  try {
    let copies = 0;
    for (const database of databases) {
      for (const validateResponses of [true, false]) {
        const label = `${database.dialect}, validation ${validateResponses ? 'on' : 'off'}`;
        const copy = await copyDatabase(database.url, `copy${(copies += 1)}`);
        cleanups.push(copy.drop);
        const palanque = await startPalanque({ databaseUrl: copy.url, validateResponses, municipiosSource, secretsKey });
        try {
          const session = await openSession(palanque.baseUrl, database.data!);
          if (!ceiling) {
            ceilingSession = session;
            ceiling = await startCeilingFrom(palanque, session, workdir);
          }
          // The reads first, then the writes (logins add keys, the campaign leaves jobs behind).
          // Issue 20's everyday reads are held to their targets with validation off, as in production.
          const reads = mainOperations.filter((operation) => operation.read && (!validateResponses || !everydayReads.includes(operation)));
          const writes = mainOperations.filter((operation) => !operation.read);
          const operations = [...reads, ...(validateResponses ? scaledOperations : []), ...writes].filter(selected);
          for (const operation of operations) {
            log(`${label}: ${operation.name}`);
            rows.push(await measurePaired(operation, palanque, session, ceiling, ceilingSession!, label));
          }
          // Issue 41's refusals, as production runs (response validation off); they change nothing.
          for (const refusal of validateResponses ? [] : refusals.filter((candidate) => !only || only.test(candidate.name))) {
            log(`${label}: ${refusal.name}`);
            refusalRows.push(await measureRefusal(refusal, palanque, session, label));
          }
          memory.push({ server: label, residentMiB: palanque.residentMiB() });
        } finally {
          await palanque.stop();
        }
      }
    }
    // Issue 43's sends, on PostgreSQL (two instances share one queue there), as production runs.
    if (postgresServer !== 'none' && (!only || only.test(SENDS_ROW))) {
      log(`PostgreSQL: ${SENDS_ROW}`);
      sendsRows.push(await measureSends(postgresServer, 'PostgreSQL, validation off', cleanups));
    }
    const prism = await startPrism();
    try {
      const mockSession: Session = { tokens: new Map(), userIds: ceilingSession!.userIds, data: ceilingSession!.data, credentialId: ceilingSession!.credentialId };
      for (const operation of mainOperations.filter(selected)) {
        log(`Prism mock: ${operation.name}`);
        rows.push(await measurePaired(operation, prism, mockSession, ceiling!, ceilingSession!, 'Prism mock'));
      }
      memory.push({ server: 'Prism mock', residentMiB: prism.residentMiB() });
    } finally {
      await prism.stop();
    }
    memory.push({ server: 'ceiling', residentMiB: ceiling!.residentMiB() });
  } finally {
    await ceiling?.stop();
  }
  return { rows, refusalRows, sendsRows, memory };
}

/**
 * Probes each shape of a refusal's bodies (a warm-up, then 5 requests: the median), and measures the
 * slowest: sent back to back on one connection, while READER_CONNECTIONS read CHEAP_READ.
 */
async function measureRefusal(refusal: Refusal, server: RunningServer, session: Session, label: string): Promise<RefusalRow> {
  const username = refusal.as?.(session);
  const headers = { 'content-type': 'application/json', ...(username ? { authorization: `Token ${session.tokens.get(username)}` } : {}) };
  let worst: { shape: string; body: string; status: number; medianMs: number } | undefined;
  for (const [shape, body] of Object.entries(refusal.shapes())) {
    if (Buffer.byteLength(body) > BODY_LIMIT) throw new Error(`${refusal.name}, ${shape}: ${Buffer.byteLength(body)} bytes, over BODY_LIMIT`);
    const times: number[] = [];
    let status = 0;
    for (let attempt = 0; attempt < 6; attempt += 1) {
      const started = performance.now();
      const response = await fetch(`${server.baseUrl}${refusal.path}`, { method: 'POST', headers, body });
      await response.arrayBuffer();
      status = response.status;
      if (attempt > 0) times.push(performance.now() - started);
    }
    if (status !== 413 && status !== 422) throw new Error(`${refusal.name}, ${shape}: answered ${status}, not a refusal`);
    const medianMs = times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
    log(`  ${shape}: ${status} in ${medianMs.toFixed(1)} ms (median)`);
    if (!worst || medianMs > worst.medianMs) worst = { shape, body, status, medianMs };
  }
  const seconds = Math.max(duration, 5);
  const alone = await autocannon({ url: `${server.baseUrl}${CHEAP_READ}`, connections: READER_CONNECTIONS, duration: seconds, timeout: 60 });
  const [attack, read] = await Promise.all([
    autocannon({ url: `${server.baseUrl}${refusal.path}`, method: 'POST', headers, body: worst!.body, connections: 1, duration: seconds, timeout: 60 }),
    autocannon({ url: `${server.baseUrl}${CHEAP_READ}`, connections: READER_CONNECTIONS, duration: seconds, timeout: 60 }),
  ]);
  if (read.non2xx > 0) throw new Error(`${CHEAP_READ}: ${read.non2xx} answers were not 2xx during ${refusal.name}`);
  if (attack.requests.total === 0 || attack['2xx'] > 0) throw new Error(`${refusal.name}: ${attack.requests.total} requests, ${attack['2xx']} of them accepted`);
  return {
    operation: refusal.name,
    shape: worst!.shape,
    server: label,
    status: worst!.status,
    refusalsPerSecond: Math.round((attack.requests.total / attack.duration) * 10) / 10,
    p50: attack.latency.p50,
    p99: attack.latency.p99,
    readP50: read.latency.p50,
    readP99: read.latency.p99,
    readAloneP99: alone.latency.p99,
    errors: attack.errors + attack.timeouts + read.errors + read.timeouts,
  };
}

function refusalVerdict(rows: RefusalRow[]): string {
  const missed = rows.filter((row) => row.p99 >= REFUSAL_TARGETS.refusalP99Ms || row.readP99 >= REFUSAL_TARGETS.readP99Ms);
  return `${missed.length === 0 ? 'met' : 'MISSED'}: the worst body within BODY_LIMIT refused with p99 under ${REFUSAL_TARGETS.refusalP99Ms} ms while a read keeps p99 under ${REFUSAL_TARGETS.readP99Ms} ms (issue 41)${
    missed.length ? ` (not: ${missed.map((row) => `${row.operation} on ${row.server}, ${row.p99} ms, read ${row.readP99} ms`).join('; ')})` : ''
  }`;
}

/** Logs in the users the operations act as, and adds the SMS credential the campaign sends with. */
async function openSession(baseUrl: string, data: BenchData): Promise<Session> {
  const tokens = new Map<string, string>();
  const userIds = new Map<string, number>();
  for (const username of [data.admin, ...data.owners]) {
    const session = await logIn(baseUrl, username);
    tokens.set(username, session.token);
    userIds.set(username, session.user.id);
  }
  const answer = await call(baseUrl, 'POST', '/api/sms/add_credential/', tokens.get(data.admin), {
    name: 'Campanha (benchmark)',
    account_id: `AC${randomBytes(16).toString('hex')}`,
    sender_id: '+5511940028922',
    secret: randomBytes(16).toString('hex'),
    entity_id: data.entityId,
  });
  return { tokens, userIds, data, credentialId: answer.data.id };
}

async function logIn(baseUrl: string, username: string): Promise<{ token: string; user: { id: number } }> {
  return (await call(baseUrl, 'POST', '/api/auth/login', undefined, { username, password: BENCH_PASSWORD })).data;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function call(baseUrl: string, method: string, path: string, token: string | undefined, body?: object): Promise<any> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Token ${token}` } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

/** The ceiling answers every operation with the bytes this Palanque answered it. */
async function startCeilingFrom(palanque: RunningServer, session: Session, workdir: string): Promise<RunningServer> {
  const answers: Record<string, { status: number; body: string }> = {};
  for (const operation of [...mainOperations, ...scaledOperations]) {
    const request = requestOf(operation, session);
    const response = await fetch(`${palanque.baseUrl}${request.path}`, request);
    answers[`${operation.method} ${request.path}`] = { status: response.status, body: await response.text() };
  }
  const file = join(workdir, 'ceiling-answers.json');
  writeFileSync(file, JSON.stringify(answers));
  return startCeiling(file, '/api/municipios/');
}

function requestOf(operation: Operation, session: Session) {
  const username = operation.as?.(session);
  // Prism checks that a key is sent, not which.
  const token = username === undefined ? undefined : (session.tokens.get(username) ?? 'plq_mock');
  return {
    path: operation.path(session),
    method: operation.method,
    headers: { ...(operation.body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Token ${token}` } : {}) },
    body: operation.body?.(session),
  };
}

/**
 * After a warm-up of the server (JIT, caches, pools), `rounds` times the ceiling then the server, back to
 * back; the row is the median round (by the server's share of the ceiling in that round). Work slow by
 * design (at least `minSeconds` a run: the campaign) has one round.
 */
async function measurePaired(operation: Operation, server: RunningServer, session: Session, ceiling: RunningServer, ceilingSession: Session, label: string): Promise<Row> {
  const ours = requestOf(operation, session);
  const theirs = requestOf(operation, ceilingSession);
  const load = operation.connections ?? connections;
  const seconds = Math.max(duration, operation.minSeconds ?? 0);
  await run(server.baseUrl, ours, load, 1, { warmUp: true });
  const measured: Row[] = [];
  for (let round = 0; round < (operation.minSeconds ? 1 : rounds); round += 1) {
    const ceilingResult = await run(ceiling.baseUrl, theirs, load, seconds);
    const result = await run(server.baseUrl, ours, load, seconds);
    measured.push({ operation: operation.name, server: label, ...result, ceiling: ceilingResult.requestsPerSecond });
  }
  const byShare = measured.sort((a, b) => a.requestsPerSecond / a.ceiling - b.requestsPerSecond / b.ceiling);
  return byShare[Math.floor(byShare.length / 2)]!;
}

async function run(baseUrl: string, request: ReturnType<typeof requestOf>, load: number, seconds: number, { warmUp = false } = {}): Promise<Measurement> {
  const result = await autocannon({ url: `${baseUrl}${request.path}`, method: request.method, headers: request.headers, body: request.body, connections: load, duration: seconds, timeout: 60 });
  if (result.non2xx > 0) {
    const sample = await fetch(`${baseUrl}${request.path}`, request);
    throw new Error(`${request.method} ${baseUrl}${request.path}: ${result.non2xx} answers were not 2xx, such as ${sample.status} ${await sample.text()}`);
  }
  // A run in which nothing completed has no rate or latency to report: say so rather than print zeros.
  if (result.requests.total === 0 && !warmUp) throw new Error(`${request.method} ${baseUrl}${request.path}: no request completed in ${seconds} s (${result.errors} errors, ${result.timeouts} timeouts)`);
  return { requestsPerSecond: Math.round((result.requests.total / result.duration) * 10) / 10, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.timeouts };
}

function report(
  { rows, refusalRows, sendsRows, memory }: { rows: Row[]; refusalRows: RefusalRow[]; sendsRows: SendsRow[]; memory: Array<{ server: string; residentMiB: number }> },
  databases: PreparedDatabase[],
): void {
  const prismRate = (operation: string) => rows.find((row) => row.server === 'Prism mock' && row.operation === operation)?.requestsPerSecond;
  const lines: string[] = [];
  const print = (line = '') => lines.push(line);
  print(
    `\n${connections} connections (login at 1 and 4; the SMS campaign at 2, for at least 10 s, one round), ${duration} s per run, each row the median of ${rounds} alternating rounds with the ceiling, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}\n`,
  );
  print('| operation | server | req/s | p50 ms | p99 ms | ceiling req/s | % of ceiling | x Prism |');
  print('|---|---|---:|---:|---:|---:|---:|---:|');
  const table = rows.map((row) => {
    const prism = prismRate(row.operation);
    const ofCeiling = Math.round((row.requestsPerSecond / row.ceiling) * 1000) / 10;
    const timesPrism = prism && row.server !== 'Prism mock' ? Math.round((row.requestsPerSecond / prism) * 10) / 10 : undefined;
    print(`| ${row.operation} | ${row.server} | ${row.requestsPerSecond} | ${row.p50} | ${row.p99} | ${row.ceiling} | ${ofCeiling}% | ${timesPrism ?? ''} |${row.errors ? ` ${row.errors} errors` : ''}`);
    return { ...row, ofCeiling, timesPrism };
  });
  const scaling = scalingTable(rows);
  print('\nCost against size (validation on): p99 ms at 1x, 10x and 100x the rows\n');
  print('| operation | server | 1x | 10x | 100x | 100x / 1x |');
  print('|---|---|---:|---:|---:|---:|');
  for (const line of scaling) print(`| ${line.operation} | ${line.server} | ${line.p99.join(' | ')} | ${line.ratio} |`);
  const imports = databases.map((database) => ({ database: database.dialect, ...database.data!.candidacyImport }));
  print('\nCandidacy import (issue 22): a generated file in the court\'s layout, as `npm run elections:import` reads it\n');
  print('| database | rows | seconds | rows/s |');
  print('|---|---:|---:|---:|');
  for (const line of imports) print(`| ${line.database} | ${line.rows} | ${line.seconds} | ${line.rowsPerSecond} |`);
  if (refusalRows.length > 0) {
    print(`\nRefusals (issue 41): the worst body within BODY_LIMIT on 1 connection, with ${READER_CONNECTIONS} connections reading ${CHEAP_READ} meanwhile, validation off\n`);
    print('| operation | worst body | server | status | refusals/s | p50 ms | p99 ms | read p50 ms | read p99 ms | read alone p99 ms |');
    print('|---|---|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const row of refusalRows) {
      print(`| ${row.operation} | ${row.shape} | ${row.server} | ${row.status} | ${row.refusalsPerSecond} | ${row.p50} | ${row.p99} | ${row.readP50} | ${row.readP99} | ${row.readAloneP99} |${row.errors ? ` ${row.errors} errors` : ''}`);
    }
  }
  if (sendsRows.length > 0) {
    print(`\nSMS sends (issue 43): ${SENDS_MESSAGES.toLocaleString('en')} messages through the simulator, two instances, ${READER_CONNECTIONS} connections reading ${CHEAP_READ} meanwhile (half on each)\n`);
    print('| operation | server | messages | first message ms | seconds | messages/s | provider calls | read p50 ms | read p99 ms | load before | load after |');
    print('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const row of sendsRows) {
      print(`| ${row.operation} | ${row.server} | ${row.messages} | ${row.firstMessageMs} | ${row.seconds} | ${row.messagesPerSecond} | ${row.providerCalls} | ${row.readP50} | ${row.readP99} | ${row.loadBefore} | ${row.loadAfter} |${row.readErrors ? ` ${row.readErrors} read errors` : ''}`);
    }
  }
  print('\nResident memory after the runs\n');
  print('| server | MiB |');
  print('|---|---:|');
  for (const line of memory) print(`| ${line.server} | ${line.residentMiB} |`);
  print('\nTargets');
  if (only) {
    print(`- not judged: BENCH_ONLY=${only.source} measured part of the operations`);
    if (refusalRows.length > 0) print(`- ${refusalVerdict(refusalRows)}`);
    if (sendsRows.length > 0) print(`- ${sendsVerdict(sendsRows)}`);
    console.log(lines.join('\n'));
    return;
  }
  for (const verdict of verdicts(table, scaling)) print(`- ${verdict}`);
  print(`- ${refusalVerdict(refusalRows)}`);
  if (sendsRows.length > 0) print(`- ${sendsVerdict(sendsRows)}`);
  const servers = memory.filter((line) => line.server !== 'Prism mock' && line.server !== 'ceiling');
  const largest = Math.max(...servers.map((line) => line.residentMiB));
  print(`- ${largest < MEMORY_TARGET_MIB ? 'met' : 'MISSED'}: resident memory after the runs under 300 MB (${MEMORY_TARGET_MIB} MiB) per server (largest ${largest} MiB)`);
  console.log(lines.join('\n'));
  mkdirSync(join(root, 'bench-results'), { recursive: true });
  writeFileSync(join(root, 'bench-results', 'bench.json'), JSON.stringify({ connections, duration, rounds, node: process.version, rows: table, scaling, refusals: refusalRows, sends: sendsRows, memory, imports }, null, 2));
}

function scalingTable(rows: Row[]) {
  const families = [
    { operation: 'entity list', names: TEAM_SIZES.map((size) => entityList(size).name) },
    { operation: 'monitor data', names: HISTORY_YEARS.map((years) => monitorData(years).name) },
  ];
  const servers = [...new Set(rows.filter((row) => row.server.endsWith('validation on')).map((row) => row.server))];
  return families.flatMap((family) =>
    servers.map((server) => {
      const p99 = family.names.map((name) => rows.find((row) => row.server === server && row.operation === name)?.p99 ?? NaN);
      return { operation: family.operation, server, p99, ratio: Math.round((p99[2]! / p99[0]!) * 100) / 100 };
    }),
  ).filter((line) => line.p99.some(Number.isFinite)); // a partial run (BENCH_ONLY) may have measured none of a family
}

function verdicts(table: Array<Row & { ofCeiling: number; timesPrism?: number }>, scaling: ReturnType<typeof scalingTable>): string[] {
  const palanque = table.filter((row) => row.server !== 'Prism mock');
  const check = (met: boolean, text: string) => `${met ? 'met' : 'MISSED'}: ${text}`;
  const municipalities = palanque.filter((row) => row.operation.startsWith('municipalities') && row.server.endsWith('validation on'));
  const reads = palanque.filter((row) => mainOperations.some((operation) => operation.read && operation.name === row.operation));
  const slowReads = reads.filter((row) => row.p99 >= 50);
  const inProduction = reads.filter((row) => row.server.endsWith('validation off') && !row.operation.startsWith('municipalities'));
  const authenticated = inProduction.filter((row) => row.operation !== loginAttempt.name);
  const keyless = inProduction.filter((row) => row.operation === loginAttempt.name);
  const missedAuthenticated = authenticated.filter((row) => row.ofCeiling < READ_TARGETS.authenticatedOfCeiling || row.p99 >= READ_TARGETS.authenticatedP99Ms);
  const loginsAtOne = palanque.filter((row) => row.operation === login(1).name);
  const loginsAtFour = palanque.filter((row) => row.operation === login(4).name);
  return [
    check(municipalities.every((row) => row.ofCeiling >= 80), `municipality list at 80% or more of the ceiling with validation on (lowest ${Math.min(...municipalities.map((row) => row.ofCeiling))}%)`),
    check(reads.every((row) => (row.timesPrism ?? 0) >= 3), `(goal beyond issue 20) every read at least 3x the Prism mock (lowest ${Math.min(...reads.map((row) => row.timesPrism ?? 0))}x)`),
    check(slowReads.length === 0, `(goal beyond issue 20) p99 under 50 ms at ${connections} connections for every read${slowReads.length ? ` (not: ${slowReads.map((row) => `${row.operation} on ${row.server}, ${row.p99} ms`).join('; ')})` : ''}`),
    check(
      missedAuthenticated.length === 0,
      `every authenticated read, validation off, at ${READ_TARGETS.authenticatedOfCeiling}% of the ceiling or more with p99 under ${READ_TARGETS.authenticatedP99Ms} ms${missedAuthenticated.length ? ` (not: ${missedAuthenticated.map((row) => `${row.operation} on ${row.server}, ${row.ofCeiling}%, ${row.p99} ms`).join('; ')})` : ''}`,
    ),
    check(
      keyless.every((row) => row.ofCeiling >= READ_TARGETS.keylessOfCeiling),
      `a read without a key, validation off, at ${READ_TARGETS.keylessOfCeiling}% of the ceiling or more (lowest ${Math.min(...keyless.map((row) => row.ofCeiling))}%)`,
    ),
    check(scaling.every((line) => line.ratio <= 2), `p99 at 100x the rows within 2x of 1x (highest ${Math.max(...scaling.map((line) => line.ratio))}x)`),
    check(
      loginsAtOne.every((row) => row.p50 < LOGIN_TARGETS.p50AtOneConnectionMs),
      `login p50 under ${LOGIN_TARGETS.p50AtOneConnectionMs} ms at one connection (highest ${Math.max(...loginsAtOne.map((row) => row.p50))} ms)`,
    ),
    check(
      loginsAtFour.every((row) => row.requestsPerSecond >= LOGIN_TARGETS.perSecondAtFourConnections),
      `at least ${LOGIN_TARGETS.perSecondAtFourConnections} logins/s at 4 connections (lowest ${Math.min(...loginsAtFour.map((row) => row.requestsPerSecond))}/s)`,
    ),
  ];
}

function postgresDatabaseUrl(server: string): string {
  const url = new URL(server);
  url.pathname = `/palanque_bench_${randomBytes(4).toString('hex')}`;
  return url.toString();
}

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

await main();
