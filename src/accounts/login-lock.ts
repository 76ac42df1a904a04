/**
 * The login lock against password guessing. Every password check (login, and the re-check of
 * checkCredential) is counted against three subjects, each with its own rule over one sliding window:
 *
 * - **the identifier from one address**: locked after `maxFailures` failures, until enough of them
 *   leave the window. This stops guessing from one place.
 * - **the identifier alone, from any address**: never locked, only slowed. From its `maxFailures`-th
 *   failure on, each failure makes the next check of that identifier wait 1 s, then 2 s, 4 s and so on,
 *   up to `maxDelayMs`. Guessing from many addresses is slowed down, and the owner, from an address of
 *   their own, waits seconds at most: failures from elsewhere never lock them out. But whoever keeps
 *   failing re-arms the delay, so a login from a trusted device is not judged here at all: it carries a
 *   device or unlock token and is judged by that token's failures (login-devices.ts, sessions.ts).
 * - **the address, across identifiers**: locked after `addressMaxFailures` failures. This is the budget
 *   against spraying one password over many names, set high enough for an office behind one address.
 *
 * The identifier is the name as typed, trimmed and case-folded, whether or not an account has it. An
 * unknown name therefore counts exactly like a known one, so there is nothing to enumerate, and an
 * account's e-mail and username are two identifiers: failures on one never refuse the other, so the
 * lock reveals nothing about which names share an account. Identifiers are stored as SHA-256 digests,
 * never as typed.
 *
 * While any rule refuses, a check is refused (429 with Retry-After), even with the right password, and
 * the refusal is not counted. The lock therefore ends when announced, however often a client retries.
 * Failures are rows in the database, not counters in memory, so every instance sharing the database
 * shares the lock and a restart does not reset it. A check is recorded as pending before the password
 * is checked (see `reserve`), so concurrent guesses cannot all pass an open lock.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Op, type Transaction, type WhereOptions } from 'sequelize';
import { withLocks } from '../db/locks.js';
import { asBoolean, asDate, readerOf } from '../db/reader.js';
import type { AccountModels, LoginFailureRow } from './models.js';

export interface LoginLockSettings {
  /** Failures of one identifier from one address before a lock; also where the identifier's delay starts. */
  maxFailures: number;
  /** Failures from one address, across identifiers, before a lock. */
  addressMaxFailures: number;
  /** The longest wait that failures on an identifier impose on its next check. */
  maxDelayMs: number;
  windowMs: number;
}

/** One password check: the login name as the client typed it, and the client's address. */
export interface Attempt {
  identifier: string;
  address: string;
}

export interface LockState {
  /** Failures in the current window. */
  attempts: number;
  limit: number;
  locked: boolean;
  /** Seconds until checks are allowed again; 0 when not locked. */
  retryAfterSeconds: number;
  windowSeconds: number;
}

/** A reserved check (the ids of its pending rows), or the seconds to wait before trying again. */
export type Reservation = { ids: number[] } | { retryAfterSeconds: number };

/** The name a client types, as the lock counts it: trimmed and case-folded. */
export function normaliseIdentifier(name: string): string {
  return name.trim().toLowerCase();
}

const digest = (name: string) => createHash('sha256').update(normaliseIdentifier(name)).digest('hex');

/** What failures are counted against (the `subject` column). */
export const lockSubjects = {
  identifierFromAddress: (name: string, address: string) => `pair:${digest(name)}@${address}`,
  identifier: (name: string) => `name:${digest(name)}`,
  address: (address: string) => `ip:${address}`,
};

/**
 * How long a check may stay pending before it counts as a failure: a process that died while checking
 * a password never settles its reservation. Far above the time one password verification takes.
 */
const PENDING_EXPIRES_MS = 60_000;
/** How long a check waits for pending checks before it to settle, and how often it looks. */
const SETTLE_WAIT_MS = 10_000;
const SETTLE_POLL_MS = 25;

type Rule = { kind: 'lock' | 'delay'; limit: number };
type Counted = { subject: string; rule: Rule };
/** A check must not run: refused until an instant, or waiting for pending checks before it to settle. */
type Hold = { refusedUntil: number } | { waitForPending: true };

export class LoginLock {
  constructor(
    private readonly models: AccountModels,
    private readonly settings: LoginLockSettings,
  ) {}

  /** The state of an address's budget across identifiers (what GET /api/check/login_attempt/ reports). */
  async addressState(address: string, now = new Date()): Promise<LockState> {
    const { addressMaxFailures, windowMs } = this.settings;
    const rule: Rule = { kind: 'lock', limit: addressMaxFailures };
    const { settled } = await this.failuresOf(lockSubjects.address(address), now);
    const until = this.refusedUntil(rule, settled);
    const retryAfterSeconds = secondsUntil(until, now);
    return { attempts: settled.length, limit: addressMaxFailures, locked: retryAfterSeconds > 0, retryAfterSeconds, windowSeconds: Math.ceil(windowMs / 1000) };
  }

  /**
   * Reserves a password check: applies the rules to the failures so far, then records the check as
   * pending (both under one lock per subject, so two checks cannot interleave). A pending check counts as a failure for the checks after it, but a check that only pending ones
   * would refuse waits for them to settle (up to SETTLE_WAIT_MS) instead of being refused: parallel
   * guesses cannot all pass an open lock, and parallel right passwords are not refused for it. The
   * caller settles the reservation with `fail` or `release`.
   */
  async reserve(attempt: Attempt): Promise<Reservation> {
    const counted = this.countedFor(attempt);
    const keys = counted.map(({ subject }) => `login:${subject}`);
    const deadline = Date.now() + SETTLE_WAIT_MS;
    for (;;) {
      const outcome = await withLocks(this.models.LoginFailure.sequelize!, keys, (transaction) => this.reserveWithin(counted, new Date(), transaction));
      if ('ids' in outcome) return outcome;
      if ('refusedUntil' in outcome) return { retryAfterSeconds: Math.max(1, secondsUntil(outcome.refusedUntil, new Date())) };
      // Checks that run this long are stuck; whatever they turn out to be is known in a moment.
      if (Date.now() >= deadline) return { retryAfterSeconds: 1 };
      await sleep(SETTLE_POLL_MS);
    }
  }

