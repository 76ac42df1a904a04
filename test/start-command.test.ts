/**
 * The README's start command, exactly as a newcomer runs it: `npm start` builds the server and starts it
 * on the embedded SQLite default. Here the database and the municipality source are pointed at test
 * locations; the command is the same.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { SHARED_MUNICIPIOS } from './helpers/app.js';
import { freePort, waitFor } from './helpers/process.js';

const root = fileURLToPath(new URL('..', import.meta.url));
let database: TestDatabase | undefined;

afterAll(async () => {
  await database?.drop();
});

it('`npm start` builds, migrates, imports and serves the municipality list, and stops on SIGTERM', async () => {
  database = await createTestDatabase();
  const port = await freePort();
  // detached: npm runs the server in a child shell; signalling the group reaches the server itself.
  const child = spawn('npm', ['start'], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PORT: String(port), DATABASE_URL: database.url, MUNICIPIOS_SOURCE: SHARED_MUNICIPIOS, LOG_LEVEL: 'info' },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  try {
    await waitFor(() => (output.includes('"msg":"listening on') ? true : undefined), {
      // The build (tsc) alone takes a minute on two cores busy with the rest of the suite.
      timeoutMs: 180_000,
      what: 'the server to listen',
      output: () => output,
    });
    const response = await fetch(`http://127.0.0.1:${port}/api/municipios/?page=186`);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({ count: 5570, total_pages: 186, links: { next: null } });
    expect(body.results).toHaveLength(20);
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
  }
  await exited;
  // npm itself ends by the signal; the server behind it must have shut down cleanly.
  expect(output).toContain('"msg":"shutdown complete"');
}, 240_000);
