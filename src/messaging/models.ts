/** Sequelize models of the SMS tables (migrations 0009, 0013, 0014, 0027 and 0028). */
import { DataTypes, type Model, type ModelAttributes, type ModelStatic, type Sequelize } from 'sequelize';

export interface CredentialRow {
  id: number;
  name: string;
  provider: string;
  account_id: string;
  sender_id: string;
  secret_sealed: string;
  entity_id: number | null;
  /** The sender's identification and opt-out instruction added to each message; null: none. */
  footer: string | null;
  created_by: number | null;
  created_at: Date;
}

/** `queued` until its jobs are queued, `sending`, then `completed` once every message is final, or `canceled`. */
export type CampaignState = 'queued' | 'sending' | 'completed' | 'canceled';

export interface CampaignRow {
  id: number;
  titulo: string;
  credential_id: number;
  body: string;
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
  accepted: number;
  rejected: number;
  opted_out_skipped: number;
  /** Numbers skipped because they cannot receive an SMS (not Brazilian mobiles), and a JSON array of the first few, masked (migration 0035). */
  not_mobile_skipped: number;
  not_mobile_examples: string | null;
  created_by: number | null;
  created_at: Date;
  /** When the sending jobs of its messages were queued; null until then (see Sms.enqueueForgottenCampaigns). */
  jobs_enqueued_at: Date | null;
  /** The idempotent request that created it (src/http/idempotency.ts), if any. */
  creation_key: string | null;
  /** Its credential's entity when it was created (null: an admins-only credential). */
  entity_id: number | null;
  state: CampaignState;
  /** When it became completed or canceled. */
  finished_at: Date | null;
  canceled_by: number | null;
  /** The credential's footer as it was added to the messages (null: none). */
  footer: string | null;
  /** JSON text: `{"tags": [...]}` for a campaign to the entity's contacts; null for a pasted list. */
  audience: string | null;
  /** JSON text: the compliance mode and the warnings given when it was accepted. */
  compliance: string | null;
  /** JSON text `{text, declared_by, declared_at}`: its declaration that it is not electoral propaganda (migration 0033); null: none. */
  non_electoral_declaration: string | null;
  /** JSON text `{technology}`: the synthetic content it declared (issue 42, migration 0038); null: none. */
  synthetic_content: string | null;
  /** JSON text: a finished campaign's messages counted by status and their cost (campaign-reports.ts); null before. */
  tally: string | null;
}

export interface MessageRow {
  id: number;
  /** Null for a reply in a conversation (src/chat/): it has its own `credential_id` and `body`. */
  campaign_id: number | null;
  credential_id: number | null;
  body: string | null;
  recipient: string;
  status: string;
  provider_sid: string | null;
  error_code: string | null;
  error_message: string | null;
  updated_at: Date;
  /** The number of the last attempt claimed (0: never handed to the provider). */
  send_attempts: number;
  /** When that attempt started. */
  last_attempt_at: Date | null;
  /** The provider's price (a decimal as written, negative for a charge) and its currency, when reported. */
  price: string | null;
  price_unit: string | null;
  /** The entity's contact it went to, if it was sent to contacts. */
  contact_id: number | null;
}

export type SendOutcome = 'pending' | 'accepted' | 'refused' | 'unknown' | 'found';

/** One call to the provider, recorded before it is made (see sending.ts). */
export interface SendAttemptRow {
  id: number;
  message_id: number;
  attempt: number;
  started_at: Date;
  finished_at: Date | null;
  outcome: SendOutcome;
  provider_sid: string | null;
  detail: string | null;
}

export interface ReplyRow {
  id: number;
  message_sid: string;
  account_id: string;
  sender: string;
  recipient: string;
  body: string;
  received_at: Date;
}

/** A number opted out of one entity's campaigns (see opt-outs.ts). */
export interface OptOutRow {
  id: number;
  /** The entity whose credential received the reply; null for the credentials without an entity. */
  entity_id: number | null;
  phone: string;
  /** The keyword the reply was read as; null for rows migration 0014 attributed, free-text replies and opt-outs by hand. */
  keyword: string | null;
  /** 'reply', 'manual' or 'conversation' (opt-outs.ts); null for rows written before migration 0034 (replies). */
  source: string | null;
  /** The phrase a free-text reply was read with (packages/rules/src/opt-out-phrases.ts). */
  phrase: string | null;
  /** Who recorded it by hand. */
  created_by: number | null;
  opted_out_at: Date;
}

