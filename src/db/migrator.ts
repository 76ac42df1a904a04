/**
 * Schema changes are migrations, applied in order by umzug and recorded in the `migrations` table; the
 * server never calls sync(). Migrations are listed here (not globbed) so they work from src/ and dist/.
 * Each runs in one transaction with its record (migration-transaction.ts): a failure leaves the schema
 * at the previous migration.
 */
import { Umzug, type UmzugStorage } from 'umzug';
import type { Sequelize } from 'sequelize';
import type { Logger } from '../logger.js';
import { withLocks } from './locks.js';
import { appliedMigrations, runMigration, type MigrationModule } from './migration-transaction.js';
import * as municipalities from './migrations/0001-municipalities.js';
import * as idempotencyKeys from './migrations/0002-idempotency-keys.js';
import * as jobs from './migrations/0003-jobs.js';
import * as accounts from './migrations/0004-accounts.js';
import * as entities from './migrations/0005-entities.js';
import * as researchNews from './migrations/0006-research-news.js';
import * as monitorsScenarios from './migrations/0007-monitors-scenarios.js';
import * as socialnetRemovals from './migrations/0008-socialnet-removals.js';
import * as sms from './migrations/0009-sms.js';
import * as oauthElections from './migrations/0010-oauth-elections.js';
import * as snapshotTimes from './migrations/0011-snapshot-times.js';
import * as entityVersions from './migrations/0012-entity-versions.js';
import * as smsSendAttempts from './migrations/0013-sms-send-attempts.js';
import * as smsOptOutScopes from './migrations/0014-sms-opt-out-scopes.js';
import * as oauthPendingLinks from './migrations/0015-oauth-pending-links.js';
import * as socialnetDeliveries from './migrations/0016-socialnet-deliveries.js';
import * as loginFailuresPending from './migrations/0017-login-failures-pending.js';
import * as guardianshipCreators from './migrations/0018-guardianship-creators.js';
import * as memberCounts from './migrations/0019-member-counts.js';
import * as apiTokenDevices from './migrations/0020-api-token-devices.js';
import * as emailConfirmations from './migrations/0021-email-confirmations.js';
import * as auditEvents from './migrations/0022-audit-events.js';
import * as teamInvitations from './migrations/0023-team-invitations.js';
import * as editHistory from './migrations/0024-edit-history.js';
import * as accountDeletion from './migrations/0025-account-deletion.js';
import * as courtElections from './migrations/0026-court-elections.js';
import * as smsCampaignReportsContacts from './migrations/0027-sms-campaign-reports-contacts.js';
import * as chatInbox from './migrations/0028-chat-inbox.js';
import * as messengerInbox from './migrations/0029-messenger-inbox.js';
import * as notificationsWebhooks from './migrations/0030-notifications-webhooks.js';
import * as loginDevices from './migrations/0031-login-devices.js';
import * as electionCalendar from './migrations/0032-election-calendar.js';
import * as smsComplianceEnforceDefault from './migrations/0033-sms-compliance-enforce-default.js';
import * as smsSuppressions from './migrations/0034-sms-suppressions.js';
import * as smsNotMobile from './migrations/0035-sms-not-mobile.js';
import * as contactConsentRetention from './migrations/0036-contact-consent-retention.js';
import * as registeredParties from './migrations/0037-registered-parties.js';
import * as smsSyntheticContent from './migrations/0038-sms-synthetic-content.js';
import * as webhookTraceContext from './migrations/0041-webhook-trace-context.js';

const migrations: MigrationModule[] = [municipalities, idempotencyKeys, jobs, accounts, entities, researchNews, monitorsScenarios, socialnetRemovals, sms, oauthElections, snapshotTimes, entityVersions, smsSendAttempts, smsOptOutScopes, oauthPendingLinks, socialnetDeliveries, loginFailuresPending, guardianshipCreators, memberCounts, apiTokenDevices, emailConfirmations, auditEvents, teamInvitations, editHistory, accountDeletion, courtElections, smsCampaignReportsContacts, chatInbox, messengerInbox, notificationsWebhooks, loginDevices, electionCalendar, smsComplianceEnforceDefault, smsSuppressions, smsNotMobile, contactConsentRetention, registeredParties, smsSyntheticContent, webhookTraceContext];

