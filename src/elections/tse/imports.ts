/**
 * Imports of the court's candidacy files that admins queue through the API (`startElectionsImport`)
 * and follow (`getElectionsImport`): a row in tse_imports (its state, the lines read so far, the report
 * or the reason it failed) and a background job that runs importCandidacies (import.ts).
 *
 * What holds:
 * - Only an https URL on a host ELECTIONS_IMPORT_HOSTS allows (http only for a host listed with an
 *   explicit `http://`) is accepted, checked before anything is queued (the job checks it again, every
 *   redirect and the addresses it connects to, in source.ts). A server path is never accepted here:
 *   `npm run elections:import` on the server's machine takes files.
 * - One import at a time: asking while one is queued or running answers 409 naming it. Two admins
 *   racing get one import (the check and the insert hold one lock).
 * - `rows_read` moves on after each batch is written, so a front end can show progress.
 * - A refusal that would repeat (a host not allowed, a wrong sha256, a file that is not the court's
 *   layout) fails the import at once, with the reason. Any other failure (the court's server did not
 *   answer) is retried by the queue, twice; the batches already written stay, and the retry, being
 *   idempotent, completes them. An import that ends for good is `failed` with the last reason.
 */
import { randomUUID } from 'node:crypto';
import { Op, type Sequelize } from 'sequelize';
import type { components } from '../../../sdk/schema.js';
import { withLocks } from '../../db/locks.js';
import { ApiError } from '../../http/errors.js';
import type { JobAttempt, JobQueue } from '../../jobs/index.js';
import type { Logger } from '../../logger.js';
import type { LookupAll } from '../../webhooks/outbound-http.js';
import { CandidacyImportError, importCandidacies, type CandidacyImportReport } from './import.js';
import { defineCourtModels, type CourtModels, type ImportRow } from './models.js';
import { importUrlRefusal } from './source.js';

export type ElectionsImport = components['schemas']['ElectionsImport'];

export const COURT_IMPORT_JOB = 'elections-court-import';
const IMPORT_RETRIES = 2;

export interface CourtImportSettings {
  /** ELECTIONS_IMPORT_HOSTS: host names, https only unless written `http://host`. */
  allowedHosts: readonly string[];
  /** ELECTIONS_IMPORT_MAX_RECORD_BYTES (8 KiB when unset). */
  maxRecordBytes?: number;
  /** OUTBOUND_ALLOW_PRIVATE_ADDRESSES: whether a listed name may resolve to a private address. */
  allowPrivateAddresses?: boolean;
  /** How host names resolve (the system's resolver when unset). */
  lookupAll?: LookupAll;
}

