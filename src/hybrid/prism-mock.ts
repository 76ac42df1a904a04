/**
 * The Prism mock of a contract, run as a child process on a loopback port (a free one, unless given: the
 * hybrid mode's HYBRID_MOCK_PORT): the hybrid mode forwards to it the operations the server has no
 * handler for, and the mock tests start it on sdk/openapi.json. Prism is a devDependency, as the hybrid
 * mode is a development tool.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../http/listen.js';
import { projectRoot } from '../project-root.js';

export interface RunningMock {
  url: string;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 60_000;

/** HYBRID_MOCK_PORT as a port number; unset or empty means a free port. */
export function mockPortOf(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const port = Number(value);
  if (!/^\d+$/.test(value.trim()) || port < 1 || port > 65_535) {
    throw new Error(`HYBRID_MOCK_PORT must be a port number from 1 to 65535 (or unset, for a free port); got "${value}".`);
  }
  return port;
}

export async function startPrismMock(contractFile: string, options: { port?: number } = {}): Promise<RunningMock> {
  const port = options.port ?? (await freePort());
  const child = spawn(join(projectRoot, 'node_modules', '.bin', 'prism'), ['mock', '--host', '127.0.0.1', '--port', String(port), contractFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => fail(`it did not start within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
    const fail = (reason: string) => {
      clearTimeout(timer);
      child.kill('SIGTERM');
      reject(new Error(`The Prism mock of ${contractFile} could not start: ${reason}\n${output}`));
    };
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Prism is listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('error', (error) => fail(error.message));
    child.once('exit', (code) => fail(`it exited with ${code}`));
  });
  child.removeAllListeners('exit');
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
