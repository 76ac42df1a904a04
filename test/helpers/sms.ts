/** SMS records written directly, for tests that run the send job or the sweeps by hand. */
import { randomBytes, randomInt } from 'node:crypto';
import type { JobAttempt } from '../../src/jobs/index.js';
import type { TestApp } from './app.js';

/**
 * Fresh Brazilian mobile numbers in E.164 under `prefix` (`+5521986`; one per test file, so files running
 * at once on one database never share a number), unique within a run and unlikely to repeat an earlier run's.
 */
export function recipientSource(prefix: string): (count: number) => string[] {
  const run = String(randomInt(1000)).padStart(3, '0');
  let numbers = 0;
  return (count) => Array.from({ length: count }, () => `${prefix}${run}${String((numbers += 1)).padStart(3, '0')}`);
}

/** A message body no earlier run sent (the simulator and the provider's list tell runs apart by it). */
export const freshBody = (label: string): string => `${label} ${randomBytes(3).toString('hex')}`;

/** Try `n` of a send job run by hand. */
export const attempt = (n: number, lastAttempt = false): JobAttempt => ({ id: 'by-hand', attempt: n, lastAttempt });

export interface StoredCampaign {
  credentialId: number;
  createdBy: number;
  body: string;
  recipients: string[];
  titulo?: string;
  /** When it was created, and its messages last touched (now by default). */
  createdAt?: Date;
  /** When its jobs were queued; null (the default) as for a campaign whose jobs never were. */
  jobsEnqueuedAt?: Date | null;
}

/** A campaign with one queued message per recipient, stored as createCampaign stores it, with no job queued. */
export async function storeCampaign(app: Pick<TestApp, 'sms'>, campaign: StoredCampaign): Promise<{ campaignId: number; messageIds: number[] }> {
  const createdAt = campaign.createdAt ?? new Date();
  // As Sms.createCampaign writes it: the campaign belongs to its credential's entity.
  const credential = await app.sms.models.Credential.findByPk(campaign.credentialId, { attributes: ['entity_id'], raw: true });
  const row = await app.sms.models.Campaign.create({
    entity_id: (credential as { entity_id: number | null } | null)?.entity_id ?? null,
    state: campaign.jobsEnqueuedAt ? 'sending' : 'queued',
    titulo: campaign.titulo ?? 'Direta',
    credential_id: campaign.credentialId,
    body: campaign.body,
    encoding: 'GSM-7',
    segments: 1,
    accepted: campaign.recipients.length,
    rejected: 0,
    opted_out_skipped: 0,
    created_by: campaign.createdBy,
    created_at: createdAt,
    jobs_enqueued_at: campaign.jobsEnqueuedAt ?? null,
  });
  const campaignId = Number(row.get('id'));
  const messageIds: number[] = [];
  for (const recipient of campaign.recipients) {
    const message = await app.sms.models.Message.create({ campaign_id: campaignId, recipient, status: 'queued', updated_at: createdAt });
    messageIds.push(Number(message.get('id')));
  }
  return { campaignId, messageIds };
}

/**
 * Keeps entities in SMS compliance mode `warn`, as migration 0033 did for every entity that existed before
 * it (a row updated by nobody): for tests of sending that are not about the electoral rules, since a new
 * entity starts in `enforce` (issue 42) and their numbers have no consent on record.
 */
export async function keepWarnMode(app: Pick<TestApp, 'sms'>, ...entityIds: number[]): Promise<void> {
  for (const entityId of entityIds) {
    await app.sms.models.Compliance.upsert({ entity_id: entityId, mode: 'warn', window_starts_on: null, window_ends_on: null, updated_by: null, updated_at: new Date() });
  }
}
