/**
 * The import of an entity's contacts from a CSV file (importContacts), read from the request as it
 * arrives and written in batches.
 *
 * What holds:
 * - A header that the import cannot read (none, no number column, a column twice, an unknown column) is
 *   refused (ContactImportRefused, 422) before any line is written. Columns are named in Portuguese or in
 *   English, in any order, case ignored. Cells are separated by the header line's commas or semicolons,
 *   whichever it has more of (spreadsheets in Brazil save with semicolons, and then leave commas in texts
 *   unquoted, so the two are never both separators).
 * - Every line after the header (blank lines aside) counts once in the report: inserted, updated,
 *   unchanged or rejected. A rejection gives the line and a reason that names the column, never its
 *   value (numbers and names are personal data). Nothing is dropped in silence. A number that is not a
 *   Brazilian mobile (a landline, toll-free or foreign number: @palanque/rules/phones) is such a rejection
 *   (`telefone: not a Brazilian mobile number (not_mobile)`): an SMS cannot reach it.
 *   So is a line whose consent is refused (packages/rules/src/consent-sources.ts: a bought or third-party list, no
 *   kind, no evidence where the kind needs it; the reason names the column and the rule), whether the
 *   line adds or updates a contact.
 * - Idempotent by (entity, number): a line updates the entity's contact with its number, never adds a
 *   second one, and a line that changes nothing counts `unchanged`; importing the same file again
 *   changes nothing. A line's name and consent replace the stored ones, its tags are added (an import
 *   never removes a tag), and an empty cell keeps what is stored.
 * - Memory stays bounded by the batch: the body is decompressed (its Content-Encoding), decoded and
 *   parsed as a stream, BATCH_SIZE lines at a time are written in one transaction, and only the numbers
 *   already seen are kept (to reject a line repeating one). The body is cut after MAX_IMPORT_BYTES
 *   decompressed (ContactImportTooLarge, 413): the lines before the one the cut falls in are written,
 *   and the error names the last of them; a second import of the rest completes the file.
 */
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { parse, type CsvError } from 'csv-parse';
import iconv from 'iconv-lite';
import { Op, UniqueConstraintError, type Transaction } from 'sequelize';
import type { components } from '../../sdk/schema.js';
import { asIsoTimestamp } from '../db/reader.js';
import type { ErrorDetail } from '../http/errors.js';
import { CONSENT_KINDS, judgeConsent, MAX_EVIDENCE_LENGTH } from '@palanque/rules/consent-sources';
import { MAX_TAG_LENGTH, MAX_TAGS, normalisedTag, type ConsentFields } from './contacts.js';
import type { ContactRow, SmsModels } from './models.js';
import { isBrazilianMobile } from '@palanque/rules/phones';
import { normalisedPhone } from '@palanque/rules/recipients';

export type ContactImportReport = components['schemas']['ContactImportReport'];

/** The largest body read (the contract says 32 MiB). */
export const MAX_IMPORT_BYTES = 32 * 1024 * 1024;
/** Lines written per transaction. */
export const BATCH_SIZE = 500;
/** Rejections listed in the report (all are counted). */
const LISTED_REJECTIONS = 100;
/**
 * How far the header line is looked for before the delimiter is chosen. The parser itself has no line
 * limit: csv-parse's `max_record_size` skips the long line and then silently drops the rest of the file,
 * and MAX_IMPORT_BYTES bounds what a runaway quoted cell can hold anyway.
 */
const MAX_HEADER_CHARACTERS = 64 * 1024;