/** The names of the migrations this build knows, in order (readiness checks that each is applied). */
export function knownMigrationNames(): string[] {
  return migrations.map(({ name }) => name);
}

export function createMigrator(sequelize: Sequelize, logger: Logger) {
  return new Umzug({
    // Each step is its migration in its own transaction, its record written in it (so the storage's log
    // and unlog have nothing left to do). A migration may log what it did to the data (0033 does).
    migrations: migrations.map((migration) => ({
      name: migration.name,
      up: () => runMigration(sequelize, migration, 'up', logger),
      down: () => runMigration(sequelize, migration, 'down', logger),
    })),
    storage: migrationsTable(sequelize),
    logger: {
      info: (event) => logger.info(event, 'migration'),
      warn: (event) => logger.warn(event, 'migration'),
      error: (event) => logger.error(event, 'migration'),
      debug: (event) => logger.debug(event, 'migration'),
    },
  });
}

/** The `migrations` table as umzug's storage: read without creating it; written by runMigration. */
function migrationsTable(sequelize: Sequelize): UmzugStorage {
  return {
    executed: async () => (await appliedMigrations(sequelize)).map((migration) => migration.name),
    logMigration: async () => undefined,
    unlogMigration: async () => undefined,
  };
}

export interface MigrationState {
  name: string;
  status: 'applied' | 'pending';
  /** When it was applied, if recorded (migrations applied before issue 43 have no time). */
  appliedAt: string | null;
}

export interface MigrationStatus {
  /** Every migration this build knows, in order. */
  migrations: MigrationState[];
  /** The names of the pending ones, in the order they would run. */
  pending: string[];
  /** Applied migrations this build does not know: the database was migrated by a newer version. */
  unknown: string[];
}

/** Which migrations are applied and which pending; reads only (an empty database stays empty). */
export async function migrationStatus(sequelize: Sequelize): Promise<MigrationStatus> {
  const applied = new Map((await appliedMigrations(sequelize)).map((migration) => [migration.name, migration.appliedAt]));
  const known = knownMigrationNames();
  const states = known.map((name): MigrationState => (applied.has(name) ? { name, status: 'applied', appliedAt: applied.get(name) ?? null } : { name, status: 'pending', appliedAt: null }));
  return {
    migrations: states,
    pending: states.filter((state) => state.status === 'pending').map((state) => state.name),
    unknown: [...applied.keys()].filter((name) => !known.includes(name)),
  };
}

/** The status for people: one line per migration, then what is pending. */
export function formatMigrationStatus(status: MigrationStatus, database: string): string {
  const lines = status.migrations.map((state) => `  ${state.status === 'applied' ? 'applied' : 'pending'}  ${state.name}${state.appliedAt ? `  (${state.appliedAt})` : ''}`);
  for (const name of status.unknown) lines.push(`  unknown  ${name}  (applied, but not in this version)`);
  const summary =
    status.pending.length === 0
      ? `The database ${database} is up to date (${status.migrations.length} migrations).`
      : `${status.pending.length} pending migration(s) on ${database}: palanque db migrate (or npm run db:migrate) applies them.`;
  return `${lines.join('\n')}\n${summary}\n`;
}

/** What a dry run says: the migrations that would run, in order; nothing is changed. */
export function formatDryRun(status: MigrationStatus, database: string): string {
  if (status.pending.length === 0) return `Dry run: nothing to apply, the database ${database} is up to date (${status.migrations.length} migrations).\n`;
  return `Dry run: would apply ${status.pending.length} migration(s) to ${database}, in this order, each in its own transaction (nothing was changed):\n${status.pending.map((name) => `  ${name}\n`).join('')}`;
}

/**
 * Applies every pending migration; returns the names applied. Several instances starting together on
 * one PostgreSQL database take turns (an advisory lock held while one migrates): the first applies the
 * pending migrations, the others then find none left.
 */
export async function migrate(sequelize: Sequelize, logger: Logger): Promise<string[]> {
  return withLocks(sequelize, ['palanque:migrations'], async () => {
    const applied = await createMigrator(sequelize, logger).up();
    return applied.map((migration) => migration.name);
  });
}
