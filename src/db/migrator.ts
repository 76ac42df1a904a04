/**
 * Schema changes are migrations, applied in order and recorded in the `migrations` table by umzug; the
 * server never calls sync(). Migrations are listed here (not globbed) so they work from src/ and dist/.
 */
import { Umzug, SequelizeStorage } from 'umzug';
import type { Sequelize } from 'sequelize';
import type { Logger } from '../logger.js';
import { withLocks } from './locks.js';
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

const migrations = [municipalities, idempotencyKeys, jobs, accounts, entities, researchNews, monitorsScenarios, socialnetRemovals, sms, oauthElections, snapshotTimes, entityVersions, smsSendAttempts, smsOptOutScopes, oauthPendingLinks, socialnetDeliveries, loginFailuresPending, guardianshipCreators, memberCounts, apiTokenDevices, emailConfirmations, auditEvents, teamInvitations, editHistory, accountDeletion, courtElections, smsCampaignReportsContacts, chatInbox, messengerInbox, notificationsWebhooks];

export function createMigrator(sequelize: Sequelize, logger: Logger) {
  return new Umzug({
    migrations: migrations.map(({ name, up, down }) => ({ name, up, down })),
    context: sequelize.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize, tableName: 'migrations' }),
    logger: {
      info: (event) => logger.info(event, 'migration'),
      warn: (event) => logger.warn(event, 'migration'),
      error: (event) => logger.error(event, 'migration'),
      debug: (event) => logger.debug(event, 'migration'),
    },
  });
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
