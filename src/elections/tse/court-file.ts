/**
 * Reads one candidacy file of the electoral court (`consulta_cand_<year>_<UF>.csv`) from a byte stream:
 * Latin-1, `;`-separated, every value in double quotes (a quote inside doubled), a header row.
 *
 * What holds:
 * - A file whose header lacks a required column is refused (CandidacyImportError naming every missing
 *   column) before any row is read.
 * - Every other line becomes exactly one CourtRow: a typed record, or a rejection naming the file, the
 *   line and what is wrong (the column and its value). Nothing is dropped silently.
 * - A record (a line, or several when a quoted value holds line breaks) longer than `maxRecordBytes`
 *   (ELECTIONS_IMPORT_MAX_RECORD_BYTES, 8 KiB by default; the court's longest are about 1.5 KB) fails
 *   the whole file with a CandidacyImportError naming the file and the line, as soon as the cap is
 *   passed: memory stays bounded whatever a zip inflates to. csv-parse's own `max_record_size` counts
 *   the values only, so a line of a hundred million `;` would pass it; the cap is counted on the bytes.
 * - The court's placeholders (`#NULO#`, `#NULO`, `#NE#`, `#NE`, empty) and negative numbers in code and
 *   number columns (-1 null, -3 does not apply, -4 withheld...) are absent values: null.
 * - Codes keep their labels (the CD_/DS_ pairs) so the import can fill the code tables.
 *
 * Decisions:
 * - The bytes are decoded as Windows-1252, Latin-1's superset: the two agree on every letter, and the
 *   court's files carry the odd 0x80-0x9F byte (’ – “) that Latin-1 would turn into control characters.
 * - Required columns are those every layout since 2022 has. The 2024 layout dropped CD_NACIONALIDADE,
 *   DS_NACIONALIDADE, NM_MUNICIPIO_NASCIMENTO and ST_REELEICAO (and 2022's has no NM_TIPO_ELEICAO label
 *   in some extracts): those are read when present and null otherwise, so 2024's files import.
 * - A row is rejected when a required value is absent or any value is not of its column's form, except
 *   the birth date: an impossible DT_NASCIMENTO (31/02/1970) is stored as null, because a candidacy is
 *   worth more than its birth date, which the court itself withholds in recent files.
 */
import { pipeline, Transform, type Readable } from 'node:stream';
import { parse, type CsvError } from 'csv-parse';
import iconv from 'iconv-lite';
import type { CandidacyRow, CodeRow, CodeTable, CoalitionRow, ElectionRow, FederationRow, PartyRow } from './models.js';
import { searchableName } from './names.js';

/** The columns every candidacy file must have. */
export const REQUIRED_COLUMNS = [
  'ANO_ELEICAO', 'CD_TIPO_ELEICAO', 'NR_TURNO', 'CD_ELEICAO', 'DS_ELEICAO', 'DT_ELEICAO', 'TP_ABRANGENCIA',
  'SG_UF', 'SG_UE', 'NM_UE', 'CD_CARGO', 'DS_CARGO', 'SQ_CANDIDATO', 'NR_CANDIDATO', 'NM_CANDIDATO',
  'NM_URNA_CANDIDATO', 'NR_CPF_CANDIDATO', 'CD_SITUACAO_CANDIDATURA', 'DS_SITUACAO_CANDIDATURA', 'NR_PARTIDO',
  'SG_PARTIDO', 'NM_PARTIDO', 'NR_FEDERACAO', 'NM_FEDERACAO', 'SG_FEDERACAO', 'SQ_COLIGACAO', 'NM_COLIGACAO',
  'DS_COMPOSICAO_COLIGACAO', 'SG_UF_NASCIMENTO', 'DT_NASCIMENTO', 'NR_TITULO_ELEITORAL_CANDIDATO', 'CD_GENERO',
  'DS_GENERO', 'CD_GRAU_INSTRUCAO', 'DS_GRAU_INSTRUCAO', 'CD_ESTADO_CIVIL', 'DS_ESTADO_CIVIL', 'CD_COR_RACA',
  'DS_COR_RACA', 'CD_OCUPACAO', 'DS_OCUPACAO', 'CD_SIT_TOT_TURNO', 'DS_SIT_TOT_TURNO',
] as const;

/** Columns read when the file has them (the 2024 layout dropped all but NM_TIPO_ELEICAO). */
export const OPTIONAL_COLUMNS = [
  'NM_TIPO_ELEICAO', 'CD_NACIONALIDADE', 'DS_NACIONALIDADE', 'NM_MUNICIPIO_NASCIMENTO', 'ST_REELEICAO',
] as const;

