/**
 * Bounds on how long a statement, and a request's statements, may hold the database.
 *
 * - Statement timeout (DB_STATEMENT_TIMEOUT_MS): a Sequelize statement that runs longer is cancelled
 *   here, on SQLite by interrupting its connection, on PostgreSQL by the protocol's cancel request (the
 *   way psql's Ctrl-C goes, which a transaction pooler such as PgBouncer forwards to the server running
 *   it). Not as the `statement_timeout` startup parameter, which PgBouncer refuses, nor as a session
 *   setting, which it would leave to the next client of that server connection. The Reader's reads set
 *   `statement_timeout` for their own transaction (reader.ts). Either way the statement fails as
 *   cancelled (SQLSTATE 57014, SQLITE_INTERRUPT): an outage, 503. A cancel sent just as its statement
 *   ends may reach the connection's next statement; the same holds for PostgreSQL's own cancels.
 * - Request deadline (http/deadline.ts runs the request's work inside a `Deadline`): when it passes,
 *   the request's running statements are cancelled (`pg_cancel_backend`, or SQLite's interrupt), and its
 *   further statements are refused (DeadlineExceededError), except what ends a transaction. Its managed
 *   transactions therefore roll back. `settled()` says when none of its statements runs and none of its
 *   transactions is open: only then may the client be told 503, so a write is never both refused and
 *   applied. Once the 503 is sent (`answered()`), even a COMMIT is refused: nothing of that request
 *   can be applied after the client heard it was not.
 *
 * Work started outside a Deadline (jobs, timers, start-up) is bounded by the statement timeout only;
 * `outsideDeadline` runs work that must outlive an expired request (releasing its idempotency key).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { connect } from 'node:net';
import type { Sequelize, Transaction } from 'sequelize';

/** A statement refused because its request's deadline passed: nothing more of that request runs. */
export class DeadlineExceededError extends Error {
  constructor() {
    super("The request's deadline passed: the statement was not run");
    this.name = 'DeadlineExceededError';
  }
}

/** What Sequelize keeps on a transaction and does not declare: how it ended, and the transaction a savepoint is in. */
type Tx = Transaction & { finished?: 'commit' | 'rollback'; parent?: Tx };

interface RunningStatement {
  cancel(): void;
}

export class Deadline {
  private state: 'running' | 'expired' | 'answered' = 'running';
  private readonly statements = new Set<RunningStatement>();
  private readonly transactions = new Set<Tx>();
  private waiters: Array<() => void> = [];

  get expired(): boolean {
    return this.state !== 'running';
  }

  /** The deadline passed: cancels what runs, and refuses what would start. */
  expire(): void {
    if (this.state !== 'running') return;
    this.state = 'expired';
    for (const statement of this.statements) statement.cancel();
  }

  /** The client was told 503: from now on nothing of this request may be applied, a COMMIT included. */
  answered(): void {
    this.state = 'answered';
  }