/** A person an entity may message, with the consent they gave (src/messaging/contacts.ts). */
export interface ContactRow {
  id: number;
  entity_id: number;
  /** E.164. */
  phone: string;
  name: string | null;
  /** Where and how the number was given; null: no consent on record. */
  consent_source: string | null;
  consent_given_at: Date | null;
  /** The text the person agreed to. */
  consent_text: string | null;
  /** The structured source (packages/rules/src/consent-sources.ts, migration 0036); null: a consent stored before it whose words named none. */
  consent_kind: string | null;
  /** The record that shows a manual or imported consent. */
  consent_evidence: string | null;
  created_by: number | null;
  created_at: Date;
  updated_at: Date;
}

export interface ContactTagRow {
  contact_id: number;
  tag: string;
}

export type ComplianceMode = 'off' | 'warn' | 'enforce';

/** An entity's compliance settings; an entity without a row is in mode `enforce` (migration 0033) with no typed window. */
export interface ComplianceRow {
  entity_id: number;
  mode: ComplianceMode;
  /** YYYY-MM-DD, both days included. */
  window_starts_on: string | null;
  window_ends_on: string | null;
  updated_by: number | null;
  updated_at: Date;
}

type Static<Row extends object> = ModelStatic<Model<Row, Partial<Row>>>;

export interface SmsModels {
  Credential: Static<CredentialRow>;
  Campaign: Static<CampaignRow>;
  Message: Static<MessageRow>;
  SendAttempt: Static<SendAttemptRow>;
  Reply: Static<ReplyRow>;
  OptOut: Static<OptOutRow>;
  Contact: Static<ContactRow>;
  ContactTag: Static<ContactTagRow>;
  Compliance: Static<ComplianceRow>;
}

const id = { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true };

