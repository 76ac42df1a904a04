/**
 * Issue 43 §2: each migration is applied whole or not at all (src/db/migration-transaction.ts).
 * - The report's failure: a `contacts` table of someone else's makes migration 0027 fail after it added
 *   `sms_credentials.footer`; the schema and the `migrations` table are left exactly as 0026 left them,
 *   and once the conflict is gone the same command applies everything.
 * - Every statement of every migration (up, and down then up again for the SQLite table rebuilds of
 *   0028 and 0029) runs in its migration's transaction.
 * - 0028's SQLite rebuild of `sms_messages` keeps their send attempts (foreign keys off before BEGIN;
 *   `defer_foreign_keys` would have let the CASCADE delete them), and enforcement is back afterwards.
 * - `palanque db migrate --status` and `--dry-run` (text and --json) change nothing, and a failure exits 1
 *   saying where the database stands.
 * Runs on SQLite, or PostgreSQL with TEST_DATABASE_URL.
 */
import { pino } from 'pino';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { run } from '../cli/program.js';
import { openDatabase } from '../src/db/database.js';
import { createMigrator, knownMigrationNames, migrate } from '../src/db/migrator.js';
import { shown, type CliResult } from './helpers/cli.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

const logger = pino({ level: 'silent' });
const BEFORE = '0026-court-elections';
const FAILING = '0027-sms-campaign-reports-contacts';
const CONFLICT = 'CREATE TABLE contacts (id INTEGER PRIMARY KEY, nome VARCHAR(100))';

/** Every table's columns and every index, as the database describes them (the migrations table included). */
async function schemaOf(sequelize: Sequelize): Promise<string[]> {
  const select = <Row extends object>(sql: string) => sequelize.query<Row>(sql, { type: QueryTypes.SELECT });
  if (sequelize.getDialect() === 'sqlite') {
    const rows = await select<{ type: string; name: string; sql: string | null }>("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name");
    return rows.map((row) => `${row.type} ${row.name}: ${row.sql ?? ''}`);
  }
  const columns = await select<{ table_name: string; column_name: string; data_type: string; is_nullable: string; column_default: string | null }>(
    "SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, column_name",
  );
  const indexes = await select<{ indexdef: string }>("SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexdef");
  return [
    ...columns.map((column) => `column ${column.table_name}.${column.column_name} ${column.data_type} ${column.is_nullable} ${column.column_default ?? ''}`),
    ...indexes.map((index) => `index ${index.indexdef}`),
  ];
}

const migrationRows = (sequelize: Sequelize) => sequelize.query('SELECT * FROM migrations ORDER BY name', { type: QueryTypes.SELECT });

