/**
 * The HTTP side of the social network: the webhook subscription handshake, its signed event deliveries,
 * and the data-removal callback with its status page. Signatures are checked by provider-signatures.ts
 * before these handlers run (see `socialnetSignatureChecks`).
 */
import type { components } from '../../sdk/schema.js';
import type { SocialnetSettings } from './settings.js';
import { callerOf } from '../http/auth.js';
import { sendEnvelope } from '../http/envelope.js';
import { ApiError, badRequest, notFound } from '../http/errors.js';
import type { OperationHandlers, OperationId } from '../http/operations.js';
import type { SignatureCheck } from '../http/provider-signatures.js';
import { apiBaseUrl, type PublicUrlSettings } from '../http/public-url.js';
import type { MonitorStore } from '../monitors/store.js';
import { hmac, sameBytes, sameText } from '../security/signatures.js';
import type { SeenDeliveries } from './deliveries.js';
import { receiveDelivery, type EventResult, type MessagingReceiver } from './events.js';
import type { SocialnetRemovals } from './removals.js';
import { checkIssuedAt, readSignedRequest } from './signed-request.js';
import { counted } from '../http/counted.js';

type SocialnetRemovalNotice = components['schemas']['SocialnetRemovalNotice'];

type SocialnetOperations = 'verifySocialnetSubscription' | 'receiveSocialnetEvents' | 'receiveSocialnetRemoval' | 'getSocialnetRemovalStatus';

export interface SocialnetHandlerDependencies {
  settings: SocialnetSettings;
  monitors: MonitorStore;
  /** Where messenger events go (the chat inbox's messenger channel). */
  messenger: MessagingReceiver;
  removals: SocialnetRemovals;
  deliveries: SeenDeliveries;
  urls: PublicUrlSettings;
}

export function socialnetHandlers({ settings, monitors, messenger, removals, deliveries, urls }: SocialnetHandlerDependencies): Pick<Required<OperationHandlers>, SocialnetOperations> {
  return {
    async verifySocialnetSubscription(req, res) {
      const { 'hub.mode': mode, 'hub.challenge': challenge, 'hub.verify_token': token } = req.query;
      const missing = (['hub.mode', 'hub.challenge', 'hub.verify_token'] as const).filter((name) => !req.query[name]);
      if (missing.length > 0) {
        throw badRequest(`The request is malformed: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} required.`, missing.map((field) => ({ location: 'query' as const, field, rule: 'required', message: 'is required' })));
      }
      // Without a configured token no subscription can be confirmed.
      if (mode !== 'subscribe' || !settings.verifyToken || !sameText(token!, settings.verifyToken)) {
        throw new ApiError(403, 'forbidden', mode !== 'subscribe' ? 'hub.mode must be subscribe.' : 'The verify token does not match.');
      }
      res.status(200).type('text/plain').send(challenge);
    },

    async receiveSocialnetEvents(req, res) {
      // Always there: the signature was checked over it before this handler runs.
      const rawBody = (req as { rawBody?: Buffer }).rawBody ?? Buffer.from(JSON.stringify(req.body));
      const result = await receiveDelivery(req.body, rawBody, { monitors, messenger }, deliveries);
      // 200 for a copy seen before too: the network stops retrying only on a 2xx.
      sendEnvelope(res, 200, result, deliveryMessage(result));
    },

    async receiveSocialnetRemoval(req, res) {
      const { signed_request: signedRequest } = req.body as SocialnetRemovalNotice;
      const read = readSignedRequest(signedRequest, settings.appSecret);
      if (read.outcome === 'malformed') {
        throw badRequest(`The signed request is malformed: ${read.reason}.`, [{ location: 'body', field: 'signed_request', rule: 'signed_request', message: read.reason }]);
      }
      if (read.outcome === 'bad_signature') throw new ApiError(403, 'invalid_signature', 'The signed request signature does not match.');
      const problem = checkIssuedAt(read.issuedAt, settings.removalMaxAgeMs);
      if (problem) throw badRequest(`The signed request is refused: issued_at ${problem.message}.`, [{ location: 'body', field: 'signed_request.issued_at', ...problem }]);
      const { created, code } = await removals.receive(signedRequest, read.userId);
      const url = new URL(apiBaseUrl(req, urls) + '/api/callback/socialnet_removal/');
      url.searchParams.set('id', code);
      // Not enveloped: the network reads exactly these two fields.
      res.status(created ? 201 : 200).json({ url: url.toString(), confirmation_code: code });
    },

    async getSocialnetRemovalStatus(req, res) {
      if (!req.query.id) throw badRequest('The request is malformed: id is required.', [{ location: 'query', field: 'id', rule: 'required', message: 'is required' }]);
      const caller = callerOf(res).user;
      const removal = await removals.readableBy(req.query.id, caller);
      if (!removal) throw notFound(`There is no removal request ${req.query.id} you may see.`, [{ location: 'query', field: 'id', rule: 'readable_removal', message: 'must be the code of a removal request you may see' }]);
      const message = { received: 'The request was received.', processing: 'The data is being removed.', completed: 'The data was removed.' }[removal.status];
      sendEnvelope(res, 200, removal, message);
    },
  };
}

/** What the network's delivery became, in words: `1 change received; 2 snapshots stored.` */
function deliveryMessage(result: EventResult): string {
  if (result.duplicate) return `Delivery seen before: ${counted(result.changes, 'change')} ignored.`;
  const stored = result.created + result.replaced + result.unchanged;
  const what = [
    ...(stored > 0 || (result.messages === 0 && result.deliveries === 0) ? [`${counted(stored, 'snapshot')} stored`] : []),
    ...(result.messages > 0 ? [`${counted(result.messages, 'message')} stored in the inbox`] : []),
    ...(result.deliveries > 0 ? [`${counted(result.deliveries, 'answer')} marked delivered`] : []),
  ];
  return `${counted(result.changes, 'change')} received; ${what.join(', ')}.`;
}

/** The event deliveries carry `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body with the app secret>`. */
export function socialnetSignatureChecks(settings: SocialnetSettings): Partial<Record<OperationId, SignatureCheck>> {
  return {
    receiveSocialnetEvents(req) {
      const header = req.get('X-Hub-Signature-256');
      if (!header) return 'missing';
      const match = /^sha256=([0-9a-f]{64})$/i.exec(header.trim());
      if (!match || !settings.appSecret || !req.rawBody) return 'invalid';
      return sameBytes(Buffer.from(match[1]!, 'hex'), hmac('sha256', settings.appSecret, req.rawBody)) ? 'valid' : 'invalid';
    },
  };
}
