/**
 * The domains built on the accounts and the job queue, assembled in one place for the server and the
 * tests, with their background jobs registered: one list of what the app is made of.
 */
import type { Sequelize } from 'sequelize';
import type { Accounts } from './accounts/index.js';
import type { AppDependencies } from './app.js';
import type { Config } from './config.js';
import { createElectionsPanelSyncs, type ElectionsSettings } from './elections/index.js';
import { CourtImports } from './elections/tse/imports.js';
import { DEFAULT_ELECTIONS_IMPORT_HOSTS } from './elections/settings.js';
import { DEFAULT_SOCIALNET_GRAPH } from './socialnet/settings.js';
import { createEntities } from './entities/index.js';
import type { InvitationSettings } from './entities/invitations.js';
import type { JobQueue } from './jobs/index.js';
import type { Logger } from './logger.js';
import { createInbox } from './chat/index.js';
import { Contacts, createSms, type MessagingSettings } from './messaging/index.js';
import type { SmsCounts } from './messaging/counted-provider.js';
import { calendarCertificationLookup, ContactRetention, type CertificationLookup } from './messaging/contact-retention.js';
import { createMonitors } from './monitors/index.js';
import { createNotificationCenter } from './notifications/index.js';
import { announceEvents } from './notifications/announcements.js';
import type { LookupAll, OutboundPolicy } from './webhooks/outbound-http.js';
import { DEFAULT_WEBHOOK_SETTINGS } from './webhooks/settings.js';
import { Webhooks, type WebhookCounts } from './webhooks/webhooks.js';
import { createNewsSources } from './news/sources.js';
import { createSocialLinks, type OAuthSettings } from './oauth/index.js';
import { createResearchBookmarks } from './research/bookmarks.js';
import { SecretBox } from './security/secret-box.js';
import { createSeenDeliveries, createSocialnetRemovals } from './socialnet/index.js';
import { createStrategy } from './strategy/index.js';

export type Domains = Pick<
  AppDependencies,
  'entities' | 'monitors' | 'strategy' | 'socialnetRemovals' | 'socialnetDeliveries' | 'sms' | 'contactRetention' | 'inbox' | 'socialLinks' | 'electionsPanelSyncs' | 'courtImports' | 'researchBookmarks' | 'newsSources' | 'notificationCenter' | 'webhooks'
>;

/** The configuration the domains read (the server passes its Config). */
export interface DomainSettings
  extends MessagingSettings,
    OAuthSettings,
    ElectionsSettings,
    Pick<Config, 'newsMaxOpenRequests'>,
    Partial<Pick<Config, 'socialnetGraph' | 'vapid' | 'outbound' | 'webhooks'>> {
  /** Team invitations' lifetime and limit (defaults when unset: tests, the seed tool). */
  invitations?: InvitationSettings;
  /** HISTORY_RETENTION_DAYS, in milliseconds (five years when unset: tests, the seed tool). */
  historyRetentionMs?: number;
  /** How webhook and push endpoints' names are resolved (the system's DNS when unset; tests give a rebinding one). */
  lookupAll?: LookupAll;
  /** ELECTIONS_IMPORT_HOSTS (the court's open-data hosts when unset: tests, the seed tool). */
  electionsImportHosts?: readonly string[];
  /** CONTACT_RETENTION_DAYS_AFTER_CERTIFICATION (180 when unset: tests, the seed tool). */
  contactRetentionDaysAfterCertification?: number;
  /** The certification day of an entity's election (the election calendar's when unset; tests give a stub). */
  certificationLookup?: CertificationLookup;
  /** ELECTIONS_IMPORT_MAX_RECORD_BYTES (8 KiB when unset). */
  electionsImportMaxRecordBytes?: number;
}

export interface DomainDependencies {
  accounts: Accounts;
  jobs: JobQueue;
  logger: Logger;
  settings: DomainSettings;
  /** What the domains count for GET /metrics (the server's Metrics); nothing counted when absent. */
  counts?: SmsCounts & WebhookCounts;
}

/** Where webhooks and pushes may go when the settings do not say (tests, the seed tool): public https and http addresses. */
const DEFAULT_OUTBOUND: OutboundPolicy = { allowHttp: true, allowPrivateAddresses: false, timeoutMs: 10_000 };