/** The columns, by what they hold; each is named in Portuguese or in English. */
const COLUMNS = {
  phone: ['telefone', 'phone'],
  name: ['nome', 'name'],
  consentSource: ['consentimento_origem', 'consent_source'],
  consentGivenAt: ['consentimento_data', 'consent_given_at'],
  consentText: ['consentimento_texto', 'consent_text'],
  // Issue 42: the structured source (packages/rules/src/consent-sources.ts CONSENT_KINDS) and the record that shows it.
  consentKind: ['consentimento_tipo', 'consent_kind'],
  consentEvidence: ['consentimento_prova', 'consent_evidence'],
  tags: ['tags'],
} as const;
type Column = keyof typeof COLUMNS;
const COLUMN_OF = new Map<string, Column>(Object.entries(COLUMNS).flatMap(([column, names]) => names.map((name) => [name, column as Column] as const)));
const KNOWN_COLUMNS = `${Object.values(COLUMNS).map((names) => names[0]).join(', ')} (or ${Object.values(COLUMNS).flatMap((names) => names.slice(1)).join(', ')})`;

/** The bounds of the contract's Contact and ContactConsent. */
const MAX_LENGTH: Partial<Record<Column, number>> = { phone: 40, name: 200, consentSource: 200, consentText: 2000, consentKind: 24, consentEvidence: MAX_EVIDENCE_LENGTH };

/** The charsets a file may come in, as iconv-lite names them. */
const CHARSETS: Readonly<Record<string, string>> = { 'utf-8': 'utf8', utf8: 'utf8', 'iso-8859-1': 'latin1', latin1: 'latin1', 'windows-1252': 'win1252', cp1252: 'win1252' };

/** The header refused as a whole: nothing was written. */
export class ContactImportRefused extends Error {
  constructor(readonly problems: ErrorDetail[]) {
    super("The file's header is not one the import reads: nothing was imported.");
  }
}

/** The body went past MAX_IMPORT_BYTES; `lastLine` is the last line read (imported or rejected) before the cut. */
export class ContactImportTooLarge extends Error {
  constructor(readonly lastLine: number) {
    super(`The file is larger than ${MAX_IMPORT_BYTES / 1024 / 1024} MiB`);
  }
}

/** The body did not decompress as its Content-Encoding says. */
export class ContactImportUndecodable extends Error {
  constructor(
    readonly encoding: ContentEncoding,
    detail: string,
  ) {
    super(`The request body could not be decoded as ${encoding}: ${detail}`);
  }
}

/** The Content-Encodings the import takes, as the JSON bodies' parser does. */
const INFLATERS = { gzip: () => createGunzip(), deflate: () => createInflate(), br: () => createBrotliDecompress(), identity: undefined } as const;
export type ContentEncoding = keyof typeof INFLATERS;

/** A Content-Encoding header as one the import takes; undefined for one it does not. */
export function importContentEncodingOf(header: string | undefined): ContentEncoding | undefined {
  const encoding = (header ?? 'identity').trim().toLowerCase();
  return encoding in INFLATERS ? (encoding as ContentEncoding) : undefined;
}

/** The iconv-lite name of a Content-Type's charset (UTF-8 when it names none); undefined for one not taken. */
export function importCharsetOf(contentType: string | undefined): string | undefined {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  return charset === undefined ? 'utf8' : CHARSETS[charset];
}

/** A line read: the contact it describes, or why it is rejected. */
type Line = { line: number; contact: ImportedContact } | { line: number; reason: string };

interface ImportedContact {
  phone: string;
  name: string | null;
  consent: ConsentFields | null;
  tags: string[];
}

export interface ImportSettings {
  entityId: number;
  createdBy: number;
  /** The iconv-lite charset of the body (importCharsetOf). */
  charset: string;
  /** How the body is compressed (importContentEncodingOf); identity when unset. */
  contentEncoding?: ContentEncoding;
  maxBytes?: number;
  now?: Date;
}

