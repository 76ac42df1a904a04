/**
 * An operation of the contract left without a handler (a new operation added to the spec before its
 * handler) answers 501 `not_implemented` in the error model, never 404 or 500.
 *
 * That every operation has a handler is checked elsewhere, on requests the contract accepts: the CLI's
 * sweep (test/cli.test.ts) sends each operation its examples as an admin and fails on a 501, and
 * contract-fuzz fails on any 5xx an operation does not declare. This file sent each operation one more
 * request on an app of its own, which cost its validators' compilation a third time (minutes of CI).
 */
import { expect, it } from 'vitest';
import { startTestApp } from './helpers/app.js';
import { createAdmin } from './helpers/accounts.js';

it('answers 501 not_implemented in the error model for an operation without a handler', async () => {
  const withoutHandler = await startTestApp({ handlers: { systemIsOnline: undefined } });
  try {
    const admin = await createAdmin(withoutHandler);
    const response = await fetch(`${withoutHandler.baseUrl}/api/controle/system_is_online/`, { headers: { ...admin.headers, 'X-Request-Id': 'todo-systemIsOnline' } });
    expect(response.status).toBe(501);
    expect(await response.json()).toEqual({
      success: false,
      error: { code: 'not_implemented', message: 'The operation systemIsOnline is not implemented by this server yet.', details: [] },
      request_id: 'todo-systemIsOnline',
    });
  } finally {
    await withoutHandler.close();
  }
});
