/**
 * A job carries the trace of what enqueued it: the W3C trace context (`traceparent`, `tracestate`) active
 * when it was enqueued is kept in its data under `_trace`, and each run of it is a span named after the
 * job, a child of that context, so a request and the jobs it queued are one trace. Handlers and readers
 * of a job's data never see the field. Without tracing (nothing registered with the OpenTelemetry API)
 * nothing is added, and a run's span is the API's no-op.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { JobAttempt } from './queue.js';

const FIELD = '_trace';

const tracer = trace.getTracer('palanque-jobs');

/** The active trace context as a W3C carrier, or undefined when there is none to carry. */
export function activeTraceContext(): Record<string, string> | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/** The job's data with the carrier added (unchanged without one). */
export function withTraceContext(data: object, carrier = activeTraceContext()): object {
  return carrier ? { ...data, [FIELD]: carrier } : data;
}

/** The job's data as its enqueuer gave it. */
export function withoutTraceContext(data: unknown): unknown {
  if (typeof data !== 'object' || data === null || !(FIELD in data)) return data;
  const { [FIELD]: _carrier, ...rest } = data as Record<string, unknown>;
  return rest;
}

/** Runs one try of job `name` in a span named after it, a child of the context its data carries. */
export function runTraced<T>(name: string, data: unknown, job: JobAttempt, run: (data: unknown, job: JobAttempt) => Promise<T>): Promise<T> {
  const carrier = typeof data === 'object' && data !== null ? (data as Record<string, unknown>)[FIELD] : undefined;
  const parent = typeof carrier === 'object' && carrier !== null ? propagation.extract(ROOT_CONTEXT, carrier) : ROOT_CONTEXT;
  const attributes = { 'messaging.operation.type': 'process', 'messaging.destination.name': name, 'messaging.message.id': job.id, 'palanque.job.attempt': job.attempt };
  return tracer.startActiveSpan(name, { kind: SpanKind.CONSUMER, attributes }, parent, async (span) => {
    try {
      return await run(withoutTraceContext(data), job);
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}
