/**
 * Loads the municipality list from its source (a file path, a file: URL or an http(s) URL) into the
 * database. Used by `npm start` on an empty table, by `npm run municipios:import` and by the admin CLI.
 *
 * The source is streamed once through a sha256 hash and a CSV parser. Nothing is written unless the
 * digest matches the expected one and every row is valid; then all rows are written in one transaction
 * that inserts new codes, updates changed ones and keeps the rest, so a re-run changes nothing.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { resolve } from 'node:path';
import { Readable, Transform, pipeline } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { withLockedTransaction } from '../db/locks.js';
import { defineMunicipalityModel, normalise } from './model.js';
import { asStateCode, checkMunicipality, type Municipality } from './rules.js';

const REQUIRED_COLUMNS = ['codigo_ibge', 'nome', 'latitude', 'longitude', 'capital', 'codigo_uf'] as const;
const MAX_SOURCE_BYTES = 20 * 1024 * 1024;
const DOWNLOAD_TIMEOUT_MS = 30_000;
const MAX_REPORTED_PROBLEMS = 50;

export interface ImportOptions {
  source: string;
  /** Expected sha256 of the source, hex; undefined skips the check. */
  sha256: string | undefined;
  /** Told how the writing goes: rows written so far out of those to insert or update (the admin CLI's progress bar). */
  onProgress?: (written: number, toWrite: number) => void;
}

export interface ImportReport {
  source: string;
  sha256: string;
  rows: number;
  inserted: number;
  updated: number;
  unchanged: number;
}

export class ImportError extends Error {
  override name = 'ImportError';
  constructor(
    message: string,
    readonly problems: string[] = [],
  ) {
    super(problems.length > 0 ? `${message}\n  ${problems.join('\n  ')}` : message);
  }
}

export async function importMunicipalities(sequelize: Sequelize, options: ImportOptions): Promise<ImportReport> {
  const { rows, problems, sha256, siafi } = await readSource(options.source);
  // The digest first: a wrong file is best reported as the wrong file, not as its bad rows.
  const expected = options.sha256?.toLowerCase();
  if (expected && sha256 !== expected) {
    throw new ImportError(
      `The source's sha256 is ${sha256}, not the expected ${expected}; nothing was written. ` +
        'Set MUNICIPIOS_SHA256 to the digest of the file you trust (or empty to skip the check).',
    );
  }
  if (problems.length > 0) {
    const shown = problems.slice(0, MAX_REPORTED_PROBLEMS);
    if (problems.length > shown.length) shown.push(`... and ${problems.length - shown.length} more`);
    throw new ImportError(`${problems.length} bad row(s) in ${options.source}; nothing was written:`, shown);
  }
  if (rows.length === 0) throw new ImportError(`${options.source} holds no municipalities; nothing was written.`);
  try {
    const counts = await writeRows(sequelize, rows, options.onProgress, siafi);
    return { source: options.source, sha256, rows: rows.length, ...counts };
  } catch (error) {
    const cause = (error as { original?: Error }).original ?? (error as Error);
    throw new ImportError(`Writing the municipalities failed, so nothing was written: ${cause.message}`);
  }
}

async function readSource(source: string): Promise<{ rows: Municipality[]; problems: string[]; sha256: string; siafi: SiafiCodes }> {
  const input = await openSource(source);
  const hash = createHash('sha256');
  let bytes = 0;
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      if (bytes > MAX_SOURCE_BYTES) return callback(new ImportError(`The source is larger than ${MAX_SOURCE_BYTES} bytes.`));
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  const parser = parse({ columns: checkHeader, bom: true, trim: true, skip_empty_lines: true, info: true });
  const records = pipeline(input, hashing, parser, () => {}) as unknown as AsyncIterable<ParsedRecord>;

  const rows: Municipality[] = [];
  const problems: string[] = [];
  const siafi: SiafiCodes = new Map();
  const lineOfCode = new Map<number, number>();
  try {
    for await (const { record, info } of records) {
      const line = info.lines;
      const { row, rowProblems } = toMunicipality(record);
      if (row) {
        const firstLine = lineOfCode.get(row.codigo_ibge);
        if (firstLine !== undefined) rowProblems.push(`codigo_ibge ${row.codigo_ibge} repeats line ${firstLine}`);
        else lineOfCode.set(row.codigo_ibge, line);
      }
      const siafiId = siafiOf(record);
      if (siafiId === 'invalid') rowProblems.push(`siafi_id "${record.siafi_id}" is not a code of 1 to 4 digits`);
      if (rowProblems.length > 0) problems.push(`line ${line}: ${rowProblems.join('; ')}`);
      else if (row) {
        rows.push(row);
        if (siafiId !== undefined && siafiId !== 'invalid') siafi.set(row.codigo_ibge, siafiId);
      }
    }
  } catch (error) {
    if (error instanceof ImportError) throw error;
    throw new ImportError(`Cannot read the municipality source ${source}: ${(error as Error).message}`);
  }
  return { rows, problems, sha256: hash.digest('hex'), siafi };
}

/** Each municipality's SIAFI (TOM) code, by IBGE code, when the list has the optional `siafi_id` column (migration 0037). */
type SiafiCodes = Map<number, number>;

/** The row's `siafi_id`: undefined when absent or empty, 'invalid' when not 1 to 4 digits ("0688" is 688). */
function siafiOf(record: Record<string, string>): number | 'invalid' | undefined {
  const value = record.siafi_id;
  if (value === undefined || value === '') return undefined;
  return /^\d{1,4}$/.test(value) ? Number(value) : 'invalid';
}

interface ParsedRecord {
  record: Record<string, string>;
  info: { lines: number };
}

