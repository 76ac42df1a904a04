/**
 * Imports the electoral court's candidacy files (a file, or the court's zip of one file per state plus
 * _BRASIL; from a path or an allowed URL) into the tse_* tables. Used by `npm run elections:import` and
 * by the admin operation's job.
 *
 * What holds:
 * - Nothing is written unless the source could be read whole into a local file, its sha256 matches the
 *   expected one (when given), and every candidacy file in it has the columns the import needs (all
 *   missing ones named). Those refusals throw a CandidacyImportError.
 * - The rows are streamed: at most one batch (batchSize rows, 1,000 by default) is held at a time, and
 *   each batch is written in one transaction, holding a lock that serialises the batches of imports
 *   running at once (an advisory lock across instances on PostgreSQL). A failure mid-way keeps the
 *   batches already written; a re-run, being idempotent, completes the import.
 * - Idempotent, keyed by (cd_eleicao, sq_candidato): a row whose row_hash (sha256 of its normalised
 *   values) equals the stored one counts unchanged and is not rewritten; so a state file and the
 *   _BRASIL file holding the same rows count each candidacy once inserted and once unchanged.
 * - Every line is counted once: inserted, updated, unchanged or rejected (with file, line and reason).
 * - The reference tables (elections, offices, code tables, parties, federations, coalitions, units) are
 *   built from the rows, each row written only when new or changed; an election whose rows were written
 *   has its updated_at moved on, which is what tells readers (catalog.ts) that the data changed.
 * - A municipal unit (SG_UE, the court's own municipality code) is mapped to its IBGE code by its code
 *   (the municipality list's SIAFI code plus a check digit), with the state and normalised name (names.ts)
 *   as the reported fallback, as municipality-codes.ts says; one that matches none is kept with
 *   codigo_ibge null and reported. Units abroad (ZZ) have no IBGE code and are only counted.
 */
import { createHash } from 'node:crypto';
import { Op, QueryTypes, type Model, type ModelStatic, type Sequelize, type Transaction, type WhereOptions } from 'sequelize';
import { withLockedTransaction } from '../../db/locks.js';
import type { MunicipalityCatalog } from '../../municipalities/catalog.js';
import { STATE_CODE_BY_ACRONYM } from '../../municipalities/rules.js';
import { CandidacyImportError, checkCourtHeader, readCourtFile, type CourtCandidacy, type CourtRecord, type Rejection } from './court-file.js';
import {
  BALLOT_DIGITS_BY_OFFICE,
  defineCourtModels,
  type CandidacyRow,
  type CodeRow,
  type CoalitionRow,
  type CourtModels,
  type ElectionRow,
  type FederationRow,
  type OfficeRow,
  type PartyRow,
  type UnitRow,
} from './models.js';
import { MunicipalityIndex, type IndexedMunicipality, type UnitMatch } from './municipality-codes.js';
import { courtFilesOf, localSource, type CourtFileEntry } from './source.js';
import type { LookupAll } from '../../webhooks/outbound-http.js';

export { CandidacyImportError, type Rejection } from './court-file.js';

/**
 * The import stopped by its `signal` between batches: `report` counts what was committed (its `rows`
 * the lines settled: written in a committed batch, or rejected); `rowsRead` the lines read in all.
 */
export class CandidacyImportInterrupted extends Error {
  override name = 'CandidacyImportInterrupted';
  constructor(
    readonly report: CandidacyImportReport,
    readonly rowsRead: number,
  ) {
    super(`The import was stopped after ${report.inserted + report.updated + report.unchanged} lines were committed.`);
  }
}

export const DEFAULT_BATCH_SIZE = 1_000;
/** The national zip is a few hundred MB at most. */
export const DEFAULT_MAX_BYTES = 2 * 1024 ** 3;
export const DEFAULT_DOWNLOAD_TIMEOUT_MS = 30 * 60_000;
/** How many rejections the report lists (all are counted). */
export const MAX_REPORTED_REJECTIONS = 100;

const IMPORT_LOCK = 'palanque:tse-import';

