/**
 * The login lock against password guessing: after `maxFailures` failed password checks within a sliding
 * window, for an account or for an address, password checks for it are refused (429 with Retry-After),
 * even with the right password, until enough failures age out of the window.
 *
 * Failures are rows in the database rather than counters in memory, so every instance sharing the
 * database shares the lock and a restart does not reset it. Refused attempts are not counted: the lock
 * ends when the window passes, as announced by Retry-After, however often a locked client retries.
 * A check is counted before the password is checked (see `reserve`), so concurrent guesses cannot
 * all pass an open lock.
 */
import { Op, type Transaction } from 'sequelize';
import { withLocks } from '../db/locks.js';
import type { AccountModels, LoginFailureRow } from './models.js';

export interface LockState {
  /** Failures in the current window (the highest among the subjects asked about). */
  attempts: number;
  limit: number;
  locked: boolean;
  /** Seconds until a locked subject may try again; 0 when not locked. */
  retryAfterSeconds: number;
  windowSeconds: number;
}

/** What failures are counted against: an account (or a name with no account) and an address. */
export const lockSubjects = {
  account: (userId: number) => `user:${userId}`,
  /** A login name with no account behind it: locks exactly like an account, so it reveals nothing. */
  unknownName: (name: string) => `login:${name.trim().toLowerCase()}`,
  address: (ip: string) => `ip:${ip}`,
};

export class LoginLock {
  constructor(
    private readonly models: AccountModels,
    private readonly settings: { maxFailures: number; windowMs: number },
  ) {}

  async state(subjects: string[], now = new Date(), transaction?: Transaction): Promise<LockState> {
    const { maxFailures, windowMs } = this.settings;
    const since = new Date(now.getTime() - windowMs);
    let attempts = 0;
    let lockedUntil = 0;
    for (const subject of subjects) {
      const failures = (await this.models.LoginFailure.findAll({
        attributes: ['failed_at'],
        where: { subject, failed_at: { [Op.gt]: since } },
        order: [['failed_at', 'ASC']],
        raw: true,
        transaction,
      })) as unknown as Array<Pick<LoginFailureRow, 'failed_at'>>;
      attempts = Math.max(attempts, failures.length);
      if (failures.length >= maxFailures) {
        // Locked until the oldest failure that keeps the count at the limit leaves the window.
        const decisive = failures[failures.length - maxFailures]!;
        lockedUntil = Math.max(lockedUntil, new Date(decisive.failed_at).getTime() + windowMs);
      }
    }
    const retryAfterSeconds = lockedUntil > now.getTime() ? Math.ceil((lockedUntil - now.getTime()) / 1000) : 0;
    return { attempts, limit: maxFailures, locked: retryAfterSeconds > 0, retryAfterSeconds, windowSeconds: Math.ceil(windowMs / 1000) };
  }

  /**
   * Reserves a password check: counts it as a failure first, then looks at the failures before it. If a
   * subject was already at its limit, the reservation is withdrawn and the lock state returned;
   * otherwise the check may run, and `release` withdraws the reservation when the password was right.
   * Counting before checking is what stops parallel guesses from all getting through an open lock.
   */
  async reserve(subjects: string[], now = new Date()): Promise<{ ids: number[] } | { locked: LockState }> {
    // Counting and recording must not interleave between two checks of one subject.
    const keys = subjects.map((subject) => `login:${subject}`);
    return withLocks(this.models.LoginFailure.sequelize!, keys, (transaction) => this.reserveWithin(subjects, now, transaction));
  }

  private async reserveWithin(subjects: string[], now: Date, transaction?: Transaction): Promise<{ ids: number[] } | { locked: LockState }> {
    const ids: number[] = [];
    for (const subject of subjects) {
      ids.push(Number((await this.models.LoginFailure.create({ subject, failed_at: now }, { transaction })).get('id')));
    }
    const since = new Date(now.getTime() - this.settings.windowMs);
    for (const [index, subject] of subjects.entries()) {
      const earlier = await this.models.LoginFailure.count({
        where: { subject, failed_at: { [Op.gt]: since }, id: { [Op.lt]: ids[index]! } },
        transaction,
      });
      if (earlier >= this.settings.maxFailures) {
        await this.models.LoginFailure.destroy({ where: { id: ids }, transaction });
        return { locked: await this.state(subjects, now, transaction) };
      }
    }
    return { ids };
  }

  /** Withdraws a reservation: the check it made was not a failure. */
  async release(ids: number[]): Promise<void> {
    await this.models.LoginFailure.destroy({ where: { id: ids } });
  }

  /** A successful login forgets the account's failures (not the address's: one good account must not unlock guessing at others). */
  async forget(subject: string): Promise<void> {
    await this.models.LoginFailure.destroy({ where: { subject } });
  }

  /** Deletes failures older than the window; returns how many. */
  async purgeExpired(now = new Date()): Promise<number> {
    return this.models.LoginFailure.destroy({ where: { failed_at: { [Op.lte]: new Date(now.getTime() - this.settings.windowMs) } } });
  }
}
