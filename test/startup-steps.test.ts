/**
 * A start says where its time went (src/startup-steps.ts): the real entry point, `src/server.ts` as a
 * process, on a fresh database, logs one `start-up step` line per step, in the order it takes them, each
 * with its duration, then the total. One start: the first (migrations and the municipality import) is
 * the slow one worth seeing.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { SHARED_MUNICIPIOS, SHARED_MUNICIPIOS_SHA256 } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { startInstance, type Instance } from './helpers/instances.js';
import { waitFor } from './helpers/process.js';

let database: TestDatabase | undefined;
let instance: Instance | undefined;

afterAll(async () => {
  if (instance && !instance.exited()) {
    instance.child.kill('SIGTERM');
    await instance.exit;
  }
  await database?.drop();
});

type Line = Record<string, unknown>;

function logLines(output: string): Line[] {
  return output.split('\n').flatMap((line) => {
    if (!line.startsWith('[out] {')) return [];
    try {
      return [JSON.parse(line.slice('[out] '.length)) as Line];
    } catch {
      return [];
    }
  });
}

describe('start-up steps', () => {
  it('logs each step of a first start in order with its duration, then the total', async () => {
    database = await createTestDatabase();
    instance = await startInstance('steps', {
      databaseUrl: database.url,
      env: { LOG_LEVEL: 'info', MUNICIPIOS_SOURCE: SHARED_MUNICIPIOS, MUNICIPIOS_SHA256: SHARED_MUNICIPIOS_SHA256 },
    });
    const started = instance;
    const lines = await waitFor(
      () => {
        const all = logLines(started.output());
        return all.some((line) => line.step === 'started') ? all : undefined;
      },
      { timeoutMs: 10_000, what: 'the start-up step "started"', output: started.output },
    );
    const steps = lines.filter((line) => typeof line.step === 'string' && String(line.msg).startsWith('start-up step: '));
    expect(steps.map((line) => line.step), started.output()).toEqual([
      'migrations',
      'database connected',
      'municipalities loaded',
      'jobs started',
      'domains ready',
      'app built',
      'started',
    ]);
    for (const line of steps.slice(0, -1)) {
      expect(line, JSON.stringify(line)).toMatchObject({ level: 30, ms: expect.any(Number), since_process_start_ms: expect.any(Number) });
      expect(line.ms as number).toBeGreaterThanOrEqual(0);
    }
    const byStep = Object.fromEntries(steps.map((line) => [line.step, line]));
    expect((byStep.migrations as Line).applied as number).toBeGreaterThan(30);
    expect(byStep['municipalities loaded']).toMatchObject({ municipalities: 5570, first_start_import: true });
    expect(byStep['database connected']).toMatchObject({ database: database.dialect });

    // The total covers the steps, and comes after the `listening on` line.
    const total = byStep.started as Line;
    const summed = steps.slice(0, -1).reduce((sum, line) => sum + (line.ms as number), 0);
    expect(total.total_ms as number).toBeGreaterThanOrEqual(summed - 1);
    expect(total.since_process_start_ms as number).toBeGreaterThanOrEqual(total.total_ms as number);
    expect(total).toMatchObject({ port: instance.port, msg: `start-up step: started in ${String(total.total_ms)} ms` });
    const listening = lines.findIndex((line) => String(line.msg).startsWith('listening on'));
    expect(listening).toBeGreaterThan(-1);
    expect(lines.indexOf(total)).toBeGreaterThan(listening);
  }, 150_000);
});
