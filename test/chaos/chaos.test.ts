/**
 * Chaos (issue 17): three real server processes on one PostgreSQL database and one Redis take a mixed
 * load while one of them is killed with SIGKILL and restarted, on a new port, every 20 seconds. Run by
 * `npm run test:chaos` (and so once by `npm test`), always on PostgreSQL, in about two minutes.
 *
 * The load, for LOAD_MS:
 * - CLIENTS clients, each owning the entities it creates, so the writes to an entity are ordered: creates
 *   with every field of a set filled in, partial updates naming one or two fields (some with `If-Match`:
 *   the current ETag, which must go through, or a stale one, which must be refused), and reads;
 * - an SMS campaign every CAMPAIGN_EVERY_MS, sent through a provider simulator that answers
 *   PROVIDER_DELAY_MS after taking the message, so kills land while messages are being handed over;
 * - clients behave as the API asks: a request that got no answer is sent again, with the same
 *   Idempotency-Key and body, to another instance; a 409 `idempotency_key_in_flight` is retried later.
 *   A write that stays in flight (its instance died holding the key) is parked, its entity left alone,
 *   and retried until the key's claim is abandoned (src/http/idempotency.ts: after ABANDON_AFTER_MS).
 * Each kill waits (KILL_WAIT_MS at most) for a provider call and a write in flight on its victim, and
 * strikes a random few milliseconds into them.
 *
 * Afterwards every parked write is retried to its end and every message waited for, then:
 * 1. no acknowledged write is lost: per entity and field, the set of values it may have (a 2xx write
 *    fixes it; a write without a final answer adds its value) holds what the server shows;
 * 2. no effect is applied twice: one row per create's Idempotency-Key, a repeated request is replayed
 *    byte for byte, and a claim left by a killed instance stops blocking within its bound;
 * 3. every campaign message is handed to the provider exactly once, under the sid the database keeps;
 * 4. no field is lost by an update that did not name it (and nested entries keep their ids);
 * 5. `If-Match` with a stale ETag is 409 `edit_conflict` and changes nothing; the current one goes through.
 * The load runs in the first test; the others judge what it recorded, one invariant each, naming the
 * entity and field, with the instances' output.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmsProviderSimulator } from '../../src/simulators/sms-provider.js';
import { createPostgresDatabase, type TestDatabase } from '../helpers/database.js';
import { startInstance, tearDownCluster, type Instance } from '../helpers/instances.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const POSTGRES_SERVER = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const RATE_LIMIT_PREFIX = `palanque-test-chaos-${randomBytes(4).toString('hex')}`;
const ADMIN = { username: 'admin.caos', password: 'uma-senha-bem-longa-para-testes' };
const SMS_ACCOUNT = `AC${'0f1e2d3c4b5a69788796a5b4c3d2e1f0'}`;
const SMS_AUTH_TOKEN = '9a8b7c6d5e4f30211203f4e5d6c7b8a9';
const RUN = randomBytes(3).toString('hex');

const CLIENTS = 4;
const LOAD_MS = 50_000;
const FIRST_KILL_MS = 10_000;
const KILL_EVERY_MS = 20_000;
/** How long a kill may wait for a provider call and a write in flight on its victim. */
const KILL_WAIT_MS = 5_000;
/** src/serve.ts: a claim older than max(60 s, 2 × REQUEST_TIMEOUT_MS) whose request never answered no longer blocks its key. */
const ABANDON_AFTER_MS = 60_000;
/** A key whose request died must take a retry within this long after the first attempt without an answer. */
const RESOLVE_WITHIN_MS = ABANDON_AFTER_MS + 5_000;
const PACE_MS = 40;
const MAX_CREATES_PER_CLIENT = 12;
const CAMPAIGN_EVERY_MS = 1_000;
const CAMPAIGN_SIZE = 2;
const PROVIDER_DELAY_MS = 500;
/** A request that has not answered by then counts as unanswered (it is retried with its key). */
const REQUEST_TIMEOUT_MS = 15_000;

const INSTANCE_ENV = {
  REDIS_URL,
  RATE_LIMIT_PREFIX,
  RATE_LIMIT_AUTH: '1000/60',
  RATE_LIMIT_READ: '100000/60',
  RATE_LIMIT_WRITE: '100000/60',
  ADMIN_USERNAME: ADMIN.username,
  ADMIN_PASSWORD: ADMIN.password,
  SMS_SEND_TIMEOUT_MS: '1000',
  JOB_TIMEOUT_SECONDS: '10',
};

// --- The cluster: three slots, each a process at a time, with its own slow door to the provider ---------

/**
 * The provider as the instances of one slot see it: the simulator takes each message at once and its
 * answer reaches the instance `delayMs` later, whether or not the instance is still there to read it.
 * One per slot, so the test knows when a send is in flight on the instance it is about to kill.
 */
class SlowProvider {
  inFlight = 0;
  calls = 0;
  url = '';
  /** What went wrong in here (for failure messages). */
  readonly errors: string[] = [];
  private server: Server | undefined;

  constructor(
    private readonly target: string,
    private readonly delayMs: number,
  ) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      res.on('error', () => undefined);
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.inFlight += 1;
        this.calls += 1;
        void (async () => {
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(req.headers)) {
            if (typeof value === 'string' && !['host', 'connection', 'content-length', 'keep-alive', 'transfer-encoding'].includes(name)) headers[name] = value;
          }
          const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
          const answer = await fetch(this.target + (req.url ?? '/'), { method: req.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined });
          const text = await answer.text();
          await sleep(this.delayMs);
          res.writeHead(answer.status, { 'Content-Type': answer.headers.get('content-type') ?? 'application/json' }).end(text);
        })()
          .catch((error: unknown) => {
            this.errors.push(`@${elapsed()} ms ${req.method} ${req.url}: ${String(error)}`);
            if (res.headersSent) res.destroy();
            else res.writeHead(502).end();
          })
          .finally(() => (this.inFlight -= 1));
      });
    });
    // Idle connections kept longer than the instances' keep-alive, so that no send races a closing socket.
    this.server.keepAliveTimeout = 120_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

interface Slot {
  letter: string;
  generation: number;
  /** Undefined while it restarts. */
  instance: Instance | undefined;
  provider: SlowProvider;
}

interface Kill {
  at: number;
  victim: string;
  restartedAs?: string;
  /** What was in flight on the victim when it was killed. */
  caught: string;
  exit?: { code: number | null; signal: NodeJS.Signals | null };
  restartMs?: number;
  error?: string;
}

const simulator = new SmsProviderSimulator();
const slots: Slot[] = [];
/** Every process started, killed ones included, for failure messages and teardown. */
const started: Instance[] = [];
const kills: Kill[] = [];
/** Writes under way, by instance, and the creates among them (a kill waits for some). */
const writesInFlight = new Map<Instance, number>();
const createsInFlight = new Map<Instance, number>();
/** Answers, by the name of the instance that gave them. */
const servedBy = new Map<string, number>();
let database: TestDatabase;
let db: pg.Client;
let redis: Redis;
let adminKey: string;
let credentialId: number;
let turn = 0;

