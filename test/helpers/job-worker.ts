/**
 * A process that runs jobs, for the kill-and-restart test: `node --import tsx test/helpers/job-worker.ts
 * <databaseUrl> <notesFile> [enqueue]`. Its one kind of job notes "start <pid>", works for a while,
 * then notes "done <pid>". With `enqueue` it also enqueues one job and prints its id as JSON.
 */
import { appendFileSync } from 'node:fs';
import { pino } from 'pino';
import { openDatabase } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrator.js';
import { createJobQueue } from '../../src/jobs/index.js';

const [databaseUrl, notesFile, mode] = process.argv.slice(2) as [string, string, string | undefined];
const logger = pino({ level: 'warn' }, pino.destination(2));
const sequelize = await openDatabase(databaseUrl, logger);
await migrate(sequelize, logger);
const queue = createJobQueue(databaseUrl, sequelize, logger, {
  pollIntervalMs: 100,
  pollingIntervalSeconds: 0.5,
  jobTimeoutSeconds: 2,
  maintenanceIntervalSeconds: 1,
});
await queue.start();
await queue.register(
  'slow-note',
  async (data) => {
    appendFileSync(notesFile, `start ${process.pid}\n`);
    await new Promise((resolve) => setTimeout(resolve, (data as { ms: number }).ms));
    appendFileSync(notesFile, `done ${process.pid}\n`);
    return { finishedBy: process.pid };
  },
  { retryLimit: 3, retryDelaySeconds: 1, backoff: false },
);
if (mode === 'enqueue') {
  const id = await queue.enqueue('slow-note', { ms: 1_500 });
  process.stdout.write(`${JSON.stringify({ id })}\n`);
}
setInterval(() => {}, 1_000); // keep working until killed
