/**
 * SMS campaigns: credentials (secret sealed at rest), campaigns split into one message per recipient,
 * sent in batches that take turns with other campaigns (campaign-sending.ts), each message handed to the
 * provider exactly once, retried by a job of its own when its batch could not send it (sending.ts
 * states the guarantee and the protocol), the provider's delivery receipts (applied only when they move
 * a message forward), and replies, whose opt-out keywords opt the sender out of the later campaigns of
 * the entity whose credential received them (opt-outs.ts states that guarantee); any other reply goes
 * to the chat inbox (src/chat/), whose answers are messages without a campaign, sent by the same job.
 * A campaign's messages are stored before its first batch job is queued; a process that dies in between
 * leaves the campaign without jobs, which enqueueForgottenCampaigns finds and queues; a campaign whose
 * chain of batch jobs broke (its last try died) is found by enqueueStalledCampaigns. A job can also be lost
 * after it started: a process that dies during the job's last try leaves its message queued with no
 * try left; enqueueStalledMessages finds such messages and queues them again.
 */
import { literal, Op, UniqueConstraintError, type Sequelize, type Transaction } from 'sequelize';
import type { components } from '../../sdk/schema.js';
import type { Caller } from '../http/auth.js';
import { asDate, readerOf } from '../db/reader.js';
import { readThenWrite } from '../entities/history.js';
import { rolesThatMay, type Teams } from '../entities/teams.js';
import type { JobAttempt, JobQueue } from '../jobs/index.js';
import type { Logger } from '../logger.js';
import type { SecretBox } from '../security/secret-box.js';
import { defineSmsModels, sendableOf, type CampaignRow, type CredentialRow, type MessageRow, type SmsModels } from './models.js';
import { optOutReadingOf, SmsOptOuts, type OptOutScope } from './opt-outs.js';
import type { SmsProvider } from './provider.js';
import { normalisedPhone } from '@palanque/rules/recipients';
import { SmsSending } from './sending.js';
import { CampaignSending, SMS_CAMPAIGN_SEND_JOB, SMS_SEND_JOB } from './campaign-sending.js';
import { planCampaign, type CampaignPlan } from './campaign-plan.js';
import { SmsCompliance, warningsOf } from './compliance.js';
import { notMobileOf, SmsCampaignReports, syntheticContentOf } from './campaign-reports.js';
import { advances } from './statuses.js';
import { CallbackSigners, type SentMessage } from './callback-signers.js';

export type SmsCredential = components['schemas']['SmsCredential'];
export type SmsCampaign = components['schemas']['SmsCampaign'];
export type SmsCampaignRequest = components['schemas']['SmsCampaignRequest'];
/** A price as a receipt carries it (`Price`, `PriceUnit`): a decimal as the provider writes it, negative for a charge. */
export interface ReceiptPrice {
  amount: string;
  currency: string;
}

export { SMS_CAMPAIGN_SEND_JOB, SMS_SEND_JOB };
/** The provider is tried this many more times after a failure that may pass (timeouts, 5xx, 429). */
const SEND_RETRIES = 4;
/** Batch jobs (of different campaigns, or one campaign's next) one instance runs at once, on PostgreSQL. */
const CAMPAIGN_BATCHES_AT_ONCE = 4;
/** A campaign this old without its jobs queued was left by a process that stopped before queueing them. */
const FORGOTTEN_AFTER_MS = 30_000;

export interface NewCredential {
  name: string;
  accountId: string;
  senderId: string;
  secret: string;
  entityId: number | undefined;
  /** Normalised (compliance.ts's normalisedFooter); null or left out: none. */
  footer?: string | null;
  createdBy: number;
}

