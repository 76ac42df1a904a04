/**
 * Work that runs after the HTTP answer has gone: mail, and the records behind anti-enumeration answers.
 * The answer then takes as long whatever the work finds (an address with or without an account), and
 * a failure cannot change it: it is logged, and the user can ask again.
 */
import type { Logger } from '../logger.js';

export function runAfterAnswer(logger: Logger, failure: string, work: () => Promise<void>, context: Record<string, unknown> = {}): void {
  setImmediate(() => {
    work().catch((error: unknown) => logger.error({ ...context, err: error }, failure));
  });
}
