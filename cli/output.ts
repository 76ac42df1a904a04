/**
 * What commands print. By default tables for people (cli-table3): a list becomes one row per item, an
 * object one row per field, a page gets a footer with its position; compliance warnings are printed in
 * full under the table, never cut to a cell. With `--json` the answer's `data` is printed, one JSON
 * document, for scripts and `jq`: what a command prints is what the matching command takes back
 * (`entities get --json > c.json`, then `entities add --file c.json`), and a page of a list is its array
 * of items (`accounts list --json | jq '.[]'`; `--all` gives every page's in one array). `--envelope`
 * prints the whole answer as it was received instead (`success`, `data` with a page's `count` and
 * `links`, `message`, `request_id`).
 */
import Table from 'cli-table3';

export interface Output {
  /** Print JSON instead of tables (`--json`, or `--envelope`). */
  json: boolean;
  /** With JSON, print an API answer whole, envelope included, instead of its `data` (`--envelope`). */
  envelope: boolean;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** More columns than this do not fit a terminal; the rest are left to `--json`. */
const MAX_COLUMNS = 8;
const MAX_CELL = 60;
/** No rule between rows: compact, and one line per row for grep. */
const COMPACT = { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' };
const STYLE = { head: [], border: [] };

export function printJson(output: Output, value: unknown): void {
  output.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

/** An API answer: its `data` with `--json` (whole with `--envelope`), otherwise the payload as a table (or its message). */
export function printAnswer(output: Output, body: unknown): void {
  if (output.json) {
    if (typeof body === 'string') output.stdout.write(body.endsWith('\n') ? body : body + '\n');
    else printJson(output, jsonOf(output, body));
    return;
  }
  if (typeof body === 'string') {
    output.stdout.write(body.endsWith('\n') ? body : body + '\n');
    return;
  }
  if (isEnvelope(body)) {
    const { data, message } = body;
    if (data === null || data === undefined || (typeof data === 'object' && !Array.isArray(data) && Object.keys(data).length === 0)) {
      output.stdout.write(`${message || 'Done.'}\n`);
      return;
    }
    printValue(output, data);
    return;
  }
  printValue(output, body);
}

/**
 * What `--json` prints of an API answer: its `data`, a page's items only (a script pipes them to `jq '.[]'`;
 * the page's count and links are `--envelope`'s), or the whole answer as received with `--envelope` (an
 * answer that is no envelope, as is).
 */
export function jsonOf(output: Pick<Output, 'envelope'>, body: unknown): unknown {
  if (output.envelope) return body ?? null;
  const data = isEnvelope(body) ? (body.data ?? null) : (body ?? null);
  return isPage(data) ? data.results : data;
}

/** A payload as a table: a page, a list, an object or a single value. */
export function printValue(output: Output, value: unknown): void {
  if (isPage(value)) {
    printRows(output, value.results);
    const page = value.links && typeof value.links === 'object' ? pageNumber(value.links as Record<string, unknown>) : undefined;
    output.stdout.write(`${value.count} result(s)` + (page ? `, page ${page} of ${value.total_pages}` : `, ${value.total_pages} page(s)`) + (value.links?.next ? ' (--page or --all for more)' : '') + '\n');
    return;
  }
  if (Array.isArray(value)) {
    printRows(output, value);
    return;
  }
  if (value && typeof value === 'object') {
    const table = new Table({ chars: COMPACT, style: STYLE });
    for (const [key, field] of Object.entries(value)) table.push({ [key]: cell(briefOf(field), 100) });
    output.stdout.write(table.toString() + '\n');
    printWarnings(output, value as Record<string, unknown>);
    return;
  }
  output.stdout.write(`${String(value)}\n`);
}

/** Rows of objects (or of plain values) as one table; columns are the fields, scalar ones first. */
export function printRows(output: Output, rows: unknown[]): void {
  if (rows.length === 0) {
    output.stdout.write('(none)\n');
    return;
  }
  if (!rows.every((row) => row && typeof row === 'object' && !Array.isArray(row))) {
    for (const row of rows) output.stdout.write(`${cell(row, 200)}\n`);
    return;
  }
  const objects = rows as Array<Record<string, unknown>>;
  const keys = [...new Set(objects.flatMap((row) => Object.keys(row)))];
  const scalar = (key: string) => objects.every((row) => row[key] === null || row[key] === undefined || typeof row[key] !== 'object');
  const columns = [...keys.filter(scalar), ...keys.filter((key) => !scalar(key))].slice(0, MAX_COLUMNS);
  const table = new Table({ head: columns, chars: COMPACT, style: STYLE });
  for (const row of objects) table.push(columns.map((key) => cell(briefOf(row[key]), MAX_CELL)));
  output.stdout.write(table.toString() + '\n');
  const hidden = keys.filter((key) => !columns.includes(key));
  if (hidden.length > 0) output.stdout.write(`(${hidden.length} more field(s): ${hidden.join(', ')}; use --json to see them)\n`);
}

/** A compliance warning (SmsComplianceWarning: a campaign's `warnings`, a preview's `compliance.warnings`). */
interface Warning {
  rule: string;
  message: string;
}

function warningsIn(value: unknown): Warning[] | undefined {
  const isWarning = (item: unknown) => Boolean(item && typeof item === 'object' && typeof (item as Warning).rule === 'string' && typeof (item as Warning).message === 'string');
  return Array.isArray(value) && value.length > 0 && value.every(isWarning) ? (value as Warning[]) : undefined;
}

/** A field's warnings, itself a list of them or an object holding one (`compliance: { warnings }`). */
function fieldWarnings(field: unknown): Warning[] | undefined {
  return warningsIn(field) ?? (field && typeof field === 'object' ? warningsIn((field as Record<string, unknown>).warnings) : undefined);
}

/** A cell's value with its warnings named by rule: their messages (up to 1000 characters each) do not fit a cell. */
function briefOf(field: unknown): unknown {
  if (warningsIn(field)) return (field as Warning[]).map((warning) => warning.rule);
  if (field && typeof field === 'object' && !Array.isArray(field) && warningsIn((field as Record<string, unknown>).warnings)) {
    return { ...field, warnings: (field as { warnings: Warning[] }).warnings.map((warning) => warning.rule) };
  }
  return field;
}

/** Each warning of an object's fields in full under its table, one per line, so none is cut. */
function printWarnings(output: Output, value: Record<string, unknown>): void {
  for (const [key, field] of Object.entries(value)) {
    const warnings = fieldWarnings(field);
    if (!warnings) continue;
    const title = key === 'warnings' ? 'warnings' : `${key}.warnings`;
    output.stdout.write(`${title}:\n${warnings.map((warning) => `  - ${warning.rule}: ${warning.message.replace(/\s*\n\s*/g, ' ')}`).join('\n')}\n`);
  }
}

function cell(value: unknown, width: number): string {
  let text: string;
  if (value === null || value === undefined) text = '';
  else if (typeof value === 'string') text = value;
  else if (Array.isArray(value) && value.every((item) => item === null || typeof item !== 'object')) text = value.join(', ');
  else if (typeof value === 'object') text = JSON.stringify(value);
  else text = String(value);
  text = text.replace(/\s*\n\s*/g, ' ');
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

function isEnvelope(body: unknown): body is { success: true; data: unknown; message?: string } {
  return Boolean(body && typeof body === 'object' && (body as Record<string, unknown>).success === true && 'data' in (body as object));
}

export function isPage(value: unknown): value is { results: unknown[]; count: number; total_pages: number; links: { next?: string | null; previous?: string | null } } {
  return Boolean(value && typeof value === 'object' && Array.isArray((value as Record<string, unknown>).results) && 'total_pages' in (value as object));
}

function pageNumber(links: Record<string, unknown>): number | undefined {
  const next = typeof links.next === 'string' ? links.next : undefined;
  const previous = typeof links.previous === 'string' ? links.previous : undefined;
  const pageOf = (url: string) => Number(new URL(url).searchParams.get('page') ?? '1');
  if (next) return pageOf(next) - 1;
  if (previous) return pageOf(previous) + 1;
  return undefined;
}