export interface SmsDependencies {
  jobs: JobQueue;
  teams: Teams;
  provider: SmsProvider;
  /** Seals credential secrets; undefined when SECRETS_KEY is not set (no credential can be stored). */
  box: SecretBox | undefined;
  /** The absolute address of the delivery-receipt callback, or undefined when the public address is unknown. */
  statusCallbackUrl: string | undefined;
  /** SMS_SEND_TIMEOUT_MS: how long a call to the provider may take. */
  sendTimeoutMs: number;
  /** SMS_MAX_RECIPIENTS: the most numbers one campaign request may list. */
  maxRecipients: number;
  /** SMS_RECEIPT_TIMEOUT_HOURS, in milliseconds: a message with the provider and no receipt for this long counts as final (campaign-reports.ts). */
  receiptTimeoutMs?: number;
  logger: Logger;
}

/**
 * What the chat inbox (src/chat/) hears from SMS: a reply that is not an opt-out, received by a credential;
 * and a status change of a message without a campaign (a conversation's reply).
 */
export interface SmsConversationListener {
  replyReceived(reply: { credential: CredentialRow; from: string; sid: string; body: string }): Promise<void>;
  replyStatusChanged(messageId: number): Promise<void>;
}

export class Sms {
  readonly models: SmsModels;
  /** Set by the chat inbox when it is assembled (chat/index.ts). */
  conversations: SmsConversationListener | undefined;
  readonly optOuts: SmsOptOuts;
  /** The electoral rules campaigns are judged by (compliance.ts). */
  readonly compliance: SmsCompliance;
  /** Campaign reports, states and cancels (campaign-reports.ts). */
  readonly reports: SmsCampaignReports;
  /** Who signed a provider callback, and the budget its signer pays from (callback-signers.ts). */
  readonly signers: CallbackSigners;
  private readonly sending: SmsSending;
  private readonly campaignSending: CampaignSending;

  constructor(
    sequelize: Sequelize,
    private readonly dependencies: SmsDependencies,
  ) {
    this.models = defineSmsModels(sequelize);
    this.optOuts = new SmsOptOuts(this.models.OptOut, dependencies.box);
    this.compliance = new SmsCompliance(this.models, sequelize);
    this.reports = new SmsCampaignReports(this.models, dependencies.teams, dependencies.receiptTimeoutMs);
    this.sending = new SmsSending(this.models, this.optOuts, dependencies);
    this.campaignSending = new CampaignSending(this.models, this.optOuts, { ...dependencies, completeIfDone: (campaignId) => this.reports.completeIfDone(campaignId) });
    this.signers = new CallbackSigners(this.models, dependencies.box);
  }

  get maxRecipients(): number {
    return this.dependencies.maxRecipients;
  }

  get canStoreSecrets(): boolean {
    return this.dependencies.box !== undefined;
  }

  async registerJobs(): Promise<void> {
    await this.dependencies.jobs.register(SMS_SEND_JOB, (data, job) => this.send((data as { message_id: number }).message_id, job), {
      retryLimit: SEND_RETRIES,
    });
    await this.dependencies.jobs.register(SMS_CAMPAIGN_SEND_JOB, (data, job) => this.campaignSending.sendBatch((data as { campaign_id: number }).campaign_id, job), {
      retryLimit: SEND_RETRIES,
      // A few campaigns' batches at once per instance, each a batch of provider calls at once.
      jobsAtOnce: CAMPAIGN_BATCHES_AT_ONCE,
    });
  }

  // --- Credentials ------------------------------------------------------------------------------

  /**
   * Stores a credential with its secret sealed; `taken` when its account and sender are stored already.
   * `recordCreation` runs in the creation's transaction (its entity's edit history), so both commit together.
   */
  async addCredential(credential: NewCredential, recordCreation?: (created: SmsCredential, transaction: Transaction) => Promise<void>): Promise<SmsCredential | 'taken'> {
    const box = this.dependencies.box;
    if (!box) throw new Error('SECRETS_KEY is not configured');
    try {
      return await this.models.Credential.sequelize!.transaction(async (transaction) => {
        const row = await this.models.Credential.create({
          name: credential.name,
          provider: 'provider',
          account_id: credential.accountId,
          sender_id: credential.senderId,
          secret_sealed: box.seal(credential.secret),
          entity_id: credential.entityId ?? null,
          footer: credential.footer ?? null,
          created_by: credential.createdBy,
          created_at: new Date(),
        }, { transaction });
        const created = credentialView(row.get({ plain: true }));
        await recordCreation?.(created, transaction);
        return created;
      });
    } catch (error) {
      if (error instanceof UniqueConstraintError) return 'taken';
      throw error;
    }
  }