type Column = (typeof REQUIRED_COLUMNS)[number] | (typeof OPTIONAL_COLUMNS)[number];

/** The court's markers of an absent value in text columns. */
export const PLACEHOLDERS: ReadonlySet<string> = new Set(['', '#NULO#', '#NULO', '#NE#', '#NE']);

/** The code tables and the columns of their code and label; tipo_eleicao's label is optional. */
const CODE_COLUMNS: ReadonlyArray<{ table: CodeTable; code: Column; label: Column }> = [
  { table: 'tipo_eleicao', code: 'CD_TIPO_ELEICAO', label: 'NM_TIPO_ELEICAO' },
  { table: 'genero', code: 'CD_GENERO', label: 'DS_GENERO' },
  { table: 'grau_instrucao', code: 'CD_GRAU_INSTRUCAO', label: 'DS_GRAU_INSTRUCAO' },
  { table: 'estado_civil', code: 'CD_ESTADO_CIVIL', label: 'DS_ESTADO_CIVIL' },
  { table: 'cor_raca', code: 'CD_COR_RACA', label: 'DS_COR_RACA' },
  { table: 'ocupacao', code: 'CD_OCUPACAO', label: 'DS_OCUPACAO' },
  { table: 'nacionalidade', code: 'CD_NACIONALIDADE', label: 'DS_NACIONALIDADE' },
  { table: 'situacao_candidatura', code: 'CD_SITUACAO_CANDIDATURA', label: 'DS_SITUACAO_CANDIDATURA' },
  { table: 'sit_tot_turno', code: 'CD_SIT_TOT_TURNO', label: 'DS_SIT_TOT_TURNO' },
];

/** A candidacy as stored, less what the import adds (id, row_hash, updated_at). */
export type CourtCandidacy = Omit<CandidacyRow, 'id' | 'row_hash' | 'updated_at'>;

/** One line of a candidacy file, typed, with the reference data it carries. */
export interface CourtRecord {
  election: Omit<ElectionRow, 'updated_at'>;
  office: { cd_cargo: number; ds_cargo: string };
  unit: { sg_ue: string; sg_uf: string; nm_ue: string };
  party: Omit<PartyRow, 'cd_eleicao'>;
  federation: Omit<FederationRow, 'cd_eleicao'> | null;
  coalition: Omit<CoalitionRow, 'cd_eleicao'> | null;
  /** Every CD_/DS_ pair of the line with both a code and a label. */
  codes: CodeRow[];
  candidacy: CourtCandidacy;
}

export interface Rejection {
  file: string;
  /** The line in the file (the header is line 1). */
  line: number;
  reason: string;
}

export type CourtRow = { line: number; record: CourtRecord } | { line: number; rejection: Rejection };

/** An import refused as a whole (a missing column, a wrong digest, a host not allowed...); problems lists the details. */
export class CandidacyImportError extends Error {
  override name = 'CandidacyImportError';
  constructor(
    message: string,
    readonly problems: string[] = [],
  ) {
    super(problems.length > 0 ? `${message}\n  ${problems.join('\n  ')}` : message);
  }
}

/** The required columns a header lacks, in the layout's order. */
export function missingColumns(header: readonly string[]): string[] {
  const present = new Set(header.map((name) => name.trim()));
  return REQUIRED_COLUMNS.filter((column) => !present.has(column));
}

function refuseMissing(file: string, missing: string[]): CandidacyImportError {
  return new CandidacyImportError(`${file} is not a candidacy file of the court's layout: its header lacks the column(s) ${missing.join(', ')}.`);
}

const parserOptions = { delimiter: ';', quote: '"', bom: true, skip_empty_lines: true } as const;

/** The longest record read by default (ELECTIONS_IMPORT_MAX_RECORD_BYTES): about five times the court's longest. */
export const DEFAULT_MAX_RECORD_BYTES = 8192;

const QUOTE = 0x22;
const LINE_FEED = 0x0a;

/**
 * Passes the file's bytes on unchanged, failing once a record passes `maxBytes`, before the parser has
 * to hold it. A record ends at a line feed outside quotes; a doubled quote inside a value toggles twice,
 * so the count needs no other state. Lines are numbered as the parser numbers them (every line feed).
 */
