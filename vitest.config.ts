import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The chaos test runs on its own, after the rest (vitest.chaos.config.ts, npm run test:chaos).
    // test/frontend/ holds front-end projects that tests copy out of the repository and run there.
    exclude: [...configDefaults.exclude, 'test/chaos/**', 'test/frontend/**'],
    // Most test time is spent waiting on sockets, databases, child processes and timers, not on the
    // CPU, so three files at a time keep two cores busy (vitest's default is one fewer than the cores:
    // a single worker here). Every file uses its own database, ports and folders, so files never clash.
    maxWorkers: 3,
    // Migrates once the database every test app copies (test/global-setup.ts).
    globalSetup: ['test/global-setup.ts'],
    // The mock and lint tests start real processes (Prism, Spectral, openapi-typescript).
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
