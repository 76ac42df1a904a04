/** Small helpers for tests and scripts that run servers as processes on loopback. */
import type { ChildProcess } from 'node:child_process';

export { freePort } from '../../src/http/listen.js';

/** Polls until `probe` returns something other than undefined; fails with the collected output on timeout. */
export async function waitFor<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  options: { timeoutMs: number; what: string; intervalMs?: number; failEarly?: () => string | undefined; output?: () => string },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    const early = options.failEarly?.();
    if (early !== undefined || Date.now() > deadline) {
      const reason = early ?? `timed out after ${options.timeoutMs} ms`;
      throw new Error(`Waiting for ${options.what}: ${reason}\n${options.output?.() ?? ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50));
  }
}

/** Sends SIGTERM and resolves once the process has exited. */
export function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