/** Reads the CSV `body` and writes its contacts into entity `entityId`; the report of what each line did. */
export async function importContacts(models: SmsModels, body: Readable, settings: ImportSettings): Promise<ContactImportReport> {
  const report: ContactImportReport = { entity_id: settings.entityId, rows: 0, inserted: 0, updated: 0, unchanged: 0, rejected: 0, rejections: [] };
  const reject = (line: number, reason: string) => {
    report.rejected += 1;
    if (report.rejections.length < LISTED_REJECTIONS) report.rejections.push({ line, reason });
  };
  const writer = new BatchWriter(models, settings, report);
  /** The line of each number met so far: a later line with it is a repeat. */
  const seen = new Map<string, number>();
  let batch: Array<{ line: number; contact: ImportedContact }> = [];
  /** The last line read (the header is line 1): the lines up to it are imported or rejected when the body is cut. */
  let lastRead = 1;
  try {
    for await (const read of linesOf(body, settings)) {
      report.rows += 1;
      lastRead = read.line;
      if ('reason' in read) {
        reject(read.line, read.reason);
        continue;
      }
      const first = seen.get(read.contact.phone);
      if (first !== undefined) {
        reject(read.line, `telefone: repeats the number of line ${first}`);
        continue;
      }
      seen.set(read.contact.phone, read.line);
      batch.push(read);
      if (batch.length >= BATCH_SIZE) {
        await writer.write(batch, reject);
        batch = [];
      }
    }
  } catch (error) {
    if (error instanceof ContactImportTooLarge) {
      await writer.write(batch, reject);
      throw new ContactImportTooLarge(lastRead);
    }
    throw error;
  }
  await writer.write(batch, reject);
  return report;
}

// --- Reading ----------------------------------------------------------------------------------------

/** The lines of the file after its header, each a contact or a rejection, in order. */
async function* linesOf(body: Readable, settings: ImportSettings): AsyncGenerator<Line> {
  const { text, wasCut } = decoded(body, settings.charset, settings.maxBytes ?? MAX_IMPORT_BYTES, settings.contentEncoding ?? 'identity');
  const { head, rest } = await headLine(text);
  const delimiter = delimiterOf(head);
  const skipped: Line[] = [];
  const parser = parse({
    delimiter,
    bom: true,
    info: true,
    skip_empty_lines: true,
    // A line of empty cells (`;;;;`, as spreadsheets leave below a table) is a blank line.
    skip_records_with_empty_values: true,
    relax_column_count: true,
    // A line the CSV grammar cannot read (a stray quote) is that line's rejection; the reading goes on.
    skip_records_with_error: true,
    on_skip: (error) => {
      const line = (error as (CsvError & { lines?: number }) | undefined)?.lines ?? 0;
      if (skipped.at(-1)?.line !== line) skipped.push({ line, reason: unreadableReason(error) });
      return undefined;
    },
  });
  const feeding = pipeline(Readable.from(rest()), parser).catch((error: unknown) => parser.destroy(error as Error));
  let columns: Map<Column, number> | undefined;
  let width = 0;
  // Each line is held until the next one is read: the last one of a cut body may be cut short.
  let held: Line | undefined;
  for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
    if (!columns) {
      columns = headerColumns(record);
      width = record.length;
      continue;
    }
    if (held) yield held;
    // The parser reads ahead: a line it skipped may come before this one.
    while (skipped.length > 0 && skipped[0]!.line < info.lines) yield skipped.shift()!;
    held = lineOf(record, info.lines, columns, width, settings.now ?? new Date());
  }
  await feeding;
  if (!columns) throw new ContactImportRefused([{ location: 'body', field: 'telefone', rule: 'header', message: 'the file must start with a header row naming its columns, telefone (or phone) among them' }]);
  if (wasCut()) throw new ContactImportTooLarge(0);
  if (held) yield held;
  yield* skipped;
}

/**
 * The body decompressed (its Content-Encoding) and decoded to text, ended after `maxBytes` decompressed
 * bytes (`wasCut` then says so), so that a small compressed body cannot unfold without bound. The text up
 * to the cut is read to its end, so the lines before it are imported; the line the cut falls in is not.
 */
