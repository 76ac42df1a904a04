import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest (minutes: each sends every operation many times), started first. On a
 * clean clone vitest has no timings yet and starts the largest files first; these are not the largest,
 * so one of them started last and ran alone at the end of the suite (contract-fuzz: its last 4 minutes).
 */
const LONGEST_FIRST = ['test/contract-fuzz.test.ts', 'test/cli.test.ts'];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const index = LONGEST_FIRST.findIndex((file) => spec.moduleId.endsWith(`/${file}`));
      return index === -1 ? LONGEST_FIRST.length : index;
    };
    // Array.prototype.sort is stable: the other files keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The chaos test runs on its own, after the rest (vitest.chaos.config.ts, npm run test:chaos).
    // test/frontend/ holds front-end projects that tests copy out of the repository and run there.
    // test/pooler/ needs a PgBouncer, which .ci/run starts for it (vitest.pooler.config.ts, npm run test:pooler).
    // test/backup-restore.test.ts (pg_dump and pg_restore) always runs on PostgreSQL: only in the suite's
    // PostgreSQL run (TEST_DATABASE_URL set, as .ci/run sets it), not twice.
    exclude: [...configDefaults.exclude, 'test/chaos/**', 'test/frontend/**', 'test/pooler/**', ...(process.env.TEST_DATABASE_URL ? [] : ['test/backup-restore.test.ts'])],
    // Most test time is spent waiting on sockets, databases, child processes and timers, not on the
    // CPU, so three files at a time keep two cores busy (vitest's default is one fewer than the cores:
    // a single worker here). Every file uses its own database, ports and folders, so files never clash.
    maxWorkers: 3,
    // A worker runs its files one after another in one module graph, instead of loading the server's
    // modules (and building the contract's validator, src/http/validation.ts) afresh for each file:
    // the SQLite suite took 402 s instead of 627, the PostgreSQL one 306 s instead of 487. So a file
    // must leave no state behind in a module: every app it starts is closed, every spy restored.
    isolate: false,
    sequence: { sequencer: LongestFirst },
    // Builds the shared rules the servers the tests start read (test/build-rules.ts), and migrates once
    // the database every test app copies (test/global-setup.ts).
    globalSetup: ['test/build-rules.ts', 'test/global-setup.ts'],
    // The mock and lint tests start real processes (Prism, Spectral, openapi-typescript). The slowest
    // tests without a timeout of their own take up to 13 s on a quiet 2-core machine, and a loaded CI
    // machine runs the suite two to three times slower: 30 s timed one out there.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
