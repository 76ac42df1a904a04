/** Starts the real Prism mock (`prism mock spec/openapi.yaml`) on a free port for a test file. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort, stopProcess } from './process.js';
import { specPath } from './spec.js';

const prismBin = fileURLToPath(new URL('../../node_modules/.bin/prism', import.meta.url));

export interface RunningMock {
  baseUrl: string;
  stop(): Promise<void>;
}

export async function startPrismMock(): Promise<RunningMock> {
  const port = await freePort();
  const child = spawn(prismBin, ['mock', '--host', '127.0.0.1', '--port', String(port), specPath], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await waitForListening(child);
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    stop: () => stopProcess(child),
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
