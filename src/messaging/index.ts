/** The messaging domain (SMS for now), assembled from the configuration. */
import type { Sequelize } from 'sequelize';
import type { Teams } from '../entities/teams.js';
import type { JobQueue } from '../jobs/index.js';
import type { PublicUrlSettings } from '../http/public-url.js';
import type { Logger } from '../logger.js';
import { SecretBox } from '../security/secret-box.js';
import { HttpSmsProvider, type SmsProvider } from './provider.js';
import { Sms } from './sms.js';
import { countedProvider, type SmsCounts } from './counted-provider.js';
import type { SmsEnvironmentSettings } from './settings.js';

export { smsHandlers, smsSignatureChecks } from './handlers.js';
export { smsCampaignHandlers } from './campaign-handlers.js';
export { complianceHandlers } from './compliance-handlers.js';
export { contactHandlers } from './contact-handlers.js';
export { Contacts } from './contacts.js';

export interface MessagingSettings
  extends Pick<SmsEnvironmentSettings, 'smsProviderUrl' | 'smsSendTimeoutMs' | 'smsMaxRecipients'>,
    Partial<Pick<SmsEnvironmentSettings, 'smsReceiptTimeoutMs'>>,
    PublicUrlSettings {
  /** SECRETS_KEY: seals the credentials' auth tokens. */
  secretsKey: string | undefined;
}

export function createSms(
  sequelize: Sequelize,
  settings: MessagingSettings,
  dependencies: { jobs: JobQueue; teams: Teams; logger: Logger; provider?: SmsProvider; counts?: SmsCounts },
): Sms {
  const { jobs, teams, logger } = dependencies;
  // Receipts need an address the provider can reach: without PUBLIC_URL, messages are sent without one.
  // Every send asks for them, resends included (sending.ts).
  const statusCallbackUrl = settings.publicUrl ? `${settings.publicUrl}${settings.basePath}/api/callback/provider_sms/` : undefined;
  if (!statusCallbackUrl) logger.warn('PUBLIC_URL is not set: SMS are sent without a delivery-receipt callback');
  return new Sms(sequelize, {
    jobs,
    teams,
    logger,
    // The adapter's name, as credentials record it (`provider`), labels its counts.
    provider: countedProvider(dependencies.provider ?? new HttpSmsProvider(settings.smsProviderUrl, { timeoutMs: settings.smsSendTimeoutMs }), 'provider', dependencies.counts),
    box: settings.secretsKey ? SecretBox.fromKey(settings.secretsKey) : undefined,
    statusCallbackUrl,
    sendTimeoutMs: settings.smsSendTimeoutMs,
    maxRecipients: settings.smsMaxRecipients,
    receiptTimeoutMs: settings.smsReceiptTimeoutMs,
  });
}
