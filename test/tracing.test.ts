/**
 * Traces with OpenTelemetry (issue 43 §4), in server processes of their own: the suite shares module
 * graphs between files, and tracing patches modules as they load, so each case starts src/server.ts as
 * `npm start` does, with test/helpers/traced-server.ts imported before it (its comment says how it
 * keeps the spans and what it reports over the IPC channel).
 *
 * - With the in-memory exporter: a client's `traceparent` is continued (same trace id, its span the
 *   parent); the request's tree holds Express's spans and, on PostgreSQL, the `pg` queries of the
 *   request and of its job; the job it enqueued runs as a `webhook-delivery` span in the same trace;
 *   an endpoint with `send_trace_context` gets a `traceparent` of that trace, one without gets none
 *   (although the http instrumentation wrote one into the request).
 * - Through the real `--import` module: with no OTEL_* variable nothing is registered, no instrumentation
 *   is loaded or wraps `http`, and no header goes out; OTEL_TRACES_EXPORTER turns it on (spans printed by
 *   the console exporter). Which variables turn it on (OTEL_SDK_DISABLED=true off whatever else is set) is
 *   checked on settings.ts's function, the one register.ts asks.
 * Runs on SQLite, and on PostgreSQL with TEST_DATABASE_URL (the pg spans are checked there).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requestedTraceExporters } from '../src/tracing/settings.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { freePort, waitFor } from './helpers/process.js';
import type { ReportedSpan, TracingReport } from './helpers/traced-server.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
const START_TIMEOUT_MS = 90_000;
const PROCESS_TEST_TIMEOUT = 180_000;
const ADMIN_PASSWORD = 'Rastros-de-campanha-2026!';
const ENDPOINTS = '/api/webhooks/endpoints/';
const SERVER = 1;
const ON_POSTGRES = Boolean(process.env.TEST_DATABASE_URL);

/** A webhook receiver on loopback that keeps the headers of every request, by path. */
class Receiver {
  readonly received: Array<{ path: string; headers: IncomingHttpHeaders }> = [];
  private server!: Server;
  base = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        this.received.push({ path: req.url ?? '', headers: req.headers });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

interface TracedServer {
  baseUrl: string;
  child: ChildProcess;
  output(): string;
  report(): Promise<TracingReport>;
  stop(): Promise<void>;
}

const servers: TracedServer[] = [];
const databases: TestDatabase[] = [];
let receiver: Receiver;

beforeAll(async () => {
  receiver = await new Receiver().start();
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop()));
  await Promise.all(databases.splice(0).map((database) => database.drop()));
});

afterAll(async () => {
  await receiver?.close();
});

/** The environment without any OTEL_* variable of the machine running the tests. */
function environmentWithoutOtel(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => !entry[0].startsWith('OTEL_') && entry[1] !== undefined));
}

