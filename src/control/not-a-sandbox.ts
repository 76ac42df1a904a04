/**
 * The `resetSandbox` operation of every server that is not a sandbox: it refuses with 403
 * `not_a_sandbox` without touching anything, so it can never wipe a real deployment. The sandbox
 * (`src/sandbox/control.ts`) plugs its own handler in from outside, over this one.
 */
import { callerOf, requireAdmin } from '../http/auth.js';
import { ApiError } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';

export const notASandbox = () =>
  new ApiError(403, 'not_a_sandbox', 'This server is not a sandbox: its data is never reset. Start one with `npm run sandbox`.');

export function notASandboxHandlers(): Pick<Required<OperationHandlers>, 'resetSandbox'> {
  return {
    async resetSandbox(_req, res) {
      requireAdmin(callerOf(res));
      throw notASandbox();
    },
  };
}
