/**
 * The send job's protocol: each SMS handed to the provider exactly once.
 *
 * The guarantee: whatever runs a message's job (two runs at once, because pg-boss hands a job out again
 * once it ran past JOB_TIMEOUT_SECONDS or a sweep queued a campaign's jobs again; a run after a process
 * was killed in the middle of a provider call; a run after a timeout, a reset connection or a 5xx left
 * the outcome unknown), the provider is asked to send it again only once it shows it did not take the
 * earlier attempt, and a message the provider took is recorded with its sid, never as failed. This
 * holds as long as a provider call ends within SMS_SEND_TIMEOUT_MS of its attempt's start (it is aborted
 * then) give or take RECONCILE_MARGIN_MS (clocks of the instances, a late timer), and as long as the
 * provider's list shows, by then, the messages it took, with its clock within a second of ours.
 *
 * Per message, with each call recorded in `sms_send_attempts` and the number of the last one on the
 * message (`send_attempts`):
 * 1. Settle the last attempt, if its outcome is open: `pending` (a run is in the call, or its process
 *    died) or `unknown`. Wait until longer than the send timeout has passed since it started, so that
 *    its call is over; read the message again (the other run may have recorded it meanwhile); then list
 *    what the provider sent from this sender to this recipient since the attempt started
 *    (reconciliation.ts). A copy found is recorded (`found`, its sid and status): done. None: go on.
 * 2. Claim the next attempt: one transaction moves `send_attempts` from n to n+1, only if it is still n
 *    and the message still queued, and inserts attempt n+1 as `pending` with its start. Of two runs one
 *    claims; the other goes back to 1 and waits for the first.
 * 3. Call the provider, with the delivery-receipt callback. Accepted: sid and status recorded on the
 *    attempt and the message together. A 4xx other than 429: `refused`, the message fails. A 429 or no
 *    connection: `refused` for now, the job is retried and sends again. A timeout, a reset or a 5xx:
 *    `unknown`, the job is retried and its next run starts at 1. On the job's last try an unknown
 *    outcome is settled at once (as in 1): the message fails only when the provider lists no copy.
 */
import { literal, Op, type Sequelize } from 'sequelize';
import type { JobAttempt } from '../jobs/index.js';
import type { Logger } from '../logger.js';
import type { SecretBox } from '../security/secret-box.js';
import { sendableOf, type MessageRow, type SendAttemptRow, type SendOutcome, type SmsModels } from './models.js';
import type { OptOutScope, SmsOptOuts } from './opt-outs.js';
import { ProviderError, type ListedSms, type OutgoingSms, type ProviderAccount, type SentSms, type SmsProvider } from './provider.js';
import { copiesOf, listSentSince } from './reconciliation.js';
import { advances, CANCELED_WITH_CAMPAIGN, OPTED_OUT_BEFORE_SENDING } from './statuses.js';

/** Beyond the send timeout, how long a run waits before it takes an earlier call to be over. */
export const RECONCILE_MARGIN_MS = 2_000;
/** Passes of one run that find another run moved first, before this run leaves the message to it. */
const MAX_PASSES = 3;
const OPEN_OUTCOMES = new Set<SendOutcome>(['pending', 'unknown']);

export interface SendingDependencies {
  provider: SmsProvider;
  box: SecretBox | undefined;
  statusCallbackUrl: string | undefined;
  /** SMS_SEND_TIMEOUT_MS: the provider's calls are aborted after it. */
  sendTimeoutMs: number;
  logger: Logger;
}

type Result = { status: string };
/** A pass's end: a result, or `again` when another run changed the message first. */
type PassEnd = Result | 'again';

interface Sending {
  account: ProviderAccount;
  sms: OutgoingSms;
  /** The entity of the campaign's credential: the opt-outs the message honours. */
  optOutScope: OptOutScope;
}

export class SmsSending {
  private readonly sequelize: Sequelize;

