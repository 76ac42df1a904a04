/**
 * The `resetSandbox` operation. A sandbox server (`npm run sandbox`) passes a SandboxControl that puts its
 * data back to the seeded state; every other server has none, and the operation refuses with 403
 * `not_a_sandbox` without touching anything, so it can never wipe a real deployment.
 */
import { callerOf, requireAdmin } from '../http/auth.js';
import { sendEnvelope } from '../http/envelope.js';
import { ApiError } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';

export interface SandboxResetReport {
  resetAt: Date;
  durationMs: number;
  /** Rows of the seeded state, all tables together. */
  rows: number;
}

export interface SandboxControl {
  reset(): Promise<SandboxResetReport>;
}

export const notASandbox = () =>
  new ApiError(403, 'not_a_sandbox', 'This server is not a sandbox: its data is never reset. Start one with `npm run sandbox`.');

export function sandboxHandlers(control: SandboxControl | undefined): Pick<Required<OperationHandlers>, 'resetSandbox'> {
  return {
    async resetSandbox(_req, res) {
      requireAdmin(callerOf(res));
      if (!control) throw notASandbox();
      const report = await control.reset();
      sendEnvelope(
        res,
        200,
        { reset_at: report.resetAt.toISOString(), duration_ms: report.durationMs, rows: report.rows },
        'The sandbox is back to its demo data. Keys issued since its start no longer work.',
      );
    },
  };
}
