/**
 * The steps of a start, timed, so that a slow start says where its time went: one info line per step,
 * `start-up step: <step>` with `step`, `ms` (since the step before, or since the start began) and
 * `since_process_start_ms` (module loading included), and a last line, `started`, with `total_ms` (since
 * the start began) and `since_process_start_ms`. docs/operations.md ("Start-up steps") lists them.
 */
import type { Logger } from './logger.js';

export interface StartupSteps {
  /** Logs that `step` is done, with the time it took since the last step and `fields`. */
  done(step: string, fields?: Record<string, unknown>): void;
  /** Logs the last line: the start's total, and the time since the process itself started. */
  finished(fields?: Record<string, unknown>): void;
}

const rounded = (ms: number) => Math.round(ms * 10) / 10;

export function startupSteps(logger: Logger): StartupSteps {
  const began = performance.now();
  let last = began;
  const sinceProcessStart = () => rounded(process.uptime() * 1000);
  return {
    done(step, fields = {}) {
      const now = performance.now();
      logger.info({ step, ms: rounded(now - last), since_process_start_ms: sinceProcessStart(), ...fields }, `start-up step: ${step}`);
      last = now;
    },
    finished(fields = {}) {
      const total = rounded(performance.now() - began);
      logger.info({ step: 'started', total_ms: total, since_process_start_ms: sinceProcessStart(), ...fields }, `start-up step: started in ${total} ms`);
    },
  };
}