  /** Settles a reservation as a failure: the password was wrong. */
  async fail(ids: number[]): Promise<void> {
    await this.models.LoginFailure.update({ pending: false }, { where: { id: ids } });
  }

  /** Withdraws a reservation: the check it made was not a failure. */
  async release(ids: number[]): Promise<void> {
    await this.models.LoginFailure.destroy({ where: { id: ids } });
  }

  /**
   * A successful login forgets the failures of its identifier, from its address and from anywhere, but
   * not the address's failures across identifiers: one good account must not unlock guessing at others.
   */
  async forget(attempt: Attempt, now = new Date()): Promise<void> {
    const subjects = [lockSubjects.identifierFromAddress(attempt.identifier, attempt.address), lockSubjects.identifier(attempt.identifier)];
    // Pending checks of others are theirs to settle.
    await this.models.LoginFailure.destroy({ where: { subject: subjects, ...settledOnly(now) } });
  }

  /** Deletes failures older than the window; returns how many. */
  async purgeExpired(now = new Date()): Promise<number> {
    return this.models.LoginFailure.destroy({ where: { failed_at: { [Op.lte]: new Date(now.getTime() - this.settings.windowMs) } } });
  }

  private countedFor({ identifier, address }: Attempt): Counted[] {
    const { maxFailures, addressMaxFailures } = this.settings;
    return [
      { subject: lockSubjects.identifierFromAddress(identifier, address), rule: { kind: 'lock', limit: maxFailures } },
      { subject: lockSubjects.identifier(identifier), rule: { kind: 'delay', limit: maxFailures } },
      { subject: lockSubjects.address(address), rule: { kind: 'lock', limit: addressMaxFailures } },
    ];
  }

  private async reserveWithin(counted: Counted[], now: Date, transaction?: Transaction): Promise<{ ids: number[] } | Hold> {
    let refusedUntil = 0;
    let refusedIfPendingFail = 0;
    for (const { subject, rule } of counted) {
      const { settled, inFlight } = await this.failuresOf(subject, now, transaction);
      refusedUntil = Math.max(refusedUntil, this.refusedUntil(rule, settled));
      refusedIfPendingFail = Math.max(refusedIfPendingFail, this.refusedUntil(rule, [...settled, ...inFlight].sort((a, b) => a - b)));
    }
    if (refusedUntil > now.getTime()) return { refusedUntil };
    if (refusedIfPendingFail > now.getTime()) return { waitForPending: true };
    const ids: number[] = [];
    for (const { subject } of counted) {
      ids.push(Number((await this.models.LoginFailure.create({ subject, failed_at: now, pending: true }, { transaction })).get('id')));
    }
    return { ids };
  }

  /** The instant (ms) until which a rule refuses checks after these failure times (ascending); 0 if it does not. */
  private refusedUntil(rule: Rule, times: number[]): number {
    if (times.length < rule.limit) return 0;
    if (rule.kind === 'lock') return times[times.length - rule.limit]! + this.settings.windowMs;
    // Each failure past the limit doubles the wait (the exponent is bounded so that 2 ** n stays finite).
    const delayMs = Math.min(1000 * 2 ** Math.min(times.length - rule.limit, 30), this.settings.maxDelayMs);
    return times[times.length - 1]! + delayMs;
  }

  /** The times (ms, ascending) of a subject's failures within the window: settled ones, and pending ones still in flight. */
  private async failuresOf(subject: string, now: Date, transaction?: Transaction): Promise<{ settled: number[]; inFlight: number[] }> {
    const since = new Date(now.getTime() - this.settings.windowMs);
    // Outside a transaction (the login page's read of its budget) a Reader answers without Sequelize's cost.
    const rows = transaction
      ? ((await this.models.LoginFailure.findAll({
          attributes: ['failed_at', 'pending'],
          where: { subject, failed_at: { [Op.gt]: since } },
          order: [['failed_at', 'ASC']],
          raw: true,
          transaction,
        })) as unknown as Array<Pick<LoginFailureRow, 'failed_at' | 'pending'>>)
      : await readerOf(this.models.LoginFailure.sequelize!).rows<Pick<LoginFailureRow, 'failed_at' | 'pending'>>(
          'SELECT failed_at, pending FROM login_failures WHERE subject = ? AND failed_at > ? ORDER BY failed_at',
          [subject, since],
        );
    const expiredBefore = now.getTime() - PENDING_EXPIRES_MS;
    const settled: number[] = [];
    const inFlight: number[] = [];
    for (const row of rows) {
      const time = asDate(row.failed_at).getTime();
      (!asBoolean(row.pending) || time <= expiredBefore ? settled : inFlight).push(time);
    }
    return { settled, inFlight };
  }
}

/** Rows that count as failures now: settled, or pending for so long that their check died. */
function settledOnly(now: Date): WhereOptions<LoginFailureRow> {
  return { [Op.or]: [{ pending: false }, { failed_at: { [Op.lte]: new Date(now.getTime() - PENDING_EXPIRES_MS) } }] };
}

function secondsUntil(until: number, now: Date): number {
  return until > now.getTime() ? Math.ceil((until - now.getTime()) / 1000) : 0;
}
