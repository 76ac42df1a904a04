/**
 * Prometheus metrics (prom-client): requests and their latency by operationId, method and status, the
 * database pool, the job queue, and Node's process metrics. Served at GET /metrics to a caller holding METRICS_TOKEN
 * (Authorization: Bearer <token>), and not at all when no token is configured: metrics reveal traffic
 * and must not be public.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { JobStats } from '../jobs/queue.js';
import type { CompletionObserver } from './completion.js';

export interface PoolStats {
  size: number;
  available: number;
  using: number;
  waiting: number;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'palanque_http_requests_total',
    help: 'HTTP requests answered, by operation, method and status.',
    labelNames: ['operation', 'method', 'status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'palanque_http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its response.',
    labelNames: ['operation', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  constructor({ poolStats, jobStats }: { poolStats?: () => PoolStats | undefined; jobStats?: () => Promise<JobStats> } = {}) {
    collectDefaultMetrics({ register: this.registry, prefix: 'palanque_' });
    if (jobStats) {
      new Gauge({
        name: 'palanque_jobs',
        help: 'Background jobs by state (failed counts failed and dead jobs).',
        labelNames: ['state'] as const,
        registers: [this.registry],
        async collect() {
          const stats = await jobStats();
          for (const state of ['queued', 'running', 'failed'] as const) this.set({ state }, stats[state]);
        },
      });
    }
    if (poolStats) {
      new Gauge({
        name: 'palanque_db_pool_connections',
        help: 'Database pool connections by state.',
        labelNames: ['state'] as const,
        registers: [this.registry],
        collect() {
          const stats = poolStats();
          if (!stats) return;
          for (const state of ['size', 'available', 'using', 'waiting'] as const) this.set({ state }, stats[state]);
        },
      });
    }
  }

  observe(operation: string, method: string, status: number, seconds: number): void {
    const labels = { operation, method, status: String(status) };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
  }
}

/** Times every request; the operation is the one the contract matched, `unmatched` otherwise. */
export function requestMetrics(metrics: Metrics): CompletionObserver {
  return (req, res, startedAt) => {
    const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
    metrics.observe(operationOf(req, res.locals), req.method, res.statusCode, seconds);
  };
}

function operationOf(req: Request, locals: Record<string, unknown>): string {
  const matched = (req as { openapi?: { schema?: { operationId?: string } } }).openapi?.schema?.operationId;
  return String(locals.operationId ?? matched ?? 'unmatched');
}

/** GET /metrics for a caller with the token; 404 (as if absent) when no token is configured. */
export function metricsEndpoint(metrics: Metrics, token: string | undefined): RequestHandler {
  // Not an async function: every request passes here, and only /metrics needs to wait.
  return (req, res, next) => {
    if (req.path !== '/metrics' || !token) return next();
    if (!bearerMatches(req.get('Authorization'), token)) {
      res.status(401).set('WWW-Authenticate', 'Bearer realm="metrics"').type('text/plain').send('Unauthorized\n');
      return;
    }
    metrics.registry.metrics().then((text) => void res.type(metrics.registry.contentType).send(text), next);
  };
}

/** Constant-time comparison of digests, so neither the token's content nor its length leaks by timing. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const sent = /^Bearer (.+)$/i.exec(header ?? '')?.[1] ?? '';
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(sent), digest(token));
}