async function startSlot(slot: Slot): Promise<Instance> {
  const name = slot.generation === 0 ? slot.letter : `${slot.letter}${slot.generation + 1}`;
  const instance = await startInstance(name, { databaseUrl: database.url, env: { ...INSTANCE_ENV, SMS_PROVIDER_URL: slot.provider.url }, readyTimeoutMs: 40_000 });
  started.push(instance);
  return instance;
}

const live = () => slots.flatMap((slot) => (slot.instance && !slot.instance.exited() ? [slot.instance] : []));

/** The next live instance in turn, another than `avoid` when there is one; `prefer` if it is live. */
async function pick(avoid?: Instance, prefer?: Instance): Promise<Instance> {
  for (let waited = 0; waited < 30_000; waited += 50) {
    const candidates = live();
    if (prefer && candidates.includes(prefer) && prefer !== avoid) return prefer;
    const others = candidates.filter((instance) => instance !== avoid);
    const choice = others.length > 0 ? others : candidates;
    if (choice.length > 0) return choice[turn++ % choice.length]!;
    await sleep(50);
  }
  throw new Error('no instance has been live for 30 s');
}

/** The last lines of every process's output, and the kills. */
function clusterOutput(linesEach = 60): string {
  const tails = started.map((instance) => {
    const lines = instance.output().split('\n');
    return lines.length > linesEach + 1 ? [lines[0], `(${lines.length - 1 - linesEach} earlier lines left out)`, ...lines.slice(-linesEach)].join('\n') : lines.join('\n');
  });
  return `Kills: ${JSON.stringify(kills)}\n${tails.join('\n')}`;
}

// --- Requests, with the retry rules of a well-behaved client ------------------------------------------

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: Json;
  instance: string;
  at: number;
}

let loadStart = 0;
const elapsed = () => Date.now() - loadStart;