async function openSource(source: string): Promise<Readable> {
  if (/^https?:\/\//i.test(source)) {
    let response: Response;
    try {
      response = await fetch(source, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
    } catch (error) {
      throw new ImportError(`Cannot download ${source}: ${(error as Error).message}`);
    }
    if (!response.ok || !response.body) {
      await response.body?.cancel(); // release the connection now rather than at garbage collection
      throw new ImportError(`Cannot download ${source}: HTTP ${response.status}`);
    }
    return Readable.fromWeb(response.body as import('node:stream/web').ReadableStream);
  }
  const path = source.startsWith('file:') ? fileURLToPath(source) : resolve(source);
  const stream = createReadStream(path);
  await new Promise<void>((ready, fail) => {
    stream.once('open', () => ready());
    stream.once('error', (error) => fail(new ImportError(`Cannot open ${path}: ${error.message}`)));
  });
  return stream;
}

function checkHeader(header: string[]): string[] {
  const missing = REQUIRED_COLUMNS.filter((column) => !header.includes(column));
  if (missing.length > 0) {
    throw new ImportError(`The header lacks the column(s) ${missing.join(', ')}; found: ${header.join(', ')}`);
  }
  return header;
}

const INTEGER = /^-?\d+$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;

/** Turns one CSV record into a municipality, or says what is wrong with it. */
function toMunicipality(record: Record<string, string>): { row?: Municipality; rowProblems: string[] } {
  const rowProblems: string[] = [];
  const text = (column: (typeof REQUIRED_COLUMNS)[number]) => record[column] ?? '';
  const number = (column: (typeof REQUIRED_COLUMNS)[number], pattern: RegExp) => {
    const value = text(column);
    if (!pattern.test(value)) rowProblems.push(`${column} "${value}" is not ${pattern === INTEGER ? 'an integer' : 'a decimal number'}`);
    return Number(value);
  };
  const codigo_ibge = number('codigo_ibge', INTEGER);
  const codigo_uf = number('codigo_uf', INTEGER);
  const latitude = number('latitude', DECIMAL);
  const longitude = number('longitude', DECIMAL);
  const capital = text('capital');
  if (capital !== '0' && capital !== '1') rowProblems.push(`capital "${capital}" must be 0 or 1`);
  if (rowProblems.length > 0) return { rowProblems };

  const row: Municipality = { codigo_ibge, nome: text('nome'), latitude, longitude, capital: capital === '1', codigo_uf: asStateCode(codigo_uf) };
  for (const problem of checkMunicipality(row)) rowProblems.push(`${problem.field} ${problem.message}`);
  return { row, rowProblems };
}

async function writeRows(
  sequelize: Sequelize,
  rows: Municipality[],
  onProgress: ImportOptions['onProgress'] = () => {},
  siafi: SiafiCodes = new Map(),
): Promise<Pick<ImportReport, 'inserted' | 'updated' | 'unchanged'>> {
  const model = defineMunicipalityModel(sequelize);
  // Instances starting together on an empty PostgreSQL database each try the first import: they take
  // turns, and those that come later find the rows and change nothing.
  return withLockedTransaction(sequelize, ['palanque:municipalities-import'], async (transaction) => {
    const existing = new Map(
      ((await model.findAll({ raw: true, transaction })) as unknown as Municipality[]).map((row) => [Number(row.codigo_ibge), normalise(row)]),
    );
    const toInsert = rows.filter((row) => !existing.has(row.codigo_ibge));
    const toUpdate = rows.filter((row) => {
      const current = existing.get(row.codigo_ibge);
      return current !== undefined && !sameMunicipality(current, row);
    });
    const toWrite = toInsert.length + toUpdate.length;
    let written = 0;
    onProgress(written, toWrite);
    for (let start = 0; start < toInsert.length; start += 500) {
      const batch = toInsert.slice(start, start + 500);
      await model.bulkCreate(batch, { transaction });
      onProgress((written += batch.length), toWrite);
    }
    for (const row of toUpdate) {
      await model.update(row, { where: { codigo_ibge: row.codigo_ibge }, transaction });
      onProgress((written += 1), toWrite);
    }
    await writeSiafiCodes(sequelize, siafi, transaction);
    return { inserted: toInsert.length, updated: toUpdate.length, unchanged: rows.length - toInsert.length - toUpdate.length };
  });
}

/** Sets siafi_id where it differs from the list's, 500 rows a statement (a side column: not counted as an update). */
async function writeSiafiCodes(sequelize: Sequelize, siafi: SiafiCodes, transaction: Transaction): Promise<void> {
  if (siafi.size === 0) return;
  const stored = await sequelize.query<{ codigo_ibge: number; siafi_id: number | null }>('SELECT codigo_ibge, siafi_id FROM municipalities', { type: QueryTypes.SELECT, transaction });
  const current = new Map(stored.map((row) => [Number(row.codigo_ibge), row.siafi_id === null ? null : Number(row.siafi_id)]));
  const changed = [...siafi].filter(([code, siafiId]) => current.has(code) && current.get(code) !== siafiId);
  for (let start = 0; start < changed.length; start += 500) {
    const batch = changed.slice(start, start + 500);
    await sequelize.query(
      `UPDATE municipalities SET siafi_id = CASE codigo_ibge ${batch.map(() => 'WHEN ? THEN ?').join(' ')} END WHERE codigo_ibge IN (${batch.map(() => '?').join(', ')})`,
      { replacements: [...batch.flat(), ...batch.map(([code]) => code)], transaction },
    );
  }
}

export function sameMunicipality(a: Municipality, b: Municipality): boolean {
  return (
    a.codigo_ibge === b.codigo_ibge &&
    a.nome === b.nome &&
    a.latitude === b.latitude &&
    a.longitude === b.longitude &&
    a.capital === b.capital &&
    a.codigo_uf === b.codigo_uf
  );
}