export interface CandidacyImportOptions {
  /** A file path, a file: URL or an http(s) URL; a candidacy CSV or the court's zip of them. */
  source: string;
  /** Expected sha256 of the source (hex); undefined skips the check. */
  sha256?: string;
  /** Host names a URL source may name (ELECTIONS_IMPORT_HOSTS). */
  allowedHosts: readonly string[];
  /** The IBGE municipalities to map the court's to; unset or empty, read from the municipalities table. */
  municipalities?: MunicipalityCatalog;
  /** Told the number of lines read so far, after each batch is written; a promise it returns is awaited before the next batch. */
  onProgress?: (rowsRead: number) => unknown;
  /**
   * Stops the import between batches once aborted (the CLI's Ctrl-C): the batch in flight is committed,
   * the lines read after it are not written, and a CandidacyImportInterrupted carries what was committed.
   */
  signal?: AbortSignal;
  /** Rows per transaction (1,000 by default). */
  batchSize?: number;
  /** The most bytes a download may have (2 GiB by default). */
  maxBytes?: number;
  /** How long a download may take (30 minutes by default). */
  downloadTimeoutMs?: number;
  /** The longest record a candidacy file may have, in bytes (ELECTIONS_IMPORT_MAX_RECORD_BYTES; 8 KiB by default). */
  maxRecordBytes?: number;
  /** Whether a listed host name may resolve to a private address (OUTBOUND_ALLOW_PRIVATE_ADDRESSES; false by default). */
  allowPrivateAddresses?: boolean;
  /** How host names resolve (the system's resolver by default). */
  lookupAll?: LookupAll;
}

export interface CandidacyImportReport {
  source: string;
  /** sha256 of the whole source (the zip, or the file). */
  sha256: string;
  /** Each candidacy file read, with its number of lines (the header aside). */
  files: Array<{ name: string; rows: number }>;
  /** Lines read in all files: inserted + updated + unchanged + rejected. */
  rows: number;
  inserted: number;
  updated: number;
  unchanged: number;
  rejected: number;
  /** The first MAX_REPORTED_REJECTIONS rejected lines. */
  rejections: Rejection[];
  /** Municipal units that neither their code nor their name maps to an IBGE municipality of their state (kept with codigo_ibge null). */
  unmatched_units: Array<{ sg_ue: string; sg_uf: string; nm_ue: string }>;
  /** Units mapped by name alone (the fallback): their code maps to no municipality, or to another one (named). */
  units_matched_by_name: Array<{ sg_ue: string; sg_uf: string; nm_ue: string; codigo_ibge: number; code_names: string | null }>;
  /** Units mapped by code whose name IBGE spells otherwise (SÃO LUÍS DO PARAITINGA: São Luiz do Paraitinga). */
  units_spelled_otherwise: Array<{ sg_ue: string; sg_uf: string; nm_ue: string; codigo_ibge: number; nome: string }>;
  /** Distinct units of voters abroad (SG_UF ZZ): no IBGE code by nature, not unmatched. */
  abroad_units: number;
  /** The elections (CD_ELEICAO) the rows belong to, ascending. */
  elections: number[];
}

export async function importCandidacies(sequelize: Sequelize, options: CandidacyImportOptions): Promise<CandidacyImportReport> {
  const local = await localSource(options.source, {
    allowedHosts: options.allowedHosts,
    maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES,
    downloadTimeoutMs: options.downloadTimeoutMs ?? DEFAULT_DOWNLOAD_TIMEOUT_MS,
    allowPrivateAddresses: options.allowPrivateAddresses ?? false,
    lookupAll: options.lookupAll,
  });
  try {
    const expected = options.sha256?.toLowerCase();
    if (expected && local.sha256 !== expected) {
      throw new CandidacyImportError(`The source's sha256 is ${local.sha256}, not the expected ${expected}; nothing was written.`);
    }
    const { files, close } = await courtFilesOf(local);
    try {
      await checkHeaders(files, options.maxRecordBytes);
      const writer = new BatchWriter(sequelize, await municipalityIndex(sequelize, options.municipalities));
      try {
        const report = await readAndWrite(files, writer, options);
        return { source: options.source, sha256: local.sha256, ...report };
      } catch (error) {
        if (error instanceof Stopped) throw new CandidacyImportInterrupted({ source: options.source, sha256: local.sha256, ...error.report }, error.rowsRead);
        throw error;
      }
    } finally {
      close();
    }
  } finally {
    await local.remove();
  }
}

