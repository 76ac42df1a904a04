/**
 * Named locks for check-then-write sequences that must not interleave (two creates of the same CPF, two
 * password checks of the same account). On PostgreSQL they are advisory locks held until the end of a
 * transaction, so they hold across every instance; the work runs inside that transaction. On SQLite,
 * which one process serves, they are queues in this process, and the work opens its own transactions.
 */
import type { Sequelize, Transaction } from 'sequelize';

const queues = new Map<string, Promise<unknown>>();

export async function withLocks<T>(sequelize: Sequelize, keys: string[], work: (transaction?: Transaction) => Promise<T>): Promise<T> {
  const ordered = [...new Set(keys)].sort(); // one order everywhere: no deadlocks
  if (sequelize.getDialect() === 'postgres') {
    return sequelize.transaction(async (transaction) => {
      for (const key of ordered) await sequelize.query('SELECT pg_advisory_xact_lock(hashtext(:key))', { replacements: { key }, transaction });
      return work(transaction);
    });
  }
  return inProcess(ordered, () => work(undefined));
}

function inProcess<T>(keys: string[], work: () => Promise<T>): Promise<T> {
  if (keys.length === 0) return work();
  const [first, ...rest] = keys as [string, ...string[]];
  const previous = queues.get(first) ?? Promise.resolve();
  const run = previous.catch(() => undefined).then(() => inProcess(rest, work));
  const settled = run.catch(() => undefined);
  queues.set(first, settled);
  void settled.then(() => {
    if (queues.get(first) === settled) queues.delete(first);
  });
  return run;
}

/** Like withLocks, but the work always runs in one transaction (on SQLite a new one, once the locks are held). */
export function withLockedTransaction<T>(sequelize: Sequelize, keys: string[], work: (transaction: Transaction) => Promise<T>): Promise<T> {
  return withLocks(sequelize, keys, (transaction) => (transaction ? work(transaction) : sequelize.transaction(work)));
}
