/**
 * A campaign's messages sent in batches that take turns with other campaigns (issue 43).
 *
 * Fairness. A campaign has one job queued at a time (`sms-campaign-send`, data `{ campaign_id }`), not
 * one per message. A run takes the campaign's next CAMPAIGN_BATCH_SIZE messages never tried, claims them,
 * and, if the campaign may have more, queues the campaign's next batch job at the tail of the queue
 * before it calls the provider. So every campaign with messages to send has about one job in the queue,
 * and the queue serves them in turn: a 3-number campaign created while one of 100,000 is sending waits
 * for the batches already queued ahead of it (about one per campaign sending), never for the 100,000.
 * Canceling a campaign deletes its queued batch job (Sms.cancelCampaign); a batch run that started
 * before finds the campaign canceled, or its claims refused (sending.ts's claim), and queues no other.
 *
 * Throughput. A batch costs a few statements whatever its size: one read of its messages, one of their
 * opt-outs, one transaction claiming them all, the provider calls at once, one transaction recording
 * their outcomes. The provider's answer time, not ours, bounds the rate.
 *
 * Exactly once (sending.ts states the protocol, which this keeps). The claim is the protocol's step 2
 * for many messages at once: one UPDATE moves `send_attempts` from 0 to 1 only for messages still queued
 * and untried whose campaign is not canceled, and in the same transaction attempt 1 of each is recorded
 * `pending` with its start; only the messages that UPDATE returned are sent. Step 3 follows per message.
 * A message never tried has no open attempt to settle (step 1), which is why a batch takes only those.
 * Whatever a batch does not finish goes to the per-message job (`sms-send`), which runs the whole
 * protocol with its retries: a call whose outcome is unknown or that may pass later (a 429, no
 * connection), and, on a batch job's retry (its earlier try died, or timed out), the messages of the
 * campaign left with a `pending` attempt. A message never claimed stays for the next batch.
 */