function decoded(body: Readable, charset: string, maxBytes: number, encoding: ContentEncoding): { text: AsyncIterable<string>; wasCut: () => boolean } {
  let bytes = 0;
  let cut = false;
  const inflater = INFLATERS[encoding]?.();
  const source = inflater ? body.pipe(inflater) : body;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      if (cut) return callback();
      const room = maxBytes - bytes;
      bytes += chunk.length;
      if (chunk.length <= room) return callback(null, chunk);
      cut = true;
      callback(null, chunk.subarray(0, room));
      // Nothing more is read; what was let through goes on to the end.
      source.unpipe(counter);
      counter.end();
    },
  });
  const decoder = iconv.decodeStream(charset) as unknown as Transform;
  source.pipe(counter).pipe(decoder);
  // Errors do not travel along pipe(): the decoder's reader must see bad compressed data and a dropped connection.
  inflater?.on('error', (error) => decoder.destroy(new ContactImportUndecodable(encoding, error.message)));
  body.on('error', (error) => decoder.destroy(error));
  body.on('aborted', () => decoder.destroy(new Error('the client closed the connection while sending the file')));
  return { text: decoder as unknown as AsyncIterable<string>, wasCut: () => cut };
}

/** The header line (read ahead until its end, at most MAX_HEADER_CHARACTERS), and the whole text again, from its start. */
async function headLine(text: AsyncIterable<string>): Promise<{ head: string; rest: () => AsyncGenerator<string> }> {
  const iterator = text[Symbol.asyncIterator]();
  let buffered = '';
  let done = false;
  while (!/[\r\n]/.test(buffered.replace(/^[\r\n]+/, '')) && buffered.length < MAX_HEADER_CHARACTERS) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    buffered += String(next.value);
  }
  const head = buffered.replace(/^[\r\n]+/, '').split(/\r?\n|\r/)[0] ?? '';
  return {
    head,
    rest: async function* () {
      if (buffered !== '') yield buffered;
      if (done) return;
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        yield String(next.value);
      }
    },
  };
}

/** `;` when the header line has more semicolons than commas outside quotes, else `,`. */
function delimiterOf(header: string): string {
  const unquoted = header.replace(/"[^"]*"/g, '');
  const count = (character: string) => unquoted.split(character).length - 1;
  return count(';') > count(',') ? ';' : ',';
}

/** The column of each cell of the header; refuses a header the import cannot read. */
function headerColumns(header: string[]): Map<Column, number> {
  const problems: ErrorDetail[] = [];
  const columns = new Map<Column, number>();
  header.forEach((cell, index) => {
    const name = cell.replace(/^\uFEFF/, '').trim().toLowerCase();
    const column = COLUMN_OF.get(name);
    if (!column) {
      problems.push({ location: 'body', field: name, rule: 'known_column', message: `is not a column the import reads: ${KNOWN_COLUMNS}`, value: cell.slice(0, 60) });
    } else if (columns.has(column)) {
      problems.push({ location: 'body', field: name, rule: 'unique_column', message: `names the same column as cell ${columns.get(column)! + 1} of the header` });
    } else {
      columns.set(column, index);
    }
  });
  if (!columns.has('phone')) problems.unshift({ location: 'body', field: 'telefone', rule: 'required_column', message: "the header must name the number's column: telefone (or phone)" });
  if (problems.length > 0) throw new ContactImportRefused(problems);
  return columns;
}

/** Why the CSV grammar could not read a line, without quoting it (the parser's messages do). */
function unreadableReason(error: CsvError | undefined): string {
  switch (error?.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return 'the line is not valid CSV: a quoted cell is never closed';
    default:
      return 'the line is not valid CSV: a quote is misplaced (a quote inside a cell is written twice, and the cell quoted)';
  }
}

/** Portuguese names of the columns, for the reasons. */
const COLUMN_NAME: Record<Column, string> = {
  phone: 'telefone',
  name: 'nome',
  consentSource: 'consentimento_origem',
  consentGivenAt: 'consentimento_data',
  consentText: 'consentimento_texto',
  consentKind: 'consentimento_tipo',
  consentEvidence: 'consentimento_prova',
  tags: 'tags',
};

