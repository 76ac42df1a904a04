/**
 * SMS campaigns: credentials (secret sealed at rest), campaigns split into one message per recipient,
 * a background job per message that hands it to the provider with retries, the provider's delivery
 * receipts (applied only when they move a message forward), and replies, where STOP, SAIR or PARAR opt
 * the sender out of later campaigns.
 */
import { Op, UniqueConstraintError, type Sequelize } from 'sequelize';
import { SegmentedMessage } from 'sms-segments-calculator';
import type { components } from '../../sdk/schema.js';
import type { Caller } from '../http/auth.js';
import type { Teams } from '../entities/teams.js';
import type { JobAttempt, JobQueue } from '../jobs/index.js';
import type { Logger } from '../logger.js';
import type { SecretBox } from '../security/secret-box.js';
import { defineSmsModels, type CampaignRow, type CredentialRow, type MessageRow, type SmsModels } from './models.js';
import { ProviderError, type SmsProvider } from './provider.js';
import { normalisedPhone, type RecipientList } from './recipients.js';
import { advances } from './statuses.js';

export type SmsCredential = components['schemas']['SmsCredential'];
export type SmsCampaign = components['schemas']['SmsCampaign'];

export const SMS_SEND_JOB = 'sms-send';
/** The provider is tried this many more times after a failure that may pass (timeouts, 5xx, 429). */
const SEND_RETRIES = 4;
const OPT_OUT_WORDS = new Set(['STOP', 'SAIR', 'PARAR']);

export interface NewCredential {
  name: string;
  accountId: string;
  senderId: string;
  secret: string;
  entityId: number | undefined;
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
  logger: Logger;
}

export class Sms {
  readonly models: SmsModels;

  constructor(
    sequelize: Sequelize,
    private readonly dependencies: SmsDependencies,
  ) {
    this.models = defineSmsModels(sequelize);
  }

  get canStoreSecrets(): boolean {
    return this.dependencies.box !== undefined;
  }

  async registerJobs(): Promise<void> {
    await this.dependencies.jobs.register(SMS_SEND_JOB, (data, job) => this.send((data as { message_id: number }).message_id, job), {
      retryLimit: SEND_RETRIES,
    });
  }

  // --- Credentials ------------------------------------------------------------------------------

  /** Stores a credential with its secret sealed; `taken` when its account and sender are stored already. */
  async addCredential(credential: NewCredential): Promise<SmsCredential | 'taken'> {
    const box = this.dependencies.box;
    if (!box) throw new Error('SECRETS_KEY is not configured');
    try {
      const row = await this.models.Credential.create({
        name: credential.name,
        provider: 'provider',
        account_id: credential.accountId,
        sender_id: credential.senderId,
        secret_sealed: box.seal(credential.secret),
        entity_id: credential.entityId ?? null,
        created_by: credential.createdBy,
        created_at: new Date(),
      });
      return credentialView(row.get({ plain: true }));
    } catch (error) {
      if (error instanceof UniqueConstraintError) return 'taken';
      throw error;
    }
  }

  /** The credentials the caller may send with, by id: every one for admins, else those of entities they may edit. */
  async usableBy(caller: Caller): Promise<SmsCredential[]> {
    const rows = (await this.models.Credential.findAll({ order: [['id', 'ASC']], raw: true })) as unknown as CredentialRow[];
    const usable = caller.user.is_admin ? rows : await this.filterUsable(caller, rows);
    return usable.map(credentialView);
  }

  /** The credential `id` and whether the caller may send with it; undefined when there is none. */
  async credentialFor(caller: Caller, id: number): Promise<{ credential: CredentialRow; usable: boolean } | undefined> {
    const credential = ((await this.models.Credential.findByPk(id, { raw: true })) as CredentialRow | null) ?? undefined;
    if (!credential) return undefined;
    return { credential, usable: caller.user.is_admin || (await this.filterUsable(caller, [credential])).length === 1 };
  }