  /**
   * Changes a credential's name or footer (already checked), returning it as it was and as it now is;
   * undefined when it is gone. `recordChange` runs in the change's transaction (its entity's edit history).
   */
  async updateCredential(
    id: number,
    changes: { name?: string; footer?: string | null },
    recordChange?: (before: SmsCredential, after: SmsCredential, transaction: Transaction) => Promise<void>,
  ): Promise<SmsCredential | undefined> {
    // Reads before it writes: IMMEDIATE on SQLite, the row locked on PostgreSQL, so the history's
    // "before" is the row this change replaces (readThenWrite says why).
    return readThenWrite(this.models.Credential.sequelize!, async (transaction) => {
      const row = (await this.models.Credential.findByPk(id, { raw: true, transaction, lock: transaction.LOCK.UPDATE })) as CredentialRow | null;
      if (!row) return undefined;
      await this.models.Credential.update(changes, { where: { id }, transaction });
      const before = credentialView(row);
      const after = credentialView({ ...row, ...changes });
      await recordChange?.(before, after, transaction);
      return after;
    });
  }

  /**
   * The credentials the caller may send with, by id: every one for admins, else those of entities they
   * may edit. One Reader query (issue 20): a member's credentials join their memberships, keeping those
   * whose role may edit (the rule credentialFor applies through Teams.may).
   */
  async usableBy(caller: Caller): Promise<SmsCredential[]> {
    const reader = readerOf(this.models.Credential.sequelize!);
    const rows = caller.user.is_admin
      ? await reader.rows<CredentialView>(`SELECT ${CREDENTIAL_COLUMNS} FROM sms_credentials c ORDER BY c.id`)
      : await reader.rows<CredentialView>(
          `SELECT ${CREDENTIAL_COLUMNS} FROM sms_credentials c
           JOIN entity_members m ON m.entity_id = c.entity_id AND m.user_id = ?
           WHERE m.role IN (${EDITING_ROLES.map(() => '?').join(', ')})
           ORDER BY c.id`,
          [caller.user.id, ...EDITING_ROLES],
        );
    return rows.map((row) => credentialView({ ...row, created_at: asDate(row.created_at) }));
  }

  /**
   * The credential `id` and whether the caller may send with it; undefined when there is none, or when the
   * caller is outside its entity's team (a stranger cannot tell a credential that exists from a missing one).
   */
  async credentialFor(caller: Caller, id: number): Promise<{ credential: CredentialRow; usable: boolean } | undefined> {
    const credential = ((await this.models.Credential.findByPk(id, { raw: true })) as CredentialRow | null) ?? undefined;
    if (!credential) return undefined;
    if (caller.user.is_admin) return { credential, usable: true };
    const role = credential.entity_id === null ? undefined : (await this.dependencies.teams.rolesOf(caller, [credential.entity_id])).get(credential.entity_id);
    if (role === undefined) return undefined;
    return { credential, usable: this.dependencies.teams.may(caller, role, 'edit') };
  }

  /** The credential that received a reply on `accountId` sent to `to` (see receiversOf): its token signs the reply. */
  async receiverOf(accountId: string, to: string | undefined): Promise<CredentialRow | undefined> {
    return (await this.receiversOf(accountId, to))[0];
  }