/** One line as a contact, or the reason it is rejected (every problem of the line, by column). */
function lineOf(record: string[], line: number, columns: Map<Column, number>, width: number, now: Date): Line {
  if (record.length > width) return { line, reason: `the line has ${record.length} cells; the header names ${width} columns` };
  const problems: string[] = [];
  const cell = (column: Column): string | null => {
    const at = columns.get(column);
    const value = at === undefined ? '' : (record[at] ?? '').trim();
    if (value === '') return null;
    const max = MAX_LENGTH[column];
    if (value.includes('\u0000')) problems.push(`${COLUMN_NAME[column]}: contains the NUL character`);
    else if (max !== undefined && [...value].length > max) problems.push(`${COLUMN_NAME[column]}: longer than ${max} characters`);
    else return value;
    return null;
  };
  const written = cell('phone');
  const phone = written === null ? undefined : normalisedPhone(written);
  if (written === null && !problems.some((problem) => problem.startsWith('telefone'))) problems.push('telefone: missing');
  else if (written !== null && phone === undefined) problems.push('telefone: not a valid phone number');
  else if (phone !== undefined && !isBrazilianMobile(phone)) problems.push('telefone: not a Brazilian mobile number (not_mobile): landlines, toll-free and foreign numbers cannot receive SMS');
  const name = cell('name');
  const consent = consentOf(cell('consentSource'), cell('consentGivenAt'), cell('consentText'), cell('consentKind'), cell('consentEvidence'), now, problems);
  const tags = tagsOf(cell('tags'), problems);
  if (problems.length > 0 || phone === undefined) return { line, reason: problems.join('; ') };
  return { line, contact: { phone, name, consent, tags } };
}

/** Where each consent problem's field is read from, for a line's reason. */
const CONSENT_COLUMN = { kind: 'consentimento_tipo', source: 'consentimento_origem', evidence: 'consentimento_prova' } as const;

function consentOf(source: string | null, givenAt: string | null, text: string | null, kind: string | null, evidence: string | null, now: Date, problems: string[]): ConsentFields | null {
  if (source === null && givenAt === null && text === null && kind === null && evidence === null) return null;
  if (source === null) problems.push('consentimento_origem: missing, and a consent needs it (with its date)');
  if (givenAt === null) problems.push('consentimento_data: missing, and a consent needs it (with its origin)');
  const known = kind === null ? null : (CONSENT_KINDS as readonly string[]).includes(kind.toLowerCase()) ? kind.toLowerCase() : undefined;
  if (known === undefined) problems.push(`consentimento_tipo: not one of ${CONSENT_KINDS.join(', ')}`);
  // A bought or third-party list is refused line by line (Lei 9.504 art. 57-B III, 57-E §1º): rule consent_source_not_allowed.
  const judged = source === null ? undefined : judgeConsent({ kind: known, source, evidence });
  for (const problem of judged?.problems ?? []) {
    if (problem.rule === 'consent_kind_required' && known === undefined) continue;
    problems.push(`${CONSENT_COLUMN[problem.field]}: ${problem.rule}: ${problem.message}`);
  }
  if (givenAt === null || source === null || !judged?.kind) return null;
  const date = consentDateOf(givenAt);
  if (!date) problems.push('consentimento_data: not a date (DD/MM/AAAA, AAAA-MM-DD or an ISO 8601 date and time)');
  else if (date.getTime() > now.getTime()) problems.push('consentimento_data: in the future');
  return date ? { kind: judged.kind, source, givenAt: date, text, evidence } : null;
}

