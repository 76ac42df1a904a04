/**
 * Prometheus metrics (prom-client): requests and their latency by operationId, method and status; the
 * database pool, the Reader's connections, the job queue (by state, and per queue its depth and oldest
 * job's age) and its own pool; SMS sent and failed by provider; failed webhook tries; 429s by budget;
 * Redis up or the rate limits counting in memory; the build; and Node's process metrics. Served at GET /metrics to a caller holding METRICS_TOKEN
 * (Authorization: Bearer <token>), and not at all when no token is configured: metrics reveal traffic
 * and must not be public. docs/operations.md ("Metrics and logs") lists them with their labels.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { JobQueue, JobStats } from '../jobs/queue.js';
import type { CompletionObserver } from './completion.js';

export interface PoolStats {
  size: number;
  available: number;
  using: number;
  waiting: number;
}

/** The Reader's connections (db/reader.ts): how many it may open, and the reads under way on them. */
export interface ReaderStats {
  connections: number;
  inFlight: number;
}

/** What the build says of itself (palanque_build_info). */
export interface BuildInfo {
  /** package.json's version. */
  version: string;
  /** GIT_COMMIT, when the deployment sets it. */
  commit?: string;
}

export interface MetricsSources {
  poolStats?: () => PoolStats | undefined;
  jobStats?: () => Promise<JobStats>;
  /** The job queue: its depth and oldest job per queue, and its own pool, when it reports them. */
  jobs?: Pick<JobQueue, 'queueStats' | 'poolStats'>;
  readerStats?: () => ReaderStats | undefined;
  build?: BuildInfo;
}

