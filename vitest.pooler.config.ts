import { defineConfig } from 'vitest/config';

/**
 * The server behind PgBouncer in transaction mode (`npm run test:pooler`; .ci/run starts the pooler and
 * sets TEST_PGBOUNCER_URL): one file, left out of `npm test`, which has no pooler.
 */
export default defineConfig({
  test: {
    include: ['test/pooler/**/*.test.ts'],
    maxWorkers: 1,
    // The servers it starts read the shared rules from packages/rules/dist (test/build-rules.ts).
    globalSetup: ['test/build-rules.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