export async function createDomains(sequelize: Sequelize, { accounts, jobs, logger, settings, counts }: DomainDependencies): Promise<Domains> {
  const notificationCenter = createNotificationCenter(sequelize, { vapid: settings.vapid, outbound: settings.outbound ?? DEFAULT_OUTBOUND, lookupAll: settings.lookupAll }, { jobs, logger });
  const entities = createEntities(sequelize, { invitations: settings.invitations, historyRetentionMs: settings.historyRetentionMs }, { mailer: accounts.mailer, logger, audit: accounts.audit });
  // Under SIGNUP=invite, an open invitation's token admits the sign-up of its address.
  accounts.signUps.admitInvitationsWith(entities.invitations);
  const monitors = createMonitors(sequelize, entities.teams, notificationCenter.notifications, logger);
  const strategy = createStrategy(sequelize, { monitors, entities, jobs, logger });
  const socialnetRemovals = createSocialnetRemovals(sequelize, { accounts: accounts.models, entities: entities.models, jobs });
  const sms = createSms(sequelize, settings, { jobs, teams: entities.teams, logger, counts });
  const contactRetention = new ContactRetention({
    sequelize,
    models: sms.models,
    contacts: new Contacts(sms.models, sms.optOuts),
    notifications: notificationCenter.notifications,
    audit: accounts.audit,
    lookup: settings.certificationLookup ?? calendarCertificationLookup(sequelize),
    retentionDays: settings.contactRetentionDaysAfterCertification ?? 180,
    jobs,
    logger,
  });
  const electionsPanelSyncs = createElectionsPanelSyncs(sequelize, settings, { jobs, entities, logger });
  // It hears the replies SMS receives and the statuses of the ones it sends, and the messenger's webhook.
  const inbox = createInbox(sequelize, {
    sms,
    teams: entities.teams,
    jobs,
    logger,
    box: settings.secretsKey ? SecretBox.fromKey(settings.secretsKey) : undefined,
    graph: settings.socialnetGraph ?? DEFAULT_SOCIALNET_GRAPH,
    sendTimeoutMs: settings.smsSendTimeoutMs,
  });
  const courtImports = new CourtImports(sequelize, jobs, logger, {
    allowedHosts: settings.electionsImportHosts ?? DEFAULT_ELECTIONS_IMPORT_HOSTS,
    maxRecordBytes: settings.electionsImportMaxRecordBytes,
    allowPrivateAddresses: (settings.outbound ?? DEFAULT_OUTBOUND).allowPrivateAddresses,
    lookupAll: settings.lookupAll,
  });
  await strategy.registerRuns();
  await socialnetRemovals.registerJobs();
  await sms.registerJobs();
  await contactRetention.registerJobs();
  await inbox.messenger.registerJobs();
  await electionsPanelSyncs.registerJobs();
  await courtImports.registerJobs();
  await notificationCenter.push.registerJobs();
  const webhooks = new Webhooks(sequelize, {
    jobs,
    logger,
    notifications: notificationCenter.notifications,
    box: settings.secretsKey ? SecretBox.fromKey(settings.secretsKey) : undefined,
    outbound: settings.outbound ?? DEFAULT_OUTBOUND,
    settings: settings.webhooks ?? DEFAULT_WEBHOOK_SETTINGS,
    lookupAll: settings.lookupAll,
    counts,
  });
  await webhooks.registerJobs();
  announceEvents({
    publish: async (entityId, type, data) => void (await webhooks.publish(entityId, type, data)),
    sequelize,
    notifications: notificationCenter.notifications,
    campaigns: sms.reports,
    inbox: inbox.changes,
    strategy,
    invitations: entities.invitations,
    alerts: monitors.alerts,
    logger,
  });
  return {
    notificationCenter,
    webhooks,
    entities,
    monitors,
    strategy,
    socialnetRemovals,
    socialnetDeliveries: createSeenDeliveries(sequelize),
    sms,
    contactRetention,
    inbox,
    socialLinks: createSocialLinks(sequelize, accounts.models, settings),
    electionsPanelSyncs,
    courtImports,
    researchBookmarks: createResearchBookmarks(sequelize),
    newsSources: createNewsSources(sequelize, settings.newsMaxOpenRequests),
  };
}