describe('a migration that fails halfway', () => {
  let database: TestDatabase;
  let sequelize: Sequelize;
  /** `palanque db migrate …` on the test's database, run in this process (its code and output). */
  async function cli(args: string[]): Promise<CliResult> {
    let stdout = '';
    let stderr = '';
    const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => ((stdout += String(chunk)), true));
    const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => ((stderr += String(chunk)), true));
    try {
      const code = await run(['node', 'palanque', 'db', 'migrate', '--database-url', database.url, ...args]);
      return { code, stdout, stderr };
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    sequelize = await openDatabase(database.url, logger);
    await createMigrator(sequelize, logger).up({ to: BEFORE });
    // A database migrated before issue 43: its migrations table has no applied_at.
    await sequelize.query('ALTER TABLE migrations DROP COLUMN applied_at');
    await sequelize.query(CONFLICT);
  }, 60_000);
  afterAll(async () => {
    await sequelize?.close();
    await database?.drop();
  });

  it('leaves the schema and the migrations table as the previous migration left them', async () => {
    const schema = await schemaOf(sequelize);
    const rows = await migrationRows(sequelize);
    // 0027 adds sms_credentials.footer (and eight more columns) before it meets the conflicting table.
    await expect(migrate(sequelize, logger)).rejects.toThrow(new RegExp(`Migration ${FAILING} \\(up\\) failed: .*entity_id`));
    expect(await schemaOf(sequelize)).toEqual(schema);
    expect(await migrationRows(sequelize)).toEqual(rows);
    expect(schema.some((line) => /footer/.test(line))).toBe(false);

    // The same through the CLI: exit 1, which migration, why, and where the database stands.
    const failed = await cli([]);
    expect(failed.code, shown(failed)).toBe(1);
    expect(failed.stderr).toContain(`Migration ${FAILING} (up) failed`);
    expect(failed.stderr).toContain(`The failed migration was rolled back: ${database.url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@')} is at ${BEFORE} (${knownMigrationNames().length - 26} pending)`);
    expect(await schemaOf(sequelize)).toEqual(schema);
    expect(await migrationRows(sequelize)).toEqual(rows);
  }, 60_000);

  it('--status and --dry-run say what is applied and what would run, and change nothing', async () => {
    const schema = await schemaOf(sequelize);
    const pending = knownMigrationNames().slice(26);

    const status = await cli(['--status']);
    expect(status.code, shown(status)).toBe(0);
    expect(status.stdout).toContain(`  applied  0001-municipalities\n`); // no time: applied before issue 43
    expect(status.stdout).toContain(`  applied  ${BEFORE}\n  pending  ${FAILING}\n`);
    expect(status.stdout).toContain(`${pending.length} pending migration(s) on `);

    const json = await cli(['--status', '--json']);
    expect(json.code, shown(json)).toBe(0);
    const parsed = JSON.parse(json.stdout) as { migrations: Array<{ name: string; status: string; appliedAt: string | null }>; pending: string[]; unknown: string[] };
    expect(parsed.pending).toEqual(pending);
    expect(parsed.unknown).toEqual([]);
    expect(parsed.migrations[0]).toEqual({ name: '0001-municipalities', status: 'applied', appliedAt: null });
    expect(parsed.migrations.find((migration) => migration.name === FAILING)).toEqual({ name: FAILING, status: 'pending', appliedAt: null });

    const dryRun = await cli(['--dry-run']);
    expect(dryRun.code, shown(dryRun)).toBe(0);
    expect(dryRun.stdout).toContain(`Dry run: would apply ${pending.length} migration(s) to `);
    expect(dryRun.stdout).toContain(pending.map((name) => `  ${name}\n`).join(''));
    const dryJson = await cli(['--dry-run', '--json']);
    expect(JSON.parse(dryJson.stdout)).toMatchObject({ dryRun: true, pending });

    expect(await schemaOf(sequelize)).toEqual(schema);
  }, 60_000);

  it('applies everything once the conflict is gone', async () => {
    await sequelize.query('DROP TABLE contacts');
    const started = Date.now() - 1000;
    const applied = await cli(['--json']);
    expect(applied.code, shown(applied)).toBe(0);
    expect(JSON.parse(applied.stdout)).toMatchObject({ applied: knownMigrationNames().slice(26) });
    const columns = await sequelize.getQueryInterface().describeTable('sms_credentials');
    expect(columns).toHaveProperty('footer');

    const status = JSON.parse((await cli(['--status', '--json'])).stdout) as { migrations: Array<{ name: string; status: string; appliedAt: string | null }>; pending: string[] };
    expect(status.pending).toEqual([]);
    const failing = status.migrations.find((migration) => migration.name === FAILING)!;
    expect(failing.status).toBe('applied');
    expect(Date.parse(failing.appliedAt!)).toBeGreaterThanOrEqual(started);
    const upToDate = await cli(['--dry-run']);
    expect(upToDate.stdout).toMatch(/^Dry run: nothing to apply, the database .* is up to date \(\d+ migrations\)\.\n$/);
  }, 60_000);
});

describe('every statement of a migration runs in its transaction', () => {
  let database: TestDatabase;
  let sequelize: Sequelize;

  beforeAll(async () => {
    database = await createTestDatabase();
    sequelize = await openDatabase(database.url, logger);
  });
  afterAll(async () => {
    await sequelize?.close();
    await database?.drop();
  });

  it('up from an empty database, then down to 0027 and up again', async () => {
    const seen: Array<{ migration: string; sql: string; transaction: string | undefined }> = [];
    let current: string | undefined;
    const query = sequelize.query.bind(sequelize) as (sql: unknown, options?: { transaction?: Transaction | null }) => Promise<unknown>;
    (sequelize as unknown as { query: typeof query }).query = (sql, options) => {
      if (current) seen.push({ migration: current, sql: String(typeof sql === 'object' && sql && 'query' in sql ? sql.query : sql), transaction: (options?.transaction as { id?: string } | null | undefined)?.id });
      return query(sql, options);
    };
    const migrator = createMigrator(sequelize, logger);
    for (const event of ['migrating', 'reverting'] as const) migrator.on(event, ({ name }) => void (current = name));
    for (const event of ['migrated', 'reverted'] as const) migrator.on(event, () => void (current = undefined));
    await migrator.up();
    await migrator.down({ to: '0027-sms-campaign-reports-contacts' });
    await migrator.up();

    expect(new Set(seen.map((statement) => statement.migration)).size).toBe(knownMigrationNames().length);
    expect(seen.filter((statement) => !statement.transaction)).toEqual([]);
    // One transaction per run of a migration (a savepoint shares its transaction's id).
    const transactions = new Map<string, Set<string>>();
    for (const statement of seen) transactions.set(statement.migration, (transactions.get(statement.migration) ?? new Set()).add(statement.transaction!));
    expect(transactions.get('0001-municipalities')!.size).toBe(1);
    expect(transactions.get('0028-chat-inbox')!.size).toBe(3); // up, down, up
  }, 120_000);
});

