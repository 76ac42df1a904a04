/**
 * What a process serves when it does not serve the API (PALANQUE_ROLE, docs/operations.md "Roles: api
 * and worker"): the probes (`/livez`, `/readyz`) and `/metrics`, and for every other path an answer in
 * the error model: 404 on a worker, which never serves the API, and 503 on an api instance that waits
 * for its schema (a client retries it elsewhere; its /readyz says what is missing).
 */
import express, { type Express, type RequestHandler } from 'express';
import { ApiError, sendError } from '../http/errors.js';
import { metricsEndpoint, type Metrics } from '../http/metrics.js';
import { requestId } from '../http/request-id.js';
import type { Logger } from '../logger.js';
import { probes, type ReadinessSources } from './readiness.js';

export interface ProbeAppOptions {
  readiness: ReadinessSources;
  logger: Logger;
  /** /metrics, when METRICS_TOKEN is set (absent: 404 like any other path). */
  metrics?: { metrics: Metrics; token: string | undefined };
  /** What every other path answers. */
  otherwise: 'not_found' | 'not_ready';
}

const NOT_FOUND = new ApiError(
  404,
  'not_found',
  'This instance runs the background jobs (PALANQUE_ROLE=worker) and serves only /livez, /readyz and /metrics; the API is served by the instances of role api or all.',
);
const NOT_READY = new ApiError(
  503,
  'service_unavailable',
  'This instance (PALANQUE_ROLE=api) waits for the database schema to be migrated by a worker; GET /readyz says what is missing. Retry later.',
  [],
  { 'Retry-After': '5' },
);

export function probeApp({ readiness, logger, metrics, otherwise }: ProbeAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestId);
  if (metrics) app.use(metricsEndpoint(metrics.metrics, metrics.token));
  app.use(probes(readiness, logger));
  const rest: RequestHandler = (_req, res) => sendError(res, otherwise === 'not_found' ? NOT_FOUND : NOT_READY);
  app.use(rest);
  return app;
}
