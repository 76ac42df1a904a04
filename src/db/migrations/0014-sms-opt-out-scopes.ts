import { DataTypes, QueryTypes, type QueryInterface, type Transaction } from 'sequelize';

/**
 * SMS opt-outs kept per entity (src/messaging/opt-outs.ts): `sms_opt_outs` was one row per phone number,
 * honoured by every credential, so a reply signed with any account's token silenced a number for every
 * team. It becomes one row per (entity, number); `entity_id` null is the scope of the credentials
 * without an entity (admins only), shared by them. When an entity is deleted its credentials lose their
 * entity (0009), and its opt-outs move to that same shared scope, so those credentials keep honouring them.
 *
 * The global rows are attributed, never dropped. A number belongs to the entity of each credential that
 * received a reply from it (`sms_replies`: the account it arrived on and the sender number it was sent to);
 * a reply to a sender number its account has no credential for binds every entity with a credential on
 * that account, as a new reply does. A number no reply explains (rows written by hand, replies deleted)
 * stays opted out everywhere it could be sent from now: for every entity that has a credential, and
 * for the credentials without an entity. An entity given its first credential later does not inherit it.
 *
 * `down` folds the rows back into one per number, the earliest: a number opted out of any entity is
 * opted out of all again, as it was.
 */
export const name = '0014-sms-opt-out-scopes';

/** Rows written per INSERT, well under SQLite's bound-parameter limit. */
const ROWS_PER_INSERT = 200;

interface GlobalOptOut {
  phone: string;
  opted_out_at: Date | string;
}

interface ScopedOptOut extends GlobalOptOut {
  entity_id: number | null;
  keyword: string | null;
}

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    const scoped = await attributed(queryInterface, transaction);
    await queryInterface.dropTable('sms_opt_outs', { transaction });
    await queryInterface.createTable(
      'sms_opt_outs',
      {
        id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
        entity_id: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'entities', key: 'id' }, onDelete: 'SET NULL' },
        phone: { type: DataTypes.STRING(20), allowNull: false },
        // The keyword the reply was read as (PARAR, STOP...); null for rows attributed by this migration.
        keyword: { type: DataTypes.STRING(20), allowNull: true },
        opted_out_at: { type: DataTypes.DATE, allowNull: false },
      },
      { transaction },
    );
    // Unique per entity. The shared scope (null) is kept unique by the code that writes it: both
    // databases let a unique index hold nulls twice.
    await queryInterface.addIndex('sms_opt_outs', ['entity_id', 'phone'], { name: 'sms_opt_outs_entity_phone', unique: true, transaction });
    await queryInterface.addIndex('sms_opt_outs', ['phone'], { name: 'sms_opt_outs_phone', transaction });
    await insertInBatches(queryInterface, 'sms_opt_outs', scoped, transaction);
  });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  const sequelize = queryInterface.sequelize;
  await sequelize.transaction(async (transaction) => {
    const folded = await sequelize.query<GlobalOptOut>('SELECT phone, MIN(opted_out_at) AS opted_out_at FROM sms_opt_outs GROUP BY phone', {
      type: QueryTypes.SELECT,
      transaction,
    });
    await queryInterface.dropTable('sms_opt_outs', { transaction });
    await queryInterface.createTable(
      'sms_opt_outs',
      { phone: { type: DataTypes.STRING(20), primaryKey: true }, opted_out_at: { type: DataTypes.DATE, allowNull: false } },
      { transaction },
    );
    await insertInBatches(queryInterface, 'sms_opt_outs', folded, transaction);
  });
}

/** Each global row once per entity it is attributed to (see the opening comment). */
async function attributed(queryInterface: QueryInterface, transaction: Transaction): Promise<ScopedOptOut[]> {
  const sequelize = queryInterface.sequelize;
  const select = <Row extends object>(sql: string) => sequelize.query<Row>(sql, { type: QueryTypes.SELECT, transaction });
  const fromReplies = await select<GlobalOptOut & { entity_id: number | null }>(`
    SELECT DISTINCT o.phone, o.opted_out_at, c.entity_id
    FROM sms_opt_outs o
    JOIN sms_replies r ON r.sender = o.phone
    JOIN sms_credentials c ON c.account_id = r.account_id
    WHERE c.sender_id = r.recipient
       OR NOT EXISTS (SELECT 1 FROM sms_credentials m WHERE m.account_id = r.account_id AND m.sender_id = r.recipient)`);
  const explained = new Set(fromReplies.map((row) => row.phone));
  const unexplained = (await select<GlobalOptOut>('SELECT phone, opted_out_at FROM sms_opt_outs')).filter((row) => !explained.has(row.phone));
  const everyScope: Array<number | null> = [null, ...(await select<{ entity_id: number }>('SELECT DISTINCT entity_id FROM sms_credentials WHERE entity_id IS NOT NULL')).map((row) => row.entity_id)];

  const rows = new Map<string, ScopedOptOut>();
  const add = (row: GlobalOptOut, entityId: number | null) => rows.set(`${entityId ?? ''} ${row.phone}`, { entity_id: entityId, phone: row.phone, keyword: null, opted_out_at: row.opted_out_at });
  for (const row of fromReplies) add(row, row.entity_id);
  for (const row of unexplained) for (const entityId of everyScope) add(row, entityId);
  return [...rows.values()];
}

async function insertInBatches(queryInterface: QueryInterface, table: string, rows: object[], transaction: Transaction): Promise<void> {
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    await queryInterface.bulkInsert(table, rows.slice(start, start + ROWS_PER_INSERT), { transaction });
  }
}
