/**
 * What the service shows to browsers and operators: security headers, CORS limited to the configured
 * front ends, Prometheus metrics behind a token, and the HTTP server's limits.
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../src/http/listen.js';
import { Metrics } from '../src/http/metrics.js';
import { startTestApp, type TestApp } from './helpers/app.js';

const FRONT_END = 'https://app.palanque.test';
const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ withMunicipalities: true, config: { corsOrigins: [FRONT_END], metricsToken: METRICS_TOKEN } });
});

afterAll(async () => {
  await app?.close();
});

describe('security headers', () => {
  it.each([
    ['a list page (fast path)', '/api/municipios/'],
    ['an error', '/api/municipios/?page=0'],
    ['an unknown path', '/nada'],
  ])('are set on %s', async (_what, path) => {
    const response = await fetch(`${app.baseUrl}${path}`);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-security-policy')).toBe("default-src 'none';frame-ancestors 'none'");
    expect(response.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(response.headers.get('strict-transport-security')).toMatch(/max-age=\d+/);
    expect(response.headers.get('x-powered-by')).toBeNull();
  });
});

describe('CORS', () => {
  it('answers a preflight from a configured front end, allowing the contract headers', async () => {
    const response = await fetch(`${app.baseUrl}/api/auth/login`, {
      method: 'OPTIONS',
      headers: { Origin: FRONT_END, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type, idempotency-key, x-request-id' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(FRONT_END);
    const allowed = response.headers.get('access-control-allow-headers')?.toLowerCase().split(',') ?? [];
    expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-request-id', 'idempotency-key']));
  });

  it('lets a front end send If-Match with an entity update and read the ETag of the answer', async () => {
    const preflight = await fetch(`${app.baseUrl}/api/entidade/add/`, {
      method: 'OPTIONS',
      headers: { Origin: FRONT_END, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization, content-type, if-match' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase().split(',')).toContain('if-match');
    const answer = await fetch(`${app.baseUrl}/api/municipios/?codigo_uf=53`, { headers: { Origin: FRONT_END } });
    expect(answer.headers.get('access-control-expose-headers')?.split(',')).toContain('ETag');
  });

  it('lets the front end read the request id and the rate-limit headers', async () => {
    const response = await fetch(`${app.baseUrl}/api/municipios/?codigo_uf=53`, { headers: { Origin: FRONT_END } });
    expect(response.headers.get('access-control-allow-origin')).toBe(FRONT_END);
    const exposed = response.headers.get('access-control-expose-headers')?.split(',') ?? [];
    expect(exposed).toEqual(expect.arrayContaining(['X-Request-Id', 'Retry-After', 'RateLimit', 'Idempotent-Replayed']));
  });

  it('allows and exposes exactly the headers docs/security.md lists', async () => {
    const page = readFileSync(new URL('../docs/security.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    /** The `names` in the parentheses after `lead`, lower-cased and sorted. */
    const listed = (lead: string) => [...(page.match(new RegExp(`${lead} \\(([^)]*)\\)`))?.[1] ?? '').matchAll(/`([^`]+)`/g)].map(([, name]) => name!.toLowerCase()).sort();
    const sent = (header: string | null) => (header ?? '').toLowerCase().split(',').sort();
    const preflight = await fetch(`${app.baseUrl}/api/entidade/add/`, {
      method: 'OPTIONS',
      headers: { Origin: FRONT_END, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'if-match' },
    });
    const answer = await fetch(`${app.baseUrl}/api/municipios/?codigo_uf=53`, { headers: { Origin: FRONT_END } });
    expect(listed('It allows the headers the contract uses')).toEqual(sent(preflight.headers.get('access-control-allow-headers')));
    expect(listed('exposes those a front end reads')).toEqual(sent(answer.headers.get('access-control-expose-headers')));
  });

  it('gives nothing to other origins, and nothing at all when no origin is configured', async () => {
    const stranger = await fetch(`${app.baseUrl}/api/municipios/`, { headers: { Origin: 'https://evil.example' } });
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
    const closed = await startTestApp({ withMunicipalities: false });
    try {
      const response = await fetch(`${closed.baseUrl}/api/municipios/`, { headers: { Origin: FRONT_END } });
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await closed.close();
    }
  });

  it('leaves a plain OPTIONS (no preflight) to the API: 200 with Allow', async () => {
    const response = await fetch(`${app.baseUrl}/api/municipios/`, { method: 'OPTIONS' });
    expect(response.status).toBe(200);
    expect(response.headers.get('allow')).toBe('GET, POST, HEAD, OPTIONS');
  });
});

describe('metrics', () => {
  const scrape = (authorization?: string) =>
    fetch(`${app.baseUrl}/metrics`, { headers: authorization ? { Authorization: authorization } : {} });

  it('refuses a scrape without the token or with a wrong one', async () => {
    expect((await scrape()).status).toBe(401);
    expect((await scrape('Bearer not-the-token-at-all-0000')).status).toBe(401);
    expect((await scrape(`Token ${METRICS_TOKEN}`)).status).toBe(401);
  });

  it('counts requests and their latency by operation, method and status', async () => {
    for (let i = 0; i < 3; i += 1) await fetch(`${app.baseUrl}/api/municipios/?page=${i + 1}`);
    await fetch(`${app.baseUrl}/api/municipios/?page=0`);
    await fetch(`${app.baseUrl}/nada`);
    const response = await scrape(`Bearer ${METRICS_TOKEN}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await response.text();
    expect(counter(text, 'palanque_http_requests_total', 'listMunicipalities', 'GET', '200')).toBeGreaterThanOrEqual(3);
    expect(counter(text, 'palanque_http_requests_total', 'listMunicipalities', 'GET', '400')).toBeGreaterThanOrEqual(1);
    expect(counter(text, 'palanque_http_requests_total', 'unmatched', 'GET', '404')).toBeGreaterThanOrEqual(1);
    expect(text).toContain('palanque_http_request_duration_seconds_bucket{le="0.05",operation="listMunicipalities",method="GET",status="200"}');
    expect(text).toContain('palanque_process_resident_memory_bytes');
  });

  it('reports the database pool on PostgreSQL', async () => {
    const text = await (await scrape(`Bearer ${METRICS_TOKEN}`)).text();
    if (app.sequelize.getDialect() === 'postgres') {
      expect(text).toMatch(/palanque_db_pool_connections\{state="size"\} \d+/);
    } else {
      expect(text).not.toContain('palanque_db_pool_connections{');
    }
  });

  it('does not exist when no token is configured', async () => {
    const plain = await startTestApp({});
    try {
      const response = await fetch(`${plain.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ error: { code: 'not_found' } });
    } finally {
      await plain.close();
    }
  });
});

describe('job metrics', () => {
  it('reports the job queue by state', async () => {
    const metrics = new Metrics({ jobStats: async () => ({ queued: 4, running: 1, failed: 2 }) });
    const text = await metrics.registry.metrics();
    expect(text).toContain('palanque_jobs{state="queued"} 4');
    expect(text).toContain('palanque_jobs{state="running"} 1');
    expect(text).toContain('palanque_jobs{state="failed"} 2');
  });
});

function counter(text: string, name: string, operation: string, method: string, status: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}{operation="${operation}",method="${method}",status="${status}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('HTTP server limits', () => {
  async function limitedServer(limits: { requestTimeoutMs: number; maxHeaderBytes: number }) {
    const handler = express().get('/', (_req, res) => void res.send('ok'));
    const server = createHttpServer(handler, { keepAliveTimeoutMs: 65_000, ...limits });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, port: (server.address() as AddressInfo).port };
  }

  it('keeps idle connections longer than a load balancer does (65 s by default)', async () => {
    const { server } = await limitedServer({ requestTimeoutMs: 30_000, maxHeaderBytes: 16_384 });
    expect(server.keepAliveTimeout).toBe(65_000);
    expect(server.requestTimeout).toBe(30_000);
    expect(server.headersTimeout).toBeLessThanOrEqual(server.requestTimeout);
    server.close();
  });

  it('answers 431 to headers over the size bound', async () => {
    const { server, port } = await limitedServer({ requestTimeoutMs: 30_000, maxHeaderBytes: 2_048 });
    const response = await fetch(`http://127.0.0.1:${port}/`, { headers: { 'X-Filler': 'x'.repeat(4_096) } });
    expect(response.status).toBe(431);
    server.close();
  });

  it('cuts a client that does not finish its request within the timeout (408)', async () => {
    const { server, port } = await limitedServer({ requestTimeoutMs: 1_000, maxHeaderBytes: 16_384 });
    const started = Date.now();
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n')); // headers never end
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString()));
      socket.on('close', () => resolve(received));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(Date.now() - started).toBeLessThan(4_000);
    server.close();
  });
});
