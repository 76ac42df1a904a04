/**
 * `npm run dev:hybrid [-- --spec <file>] [--sandbox]`: one address for the front end. The real server
 * answers every operation it has a handler for; an operation that is in the contract but has no handler
 * yet (one just added to the spec, say) is forwarded to a Prism mock of the same contract, started and
 * stopped with it. Every response says who answered in `X-Served-By` (`palanque` or `mock`), and the
 * start lists the operations the mock serves.
 *
 * The server is configured as for `npm start` (DATABASE_URL and the rest), or with `--sandbox` it is the
 * sandbox (a temporary database with the demo data). The mock listens on HYBRID_MOCK_PORT, else a free
 * port, on 127.0.0.1. The contract is spec/openapi.yaml with the files it refers to, bundled at the start
 * (src/hybrid/bundle.ts), so the one being edited is served; `--spec` serves another, such as a copy
 * being edited. The server then validates against that contract too.
 */
import 'dotenv/config';
import { writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { implementedOperations } from '../app.js';
import { loadConfigOrExit } from '../config.js';
import { loadContract } from '../http/contract.js';
import { createLogger, endLogging } from '../logger.js';
import { stopOnSignals } from '../lifecycle.js';
import { specFile } from '../project-root.js';
import { bannerOf } from '../sandbox/banner.js';
import { startSandbox } from '../sandbox/sandbox.js';
import { startServer } from '../serve.js';
import { bundleContract } from './bundle.js';
import { forwardToMock, SERVED_BY_HEADER } from './mock-forwarder.js';
import { mockPortOf, startPrismMock, type RunningMock } from './prism-mock.js';
import { describeOperations, operationsOf } from './operations.js';

const USAGE = `Usage: npm run dev:hybrid [-- --spec <file>] [--sandbox]

The real server for every operation it implements, the Prism mock for the rest, on one address.
  --spec <file>   the contract to serve, bundled at the start (default spec/openapi.yaml)
  --sandbox       run the sandbox (temporary database, demo data) instead of the configured database
Environment: as npm start (PORT, DATABASE_URL...), and HYBRID_MOCK_PORT, the inner Prism mock's port on
127.0.0.1 (default: a free one).`;

const print = (text: string) => void writeSync(1, `${text}\n`);

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { spec: { type: 'string' }, sandbox: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    print(USAGE);
    return;
  }
  const config = loadConfigOrExit();
  let mockPort: number | undefined;
  try {
    mockPort = mockPortOf(process.env.HYBRID_MOCK_PORT);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
  const source = resolve(values.spec ?? specFile);
  const bundle = await bundleContract(source);
  const contractFile = bundle.file;
  const operations = operationsOf(loadContract(contractFile));
  let mock: RunningMock;
  try {
    mock = await startPrismMock(contractFile, { port: mockPort });
  } catch (error) {
    await bundle.remove();
    throw error;
  }
  // The sandbox keeps request logs out of its banner's way, as `npm run sandbox` does.
  const logger = createLogger(values.sandbox ? process.env.LOG_LEVEL || 'warn' : config.logLevel);
  const hybrid = { contractFile, unimplemented: forwardToMock(mock.url, config.basePath), responseHeaders: { [SERVED_BY_HEADER]: 'palanque' } };
  let running: { url: string; app: Parameters<typeof implementedOperations>[0]; stop(): Promise<void> };
  try {
    if (values.sandbox) {
      const sandbox = await startSandbox({ logger, ...hybrid });
      running = { url: sandbox.url, app: sandbox.server.app, stop: () => sandbox.stop() };
      print(bannerOf(sandbox));
    } else {
      const server = await startServer(config, logger, hybrid);
      running = { url: server.url, app: server.app, stop: () => server.shutdown('hybrid stopped') };
    }
  } catch (error) {
    await mock.stop();
    await bundle.remove();
    throw error;
  }
  const implemented = implementedOperations(running.app);
  const byMock = operations.filter((operation) => !implemented.has(operation.operationId));
  logger.info({ mock: mock.url, served_by_mock: byMock.map((operation) => operation.operationId) }, 'hybrid mode: operations without a handler go to the mock');
  print(
    [
      '',
      `Palanque hybrid on ${running.url}: the real server, and the Prism mock (${mock.url}) for what it does not implement.`,
      `Contract: ${source}`,
      `${SERVED_BY_HEADER} on every response says who answered: palanque or mock.`,
      byMock.length === 0
        ? 'Served by the mock: none (the server implements every operation of the contract).'
        : `Served by the mock (${byMock.length}, no handler yet):\n${describeOperations(byMock)}`,
      '',
    ].join('\n'),
  );
  stopOnSignals(() => Promise.all([running.stop(), mock.stop()]).then(() => bundle.remove()).then(() => endLogging(logger)));
}

await main();