/** Every file's header, before any row is written: a refusal names every missing column of every file. */
async function checkHeaders(files: CourtFileEntry[], maxRecordBytes: number | undefined): Promise<void> {
  const problems: string[] = [];
  for (const file of files) {
    try {
      await checkCourtHeader(await file.open(), file.name, maxRecordBytes);
    } catch (error) {
      if (!(error instanceof CandidacyImportError)) throw error;
      problems.push(error.message);
    }
  }
  if (problems.length === 1) throw new CandidacyImportError(`${problems[0]} Nothing was written.`);
  if (problems.length > 1) throw new CandidacyImportError(`${problems.length} files are not candidacy files of the court's layout; nothing was written:`, problems);
}

interface PendingRow {
  file: string;
  line: number;
  record: CourtRecord;
}

type Counts = Pick<CandidacyImportReport, 'inserted' | 'updated' | 'unchanged'>;

/** readAndWrite stopped by its signal: what was committed. */
class Stopped extends Error {
  constructor(
    readonly report: Omit<CandidacyImportReport, 'source' | 'sha256'>,
    readonly rowsRead: number,
  ) {
    super('stopped');
  }
}

async function readAndWrite(
  files: CourtFileEntry[],
  writer: BatchWriter,
  options: CandidacyImportOptions,
): Promise<Omit<CandidacyImportReport, 'source' | 'sha256'>> {
  const batchSize = Math.max(1, options.batchSize ?? DEFAULT_BATCH_SIZE);
  const report: Omit<CandidacyImportReport, 'source' | 'sha256'> = {
    files: [], rows: 0, inserted: 0, updated: 0, unchanged: 0, rejected: 0, rejections: [], unmatched_units: [],
    units_matched_by_name: [], units_spelled_otherwise: [], abroad_units: 0, elections: [],
  };
  const elections = new Set<number>();
  let batch: PendingRow[] = [];
  let reported = 0;
  /** Stops before the next batch: the lines read since the last one are dropped from the counts. */
  const stopIfAborted = () => {
    if (!options.signal?.aborted) return;
    Object.assign(report, writer.unitReport());
    report.elections = [...elections].sort((a, b) => a - b);
    throw new Stopped({ ...report, rows: report.rows - batch.length }, report.rows);
  };
  const flush = async () => {
    stopIfAborted();
    if (batch.length > 0) {
      const counts = await writer.write(batch);
      report.inserted += counts.inserted;
      report.updated += counts.updated;
      report.unchanged += counts.unchanged;
      batch = [];
    }
    if (report.rows > reported) await options.onProgress?.((reported = report.rows));
  };
  for (const file of files) {
    const read = { name: file.name, rows: 0 };
    report.files.push(read);
    for await (const row of readCourtFile(await file.open(), file.name, options.maxRecordBytes)) {
      stopIfAborted();
      report.rows += 1;
      read.rows += 1;
      if ('rejection' in row) {
        report.rejected += 1;
        if (report.rejections.length < MAX_REPORTED_REJECTIONS) report.rejections.push(row.rejection);
        continue;
      }
      elections.add(row.record.election.cd_eleicao);
      batch.push({ file: file.name, line: row.line, record: row.record });
      if (batch.length >= batchSize) await flush();
    }
  }
  await flush();
  Object.assign(report, writer.unitReport());
  report.elections = [...elections].sort((a, b) => a - b);
  return report;
}

// ---------------------------------------------------------------------------
// Writing a batch
// ---------------------------------------------------------------------------

/**
 * The IBGE municipalities to map units to: the catalog's when given (with the table's SIAFI codes, which
 * the catalog does not carry), else the table's.
 */
async function municipalityIndex(sequelize: Sequelize, catalog: MunicipalityCatalog | undefined): Promise<MunicipalityIndex> {
  const rows = await sequelize.query<{ codigo_ibge: number; nome: string; codigo_uf: number; siafi_id: number | null }>(
    'SELECT codigo_ibge, nome, codigo_uf, siafi_id FROM municipalities',
    { type: QueryTypes.SELECT },
  );
  const siafi = (value: unknown) => (value === null || value === undefined ? null : Number(value));
  if (catalog && catalog.size > 0) {
    const siafiByCode = new Map(rows.map((row) => [Number(row.codigo_ibge), siafi(row.siafi_id)]));
    const listed = [...STATE_CODE_BY_ACRONYM.values()].flatMap((codigoUf) => catalog.inState(codigoUf));
    return new MunicipalityIndex(listed.map((municipality) => ({ ...municipality, siafi_id: siafiByCode.get(municipality.codigo_ibge) ?? null })));
  }
  return new MunicipalityIndex(rows.map((row) => ({ codigo_ibge: Number(row.codigo_ibge), nome: row.nome, codigo_uf: Number(row.codigo_uf) as IndexedMunicipality['codigo_uf'], siafi_id: siafi(row.siafi_id) })));
}