async function call(instance: Instance, method: 'GET' | 'POST' | 'PUT', path: string, headers: Record<string, string>, payload?: string): Promise<Answer> {
  const response = await fetch(instance.baseUrl + path, {
    method,
    headers: { ...headers, ...(payload === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: payload,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  let body: Json;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  servedBy.set(instance.name, (servedBy.get(instance.name) ?? 0) + 1);
  return { status: response.status, headers: response.headers, text, body, instance: instance.name, at: elapsed() };
}

const why = (error: unknown) => {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).name ?? String(error);
};
const auth = () => ({ Authorization: `Token ${adminKey}` });
const errorCode = (answer: Answer): string | undefined => answer.body?.error?.code;
const replayed = (answer: Answer) => answer.headers.get('idempotent-replayed') === 'true';
const isOk = (answer: Answer) => answer.status >= 200 && answer.status < 300;

/** One POST with its Idempotency-Key, through all its attempts. */
interface Write {
  label: string;
  path: string;
  key: string;
  payload: string;
  headers: Record<string, string>;
  /** Each attempt: where, when, and what came back. */
  attempts: string[];
  /** An attempt got no answer (or a 5xx, which is not stored): the operation may have run then. */
  lost: boolean;
  firstLostAt?: number;
  /** An attempt found the key claimed by a request that was still running, or that died. */
  sawInFlight: boolean;
  inFlightRun?: { index: number; count: number; first: number };
  lastInstance?: Instance;
  prefer?: () => Instance | undefined;
  answer?: Answer;
  nextTryAt: number;
  /** Applies the outcome to the model, once: the answer, or none at all (the write never got one). */
  settle(answer: Answer | undefined): Promise<void>;
}

function newWrite(label: string, path: string, body: object, extraHeaders: Record<string, string>, settle: Write['settle']): Write {
  return {
    label,
    path,
    key: `chaos-${RUN}-${randomBytes(8).toString('hex')}`,
    payload: JSON.stringify(body),
    headers: extraHeaders,
    attempts: [],
    lost: false,
    sawInFlight: false,
    nextTryAt: 0,
    settle,
  };
}

/** Writes that had an attempt without an answer (for the summary). */
const cutWrites: Write[] = [];

/** One attempt: 'done' with an answer to keep, 'now' to try again at once elsewhere, or 'later'. */
async function attempt(write: Write): Promise<'done' | 'now' | 'later'> {
  const instance = await pick(write.lost ? write.lastInstance : undefined, write.prefer?.());
  write.lastInstance = instance;
  const creating = write.label.startsWith('create');
  writesInFlight.set(instance, (writesInFlight.get(instance) ?? 0) + 1);
  if (creating) createsInFlight.set(instance, (createsInFlight.get(instance) ?? 0) + 1);
  let answer: Answer;
  try {
    answer = await call(instance, 'POST', write.path, { ...auth(), ...write.headers, 'Idempotency-Key': write.key }, write.payload);
  } catch (error) {
    write.attempts.push(`${instance.name} @${elapsed()} ms: no answer (${why(error)})`);
    if (!write.lost) cutWrites.push(write);
    write.lost = true;
    write.firstLostAt ??= elapsed();
    return 'now';
  } finally {
    writesInFlight.set(instance, writesInFlight.get(instance)! - 1);
    if (creating) createsInFlight.set(instance, createsInFlight.get(instance)! - 1);
  }
  if (answer.status === 409 && errorCode(answer) === 'idempotency_key_in_flight') {
    // A run of these (a minute's worth behind a dead claim) is one line.
    const run = write.inFlightRun;
    if (run && run.index === write.attempts.length - 1) {
      run.count += 1;
      write.attempts[run.index] = `${run.count} × 409 idempotency_key_in_flight from ${run.first} ms to ${answer.at} ms`;
    } else {
      write.inFlightRun = { index: write.attempts.length, count: 1, first: answer.at };
      write.attempts.push(`${instance.name} @${answer.at} ms: 409 idempotency_key_in_flight`);
    }
    write.sawInFlight = true;
    write.nextTryAt = Date.now() + 1_000 * Number(answer.headers.get('retry-after') ?? 1);
    return 'later';
  }
  write.attempts.push(`${instance.name} @${answer.at} ms: ${answer.status}${errorCode(answer) ? ` ${errorCode(answer)}` : ''}${replayed(answer) ? ' (replayed)' : ''}`);
  if (answer.status === 429) {
    write.nextTryAt = Date.now() + 1_000 * Number(answer.headers.get('retry-after') ?? 1);
    return 'later';
  }
  if (answer.status >= 500) {
    found.answers.push(`${write.label} (Idempotency-Key ${write.key}) was answered ${answer.status} by ${instance.name}: ${answer.text.slice(0, 400)}`);
    if (!write.lost) cutWrites.push(write);
    write.lost = true;
    write.firstLostAt ??= elapsed();
    write.nextTryAt = Date.now() + 200;
    return 'later';
  }
  write.answer = answer;
  return 'done';
}

/** Attempts until answered or `budgetMs` has passed; true once answered. */
async function send(write: Write, budgetMs: number): Promise<boolean> {
  const until = Date.now() + budgetMs;
  for (let tries = 0; tries < 50; tries += 1) {
    const outcome = await attempt(write);
    if (outcome === 'done') return true;
    if (outcome === 'now') await sleep(50);
    else if (write.nextTryAt >= until) return false;
    else await sleep(write.nextTryAt - Date.now());
    if (Date.now() >= until) return false;
  }
  return false;
}

// --- What each invariant found ---------------------------------------------------------------------------

const INVARIANTS = {
  lost: 'acknowledged writes lost',
  twice: 'effects applied twice',
  stuck: 'idempotency keys still blocked after the bound',
  sms: 'campaign messages not sent exactly once',
  unnamed: 'fields lost by an update that did not name them',
  ifMatch: 'If-Match answers against the contract',
  answers: 'writes answered against the contract',
} as const;
type Invariant = keyof typeof INVARIANTS;
const found: Record<Invariant, string[]> = { lost: [], twice: [], stuck: [], sms: [], unnamed: [], ifMatch: [], answers: [] };

function expectNone(invariant: Invariant): void {
  expect(loadRan, 'the load did not run to its end (see the first test)').toBe(true);
  const problems = found[invariant];
  const listed = problems.slice(0, 15).join('\n\n') + (problems.length > 15 ? `\n\n... and ${problems.length - 15} more` : '');
  expect(problems.length, `${problems.length} ${INVARIANTS[invariant]}:\n\n${listed}\n\n${clusterOutput()}`).toBe(0);
}

// --- The model of each entity -----------------------------------------------------------------------------

/** The fields followed: those updates name, and those they never do (which must keep their created value). */
const FIELDS = [
  'nome',
  'cpf',
  'nm_urna',
  'email',
  'genero',
  'cidade',
  'position',
  'partido',
  'nr_urna',
  'uf',
  'marketshare',
  'referencia_social.id',
  'referencia_social.tipo',
  'referencia_social.nm',
  'referencia_social.social_network',
] as const;
type Field = (typeof FIELDS)[number];
const UPDATABLE = ['cpf', 'nm_urna', 'email', 'genero', 'cidade', 'marketshare', 'referencia_social'] as const;
type UpdateGroup = (typeof UPDATABLE)[number];

/** In a pattern: any value (the id of an entry the write creates, not known until it answers). */
const ANY = '<any id>';
type Pattern = unknown;

interface Share {
  id: number | null;
  marketshare: string;
  tendency: string | null;
  notes: string | null;
}
interface Profile {
  nm_rede: string;
  id: string | null;
  username: string | null;
}

/** A field of an entity as the server shows it, in the shape patterns are written in. */
function leafOf(data: Json, field: Field): unknown {
  switch (field) {
    case 'marketshare':
      return ((data.marketshare ?? []) as Json[]).map(
        (entry): Share => ({ id: entry.id ?? null, marketshare: entry.marketshare, tendency: entry.tendency ?? null, notes: entry.notes ?? null }),
      );
    case 'referencia_social.social_network':
      return ((data.referencia_social?.social_network ?? []) as Json[]).map((entry): Profile => ({ nm_rede: entry.nm_rede, id: entry.id ?? null, username: entry.username ?? null }));
    case 'referencia_social.id':
    case 'referencia_social.tipo':
    case 'referencia_social.nm':
      return data.referencia_social?.[field.slice('referencia_social.'.length)] ?? null;
    default:
      return data[field] ?? null;
  }
}

function matches(pattern: Pattern, actual: unknown): boolean {
  if (pattern === ANY) return actual !== null && actual !== undefined;
  if (Array.isArray(pattern)) return Array.isArray(actual) && actual.length === pattern.length && pattern.every((item, i) => matches(item, actual[i]));
  if (pattern !== null && typeof pattern === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
    const expected = Object.entries(pattern);
    return expected.length === Object.keys(actual).length && expected.every(([key, value]) => matches(value, (actual as Record<string, unknown>)[key]));
  }
  return pattern === actual;
}

const hasAny = (pattern: Pattern): boolean =>
  pattern === ANY || (Array.isArray(pattern) ? pattern.some(hasAny) : pattern !== null && typeof pattern === 'object' ? Object.values(pattern).some(hasAny) : false);
const show = (value: unknown) => JSON.stringify(value);

interface Entity {
  client: Client;
  label: string;
  nome: string;
  id?: number;
  create: Write;
  /** Per field, the values it may have now. */
  possible: Map<Field, Pattern[]>;
  /** Fields named by a write since the server last showed the entity. */
  namedSinceShown: Set<Field>;
  /** Fields any update named. */
  namedEver: Set<Field>;
  /** The current ETag, when known. */
  etag?: string;
  /** ETags known to be superseded. */
  staleEtags: string[];
  /** A write without its final answer yet: the entity is left alone until it has one. */
  pending?: Write;
  history: string[];
  serial: number;
  noEtagReported?: boolean;
}

interface Client {
  n: number;
  entities: Entity[];
  parked: Write[];
  creates: number;
  ops: number;
}

const entities: Entity[] = [];
let loadRan = false;
const counters = { inFlight: 0, parked: 0, replaysChecked: 0, staleChecked: 0, currentChecked: 0, updates: 0 };

function describeEntity(entity: Entity): string {
  return `entity ${entity.label} (id ${entity.id ?? 'unknown'}, nome "${entity.nome}"), owned by client ${entity.client.n}; its last writes:\n    ${entity.history.slice(-8).join('\n    ')}`;
}

const certain = (entity: Entity) => [...entity.possible.values()].every((patterns) => patterns.length === 1 && !hasAny(patterns[0]));
const now = (entity: Entity, field: Field) => entity.possible.get(field)![0];

/** The server showed the entity (an answer's `data`, or a read): every field must be one of its possible values. */
function shown(entity: Entity, data: Json, etag: string | null, source: string): void {
  for (const field of FIELDS) {
    const actual = leafOf(data, field);
    const patterns = entity.possible.get(field)!;
    if (!patterns.some((pattern) => matches(pattern, actual))) {
      const invariant: Invariant = entity.namedSinceShown.has(field) ? 'lost' : 'unnamed';
      found[invariant].push(
        `${field} of ${describeEntity(entity)}\n  ${source} shows ${show(actual)}; it may only be ${patterns.map(show).join(' or ')}` +
          (invariant === 'lost'
            ? ''
            : entity.namedEver.has(field)
              ? `\n  (no write since the server last showed the entity named ${field})`
              : `\n  (no update ever named ${field}: it keeps its created value)`),
      );
    }
    entity.possible.set(field, [actual]);
  }
  entity.namedSinceShown.clear();
  if (etag) setEtag(entity, etag);
  else entity.etag = undefined;
}

function setEtag(entity: Entity, etag: string): void {
  if (entity.etag !== undefined && entity.etag !== etag && !entity.staleEtags.includes(entity.etag)) entity.staleEtags.push(entity.etag);
  entity.etag = etag;
}

/** Said once per entity: every answer showing it should carry its ETag. */
function missingEtag(entity: Entity, what: string): void {
  if (entity.noEtagReported) return;
  entity.noEtagReported = true;
  found.ifMatch.push(`${what} has no ETag header (reported once per entity): ${describeEntity(entity)}`);
}

/** A write whose effect is unknown: its values join the possible ones. */
function mayHaveApplied(entity: Entity, patterns: Map<Field, Pattern>): void {
  for (const [field, pattern] of patterns) {
    entity.possible.get(field)!.push(pattern);
    entity.namedSinceShown.add(field);
  }
  entity.etag = undefined;
}

// --- Values ----------------------------------------------------------------------------------------------

let cpfSerial = 0;
const cpfBase = randomInt(100_000, 800_000) * 1_000;
/** A CPF no other entity of this run has, with valid check digits. */
function nextCpf(): string {
  const digits = String(cpfBase + cpfSerial++).padStart(9, '0').split('').map(Number);
  const check = (numbers: number[]) => {
    const sum = numbers.reduce((total, digit, i) => total + digit * (numbers.length + 1 - i), 0);
    const rest = (sum * 10) % 11;
    return rest === 10 ? 0 : rest;
  };
  const first = check(digits);
  const all = [...digits, first, check([...digits, first])].join('');
  return `${all.slice(0, 3)}.${all.slice(3, 6)}.${all.slice(6, 9)}-${all.slice(9)}`;
}

const GENEROS = ['feminino', 'masculino', 'não binário', null];
const TENDENCIES = ['up', 'down', 'stable'];
const NETWORKS = ['tiktok', 'youtube', 'facebook', 'kwai'];
const pickOne = <T>(items: readonly T[]): T => items[randomInt(items.length)]!;
const chance = (p: number) => Math.random() < p;
let ballotSerial = 0;

function patternsOf(body: Json, creating: boolean): Map<Field, Pattern> {
  const patterns = new Map<Field, Pattern>();
  for (const field of FIELDS) {
    if (field.includes('.') || field === 'marketshare' || !(field in body)) continue;
    patterns.set(field, body[field] ?? null);
  }
  if ('marketshare' in body) {
    patterns.set(
      'marketshare',
      ((body.marketshare ?? []) as Json[]).map((entry) => ({ id: entry.id ?? ANY, marketshare: entry.marketshare, tendency: entry.tendency ?? null, notes: entry.notes ?? null })),
    );
  }
  const reference = body.referencia_social;
  if (reference !== undefined) {
    // The reference's own id is the server's; an update that sends the reference is not held to keep it.
    patterns.set('referencia_social.id', ANY);
    if (creating || 'tipo' in reference) patterns.set('referencia_social.tipo', reference.tipo ?? null);
    if (creating || 'nm' in reference) patterns.set('referencia_social.nm', reference.nm ?? null);
    if (creating || 'social_network' in reference) {
      patterns.set(
        'referencia_social.social_network',
        ((reference.social_network ?? []) as Json[]).map((entry) => ({ nm_rede: entry.nm_rede, id: entry.id ?? null, username: entry.username ?? null })),
      );
    }
  }
  return patterns;
}

function newEntityBody(label: string, nome: string): Json {
  const slug = `${RUN}-${label}`;
  return {
    nome,
    cpf: nextCpf(),
    nm_urna: `Urna ${label}`,
    email: `caos.${slug}@exemplo.com.br`,
    genero: 'feminino',
    cidade: 'São Paulo',
    position: 'prefeito',
    partido: '13',
    nr_urna: 13_000 + ballotSerial++,
    uf: 'SP',
    marketshare: [
      { marketshare: '23.5', tendency: 'up', notes: `ms ${label} a` },
      { marketshare: '11', tendency: 'stable', notes: `ms ${label} b` },
    ],
    referencia_social: {
      tipo: 'perfil',
      nm: `Referência ${label}`,
      social_network: [
        { nm_rede: 'instagram', id: `ig-${slug}`, username: `@ig.${slug}` },
        { nm_rede: 'x', id: `x-${slug}`, username: `@x.${slug}` },
      ],
    },
  };
}

/** An update naming one or two groups of fields, from the entity's current (known) values. */
function updateBody(entity: Entity, groups: UpdateGroup[]): Json {
  const n = ++entity.serial;
  const tag = `${entity.label}.${n}`;
  const slug = `${RUN}-${entity.label}-${n}`;
  const body: Json = { id: entity.id, nome: entity.nome };
  for (const group of groups) {
    switch (group) {
      case 'cpf':
        body.cpf = nextCpf();
        break;
      case 'nm_urna':
        body.nm_urna = `Urna ${tag}`;
        break;
      case 'email':
        body.email = `caos.${slug}@exemplo.com.br`;
        break;
      case 'genero':
        // Sometimes null: a field sent as null is cleared.
        body.genero = pickOne(GENEROS.filter((genero) => genero !== now(entity, 'genero')));
        break;
      case 'cidade':
        body.cidade = `Cidade ${tag}`;
        break;
      case 'marketshare': {
        const shares = (now(entity, 'marketshare') as Share[]).map((share) => ({ ...share }));
        if (shares.length >= 2 && chance(0.4)) shares.splice(randomInt(shares.length), 1);
        if (shares.length > 0 && chance(0.6)) {
          const share = pickOne(shares);
          share.marketshare = `${n}.${randomInt(10)}`;
          share.tendency = pickOne(TENDENCIES.filter((tendency) => tendency !== share.tendency));
        }
        if (shares.length === 0 || (shares.length < 4 && chance(0.5))) shares.push({ id: null, marketshare: `${n}`, tendency: 'up', notes: `ms ${tag}` });
        body.marketshare = shares.map((share) => ({
          ...(share.id === null ? {} : { id: share.id }),
          marketshare: share.marketshare,
          ...(share.tendency === null ? {} : { tendency: share.tendency }),
          ...(share.notes === null ? {} : { notes: share.notes }),
        }));
        break;
      }
      case 'referencia_social': {
        const reference: Json = {};
        const variant = randomInt(3);
        if (variant !== 1) reference.nm = `Referência ${tag}`;
        if (variant !== 0) {
          const profiles = (now(entity, 'referencia_social.social_network') as Profile[]).map((profile) => ({ ...profile }));
          if (profiles.length >= 2 && chance(0.4)) profiles.splice(randomInt(profiles.length), 1);
          if (profiles.length > 0 && chance(0.6)) pickOne(profiles).username = `@${slug}`;
          if (profiles.length === 0 || (profiles.length < 4 && chance(0.5))) profiles.push({ nm_rede: pickOne(NETWORKS), id: `p-${slug}`, username: `@p.${slug}` });
          reference.social_network = profiles.map((profile) => ({
            nm_rede: profile.nm_rede,
            ...(profile.id === null ? {} : { id: profile.id }),
            ...(profile.username === null ? {} : { username: profile.username }),
          }));
        }
        body.referencia_social = reference;
        break;
      }
    }
  }
  return body;
}

// --- The clients -----------------------------------------------------------------------------------------

/** Sends the same request again, to another instance, after it was answered: it must be replayed, not run. */
async function checkReplay(write: Write, entity: Entity | undefined): Promise<void> {
  const first = write.answer!;
  const instance = await pick(write.lastInstance);
  let again: Answer;
  try {
    again = await call(instance, 'POST', write.path, { ...auth(), ...write.headers, 'Idempotency-Key': write.key }, write.payload);
  } catch {
    return; // no answer: nothing learnt, and nothing to retry (the first answer stands)
  }
  counters.replaysChecked += 1;
  if (again.status !== first.status || !replayed(again) || again.text !== first.text) {
    found.twice.push(
      `${write.label} (Idempotency-Key ${write.key}) sent again to ${instance.name}: ${again.status}, Idempotent-Replayed ${again.headers.get('idempotent-replayed')}, ` +
        `${again.text === first.text ? 'the same body' : `another body: ${again.text.slice(0, 400)}`}; the first answer was ${first.status} from ${first.instance}` +
        (entity ? `\n  ${describeEntity(entity)}` : ''),
    );
    if (entity && !replayed(again)) entity.etag = undefined;
  }
}

/** Reads the entity (any instance); undefined if no instance answered within a few tries. */
async function read(entity: Entity, source: string): Promise<{ data: Json; etag: string | null } | undefined> {
  let avoid: Instance | undefined;
  for (let tries = 0; tries < 8; tries += 1) {
    const instance = await pick(avoid);
    try {
      const answer = await call(instance, 'GET', `/api/entidade/data/?id=${entity.id}`, auth());
      if (answer.status !== 200) {
        found.answers.push(`GET of ${describeEntity(entity)} (${source}) from ${instance.name}: ${answer.status} ${answer.text.slice(0, 400)}`);
        return undefined;
      }
      return { data: answer.body.data, etag: answer.headers.get('etag') };
    } catch {
      avoid = instance;
      await sleep(100);
    }
  }
  return undefined;
}

async function refresh(entity: Entity, source: string): Promise<boolean> {
  const got = await read(entity, source);
  if (!got) return false;
  entity.history.push(`@${elapsed()} ms read (${source}): ETag ${got.etag}`);
  if (!got.etag) missingEtag(entity, 'a read');
  shown(entity, got.data, got.etag, `a read (${source})`);
  return true;
}

async function createEntity(client: Client): Promise<void> {
  client.creates += 1;
  const label = `c${client.n}e${client.creates}`;
  const nome = `Caos ${RUN} ${label}`;
  const body = newEntityBody(label, nome);
  const patterns = patternsOf(body, true);
  const entity: Entity = {
    client,
    label,
    nome,
    create: undefined as unknown as Write,
    possible: new Map(FIELDS.map((field) => [field, [patterns.get(field) ?? null]])),
    namedSinceShown: new Set(FIELDS),
    namedEver: new Set(),
    staleEtags: [],
    history: [],
    serial: 0,
  };
  const write = newWrite(`create ${label}`, '/api/entidade/add/', body, {}, async (answer) => {
    entity.pending = undefined;
    entity.history.push(`@${elapsed()} ms create: ${write.attempts.join('; ')}${answer ? '' : ' (never answered)'}`);
    if (!answer) return;
    if (answer.status !== 201 || typeof answer.body?.data?.id !== 'number') {
      found.answers.push(`the create of ${describeEntity(entity)} was answered ${answer.status} ${answer.text.slice(0, 600)}`);
      return;
    }
    entity.id = answer.body.data.id;
    const etag = answer.headers.get('etag');
    if (!etag) missingEtag(entity, 'the answer to its create');
    shown(entity, answer.body.data, etag, 'the create answer');
  });
  entity.create = write;
  entity.pending = write;
  entities.push(entity);
  client.entities.push(entity);
  await runWrite(client, write, entity);
}

type Mode = 'plain' | 'current' | 'stale';

async function updateEntity(client: Client, entity: Entity, mode: Mode): Promise<void> {
  const groups: UpdateGroup[] =
    mode === 'stale' ? [pickOne(['cidade', 'nm_urna'] as const)] : chance(0.5) ? [pickOne(UPDATABLE)] : [pickOne(UPDATABLE), pickOne(UPDATABLE)].filter((group, i, all) => all.indexOf(group) === i);
  const body = updateBody(entity, groups);
  const patterns = patternsOf(body, false);
  const before = new Map([...entity.possible].map(([field, values]) => [field, [...values]]));
  const etagBefore = entity.etag;
  const ifMatch = mode === 'current' ? entity.etag! : mode === 'stale' ? pickOne(entity.staleEtags.filter((etag) => etag !== entity.etag)) : undefined;
  const named = [...patterns.keys()].filter((field) => field !== 'nome');
  const label = `update ${entity.label} #${entity.serial} {${named.join(', ')}}${mode === 'plain' ? '' : ` If-Match ${mode} ${ifMatch}`}`;
  for (const field of named) entity.namedEver.add(field);
  counters.updates += 1;
  const write = newWrite(label, '/api/entidade/add/', body, ifMatch === undefined ? {} : { 'If-Match': ifMatch }, async (answer) => {
    entity.pending = undefined;
    entity.history.push(`@${elapsed()} ms ${label}: ${write.attempts.join('; ')}${answer ? '' : ' (never answered)'}`);
    // Run by an attempt that got no answer, then again by the retry that answered (not a replay)?
    const mayHaveRunBefore = write.lost && !(answer && replayed(answer));
    if (!answer) {
      mayHaveApplied(entity, patterns);
      return;
    }
    if (isOk(answer)) {
      if (mode === 'stale') found.ifMatch.push(`${label} went through (${answer.status}) with a stale ETag\n  ${describeEntity(entity)}`);
      if (mode === 'current') counters.currentChecked += 1;
      for (const [field, pattern] of patterns) {
        entity.possible.set(field, [pattern]);
        entity.namedSinceShown.add(field);
      }
      const etag = answer.headers.get('etag');
      if (!etag) missingEtag(entity, `the answer to ${label}`);
      else if (etag === etagBefore && !replayed(answer)) found.ifMatch.push(`${label} left the ETag at ${etag}: it must change on every write\n  ${describeEntity(entity)}`);
      shown(entity, answer.body?.data ?? {}, etag, `the answer to ${label}`);
      return;
    }
    if (answer.status === 409 && errorCode(answer) === 'edit_conflict') {
      if (mode === 'stale') {
        counters.staleChecked += 1;
        await checkUnchanged(entity, label, before, etagBefore);
      } else if (mayHaveRunBefore) {
        // The attempt that got no answer may have run it, moving the ETag on before the retry came.
        mayHaveApplied(entity, patterns);
      } else {
        found.ifMatch.push(`${label} was refused: ${answer.status} ${answer.text.slice(0, 400)}\n  ${describeEntity(entity)}`);
      }
      return;
    }
    found.answers.push(`${label} was answered ${answer.status} ${answer.text.slice(0, 600)}\n  ${describeEntity(entity)}`);
    if (mayHaveRunBefore) mayHaveApplied(entity, patterns);
  });
  entity.pending = write;
  await runWrite(client, write, entity);
}

/** After a refused stale If-Match: the entity is as it was, ETag included. */
async function checkUnchanged(entity: Entity, label: string, before: Map<Field, Pattern[]>, etagBefore: string | undefined): Promise<void> {
  const got = await read(entity, `after the refused ${label}`);
  if (!got) return;
  entity.history.push(`@${elapsed()} ms read after the refused stale write: ETag ${got.etag}`);
  const changed = FIELDS.filter((field) => !before.get(field)!.some((pattern) => matches(pattern, leafOf(got.data, field))));
  if (changed.length > 0 || got.etag !== etagBefore) {
    found.ifMatch.push(
      `${label} was refused but changed ${changed.map((field) => `${field} to ${show(leafOf(got.data, field))}`).join(', ') || 'nothing'}; ` +
        `the ETag was ${etagBefore} and is ${got.etag}\n  ${describeEntity(entity)}`,
    );
    // Reported here; the other invariants need not report it again.
    for (const field of changed) entity.possible.get(field)!.push(leafOf(got.data, field));
  }
  shown(entity, got.data, got.etag, `a read after the refused ${label}`);
}

/** Sends a write for a few seconds; unanswered by then, it is parked and retried later. */
async function runWrite(client: Client, write: Write, entity: Entity | undefined): Promise<void> {
  const answered = await send(write, 4_000);
  if (write.sawInFlight) counters.inFlight += 1;
  if (!answered) {
    counters.parked += 1;
    write.nextTryAt = Date.now() + 2_000;
    client.parked.push(write);
    return;
  }
  await write.settle(write.answer);
  if (isOk(write.answer!) && !write.lost && !replayed(write.answer!) && chance(0.15)) await checkReplay(write, entity);
}

async function retryParked(client: Client, pause: number): Promise<void> {
  for (const write of [...client.parked]) {
    if (Date.now() < write.nextTryAt) continue;
    if (await send(write, 500)) {
      client.parked.splice(client.parked.indexOf(write), 1);
      await write.settle(write.answer);
    } else {
      write.nextTryAt = Math.max(write.nextTryAt, Date.now() + pause);
    }
  }
}

async function clientLoop(client: Client, loadEnd: number): Promise<void> {
  while (Date.now() < loadEnd) {
    await retryParked(client, 2_000);
    const idle = client.entities.filter((entity) => entity.id !== undefined && !entity.pending);
    const roll = Math.random();
    client.ops += 1;
    // Creates spread over the whole load, so that kills find some in flight.
    const mayCreate = client.creates < 2 + Math.floor(((MAX_CREATES_PER_CLIENT - 2) * elapsed()) / LOAD_MS);
    if (idle.length < 2 || (mayCreate && roll < 0.1)) {
      await createEntity(client);
    } else if (idle.length > 0) {
      const entity = pickOne(idle);
      if (!certain(entity) || roll < 0.2) await refresh(entity, 'by its client');
      else if (roll < 0.35 && entity.etag !== undefined) await updateEntity(client, entity, 'current');
      else if (roll < 0.45 && entity.staleEtags.some((etag) => etag !== entity.etag)) await updateEntity(client, entity, 'stale');
      else await updateEntity(client, entity, 'plain');
    }
    await sleep(PACE_MS);
  }
}

/** After the load: parked writes are retried until answered or their bound is over. */
async function drainClient(client: Client, deadline: number): Promise<void> {
  while (client.parked.length > 0 && Date.now() < deadline) {
    await retryParked(client, 1_000);
    await sleep(200);
  }
  for (const write of client.parked.splice(0)) {
    // The key's claim should have been abandoned by now (src/http/idempotency.ts), so a retry runs.
    if (write.sawInFlight && write.firstLostAt !== undefined && loadStart + write.firstLostAt + RESOLVE_WITHIN_MS <= Date.now()) {
      found.stuck.push(`${write.label} (Idempotency-Key ${write.key}) was still answered idempotency_key_in_flight ${Math.round((Date.now() - loadStart - write.firstLostAt) / 1000)} s after its first attempt without an answer: ${write.attempts.join('; ')}`);
    }
    await write.settle(undefined);
  }
}

// --- SMS campaigns ---------------------------------------------------------------------------------------

interface Campaign {
  text: string;
  recipients: string[];
  write: Write;
  id?: number;
}
const campaigns: Campaign[] = [];
let phoneSerial = randomInt(10_000_000, 80_000_000);

/** A small campaign every CAMPAIGN_EVERY_MS, posted to the instance the killer spares (C). */
async function campaignLoop(loadEnd: number): Promise<void> {
  const parked: Campaign[] = [];
  for (let n = 0; Date.now() < loadEnd - 3_000; n += 1) {
    const recipients = Array.from({ length: CAMPAIGN_SIZE }, () => `+55219${phoneSerial++}`);
    const text = `Caos ${RUN} campanha ${n}: vote no dia 6!`;
    const campaign: Campaign = { text, recipients, write: undefined as unknown as Write };
    campaign.write = newWrite(`campaign ${n}`, '/api/sms/list_credentials/', { titulo: `Caos ${n}`, credencial: credentialId, mensagem: { recipient_list_str: recipients.join('\n'), mensagem: text } }, {}, async (answer) => {
      if (!answer) return;
      if (answer.status === 201 && typeof answer.body?.data?.id === 'number') campaign.id = answer.body.data.id;
      else found.answers.push(`${campaign.write.label} was answered ${answer.status} ${answer.text.slice(0, 600)}`);
    });
    campaign.write.prefer = () => slots[2]?.instance;
    campaigns.push(campaign);
    if (await send(campaign.write, 4_000)) await campaign.write.settle(campaign.write.answer);
    else parked.push(campaign);
    await sleep(CAMPAIGN_EVERY_MS);
  }
  for (const campaign of parked) {
    if (await send(campaign.write, 20_000)) await campaign.write.settle(campaign.write.answer);
    else await campaign.write.settle(undefined);
  }
}

const ourMessages = `SELECT m.id, m.recipient, m.status, m.provider_sid, c.id AS campaign_id, c.body
  FROM sms_messages m JOIN sms_campaigns c ON c.id = m.campaign_id WHERE c.body LIKE $1`;

async function waitForMessages(deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM (${ourMessages}) AS ours WHERE status = 'queued'`, [`Caos ${RUN} %`]);
    if (rows[0].n === 0) return;
    await sleep(500);
  }
}

// --- The killer ------------------------------------------------------------------------------------------

interface Busy {
  slot: Slot;
  sends: number;
  writes: number;
  creates: number;
}

/**
 * Every KILL_EVERY_MS, SIGKILL to A or B (never C, which takes the campaigns), and a restart on a new
 * port. The victim is whichever of the two is first found at the most telling moment within
 * KILL_WAIT_MS: a provider call and a create in flight; then less and less, but always a write.
 */
async function killerLoop(loadEnd: number): Promise<void> {
  for (let k = 0, at = FIRST_KILL_MS; loadStart + at < loadEnd; k += 1, at += KILL_EVERY_MS) {
    await sleep(Math.max(0, loadStart + at - Date.now()));
    // In turn when nothing better turns up: A, B, A, ...
    const candidates = [slots[k % 2]!, slots[(k + 1) % 2]!].filter((slot) => slot.instance && !slot.instance.exited());
    if (candidates.length === 0) continue;
    const busy = (slot: Slot): Busy => ({
      slot,
      sends: slot.provider.inFlight,
      writes: writesInFlight.get(slot.instance!) ?? 0,
      creates: createsInFlight.get(slot.instance!) ?? 0,
    });
    const wanted: Array<[share: number, good: (b: Busy) => boolean]> = [
      [0.3, (b) => b.sends > 0 && b.creates > 0],
      [0.7, (b) => b.sends > 0 && b.writes > 0],
      [0.9, (b) => b.creates > 0],
      [1, (b) => b.writes > 0],
    ];
    const waitStart = Date.now();
    let chosen: Slot | undefined;
    for (const [share, good] of wanted) {
      for (;;) {
        chosen = candidates.map(busy).find(good)?.slot;
        if (chosen || Date.now() >= waitStart + share * KILL_WAIT_MS) break;
        await sleep(1);
      }
      if (chosen) break;
    }
    const slot = chosen ?? candidates[0]!;
    const victim = slot.instance!;
    // Not the instant a request starts (a kill then mostly lands before the server has done anything),
    // but somewhere within it (writes take a few tens of milliseconds here), and while a write is under way.
    await sleep(randomInt(25));
    while (busy(slot).writes === 0 && Date.now() < waitStart + KILL_WAIT_MS + 2_000) await sleep(1);
    const caught = busy(slot);
    victim.child.kill('SIGKILL');
    const kill: Kill = { at: elapsed(), victim: victim.name, caught: `${caught.sends} provider calls, ${caught.writes} writes (${caught.creates} creates)` };
    kills.push(kill);
    kill.exit = await victim.exit;
    slot.instance = undefined;
    slot.generation += 1;
    const restarting = Date.now();
    try {
      slot.instance = await startSlot(slot);
      kill.restartedAs = `${slot.instance.name} on port ${slot.instance.port}`;
      kill.restartMs = Date.now() - restarting;
    } catch (error) {
      kill.error = String(error);
      return;
    }
  }
}

// --- The test --------------------------------------------------------------------------------------------

describe('three instances under load, one killed with SIGKILL and restarted every 20 s', () => {
  beforeAll(async () => {
    await simulator.start();
    simulator.addAccount(SMS_ACCOUNT, SMS_AUTH_TOKEN);
    redis = new Redis(REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
    await redis.connect();
    database = await createPostgresDatabase(POSTGRES_SERVER);
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    for (const letter of ['A', 'B', 'C']) {
      const provider = new SlowProvider(simulator.url, PROVIDER_DELAY_MS);
      await provider.start();
      slots.push({ letter, generation: 0, instance: undefined, provider });
    }
    const results = await Promise.allSettled(slots.map(async (slot) => (slot.instance = await startSlot(slot))));
    const failed = results.flatMap((result) => (result.status === 'rejected' ? [String(result.reason)] : []));
    if (failed.length > 0) throw new Error(failed.join('\n'));

    const login = await call(slots[0]!.instance!, 'POST', '/api/auth/login', {}, JSON.stringify(ADMIN));
    expect(login.status, `${login.text}\n${clusterOutput()}`).toBe(200);
    adminKey = login.body.data.token;
    // The campaigns' credential, for an entity of its own.
    const owner = await call(slots[1]!.instance!, 'POST', '/api/entidade/add/', auth(), JSON.stringify({ nome: `Caos ${RUN} campanha` }));
    expect(owner.status, owner.text).toBe(201);
    const credential = await call(slots[2]!.instance!, 'POST', '/api/sms/add_credential/', auth(), JSON.stringify({
      name: 'Caos',
      account_id: SMS_ACCOUNT,
      sender_id: '11940028922',
      secret: SMS_AUTH_TOKEN,
      entity_id: owner.body.data.id,
    }));
    expect(credential.status, credential.text).toBe(201);
    credentialId = credential.body.data.id;
    // Delivery under kills is under test here, not the electoral rules: the platform admin relaxes the new entity to warn.
    const relaxed = await call(slots[0]!.instance!, 'PUT', `/api/sms/compliance/?entity_id=${owner.body.data.id}`, auth(), JSON.stringify({ mode: 'warn', window: null }));
    expect(relaxed.status, relaxed.text).toBe(200);
  }, 50_000);

  afterAll(async () => {
    await tearDownCluster({ instances: started, db, database, redis, rateLimitPrefix: RATE_LIMIT_PREFIX });
    await Promise.all(slots.map((slot) => slot.provider.stop()));
    await simulator.stop();
  });

  it(
    'runs a mixed load, with retries, while instances are killed and restarted, and every parked write to its end',
    async () => {
      loadStart = Date.now();
      const loadEnd = loadStart + LOAD_MS;
      const clients: Client[] = Array.from({ length: CLIENTS }, (_, n) => ({ n: n + 1, entities: [], parked: [], creates: 0, ops: 0 }));
      await Promise.all([killerLoop(loadEnd), campaignLoop(loadEnd), ...clients.map((client) => clientLoop(client, loadEnd))]);

      // Every parked write to its end: answered, or past the bound by which its key must be free again.
      const lastKill = kills.length > 0 ? loadStart + kills[kills.length - 1]!.at : Date.now();
      const deadline = Math.max(Date.now() + 10_000, lastKill + RESOLVE_WITHIN_MS + 5_000);
      await Promise.all([...clients.map((client) => drainClient(client, deadline)), waitForMessages(deadline)]);

      // What the server shows in the end, for every entity: by its id, or, for a create that never got
      // an answer, by its nome (it may or may not exist).
      const { rows: stored } = await db.query<{ nome: string; n: number; first: number }>(
        `SELECT nome, count(*)::int AS n, min(id) AS first FROM entities WHERE nome LIKE $1 GROUP BY nome`,
        [`Caos ${RUN} c%`],
      );
      const byNome = new Map(stored.map((row) => [row.nome, row]));
      for (const entity of entities) {
        const row = byNome.get(entity.nome);
        const write = entity.create;
        if (row && row.n > 1) {
          found.twice.push(
            `${row.n} entities "${entity.nome}" from one Idempotency-Key (${write.key}): ${write.attempts.join('; ')}` +
              (write.sawInFlight && write.answer && !replayed(write.answer) ? '\n  (an attempt died holding the key; after the claim was abandoned a retry ran the create again)' : ''),
          );
        }
        if (entity.id === undefined) {
          // Refused, or never answered: it may have run all the same (then it is held to its created values).
          if (!row) continue;
          entity.id = row.first;
        } else if (!row) {
          found.lost.push(`the acknowledged create of ${describeEntity(entity)} left no row`);
          continue;
        }
        if (!(await refresh(entity, 'at the end'))) found.lost.push(`no instance showed ${describeEntity(entity)} at the end (see the unexpected answers)`);
      }

      // The campaigns: their rows, and what the provider took.
      const { rows: messages } = await db.query<{ id: number; recipient: string; status: string; provider_sid: string | null; campaign_id: number; body: string }>(ourMessages, [`Caos ${RUN} %`]);
      const { rows: jobs } = await db.query(`SELECT name, state, count(*)::int AS n FROM pgboss.job WHERE name IN ('sms-send', 'sms-campaign-send') GROUP BY name, state ORDER BY name, state`);
      const { rows: unfinished } = await db.query(
        `SELECT name, data, state, retry_count, output, started_on, completed_on FROM pgboss.job WHERE name IN ('sms-send', 'sms-campaign-send') AND state <> 'completed' ORDER BY created_on LIMIT 20`,
      );
      const jobStates =
        `sending jobs by kind and state: ${JSON.stringify(jobs)}; the unfinished ones: ${JSON.stringify(unfinished)}` +
        `\nthe slow providers' errors: ${JSON.stringify(slots.flatMap((slot) => slot.provider.errors.map((error) => `${slot.letter}: ${error}`)))}`;
      const sent = simulator.messages.filter((message) => message.body.startsWith(`Caos ${RUN} `));
      const sentTimes = new Map<string, number>();
      for (const message of sent) sentTimes.set(`${message.to} ${message.body}`, (sentTimes.get(`${message.to} ${message.body}`) ?? 0) + 1);
      for (const campaign of campaigns) {
        const rows = messages.filter((row) => row.body === campaign.text);
        const campaignIds = new Set(rows.map((row) => row.campaign_id));
        if (campaignIds.size > 1) found.twice.push(`${campaignIds.size} campaigns "${campaign.text}" from one Idempotency-Key (${campaign.write.key}): ${campaign.write.attempts.join('; ')}`);
        if (campaign.id !== undefined && rows.length !== campaign.recipients.length) {
          found.lost.push(`acknowledged campaign ${campaign.id} ("${campaign.text}") has ${rows.length} messages, not ${campaign.recipients.length}`);
        }
      }
      for (const row of messages) {
        const times = sentTimes.get(`${row.recipient} ${row.body}`) ?? 0;
        const simulated = sent.find((message) => message.to === row.recipient && message.body === row.body);
        if (row.status === 'queued' || times !== 1 || !simulated || row.provider_sid !== simulated.sid) {
          found.sms.push(
            `message ${row.id} (campaign ${row.campaign_id}, to ${row.recipient}): status ${row.status}, provider_sid ${row.provider_sid}; ` +
              `the provider took it ${times} times${times > 0 ? ` (sids ${sent.filter((message) => message.to === row.recipient && message.body === row.body).map((message) => message.sid).join(', ')})` : ''}`,
          );
        }
      }
      const known = new Set(messages.map((row) => `${row.recipient} ${row.body}`));
      for (const message of sent) if (!known.has(`${message.to} ${message.body}`)) found.sms.push(`the provider took a message to ${message.to} that no campaign row holds: ${message.body}`);
      if (found.sms.length > 0) found.sms.push(jobStates);

      loadRan = true;
      const summary = {
        seconds: Math.round(elapsed() / 1000),
        kills,
        entities: entities.length,
        ops: clients.map((client) => client.ops),
        campaigns: campaigns.length,
        messages: messages.length,
        ...counters,
        servedBy: Object.fromEntries(servedBy),
        providerCalls: Object.fromEntries(slots.map((slot) => [slot.letter, slot.provider.calls])),
        found: Object.fromEntries(Object.entries(found).map(([invariant, problems]) => [invariant, problems.length])),
        cut: cutWrites.map((write) => `${write.label}: ${write.attempts.join('; ')}`),
      };
      console.info(`chaos: ${JSON.stringify(summary)}`);

      // The run did what it claims: kills that landed on work, restarts, and clients that followed.
      expect(kills.length, clusterOutput()).toBeGreaterThanOrEqual(2);
      for (const kill of kills) {
        expect(kill.exit, JSON.stringify(kill)).toEqual({ code: null, signal: 'SIGKILL' });
        expect(kill.error, `${JSON.stringify(kill)}\n${clusterOutput()}`).toBeUndefined();
      }
      for (const kill of kills) expect(kill.caught, `a kill caught no write in flight: ${JSON.stringify(kill)}`).not.toMatch(/ 0 writes/);
      expect(cutWrites.length, 'no write was cut by a kill').toBeGreaterThan(0);
      expect(entities.filter((entity) => entity.id !== undefined).length).toBeGreaterThanOrEqual(CLIENTS * 2);
      expect(counters.updates).toBeGreaterThan(50);
      expect(campaigns.filter((campaign) => campaign.id !== undefined).length, clusterOutput()).toBeGreaterThan(5);
      // Clients followed the restarted instances to their new ports.
      for (const kill of kills) expect(servedBy.get(kill.restartedAs!.split(' ')[0]!) ?? 0, `${JSON.stringify(kill)} served no request`).toBeGreaterThan(0);
      // The killer spared C, which took the campaigns: it never restarted.
      expect(slots[2]!.instance?.exited(), clusterOutput()).toBe(false);
    },
    // The load, then the drain: until the last kill's claims are abandoned, at worst (about 105 s in all).
    LOAD_MS + RESOLVE_WITHIN_MS + 15_000,
  );

  it('loses no acknowledged write: every field shows a value it may have, every acknowledged create and campaign is stored', () => {
    expectNone('lost');
  });

  it('applies no effect twice: one entity per Idempotency-Key, a repeated request replayed byte for byte, no key left blocked past its bound', () => {
    expectNone('twice');
    expectNone('stuck');
    expect(counters.replaysChecked).toBeGreaterThan(0);
  });

  it('sends every campaign message exactly once, under the sid the database keeps', () => {
    expectNone('sms');
  });

  it('loses no entity field to an update that did not name it (nested entries keep their ids)', () => {
    expectNone('unnamed');
  });

  it('refuses If-Match with a stale ETag (409 edit_conflict, nothing changed) and takes the current one', () => {
    expectNone('ifMatch');
    expect(counters.staleChecked + found.ifMatch.length, 'no stale If-Match was tried').toBeGreaterThan(0);
    expect(counters.currentChecked + found.ifMatch.length, 'no current If-Match was tried').toBeGreaterThan(0);
  });

  it('answers every write with a status its contract gives it', () => {
    expectNone('answers');
  });
});