  /** The auth token of a provider account, to check the signatures of its callbacks. */
  async secretOfAccount(accountId: string): Promise<string | undefined> {
    const credential = (await this.models.Credential.findOne({ where: { account_id: accountId }, order: [['id', 'ASC']], raw: true })) as CredentialRow | null;
    if (!credential || !this.dependencies.box) return undefined;
    return this.dependencies.box.open(credential.secret_sealed);
  }

  // --- Campaigns --------------------------------------------------------------------------------

  /** Creates the campaign with a message per number that has not opted out, and queues their sending. */
  async createCampaign(caller: Caller, credential: CredentialRow, titulo: string, body: string, recipients: RecipientList): Promise<SmsCampaign | 'nobody_left'> {
    const optedOut = new Set(
      ((await this.models.OptOut.findAll({ where: { phone: { [Op.in]: recipients.numbers } }, raw: true })) as unknown as Array<{ phone: string }>).map((row) => row.phone),
    );
    const numbers = recipients.numbers.filter((number) => !optedOut.has(number));
    if (numbers.length === 0) return 'nobody_left';
    const segmented = new SegmentedMessage(body, 'auto');
    const now = new Date();
    const { campaign, messageIds } = await this.models.Campaign.sequelize!.transaction(async (transaction) => {
      const created = await this.models.Campaign.create(
        {
          titulo,
          credential_id: credential.id,
          body,
          encoding: segmented.encodingName === 'UCS-2' ? 'UCS-2' : 'GSM-7',
          segments: segmented.segmentsCount,
          accepted: numbers.length,
          rejected: recipients.repeated,
          opted_out_skipped: recipients.numbers.length - numbers.length,
          created_by: caller.user.id,
          created_at: now,
        },
        { transaction },
      );
      const campaignRow = created.get({ plain: true });
      await this.models.Message.bulkCreate(
        numbers.map((recipient) => ({ campaign_id: campaignRow.id, recipient, status: 'queued', updated_at: now })),
        { transaction },
      );
      // Read back rather than trust bulkCreate's ids, which SQLite does not return.
      const messages = (await this.models.Message.findAll({ attributes: ['id'], where: { campaign_id: campaignRow.id }, order: [['id', 'ASC']], raw: true, transaction })) as unknown as MessageRow[];
      return { campaign: campaignRow, messageIds: messages.map((message) => message.id) };
    });
    await this.dependencies.jobs.enqueueMany(SMS_SEND_JOB, messageIds.map((messageId) => ({ message_id: messageId })));
    return campaignView(campaign, 'sending');
  }

  /** The job: hands one message to the provider. */
  async send(messageId: number, job: JobAttempt): Promise<{ status: string }> {
    const message = (await this.models.Message.findByPk(messageId, { raw: true })) as MessageRow | null;
    if (!message || message.status !== 'queued') return { status: message?.status ?? 'deleted' };
    // A number that opted out after the campaign was created is not sent to.
    if (await this.models.OptOut.findByPk(message.recipient)) {
      await this.update(messageId, { status: 'canceled', error_message: 'The recipient opted out before the message was sent.' });
      return { status: 'canceled' };
    }
    const { campaign, credential } = await this.campaignOf(message);
    const { box, provider, statusCallbackUrl } = this.dependencies;
    try {
      if (!box) throw new Error('SECRETS_KEY is not configured, so the credential cannot be opened');
      const sent = await provider.send(
        { accountId: credential.account_id, secret: box.open(credential.secret_sealed) },
        { from: credential.sender_id, to: message.recipient, body: campaign.body, statusCallback: statusCallbackUrl },
      );
      // A receipt may already have moved the message on; the sid is stored either way.
      await this.update(messageId, { provider_sid: sent.sid, ...(advances('queued', sent.status) ? { status: sent.status } : { status: 'accepted' }) });
      return { status: sent.status };
    } catch (error) {
      const permanent = error instanceof ProviderError && error.permanent;
      if (permanent || job.lastAttempt) {
        await this.update(messageId, {
          status: 'failed',
          error_code: error instanceof ProviderError ? (error.code ?? null) : null,
          error_message: permanent ? (error as Error).message : `Failed ${job.attempt} times; the last error: ${(error as Error).message}`,
        });
      }
      if (permanent) return { status: 'failed' };
      this.dependencies.logger.warn({ sms_message_id: messageId, attempt: job.attempt, err: error }, 'sms not sent; it will be retried');
      throw error;
    }
  }

