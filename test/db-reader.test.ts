/**
 * The Reader (src/db/reader.ts): plain SELECTs around Sequelize's model layer, on SQLite's read-only
 * connections or PostgreSQL's pool, with the same answers as Sequelize gives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { QueryTypes, type Sequelize } from 'sequelize';
import { openDatabase } from '../src/db/database.js';
import { asBoolean, asDate, asIsoTimestamp, asNumber, readerOf } from '../src/db/reader.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

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

  it('is one per database, and answers many reads at once', async () => {
    expect(readerOf(sequelize)).toBe(readerOf(sequelize));
    const answers = await Promise.all(Array.from({ length: 50 }, (_, index) => readerOf(sequelize).row<{ id: number }>('SELECT id FROM notes WHERE id = ?', [1 + (index % 2)])));
    expect(answers.map((answer) => answer!.id)).toEqual(Array.from({ length: 50 }, (_, index) => 1 + (index % 2)));
  });

  it('reads only: a write through it is refused', async () => {
    await expect(readerOf(sequelize).rows("UPDATE notes SET body = 'mudada' WHERE id = ?", [1])).rejects.toThrow(/SELECTs only/);
    if (database.dialect === 'sqlite') {
      // Below that check, SQLite's connections are opened read-only.
      await expect(readerOf(sequelize).rows("WITH changed AS (SELECT 1) UPDATE notes SET body = 'mudada' WHERE id = ?", [1])).rejects.toThrow(/readonly/i);
    }
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
