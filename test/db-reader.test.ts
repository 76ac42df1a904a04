/**
 * The Reader (src/db/reader.ts): plain SELECTs around Sequelize's model layer, on read-only connections
 * of its own (SQLite's, or postgres.js's on PostgreSQL), with the same answers as Sequelize gives.
 */
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { QueryTypes, type Sequelize } from 'sequelize';
import { openDatabase } from '../src/db/database.js';
import { READER_APPLICATION_NAME, asBoolean, asDate, asIsoTimestamp, asNumber, readerOf } from '../src/db/reader.js';
import { createPostgresDatabase, createTestDatabase, type TestDatabase } from './helpers/database.js';

const silent = pino({ level: 'silent' });

describe('Reader', () => {
  let database: TestDatabase;
  let sequelize: Sequelize;

  beforeAll(async () => {
    database = await createTestDatabase();
    sequelize = await openDatabase(database.url, silent);
    await sequelize.query('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL, done BOOLEAN NOT NULL, written_at TIMESTAMP WITH TIME ZONE NOT NULL)');
  });

  afterAll(async () => {
    await sequelize.close();
    await database.drop();
  });

  const insert = (id: number, body: string, done: boolean, writtenAt: Date) =>
    sequelize.query('INSERT INTO notes (id, body, done, written_at) VALUES (:id, :body, :done, :writtenAt)', { replacements: { id, body, done, writtenAt } });

  it('reads what Sequelize committed, with ? parameters in order, dates and booleans compared as stored', async () => {
    const writtenAt = new Date('2026-11-26T06:00:00.123Z');
    await insert(1, 'primeira', true, writtenAt);
    await insert(2, 'segunda', false, new Date('2026-11-27T06:00:00Z'));
    const reader = readerOf(sequelize);
    const rows = await reader.rows<{ id: number; body: string; done: unknown; written_at: unknown }>(
      'SELECT id, body, done, written_at FROM notes WHERE written_at < ? AND done = ? ORDER BY id',
      [new Date('2026-11-27T00:00:00Z'), true],
    );
    expect(rows.map((row) => ({ id: row.id, body: row.body, done: asBoolean(row.done), writtenAt: asDate(row.written_at).toISOString() }))).toEqual([
      { id: 1, body: 'primeira', done: true, writtenAt: writtenAt.toISOString() },
    ]);
    const counted = await reader.row<{ total: unknown }>('SELECT COUNT(*) AS total FROM notes WHERE body <> ?', ['nenhuma']);
    expect(asNumber(counted!.total)).toBe(2);
    expect(await reader.row('SELECT id FROM notes WHERE id = ?', [99])).toBeUndefined();
  });

  it('reads a parameter left undefined as NULL, as Sequelize\'s drivers do', async () => {
    const found = await readerOf(sequelize).rows<{ id: number }>('SELECT id FROM notes WHERE (CAST(? AS TEXT) IS NULL OR body = ?) AND id = ?', [undefined, undefined, 1]);
    expect(found).toEqual([{ id: 1 }]);
  });

  it('sends each value as its text, as node-postgres did: a JSON parameter given as text, a boolean as 1', async () => {
    const ids = database.dialect === 'postgres' ? 'SELECT CAST(value AS INTEGER) FROM json_array_elements_text(CAST(? AS JSON))' : 'SELECT value FROM json_each(?)';
    const listed = await readerOf(sequelize).rows<{ id: number }>(`SELECT id FROM notes WHERE id IN (${ids}) AND done = ? ORDER BY id`, [JSON.stringify([1, 2]), 1]);
    expect(listed).toEqual([{ id: 1 }]);
  });

  it('is one per database, and answers many reads at once', async () => {
    expect(readerOf(sequelize)).toBe(readerOf(sequelize));
    const answers = await Promise.all(Array.from({ length: 50 }, (_, index) => readerOf(sequelize).row<{ id: number }>('SELECT id FROM notes WHERE id = ?', [1 + (index % 2)])));
    expect(answers.map((answer) => answer!.id)).toEqual(Array.from({ length: 50 }, (_, index) => 1 + (index % 2)));
  });

  it('reads wide rows with the values and order rows gives, each column named by its alias or its own name', async () => {
    const reader = readerOf(sequelize);
    const rest = 'FROM notes n WHERE n.id <= ? ORDER BY n.id DESC';
    const wide = await reader.wideRows(['n.id', 'n.body AS text', 'n.done', 'n.written_at AS written', "n.body || '!' AS shout"], rest, [2]);
    const plain = await reader.rows(`SELECT n.id, n.body AS text, n.done, n.written_at AS written, n.body || '!' AS shout ${rest}`, [2]);
    expect(wide).toEqual(plain);
    expect(wide.map((row) => (row as { id: number }).id)).toEqual([2, 1]);
    expect(wide[1]).toMatchObject({ text: 'primeira', shout: 'primeira!' });
    await expect(reader.wideRows(['n.id'], 'FROM notes n WHERE n.id = ?', [404])).resolves.toEqual([]);
    // A column without a plain name is refused before any query: the name becomes a property.
    await expect(reader.wideRows(['n.id', "n.body || '!'"], rest, [2])).rejects.toThrow(/Not a column a Reader can name/);
  });

  it('reads only: a write through it is refused', async () => {
    await expect(readerOf(sequelize).rows("UPDATE notes SET body = 'mudada' WHERE id = ?", [1])).rejects.toThrow(/SELECTs only/);
    // Below that check, the connections themselves are read-only (SQLite opens them so; PostgreSQL's default to read-only transactions).
    await expect(readerOf(sequelize).rows("WITH changed AS (SELECT 1) UPDATE notes SET body = 'mudada' WHERE id = ?", [1])).rejects.toThrow(/read-?only/i);
    const [row] = await sequelize.query<{ body: string }>('SELECT body FROM notes WHERE id = 1', { type: QueryTypes.SELECT });
    expect(row!.body).toBe('primeira');
  });

  it('does not see what a transaction has not committed, and sees it once committed', async () => {
    const transaction = await sequelize.transaction();
    await sequelize.query("INSERT INTO notes (id, body, done, written_at) VALUES (3, 'terceira', false, '2026-11-26 06:00:00.000 +00:00')", { transaction });
    const during = await readerOf(sequelize).row('SELECT id FROM notes WHERE id = ?', [3]);
    await transaction.commit();
    expect(during).toBeUndefined();
    expect(await readerOf(sequelize).row('SELECT id FROM notes WHERE id = ?', [3])).toEqual({ id: 3 });
  });

  const readerConnections = async (observer: Sequelize) => {
    const [row] = await observer.query<{ open: string }>('SELECT COUNT(*) AS open FROM pg_stat_activity WHERE datname = current_database() AND application_name = :name', {
      replacements: { name: READER_APPLICATION_NAME },
      type: QueryTypes.SELECT,
    });
    return Number(row!.open);
  };

  it('gives a DATE column as its text and a BIGINT as text, as Sequelize does', async () => {
    await sequelize.query('CREATE TABLE days (id INTEGER PRIMARY KEY, day DATE NOT NULL, total BIGINT NOT NULL)');
    await sequelize.query("INSERT INTO days VALUES (1, '2026-11-26', 2)");
    const [viaSequelize] = await sequelize.query<{ day: unknown; total: unknown }>('SELECT day, total FROM days', { type: QueryTypes.SELECT });
    const viaReader = await readerOf(sequelize).row<{ day: unknown; total: unknown }>('SELECT day, total FROM days WHERE id = ?', [1]);
    expect(viaReader).toEqual(viaSequelize);
    expect(viaReader!.day).toBe('2026-11-26');
    expect(asNumber(viaReader!.total)).toBe(2);
  });

  it('on PostgreSQL, reads on connections of its own, named, and closed with the database', async () => {
    if (database.dialect !== 'postgres') return expect(database.dialect).toBe('sqlite'); // SQLite's are files opened by the Reader, closed likewise
    const observer = await openDatabase(database.url, silent);
    const other = await openDatabase(database.url, silent);
    const before = await readerConnections(observer); // this file's own database has some
    try {
      await readerOf(other).row('SELECT id FROM notes WHERE id = ?', [1]);
      expect(await readerConnections(observer)).toBeGreaterThan(before);
    } finally {
      await other.close();
    }
    // A closed connection's backend leaves pg_stat_activity a moment after the socket closes.
    await expect.poll(() => readerConnections(observer), { timeout: 2_000 }).toBe(before);
    await observer.close();
  });
});

