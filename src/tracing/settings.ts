/**
 * Whether this process traces: decided from the standard OpenTelemetry variables alone, before anything
 * of the SDK loads, so that a server nobody asked to trace loads none of it and pays nothing.
 *
 * The specification's default exporter is `otlp`; here tracing is OFF until a variable asks for it:
 * - `OTEL_SDK_DISABLED=true` turns it off whatever else says (only `true`, in any case, is true);
 * - `OTEL_TRACES_EXPORTER` names the exporters (`otlp`, `console`, `zipkin`; a list); `none` alone is off;
 * - unset, an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) asks
 *   for the default `otlp` exporter.
 * An empty value counts as unset, as the specification says.
 */
export type Environment = Record<string, string | undefined>;

function valueOf(env: Environment, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

/** The trace exporters the variables ask for; empty when tracing stays off. */
export function requestedTraceExporters(env: Environment): string[] {
  if (valueOf(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return [];
  const listed = valueOf(env, 'OTEL_TRACES_EXPORTER');
  if (listed !== undefined) {
    const names = [...new Set(listed.split(',').map((name) => name.trim().toLowerCase()).filter(Boolean))];
    // The SDK reads `none` beside another exporter as the default; only `none` alone is off.
    return names.length === 1 && names[0] === 'none' ? [] : names.filter((name) => name !== 'none');
  }
  return valueOf(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') || valueOf(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') ? ['otlp'] : [];
}

export function tracingRequested(env: Environment): boolean {
  return requestedTraceExporters(env).length > 0;
}
