/**
 * Real server processes for the multi-instance tests (test/scale-out.test.ts, test/chaos/): each is
 * `node --import tsx src/server.ts`, as `npm start` runs the build, on 127.0.0.1 and a port of its own,
 * with its output kept for failure messages. A process is ready once it answers HTTP at all: the server
 * listens only after it has migrated and loaded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SHARED_MUNICIPIOS, TEST_SECRETS_KEY } from './app.js';
import type { TestDatabase } from './database.js';
import { freePort, waitFor } from './process.js';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface Instance {
  name: string;
  port: number;
  baseUrl: string;
  child: ChildProcess;
  /** Everything the process wrote, for failure messages. */
  output(): string;
  exited(): boolean;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface InstanceOptions {
  databaseUrl: string;
  /** What the instances of one test share beyond the defaults below (Redis, rate limits, admin, providers). */
  env: Record<string, string>;
  /** A port to listen on (a restart on the port of a killed instance); a free one otherwise. */
  port?: number;
  /** How long the process may take to answer HTTP. */
  readyTimeoutMs?: number;
}

/** Starts `src/server.ts` as a process; resolves once it answers HTTP, rejects with its output if it exits or never does. */
export async function startInstance(name: string, options: InstanceOptions): Promise<Instance> {
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: projectRoot,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      MUNICIPIOS_SOURCE: SHARED_MUNICIPIOS,
      PASSWORD_HASH_COST: '12',
      LOG_LEVEL: 'warn',
      SECRETS_KEY: TEST_SECRETS_KEY,
      SHUTDOWN_TIMEOUT_MS: '5000',
      ...options.env,
      PORT: String(port),
      DATABASE_URL: options.databaseUrl,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => lines.push(`[out] ${line}`));
  createInterface({ input: child.stderr! }).on('line', (line) => lines.push(`[err] ${line}`));
  let hasExited = false;
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      hasExited = true;
      resolve({ code, signal });
    }),
  );
  const instance: Instance = {
    name,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    child,
    output: () => `--- ${name} (port ${port}) ---\n${lines.join('\n')}`,
    exited: () => hasExited,
    exit,
  };
  try {
    await waitFor(
      async () => {
        try {
          await fetch(`${instance.baseUrl}/api/controle/system_is_online/`);
          return true;
        } catch {
          return undefined;
        }
      },
      {
        timeoutMs: options.readyTimeoutMs ?? 90_000,
        intervalMs: 100,
        what: `${name} to answer HTTP`,
        failEarly: () => (hasExited ? `${name} exited` : undefined),
        output: instance.output,
      },
    );
  } catch (error) {
    // Not left running behind a failed start.
    if (!hasExited) child.kill('SIGKILL');
    throw error;
  }
  return instance;
}

export interface Cluster {
  instances: Instance[];
  /** The test's own connection to the shared database. */
  db: pg.Client | undefined;
  database: TestDatabase | undefined;
  redis: Redis | undefined;
  /** The cluster's RATE_LIMIT_PREFIX: its keys are deleted from Redis. */
  rateLimitPrefix: string;
}

/** Ends a test's cluster: kills what still runs and waits for it, drops its database and its Redis keys. */
export async function tearDownCluster({ instances, db, database, redis, rateLimitPrefix }: Cluster): Promise<void> {
  for (const instance of instances) if (!instance.exited()) instance.child.kill('SIGKILL');
  await Promise.all(instances.map((instance) => instance.exit));
  await db?.end();
  await database?.drop();
  if (redis) {
    const keys = await redis.keys(`${rateLimitPrefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  }
}
