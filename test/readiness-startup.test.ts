/**
 * An api instance that found its schema still starts its domains before it serves the API; its /readyz
 * must stay 503 until then, or a load balancer sends it requests it answers 503 (src/serve.ts
 * listenUntilSchemaIsThere, src/control/readiness.ts `serving`).
 */
import { describe, expect, it } from 'vitest';
import { checkReadiness, type ReadinessSources } from '../src/control/readiness.js';

const schemaThere: ReadinessSources = {
  pingDatabase: async () => {},
  appliedMigrations: async () => ['001', '002'],
  knownMigrations: ['001', '002'],
};

describe('readiness of an api instance that is starting', () => {
  it('is not ready while the API is not served yet, and says why', async () => {
    const result = await checkReadiness({ ...schemaThere, serving: () => false });
    expect(result.status).toBe('not_ready');
    expect(result.checks.startup).toMatchObject({ state: 'behind', reason: expect.stringContaining('starting') });
    expect(result.checks.migrations).toMatchObject({ state: 'ok' });
  });

  it('is ready once the API is served', async () => {
    const result = await checkReadiness({ ...schemaThere, serving: () => true });
    expect(result.status).toBe('ready');
    expect(result.checks.startup).toMatchObject({ state: 'ok' });
  });

  it('has no startup check where nothing waits (a worker, an instance of role all)', async () => {
    const result = await checkReadiness(schemaThere);
    expect(result.status).toBe('ready');
    expect(result.checks).not.toHaveProperty('startup');
  });
});