function recordSizeCap(file: string, maxBytes: number): Transform {
  let quoted = false;
  let recordBytes = 0;
  let line = 1;
  let recordLine = 1;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      for (let index = 0; index < chunk.length; index++) {
        const byte = chunk[index];
        if (byte === QUOTE) {
          quoted = !quoted;
        } else if (byte === LINE_FEED) {
          line += 1;
          if (!quoted) {
            recordBytes = 0;
            recordLine = line;
            continue;
          }
        }
        if ((recordBytes += 1) > maxBytes) {
          done(new CandidacyImportError(`${file}, line ${recordLine}: a record is longer than ${maxBytes} bytes (ELECTIONS_IMPORT_MAX_RECORD_BYTES), far more than any line of the court's files; the file was not read further.`));
          return;
        }
      }
      done(null, chunk);
    },
  });
}

/** Reads only the header of a file (the rest of the stream is left unread and destroyed); refuses one missing columns. */
export async function checkCourtHeader(input: Readable, file: string, maxRecordBytes = DEFAULT_MAX_RECORD_BYTES): Promise<string[]> {
  const parser = parse({ ...parserOptions, to_line: 1 });
  // Destroying the input once the header is read ends the pipeline early: that is not an error here.
  const records = pipeline(input, recordSizeCap(file, maxRecordBytes), iconv.decodeStream('win1252'), parser, () => {}) as unknown as AsyncIterable<string[]>;
  let header: string[] | undefined;
  try {
    for await (const record of records) header ??= record;
  } catch (error) {
    if (error instanceof CandidacyImportError) throw error;
    throw new CandidacyImportError(`Cannot read the header of ${file}: ${(error as Error).message}`);
  } finally {
    input.destroy();
  }
  if (!header) throw new CandidacyImportError(`${file} is empty: it has no header row.`);
  const missing = missingColumns(header);
  if (missing.length > 0) throw refuseMissing(file, missing);
  return header;
}

/** The rows of one candidacy file, in order, each a record or a rejection. */
export async function* readCourtFile(input: Readable, file: string, maxRecordBytes = DEFAULT_MAX_RECORD_BYTES): AsyncGenerator<CourtRow> {
  const skipped: CourtRow[] = [];
  const parser = parse({
    ...parserOptions,
    info: true,
    // Arrays, not objects keyed by the header: a third faster on 70-column lines.
    columns: false,
    // A line the CSV grammar cannot read (a stray quote, a value too many) is that line's rejection.
    skip_records_with_error: true,
    on_skip: (error) => {
      const line = (error as (CsvError & { lines?: number }) | undefined)?.lines ?? 0;
      // One bad line may raise several errors: the first says what is wrong.
      if (skipped.at(-1)?.line !== line) skipped.push({ line, rejection: { file, line, reason: error?.message ?? 'unreadable line' } });
      return undefined;
    },
  });
  const records = pipeline(input, recordSizeCap(file, maxRecordBytes), iconv.decodeStream('win1252'), parser, () => {}) as unknown as AsyncIterable<{
    record: string[];
    info: { lines: number };
  }>;
  let columns: Map<string, number> | undefined;
  try {
    for await (const { record, info } of records) {
      if (!columns) {
        const missing = missingColumns(record);
        if (missing.length > 0) throw refuseMissing(file, missing);
        columns = new Map(record.map((name, index) => [name.trim(), index]));
        continue;
      }
      // The parser reads ahead: a bad line it skipped may come after this one.
      while (skipped.length > 0 && (skipped[0] as CourtRow).line < info.lines) yield skipped.shift() as CourtRow;
      const index = columns;
      yield lineToRow((column) => {
        const at = index.get(column);
        return at === undefined ? undefined : record[at];
      }, info.lines, file);
    }
  } catch (error) {
    if (error instanceof CandidacyImportError) throw error;
    throw new CandidacyImportError(`Cannot read ${file}: ${(error as Error).message}`);
  }
  if (!columns) throw new CandidacyImportError(`${file} is empty: it has no header row.`);
  yield* skipped;
}

/** Turns one line, as values by column name, into a record or the rejection that names what is wrong with it. */
export function toCourtRow(values: Readonly<Record<string, string>>, line: number, file: string): CourtRow {
  return lineToRow((column) => values[column], line, file);
}

function lineToRow(valueOf: (column: Column) => string | undefined, line: number, file: string): CourtRow {
  const read = new LineReader(valueOf);
  const record = read.record();
  if (read.problems.length > 0 || !record) return { line, rejection: { file, line, reason: read.problems.join('; ') } };
  return { line, record };
}

const INTEGER = /^-?\d+$/;
/** Personal data under the LGPD (race is sensitive): a rejection's reason does not repeat their values. */
const PERSONAL_COLUMNS: ReadonlySet<Column> = new Set(['NR_CPF_CANDIDATO', 'NR_TITULO_ELEITORAL_CANDIDATO', 'DT_NASCIMENTO', 'CD_COR_RACA', 'DS_COR_RACA']);
const DATE = /^(\d{2})\/(\d{2})\/(\d{4})$/;