  /**
   * The credential with account `accountId` and sender `to`, alone; when the account has none for `to`
   * (or `to` is missing), every credential of the account, by id: the signature proves the account only.
   */
  private async receiversOf(accountId: string, to: string | undefined): Promise<CredentialRow[]> {
    // No stored account holds a NUL, which SQLite's driver cannot take inside a statement (callback-signers.ts).
    if (accountId.includes('\0')) return [];
    const onAccount = (await this.models.Credential.findAll({ where: { account_id: accountId }, order: [['id', 'ASC']], raw: true })) as unknown as CredentialRow[];
    const sender = to === undefined ? undefined : (normalisedPhone(to) ?? to);
    const receiver = onAccount.find((credential) => credential.sender_id === sender);
    return receiver ? [receiver] : onAccount;
  }

  // --- Campaigns --------------------------------------------------------------------------------

  /**
   * A campaign request read into what it would send, judged by the rules of the credential's entity
   * (campaign-plan.ts); throws a 422 naming every problem of the body. Sends nothing.
   */
  plan(credential: CredentialRow, request: SmsCampaignRequest, options: { everyRule?: boolean } = {}): Promise<CampaignPlan> {
    const { sequelize } = this.models.Campaign;
    return planCampaign({ sequelize: sequelize!, optOuts: this.optOuts, compliance: this.compliance, maxRecipients: this.maxRecipients }, credential, request, options);
  }

  /**
   * Creates the campaign a plan describes (at least one recipient), with a message per recipient, and
   * queues their sending. Its footer, audience and judgement are kept with it.
   */
  async createCampaign(caller: Caller, credential: CredentialRow, plan: CampaignPlan, creationKey?: string): Promise<SmsCampaign> {
    const now = new Date();
    const { campaign, messages } = await this.models.Campaign.sequelize!.transaction(async (transaction) => {
      const created = await this.models.Campaign.create(
        {
          titulo: plan.titulo,
          credential_id: credential.id,
          body: plan.body,
          encoding: plan.encoding,
          segments: plan.segments,
          accepted: plan.recipients.length,
          rejected: plan.rejected,
          opted_out_skipped: plan.optedOutSkipped,
          not_mobile_skipped: plan.notMobileSkipped,
          not_mobile_examples: plan.notMobileSkipped === 0 ? null : JSON.stringify(plan.notMobileExamples),
          created_by: caller.user.id,
          created_at: now,
          creation_key: creationKey ?? null,
          entity_id: credential.entity_id,
          state: 'queued',
          footer: plan.footer,
          audience: plan.audience ? JSON.stringify(plan.audience) : null,
          // Not judged (a credential without an entity): nothing to keep.
          compliance: credential.entity_id === null ? null : JSON.stringify(plan.judgement),
          // Its declaration that it is not electoral propaganda (art. 36-A): what, by whom (its sender), when.
          non_electoral_declaration: plan.nonElectoral === null ? null : JSON.stringify({ text: plan.nonElectoral, declared_by: caller.user.id, declared_at: now.toISOString() }),
          synthetic_content: plan.syntheticContent === null ? null : JSON.stringify(plan.syntheticContent),
        },
        { transaction },
      );
      const campaignRow = created.get({ plain: true });
      await this.models.Message.bulkCreate(
        plan.recipients.map(({ phone, contactId }) => ({ campaign_id: campaignRow.id, recipient: phone, contact_id: contactId, status: 'queued', updated_at: now })),
        { transaction },
      );
      // One batch job for the campaign, not one job per message: its batches find their messages themselves.
      return { campaign: campaignRow, messages: plan.recipients.length };
    });
    await this.enqueueSending(campaign.id, messages);
    return campaignView(campaign, 'sending');
  }

  /** The campaign created by the request with this creation key (see requestCreationKey), if any. */
  async campaignByCreationKey(creationKey: string): Promise<SmsCampaign | undefined> {
    const row = (await this.models.Campaign.findOne({ where: { creation_key: creationKey }, raw: true })) as CampaignRow | null;
    return row ? campaignView(row, 'sending') : undefined;
  }