describe("0028's rebuild of sms_messages (SQLite) keeps the rows that reference them", () => {
  let database: TestDatabase;
  let sequelize: Sequelize;

  beforeAll(async () => {
    database = await createTestDatabase();
    sequelize = await openDatabase(database.url, logger);
    await createMigrator(sequelize, logger).up({ to: FAILING });
  });
  afterAll(async () => {
    await sequelize?.close();
    await database?.drop();
  });

  /** Inserts a row, filling each required column without a default with a plain value (or `values`). */
  async function insert(table: string, values: Record<string, unknown> = {}): Promise<number> {
    const columns = await sequelize.getQueryInterface().describeTable(table);
    const row: Record<string, unknown> = {};
    for (const [column, description] of Object.entries(columns)) {
      if (column in values) row[column] = values[column];
      else if (description.allowNull || description.defaultValue !== undefined && description.defaultValue !== null || (column === 'id' && description.primaryKey)) continue;
      else if (/INT|DOUBLE|REAL|NUMERIC|DECIMAL|FLOAT/i.test(description.type)) row[column] = 1;
      else if (/BOOL/i.test(description.type)) row[column] = false;
      else if (/DATE|TIME/i.test(description.type) && !/DATEONLY/i.test(description.type)) row[column] = new Date();
      else row[column] = `${column.slice(0, 3)}${Math.floor(Math.random() * 1e6)}`;
    }
    await sequelize.getQueryInterface().bulkInsert(table, [row]);
    const [last] = await sequelize.query<{ id: number }>(`SELECT MAX(id) AS id FROM ${table}`, { type: QueryTypes.SELECT });
    return Number(last!.id);
  }

  it('the send attempts of existing messages survive, and foreign keys are enforced again after', async () => {
    const user = await insert('users');
    const entity = await insert('entities', { created_by: user });
    const credential = await insert('sms_credentials', { entity_id: entity, created_by: user });
    const campaign = await insert('sms_campaigns', { credential_id: credential, created_by: user, entity_id: entity });
    const message = await insert('sms_messages', { campaign_id: campaign });
    await insert('sms_send_attempts', { message_id: message });

    await migrate(sequelize, logger);
    const attempts = await sequelize.query('SELECT message_id FROM sms_send_attempts', { type: QueryTypes.SELECT });
    expect(attempts).toEqual([{ message_id: message }]);
    expect((await sequelize.getQueryInterface().describeTable('sms_messages')).campaign_id!.allowNull).toBe(true);
    await expect(insert('sms_send_attempts', { message_id: 999999 })).rejects.toThrow(/foreign key/i);

    // The down steps that remove a column of a referenced table (0038, 0036, 0035, 0033, 0027, 0013,
    // 0012: on SQLite, rebuilds) keep the rows that reference it.
    const count = async (table: string) => Number((await sequelize.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`, { type: QueryTypes.SELECT }))[0]!.n);
    await createMigrator(sequelize, logger).down({ to: '0014-sms-opt-out-scopes' });
    expect(await count('sms_send_attempts')).toBe(1);
    await createMigrator(sequelize, logger).down({ to: '0012-entity-versions' });
    for (const table of ['users', 'entities', 'sms_credentials', 'sms_campaigns', 'sms_messages']) expect(await count(table), table).toBe(1);
    await migrate(sequelize, logger);
    expect(await count('sms_messages')).toBe(1);
  }, 60_000);

  it('an in-memory SQLite database (one shared connection) gets its enforcement back', async () => {
    const memory = await openDatabase('sqlite::memory:', logger);
    try {
      await migrate(memory, logger);
      const [state] = await memory.query<{ foreign_keys: number }>('PRAGMA foreign_keys', { type: QueryTypes.SELECT });
      expect(state!.foreign_keys).toBe(1);
    } finally {
      await memory.close();
    }
  }, 60_000);
});