/** The values of one line, read column by column; every problem is noted and the row is then rejected. */
class LineReader {
  readonly problems: string[] = [];

  constructor(private readonly valueOf: (column: Column) => string | undefined) {}

  record(): CourtRecord | undefined {
    const election = {
      cd_eleicao: this.requiredNumber('CD_ELEICAO'),
      ano: this.requiredNumber('ANO_ELEICAO'),
      cd_tipo_eleicao: this.requiredNumber('CD_TIPO_ELEICAO'),
      nr_turno: this.requiredNumber('NR_TURNO'),
      ds_eleicao: this.requiredText('DS_ELEICAO', 200),
      dt_eleicao: this.requiredDate('DT_ELEICAO'),
      tp_abrangencia: this.requiredText('TP_ABRANGENCIA', 20),
    };
    const unit = {
      sg_ue: this.requiredMatching('SG_UE', /^[A-Z0-9]{1,10}$/, 'up to 10 letters or digits'),
      sg_uf: this.requiredMatching('SG_UF', /^[A-Z]{2}$/, 'a 2-letter acronym'),
      nm_ue: this.requiredText('NM_UE', 200),
    };
    const office = { cd_cargo: this.requiredNumber('CD_CARGO'), ds_cargo: this.requiredText('DS_CARGO', 100) };
    const party = {
      nr_partido: this.requiredNumber('NR_PARTIDO'),
      sg_partido: this.requiredText('SG_PARTIDO', 30),
      nm_partido: this.requiredText('NM_PARTIDO', 200),
      nr_federacao: this.number('NR_FEDERACAO'),
    };
    const federation = this.federation(party.nr_federacao);
    const coalition = this.coalition();
    const nm_candidato = this.requiredText('NM_CANDIDATO', 200);
    const nm_urna_candidato = this.requiredText('NM_URNA_CANDIDATO', 100);
    const candidacy: CourtCandidacy = {
      cd_eleicao: election.cd_eleicao,
      sq_candidato: this.requiredMatching('SQ_CANDIDATO', /^\d{1,20}$/, 'up to 20 digits'),
      sg_uf: unit.sg_uf,
      sg_ue: unit.sg_ue,
      cd_cargo: office.cd_cargo,
      nr_candidato: this.requiredNumber('NR_CANDIDATO'),
      nm_candidato,
      nm_urna_candidato,
      nm_busca: searchableName(nm_candidato, nm_urna_candidato),
      nr_cpf: this.digits('NR_CPF_CANDIDATO', 11),
      nr_titulo_eleitoral: this.digits('NR_TITULO_ELEITORAL_CANDIDATO', 12, 13),
      nr_partido: party.nr_partido,
      nr_federacao: party.nr_federacao,
      sq_coligacao: coalition?.sq_coligacao ?? null,
      cd_nacionalidade: this.number('CD_NACIONALIDADE'),
      sg_uf_nascimento: this.matching('SG_UF_NASCIMENTO', /^[A-Z]{2}$/, 'a 2-letter acronym'),
      nm_municipio_nascimento: this.text('NM_MUNICIPIO_NASCIMENTO', 200),
      dt_nascimento: this.birthDate(),
      cd_genero: this.number('CD_GENERO'),
      cd_grau_instrucao: this.number('CD_GRAU_INSTRUCAO'),
      cd_estado_civil: this.number('CD_ESTADO_CIVIL'),
      cd_cor_raca: this.number('CD_COR_RACA'),
      cd_ocupacao: this.number('CD_OCUPACAO'),
      cd_situacao_candidatura: this.number('CD_SITUACAO_CANDIDATURA'),
      cd_sit_tot_turno: this.number('CD_SIT_TOT_TURNO'),
      st_reeleicao: this.flag('ST_REELEICAO'),
    };
    if (this.problems.length > 0) return undefined;
    // Read once the codes are known good, so a bad code is not reported twice.
    const codes = this.codes();
    if (this.problems.length > 0) return undefined;
    return { election, office, unit, party, federation, coalition, codes, candidacy };
  }

  private federation(nr_federacao: number | null): CourtRecord['federation'] {
    const sg_federacao = this.text('SG_FEDERACAO', 60);
    const nm_federacao = this.text('NM_FEDERACAO', 200);
    if (nr_federacao === null || sg_federacao === null || nm_federacao === null) return null;
    return { nr_federacao, sg_federacao, nm_federacao };
  }