/** The candidacy's columns in the order its row_hash reads them. */
const HASHED_COLUMNS = [
  'cd_eleicao', 'sq_candidato', 'sg_uf', 'sg_ue', 'cd_cargo', 'nr_candidato', 'nm_candidato', 'nm_urna_candidato',
  'nm_busca', 'nr_cpf', 'nr_titulo_eleitoral', 'nr_partido', 'nr_federacao', 'sq_coligacao', 'cd_nacionalidade',
  'sg_uf_nascimento', 'nm_municipio_nascimento', 'dt_nascimento', 'cd_genero', 'cd_grau_instrucao', 'cd_estado_civil',
  'cd_cor_raca', 'cd_ocupacao', 'cd_situacao_candidatura', 'cd_sit_tot_turno', 'st_reeleicao',
] as const satisfies ReadonlyArray<keyof CourtCandidacy>;

/** sha256 of the candidacy's values, in a fixed order: equal rows, equal hashes. */
export function rowHash(candidacy: CourtCandidacy): string {
  return createHash('sha256').update(JSON.stringify(HASHED_COLUMNS.map((column) => candidacy[column]))).digest('hex');
}

const CANDIDACY_UPDATES = [...HASHED_COLUMNS.filter((column) => column !== 'cd_eleicao' && column !== 'sq_candidato'), 'row_hash', 'updated_at'] as const;

class BatchWriter {
  private readonly models: CourtModels;
  private readonly elections: ReferenceTable<ElectionRow>;
  private readonly offices: ReferenceTable<OfficeRow>;
  private readonly codes: ReferenceTable<CodeRow>;
  private readonly parties: ReferenceTable<PartyRow>;
  private readonly federations: ReferenceTable<FederationRow>;
  private readonly coalitions: ReferenceTable<CoalitionRow>;
  private readonly units: ReferenceTable<UnitRow>;
  /** The longest ballot number seen per office, for offices BALLOT_DIGITS_BY_OFFICE does not know. */
  private readonly observedDigits = new Map<number, number>();
  /** Each municipal unit's match, by SG_UE (the last one seen). */
  private readonly matches = new Map<string, { unit: { sg_ue: string; sg_uf: string; nm_ue: string }; match: UnitMatch }>();

  constructor(
    private readonly sequelize: Sequelize,
    private readonly municipalities: MunicipalityIndex,
  ) {
    this.models = defineCourtModels(sequelize);
    const { Election, Office, Code, Party, Federation, Coalition, Unit } = this.models;
    this.elections = new ReferenceTable(Election, ['cd_eleicao'], ['ano', 'cd_tipo_eleicao', 'nr_turno', 'ds_eleicao', 'dt_eleicao', 'tp_abrangencia'], 'updated_at');
    this.offices = new ReferenceTable(Office, ['cd_cargo'], ['ds_cargo', 'ballot_digits']);
    this.codes = new ReferenceTable(Code, ['code_table', 'code'], ['label']);
    this.parties = new ReferenceTable(Party, ['cd_eleicao', 'nr_partido'], ['sg_partido', 'nm_partido', 'nr_federacao']);
    this.federations = new ReferenceTable(Federation, ['cd_eleicao', 'nr_federacao'], ['sg_federacao', 'nm_federacao']);
    this.coalitions = new ReferenceTable(Coalition, ['sq_coligacao'], ['cd_eleicao', 'nm_coligacao', 'ds_composicao']);
    this.units = new ReferenceTable(Unit, ['sg_ue'], ['sg_uf', 'nm_ue', 'codigo_ibge']);
  }

