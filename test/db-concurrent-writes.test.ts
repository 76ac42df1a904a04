/**
 * Concurrent writes never fail for being concurrent:
 * - against the real app, contact imports (which read, then write), contact creations and entity edits
 *   sent all at once each get their answer, and the server logs no failure (on SQLite two concurrent
 *   imports answered 500, SQLITE_BUSY: the CLI sweep met it on CI);
 * - on SQLite, transactions wait their turn (serialiseTransactions): one begun inside another's callback
 *   does not wait for it, and one stuck behind another for longer than the wait gives up with
 *   DatabaseBusyError, without running, and the server answers that 503 with Retry-After.
 * The app part runs on SQLite, or PostgreSQL with TEST_DATABASE_URL.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Request } from 'express';
import { DataTypes, Sequelize } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseBusyError, serialiseTransactions } from '../src/db/database.js';
import { translateDatabaseBusy } from '../src/http/errors.js';
import { createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';

describe('concurrent writes to the app', () => {
  let app: TestApp;
  let owner: TestUser;
  let entity: number;
  beforeAll(async () => {
    app = await startTestApp();
    owner = await createUser(app);
    entity = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
  });
  afterAll(async () => {
    await app?.close();
  });

  let sequence = 0;
  const freshNumber = () => {
    sequence += 1;
    return `(21) 99${String(sequence).padStart(3, '0')}-${String(sequence).padStart(4, '0')}`;
  };
  const send = async (method: string, path: string, body: string, contentType = 'application/json') => {
    const response = await fetch(`${app.baseUrl}${path}`, { method, headers: { ...owner.headers, 'Content-Type': contentType }, body });
    return `${method} ${path}: ${response.status} ${response.status >= 300 ? await response.text() : ''}`.trim();
  };

  it('answers every one of 45 writes sent at once, none failing for another', async () => {
    const writes = Array.from({ length: 15 }, (_, index) => [
      send('POST', `/api/contacts/import/?entity_id=${entity}`, `telefone,nome,tags\n${freshNumber()},Ana,bairro\n${freshNumber()},Bia,centro\n`, 'text/csv'),
      send('POST', '/api/contacts/', JSON.stringify({ entity_id: entity, phone: freshNumber(), name: `Contato ${index}` })),
      send('POST', '/api/entidade/add/', JSON.stringify({ id: entity, nome: `Maria Santos ${index}` })),
    ]).flat();
    const answers = await Promise.all(writes);
    expect(answers.filter((answer) => !/: 20[01]$/.test(answer))).toEqual([]);
    expect(app.logs.filter((line) => line.msg === 'request failed').map((line) => JSON.stringify(line.err).slice(0, 300))).toEqual([]);
    const listed = await fetch(`${app.baseUrl}/api/contacts/?entity_id=${entity}`, { headers: owner.headers }).then((response) => response.json());
    expect(listed.data.count).toBe(45);
  }, 60_000);
});

describe('SQLite transactions, one at a time', () => {
  let dir: string;
  let sequelize: Sequelize;
  // Twelve queued transactions must all fit in the wait, even on a loaded CI machine (300 ms did not once).
  const WAIT_MS = 2_000;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'palanque-serial-'));
    sequelize = new Sequelize({ dialect: 'sqlite', storage: join(dir, 'serial.sqlite'), logging: false });
    serialiseTransactions(sequelize, WAIT_MS);
    await sequelize.query('PRAGMA journal_mode = WAL');
    sequelize.define('Note', { text: DataTypes.STRING }, { tableName: 'notes', timestamps: false });
    await sequelize.sync();
  });
  afterAll(async () => {
    await sequelize?.close();
    await rm(dir, { recursive: true, force: true });
  });
  const Note = () => sequelize.models.Note!;

  it('runs read-then-write transactions begun together one after another, each seeing the one before', async () => {
    await Note().create({ text: '0' });
    const increment = () =>
      sequelize.transaction(async (transaction) => {
        const row = (await Note().findOne({ transaction, raw: true })) as unknown as { id: number; text: string };
        await Note().update({ text: String(Number(row.text) + 1) }, { where: { id: row.id }, transaction });
      });
    await Promise.all(Array.from({ length: 12 }, increment));
    expect(((await Note().findOne({ raw: true })) as unknown as { text: string }).text).toBe('12');
  });

  it('runs a transaction begun inside another one at once rather than after it', async () => {
    const order: string[] = [];
    await sequelize.transaction(async () => {
      order.push('outer');
      await sequelize.transaction(async (inner) => {
        await Note().count({ transaction: inner });
        order.push('inner');
      });
      order.push('outer ends');
    });
    expect(order).toEqual(['outer', 'inner', 'outer ends']);
  });

  it('gives up on a transaction that waits longer than the wait, without running it, and goes on after', async () => {
    let release!: () => void;
    const stuck = sequelize.transaction(() => new Promise<void>((resolve) => (release = resolve)));
    let ran = false;
    const waiting = sequelize.transaction(async () => {
      ran = true;
    });
    await expect(waiting).rejects.toBeInstanceOf(DatabaseBusyError);
    release();
    await stuck;
    expect(ran).toBe(false);
    await expect(sequelize.transaction(async () => 'next')).resolves.toBe('next');
  });

  it('closes only after the transactions begun before the close have ended: none fails for it, and nothing is lost', async () => {
    const closing = new Sequelize({ dialect: 'sqlite', storage: join(dir, 'closing.sqlite'), logging: false });
    serialiseTransactions(closing, WAIT_MS);
    const Entry = closing.define('Entry', { text: DataTypes.STRING }, { tableName: 'entries', timestamps: false });
    await closing.sync();
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // A transaction that is writing when the close comes, and one queued behind it.
    const writing = closing.transaction(async (transaction) => {
      await Entry.create({ text: 'first' }, { transaction });
      await pause(150);
      await Entry.create({ text: 'second' }, { transaction });
    });
    const queued = closing.transaction(async (transaction) => Entry.create({ text: 'queued' }, { transaction }));
    await pause(20);
    await closing.close();
    await expect(writing).resolves.toBeUndefined();
    await expect(queued).resolves.toBeDefined();

    const reopened = new Sequelize({ dialect: 'sqlite', storage: join(dir, 'closing.sqlite'), logging: false });
    const [rows] = await reopened.query('SELECT text FROM entries ORDER BY id');
    await reopened.close();
    expect(rows).toEqual([{ text: 'first' }, { text: 'second' }, { text: 'queued' }]);
  });

  it("hears a connection's 'error' event (Sequelize closes a transaction's connection without a callback): the process does not end", async () => {
    type Connection = { close(callback?: () => void): void; listenerCount(event: string): number };
    const manager = sequelize.connectionManager as unknown as { getConnection(options: { uuid: string }): Promise<Connection>; connections: Record<string, Connection> };
    const connection = await manager.getConnection({ uuid: 'closed-twice' });
    expect(connection.listenerCount('error')).toBeGreaterThan(0);
    await new Promise<void>((resolve) => connection.close(() => resolve()));
    delete manager.connections['closed-twice']; // as Sequelize's releaseConnection does after its close
    // The second close fails with SQLITE_MISUSE, reported as an 'error' event: unheard, vitest would
    // report it as an uncaught exception and fail the run.
    connection.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
  });

  it('answers a busy database with 503 service_unavailable and Retry-After: nothing was written', () => {
    const answer = translateDatabaseBusy(new DatabaseBusyError(WAIT_MS), {} as Request);
    expect(answer).toMatchObject({ status: 503, code: 'service_unavailable', headers: { 'Retry-After': '5' } });
  });
});