  /**
   * Queues the sending of campaigns stored more than FORGOTTEN_AFTER_MS ago whose jobs were never queued
   * (their process stopped in between); returns how many. A job queued twice is harmless: the send
   * protocol lets one run send (sending.ts).
   */
  async enqueueForgottenCampaigns(forgottenAfterMs = FORGOTTEN_AFTER_MS): Promise<number> {
    const forgotten = (await this.models.Campaign.findAll({
      attributes: ['id'],
      where: { jobs_enqueued_at: null, created_at: { [Op.lt]: new Date(Date.now() - forgottenAfterMs) } },
      raw: true,
    })) as unknown as CampaignRow[];
    for (const { id } of forgotten) {
      const queued = await this.models.Message.count({ where: { campaign_id: id, status: 'queued' } });
      this.dependencies.logger.warn({ sms_campaign_id: id, messages: queued }, 'sms campaign found without its jobs: queueing them');
      await this.enqueueSending(id, queued);
    }
    return forgotten.length;
  }

  /**
   * Queues again the batch job of campaigns still sending that have messages never tried and whose last
   * batch job was queued more than `stalledAfterMs` ago: their chain of batch jobs broke (a batch's last
   * try died). A second chain would be harmless: claims let one batch send each message. Returns how many.
   */
  async enqueueStalledCampaigns(stalledAfterMs: number): Promise<number> {
    const stalled = (await this.models.Campaign.findAll({
      attributes: ['id'],
      where: {
        state: 'sending',
        jobs_enqueued_at: { [Op.lt]: new Date(Date.now() - stalledAfterMs) },
        [Op.and]: [literal(`EXISTS (SELECT 1 FROM sms_messages m WHERE m.campaign_id = "SmsCampaign"."id" AND m.status = 'queued' AND m.send_attempts = 0)`)],
      },
      raw: true,
    })) as unknown as CampaignRow[];
    for (const { id } of stalled) {
      this.dependencies.logger.warn({ sms_campaign_id: id }, 'sms campaign with messages never tried and no batch job for a long while: queueing its next batch');
      await this.campaignSending.enqueueNext(id);
    }
    return stalled.length;
  }

  /**
   * Queues again the messages that a run started (an attempt was claimed) and nothing touched for
   * `stalledAfterMs`: their job was lost, as when its last try died with its process. The new run
   * settles the earlier attempt first, so this never sends a message twice (sending.ts). Returns how
   * many; each is touched, so the next sweep leaves it to that run.
   */
  async enqueueStalledMessages(stalledAfterMs: number): Promise<number> {
    const stalled = (await this.models.Message.findAll({
      attributes: ['id'],
      // A campaign's message never tried is its campaign's (enqueueForgottenCampaigns); a reply has none.
      where: { status: 'queued', [Op.or]: [{ send_attempts: { [Op.gt]: 0 } }, { campaign_id: null }], updated_at: { [Op.lt]: new Date(Date.now() - stalledAfterMs) } },
      order: [['id', 'ASC']],
      raw: true,
    })) as unknown as MessageRow[];
    if (stalled.length === 0) return 0;
    const ids = stalled.map((message) => message.id);
    this.dependencies.logger.warn({ sms_message_ids: ids.slice(0, 20), messages: ids.length }, 'sms messages left without a job: queueing them again');
    await this.models.Message.update({ updated_at: new Date() }, { where: { id: { [Op.in]: ids }, status: 'queued' } });
    await this.dependencies.jobs.enqueueMany(SMS_SEND_JOB, ids.map((messageId) => ({ message_id: messageId })));
    return ids.length;
  }

  /** Queues a campaign's first batch job (campaign-sending.ts): its batches then queue one another in turn. */
  private async enqueueSending(campaignId: number, messages: number): Promise<void> {
    if (messages > 0) await this.dependencies.jobs.enqueue(SMS_CAMPAIGN_SEND_JOB, { campaign_id: campaignId });
    // A campaign canceled meanwhile stays canceled.
    await this.models.Campaign.update({ jobs_enqueued_at: new Date() }, { where: { id: campaignId } });
    await this.models.Campaign.update({ state: 'sending' }, { where: { id: campaignId, state: 'queued' } });
  }

