/**
 * Tracing with OpenTelemetry's Node SDK, loaded only when the OTEL_* variables ask for it (register.ts,
 * settings.ts). It must start before the server's modules load: the instrumentations patch `http`,
 * `express`, `pg` and `ioredis` as they are imported, and this project is ES modules, so the loader hook
 * of `@opentelemetry/instrumentation` is registered first (module.register), then the SDK is started.
 *
 * What is traced: every request (W3C `traceparent` from the client continued, probes and /metrics left
 * out), Express's middleware and handlers, PostgreSQL queries (through `pg`: Sequelize and pg-boss, never
 * their parameters) and Redis commands made within a trace, each job run as a child of what enqueued it
 * (jobs/trace-context.ts), and webhook, push and download requests (webhooks/outbound-http.ts: a receiver
 * gets the trace context only when its endpoint asks for it). The SDK reads the exporter, endpoint,
 * protocol, headers, sampler and resource from the standard variables; metrics and logs are not sent
 * (Palanque serves its metrics at /metrics and logs JSON lines).
 */
import { register } from 'node:module';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK, resources, tracing } from '@opentelemetry/sdk-node';
import { whenTracingStops } from './shutdown.js';

/** Requests that are not worth a trace: the probes a load balancer sends every few seconds, and the metrics scrape. */
const UNTRACED_PATHS = new Set(['/livez', '/readyz', '/metrics']);

export interface TracingOptions {
  /** Where finished spans go; by default the exporters OTEL_TRACES_EXPORTER names (tests give an in-memory one). */
  spanProcessors?: tracing.SpanProcessor[];
}

export function startTracing(options: TracingOptions = {}): NodeSDK {
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const sdk = new NodeSDK({
    // service.name is `palanque` unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names another (detected later, they win).
    resource: resources.defaultResource().merge(resources.resourceFromAttributes({ 'service.name': 'palanque' })),
    ...(options.spanProcessors ? { spanProcessors: options.spanProcessors } : {}),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (request) => UNTRACED_PATHS.has((request.url ?? '').split('?')[0]!) }),
      new ExpressInstrumentation(),
      // Only within a trace: pg-boss polls the queue every few seconds, which would be a trace each time.
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  // The spans still batched are sent when the server stops (server.ts).
  whenTracingStops(() => sdk.shutdown());
  return sdk;
}