  /** How the units were matched, each list by state and name. */
  unitReport(): Pick<CandidacyImportReport, 'unmatched_units' | 'units_matched_by_name' | 'units_spelled_otherwise' | 'abroad_units'> {
    const report: ReturnType<BatchWriter['unitReport']> = { unmatched_units: [], units_matched_by_name: [], units_spelled_otherwise: [], abroad_units: 0 };
    const ordered = [...this.matches.values()].sort((a, b) => a.unit.sg_uf.localeCompare(b.unit.sg_uf) || a.unit.nm_ue.localeCompare(b.unit.nm_ue));
    for (const { unit, match } of ordered) {
      if (match.by === 'abroad') report.abroad_units += 1;
      else if (match.by === 'none') report.unmatched_units.push({ ...unit });
      else if (match.by === 'name') report.units_matched_by_name.push({ ...unit, codigo_ibge: match.codigo_ibge, code_names: match.code_named?.nome ?? null });
      else if (match.spelling_differs) report.units_spelled_otherwise.push({ ...unit, codigo_ibge: match.codigo_ibge, nome: match.nome });
    }
    return report;
  }

  /** Writes one batch in one transaction, under the import lock; returns how its rows counted. */
  async write(batch: PendingRow[]): Promise<Counts> {
    const records = batch.map((row) => row.record);
    try {
      return await withLockedTransaction(this.sequelize, [IMPORT_LOCK], async (transaction) => {
        const now = new Date();
        let written = 0;
        // Parents first: parties, federations, coalitions and candidacies reference their election.
        written += await this.elections.write(records.map((record) => ({ ...record.election, updated_at: now })), transaction, now);
        written += await this.offices.write(records.map((record) => this.office(record)), transaction, now);
        written += await this.codes.write(records.flatMap((record) => record.codes), transaction, now);
        written += await this.parties.write(records.map(({ election, party }) => ({ cd_eleicao: election.cd_eleicao, ...party })), transaction, now);
        written += await this.federations.write(
          records.flatMap(({ election, federation }) => (federation ? [{ cd_eleicao: election.cd_eleicao, ...federation }] : [])),
          transaction,
          now,
        );
        written += await this.coalitions.write(
          records.flatMap(({ election, coalition }) => (coalition ? [{ cd_eleicao: election.cd_eleicao, ...coalition }] : [])),
          transaction,
          now,
        );
        written += await this.units.write(records.map((record) => this.unit(record)), transaction, now);
        const counts = await this.writeCandidacies(records, transaction, now);
        if (written + counts.inserted + counts.updated > 0) {
          // Readers know the data changed by the elections' newest updated_at (catalog.ts's version).
          const touched = [...new Set(records.map((record) => record.election.cd_eleicao))];
          await this.models.Election.update({ updated_at: now }, { where: { cd_eleicao: touched }, transaction });
        }
        return counts;
      });
    } catch (error) {
      const first = batch[0];
      const last = batch.at(-1);
      const cause = (error as { original?: Error }).original ?? (error as Error);
      throw new CandidacyImportError(
        `Writing the rows from ${first?.file} line ${first?.line} to ${last?.file} line ${last?.line} failed: ${cause.message}. ` +
          'The rows before them were written; the import is idempotent, so running it again completes it.',
      );
    }
  }

  private office({ office, candidacy }: CourtRecord): OfficeRow {
    const digits = String(candidacy.nr_candidato).length;
    const observed = Math.max(digits, this.observedDigits.get(office.cd_cargo) ?? 0);
    this.observedDigits.set(office.cd_cargo, observed);
    return { ...office, ballot_digits: BALLOT_DIGITS_BY_OFFICE.get(office.cd_cargo) ?? observed };
  }

  /** The unit, mapped to its IBGE municipality when it is one (a municipal election's numeric SG_UE): municipality-codes.ts. */
  private unit({ unit }: CourtRecord): UnitRow {
    if (!/^\d+$/.test(unit.sg_ue)) return { ...unit, codigo_ibge: null };
    const match = this.municipalities.matchUnit(STATE_CODE_BY_ACRONYM.get(unit.sg_uf), unit.sg_uf, unit.sg_ue, unit.nm_ue);
    this.matches.set(unit.sg_ue, { unit: { ...unit }, match });
    return { ...unit, codigo_ibge: match.by === 'code' || match.by === 'name' ? match.codigo_ibge : null };
  }