  /** Resolves once no statement of this request runs and none of its transactions is open. */
  settled(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private get idle(): boolean {
    return this.statements.size === 0 && this.transactions.size === 0;
  }

  /** @internal (watchStatements) */
  admit(transaction: Tx | undefined, completesTransaction: boolean): void {
    if (this.state === 'running') return;
    // A ROLLBACK always runs; a COMMIT only until the client was answered (before that, a late success is the real answer).
    const finishing = completesTransaction ? transaction?.finished : undefined;
    if (finishing === 'rollback' || (finishing === 'commit' && this.state === 'expired')) return;
    throw new DeadlineExceededError();
  }

  /** @internal */
  started(statement: RunningStatement, transaction: Tx | undefined, completesTransaction: boolean): void {
    this.statements.add(statement);
    const root = transaction && (transaction.parent ?? transaction);
    if (root && !completesTransaction && !root.finished) this.transactions.add(root);
  }

  /** @internal */
  ended(statement: RunningStatement): void {
    this.statements.delete(statement);
    for (const transaction of this.transactions) if (transaction.finished) this.transactions.delete(transaction);
    if (!this.idle) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}

const current = new AsyncLocalStorage<Deadline>();

/** Runs `work` (and everything it starts) under `deadline`. */
export function withinDeadline<T>(deadline: Deadline, work: () => T): T {
  return current.run(deadline, work);
}

/** Runs `work` under no request's deadline (only the statement timeout bounds it). */
export function outsideDeadline<T>(work: () => T): T {
  return current.exit(work);
}

interface QueryOptions {
  transaction?: Tx;
  completesTransaction?: boolean;
}

interface Watched {
  deadline: Deadline | undefined;
  statement: RunningStatement;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Watches every Sequelize statement: one is cancelled past `statementTimeoutMs` (0: never), and one run
 * under a Deadline is tracked by it, refused once it expired and cancelled when it expires.
 */
export function watchStatements(sequelize: Sequelize, statementTimeoutMs: number): void {
  const sqlite = sequelize.getDialect() === 'sqlite';
  const watched = new WeakMap<object, Watched>();
  const timed = statementTimeoutMs > 0;
  sequelize.addHook('beforeQuery', (options: QueryOptions, query: object) => {
    const deadline = current.getStore();
    if (!deadline && !timed) return; // a command-line task's statement: unbounded
    deadline?.admit(options.transaction, Boolean(options.completesTransaction));
    const connection = (query as { connection?: unknown }).connection;
    const statement: RunningStatement = { cancel: sqlite ? interruptSqlite(connection) : cancelPostgres(connection) };
    const timer = timed ? setTimeout(statement.cancel, statementTimeoutMs).unref() : undefined;
    watched.set(query, { deadline, statement, timer });
    deadline?.started(statement, options.transaction, Boolean(options.completesTransaction));
  });
  sequelize.addHook('afterQuery', (_options: QueryOptions, query: object) => {
    const entry = watched.get(query);
    if (!entry) return;
    watched.delete(query);
    clearTimeout(entry.timer);
    entry.deadline?.ended(entry.statement);
  });
}

/** Interrupts what a node-sqlite3 connection runs (the statement fails with SQLITE_INTERRUPT). */
function interruptSqlite(connection: unknown): () => void {
  return () => (connection as { interrupt?: () => void } | undefined)?.interrupt?.();
}

/**
 * Cancels what a node-postgres connection runs: PostgreSQL's cancel request (a connection of its own
 * that sends the key the server gave this one, and closes), so the statement fails with 57014. Through
 * a pooler, the key is the pooler's, and it forwards the request to the server connection in use; a
 * backend's process id (`pg_cancel_backend`) would name a pooler's made-up one. Called once per
 * statement at most, while it runs.
 */
function cancelPostgres(connection: unknown): () => void {
  let cancelled = false;
  return () => {
    const client = connection as { processID?: number; secretKey?: number; host?: string; port?: number } | undefined;
    if (cancelled || typeof client?.processID !== 'number' || typeof client.secretKey !== 'number') return;
    cancelled = true;
    sendCancelRequest(client.host ?? 'localhost', client.port ?? 5432, client.processID, client.secretKey);
  };
}

/** The protocol's CancelRequest (length 16, code 80877102, process id, secret key); the server answers nothing and closes the connection. */
function sendCancelRequest(host: string, port: number, processId: number, secretKey: number): void {
  const packet = Buffer.alloc(16);
  packet.writeInt32BE(16, 0);
  packet.writeInt32BE(80877102, 4);
  packet.writeInt32BE(processId, 8);
  packet.writeInt32BE(secretKey, 12);
  // A host that starts with a slash is the folder of a Unix socket, as libpq and node-postgres read it.
  const socket = host.startsWith('/') ? connect(`${host}/.s.PGSQL.${port}`) : connect(port, host);
  socket.setTimeout(5_000, () => socket.destroy());
  socket.on('error', () => undefined); // the statement then runs to its end: nothing else to do
  // Sent, then the connection is left for the other side to close, as libpq does: PgBouncer drops a
  // cancel request whose sender hung up before it passed the request on.
  socket.on('connect', () => socket.write(packet));
  socket.on('end', () => socket.destroy());
}
