/**
 * The HTTP side of SMS: credentials (admins add them, teams list the ones they may use), campaigns, an
 * entity's opt-outs (its owner and admins list them; those who may send add one by hand), and the provider's signed callbacks (delivery
 * receipts by POST, replies by GET), whose signatures `smsSignatureChecks` verifies before these
 * handlers run: a receipt's against the credential that sent its message (callback-signers.ts), a
 * reply's against the token of the credential that received it.
 */
import type { Request } from 'express';
import type { Transaction } from 'sequelize';
import type { components } from '../../sdk/schema.js';
import { callerOf, requireAdmin, type Caller } from '../http/auth.js';
import { invalidBody, requiredText } from '../http/body-fields.js';
import { sendEnvelope } from '../http/envelope.js';
import { requestCreationKey } from '../http/idempotency.js';
import { ApiError, badRequest, notFound, type ErrorDetail } from '../http/errors.js';
import type { OperationHandlers, OperationId } from '../http/operations.js';
import { pageOf } from '../http/pagination.js';
import type { SignatureCheck } from '../http/provider-signatures.js';
import { apiBaseUrl, requestedUrl, type PublicUrlSettings } from '../http/public-url.js';
import type { Entities } from '../entities/index.js';
import { SECRET_MARKER } from '../entities/history.js';
import type { CredentialRow } from './models.js';
import { providerSignatureMatches } from './provider-signature.js';
import { footerProblem, normalisedFooter, refusalDetails } from './compliance.js';
import { normalisedPhone } from '@palanque/rules/recipients';
import type { Sms } from './sms.js';
import type { SentMessage } from './callback-signers.js';
import { counted } from '../http/counted.js';

type SmsOperations = 'listSmsCredentials' | 'createSmsCredential' | 'sendSmsCampaign' | 'listSmsOptOuts' | 'optOutSmsNumber' | 'receiveSmsDeliveryReceipt' | 'receiveSmsWebhook';
type DeliveryReceipt = components['schemas']['SmsDeliveryReceipt'];

const OPT_OUTS_PER_PAGE = 50;

export interface SmsHandlerDependencies {
  sms: Sms;
  entities: Pick<Entities, 'models' | 'teams'> & Partial<Pick<Entities, 'history'>>;
  urls: PublicUrlSettings;
}

