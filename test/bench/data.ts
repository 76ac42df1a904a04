/**
 * The benchmark's data: one database per dialect, prepared once and copied for every server measured,
 * so that what one server writes (logins, SMS campaigns and their jobs) never reaches another.
 *
 * - the 5,570 municipalities;
 * - an admin, a user who only logs in, and three team owners whose teams hold 1,000, 10,000 and
 *   100,000 entities (the entity list's base size and its 10x and 100x);
 * - a monitor on an entity of the smallest team with 1 year of daily snapshots, and two more with 10 and
 *   100 years (the monitor data's base size and its 10x and 100x);
 * - on that entity, CAMPAIGNS finished SMS campaigns of 10 messages each and a last one of 10,000 (the
 *   campaign list and a campaign's report, issue 23).
 *
 * Bulk rows are written with INSERT ... SELECT over a recursive sequence, which both databases run; going
 * through the API would take hours for 100,000 entities.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import pg from 'pg';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createAccounts } from '../../src/accounts/index.js';
import { openDatabase, dialectOf } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrator.js';
import { createMailer } from '../../src/mail/mailer.js';
import { defineMonitorModels } from '../../src/monitors/models.js';
import { MonitorStore } from '../../src/monitors/store.js';
import { importMunicipalities } from '../../src/municipalities/import.js';
import { importCandidacies } from '../../src/elections/tse/import.js';
import { storeCampaignTally } from '../../src/messaging/campaign-reports.js';
import { defineSmsModels } from '../../src/messaging/models.js';
import { generateCandidacies, writeCourtCsv } from '../helpers/court-files.js';

/** Team sizes and snapshot histories, in the order base, 10x, 100x. */
export const TEAM_SIZES = [1_000, 10_000, 100_000] as const;
export const HISTORY_YEARS = [1, 10, 100] as const;

export const BENCH_PASSWORD = `bench-${randomBytes(9).toString('base64url')}`;

export interface BenchData {
  /** Logins of the admin, the user who logs in in the login benchmark, and the owners by team size. */
  admin: string;
  loginUser: string;
  owners: string[];
  /** The monitors by history length, and the entity of the first (where the SMS credential goes). */
  monitorIds: number[];
  entityId: number;
  /** The entity's latest SMS campaign, of CAMPAIGN_MESSAGES messages. */
  campaignId: number;
  /** A cursor of the entity's inbox 10 changes before its latest (issue 24). */
  inboxCursor: number;
  /** The import of a generated candidacy file of COURT_FILE_ROWS lines (issue 22): how long it took. */
  candidacyImport: { rows: number; seconds: number; rowsPerSecond: number };
}

/** The entity's SMS campaigns before its latest, and the latest one's messages. */
export const CAMPAIGNS = 300;
export const CAMPAIGN_MESSAGES = 10_000;
/** Conversations in the entity's inbox, of CONVERSATION_MESSAGES inbound messages each (issue 24). */
export const CONVERSATIONS = 500;
export const CONVERSATION_MESSAGES = 4;

/** Lines of the generated candidacy file the bench imports (issue 22 asks for the rate on 100,000). */
export const COURT_FILE_ROWS = 100_000;

const silent = pino({ level: 'silent' });