  constructor(
    private readonly models: SmsModels,
    private readonly optOuts: SmsOptOuts,
    private readonly dependencies: SendingDependencies,
  ) {
    this.sequelize = models.Message.sequelize!;
  }

  /** The job: hands message `messageId` to the provider, exactly once. */
  async send(messageId: number, job: JobAttempt): Promise<Result> {
    for (let pass = 1; pass <= MAX_PASSES; pass += 1) {
      const end = await this.pass(messageId, job);
      if (end !== 'again') return end;
    }
    this.dependencies.logger.warn({ sms_message_id: messageId }, 'other runs of this sms are sending it; this run leaves it to them');
    return { status: 'queued' };
  }

  private async pass(messageId: number, job: JobAttempt): Promise<PassEnd> {
    const message = await this.message(messageId);
    if (!message || message.status !== 'queued') return { status: message?.status ?? 'deleted' };
    const sending = await this.sendingOf(message, job);
    if (!sending) return { status: 'failed' };
    const last = await this.lastAttempt(message);
    if (last && OPEN_OUTCOMES.has(last.outcome)) {
      const settled = await this.settleOrFail(last, sending, job);
      if (settled !== 'not_taken') return settled;
    }
    // A number that opted out of the credential's entity after the campaign was created is not sent to.
    if (await this.optOuts.has(sending.optOutScope, message.recipient)) return this.cancel(message, OPTED_OUT_BEFORE_SENDING);
    // Nor is a message of a campaign canceled meanwhile (the claim checks again: campaign-reports.ts).
    if (await this.campaignCanceled(message)) return this.cancel(message, CANCELED_WITH_CAMPAIGN);
    const attempt = await this.claim(message);
    if (!attempt) return 'again';
    return this.call(attempt, sending, job);
  }

  // --- 1. Settling an attempt whose outcome is open ---------------------------------------------

  /** settle(), failing the message when the provider cannot be asked on the job's last try. */
  private async settleOrFail(attempt: SendAttemptRow, sending: Sending, job: JobAttempt): Promise<PassEnd | 'not_taken'> {
    try {
      return await this.settle(attempt, sending);
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      const unchecked = new ProviderError(`whether the provider took attempt ${attempt.attempt} could not be checked: ${(error as Error).message}`, 'unknown', undefined);
      if (job.lastAttempt) await this.fail(attempt.message_id, attempt.attempt, `Failed ${job.attempt} times; the last error: ${unchecked.message}`, null);
      throw unchecked;
    }
  }

  /** Waits for the attempt's call to be over, then records the provider's copy of it if there is one. */
  private async settle(attempt: SendAttemptRow, sending: Sending): Promise<PassEnd | 'not_taken'> {
    await this.waitUntilCallIsOver(attempt);
    const message = await this.message(attempt.message_id);
    if (!message || message.status !== 'queued') return { status: message?.status ?? 'deleted' };
    if (message.send_attempts !== attempt.attempt) return 'again';
    const copy = await this.providerCopy(sending, attempt.started_at);
    if (!copy) {
      await this.closeAttempt(attempt, 'unknown', 'the provider lists no copy of it: not taken');
      return 'not_taken';
    }
    this.dependencies.logger.info({ sms_message_id: attempt.message_id, attempt: attempt.attempt, sid: copy.sid }, 'sms found at the provider: it was taken');
    return this.recordTaken(attempt, copy, 'found');
  }

  private async waitUntilCallIsOver(attempt: SendAttemptRow): Promise<void> {
    const over = new Date(attempt.started_at).getTime() + this.dependencies.sendTimeoutMs + RECONCILE_MARGIN_MS;
    const wait = over - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }

  /** The provider's message sent by this attempt, if any: same pair and body, created since it started, recorded on no other message. */
  private async providerCopy(sending: Sending, startedAt: Date): Promise<ListedSms | undefined> {
    const listed = await listSentSince(this.dependencies.provider, sending.account, { from: sending.sms.from, to: sending.sms.to }, new Date(startedAt));
    const copies = copiesOf(listed, { body: sending.sms.body, startedAt: new Date(startedAt) });
    if (copies.length === 0) return undefined;
    const recorded = (await this.models.Message.findAll({ attributes: ['provider_sid'], where: { provider_sid: copies.map((copy) => copy.sid) }, raw: true })) as unknown as MessageRow[];
    const recordedSids = new Set(recorded.map((row) => row.provider_sid));
    return copies.find((copy) => !recordedSids.has(copy.sid));
  }

  // --- 2. Claiming the next attempt -------------------------------------------------------------

  /**
   * Attempt n+1, recorded as pending, if no other run claimed it first and its campaign was not canceled:
   * a cancel that committed before the claim's statement started wins, one that commits later finds the
   * message claimed (campaign-reports.ts).
   */
  private async claim(message: MessageRow): Promise<SendAttemptRow | undefined> {
    const attempt = message.send_attempts + 1;
    const now = new Date();
    // A reply in a conversation has no campaign to cancel it.
    const campaignNotCanceled =
      message.campaign_id === null ? literal('1 = 1') : literal(`NOT EXISTS (SELECT 1 FROM sms_campaigns c WHERE c.id = ${Number(message.campaign_id)} AND c.state = 'canceled')`);
    return this.sequelize.transaction(async (transaction) => {
      const [claimed] = await this.models.Message.update(
        { send_attempts: attempt, last_attempt_at: now, updated_at: now },
        { where: { id: message.id, status: 'queued', send_attempts: message.send_attempts, [Op.and]: [campaignNotCanceled] }, transaction },
      );
      if (claimed !== 1) return undefined;
      const row = await this.models.SendAttempt.create(
        { message_id: message.id, attempt, started_at: now, finished_at: null, outcome: 'pending', provider_sid: null, detail: null },
        { transaction },
      );
      return row.get({ plain: true });
    });
  }

  // --- 3. Calling the provider ------------------------------------------------------------------

  private async call(attempt: SendAttemptRow, sending: Sending, job: JobAttempt): Promise<Result> {
    let sent: SentSms;
    try {
      sent = await this.dependencies.provider.send(sending.account, sending.sms);
    } catch (error) {
      return this.afterFailedCall(attempt, sending, job, asProviderError(error));
    }
    await this.recordTaken(attempt, sent, 'accepted');
    return { status: sent.status };
  }

  private async afterFailedCall(attempt: SendAttemptRow, sending: Sending, job: JobAttempt, error: ProviderError): Promise<Result> {
    await this.closeAttempt(attempt, error.outcome === 'unknown' ? 'unknown' : 'refused', error.message);
    if (error.permanent) {
      await this.fail(attempt.message_id, attempt.attempt, error.message, error.code ?? null);
      return { status: 'failed' };
    }
    if (job.lastAttempt && error.outcome === 'unknown') {
      const settled = await this.settleOrFail(attempt, sending, job);
      if (settled === 'again') return { status: 'queued' };
      if (settled !== 'not_taken') return settled;
    }
    if (job.lastAttempt) await this.fail(attempt.message_id, attempt.attempt, `Failed ${job.attempt} times; the last error: ${error.message}`, error.code ?? null);
    this.dependencies.logger.warn({ sms_message_id: attempt.message_id, attempt: attempt.attempt, outcome: error.outcome, err: error }, 'sms not sent; it will be retried');
    throw error;
  }

  // --- Records ----------------------------------------------------------------------------------

  /** The provider took the message: its sid and status, on the attempt and the message together. */
  private async recordTaken(attempt: SendAttemptRow, taken: { sid: string; status: string }, outcome: 'accepted' | 'found'): Promise<Result> {
    // A receipt may already have moved the message on at the provider; ours is `accepted` at least.
    const status = advances('queued', taken.status) ? taken.status : 'accepted';
    const now = new Date();
    const recorded = await this.sequelize.transaction(async (transaction) => {
      await this.models.SendAttempt.update({ outcome, provider_sid: taken.sid, finished_at: now, detail: null }, { where: { id: attempt.id }, transaction });
      const [updated] = await this.models.Message.update(
        { status, provider_sid: taken.sid, error_code: null, error_message: null, updated_at: now },
        { where: { id: attempt.message_id, status: 'queued' }, transaction },
      );
      return updated === 1;
    });
    if (!recorded) await this.reportLateAcceptance(attempt, taken.sid);
    return { status };
  }