export function smsHandlers({ sms, entities, urls }: SmsHandlerDependencies): Pick<Required<OperationHandlers>, SmsOperations> {
  const { teams } = entities;
  return {
    async listSmsCredentials(_req, res) {
      // The contract declares the POST's body on this GET too; it was validated, and is ignored.
      const credentials = await sms.usableBy(callerOf(res));
      sendEnvelope(res, 200, credentials, `${counted(credentials.length, 'credential')}.`);
    },

    async createSmsCredential(req, res) {
      const caller = callerOf(res);
      requireAdmin(caller);
      if (!sms.canStoreSecrets) {
        throw new ApiError(503, 'service_unavailable', 'This deployment has no SECRETS_KEY, so credential secrets cannot be stored.', [], { 'Retry-After': '3600' });
      }
      const problems: ErrorDetail[] = [];
      const name = requiredText('name', req.body.name, problems);
      const senderId = normalisedPhone(req.body.sender_id);
      if (!senderId) problems.push({ location: 'body', field: 'sender_id', rule: 'phone_number', message: 'must be a valid phone number', value: req.body.sender_id });
      const footer = normalisedFooter(req.body.footer);
      const badFooter = footerProblem(footer);
      if (badFooter) problems.push(badFooter);
      if (problems.length > 0 || !senderId) throw invalidBody(problems);
      const entityId = req.body.entity_id;
      if (entityId !== undefined && !(await entities.models.Entity.findByPk(entityId, { attributes: ['id'] }))) {
        throw notFound(`There is no entity ${entityId}.`, [{ location: 'body', field: 'entity_id', rule: 'existing_entity', message: 'must be the id of an entity', value: entityId }]);
      }
      // An entity's credential is part of its edit history; its secret only as "it was set", never its value.
      const changes = [
        { field: 'name', before: null, after: name },
        { field: 'account_id', before: null, after: req.body.account_id },
        { field: 'sender_id', before: null, after: senderId },
        { field: 'secret', before: null, after: SECRET_MARKER },
        ...(footer === null ? [] : [{ field: 'footer', before: null, after: footer }]),
      ];
      const recordCreation = (created: { id: number }, transaction: Transaction) =>
        entityId === undefined || !entities.history
          ? Promise.resolve()
          : entities.history.record({ entityId, subject: 'sms_credential', subjectId: created.id, action: 'created', actorId: caller.user.id, changes }, transaction);
      const added = await sms.addCredential({ name, accountId: req.body.account_id, senderId, secret: req.body.secret, entityId, footer, createdBy: caller.user.id }, recordCreation);
      if (added === 'taken') {
        throw new ApiError(409, 'conflict', 'A credential with this account and sender already exists.', [
          { location: 'body', field: 'sender_id', rule: 'unique_per_account', message: 'already has a credential on this account', value: senderId },
        ]);
      }
      sendEnvelope(res, 201, added, `Credential ${added.id} added.`);
    },

    async sendSmsCampaign(req, res) {
      const caller = callerOf(res);
      const found = await sendingCredential(sms, caller, req.body.credencial);

      // The body read into what it would send, judged by the rules of the credential's entity (campaign-plan.ts).
      const plan = await sms.plan(found.credential, req.body);

      // A retried campaign whose first run committed before its instance died is answered, never sent twice.
      const creationKey = requestCreationKey(res);
      const earlier = creationKey === undefined ? undefined : await sms.campaignByCreationKey(creationKey);
      if (!earlier && plan.recipients.length === 0) {
        throw invalidBody([{ location: 'body', field: plan.audienceField, rule: 'not_opted_out', message: 'every number opted out of campaigns' }]);
      }
      const { mode, warnings } = plan.judgement;
      if (!earlier && mode === 'enforce' && warnings.length > 0) {
        const rules = warnings.map((warning) => warning.rule).join(', ');
        throw new ApiError(
          422,
          'validation_failed',
          `The campaign breaks the electoral rules entity ${found.credential.entity_id} enforces (see getSmsCompliance): ${rules}. Nothing was sent.`,
          refusalDetails(warnings, plan.audienceField, found.credential.id),
        );
      }
      const campaign = earlier ?? (await sms.createCampaign(caller, found.credential, plan, creationKey));
      const warned = campaign.warnings?.length ? `; ${counted(campaign.warnings.length, 'compliance warning')}` : '';
      sendEnvelope(res, 201, campaign, `Campaign ${campaign.id} created: ${counted(campaign.accepted, 'message')} queued${warned}.`);
    },

    async listSmsOptOuts(req, res) {
      const caller = callerOf(res);
      // Every team role may read the entity; only its owner and admins see who opted out of its campaigns.
      const { entity, role } = await teams.access(caller, Number(req.query.entity_id), 'read', { location: 'query', field: 'entity_id' });
      if (!teams.may(caller, role, 'manageTeam')) {
        throw new ApiError(403, 'forbidden', `Your role in this team (${role}) may not list its SMS opt-outs: its owner and admins may.`);
      }
      const page = req.query.page ?? 1;
      const { total, optOuts } = await sms.optOuts.page(entity.id, page, OPT_OUTS_PER_PAGE);
      const listUrl = new URL(apiBaseUrl(req, urls) + '/api/sms/list_opt_outs/');
      listUrl.searchParams.set('entity_id', String(entity.id));
      sendEnvelope(res, 200, pageOf(optOuts, total, page, OPT_OUTS_PER_PAGE, listUrl.toString()), `${counted(total, 'opt-out')}.`);
    },

    async optOutSmsNumber(req, res) {
      const caller = callerOf(res);
      // Those who may send the entity's campaigns may stop them for a number (LGPD art. 8 §5º; Lei 9.504 art. 57-G).
      const { entity } = await teams.access(caller, req.body.entity_id, 'edit', { location: 'body', field: 'entity_id' });
      const phone = normalisedPhone(req.body.phone);
      if (!phone) throw invalidBody([{ location: 'body', field: 'phone', rule: 'phone_number', message: 'must be a valid phone number', value: req.body.phone }]);
      const added = await sms.optOuts.record([entity.id], phone, { source: 'manual', createdBy: caller.user.id });
      const optOut = (await sms.optOuts.find(entity.id, phone))!;
      sendEnvelope(res, added ? 201 : 200, optOut, added ? `${phone} is opted out of entity ${entity.id}'s campaigns.` : `${phone} had opted out of entity ${entity.id}'s campaigns already.`);
    },

    async receiveSmsDeliveryReceipt(req, res) {
      const receipt = req.body as DeliveryReceipt;
      const signed = verifiedReceipts.get(req);
      // Signed by a credential of the account, for a message we never sent there: acknowledged with a
      // 2xx, as the provider expects, and dropped without a write.
      const result = signed && !signed.sent
        ? undefined
        : await sms.applyReceipt({ sid: receipt.MessageSid, accountId: receipt.AccountSid, status: receipt.MessageStatus, errorCode: receipt.ErrorCode, price: receiptPriceOf(receipt) }, signed?.sent);
      if (!result) {
        sendEnvelope(res, 200, { message_sid: receipt.MessageSid, status: 'unknown', applied: false }, `No message has the id ${receipt.MessageSid}: the receipt was acknowledged and dropped.`);
        return;
      }
      sendEnvelope(res, 200, result, result.applied ? `The message is now ${result.status}.` : `The receipt changes nothing: the message is ${result.status}.`);
    },

    async receiveSmsWebhook(req, res) {
      const { MessageSid: sid, AccountSid: accountId, From: from, To: to, Body: body } = req.query;
      const missing = (['MessageSid', 'AccountSid', 'From', 'To', 'Body'] as const).filter((name) => req.query[name] === undefined);
      if (missing.length > 0) {
        throw badRequest(`The request is malformed: ${missing.join(', ')} missing.`, missing.map((field) => ({ location: 'query' as const, field, rule: 'required', message: 'is required' })));
      }
      const reply = await sms.receiveReply({ sid: sid!, accountId: accountId!, from: from!, to: to!, body: body! });
      sendEnvelope(res, 200, reply, reply.opted_out ? 'The number was opted out of future campaigns.' : 'The reply was recorded.');
    },
  };
}