  /**
   * Cancels a campaign (campaign-reports.ts) and deletes its queued batch job at once, on either queue; a
   * batch running meanwhile finds the campaign canceled (its claim refused) and queues no other. Messages
   * already claimed keep their per-message jobs: their outcome must still be settled (sending.ts).
   */
  async cancelCampaign(campaignId: number, canceledBy: number): Promise<Awaited<ReturnType<SmsCampaignReports['cancel']>>> {
    const outcome = await this.reports.cancel(campaignId, canceledBy);
    if ('canceled' in outcome) {
      const purged = await this.dependencies.jobs.purgeQueued(SMS_CAMPAIGN_SEND_JOB, { campaign_id: campaignId }).catch((error: unknown) => {
        // A job left behind finds the campaign canceled and ends at once.
        this.dependencies.logger.warn({ err: error, sms_campaign_id: campaignId }, 'could not delete the canceled campaign\'s queued jobs');
        return 0;
      });
      this.dependencies.logger.info({ sms_campaign_id: campaignId, jobs_deleted: purged, messages_canceled: outcome.canceled }, 'sms campaign canceled');
    }
    return outcome;
  }

  /** The job: hands one message to the provider, exactly once (sending.ts); a final status may complete its campaign. */
  async send(messageId: number, job: JobAttempt): Promise<{ status: string }> {
    try {
      return await this.sending.send(messageId, job);
    } finally {
      // Also after a failed try: its last one fails the message before it throws.
      await this.afterStatusChange(messageId).catch((error: unknown) =>
        this.dependencies.logger.warn({ err: error, sms_message_id: messageId }, 'could not check whether the sms campaign is complete; the sweep will'),
      );
    }
  }

  // --- Provider callbacks -----------------------------------------------------------------------

  /**
   * Applies a delivery receipt if it moves the message forward, and records the price it carries (a
   * receipt may bring the price after the status); undefined when no message has this sid on this account.
   * `sent` is the message and its credential when the signature check found them already.
   */
  async applyReceipt(receipt: { sid: string; accountId: string; status: string; errorCode: string | undefined; price?: ReceiptPrice }, sent?: SentMessage) {
    const found = sent ?? (await this.signers.sentMessage(receipt.sid));
    if (!found || found.credential.account_id !== receipt.accountId) return undefined;
    const { message } = found;
    // Conditional on the status read, so two receipts racing cannot move the message backwards.
    const applied =
      advances(message.status, receipt.status) &&
      (await this.models.Message.update(
        { status: receipt.status, error_code: receipt.errorCode ?? null, updated_at: new Date() },
        { where: { id: message.id, status: message.status } },
      ))[0] === 1;
    const current = applied ? receipt.status : (((await this.models.Message.findByPk(message.id, { raw: true })) as MessageRow | null)?.status ?? message.status);
    if (receipt.price) await this.models.Message.update({ price: receipt.price.amount, price_unit: receipt.price.currency }, { where: { id: message.id } });
    if (applied) await this.afterStatusChange(message.id);
    return { message_sid: receipt.sid, status: current, applied };
  }

  /** A campaign's message may complete its campaign; a conversation's reply tells the inbox. */
  private async afterStatusChange(messageId: number): Promise<void> {
    const message = (await this.models.Message.findByPk(messageId, { attributes: ['campaign_id'], raw: true })) as Pick<MessageRow, 'campaign_id'> | null;
    if (message?.campaign_id === null) await this.conversations?.replyStatusChanged(messageId);
    else if (message) await this.reports.afterMessageSettled(messageId);
  }