export function defineSmsModels(sequelize: Sequelize): SmsModels {
  const define = <Row extends object>(name: string, attributes: ModelAttributes, tableName: string) =>
    sequelize.define<Model<Row, Partial<Row>>>(name, attributes, { tableName, timestamps: false });
  return {
    Credential: define<CredentialRow>(
      'SmsCredential',
      {
        id,
        name: DataTypes.STRING(120),
        provider: DataTypes.STRING(20),
        account_id: DataTypes.STRING(64),
        sender_id: DataTypes.STRING(32),
        secret_sealed: DataTypes.TEXT,
        entity_id: DataTypes.INTEGER,
        footer: DataTypes.TEXT,
        created_by: DataTypes.INTEGER,
        created_at: DataTypes.DATE,
      },
      'sms_credentials',
    ),
    Campaign: define<CampaignRow>(
      'SmsCampaign',
      {
        id,
        titulo: DataTypes.STRING(120),
        credential_id: DataTypes.INTEGER,
        body: DataTypes.TEXT,
        encoding: DataTypes.STRING(10),
        segments: DataTypes.INTEGER,
        accepted: DataTypes.INTEGER,
        rejected: DataTypes.INTEGER,
        opted_out_skipped: DataTypes.INTEGER,
        not_mobile_skipped: { type: DataTypes.INTEGER, defaultValue: 0 },
        not_mobile_examples: DataTypes.TEXT,
        created_by: DataTypes.INTEGER,
        created_at: DataTypes.DATE,
        jobs_enqueued_at: DataTypes.DATE,
        creation_key: DataTypes.STRING(64),
        entity_id: DataTypes.INTEGER,
        state: { type: DataTypes.STRING(16), defaultValue: 'sending' },
        finished_at: DataTypes.DATE,
        canceled_by: DataTypes.INTEGER,
        footer: DataTypes.TEXT,
        audience: DataTypes.TEXT,
        compliance: DataTypes.TEXT,
        non_electoral_declaration: DataTypes.TEXT,
        synthetic_content: DataTypes.TEXT,
        tally: DataTypes.TEXT,
      },
      'sms_campaigns',
    ),
    Message: define<MessageRow>(
      'SmsMessage',
      {
        id,
        campaign_id: DataTypes.INTEGER,
        credential_id: DataTypes.INTEGER,
        body: DataTypes.TEXT,
        recipient: DataTypes.STRING(20),
        status: DataTypes.STRING(20),
        provider_sid: DataTypes.STRING(64),
        error_code: DataTypes.STRING(16),
        error_message: DataTypes.TEXT,
        updated_at: DataTypes.DATE,
        send_attempts: { type: DataTypes.INTEGER, defaultValue: 0 },
        last_attempt_at: DataTypes.DATE,
        price: DataTypes.STRING(20),
        price_unit: DataTypes.STRING(3),
        contact_id: DataTypes.INTEGER,
      },
      'sms_messages',
    ),
    SendAttempt: define<SendAttemptRow>(
      'SmsSendAttempt',
      {
        id,
        message_id: DataTypes.INTEGER,
        attempt: DataTypes.INTEGER,
        started_at: DataTypes.DATE,
        finished_at: DataTypes.DATE,
        outcome: DataTypes.STRING(16),
        provider_sid: DataTypes.STRING(64),
        detail: DataTypes.TEXT,
      },
      'sms_send_attempts',
    ),
    Reply: define<ReplyRow>(
      'SmsReply',
      {
        id,
        message_sid: DataTypes.STRING(64),
        account_id: DataTypes.STRING(64),
        sender: DataTypes.STRING(32),
        recipient: DataTypes.STRING(32),
        body: DataTypes.TEXT,
        received_at: DataTypes.DATE,
      },
      'sms_replies',
    ),
    OptOut: define<OptOutRow>(
      'SmsOptOut',
      { id, entity_id: DataTypes.INTEGER, phone: DataTypes.STRING(20), keyword: DataTypes.STRING(20), source: DataTypes.STRING(20), phrase: DataTypes.STRING(40), created_by: DataTypes.INTEGER, opted_out_at: DataTypes.DATE },
      'sms_opt_outs',
    ),
    Contact: define<ContactRow>(
      'Contact',
      {
        id,
        entity_id: DataTypes.INTEGER,
        phone: DataTypes.STRING(20),
        name: DataTypes.STRING(200),
        consent_source: DataTypes.STRING(200),
        consent_given_at: DataTypes.DATE,
        consent_text: DataTypes.TEXT,
        consent_kind: DataTypes.STRING(24),
        consent_evidence: DataTypes.TEXT,
        created_by: DataTypes.INTEGER,
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      'contacts',
    ),
    ContactTag: define<ContactTagRow>(
      'ContactTag',
      { contact_id: { type: DataTypes.INTEGER, primaryKey: true }, tag: { type: DataTypes.STRING(60), primaryKey: true } },
      'contact_tags',
    ),
    Compliance: define<ComplianceRow>(
      'SmsCompliance',
      {
        entity_id: { type: DataTypes.INTEGER, primaryKey: true },
        mode: DataTypes.STRING(8),
        window_starts_on: DataTypes.DATEONLY,
        window_ends_on: DataTypes.DATEONLY,
        updated_by: DataTypes.INTEGER,
        updated_at: DataTypes.DATE,
      },
      'sms_compliance',
    ),
  };
}

/** A message's text as it goes: the body and, after a line break, the footer (the rule is compliance.ts's). */
export function messageText(body: string, footer: string | null): string {
  return footer ? `${body}\n${footer}` : body;
}

/** A message's campaign and credential (both exist: messages are deleted with them). */
export async function campaignOf(models: SmsModels, message: MessageRow): Promise<{ campaign: CampaignRow; credential: CredentialRow }> {
  const campaign = (await models.Campaign.findByPk(message.campaign_id!, { raw: true })) as CampaignRow | null;
  const credential = (await models.Credential.findByPk(campaign!.credential_id, { raw: true })) as CredentialRow | null;
  return { campaign: campaign!, credential: credential! };
}

/**
 * What a message says and the credential that sends it: a campaign's text with its footer (compliance.ts:
 * a resend says what the first try said), or a conversation's reply, which carries both itself.
 */
export async function sendableOf(models: SmsModels, message: MessageRow): Promise<{ credential: CredentialRow; text: string }> {
  if (message.campaign_id === null) {
    const credential = (await models.Credential.findByPk(message.credential_id!, { raw: true })) as CredentialRow | null;
    return { credential: credential!, text: message.body! };
  }
  const { campaign, credential } = await campaignOf(models, message);
  return { credential, text: messageText(campaign.body, campaign.footer) };
}