export class CourtImports {
  private readonly models: CourtModels;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly jobs: JobQueue,
    private readonly logger: Logger,
    private readonly settings: CourtImportSettings,
  ) {
    this.models = defineCourtModels(sequelize);
  }

  async registerJobs(): Promise<void> {
    await this.jobs.register(COURT_IMPORT_JOB, (data, job) => this.run((data as { import_id: string }).import_id, job), { retryLimit: IMPORT_RETRIES });
  }

  /** Queues an import of `source`; 422 for a source this deployment does not download from, 409 while another import is under way. */
  async request(requestedBy: number, source: string, sha256: string | undefined): Promise<ElectionsImport> {
    this.refuseSource(source);
    const row = await withLocks(this.sequelize, ['palanque:tse-import-request'], async (transaction) => {
      const underWay = (await this.models.Import.findOne({ where: { state: { [Op.in]: ['queued', 'running'] } }, raw: true, transaction })) as ImportRow | null;
      if (underWay) {
        throw new ApiError(409, 'conflict', `Import ${underWay.id} is ${underWay.state}; one import runs at a time. Follow it with getElectionsImport.`, [
          { location: 'body', field: 'source', rule: 'one_import_at_a_time', message: `import ${underWay.id} of ${underWay.source} is ${underWay.state}`, value: source },
        ]);
      }
      const now = new Date();
      const created: ImportRow = { id: randomUUID(), requested_by: requestedBy, source, sha256: sha256?.toLowerCase() ?? null, state: 'queued', rows_read: 0, report: null, error: null, created_at: now, updated_at: now };
      await this.models.Import.create(created, { transaction });
      return created;
    });
    // Queued once the row is committed, so the job always finds it; a row that cannot be queued is closed
    // at once, or it would block every later import.
    try {
      await this.jobs.enqueue(COURT_IMPORT_JOB, { import_id: row.id });
    } catch (error) {
      await this.finish(row.id, { state: 'failed', error: 'The import could not be queued; ask again.' });
      this.logger.error({ err: error, import_id: row.id }, 'could not queue a court candidacy import');
      throw new ApiError(503, 'service_unavailable', 'The job queue did not take the import; nothing was queued. Ask again in a minute.', [
        { location: 'body', field: 'source', rule: 'queued', message: 'could not be queued', value: source },
      ], { 'Retry-After': '60' });
    }
    return viewOf(row);
  }

  async get(id: string): Promise<ElectionsImport | undefined> {
    const row = (await this.models.Import.findByPk(id, { raw: true })) as ImportRow | null;
    return row ? viewOf(row) : undefined;
  }

  /** The job: runs the import, recording progress and the outcome on the row. */
  async run(id: string, job: JobAttempt): Promise<{ state: ImportRow['state'] }> {
    const row = (await this.models.Import.findByPk(id, { raw: true })) as ImportRow | null;
    if (!row || row.state === 'completed' || row.state === 'failed') return { state: row?.state ?? 'failed' };
    await this.models.Import.update({ state: 'running', updated_at: new Date() }, { where: { id } });
    try {
      const report = await importCandidacies(this.sequelize, {
        source: row.source,
        sha256: row.sha256 ?? undefined,
        allowedHosts: this.settings.allowedHosts,
        maxRecordBytes: this.settings.maxRecordBytes,
        allowPrivateAddresses: this.settings.allowPrivateAddresses,
        lookupAll: this.settings.lookupAll,
        onProgress: (rowsRead) => void this.models.Import.update({ rows_read: rowsRead, updated_at: new Date() }, { where: { id } }).catch(() => undefined),
      });
      await this.finish(id, { state: 'completed', rows_read: report.rows, report: JSON.stringify(report), error: null });
      this.logger.info({ import_id: id, inserted: report.inserted, updated: report.updated, unchanged: report.unchanged, rejected: report.rejected }, 'court candidacy import completed');
      return { state: 'completed' };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const permanent = error instanceof CandidacyImportError;
      if (permanent || job.lastAttempt) {
        await this.finish(id, { state: 'failed', error: reason });
        this.logger.warn({ import_id: id, reason }, 'court candidacy import failed');
        if (permanent) return { state: 'failed' }; // the same source would fail the same way
      } else {
        await this.models.Import.update({ error: reason, updated_at: new Date() }, { where: { id } });
      }
      throw error;
    }
  }

  private refuseSource(source: string): void {
    let url: URL | undefined;
    try {
      url = new URL(source);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
      throw new ApiError(422, 'validation_failed', 'The source must be an http(s) URL of the court\'s candidacy zip or file.', [
        { location: 'body', field: 'source', rule: 'http_url', message: 'must be an absolute http(s) URL', value: source },
      ]);
    }
    const refusal = importUrlRefusal(url, this.settings.allowedHosts);
    if (refusal?.rule === 'https') {
      throw new ApiError(422, 'validation_failed', `This deployment downloads the court's files over https only (ELECTIONS_IMPORT_HOSTS lists ${url.hostname} without http://).`, [
        { location: 'body', field: 'source', rule: 'https', message: 'must be an https URL', value: source },
      ]);
    }
    if (refusal) {
      throw new ApiError(422, 'validation_failed', `This deployment downloads the court's files only from ${this.settings.allowedHosts.join(', ')} (ELECTIONS_IMPORT_HOSTS).`, [
        { location: 'body', field: 'source', rule: 'allowed_host', message: `must be on one of the hosts ${this.settings.allowedHosts.join(', ')}`, value: source },
      ]);
    }
  }

  private async finish(id: string, outcome: Partial<ImportRow>): Promise<void> {
    await this.models.Import.update({ ...outcome, updated_at: new Date() }, { where: { id } });
  }
}

function viewOf(row: ImportRow): ElectionsImport {
  return {
    id: row.id,
    state: row.state,
    source: row.source,
    sha256: row.sha256,
    rows_read: Number(row.rows_read),
    requested_by: row.requested_by,
    report: row.report ? (JSON.parse(row.report) as CandidacyImportReport) : null,
    error: row.error,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}
