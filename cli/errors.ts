/**
 * Exit codes and error reports. A script can tell what failed from the code alone:
 *
 *   0  success
 *   1  anything else (a bad configuration file, a failed import, a bug)
 *   2  usage: unknown command or option, missing or invalid argument (commander's errors and ours, and the
 *      server's 400 for a parameter that is missing: some the contract leaves optional are required)
 *   3  the API answered with an error (PalanqueApiError): its status, code, message, details and request id go to stderr
 *   4  the API could not be reached (PalanqueNetworkError): refused, reset, timed out, after the retries
 *   5  an import was done but rejected lines (contacts import without --allow-rejects): the rest went in
 * 130  stopped by Ctrl-C (128 + SIGINT), after saying what was done
 *
 * With `--json` (or `--envelope`) the report is one line of JSON on stderr instead, the last one, for a
 * script to read with `jq` as it reads stdout: `{"error":{"code","message","details"},"status",
 * "request_id","exit_code"}` (status and request id when the API answered); the exit code is the same.
 */
import { CommanderError } from 'commander';
import { PalanqueApiError, PalanqueNetworkError } from '../sdk/index.js';

export const EXIT = { ok: 0, failure: 1, usage: 2, api: 3, network: 4, rejected: 5, interrupted: 130 } as const;

export const EXIT_CODES_HELP = `Exit codes:
  0  success
  1  any other failure (configuration, database task, unexpected error)
  2  usage error: unknown command or option, missing or invalid argument (also when the server says one is missing)
  3  API error: the server answered with an error (status, code, message and request id on stderr)
  4  network error: the server could not be reached
  5  some lines were rejected (contacts import, unless --allow-rejects): the other lines were imported
  130  stopped by Ctrl-C (a bulk SMS send, elections import --file): what was done is printed first`;

/** A mistake on the command line that commander cannot see (a body that is not JSON, a missing password). */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A failure already explained to the user, with the exit code to end with. */
export class ReportedFailure extends Error {
  override name = 'ReportedFailure';
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failure,
  ) {
    super(message);
  }
}

/** The `error.code` of a JSON report that is not the API's, by exit code. */
const CODE_OF_EXIT: Record<number, string> = {
  [EXIT.failure]: 'failure',
  [EXIT.usage]: 'usage_error',
  [EXIT.api]: 'api_error',
  [EXIT.network]: 'network_error',
  [EXIT.rejected]: 'rejected_lines',
  [EXIT.interrupted]: 'interrupted',
};

/** Whether a command line asks for JSON (`--json` or `--envelope` before any `--`): its errors are then JSON too. */
export function wantsJson(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--json' || arg === '--envelope');
}

/** Writes what went wrong to stderr (as one line of JSON with `json`) and returns the exit code. */
export function reportError(error: unknown, stderr: NodeJS.WritableStream, { json = false }: { json?: boolean } = {}): number {
  if (json) return reportJson(error, stderr);
  if (error instanceof CommanderError) {
    // commander has already written its message (or the help); only the code is ours to choose.
    return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (error instanceof PalanqueApiError) {
    const lines = [`Error ${error.status} ${error.code}: ${error.message}`];
    for (const detail of error.details) {
      const where = [detail.location, detail.field].filter(Boolean).join(' ');
      const value = detail.value !== undefined ? ` (value: ${JSON.stringify(detail.value)})` : '';
      lines.push(`  - ${where ? `${where}: ` : ''}${detail.message}${detail.rule ? ` [${detail.rule}]` : ''}${value}`);
    }
    if (error.requestId) lines.push(`request id: ${error.requestId}`);
    if (isMissingArgument(error)) {
      lines.push('(add --help for usage and examples)');
      stderr.write(lines.join('\n') + '\n');
      return EXIT.usage;
    }
    stderr.write(lines.join('\n') + '\n');
    return EXIT.api;
  }
  if (error instanceof PalanqueNetworkError) {
    const cause = describeCause(error.cause);
    stderr.write(
      `Network error: ${error.message}${cause ? ` (${cause})` : ''}\n` +
        (error.requestId ? `request id: ${error.requestId}\n` : '') +
        'Is the server running at that address? Choose another with --base-url, --profile or --mock.\n',
    );
    return EXIT.network;
  }
  if (error instanceof UsageError) {
    stderr.write(`error: ${error.message}\n(add --help for usage and examples)\n`);
    return EXIT.usage;
  }
  if (error instanceof ReportedFailure) {
    stderr.write(`${error.message}\n`);
    return error.exitCode;
  }
  stderr.write(`error: ${error instanceof Error ? (process.env.PALANQUE_DEBUG ? error.stack : error.message) : String(error)}\n`);
  return EXIT.failure;
}

/** `reportError` under `--json`: one JSON object on one line. */
function reportJson(error: unknown, stderr: NodeJS.WritableStream): number {
  let exitCode: number;
  let report: Record<string, unknown>;
  if (error instanceof CommanderError) {
    if (error.exitCode === 0) return EXIT.ok; // --help, --version: nothing went wrong
    exitCode = EXIT.usage;
    // A group named without its command: commander's message is only a marker of the help it printed.
    const message = error.code === 'commander.help' ? 'a command is needed here (add --help to list them)' : error.message.replace(/^error: /, '');
    report = { error: { code: 'usage_error', message, details: [] } };
  } else if (error instanceof PalanqueApiError) {
    exitCode = isMissingArgument(error) ? EXIT.usage : EXIT.api;
    report = { error: { code: error.code, message: error.message, details: error.details }, status: error.status, ...(error.requestId ? { request_id: error.requestId } : {}) };
  } else if (error instanceof PalanqueNetworkError) {
    exitCode = EXIT.network;
    const cause = describeCause(error.cause);
    report = { error: { code: 'network_error', message: `${error.message}${cause ? ` (${cause})` : ''}`, details: [] }, ...(error.requestId ? { request_id: error.requestId } : {}) };
  } else if (error instanceof UsageError || error instanceof ReportedFailure) {
    exitCode = error instanceof UsageError ? EXIT.usage : error.exitCode;
    report = { error: { code: CODE_OF_EXIT[exitCode] ?? 'failure', message: error.message, details: [] } };
  } else {
    exitCode = EXIT.failure;
    report = { error: { code: 'failure', message: error instanceof Error ? error.message : String(error), details: [] } };
  }
  stderr.write(`${JSON.stringify({ ...report, exit_code: exitCode })}\n`);
  return exitCode;
}

/** The server's 400 for a parameter the command line left out: the user's mistake, like commander's own. */
function isMissingArgument(error: PalanqueApiError): boolean {
  return (
    error.status === 400 &&
    error.details.length > 0 &&
    error.details.every((detail) => detail.rule === 'required' && ['query', 'path', 'header'].includes(detail.location ?? ''))
  );
}

/** The reason under fetch's "fetch failed": `connect ECONNREFUSED 127.0.0.1:9`. */
function describeCause(cause: unknown): string {
  let current = cause as { message?: string; cause?: unknown; code?: string } | undefined;
  let reason = '';
  for (let depth = 0; current && depth < 5; depth += 1) {
    if (current.message && current.message !== 'fetch failed') reason = current.message;
    current = current.cause as typeof current;
  }
  return reason;
}
