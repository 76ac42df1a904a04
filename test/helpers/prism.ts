/**
 * Starts the real Prism on the contract (sdk/openapi.json) on a free port for a test file: as the mock
 * (`prism mock`), or as the validating proxy in front of a running server (`prism proxy`).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { connect } from 'node:net';
import { startPrismMock as startContractMock } from '../../src/hybrid/prism-mock.js';
import { freePort, stopProcess, waitFor } from './process.js';
import { contractPath } from './spec.js';

const prismBin = fileURLToPath(new URL('../../node_modules/.bin/prism', import.meta.url));

export interface RunningMock {
  baseUrl: string;
  stop(): Promise<void>;
}

/** The mock of the contract, started as the hybrid mode starts its own (src/hybrid/prism-mock.ts). */
export async function startPrismMock(): Promise<RunningMock> {
  const mock = await startContractMock(contractPath);
  return { baseUrl: mock.url, stop: mock.stop };
}

export interface RunningProxy extends RunningMock {
  /** Everything Prism printed so far (its violation lines among them), without colours. */
  output(): string;
}

export interface ProxyOptions {
  /**
   * `--errors`: Prism then answers a request that breaks the contract itself (401 or 422, without
   * forwarding it) and replaces a response that breaks it with its own 500. Off, every request reaches
   * the upstream and every response comes back unchanged, with the violations in `sl-violations`.
   */
  errors?: boolean;
  /** `--verboseLevel` (default `warn`: the violation lines, without a line per request). */
  verboseLevel?: 'trace' | 'debug' | 'info' | 'warn' | 'error';
}

/**
 * `prism proxy sdk/openapi.json <upstreamUrl>` on a free loopback port: forwards every call to the
 * upstream and validates the request and the response against the contract. Prism reports what breaks
 * it in the `sl-violations` response header (a JSON array of `{ location, severity, code, message }`,
 * `location` starting with `request` or `response`) and in its output (`Violation: <location> <message>`).
 */
export async function startPrismProxy(upstreamUrl: string, options: ProxyOptions = {}): Promise<RunningProxy> {
  const port = await freePort();
  const args = ['proxy', '--host', '127.0.0.1', '--port', String(port), '--verboseLevel', options.verboseLevel ?? 'warn'];
  if (options.errors) args.push('--errors');
  const child = spawn(prismBin, [...args, contractPath, upstreamUrl], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    // eslint-disable-next-line no-control-regex
    output += chunk.toString().replace(/\u001b\[[0-9;]*m/g, '');
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  // Below `info` Prism does not print that it listens: wait until its port takes connections.
  await waitFor(async () => ((await accepts(port)) ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 100,
    what: `prism proxy to listen on port ${port}`,
    failEarly: () => (child.exitCode !== null ? `Prism exited with code ${child.exitCode}` : undefined),
    output: () => output,
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    output: () => output,
    stop: () => stopProcess(child),
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