  private async writeCandidacies(records: CourtRecord[], transaction: Transaction, now: Date): Promise<Counts> {
    const { Candidacy } = this.models;
    const key = (candidacy: CourtCandidacy) => `${candidacy.cd_eleicao}:${candidacy.sq_candidato}`;
    // The stored hash of every key in the batch, one query per election (the index tse_candidacies_key).
    const stored = new Map<string, string>();
    const byElection = new Map<number, string[]>();
    for (const { candidacy } of records) byElection.set(candidacy.cd_eleicao, [...(byElection.get(candidacy.cd_eleicao) ?? []), candidacy.sq_candidato]);
    for (const [cd_eleicao, sq_candidato] of byElection) {
      const rows = (await Candidacy.findAll({
        attributes: ['sq_candidato', 'row_hash'],
        where: { cd_eleicao, sq_candidato: [...new Set(sq_candidato)] },
        raw: true,
        transaction,
      })) as unknown as Array<Pick<CandidacyRow, 'sq_candidato' | 'row_hash'>>;
      for (const row of rows) stored.set(`${cd_eleicao}:${row.sq_candidato}`, row.row_hash);
    }
    const counts: Counts = { inserted: 0, updated: 0, unchanged: 0 };
    const toWrite = new Map<string, Omit<CandidacyRow, 'id'>>();
    for (const { candidacy } of records) {
      const rowKey = key(candidacy);
      const hash = rowHash(candidacy);
      const current = stored.get(rowKey);
      if (current === hash) {
        counts.unchanged += 1;
        continue;
      }
      if (current === undefined) counts.inserted += 1;
      else counts.updated += 1;
      // A key seen again in the batch (a state file's row in _BRASIL) is compared with its first sight.
      stored.set(rowKey, hash);
      toWrite.set(rowKey, { ...candidacy, row_hash: hash, updated_at: now });
    }
    if (toWrite.size > 0) {
      // The query interface, not Candidacy.bulkCreate: building a model instance per row was a fifth of the time.
      await this.sequelize.getQueryInterface().bulkInsert(
        Candidacy.getTableName(),
        [...toWrite.values()],
        { updateOnDuplicate: [...CANDIDACY_UPDATES], upsertKeys: ['cd_eleicao', 'sq_candidato'], transaction } as object,
        Candidacy.getAttributes(),
      );
    }
    return counts;
  }
}

type Static<Row extends object> = ModelStatic<Model<Row, Partial<Row>>>;

/**
 * One reference table as the import writes it: each row key is compared with the table the first time
 * the import sees it (and again when its values change), and written only when new or different.
 */
class ReferenceTable<Row extends object> {
  /** Each key's values as last written or found, in this import. */
  private readonly settled = new Map<string, string>();

  constructor(
    private readonly model: Static<Row>,
    private readonly keys: ReadonlyArray<keyof Row & string>,
    private readonly compared: ReadonlyArray<keyof Row & string>,
    private readonly stamp?: keyof Row & string,
  ) {}

  /** Writes the rows new to the table or different from it; returns how many it wrote. */
  async write(rows: Row[], transaction: Transaction, now: Date): Promise<number> {
    const distinct = new Map<string, Row>();
    for (const row of rows) distinct.set(this.keyOf(row), row);
    const pending = new Map<string, Row>();
    for (const [key, row] of distinct) if (this.settled.get(key) !== this.valuesOf(row)) pending.set(key, row);
    if (pending.size === 0) return 0;
    const existing = (await this.model.findAll({
      where: { [Op.or]: [...pending.values()].map((row) => Object.fromEntries(this.keys.map((key) => [key, row[key]]))) } as WhereOptions<Row>,
      raw: true,
      transaction,
    })) as unknown as Row[];
    const current = new Map(existing.map((row) => [this.keyOf(row), this.valuesOf(row)]));
    const changed = [...pending].filter(([key, row]) => current.get(key) !== this.valuesOf(row)).map(([, row]) => row);
    if (changed.length > 0) {
      await this.model.bulkCreate(
        changed.map((row) => (this.stamp ? { ...row, [this.stamp]: now } : row)) as never[],
        {
          updateOnDuplicate: [...this.compared, ...(this.stamp ? [this.stamp] : [])] as never[],
          conflictAttributes: [...this.keys] as never[],
          transaction,
        },
      );
    }
    for (const [key, row] of pending) this.settled.set(key, this.valuesOf(row));
    return changed.length;
  }

  private keyOf(row: Row): string {
    return this.keys.map((key) => String(row[key])).join('\u0000');
  }

  /** The compared values as one text; numbers and dates as the database may hand them back (strings, Dates). */
  private valuesOf(row: Row): string {
    return JSON.stringify(
      this.compared.map((column) => {
        const value = row[column] as unknown;
        if (value === null || value === undefined) return null;
        return value instanceof Date ? value.toISOString().slice(0, 10) : String(value);
      }),
    );
  }
}