export async function prepareDatabase(url: string, municipiosSource: string): Promise<BenchData> {
  const sequelize = await openDatabase(url, silent);
  try {
    await migrate(sequelize, silent);
    await importMunicipalities(sequelize, { source: municipiosSource, sha256: '' });
    const accounts = createAccounts(
      sequelize,
      // The login user's hash has the production cost, so the login benchmark measures what production does.
      { tokenLifetimeMs: 24 * 3600_000, loginLock: { maxFailures: 5, addressMaxFailures: 100, maxDelayMs: 30_000, windowMs: 900_000 }, passwordResetLifetimeMs: 1_800_000, passwordHashCost: 17 },
      createMailer({ smtpUrl: undefined, from: 'bench@palanque.test', directory: '/tmp' }, silent),
      silent,
    );
    const user = (username: string, is_admin = false) =>
      accounts.users.create({ username, email: `${username}@bench.palanque.test`, password: BENCH_PASSWORD, is_admin });
    await user('bench-admin', true);
    await user('bench-login');
    const owners: string[] = [];
    const ownerIds: number[] = [];
    for (const size of TEAM_SIZES) {
      const owner = await user(`owner-${size}`);
      owners.push(owner.username);
      ownerIds.push(owner.id);
      await insertEntities(sequelize, owner.id, size);
    }
    const entityId = await firstEntityOf(sequelize, ownerIds[0]!);
    const monitorIds = [];
    for (const years of HISTORY_YEARS) monitorIds.push(await createMonitorWithHistory(sequelize, entityId, ownerIds[0]!, years));
    const campaignId = await createCampaignHistory(sequelize, entityId, ownerIds[0]!);
    const inboxCursor = await createInboxHistory(sequelize, entityId);
    const candidacyImport = await timeCandidacyImport(sequelize);
    // Statistics and (on PostgreSQL) the visibility map as a settled database has them: right after a bulk
    // insert the planner misjudges the teams' sizes and a count cannot read the index alone.
    await sequelize.query(sequelize.getDialect() === 'postgres' ? 'VACUUM ANALYZE' : 'ANALYZE');
    return { admin: 'bench-admin', loginUser: 'bench-login', owners, monitorIds, entityId, campaignId, inboxCursor, candidacyImport };
  } finally {
    await sequelize.close();
  }
}