/** Brasília's offset from UTC (no daylight saving time since 2019): a date without a time is its midnight. */
const BRASILIA = '-03:00';
const DAY_FIRST = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** A consent date as people write it; undefined for one that is not a real date (31/02/2026). */
export function consentDateOf(text: string): Date | undefined {
  const dayFirst = DAY_FIRST.exec(text);
  if (dayFirst) return calendarDate(Number(dayFirst[3]), Number(dayFirst[2]), Number(dayFirst[1]), `T00:00:00${BRASILIA}`);
  const isoDate = ISO_DATE.exec(text);
  if (isoDate) return calendarDate(Number(isoDate[1]), Number(isoDate[2]), Number(isoDate[3]), `T00:00:00${BRASILIA}`);
  const isoDateTime = ISO_DATE_TIME.exec(text);
  if (!isoDateTime) return undefined;
  const [, year, month, day, hours, minutes, seconds = '00', zone] = isoDateTime;
  if (Number(hours) > 23 || Number(minutes) > 59 || Number(seconds) > 59) return undefined;
  const offset = zone === undefined ? BRASILIA : zone.toUpperCase() === 'Z' ? 'Z' : zone.replace(/^([+-]\d{2})(\d{2})$/, '$1:$2');
  return calendarDate(Number(year), Number(month), Number(day), `T${hours}:${minutes}:${seconds}${offset}`);
}

