/**
 * Which failures are outages: the database (or the job queue, which lives in it) could not be reached,
 * or would not serve the statement now, so the same request may well work in a moment. These answer
 * 503 with Retry-After (http/errors.ts, translateOutage), never 401 or 500; every other database error
 * (a constraint, a missing column: a bug) stays a 500.
 *
 * Recognised, on the error or on what it wraps (Sequelize's `parent`/`original`, an Error's `cause`):
 * - Sequelize's ConnectionError family (refused, timed out, access denied, no connection in the pool in time);
 * - PostgreSQL's SQLSTATE classes 08 (connection exception), 53 (insufficient resources) and 57
 *   (operator intervention: a cancelled statement, the statement timeout, the server shutting down or
 *   terminating the connection), from node-postgres, postgres.js (the Reader) or pg-boss;
 * - the drivers' own words for a lost connection, which carry no SQLSTATE, and a network error
 *   (refused, reset, unreachable) under Sequelize's error (never an HTTP client's: a provider down is
 *   not the database);
 * - SQLite's busy, locked and interrupted statements, and a transaction that waited too long for its turn;
 * - a statement refused because its request's deadline passed (deadlines.ts).
 */
import { ConnectionError, TimeoutError } from 'sequelize';

/** PostgreSQL's classes 08, 53 and 57 (five characters: two of class, three of condition). */
const OUTAGE_SQLSTATE = /^(08|53|57)[0-9A-Z]{3}$/;

/** SQLite's codes (node-sqlite3's `code`) and postgres.js's own for a lost connection. */
const OUTAGE_CODES = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_INTERRUPT', 'CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECTION_ENDED', 'CONNECT_TIMEOUT']);

/**
 * The network's codes (`errno` names): an outage only under a database driver's error (Sequelize's
 * `parent`), since an HTTP client's (a provider, a webhook) says nothing of the database.
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** node-postgres's messages for a connection lost under a query, which have no code. */
const LOST_CONNECTION = /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed)/;

/** Errors that name themselves an outage (the deadlines' refusal, a SQLite transaction's wait). */
const OUTAGE_NAMES = new Set(['DeadlineExceededError', 'DatabaseBusyError']);

/** Whether `error` (or what it wraps) says the database or the queue is out of reach for now. */
export function isOutage(error: unknown): boolean {
  let current: unknown = error;
  let underDriver = false;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    if (current instanceof ConnectionError || current instanceof TimeoutError || OUTAGE_NAMES.has(current.name)) return true;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (OUTAGE_SQLSTATE.test(code) || OUTAGE_CODES.has(code) || (underDriver && NETWORK_CODES.has(code)))) return true;
    if (LOST_CONNECTION.test(current.message)) return true;
    const wrapped = current as { parent?: unknown; original?: unknown; cause?: unknown };
    underDriver ||= wrapped.parent !== undefined || wrapped.original !== undefined;
    current = wrapped.parent ?? wrapped.original ?? wrapped.cause;
  }
  return false;
}

/**
 * An error of the job queue's own connections (pg-boss keeps a pool beside Sequelize's), wrapped as
 * Sequelize wraps its driver's, so that a refused or reset connection there is an outage too.
 */
export function jobQueueError(error: unknown): Error {
  return Object.assign(new Error(`The job queue failed: ${error instanceof Error ? error.message : String(error)}`), { name: 'JobQueueError', parent: error });
}

/** Whether `error` came from a database driver or Sequelize at all (an outage or not): a lookup that could not be made. */
export function isDatabaseError(error: unknown): boolean {
  if (isOutage(error)) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return (
    error.name.startsWith('Sequelize') ||
    error.name === 'PostgresError' ||
    (typeof code === 'string' && (code.startsWith('SQLITE_') || /^[0-9A-Z]{5}$/.test(code)))
  );
}