  /** Another attempt was recorded first: if it has another sid, the recipient got the message twice. */
  private async reportLateAcceptance(attempt: SendAttemptRow, sid: string): Promise<void> {
    const message = await this.message(attempt.message_id);
    if (message?.provider_sid && message.provider_sid !== sid) {
      this.dependencies.logger.error(
        { sms_message_id: attempt.message_id, attempt: attempt.attempt, sid, recorded_sid: message.provider_sid },
        'the provider took an sms twice: an attempt outlived the send timeout',
      );
    }
  }

  private async closeAttempt(attempt: SendAttemptRow, outcome: SendOutcome, detail: string): Promise<void> {
    await this.models.SendAttempt.update({ outcome, detail, finished_at: new Date() }, { where: { id: attempt.id } });
  }

  /** Fails the message, unless another run has claimed an attempt since attempt `sendAttempts`. */
  private async fail(messageId: number, sendAttempts: number, errorMessage: string, errorCode: string | null): Promise<void> {
    await this.models.Message.update(
      { status: 'failed', error_code: errorCode, error_message: errorMessage, updated_at: new Date() },
      { where: { id: messageId, status: 'queued', send_attempts: sendAttempts } },
    );
  }

  private async cancel(message: MessageRow, reason: string): Promise<Result> {
    await this.models.Message.update(
      { status: 'canceled', error_message: reason, updated_at: new Date() },
      { where: { id: message.id, status: 'queued', send_attempts: message.send_attempts } },
    );
    return { status: 'canceled' };
  }

  // --- Reads ------------------------------------------------------------------------------------

  private async campaignCanceled(message: MessageRow): Promise<boolean> {
    if (message.campaign_id === null) return false;
    const campaign = (await this.models.Campaign.findByPk(message.campaign_id, { attributes: ['state'], raw: true })) as { state: string } | null;
    return campaign?.state === 'canceled';
  }

  private async message(messageId: number): Promise<MessageRow | undefined> {
    return ((await this.models.Message.findByPk(messageId, { raw: true })) as MessageRow | null) ?? undefined;
  }

  private async lastAttempt(message: MessageRow): Promise<SendAttemptRow | undefined> {
    if (message.send_attempts === 0) return undefined;
    const row = await this.models.SendAttempt.findOne({ where: { message_id: message.id, attempt: message.send_attempts }, raw: true });
    return (row as SendAttemptRow | null) ?? undefined;
  }

  /** The account and the SMS to send; undefined (the message failed) when the credential cannot be opened on the last try. */
  private async sendingOf(message: MessageRow, job: JobAttempt): Promise<Sending | undefined> {
    const { credential, text } = await sendableOf(this.models, message);
    const { box, statusCallbackUrl } = this.dependencies;
    if (!box) {
      const reason = 'SECRETS_KEY is not configured, so the credential cannot be opened';
      if (!job.lastAttempt) throw new Error(reason);
      await this.fail(message.id, message.send_attempts, `Failed ${job.attempt} times; the last error: ${reason}`, null);
      return undefined;
    }
    return {
      account: { accountId: credential.account_id, secret: box.open(credential.secret_sealed) },
      // Every attempt asks for delivery receipts, a resend as much as the first.
      sms: { from: credential.sender_id, to: message.recipient, body: text, statusCallback: statusCallbackUrl },
      optOutScope: credential.entity_id,
    };
  }
}

function asProviderError(error: unknown): ProviderError {
  return error instanceof ProviderError ? error : new ProviderError(`The SMS provider call failed: ${(error as Error).message}`, 'unknown', undefined);
}
