/** SMS records written directly, for tests that run the send job or the sweeps by hand. */
import type { TestApp } from './app.js';

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