const SCRAPES_AND_PROBES: Record<string, string> = { '/metrics': 'metrics', '/livez': 'livez', '/readyz': 'readyz' };

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

  private readonly smsSentTotal = new Counter({
    name: 'palanque_sms_sent_total',
    help: "SMS the provider took, by provider (the credentials' adapter).",
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });
  private readonly smsFailedTotal = new Counter({
    name: 'palanque_sms_failed_total',
    help: 'SMS the provider did not take, by provider and outcome: refused (the message fails), not_accepted or unknown (retried).',
    labelNames: ['provider', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly webhookFailures = new Counter({
    name: 'palanque_webhook_delivery_failures_total',
    help: 'Failed webhook delivery tries; final="true" when no retry follows (the delivery is failed).',
    labelNames: ['final'] as const,
    registers: [this.registry],
  });
  private readonly rateLimitedTotal = new Counter({
    name: 'palanque_rate_limited_total',
    help: 'Requests refused with 429 rate_limited, by the budget that was spent.',
    labelNames: ['budget'] as const,
    registers: [this.registry],
  });
  private redis: Redis | undefined;

  constructor({ poolStats, jobStats, jobs, readerStats, build }: MetricsSources = {}) {
    collectDefaultMetrics({ register: this.registry, prefix: 'palanque_' });
    new Gauge({
      name: 'palanque_build_info',
      help: 'The running build: package version, git commit (GIT_COMMIT, "unknown" when unset) and Node.js version; always 1.',
      labelNames: ['version', 'commit', 'node'] as const,
      registers: [this.registry],
    }).set({ version: build?.version ?? 'unknown', commit: build?.commit ?? 'unknown', node: process.version }, 1);
    const redisOf = () => this.redis;
    new Gauge({
      name: 'palanque_rate_limits_in_memory',
      help: "1 when this instance counts the rate-limit budgets in its own memory (no REDIS_URL, or Redis down: the fallback), 0 when in Redis.",
      registers: [this.registry],
      collect() {
        const redis = redisOf();
        this.set(redis && redis.status === 'ready' ? 0 : 1);
      },
    });
    if (jobs?.queueStats) {
      const queueStats = jobs.queueStats.bind(jobs);
      // One query per scrape serves both gauges: the first collect reads, the second takes its result.
      let pending: Promise<Awaited<ReturnType<typeof queueStats>>> | undefined;
      const read = () => (pending ??= queueStats().finally(() => setImmediate(() => (pending = undefined))));
      new Gauge({
        name: 'palanque_job_queue_depth',
        help: 'Jobs waiting to run (queued, or failed and waiting for a retry), by queue (kind of job).',
        labelNames: ['queue'] as const,
        registers: [this.registry],
        async collect() {
          this.reset();
          for (const stats of await read()) this.set({ queue: stats.name }, stats.waiting);
        },
      });
      new Gauge({
        name: 'palanque_job_queue_oldest_age_seconds',
        help: 'Seconds since the oldest waiting job of the queue was created (0 when none waits).',
        labelNames: ['queue'] as const,
        registers: [this.registry],
        async collect() {
          this.reset();
          for (const stats of await read()) this.set({ queue: stats.name }, stats.oldestWaitingSeconds);
        },
      });
      new Gauge({
        name: 'palanque_job_queue_running',
        help: 'Jobs running, by queue.',
        labelNames: ['queue'] as const,
        registers: [this.registry],
        async collect() {
          this.reset();
          for (const stats of await read()) this.set({ queue: stats.name }, stats.running);
        },
      });
    }
    if (jobs?.poolStats) {
      const queuePool = jobs.poolStats.bind(jobs);
      new Gauge({
        name: 'palanque_job_pool_connections',
        help: "The job queue's own database pool (pg-boss) by state.",
        labelNames: ['state'] as const,
        registers: [this.registry],
        collect() {
          const stats = queuePool();
          if (!stats) return;
          for (const state of ['size', 'available', 'using', 'waiting'] as const) this.set({ state }, stats[state]);
        },
      });
    }
    if (readerStats) {
      new Gauge({
        name: 'palanque_db_reader_connections',
        help: "The Reader's read connections (db/reader.ts): max, the most it opens; in_flight, the reads under way on them.",
        labelNames: ['state'] as const,
        registers: [this.registry],
        collect() {
          const stats = readerStats();
          if (!stats) return;
          this.set({ state: 'max' }, stats.connections);
          this.set({ state: 'in_flight' }, stats.inFlight);
        },
      });
    }
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

  /** The Redis the rate limits share, whose state palanque_redis_up and palanque_rate_limits_in_memory report. */
  watchRedis(redis: Redis | undefined): void {
    if (!redis || this.redis) return;
    this.redis = redis;
    new Gauge({
      name: 'palanque_redis_up',
      help: 'Whether Redis (REDIS_URL) is connected and ready: 1 or 0. Absent without REDIS_URL.',
      registers: [this.registry],
      collect() {
        this.set(redis.status === 'ready' ? 1 : 0);
      },
    });
  }

  smsSent(provider: string): void {
    this.smsSentTotal.inc({ provider });
  }

  smsFailed(provider: string, outcome: string): void {
    this.smsFailedTotal.inc({ provider, outcome });
  }

  webhookDeliveryFailed(final: boolean): void {
    this.webhookFailures.inc({ final: String(final) });
  }

  rateLimited(budget: string): void {
    this.rateLimitedTotal.inc({ budget });
  }
}

/**
 * Times every request; the operation is the one the contract matched, `metrics`, `livez` or `readyz` for
 * a scrape or a probe (outside the contract), and `unmatched` for any other path. Counts each 429 by the
 * budget the rate limits name (`res.locals.rateLimitedBudget`, http/rate-limits.ts).
 */
export function requestMetrics(metrics: Metrics): CompletionObserver {
  return (req, res, startedAt) => {
    const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
    metrics.observe(operationOf(req, res.locals), req.method, res.statusCode, seconds);
    if (res.statusCode === 429 && typeof res.locals.rateLimitedBudget === 'string') metrics.rateLimited(res.locals.rateLimitedBudget);
  };
}

function operationOf(req: Request, locals: Record<string, unknown>): string {
  const matched = (req as { openapi?: { schema?: { operationId?: string } } }).openapi?.schema?.operationId;
  return String(locals.operationId ?? matched ?? SCRAPES_AND_PROBES[req.path] ?? 'unmatched');
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
