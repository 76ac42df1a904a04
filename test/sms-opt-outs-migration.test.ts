/**
 * Migration 0014 (src/db/migrations/0014-sms-opt-out-scopes.ts) on a database holding global opt-outs:
 * each one is given to the entities whose credentials received a reply from the number (by account and
 * sender; a reply to a sender its account has no credential for: every entity on that account), one no
 * reply explains to every scope a campaign could be sent from, none is lost; `down` folds them back into
 * one row per number with its first date. Runs on SQLite, or PostgreSQL with TEST_DATABASE_URL.
 */
import { pino } from 'pino';
import { QueryTypes, type Sequelize } from 'sequelize';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import { createMigrator } from '../src/db/migrator.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

const logger = pino({ level: 'silent' });
const BEFORE = '0013-sms-send-attempts';
const MIGRATION = '0014-sms-opt-out-scopes';

const [ACCOUNT_X, ACCOUNT_Y, ACCOUNT_Z, ACCOUNT_W, ACCOUNT_GONE] = ['1', '2', '3', '4', '5'].map((digit) => `AC${digit.repeat(32)}`) as [string, string, string, string, string];
const [SENDER_A, SENDER_B, SENDER_C, SENDER_CENTRAL] = ['+5511940020001', '+5511940020002', '+5511940020003', '+5511940020004'];
/** Entities 1 (A), 2 (B) and 3 (C) have credentials; entity 4 has none. */
const [A, B, C] = [1, 2, 3];

/** The numbers that opted out, each with the story of its replies. */
const NUMBERS = {
  repliedToA: '+5521998760001',
  repliedToAAndB: '+5521998760002',
  repliedToAnUnknownSenderOfX: '+5521998760003',
  repliedToTheCentralCredential: '+5521998760004',
  neverReplied: '+5521998760005',
  repliedOnAnUnknownAccount: '+5521998760006',
};
const optedOutAt = (i: number) => new Date(Date.UTC(2026, 9, 1 + i, 12, 0, 0));

let database: TestDatabase;
let sequelize: Sequelize;

const select = <Row extends object>(sql: string) => sequelize.query<Row>(sql, { type: QueryTypes.SELECT });
const migrator = () => createMigrator(sequelize, logger);

async function scopedRows(): Promise<Array<[number | null, string, number, string | null]>> {
  const rows = await select<{ entity_id: number | null; phone: string; opted_out_at: string | Date; keyword: string | null }>('SELECT entity_id, phone, opted_out_at, keyword FROM sms_opt_outs');
  return rows
    .map((row): [number | null, string, number, string | null] => [row.entity_id === null ? null : Number(row.entity_id), row.phone, new Date(row.opted_out_at).getTime(), row.keyword])
    .sort((x, y) => x[1].localeCompare(y[1]) || (x[0] ?? 0) - (y[0] ?? 0));
}

beforeAll(async () => {
  database = await createTestDatabase();
  sequelize = await openDatabase(database.url, logger);
  await migrator().up({ to: BEFORE });
  const queryInterface = sequelize.getQueryInterface();
  const now = new Date();
  await queryInterface.bulkInsert('users', [{ id: 1, username: 'ana', username_key: 'ana', email: 'ana@exemplo.com.br', first_name: '', last_name: '', password_hash: 'x', is_admin: true, is_active: true, date_joined: now }]);
  await queryInterface.bulkInsert('entities', [1, 2, 3, 4].map((id) => ({ id, tp: 'candidato', owner_id: 1, nome: `Entidade ${id}`, created_at: now, updated_at: now })));
  const credential = (id: number, accountId: string, senderId: string, entityId: number | null) => ({
    id,
    name: `Credencial ${id}`,
    provider: 'provider',
    account_id: accountId,
    sender_id: senderId,
    secret_sealed: 'sealed',
    entity_id: entityId,
    created_by: 1,
    created_at: now,
  });
  await queryInterface.bulkInsert('sms_credentials', [credential(1, ACCOUNT_X, SENDER_A, A), credential(2, ACCOUNT_Y, SENDER_B, B), credential(3, ACCOUNT_Z, SENDER_C, C), credential(4, ACCOUNT_W, SENDER_CENTRAL, null)]);
  let sid = 0;
  const reply = (from: string, accountId: string, to: string, body = 'SAIR') => ({ message_sid: `SM${String((sid += 1)).padStart(32, '0')}`, account_id: accountId, sender: from, recipient: to, body, received_at: now });
  await queryInterface.bulkInsert('sms_replies', [
    reply(NUMBERS.repliedToA, ACCOUNT_X, SENDER_A),
    reply(NUMBERS.repliedToAAndB, ACCOUNT_X, SENDER_A, 'Obrigado'),
    reply(NUMBERS.repliedToAAndB, ACCOUNT_Y, SENDER_B),
    reply(NUMBERS.repliedToAnUnknownSenderOfX, ACCOUNT_X, '+5511940029999'),
    reply(NUMBERS.repliedToTheCentralCredential, ACCOUNT_W, SENDER_CENTRAL),
    reply(NUMBERS.repliedOnAnUnknownAccount, ACCOUNT_GONE, SENDER_A),
  ]);
  await queryInterface.bulkInsert('sms_opt_outs', Object.values(NUMBERS).map((phone, i) => ({ phone, opted_out_at: optedOutAt(i) })));
});

afterAll(async () => {
  await sequelize?.close();
  await database?.drop();
});

const expectedAfterUp = (): Array<[number | null, string, number, null]> => {
  const at = (phone: string) => optedOutAt(Object.values(NUMBERS).indexOf(phone)).getTime();
  const rows: Array<[number | null, string]> = [
    [A, NUMBERS.repliedToA],
    [A, NUMBERS.repliedToAAndB],
    [B, NUMBERS.repliedToAAndB],
    [A, NUMBERS.repliedToAnUnknownSenderOfX],
    [null, NUMBERS.repliedToTheCentralCredential],
    // Nothing explains these: every scope a campaign can be sent from (entity 4 has no credential).
    ...([null, A, B, C] as const).flatMap((scope): Array<[number | null, string]> => [
      [scope, NUMBERS.neverReplied],
      [scope, NUMBERS.repliedOnAnUnknownAccount],
    ]),
  ];
  return rows.map(([scope, phone]): [number | null, string, number, null] => [scope, phone, at(phone), null]).sort((x, y) => x[1].localeCompare(y[1]) || (x[0] ?? 0) - (y[0] ?? 0));
};

it('gives each global opt-out to the entities whose credentials received its replies, losing none', async () => {
  await migrator().up({ to: MIGRATION });
  expect(await scopedRows()).toEqual(expectedAfterUp());
});

it('keeps one row per entity and number', async () => {
  const queryInterface = sequelize.getQueryInterface();
  await expect(queryInterface.bulkInsert('sms_opt_outs', [{ entity_id: A, phone: NUMBERS.repliedToA, keyword: 'SAIR', opted_out_at: new Date() }])).rejects.toThrow();
});

it('folds them back into one row per number with its first date on down, and attributes them again on up', async () => {
  await migrator().down({ to: MIGRATION });
  const folded = await select<{ phone: string; opted_out_at: string | Date }>('SELECT phone, opted_out_at FROM sms_opt_outs ORDER BY phone');
  expect(folded.map((row) => [row.phone, new Date(row.opted_out_at).getTime()])).toEqual(
    Object.values(NUMBERS)
      .map((phone, i) => [phone, optedOutAt(i).getTime()])
      .sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
  );
  await migrator().up({ to: MIGRATION });
  expect(await scopedRows()).toEqual(expectedAfterUp());
});
