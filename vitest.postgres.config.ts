import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The suite's second run, on PostgreSQL (`npm run test:postgres`; .ci/run sets TEST_DATABASE_URL for
 * it): every file whose outcome can depend on the database. Left out, because they would run the same
 * thing twice, are the files that use no database, or only the embedded SQLite by design, or none that
 * matters to what they check:
 */
const SAME_ON_EVERY_DATABASE = [
  // No database: the contract, the generated SDK and CLI code, the mocks, pure functions.
  'test/accounts-passwords.test.ts', 'test/config.test.ts', 'test/docs-links.test.ts', 'test/generated.test.ts', 'test/http-sequence.test.ts',
  'test/mock.test.ts', 'test/msw-browser.test.ts', 'test/msw-component.test.ts', 'test/msw-stateful.test.ts',
  'test/openapi-version.test.ts', 'test/scenarios-msw.test.ts', 'test/scenarios-prism.test.ts', 'test/sdk-size.test.ts',
  'test/sdk-types.test.ts', 'test/sdk-vite-app.test.ts', 'test/seed-contract.test.ts', 'test/spec-examples.test.ts',
  'test/spec-lint-rules.test.ts', 'test/strategy-projection.test.ts', 'test/web-address.test.ts',
  // The Dockerfile, compose.yaml and deploy/ read as files.
  'test/image.test.ts',
  // The push sender and the webhooks' HTTP client, against servers on loopback.
  'test/push.test.ts', 'test/webhook-outbound-http.test.ts',
  // The embedded SQLite by design: the quick start's `npm start`, the sandbox, and the hybrid mode on it.
  'test/start-command.test.ts', 'test/sandbox.test.ts', 'test/scenarios-sandbox.test.ts', 'test/hybrid.test.ts',
  // What they check happens before or beside the database: the docs page in a browser, the packed SDK,
  // the validating proxy's command, the msw handlers' agreement with the validator, a handler per operation.
  'test/docs-page.test.ts', 'test/sdk-package.test.ts', 'test/mock-proxy-command.test.ts', 'test/msw.test.ts',
  'test/not-implemented.test.ts',
  // The CLI: how it builds requests and shows answers, against a server whose database it does not see
  // (its sweep of every operation is the longest file of the suite; contract-fuzz and contract-proxy
  // send every operation to the server on PostgreSQL).
  'test/cli.test.ts',
];

export default mergeConfig(base, defineConfig({ test: { exclude: SAME_ON_EVERY_DATABASE } }));
