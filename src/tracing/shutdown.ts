/**
 * The end of tracing, for the server's shutdown: the spans the SDK still holds are sent, within a bound,
 * before the process exits. Nothing here loads the SDK; without tracing, stopping does nothing.
 */
let stop: (() => Promise<void>) | undefined;

/** Called by sdk.ts once the SDK started. */
export function whenTracingStops(shutdown: () => Promise<void>): void {
  stop = shutdown;
}

/** Sends what is left and stops tracing; waits at most `timeoutMs`, and never fails (a collector may be gone). */
export async function stopTracing(timeoutMs = 5_000): Promise<void> {
  if (!stop) return;
  const shutdown = stop;
  stop = undefined;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([shutdown().catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
}
