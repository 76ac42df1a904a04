/**
 * The sandbox's `resetSandbox` operation: a sandbox server (`npm run sandbox`) plugs these handlers into
 * its app (StartOptions.handlers) with a SandboxControl that puts its data back to the seeded state.
 * Every other server answers with control/not-a-sandbox.ts's refusal, as this one does without a control.
 */
import { notASandbox } from '../control/not-a-sandbox.js';
import { callerOf, requireAdmin } from '../http/auth.js';
import { sendEnvelope } from '../http/envelope.js';
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