  // --- Provider callbacks -----------------------------------------------------------------------

  /** Applies a delivery receipt if it moves the message forward; undefined when no message has this sid on this account. */
  async applyReceipt(receipt: { sid: string; accountId: string; status: string; errorCode: string | undefined }) {
    const message = (await this.models.Message.findOne({ where: { provider_sid: receipt.sid }, raw: true })) as MessageRow | null;
    if (!message) return undefined;
    const { credential } = await this.campaignOf(message);
    if (credential.account_id !== receipt.accountId) return undefined;
    // Conditional on the status read, so two receipts racing cannot move the message backwards.
    const applied =
      advances(message.status, receipt.status) &&
      (await this.models.Message.update(
        { status: receipt.status, error_code: receipt.errorCode ?? null, updated_at: new Date() },
        { where: { id: message.id, status: message.status } },
      ))[0] === 1;
    const current = applied ? receipt.status : (((await this.models.Message.findByPk(message.id, { raw: true })) as MessageRow | null)?.status ?? message.status);
    return { message_sid: receipt.sid, status: current, applied };
  }

  /** Records a reply (once per provider id); STOP, SAIR or PARAR opts the sender out. */
  async receiveReply(reply: { sid: string; accountId: string; from: string; to: string; body: string }): Promise<{ message_sid: string; from: string; opted_out: boolean }> {
    const from = normalisedPhone(reply.from) ?? reply.from;
    try {
      await this.models.Reply.create({ message_sid: reply.sid, account_id: reply.accountId, sender: from, recipient: reply.to, body: reply.body, received_at: new Date() });
    } catch (error) {
      if (!(error instanceof UniqueConstraintError)) throw error; // the provider sent it again
    }
    const optingOut = OPT_OUT_WORDS.has(reply.body.trim().toUpperCase());
    if (optingOut && normalisedPhone(from)) {
      try {
        await this.models.OptOut.create({ phone: from, opted_out_at: new Date() });
      } catch (error) {
        if (!(error instanceof UniqueConstraintError)) throw error; // opted out already
      }
    }
    return { message_sid: reply.sid, from, opted_out: optingOut };
  }

  private async filterUsable(caller: Caller, credentials: CredentialRow[]): Promise<CredentialRow[]> {
    const entityIds = [...new Set(credentials.flatMap((credential) => (credential.entity_id === null ? [] : [credential.entity_id])))];
    const roles = entityIds.length === 0 ? new Map() : await this.dependencies.teams.rolesOf(caller, entityIds);
    return credentials.filter((credential) => {
      const role = credential.entity_id === null ? undefined : roles.get(credential.entity_id);
      return role !== undefined && this.dependencies.teams.may(caller, role, 'edit');
    });
  }

  /** A message's campaign and credential (both exist: messages are deleted with them). */
  private async campaignOf(message: MessageRow): Promise<{ campaign: CampaignRow; credential: CredentialRow }> {
    const campaign = (await this.models.Campaign.findByPk(message.campaign_id, { raw: true })) as CampaignRow | null;
    const credential = (await this.models.Credential.findByPk(campaign!.credential_id, { raw: true })) as CredentialRow | null;
    return { campaign: campaign!, credential: credential! };
  }

  private async update(messageId: number, change: Partial<MessageRow>): Promise<void> {
    await this.models.Message.update({ ...change, updated_at: new Date() }, { where: { id: messageId } });
  }
}

function credentialView(row: CredentialRow): SmsCredential {
  return {
    id: row.id,
    name: row.name,
    provider: row.provider,
    account_id: row.account_id,
    sender_id: row.sender_id,
    entity_id: row.entity_id,
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
    encoding: row.encoding,
    segments: row.segments,
    state,
    created_at: new Date(row.created_at).toISOString(),
  };
}
