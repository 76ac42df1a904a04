/** Starts the real Prism mock (`prism mock spec/openapi.yaml`) on a free port for a test file. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { specPath } from './spec.js';

const prismBin = fileURLToPath(new URL('../../node_modules/.bin/prism', import.meta.url));

export interface RunningMock {
  baseUrl: string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startPrismMock(): Promise<RunningMock> {
  const port = await freePort();
  const child = spawn(prismBin, ['mock', '--host', '127.0.0.1', '--port', String(port), specPath], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await waitForListening(child);
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    stop: () => stop(child),
  };
}

function waitForListening(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Prism is listening')) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`Prism exited with code ${code} before listening:\n${output}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
