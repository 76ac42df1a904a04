/**
 * `palanque elections import --file <court file or zip>`: the electoral court's candidacy files of this
 * machine, imported into the server's database directly with the server's own code
 * (src/elections/tse/import.ts), as `npm run elections:import` does, but as a database task of the CLI:
 *
 * - a running count of the lines on a terminal (stderr, never with --json), and a summary at the end
 *   (tables, or one JSON document with --json);
 * - Ctrl-C stops between batches: the batch in flight is committed, what was committed is printed (the
 *   same summary, `interrupted: true` in JSON) and the command exits 130; a second Ctrl-C stops at once.
 *   A re-run completes the import (it is idempotent);
 * - refusals (a wrong digest, a file that is not the court's layout) write nothing and exit 1.
 *
 * Test hook: PALANQUE_TEST_IMPORT_PAUSE_MS makes the task say on stderr when each batch is committed and
 * wait that long (or until Ctrl-C) before the next, so a test can interrupt it at a known point.
 */
import { QueryTypes, type Sequelize } from 'sequelize';
import {
  CandidacyImportError,
  CandidacyImportInterrupted,
  importCandidacies,
  type CandidacyImportReport,
} from '../../src/elections/tse/import.js';
import { EXIT, ReportedFailure } from '../errors.js';
import { printJson, printRows, printValue, type Output } from '../output.js';
import { progressBar } from '../progress.js';
import { migrated, redacted, withDatabase, type DatabaseOptions } from './database.js';

export interface ElectionsImportOptions extends DatabaseOptions {
  /** The court's candidacy file or zip, on this machine. */
  file: string;
  sha256?: string;
  /** Lines per transaction (1,000 by default). */
  batchSize?: number;
}

/** A summary, in JSON: the import's report, and whether Ctrl-C stopped it (then what was committed). */
type Summary = CandidacyImportReport & { database: string; interrupted: boolean; rows_read: number };

export async function electionsImportTask(options: ElectionsImportOptions, output: Output): Promise<void> {
  await withDatabase(options, async (task) => {
    await migrated(task);
    const { config } = task;
    const stop = new AbortController();
    const onSignal = () => {
      if (stop.signal.aborted) process.exit(EXIT.interrupted);
      stop.abort();
      output.stderr.write('\nStopping after the batch in flight is committed (Ctrl-C again to stop at once)...\n');
    };
    process.on('SIGINT', onSignal);
    const progress = progressBar('importing', 'lines', { json: output.json, counting: true });
    const pauseMs = Number(process.env.PALANQUE_TEST_IMPORT_PAUSE_MS) || 0;
    let summary: Summary;
    try {
      const report = await importCandidacies(task.sequelize, {
        source: options.file,
        sha256: options.sha256 || undefined,
        allowedHosts: config.electionsImportHosts,
        maxRecordBytes: config.electionsImportMaxRecordBytes,
        allowPrivateAddresses: config.outbound.allowPrivateAddresses,
        batchSize: options.batchSize,
        signal: stop.signal,
        onProgress: async (rows) => {
          progress.update(rows);
          if (pauseMs > 0) {
            output.stderr.write(`[test hook] batch committed, ${rows} lines read; pausing ${pauseMs} ms\n`);
            await pause(pauseMs, stop.signal);
          }
        },
      });
      summary = { database: redacted(config.databaseUrl), interrupted: false, rows_read: report.rows, ...report };
    } catch (error) {
      if (error instanceof CandidacyImportInterrupted) {
        summary = { database: redacted(config.databaseUrl), interrupted: true, rows_read: error.rowsRead, ...error.report };
      } else if (error instanceof CandidacyImportError) {
        throw new ReportedFailure(error.message);
      } else throw error;
    } finally {
      progress.stop();
      process.off('SIGINT', onSignal);
    }
    printSummary(output, summary);
    if (summary.unmatched_units.length > 0 && (await municipalityCount(task.sequelize)) === 0) {
      output.stderr.write('The municipality list is empty, so no municipal unit could be mapped to its IBGE code: run palanque municipios import, then this import again.\n');
    }
    if (summary.interrupted) {
      throw new ReportedFailure(
        `Stopped by Ctrl-C: the ${committed(summary)} lines above were committed, the other lines of the source were not written. ` +
          'Run the same command again to complete the import (lines already written count unchanged).',
        EXIT.interrupted,
      );
    }
  });
}

async function municipalityCount(sequelize: Sequelize): Promise<number> {
  const [row] = await sequelize.query<{ count: number | string }>('SELECT COUNT(*) AS count FROM municipalities', { type: QueryTypes.SELECT });
  return Number(row?.count ?? 0);
}

const committed = (summary: Summary) => summary.inserted + summary.updated + summary.unchanged;

/** Waits `ms`, or less if the signal aborts first. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}

function printSummary(output: Output, summary: Summary): void {
  if (output.json) {
    printJson(output, summary);
    return;
  }
  output.stdout.write(
    summary.interrupted
      ? `Interrupted: what was committed of ${summary.source} to ${summary.database}:\n`
      : `Imported ${summary.source} into ${summary.database}:\n`,
  );
  printValue(output, {
    sha256: summary.sha256,
    'lines read': summary.rows_read,
    ...(summary.interrupted ? { committed: committed(summary), 'not written': summary.rows_read - summary.rows } : {}),
    inserted: summary.inserted,
    updated: summary.updated,
    unchanged: summary.unchanged,
    rejected: summary.rejected,
    elections: summary.elections.join(', '),
    'units abroad': summary.abroad_units,
    'units matched by name': summary.units_matched_by_name.length,
    'units matching no municipality': summary.unmatched_units.length,
  });
  output.stdout.write('Files:\n');
  printRows(output, summary.files.map(({ name, rows }) => ({ file: name, lines: rows })));
  if (summary.rejections.length > 0) {
    output.stdout.write(`Rejected lines${summary.rejected > summary.rejections.length ? ` (the first ${summary.rejections.length} of ${summary.rejected})` : ''}:\n`);
    printRows(output, summary.rejections);
  }
  if (summary.unmatched_units.length > 0) {
    output.stdout.write('Municipal units matching no IBGE municipality (kept without codigo_ibge):\n');
    printRows(output, summary.unmatched_units);
  }
  if (summary.units_matched_by_name.length > 0) {
    output.stdout.write('Units matched by name only (their code names no municipality, or another one):\n');
    printRows(output, summary.units_matched_by_name);
  }
}
