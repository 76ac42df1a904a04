/**
 * The HTTP side of notifications and push subscriptions: the caller's own, always (someone else's
 * notification or device is 404 like a missing one, admins included).
 */
import { createPublicKey } from 'node:crypto';
import { callerOf } from '../http/auth.js';
import { sendEnvelope } from '../http/envelope.js';
import { invalidBody } from '../http/body-fields.js';
import { ApiError, notFound, type ErrorDetail } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import { pageOf } from '../http/pagination.js';
import { apiBaseUrl, type PublicUrlSettings } from '../http/public-url.js';
import { RefusedDestination } from '../webhooks/outbound-http.js';
import { notificationView, type Notifications } from './notifications.js';
import { subscriptionView, type PushSubscriptions } from './push-subscriptions.js';
import { counted } from '../http/counted.js';

type NotificationOperations = 'listNotifications' | 'countUnreadNotifications' | 'markNotificationRead' | 'markAllNotificationsRead';
type PushOperations = 'getPushPublicKey' | 'listPushSubscriptions' | 'addPushSubscription' | 'removePushSubscription';

const NOTIFICATIONS_PER_PAGE = 30;

export function notificationHandlers(notifications: Notifications, urls: PublicUrlSettings): Pick<Required<OperationHandlers>, NotificationOperations> {
  return {
    async listNotifications(req, res) {
      const userId = callerOf(res).user.id;
      const page = req.query.page ?? 1;
      const unreadOnly = req.query.unread_only === true;
      const { total, unread, rows } = await notifications.page(userId, unreadOnly, page, NOTIFICATIONS_PER_PAGE);
      const listUrl = new URL(`${apiBaseUrl(req, urls)}/api/notifications/`);
      if (unreadOnly) listUrl.searchParams.set('unread_only', 'true');
      const data = { ...pageOf(rows.map(notificationView), total, page, NOTIFICATIONS_PER_PAGE, listUrl.toString()), unread };
      sendEnvelope(res, 200, data, `${counted(total, 'notification')}, ${unread} unread.`);
    },

    async countUnreadNotifications(_req, res) {
      const unread = await notifications.unread(callerOf(res).user.id);
      sendEnvelope(res, 200, { unread }, `${counted(unread, 'unread notification')}.`);
    },

    async markNotificationRead(req, res) {
      const id = req.params.notification_id;
      const row = await notifications.markRead(callerOf(res).user.id, id);
      if (!row) {
        throw notFound(`You have no notification ${id}.`, [{ location: 'path', field: 'notification_id', rule: 'yours', message: 'must be one of your notifications', value: id }]);
      }
      sendEnvelope(res, 200, notificationView(row), `Notification ${id} read.`);
    },

    async markAllNotificationsRead(_req, res) {
      const result = await notifications.markAllRead(callerOf(res).user.id);
      sendEnvelope(res, 200, result, `${counted(result.marked, 'notification')} marked read.`);
    },
  };
}

export function pushHandlers(push: PushSubscriptions): Pick<Required<OperationHandlers>, PushOperations> {
  return {
    async getPushPublicKey(_req, res) {
      const publicKey = push.publicKey ?? null;
      sendEnvelope(res, 200, { public_key: publicKey }, publicKey ? 'The VAPID public key.' : 'This deployment sends no push notifications.');
    },

    async listPushSubscriptions(_req, res) {
      const rows = await push.list(callerOf(res).user.id);
      sendEnvelope(res, 200, rows.map(subscriptionView), `${counted(rows.length, 'push subscription')}.`);
    },

    async addPushSubscription(req, res) {
      const { endpoint, keys } = req.body;
      if (!push.publicKey) {
        throw new ApiError(422, 'validation_failed', 'This deployment sends no push notifications.', [
          { location: 'body', field: 'endpoint', rule: 'push_enabled', message: 'cannot be subscribed: this deployment has no VAPID keys', value: endpoint },
        ]);
      }
      const problems: ErrorDetail[] = [];
      const checked = await push.checkEndpoint(endpoint).catch((error: unknown) => {
        if (!(error instanceof RefusedDestination)) throw error;
        problems.push({ location: 'body', field: 'endpoint', rule: 'public_https_url', message: `must be an https URL of a public address: ${error.message}`, value: endpoint });
        return undefined;
      });
      if (!isP256PublicKey(keys.p256dh)) {
        problems.push({ location: 'body', field: 'keys.p256dh', rule: 'p256_public_key', message: 'must be an uncompressed P-256 public key (65 bytes, base64url)', value: keys.p256dh });
      }
      if (problems.length > 0 || !checked) throw invalidBody(problems);
      const { outcome, row } = await push.subscribe(callerOf(res).user.id, { ...req.body, endpoint: checked });
      if (outcome === 'created') sendEnvelope(res, 201, subscriptionView(row), `Push subscription ${row.id} added.`);
      else sendEnvelope(res, 200, subscriptionView(row), `Push subscription ${row.id} was there already; its keys and name were replaced.`);
    },

    async removePushSubscription(req, res) {
      const id = req.params.subscription_id;
      const row = await push.remove(callerOf(res).user.id, id);
      if (!row) {
        throw notFound(`You have no push subscription ${id}.`, [{ location: 'path', field: 'subscription_id', rule: 'yours', message: 'must be one of your push subscriptions', value: id }]);
      }
      sendEnvelope(res, 200, subscriptionView(row), `Push subscription ${id} removed.`);
    },
  };
}

/** Whether `key` (base64url) is a point of P-256, uncompressed, as browsers give `p256dh`. */
function isP256PublicKey(key: string): boolean {
  const bytes = Buffer.from(key, 'base64url');
  if (bytes.length !== 65 || bytes[0] !== 0x04) return false;
  try {
    createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: bytes.subarray(1, 33).toString('base64url'), y: bytes.subarray(33).toString('base64url') }, format: 'jwk' });
    return true;
  } catch {
    return false;
  }
}
