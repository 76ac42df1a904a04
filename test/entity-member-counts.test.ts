/**
 * Migration 0019 (src/db/migrations/0019-member-counts.ts): the counts of each user's entities by type,
 * which the entity list's total reads, are counted once from the memberships there already are and then
 * kept right by the database through every way a membership comes and goes: added, removed, moved, its
 * user deleted, its entity deleted, its entity's type changed. `down` removes the table and its
 * triggers. Runs on SQLite, or PostgreSQL with TEST_DATABASE_URL.
 */
import { pino } from 'pino';
import { QueryTypes, type Sequelize } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import { createMigrator } from '../src/db/migrator.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

const logger = pino({ level: 'silent' });
const BEFORE = '0018-guardianship-creators';
const MIGRATION = '0019-member-counts';

let database: TestDatabase;
let sequelize: Sequelize;
const migrator = () => createMigrator(sequelize, logger);
const run = (sql: string) => sequelize.query(sql);

type Counts = Record<string, number>;

/** `user/type → entities`, as the triggers keep them (a count fallen to 0 is no membership). */
async function keptCounts(): Promise<Counts> {
  const rows = await sequelize.query<{ user_id: number; tp: string; total: number | string }>('SELECT user_id, tp, total FROM entity_member_counts', { type: QueryTypes.SELECT });
  return Object.fromEntries(rows.filter((row) => Number(row.total) !== 0).map((row) => [`${row.user_id}/${row.tp}`, Number(row.total)]));
}

/** The same, counted from the memberships. */
async function countedCounts(): Promise<Counts> {
  const rows = await sequelize.query<{ user_id: number; tp: string; total: number | string }>(
    'SELECT m.user_id, e.tp, COUNT(*) AS total FROM entity_members m JOIN entities e ON e.id = m.entity_id GROUP BY m.user_id, e.tp',
    { type: QueryTypes.SELECT },
  );
  return Object.fromEntries(rows.map((row) => [`${row.user_id}/${row.tp}`, Number(row.total)]));
}

const user = (id: number) => `INSERT INTO users (id, username, username_key, email, first_name, last_name, password_hash, is_admin, is_active, date_joined)
  VALUES (${id}, 'user${id}', 'user${id}', 'user${id}@exemplo.com.br', '', '', 'x', false, true, CURRENT_TIMESTAMP)`;
const entity = (id: number, tp: string, owner: number) => `INSERT INTO entities (id, tp, owner_id, nome, created_at, updated_at)
  VALUES (${id}, '${tp}', ${owner}, 'Entidade ${id}', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`;
const member = (entityId: number, userId: number, role = 'owner') => `INSERT INTO entity_members (entity_id, user_id, role, added_at)
  VALUES (${entityId}, ${userId}, '${role}', CURRENT_TIMESTAMP)`;

beforeAll(async () => {
  database = await createTestDatabase();
  sequelize = await openDatabase(database.url, logger);
  await migrator().up({ to: BEFORE });
  for (const id of [1, 2, 3]) await run(user(id));
  await run(entity(10, 'candidato', 1));
  await run(entity(11, 'concorrente', 1));
  await run(entity(12, 'concorrente', 1));
  await run(member(10, 1));
  await run(member(11, 1));
  await run(member(12, 1));
  await run(member(10, 2, 'operator'));
});

afterAll(async () => {
  await sequelize?.close();
  await database?.drop();
});

describe('migration 0019', () => {
  it('counts the memberships there already are', async () => {
    await migrator().up({ to: MIGRATION });
    expect(await keptCounts()).toEqual({ '1/candidato': 1, '1/concorrente': 2, '2/candidato': 1 });
  });

  it.each<[string, string[], Counts]>([
    ['a membership added', [entity(13, 'concorrente', 2), member(13, 2), member(13, 3, 'operator')], { '1/candidato': 1, '1/concorrente': 2, '2/candidato': 1, '2/concorrente': 1, '3/concorrente': 1 }],
    ['a membership removed', ['DELETE FROM entity_members WHERE entity_id = 11 AND user_id = 1'], { '1/candidato': 1, '1/concorrente': 1, '2/candidato': 1, '2/concorrente': 1, '3/concorrente': 1 }],
    ['a membership moved to another user', ['UPDATE entity_members SET user_id = 3 WHERE entity_id = 10 AND user_id = 2'], { '1/candidato': 1, '1/concorrente': 1, '3/candidato': 1, '2/concorrente': 1, '3/concorrente': 1 }],
    ["an entity's type changed", ["UPDATE entities SET tp = 'candidato' WHERE id = 13"], { '1/candidato': 1, '1/concorrente': 1, '3/candidato': 2, '2/candidato': 1 }],
    ['an entity deleted with its members', ['DELETE FROM entities WHERE id = 10'], { '1/concorrente': 1, '3/candidato': 1, '2/candidato': 1 }],
    ['a user deleted with their memberships', ['DELETE FROM users WHERE id = 3'], { '1/concorrente': 1, '2/candidato': 1 }],
    ['a role changed (no count moves)', ["UPDATE entity_members SET role = 'admin' WHERE entity_id = 13"], { '1/concorrente': 1, '2/candidato': 1 }],
  ])('keeps them right through %s', async (_what, statements, expected) => {
    for (const statement of statements) await run(statement);
    expect(await keptCounts()).toEqual(expected);
    expect(await keptCounts()).toEqual(await countedCounts());
  });

  it('is undone by down, triggers and all', async () => {
    await migrator().down({ to: MIGRATION });
    await expect(run('SELECT 1 FROM entity_member_counts')).rejects.toThrow();
    await run(member(12, 2, 'operator')); // no trigger left to write to the dropped table
    await migrator().up({ to: MIGRATION });
    expect(await keptCounts()).toEqual(await countedCounts());
  });
});