  private coalition(): CourtRecord['coalition'] {
    const sq_coligacao = this.digits('SQ_COLIGACAO', 1, 20);
    const nm_coligacao = this.text('NM_COLIGACAO', 300);
    const ds_composicao = this.text('DS_COMPOSICAO_COLIGACAO', 500);
    if (sq_coligacao === null) return null;
    return { sq_coligacao, nm_coligacao: nm_coligacao ?? '', ds_composicao: ds_composicao ?? '' };
  }

  private codes(): CodeRow[] {
    const codes: CodeRow[] = [];
    for (const { table, code: codeColumn, label: labelColumn } of CODE_COLUMNS) {
      const code = this.number(codeColumn);
      const label = this.text(labelColumn, 200);
      if (code !== null && label !== null) codes.push({ code_table: table, code, label });
    }
    return codes;
  }

  /** The trimmed value, or null for a placeholder or a column the file does not have. */
  private raw(column: Column): string | null {
    const value = this.valueOf(column)?.trim();
    return value === undefined || PLACEHOLDERS.has(value) ? null : value;
  }

  /**
   * Notes what is wrong, naming the value unless it is personal data (reports and logs carry the reasons);
   * the value returned is never used, since a line with a problem is rejected.
   */
  private problem(column: Column, value: string, rule: string): never {
    const shown = PERSONAL_COLUMNS.has(column) ? `(${value.length} characters, not shown)` : `"${value.length > 60 ? `${value.slice(0, 60)}...` : value}"`;
    this.problems.push(`${column} ${shown} ${rule}`);
    return null as never;
  }

  private absent(column: Column): never {
    this.problems.push(`${column} is missing ("${this.valueOf(column)?.trim() ?? ''}")`);
    return null as never;
  }

  private text(column: Column, maxLength: number): string | null {
    const value = this.raw(column);
    if (value !== null && value.length > maxLength) return this.problem(column, value, `is longer than ${maxLength} characters`);
    return value;
  }

  private requiredText(column: Column, maxLength: number): string {
    return this.raw(column) === null ? this.absent(column) : (this.text(column, maxLength) as string);
  }

  private matching(column: Column, pattern: RegExp, form: string): string | null {
    const value = this.raw(column);
    if (value !== null && !pattern.test(value)) return this.problem(column, value, `is not ${form}`);
    return value;
  }

  private requiredMatching(column: Column, pattern: RegExp, form: string): string {
    return this.raw(column) === null ? this.absent(column) : (this.matching(column, pattern, form) as string);
  }

  /** A code or number; a negative one is the court's way of saying absent. */
  private number(column: Column): number | null {
    const value = this.raw(column);
    if (value === null) return null;
    if (!INTEGER.test(value) || value.length > 10) return this.problem(column, value, 'is not a whole number');
    const number = Number(value);
    return number < 0 ? null : number;
  }

  private requiredNumber(column: Column): number {
    const value = this.raw(column);
    if (value === null || /^-\d+$/.test(value)) return this.absent(column);
    return this.number(column) as number;
  }

  /** Digits kept as text (CPF, voter id), zero-padded to `length`: the court's files may drop leading zeros. */
  private digits(column: Column, length: number, maxLength = length): string | null {
    const value = this.raw(column);
    if (value === null || /^-\d+$/.test(value)) return null;
    if (!/^\d+$/.test(value) || value.length > maxLength) return this.problem(column, value, `is not a number of up to ${maxLength} digits`);
    return value.padStart(length, '0');
  }

  private flag(column: Column): boolean | null {
    const value = this.raw(column);
    if (value === null) return null;
    if (value === 'S') return true;
    if (value === 'N') return false;
    return this.problem(column, value, 'is not S or N');
  }

  private requiredDate(column: Column): string {
    const value = this.raw(column);
    if (value === null) return this.absent(column);
    return isoDate(value) ?? this.problem(column, value, 'is not a date DD/MM/YYYY');
  }

  /** The birth date, or null when absent or impossible (see the module's decisions). */
  private birthDate(): string | null {
    const value = this.raw('DT_NASCIMENTO');
    return value === null ? null : isoDate(value);
  }
}

/** DD/MM/YYYY as YYYY-MM-DD, or null when it is not a date of the calendar (before 1800 counts as not). */
export function isoDate(value: string): string | null {
  const match = DATE.exec(value);
  if (!match) return null;
  const [, day, month, year] = match as unknown as [string, string, string, string];
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  const valid = Number(year) >= 1800 && date.getUTCFullYear() === Number(year) && date.getUTCMonth() === Number(month) - 1 && date.getUTCDate() === Number(day);
  return valid ? `${year}-${month}-${day}` : null;
}