describe('asIsoTimestamp', () => {
  it('writes either driver\'s timestamp as the contract does (ISO 8601, UTC, milliseconds)', () => {
    expect(asIsoTimestamp('2026-11-26 06:04:48.502 +00:00')).toBe('2026-11-26T06:04:48.502Z');
    expect(asIsoTimestamp(new Date('2026-11-26T06:04:48.502Z'))).toBe('2026-11-26T06:04:48.502Z');
    // Another offset or form is parsed, not rewritten.
    expect(asIsoTimestamp('2026-11-26 03:04:48.502 -03:00')).toBe('2026-11-26T06:04:48.502Z');
    expect(asIsoTimestamp('2026-11-26T06:04:48Z')).toBe('2026-11-26T06:04:48.000Z');
  });
});

/**
 * What PgBouncer (transaction mode) accepts in a startup packet: any other parameter closes the
 * connection (`unsupported startup parameter`), unless listed in its ignore_startup_parameters.
 */
const POOLER_STARTUP_PARAMETERS = new Set(['user', 'database', 'application_name', 'client_encoding', 'datestyle', 'timezone', 'standard_conforming_strings']);

/** A TCP relay in front of PostgreSQL that records each connection's startup parameters. */
async function recordingRelay(target: URL): Promise<{ port: number; startups: Array<Record<string, string>>; close(): Promise<void> }> {
  const startups: Array<Record<string, string>> = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    let pending = Buffer.alloc(0);
    const first = (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      if (pending.length < 8 || pending.length < pending.readInt32BE(0)) return;
      const length = pending.readInt32BE(0);
      if (pending.readInt32BE(4) === 80877103) {
        // SSLRequest: not here; the client goes on in plain text.
        pending = pending.subarray(length);
        client.write('N');
        return;
      }
      const fields = pending.subarray(8, length - 1).toString('utf8').split('\0');
      const parameters: Record<string, string> = {};
      for (let index = 0; index + 1 < fields.length; index += 2) parameters[fields[index]!] = fields[index + 1]!;
      startups.push(parameters);
      client.off('data', first);
      const upstream = connect(Number(target.port || 5432), target.hostname);
      sockets.add(upstream);
      upstream.write(pending);
      client.pipe(upstream).on('error', () => client.destroy());
      upstream.pipe(client).on('error', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.on('close', () => upstream.destroy());
    };
    client.on('data', first);
    client.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    startups,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the Reader behind a transaction pooler (PgBouncer), on PostgreSQL whatever the suite runs on', () => {
  it('sends no startup parameter a pooler refuses (default_transaction_read_only, statement_timeout), and its reads still refuse writes and are bounded', async () => {
    const database = await createPostgresDatabase(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
    const direct = new URL(database.url);
    const relay = await recordingRelay(direct);
    const relayed = new URL(database.url);
    relayed.host = `127.0.0.1:${relay.port}`;
    const sequelize = await openDatabase(relayed.toString(), silent, { statementTimeoutMs: 500, preparedStatements: false });
    try {
      await sequelize.query('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
      await sequelize.query("INSERT INTO notes VALUES (1, 'primeira')");
      const reader = readerOf(sequelize);
      expect(await reader.row<{ body: string; ro: string }>("SELECT body, current_setting('transaction_read_only') AS ro FROM notes WHERE id = ?", [1])).toEqual({ body: 'primeira', ro: 'on' });
      // Read-only per transaction, below the SELECT check: a data-modifying WITH and a switch to read-write are refused.
      await expect(reader.rows("WITH changed AS (SELECT 1) UPDATE notes SET body = 'mudada' WHERE id = ?", [1])).rejects.toThrow(/read-only transaction/);
      await expect(reader.row("SELECT set_config('transaction_read_only', 'off', false)")).rejects.toThrow(/read-write/);
      // Bounded without a startup parameter: SET LOCAL in the read's own transaction.
      const started = Date.now();
      await expect(reader.row('SELECT pg_sleep(5)')).rejects.toThrow(/statement timeout/);
      expect(Date.now() - started).toBeLessThan(4_000);
      const [row] = await sequelize.query<{ body: string }>('SELECT body FROM notes WHERE id = 1', { type: QueryTypes.SELECT });
      expect(row!.body).toBe('primeira');
      // Reads asked together share transactions; one that fails (and aborts its transaction) fails alone.
      const shared = await Promise.allSettled(Array.from({ length: 60 }, (_, index) => reader.row<{ q: number }>('SELECT 10 / ? AS q', [index % 7 === 3 ? 0 : 1])));
      expect(shared.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : String(outcome.reason)))).toEqual(
        Array.from({ length: 60 }, (_, index) => (index % 7 === 3 ? expect.stringMatching(/division by zero/) : { q: 10 })),
      );
      // Nothing of the read-only transactions stays on the connections: the pool's session writes.
      const [session] = await sequelize.query<{ ro: string; timeout: string }>("SELECT current_setting('default_transaction_read_only') AS ro, current_setting('statement_timeout') AS timeout", { type: QueryTypes.SELECT });
      expect(session).toEqual({ ro: 'off', timeout: '0' });
    } finally {
      await sequelize.close();
      await relay.close();
      await database.drop();
    }
    expect(relay.startups.map((parameters) => parameters.application_name)).toContain(READER_APPLICATION_NAME);
    for (const parameters of relay.startups) {
      expect(Object.keys(parameters).filter((name) => !POOLER_STARTUP_PARAMETERS.has(name.toLowerCase())), JSON.stringify(parameters)).toEqual([]);
    }
  });
});