/** Imports a generated file of COURT_FILE_ROWS candidacies (the court's layout, Latin-1) as `npm run elections:import` does. */
async function timeCandidacyImport(sequelize: Sequelize): Promise<BenchData['candidacyImport']> {
  const dir = await mkdtemp(join(tmpdir(), 'palanque-bench-court-'));
  try {
    const file = join(dir, 'consulta_cand_2024_SP.csv');
    await writeCourtCsv(file, generateCandidacies(COURT_FILE_ROWS));
    const started = performance.now();
    const report = await importCandidacies(sequelize, { source: file, allowedHosts: [] });
    const seconds = (performance.now() - started) / 1000;
    if (report.inserted !== COURT_FILE_ROWS) throw new Error(`The bench's candidacy file imported ${report.inserted} of ${COURT_FILE_ROWS} rows: ${JSON.stringify(report.rejections.slice(0, 3))}`);
    return { rows: COURT_FILE_ROWS, seconds: Math.round(seconds * 10) / 10, rowsPerSecond: Math.round(COURT_FILE_ROWS / seconds) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A fresh copy of a prepared database: a file copy on SQLite, `CREATE DATABASE ... TEMPLATE` on PostgreSQL. */
export async function copyDatabase(url: string, copyName: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (dialectOf(url) === 'sqlite') {
    const file = url.slice('sqlite:'.length);
    const copy = file.replace(/\.sqlite$/, `-${copyName}.sqlite`);
    await copyFile(file, copy);
    return { url: `sqlite:${copy}`, drop: async () => undefined };
  }
  const source = new URL(url);
  const copy = new URL(url);
  copy.pathname = `/${source.pathname.slice(1)}_${copyName}`;
  await adminQuery(url, `CREATE DATABASE ${copy.pathname.slice(1)} TEMPLATE ${source.pathname.slice(1)}`);
  return { url: copy.toString(), drop: () => adminQuery(url, `DROP DATABASE IF EXISTS ${copy.pathname.slice(1)} WITH (FORCE)`) };
}

/** Creates (or drops) a PostgreSQL database, connected to the server's `postgres` database. */
export async function adminQuery(url: string, sql: string): Promise<void> {
  const server = new URL(url);
  server.pathname = '/postgres';
  const client = new pg.Client({ connectionString: server.toString() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function insertEntities(sequelize: Sequelize, ownerId: number, count: number): Promise<void> {
  const now = timestampParameter(sequelize);
  await sequelize.query(
    `INSERT INTO entities (tp, owner_id, nome, nm_urna, nr_urna, partido, uf, cidade, created_at, updated_at)
     WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < :count)
     SELECT 'candidato', :ownerId, 'Candidata ' || n, 'Candidata ' || n, 13123, '13', 'SP', 'São Paulo', ${now}, ${now} FROM seq`,
    { replacements: { count, ownerId, now: new Date() } },
  );
  await sequelize.query(
    `INSERT INTO entity_members (entity_id, user_id, role, added_at) SELECT id, owner_id, 'owner', created_at FROM entities WHERE owner_id = :ownerId`,
    { replacements: { ownerId } },
  );
}

async function firstEntityOf(sequelize: Sequelize, ownerId: number): Promise<number> {
  const [row] = await sequelize.query<{ id: number }>('SELECT MIN(id) AS id FROM entities WHERE owner_id = :ownerId', {
    replacements: { ownerId },
    type: QueryTypes.SELECT,
  });
  return Number(row!.id);
}

/** A monitor with one instagram snapshot a day for `years` years, up to today. */
async function createMonitorWithHistory(sequelize: Sequelize, entityId: number, createdBy: number, years: number): Promise<number> {
  const store = new MonitorStore(defineMonitorModels(sequelize));
  const monitor = await store.create({
    entityId,
    name: `Redes oficiais (${years} ${years === 1 ? 'ano' : 'anos'})`,
    keywords: ['Candidata 1'],
    profiles: [{ nm_rede: 'instagram', username: `candidata1_${years}`, link: `https://www.instagram.com/candidata1_${years}` }],
    createdBy,
  });
  if (monitor === 'name_taken') throw new Error('monitor name taken');
  const days = Math.round(years * 365);
  const today = new Date();
  today.setUTCHours(12, 0, 0, 0);
  const sqlite = sequelize.getDialect() === 'sqlite';
  // The day of each snapshot: today minus n days, computed by each database its own way.
  const takenAt = sqlite ? `strftime('%Y-%m-%d %H:%M:%f +00:00', :today, '-' || n || ' days')` : `CAST(:today AS timestamptz) - n * INTERVAL '1 day'`;
  const now = timestampParameter(sequelize);
  await sequelize.query(
    `INSERT INTO metric_snapshots (monitor_id, network, taken_at, followers, posts, engagement, mentions, source, received_at)
     WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < :last)
     SELECT :monitorId, 'instagram', ${takenAt}, 50000 - n, 2000 - (n % 2000), 0.04, 300 + (n % 50), 'import', ${now} FROM seq`,
    { replacements: { last: days - 1, monitorId: monitor.id, today: sqlite ? today.toISOString() : today, now: new Date() } },
  );
  return monitor.id;
}

/**
 * CAMPAIGNS finished campaigns of 10 messages each on the entity, then one of CAMPAIGN_MESSAGES messages
 * in every final status, priced as the provider reports them; returns the last one's id. The credential
 * is written directly: its secret is never opened, since nothing here is sent.
 */
async function createCampaignHistory(sequelize: Sequelize, entityId: number, createdBy: number): Promise<number> {
  const now = timestampParameter(sequelize);
  const replacements = { entityId, createdBy, now: new Date(), last: CAMPAIGNS, messages: CAMPAIGN_MESSAGES };
  await sequelize.query(
    `INSERT INTO sms_credentials (name, provider, account_id, sender_id, secret_sealed, entity_id, created_by, created_at)
     VALUES ('Campanha (histórico)', 'provider', 'AC00000000000000000000000000000001', '+5511940028923', 'not-sealed', :entityId, :createdBy, ${now})`,
    { replacements },
  );
  const [credential] = await sequelize.query<{ id: number }>(`SELECT id FROM sms_credentials WHERE sender_id = '+5511940028923'`, { type: QueryTypes.SELECT });
  await sequelize.query(
    `INSERT INTO sms_campaigns (titulo, credential_id, body, encoding, segments, accepted, rejected, opted_out_skipped, created_by, created_at, jobs_enqueued_at, entity_id, state, finished_at)
     WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < :last + 1)
     SELECT 'Lembrete ' || n, :credentialId, 'Comício amanhã às 18h na praça.', 'UCS-2', 1, CASE WHEN n > :last THEN :messages ELSE 10 END, 0, 0, :createdBy, ${now}, ${now}, :entityId, 'completed', ${now} FROM seq`,
    { replacements: { ...replacements, credentialId: Number(credential!.id) } },
  );
  const [latest] = await sequelize.query<{ id: number }>('SELECT MAX(id) AS id FROM sms_campaigns WHERE entity_id = :entityId', { replacements, type: QueryTypes.SELECT });
  const campaignId = Number(latest!.id);
  const statuses = `CASE n % 10 WHEN 0 THEN 'failed' WHEN 1 THEN 'undelivered' WHEN 2 THEN 'sent' ELSE 'delivered' END`;
  const phone = `'+55119' || CAST(10000000 + n AS VARCHAR(8))`;
  await sequelize.query(
    `INSERT INTO sms_messages (campaign_id, recipient, status, provider_sid, updated_at, send_attempts, price, price_unit)
     WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < :messages)
     SELECT :campaignId, ${phone}, ${statuses}, 'SMbench' || n, ${now}, 1, '-0.0075', 'USD' FROM seq`,
    { replacements: { ...replacements, campaignId } },
  );
  await sequelize.query(
    `INSERT INTO sms_messages (campaign_id, recipient, status, provider_sid, updated_at, send_attempts)
     WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < :last * 10)
     SELECT c.id, ${phone}, 'delivered', 'SMhist' || n, ${now}, 1 FROM seq JOIN sms_campaigns c ON c.titulo = 'Lembrete ' || ((n - 1) / 10 + 1) AND c.entity_id = :entityId`,
    { replacements },
  );
  // Tallied as a campaign that finished is (campaign-reports.ts).
  const sms = defineSmsModels(sequelize);
  const campaigns = await sequelize.query<{ id: number }>('SELECT id FROM sms_campaigns WHERE entity_id = :entityId', { replacements, type: QueryTypes.SELECT });
  for (const { id } of campaigns) await storeCampaignTally(sms, Number(id));
  return campaignId;
}

/**
 * CONVERSATIONS conversations with the campaign credential's voters, each of CONVERSATION_MESSAGES
 * inbound messages and their changes, as replies leave them (src/chat/); returns a cursor 10 changes
 * before the latest.
 */
async function createInboxHistory(sequelize: Sequelize, entityId: number): Promise<number> {
  const now = timestampParameter(sequelize);
  const [credential] = await sequelize.query<{ id: number }>(`SELECT id FROM sms_credentials WHERE sender_id = '+5511940028923'`, { type: QueryTypes.SELECT });
  const replacements = { entityId, credentialId: Number(credential!.id), now: new Date(), conversations: CONVERSATIONS, messages: CONVERSATIONS * CONVERSATION_MESSAGES, perConversation: CONVERSATION_MESSAGES };
  await sequelize.query(
    `INSERT INTO conversations (entity_id, channel, credential_id, participant, unread_count, created_at, last_message_at)
     WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < :conversations)
     SELECT :entityId, 'sms', :credentialId, '+55219' || CAST(10000000 + n AS VARCHAR(8)), n % 3, ${now}, ${now} FROM seq`,
    { replacements },
  );
  await sequelize.query(
    `INSERT INTO conversation_messages (conversation_id, direction, body, external_id, created_at)
     WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < :messages)
     SELECT c.id, 'in', 'Onde vai ser o comício? (' || n || ')', 'SMinbox' || n, ${now} FROM seq
     JOIN conversations c ON c.credential_id = :credentialId AND c.participant = '+55219' || CAST(10000000 + ((n - 1) / :perConversation + 1) AS VARCHAR(8))`,
    { replacements },
  );
  await sequelize.query(
    `UPDATE conversations SET last_message_id = (SELECT MAX(m.id) FROM conversation_messages m WHERE m.conversation_id = conversations.id) WHERE credential_id = :credentialId`,
    { replacements },
  );
  await sequelize.query(
    `INSERT INTO inbox_changes (entity_id, conversation_id, message_id, kind, created_at)
     SELECT :entityId, m.conversation_id, m.id, 'message', ${now} FROM conversation_messages m JOIN conversations c ON c.id = m.conversation_id
     WHERE c.credential_id = :credentialId ORDER BY m.id`,
    { replacements },
  );
  const [latest] = await sequelize.query<{ id: number }>('SELECT MAX(id) AS id FROM inbox_changes WHERE entity_id = :entityId', { replacements, type: QueryTypes.SELECT });
  return Number(latest!.id) - 10;
}

/** `:now` as a timestamp: PostgreSQL needs the cast in a SELECT list, and SQLite would turn it into a number. */
function timestampParameter(sequelize: Sequelize): string {
  return sequelize.getDialect() === 'postgres' ? 'CAST(:now AS timestamptz)' : ':now';
}