/** The price a receipt carries, when it is a decimal in a three-letter currency (anything else is not recorded). */
function receiptPriceOf(receipt: DeliveryReceipt): { amount: string; currency: string } | undefined {
  const { Price: amount, PriceUnit: currency } = receipt;
  if (amount === undefined || currency === undefined || !/^-?\d{1,11}(\.\d{1,7})?$/.test(amount) || !/^[A-Za-z]{3}$/.test(currency)) return undefined;
  return { amount, currency: currency.toUpperCase() };
}

/** The receipts whose signature verified, with the message they are about (undefined: one we never sent), for their handler. */
const verifiedReceipts = new WeakMap<Request, { sent: SentMessage | undefined }>();

/**
 * The provider signs each callback with the secret of the credential it concerns: a receipt is checked
 * against the credential that sent its message (found by `MessageSid`), or, for a message we never sent
 * on that account, against the account's credentials (callback-signers.ts); a reply against the
 * credential that received it. A callback that verifies is charged to its signer's budget, not its address.
 */
export function smsSignatureChecks(sms: Sms, urls: PublicUrlSettings): Partial<Record<OperationId, SignatureCheck>> {
  const matching = (req: Request, signature: string, candidates: Array<CredentialRow | undefined>, form: Record<string, string>) => {
    const url = requestedUrl(req, urls);
    return candidates.find((credential) => {
      const secret = sms.signers.secretOf(credential);
      return secret !== undefined && providerSignatureMatches(secret, signature, url, form);
    });
  };
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return {
    receiveSmsDeliveryReceipt: async (req) => {
      const signature = req.get('X-Twilio-Signature');
      if (!signature) return 'missing';
      // The fields exactly as sent (the validator may have coerced the parsed body).
      const form = Object.fromEntries(new URLSearchParams(req.rawBody?.toString('utf8') ?? ''));
      const [sid, accountId] = [text(form.MessageSid), text(form.AccountSid)];
      if (sid === undefined || accountId === undefined) return 'invalid';
      const { sent, candidates } = await sms.signers.ofReceipt(sid, accountId);
      const signer = matching(req, signature, candidates, form);
      if (!signer) return 'invalid';
      verifiedReceipts.set(req, { sent });
      return { signer: sms.signers.signerOf(signer) };
    },
    // Against the token of the credential that received the reply: its opt-out binds that credential's entity.
    receiveSmsWebhook: async (req) => {
      const signature = req.get('X-Twilio-Signature');
      if (!signature) return 'missing';
      const accountId = text(req.query.AccountSid);
      const receiver = accountId === undefined ? undefined : await sms.receiverOf(accountId, text(req.query.To));
      if (!matching(req, signature, [receiver], {})) return 'invalid';
      return { signer: sms.signers.signerOf(receiver!) };
    },
  };
}

/**
 * The credential a campaign request names (`credencial`), if the caller may send with it: 403 for a member
 * of its team whose role may not send; 404 for everyone else, with the same answer as for a missing one.
 */
export async function sendingCredential(sms: Sms, caller: Caller, credencial: number): Promise<{ credential: CredentialRow; usable: true }> {
  const found = await sms.credentialFor(caller, credencial);
  if (!found) throw notFound(`There is no SMS credential ${credencial}.`, [{ location: 'body', field: 'credencial', rule: 'existing_credential', message: 'must be the id of a credential', value: credencial }]);
  if (!found.usable) throw new ApiError(403, 'forbidden', `You may not send with credential ${credencial}.`);
  return { credential: found.credential, usable: true };
}