import { Op, QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { JobAttempt, JobQueue } from '../jobs/index.js';
import { messageText, type CampaignRow, type CredentialRow, type SmsModels } from './models.js';
import type { SmsOptOuts } from './opt-outs.js';
import { ProviderError, type SentSms } from './provider.js';
import type { SendingDependencies } from './sending.js';
import { advances, OPTED_OUT_BEFORE_SENDING } from './statuses.js';

export const SMS_CAMPAIGN_SEND_JOB = 'sms-campaign-send';
/** The per-message job (sending.ts's whole protocol, with retries). */
export const SMS_SEND_JOB = 'sms-send';
/** Messages one batch sends: its provider calls run at once. */
export const CAMPAIGN_BATCH_SIZE = 100;

export interface CampaignSendingDependencies extends SendingDependencies {
  jobs: JobQueue;
  /** Completes the campaign if none of its messages is open (campaign-reports.ts). */
  completeIfDone(campaignId: number): Promise<boolean>;
}

export interface BatchOutcome {
  /** Messages handed to the provider (accepted), failed for good, left to the per-message job, canceled (opted out). */
  sent: number;
  failed: number;
  retried: number;
  canceled: number;
  /** Whether the campaign's next batch was queued. */
  next: boolean;
}

interface Claimed {
  id: number;
  recipient: string;
}

type CallResult = { message: Claimed; sent: SentSms } | { message: Claimed; error: ProviderError };

const NOTHING: BatchOutcome = { sent: 0, failed: 0, retried: 0, canceled: 0, next: false };

export class CampaignSending {
  private readonly sequelize: Sequelize;

  constructor(
    private readonly models: SmsModels,
    private readonly optOuts: SmsOptOuts,
    private readonly dependencies: CampaignSendingDependencies,
    private readonly batchSize = CAMPAIGN_BATCH_SIZE,
  ) {
    this.sequelize = models.Message.sequelize!;
  }

  /** Queues the campaign's next batch (at the tail of the queue) and notes when, for the stalled-campaign sweep. */
  async enqueueNext(campaignId: number): Promise<void> {
    await this.dependencies.jobs.enqueue(SMS_CAMPAIGN_SEND_JOB, { campaign_id: campaignId });
    await this.models.Campaign.update({ jobs_enqueued_at: new Date() }, { where: { id: campaignId } });
  }

  /** The job: sends the campaign's next batch. */
  async sendBatch(campaignId: number, job: JobAttempt): Promise<BatchOutcome> {
    const campaign = (await this.models.Campaign.findByPk(campaignId, { raw: true })) as CampaignRow | null;
    if (!campaign || campaign.state === 'canceled' || campaign.state === 'completed') return NOTHING;
    // An earlier try of this job died or timed out: what it claimed and left pending goes to the protocol's job.
    if (job.attempt > 1) await this.requeuePending(campaignId);
    const credential = (await this.models.Credential.findByPk(campaign.credential_id, { raw: true })) as CredentialRow | null;
    const box = this.dependencies.box;
    if (!box || !credential) {
      const reason = box ? 'the campaign has no credential' : 'SECRETS_KEY is not configured, so the credential cannot be opened';
      if (!job.lastAttempt) throw new Error(reason);
      const [failed] = await this.models.Message.update(
        { status: 'failed', error_message: `Failed ${job.attempt} times; the last error: ${reason}`, updated_at: new Date() },
        { where: { campaign_id: campaignId, status: 'queued', send_attempts: 0 } },
      );
      await this.dependencies.completeIfDone(campaignId);
      return { ...NOTHING, failed };
    }

    const untried = (await this.models.Message.findAll({
      attributes: ['id', 'recipient'],
      where: { campaign_id: campaignId, status: 'queued', send_attempts: 0 },
      limit: this.batchSize,
      raw: true,
    })) as unknown as Claimed[];
    if (untried.length === 0) {
      await this.dependencies.completeIfDone(campaignId);
      return NOTHING;
    }
    // A number that opted out of the credential's entity after the campaign was created is not sent to.
    const optedOut = await this.optOuts.among(credential.entity_id, untried.map((message) => message.recipient));
    const canceled = optedOut.size === 0 ? 0 : await this.cancelOptedOut(untried.filter((message) => optedOut.has(message.recipient)));
    const claimed = await this.claim(campaignId, untried.filter((message) => !optedOut.has(message.recipient)));
    // A full batch may leave more: the campaign's turn comes again after the others' (none left: the next run completes it).
    const next = untried.length === this.batchSize && claimed.length + canceled > 0;
    if (next) {
      await this.enqueueNext(campaignId);
      // A cancel that committed meanwhile may have purged the queue before that job went in: purge it now.
      const state = ((await this.models.Campaign.findByPk(campaignId, { attributes: ['state'], raw: true })) as Pick<CampaignRow, 'state'> | null)?.state;
      if (state === 'canceled') await this.dependencies.jobs.purgeQueued(SMS_CAMPAIGN_SEND_JOB, { campaign_id: campaignId });
    }

    const account = { accountId: credential.account_id, secret: box.open(credential.secret_sealed) };
    const text = messageText(campaign.body, campaign.footer);
    const results = await Promise.all(
      claimed.map(async (message): Promise<CallResult> => {
        try {
          const sms = { from: credential.sender_id, to: message.recipient, body: text, statusCallback: this.dependencies.statusCallbackUrl };
          return { message, sent: await this.dependencies.provider.send(account, sms) };
        } catch (error) {
          return { message, error: asProviderError(error) };
        }
      }),
    );
    const outcome = await this.record(results);
    if (outcome.retry.length > 0) {
      this.dependencies.logger.warn({ sms_campaign_id: campaignId, messages: outcome.retry.length, err: outcome.firstError }, 'sms not sent by their batch; each will be retried');
      await this.dependencies.jobs.enqueueMany(SMS_SEND_JOB, outcome.retry.map((id) => ({ message_id: id, campaign_id: campaignId })));
    }
    if (!next) await this.dependencies.completeIfDone(campaignId);
    return { sent: outcome.sent, failed: outcome.failed, retried: outcome.retry.length, canceled, next };
  }

  /**
   * Step 2 for many messages: attempt 1 of each message still queued and untried, if its campaign was not
   * canceled, recorded as pending with its start, in one transaction; the messages claimed. A cancel that
   * committed first wins; one that commits later finds them claimed (campaign-reports.ts).
   */
  private async claim(campaignId: number, messages: Claimed[]): Promise<Claimed[]> {
    if (messages.length === 0) return [];
    const now = new Date();
    return this.sequelize.transaction(async (transaction) => {
      const rows = await this.sequelize.query<{ id: number | string }>(
        `UPDATE sms_messages SET send_attempts = 1, last_attempt_at = :now, updated_at = :now
          WHERE id IN (:ids) AND status = 'queued' AND send_attempts = 0
            AND NOT EXISTS (SELECT 1 FROM sms_campaigns c WHERE c.id = :campaignId AND c.state = 'canceled')
          RETURNING id`,
        { type: QueryTypes.SELECT, replacements: { now, ids: messages.map((message) => message.id), campaignId }, transaction },
      );
      const ids = new Set(rows.map((row) => Number(row.id)));
      const claimed = messages.filter((message) => ids.has(Number(message.id)));
      if (claimed.length > 0) {
        await this.models.SendAttempt.bulkCreate(
          claimed.map((message) => ({ message_id: message.id, attempt: 1, started_at: now, finished_at: null, outcome: 'pending' as const, provider_sid: null, detail: null })),
          { transaction },
        );
      }
      return claimed;
    });
  }

  /**
   * Step 3's records for a batch, in one transaction: taken (sid and status), refused for good, or left to
   * retry. The accepted ones, nearly all of a batch, take two statements whatever their number (one
   * UPDATE of their attempts, one of their messages), not two each: at a hundred messages a batch that
   * is the difference between the provider bounding the rate and the database bounding it.
   */
  private async record(results: CallResult[]): Promise<{ sent: number; failed: number; retry: number[]; firstError: ProviderError | undefined }> {
    const accepted = results.filter((result): result is { message: Claimed; sent: SentSms } => 'sent' in result);
    const refused = results.filter((result): result is { message: Claimed; error: ProviderError } => 'error' in result);
    let failed = 0;
    const retry: number[] = [];
    const now = new Date();
    const recorded = await this.sequelize.transaction(async (transaction) => {
      const taken = await this.recordAccepted(accepted, now, transaction);
      for (const { message, error } of refused) {
        await this.models.SendAttempt.update(
          { outcome: error.outcome === 'unknown' ? 'unknown' : 'refused', detail: error.message, finished_at: now },
          { where: { message_id: message.id, attempt: 1 }, transaction },
        );
        if (!error.permanent) {
          retry.push(message.id);
          continue;
        }
        const [moved] = await this.models.Message.update(
          { status: 'failed', error_code: error.code ?? null, error_message: error.message, updated_at: now },
          { where: { id: message.id, status: 'queued', send_attempts: 1 }, transaction },
        );
        failed += moved;
      }
      return taken;
    });
    // Recorded by another run first (an earlier try of the batch outlived its timeout): checked one by one, rarely.
    for (const { message, sent } of accepted) if (!recorded.has(Number(message.id))) await this.reportLateAcceptance(message.id, sent.sid);
    return { sent: recorded.size, failed, retry, firstError: refused[0]?.error };
  }

  /** The accepted calls' attempts and messages, in two statements; the ids of the messages this run moved on from `queued`. */
  private async recordAccepted(accepted: Array<{ message: Claimed; sent: SentSms }>, now: Date, transaction: Transaction): Promise<Set<number>> {
    if (accepted.length === 0) return new Set();
    const replacements: Record<string, unknown> = { now, ids: accepted.map(({ message }) => message.id) };
    const sidCases: string[] = [];
    const statusCases: string[] = [];
    accepted.forEach(({ message, sent }, index) => {
      replacements[`id${index}`] = message.id;
      replacements[`sid${index}`] = sent.sid;
      // A receipt may already have moved the message on at the provider; ours is `accepted` at least.
      replacements[`status${index}`] = advances('queued', sent.status) ? sent.status : 'accepted';
      sidCases.push(`WHEN :id${index} THEN :sid${index}`);
      statusCases.push(`WHEN :id${index} THEN :status${index}`);
    });
    await this.sequelize.query(
      `UPDATE sms_send_attempts SET outcome = 'accepted', finished_at = :now, detail = NULL,
              provider_sid = CASE message_id ${sidCases.join(' ')} END
        WHERE attempt = 1 AND message_id IN (:ids)`,
      { replacements, transaction },
    );
    const moved = await this.sequelize.query<{ id: number | string }>(
      `UPDATE sms_messages SET status = CASE id ${statusCases.join(' ')} END,
              provider_sid = CASE id ${sidCases.join(' ')} END,
              error_code = NULL, error_message = NULL, updated_at = :now
        WHERE id IN (:ids) AND status = 'queued'
        RETURNING id`,
      { type: QueryTypes.SELECT, replacements, transaction },
    );
    return new Set(moved.map((row) => Number(row.id)));
  }

  /** Another run recorded the message first: if under another sid, the recipient got it twice (sending.ts says the same). */
  private async reportLateAcceptance(messageId: number, sid: string): Promise<void> {
    const message = (await this.models.Message.findByPk(messageId, { attributes: ['provider_sid'], raw: true })) as { provider_sid: string | null } | null;
    if (message?.provider_sid && message.provider_sid !== sid) {
      this.dependencies.logger.error({ sms_message_id: messageId, attempt: 1, sid, recorded_sid: message.provider_sid }, 'the provider took an sms twice: an attempt outlived the send timeout');
    }
  }

  private async cancelOptedOut(messages: Claimed[]): Promise<number> {
    const [canceled] = await this.models.Message.update(
      { status: 'canceled', error_message: OPTED_OUT_BEFORE_SENDING, updated_at: new Date() },
      { where: { id: { [Op.in]: messages.map((message) => message.id) }, status: 'queued', send_attempts: 0 } },
    );
    return canceled;
  }

  /** The campaign's messages whose last attempt is still pending: their run died; the per-message job settles them. */
  private async requeuePending(campaignId: number): Promise<void> {
    const rows = await this.sequelize.query<{ id: number | string }>(
      `SELECT m.id FROM sms_messages m JOIN sms_send_attempts a ON a.message_id = m.id AND a.attempt = m.send_attempts
        WHERE m.campaign_id = :campaignId AND m.status = 'queued' AND m.send_attempts > 0 AND a.outcome = 'pending'`,
      { type: QueryTypes.SELECT, replacements: { campaignId } },
    );
    if (rows.length === 0) return;
    const ids = rows.map((row) => Number(row.id));
    this.dependencies.logger.warn({ sms_campaign_id: campaignId, messages: ids.length }, 'sms left pending by an earlier try of their batch: each is settled by its own job');
    await this.models.Message.update({ updated_at: new Date() }, { where: { id: { [Op.in]: ids }, status: 'queued' } });
    await this.dependencies.jobs.enqueueMany(SMS_SEND_JOB, ids.map((id) => ({ message_id: id, campaign_id: campaignId })));
  }
}

function asProviderError(error: unknown): ProviderError {
  return error instanceof ProviderError ? error : new ProviderError(`The SMS provider call failed: ${(error as Error).message}`, 'unknown', undefined);
}