function calendarDate(year: number, month: number, day: number, time: string): Date | undefined {
  // Date.UTC rolls 31/02 over into March: a date is real when it reads back the same.
  const check = new Date(Date.UTC(year, month - 1, day));
  if (year < 1900 || check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return undefined;
  const date = new Date(`${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}${time}`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** The tags of a cell, separated by `|` (or commas or semicolons inside a quoted cell), normalised, once each. */
function tagsOf(cell: string | null, problems: string[]): string[] {
  if (cell === null) return [];
  const tags = [...new Set(cell.split(/[|,;]/).map(normalisedTag).filter((tag) => tag !== ''))];
  if (tags.some((tag) => [...tag].length > MAX_TAG_LENGTH)) problems.push(`tags: a tag is longer than ${MAX_TAG_LENGTH} characters`);
  else if (tags.length > MAX_TAGS) problems.push(`tags: more than ${MAX_TAGS} tags`);
  return tags;
}

// --- Writing ----------------------------------------------------------------------------------------

/** Writes batches of lines into the entity's contacts, counting what each line did in the report. */
class BatchWriter {
  constructor(
    private readonly models: SmsModels,
    private readonly settings: ImportSettings,
    private readonly report: ContactImportReport,
  ) {}

  async write(batch: Array<{ line: number; contact: ImportedContact }>, reject: (line: number, reason: string) => void): Promise<void> {
    if (batch.length === 0) return;
    let outcome: Outcome[];
    try {
      outcome = await this.writeOnce(batch);
    } catch (error) {
      // Another import or a createContact added one of these numbers meanwhile: read again, and update it.
      if (!(error instanceof UniqueConstraintError)) throw error;
      outcome = await this.writeOnce(batch);
    }
    outcome.forEach((result, index) => {
      if (typeof result === 'object') reject(batch[index]!.line, result.reason);
      else this.report[result] += 1;
    });
  }

  /** One transaction: the contacts of the batch's numbers read, then inserted or updated. */
  private async writeOnce(batch: Array<{ line: number; contact: ImportedContact }>): Promise<Outcome[]> {
    const { Contact, ContactTag } = this.models;
    const { entityId, createdBy } = this.settings;
    return Contact.sequelize!.transaction(async (transaction) => {
      const phones = batch.map(({ contact }) => contact.phone);
      const stored = (await Contact.findAll({ where: { entity_id: entityId, phone: { [Op.in]: phones } }, raw: true, transaction })) as unknown as ContactRow[];
      const byPhone = new Map(stored.map((row) => [row.phone, row]));
      const tagsOf = await this.tagsOf(stored.map((row) => row.id), transaction);
      const now = new Date();
      const outcomes: Outcome[] = [];
      const newTags: Array<{ contact_id: number; tag: string }> = [];
      const inserts: Array<{ index: number; contact: ImportedContact }> = [];
      for (const [index, { contact }] of batch.entries()) {
        const existing = byPhone.get(contact.phone);
        if (!existing) {
          if (contact.tags.length > MAX_TAGS) outcomes.push({ reason: `tags: more than ${MAX_TAGS} tags` });
          else {
            outcomes.push('inserted');
            inserts.push({ index, contact });
          }
          continue;
        }
        const held = tagsOf.get(existing.id) ?? new Set<string>();
        const added = contact.tags.filter((tag) => !held.has(tag));
        if (held.size + added.length > MAX_TAGS) {
          outcomes.push({ reason: `tags: the contact would have more than ${MAX_TAGS} tags` });
          continue;
        }
        const changes = changesOf(existing, contact);
        if (Object.keys(changes).length === 0 && added.length === 0) {
          outcomes.push('unchanged');
          continue;
        }
        outcomes.push('updated');
        await Contact.update({ ...changes, updated_at: now }, { where: { id: existing.id }, transaction });
        newTags.push(...added.map((tag) => ({ contact_id: existing.id, tag })));
      }
      if (inserts.length > 0) {
        await Contact.bulkCreate(
          inserts.map(({ contact }) => ({
            entity_id: entityId,
            phone: contact.phone,
            name: contact.name,
            consent_source: contact.consent?.source ?? null,
            consent_given_at: contact.consent?.givenAt ?? null,
            consent_text: contact.consent?.text ?? null,
            consent_kind: contact.consent?.kind ?? null,
            consent_evidence: contact.consent?.evidence ?? null,
            created_by: createdBy,
            created_at: now,
            updated_at: now,
          })),
          { transaction },
        );
        // Read back rather than trust bulkCreate's ids, which SQLite does not return.
        const insertedPhones = inserts.filter(({ contact }) => contact.tags.length > 0).map(({ contact }) => contact.phone);
        if (insertedPhones.length > 0) {
          const created = (await Contact.findAll({ attributes: ['id', 'phone'], where: { entity_id: entityId, phone: { [Op.in]: insertedPhones } }, raw: true, transaction })) as unknown as ContactRow[];
          const idOf = new Map(created.map((row) => [row.phone, row.id]));
          for (const { contact } of inserts) for (const tag of contact.tags) if (idOf.has(contact.phone)) newTags.push({ contact_id: idOf.get(contact.phone)!, tag });
        }
      }
      if (newTags.length > 0) await ContactTag.bulkCreate(newTags, { transaction });
      return outcomes;
    });
  }

  private async tagsOf(contactIds: number[], transaction: Transaction): Promise<Map<number, Set<string>>> {
    const tags = new Map<number, Set<string>>();
    if (contactIds.length === 0) return tags;
    const rows = (await this.models.ContactTag.findAll({ where: { contact_id: { [Op.in]: contactIds } }, raw: true, transaction })) as unknown as Array<{ contact_id: number; tag: string }>;
    for (const row of rows) {
      const held = tags.get(row.contact_id) ?? new Set<string>();
      held.add(row.tag);
      tags.set(row.contact_id, held);
    }
    return tags;
  }
}

type Outcome = 'inserted' | 'updated' | 'unchanged' | { reason: string };

/** The columns a line changes on a stored contact: a name or a consent it brings that differs. */
function changesOf(stored: ContactRow, line: ImportedContact): Partial<ContactRow> {
  const changes: Partial<ContactRow> = {};
  if (line.name !== null && line.name !== stored.name) changes.name = line.name;
  if (line.consent) {
    const storedAt = stored.consent_given_at === null ? undefined : new Date(asIsoTimestamp(stored.consent_given_at)).getTime();
    if (
      line.consent.source !== stored.consent_source ||
      line.consent.givenAt.getTime() !== storedAt ||
      line.consent.text !== stored.consent_text ||
      line.consent.kind !== stored.consent_kind ||
      line.consent.evidence !== stored.consent_evidence
    ) {
      changes.consent_source = line.consent.source;
      changes.consent_given_at = line.consent.givenAt;
      changes.consent_text = line.consent.text;
      changes.consent_kind = line.consent.kind;
      changes.consent_evidence = line.consent.evidence;
    }
  }
  return changes;
}
