/**
 * `node --import ./dist/src/tracing/register.js dist/src/server.js` (npm start): starts tracing before
 * the server's modules load, when the OTEL_* variables ask for it (settings.ts says which do). Otherwise
 * it returns at once, having loaded nothing of OpenTelemetry's SDK: no loader hook, no instrumentation,
 * no span. The `.env` file is read first, as server.ts reads it, so that its OTEL_* variables count.
 */
import 'dotenv/config';
import { tracingRequested } from './settings.js';

if (tracingRequested(process.env)) {
  const { startTracing } = await import('./sdk.js');
  startTracing();
}
