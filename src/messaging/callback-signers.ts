/**
 * Who signed an SMS provider callback, and how much its signer may send (issue 41).
 *
 * What holds:
 * - a delivery receipt is verified against the credential that sent its message, found by the provider's
 *   message id: never against another credential of the same account (teams enter their own, and the
 *   account's oldest one is not the sender's), so a receipt for a message is signed with its sender's secret;
 * - a receipt for a message id Palanque did not send on that account is verified against the account's
 *   credentials: a provider's receipt (for a message another system sent on the account, or one whose
 *   send answer was lost, which the send job reconciles) is acknowledged and dropped without a write;
 * - the signer that pays for a verified callback (rate-limits.ts chargeSigner) is the credential's entity,
 *   or the credential itself when it has none; its budget is sized from its messages in flight: those of
 *   its campaigns still queued or sending, or finished within the hour (late receipts). Conversations'
 *   replies are few and live within the budget's floor. The count is one indexed query per signer, reused
 *   for a couple of seconds by this process, so a burst of receipts costs no count each.
 */
import { LRUCache } from 'lru-cache';
import { Op, QueryTypes } from 'sequelize';
import type { CallbackSigner } from '../http/rate-limits.js';
import type { SecretBox } from '../security/secret-box.js';
import type { CredentialRow, MessageRow, SmsModels } from './models.js';

/** A message Palanque handed to the provider, with the credential that sent it. */
export interface SentMessage {
  message: Pick<MessageRow, 'id' | 'status' | 'campaign_id'>;
  credential: CredentialRow;
}

/** Who may have signed a receipt: the sender of its message, or, for a message we do not know, the account's credentials. */
export interface ReceiptSigners {
  sent: SentMessage | undefined;
  candidates: CredentialRow[];
}

/** How long a signer's count of messages in flight is reused. */
const IN_FLIGHT_REUSED_MS = 2_000;
/** A finished campaign's messages may still bring late receipts this long. */
const LATE_RECEIPTS_MS = 3_600_000;
/** The most credentials of one account a receipt for an unknown message is tried against. */
const MAX_ACCOUNT_CANDIDATES = 20;

const CREDENTIAL_COLUMNS = ['id', 'name', 'provider', 'account_id', 'sender_id', 'secret_sealed', 'entity_id', 'footer', 'created_by', 'created_at'];

export class CallbackSigners {
  /** Counts in progress or done, per signer: concurrent callbacks of one signer share one query. */
  private readonly inFlight = new LRUCache<string, Promise<number>>({ max: 10_000, ttl: IN_FLIGHT_REUSED_MS });

  constructor(
    private readonly models: SmsModels,
    private readonly box: SecretBox | undefined,
  ) {}

  /** The message with this provider id and its sending credential, in one query; undefined when Palanque sent none. */
  async sentMessage(sid: string): Promise<SentMessage | undefined> {
    const sequelize = this.models.Message.sequelize!;
    const [row] = await sequelize.query<Record<string, unknown>>(
      `SELECT m.id AS m_id, m.status AS m_status, m.campaign_id AS m_campaign_id, ${CREDENTIAL_COLUMNS.map((column) => `c.${column}`).join(', ')}
       FROM sms_messages m
       LEFT JOIN sms_campaigns ca ON ca.id = m.campaign_id
       JOIN sms_credentials c ON c.id = COALESCE(m.credential_id, ca.credential_id)
       WHERE m.provider_sid = ?`,
      { replacements: [sid], type: QueryTypes.SELECT },
    );
    if (!row) return undefined;
    const { m_id: id, m_status: status, m_campaign_id: campaignId, ...credential } = row;
    return { message: { id: Number(id), status: String(status), campaign_id: campaignId === null ? null : Number(campaignId) }, credential: credential as unknown as CredentialRow };
  }

  /** Who may have signed a receipt for `sid` on `accountId` (see the opening comment). */
  async ofReceipt(sid: string, accountId: string): Promise<ReceiptSigners> {
    // No stored sid or account holds a NUL, and SQLite's driver cannot take one inside a statement
    // (Sequelize writes the values into it): such a receipt has no signer (the fuzzer's 500).
    if (sid.includes('\0') || accountId.includes('\0')) return { sent: undefined, candidates: [] };
    const sent = await this.sentMessage(sid);
    if (sent && sent.credential.account_id === accountId) return { sent, candidates: [sent.credential] };
    const onAccount = (await this.models.Credential.findAll({ where: { account_id: accountId }, order: [['id', 'ASC']], limit: MAX_ACCOUNT_CANDIDATES, raw: true })) as unknown as CredentialRow[];
    return { sent: undefined, candidates: onAccount };
  }

  /** A credential's secret, to verify what it signed; undefined without SECRETS_KEY. */
  secretOf(credential: CredentialRow | undefined): string | undefined {
    if (!credential || !this.box) return undefined;
    return this.box.open(credential.secret_sealed);
  }

  /** The signer a credential's callbacks are charged to, and its messages in flight (counted when asked). */
  signerOf(credential: Pick<CredentialRow, 'id' | 'entity_id'>): CallbackSigner {
    const id = credential.entity_id === null ? `credential:${credential.id}` : `entity:${credential.entity_id}`;
    const inFlight = () => {
      let counted = this.inFlight.get(id);
      if (!counted) {
        counted = this.countInFlight(credential);
        this.inFlight.set(id, counted);
        counted.catch(() => this.inFlight.delete(id));
      }
      return counted;
    };
    return { id, inFlight };
  }

  private async countInFlight(credential: Pick<CredentialRow, 'id' | 'entity_id'>): Promise<number> {
    const owner = credential.entity_id === null ? { entity_id: null, credential_id: credential.id } : { entity_id: credential.entity_id };
    const since = new Date(Date.now() - LATE_RECEIPTS_MS);
    const total = await this.models.Campaign.sum('accepted', { where: { ...owner, [Op.or]: [{ state: ['queued', 'sending'] }, { finished_at: { [Op.gte]: since } }] } });
    return Number(total) || 0;
  }
}