/** src/server.ts with traced-server.ts imported first, on a fresh database; resolves once it listens. */
async function startTracedServer(env: Record<string, string>): Promise<TracedServer> {
  const database = await createTestDatabase({ migrated: true });
  databases.push(database);
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', './test/helpers/traced-server.ts', 'src/server.ts'], {
    cwd: projectRoot,
    env: {
      ...environmentWithoutOtel(),
      DATABASE_URL: database.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      // Nothing listens there: the server starts without the municipality list, which these tests do not read.
      MUNICIPIOS_SOURCE: `http://127.0.0.1:${await freePort()}/municipios.csv`,
      MUNICIPIOS_SHA256: '',
      ADMIN_USERNAME: 'admin',
      ADMIN_EMAIL: 'admin@palanque.test',
      ADMIN_PASSWORD,
      PASSWORD_HASH_COST: '12',
      SECRETS_KEY: randomBytes(32).toString('base64'),
      OUTBOUND_ALLOW_PRIVATE_ADDRESSES: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const output = () => `--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`;
  const server: TracedServer = {
    baseUrl: `http://127.0.0.1:${port}`,
    child,
    output,
    report: () =>
      new Promise<TracingReport>((resolve, reject) => {
        child.once('message', (message) => resolve(message as TracingReport));
        child.send('report', (error) => error && reject(error));
      }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  servers.push(server);
  await waitFor(() => (stdout.includes('"msg":"listening on') ? true : undefined), {
    timeoutMs: START_TIMEOUT_MS,
    what: 'the server to listen',
    failEarly: () => (child.exitCode !== null ? 'the server exited' : undefined),
    output,
  });
  return server;
}

async function call(server: TracedServer, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: Json; text: string }> {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, text };
}

/** The admin's key, an entity of theirs, and two endpoints on the receiver: one that asked for the trace context, one that did not. */
async function twoEndpoints(server: TracedServer): Promise<{ auth: Record<string, string>; traced: Json; plain: Json }> {
  const login = await call(server, 'POST', '/api/auth/login', {}, { username: 'admin', password: ADMIN_PASSWORD });
  expect(login.status, login.text).toBe(200);
  const auth = { Authorization: `Token ${login.body.data.token}` };
  const entity = await call(server, 'POST', '/api/entidade/add/?tp=candidato', auth, { nome: 'Maria Santos' });
  expect(entity.status, entity.text).toBe(201);
  const entityId = entity.body.data.id;
  const mark = randomUUID();
  const traced = await call(server, 'POST', ENDPOINTS, auth, { entity_id: entityId, url: `${receiver.base}/traced/${mark}`, event_types: ['monitor.alert'], send_trace_context: true });
  expect(traced.status, traced.text).toBe(201);
  const plain = await call(server, 'POST', ENDPOINTS, auth, { entity_id: entityId, url: `${receiver.base}/plain/${mark}`, event_types: ['monitor.alert'] });
  expect(plain.status, plain.text).toBe(201);
  return { auth, traced: traced.body.data, plain: plain.body.data };
}

/** Sends a `webhook.test` to the endpoint with the client's `traceparent`, and waits for the receiver to get it. */
async function testDelivery(server: TracedServer, auth: Record<string, string>, endpoint: Json, traceparent: string): Promise<IncomingHttpHeaders> {
  const path = new URL(endpoint.url).pathname;
  const sent = await call(server, 'POST', `${ENDPOINTS}${endpoint.id}/test/`, { ...auth, traceparent });
  expect(sent.status, sent.text).toBe(201);
  const delivered = await waitFor(() => receiver.received.find((request) => request.path === path), { timeoutMs: 30_000, what: `a delivery to ${path}`, output: server.output });
  return delivered.headers;
}

function traceparentOf(traceId: string, spanId: string): string {
  return `00-${traceId}-${spanId}-01`;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** The spans between `span` and its trace's root, nearest first (those exported so far). */
function ancestorsOf(span: ReportedSpan, spans: ReportedSpan[]): ReportedSpan[] {
  const byId = new Map(spans.map((each) => [each.spanId, each]));
  const chain: ReportedSpan[] = [];
  for (let parent = span.parentSpanId && byId.get(span.parentSpanId); parent; parent = parent.parentSpanId && byId.get(parent.parentSpanId)) chain.push(parent);
  return chain;
}

function isUnder(span: ReportedSpan, ancestor: ReportedSpan, spans: ReportedSpan[]): boolean {
  return ancestorsOf(span, spans).some((each) => each.spanId === ancestor.spanId);
}

describe('which variables turn tracing on (src/tracing/settings.ts)', () => {
  it('is off without OTEL_* variables, on for an exporter or an OTLP endpoint, and off for none or OTEL_SDK_DISABLED=true', () => {
    expect(requestedTraceExporters({})).toEqual([]);
    expect(requestedTraceExporters({ OTEL_SERVICE_NAME: 'palanque', OTEL_TRACES_SAMPLER: 'always_on' })).toEqual([]);
    expect(requestedTraceExporters({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual(['otlp']);
    expect(requestedTraceExporters({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toEqual(['otlp']);
    expect(requestedTraceExporters({ OTEL_TRACES_EXPORTER: 'console' })).toEqual(['console']);
    expect(requestedTraceExporters({ OTEL_TRACES_EXPORTER: 'otlp, Zipkin' })).toEqual(['otlp', 'zipkin']);
    expect(requestedTraceExporters({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual([]);
    expect(requestedTraceExporters({ OTEL_SDK_DISABLED: 'TRUE', OTEL_TRACES_EXPORTER: 'otlp' })).toEqual([]);
    // Only `true` is true; an empty value is unset.
    expect(requestedTraceExporters({ OTEL_SDK_DISABLED: '1', OTEL_TRACES_EXPORTER: 'otlp' })).toEqual(['otlp']);
    expect(requestedTraceExporters({ OTEL_TRACES_EXPORTER: '', OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toEqual([]);
    expect(requestedTraceExporters({ OTEL_TRACES_EXPORTER: '', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual(['otlp']);
  });
});

describe('a traced server (in-memory exporter)', () => {
  it(
    "continues the client's trace into the request, its job and the webhook that asked for it, and sends no trace header to one that did not",
    async () => {
      const server = await startTracedServer({ TEST_TRACES: 'memory' });
      const { auth, traced, plain } = await twoEndpoints(server);
      expect(traced.send_trace_context).toBe(true);
      expect(plain.send_trace_context).toBe(false);

      const [tracedTrace, tracedParent, plainTrace, plainParent] = [hex(16), hex(8), hex(16), hex(8)];
      const tracedHeaders = await testDelivery(server, auth, traced, traceparentOf(tracedTrace, tracedParent));
      const plainHeaders = await testDelivery(server, auth, plain, traceparentOf(plainTrace, plainParent));

      // The endpoint that asked gets the client's trace; the other gets no trace header at all.
      expect(tracedHeaders.traceparent).toMatch(new RegExp(`^00-${tracedTrace}-[0-9a-f]{16}-01$`));
      for (const field of ['traceparent', 'tracestate', 'baggage']) expect(plainHeaders[field], field).toBeUndefined();

      // Both jobs ran and ended (their spans are exported when they end).
      const report = await waitFor(
        async () => {
          const current = await server.report();
          const jobs = current.spans.filter((span) => span.name === 'webhook-delivery' && [tracedTrace, plainTrace].includes(span.traceId));
          return jobs.length === 2 ? current : undefined;
        },
        { timeoutMs: 30_000, what: 'both webhook-delivery spans', output: server.output },
      );
      expect(report.registered).toBe(true);
      const { spans } = report;
      for (const [traceId, clientSpan] of [[tracedTrace, tracedParent], [plainTrace, plainParent]] as const) {
        // The request: a server span of the client's trace whose parent is the client's span.
        const request = spans.find((span) => span.traceId === traceId && span.kind === SERVER && span.parentSpanId === clientSpan);
        expect(request, JSON.stringify(spans.filter((span) => span.traceId === traceId))).toBeDefined();
        // Express's middleware and handlers under it.
        const express = spans.filter((span) => span.scope === '@opentelemetry/instrumentation-express' && isUnder(span, request!, spans));
        expect(express.length).toBeGreaterThan(0);
        // The job it enqueued: a child of a span of the request, named after the job.
        const job = spans.find((span) => span.name === 'webhook-delivery' && span.traceId === traceId)!;
        expect(isUnder(job, request!, spans), 'the job span descends from the request span').toBe(true);
        expect(job.attributes['messaging.destination.name']).toBe('webhook-delivery');
        // The delivery's POST is a client span under the job, with or without the header.
        const post = spans.find((span) => span.scope === '@opentelemetry/instrumentation-http' && span.kind === 2 && isUnder(span, job, spans));
        expect(post, 'the delivery request is traced under the job').toBeDefined();
        if (traceId === tracedTrace) expect(tracedHeaders.traceparent).toBe(traceparentOf(tracedTrace, post!.spanId));
      }

      if (ON_POSTGRES) {
        // On PostgreSQL the tree reaches the database: the request's queries (Sequelize, pg-boss's send) and the job's.
        const request = spans.find((span) => span.traceId === tracedTrace && span.kind === SERVER)!;
        const job = spans.find((span) => span.name === 'webhook-delivery' && span.traceId === tracedTrace)!;
        const queries = spans.filter((span) => span.scope === '@opentelemetry/instrumentation-pg' && span.traceId === tracedTrace);
        expect(queries.filter((span) => isUnder(span, request, spans) && !isUnder(span, job, spans)).length, 'queries of the request').toBeGreaterThan(0);
        expect(queries.filter((span) => isUnder(span, job, spans)).length, 'queries of the job').toBeGreaterThan(0);
        expect(queries.every((span) => span.attributes['db.system'] === 'postgresql' || span.attributes['db.system.name'] === 'postgresql')).toBe(true);
        // pg-boss's polling outside any trace makes no span.
        expect(spans.filter((span) => span.scope === '@opentelemetry/instrumentation-pg' && span.parentSpanId === undefined)).toEqual([]);
      }

      // The option changes on PATCH like any field.
      const changed = await call(server, 'PATCH', `${ENDPOINTS}${plain.id}/`, auth, { send_trace_context: true });
      expect(changed.status, changed.text).toBe(200);
      expect(changed.body.data.send_trace_context).toBe(true);
    },
    PROCESS_TEST_TIMEOUT,
  );
});

describe('npm start\'s --import module (src/tracing/register.ts)', () => {
  it(
    'with no OTEL_* variable registers nothing, loads no SDK module, wraps no http, and sends no trace header even to an endpoint that asks',
    async () => {
      const server = await startTracedServer({});
      const { auth, traced } = await twoEndpoints(server);
      const headers = await testDelivery(server, auth, traced, traceparentOf(hex(16), hex(8)));
      expect(headers.traceparent).toBeUndefined();
      const report = await server.report();
      expect(report).toEqual({ spans: [], registered: false, httpWrapped: false, sdkModules: 0 });
    },
    PROCESS_TEST_TIMEOUT,
  );

  it(
    "with OTEL_TRACES_EXPORTER=console traces: the SDK is loaded and registered, http wrapped, and the client's trace id printed",
    async () => {
      const on = await startTracedServer({ OTEL_TRACES_EXPORTER: 'console', OTEL_SERVICE_NAME: 'palanque-test', OTEL_BSP_SCHEDULE_DELAY: '100' });
      const traceId = hex(16);
      const answer = await fetch(`${on.baseUrl}/livez`);
      expect(answer.status).toBe(200);
      await fetch(`${on.baseUrl}/`, { headers: { traceparent: traceparentOf(traceId, hex(8)) } });
      await waitFor(() => (on.output().includes(`traceId: '${traceId}'`) ? true : undefined), { timeoutMs: 20_000, what: 'the span printed', output: on.output });
      expect(on.output()).toContain("'service.name': 'palanque-test'");
      expect(await on.report()).toMatchObject({ registered: true, httpWrapped: true });
      expect((await on.report()).sdkModules).toBeGreaterThan(0);
    },
    PROCESS_TEST_TIMEOUT,
  );
});