  /**
   * Stores a reply to `to` from `credential` as a message without a campaign, in the caller's transaction;
   * `queueReply` then queues its job, sent exactly once as a campaign's messages are (sending.ts).
   */
  async storeReply(credential: CredentialRow, to: string, text: string, transaction: Transaction): Promise<number> {
    const now = new Date();
    const row = await this.models.Message.create(
      { campaign_id: null, credential_id: credential.id, body: text, recipient: to, status: 'queued', updated_at: now, send_attempts: 0 },
      { transaction },
    );
    return Number(row.get('id'));
  }

  /** Queues the sending job of a reply stored with `storeReply` (a lost one is queued again by enqueueStalledMessages). */
  async queueReply(messageId: number): Promise<void> {
    await this.dependencies.jobs.enqueueMany(SMS_SEND_JOB, [{ message_id: messageId }]);
  }

  /**
   * Records a reply (once per provider id). An opt-out keyword or phrase opts a valid sender out of the campaigns
   * of the entities of the credentials that received it (receiversOf; opt-outs.ts).
   */
  async receiveReply(reply: { sid: string; accountId: string; from: string; to: string; body: string }): Promise<{ message_sid: string; from: string; opted_out: boolean }> {
    const from = normalisedPhone(reply.from) ?? reply.from;
    try {
      await this.models.Reply.create({ message_sid: reply.sid, account_id: reply.accountId, sender: from, recipient: reply.to, body: reply.body, received_at: new Date() });
    } catch (error) {
      if (!(error instanceof UniqueConstraintError)) throw error; // the provider sent it again
    }
    // A lone keyword, or a request to stop in the sender's own words (opt-outs.ts; LGPD art. 8 §5º).
    const reading = optOutReadingOf(reply.body);
    const valid = normalisedPhone(from) !== undefined;
    if (reading === undefined) {
      // Anything else is a conversation with the entity of the credential it was sent to (src/chat/).
      const receiver = valid ? (await this.receiversOf(reply.accountId, reply.to)).find((credential) => credential.sender_id === normalisedPhone(reply.to)) : undefined;
      if (receiver) await this.conversations?.replyReceived({ credential: receiver, from, sid: reply.sid, body: reply.body });
      return { message_sid: reply.sid, from, opted_out: false };
    }
    const scopes: OptOutScope[] = valid ? (await this.receiversOf(reply.accountId, reply.to)).map((credential) => credential.entity_id) : [];
    if (scopes.length > 0) await this.optOuts.record(scopes, from, { source: 'reply', ...reading });
    return { message_sid: reply.sid, from, opted_out: scopes.length > 0 };
  }
}

/** The columns a credential shows (credentialView): never its sealed secret. */
const CREDENTIAL_COLUMNS = 'c.id, c.name, c.provider, c.account_id, c.sender_id, c.entity_id, c.footer, c.created_at';
type CredentialView = Omit<CredentialRow, 'secret_sealed' | 'created_by'>;

/** The team roles that may send with their entity's credentials (a fixed list: the SQL text stays fixed). */
const EDITING_ROLES = rolesThatMay('edit');

function credentialView(row: CredentialView): SmsCredential {
  return {
    id: row.id,
    name: row.name,
    provider: row.provider,
    account_id: row.account_id,
    sender_id: row.sender_id,
    entity_id: row.entity_id,
    footer: row.footer,
    created_at: new Date(row.created_at).toISOString(),
  };
}

function campaignView(row: CampaignRow, state: SmsCampaign['state']): SmsCampaign {
  return {
    id: row.id,
    titulo: row.titulo,
    credencial: row.credential_id,
    accepted: row.accepted,
    rejected: row.rejected,
    opted_out_skipped: row.opted_out_skipped,
    ...notMobileOf(row),
    encoding: row.encoding,
    segments: row.segments,
    state,
    created_at: new Date(row.created_at).toISOString(),
    // The compliance warnings it was accepted with, under `warn`.
    ...warningsOf(row.compliance),
    // The synthetic content it declared (issue 42), left out when none.
    ...syntheticContentOf(row.synthetic_content),
  };
}
