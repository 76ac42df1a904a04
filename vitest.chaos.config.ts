import { defineConfig } from 'vitest/config';

/**
 * The chaos test (`npm run test:chaos`, also the last step of `npm test`): three server processes on one
 * PostgreSQL and one Redis, killed and restarted under load for about two minutes. One file, alone: it
 * keeps both cores busy, so it runs after the rest of the suite rather than beside it.
 */
export default defineConfig({
  test: {
    include: ['test/chaos/**/*.test.ts'],
    maxWorkers: 1,
    // The servers it starts read the shared rules from packages/rules/dist (test/build-rules.ts).
    globalSetup: ['test/build-rules.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
  },
});
