/**
 * What a test imports into the server's process to look at its traces, before src/server.ts:
 * `node --import tsx --import ./test/helpers/traced-server.ts src/server.ts` (test/tracing.test.ts).
 *
 * - `TEST_TRACES=memory`: tracing starts as src/tracing/sdk.ts starts it for `npm start`, with every
 *   finished span kept in memory (InMemorySpanExporter) instead of the exporters OTEL_* would name;
 * - otherwise: the real `--import` module of `npm start` (src/tracing/register.ts), which decides from
 *   the OTEL_* variables.
 * Asked `report` over the IPC channel, it answers the spans finished so far and what OpenTelemetry left
 * in the process: whether anything registered with the API's globals, whether `http.request` is wrapped
 * (the http instrumentation), and how many modules of the SDK or of an instrumentation were loaded.
 */
import { createRequire } from 'node:module';
import type { InMemorySpanExporter, ReadableSpan } from '@opentelemetry/sdk-trace-base';

export interface ReportedSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  scope: string;
  attributes: Record<string, unknown>;
  status: number;
}

export interface TracingReport {
  spans: ReportedSpan[];
  registered: boolean;
  httpWrapped: boolean;
  sdkModules: number;
}

// Loaded only for the in-memory exporter: otherwise nothing of the SDK may be loaded but what register.ts loads.
let exporter: InMemorySpanExporter | undefined;
if (process.env.TEST_TRACES === 'memory') {
  const { InMemorySpanExporter, SimpleSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  exporter = new InMemorySpanExporter();
  const { startTracing } = await import('../../src/tracing/sdk.js');
  startTracing({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
} else {
  await import('../../src/tracing/register.js');
}

const require = createRequire(import.meta.url);

function reported(span: ReadableSpan): ReportedSpan {
  const { traceId, spanId } = span.spanContext();
  return {
    name: span.name,
    kind: span.kind,
    traceId,
    spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    scope: span.instrumentationScope.name,
    attributes: { ...span.attributes },
    status: span.status.code,
  };
}

process.on('message', (message) => {
  if (message !== 'report') return;
  const report: TracingReport = {
    spans: exporter?.getFinishedSpans().map(reported) ?? [],
    registered: (globalThis as Record<symbol, unknown>)[Symbol.for('opentelemetry.js.api.1')] !== undefined,
    httpWrapped: Boolean((require('node:http') as { request: { __wrapped?: boolean } }).request.__wrapped),
    sdkModules: Object.keys(require.cache).filter((file) => /@opentelemetry[\\/](sdk-|instrumentation)/.test(file)).length,
  };
  process.send!(report);
});
// The channel must not keep the server alive once it has stopped.
process.channel?.unref();
