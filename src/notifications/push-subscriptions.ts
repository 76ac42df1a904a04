/**
 * Web Push subscriptions (issue 25, the `push notifications` tag): a user's devices, and the push of each
 * of the user's notifications to each of them, one job per notification and device, so a device that
 * fails is retried without pushing twice to the others. A device whose push service answers that the
 * subscription is gone (404 or 410) is removed.
 *
 * The endpoint is a capability: whoever knows it can push to the device, so it is never shown (only its
 * push service's origin) and it must be an https URL of a public address, like a webhook's, checked
 * when registered and again by the sender when connecting (webhooks/outbound-http.ts: a name re-pointed
 * at a private address since is refused).
 */
import { createHash } from 'node:crypto';
import type { JobAttempt, JobQueue } from '../jobs/index.js';
import type { Logger } from '../logger.js';
import { PushSender, type VapidKeys } from '../push/sender.js';
import { checkDestination, type LookupAll, type OutboundPolicy } from '../webhooks/outbound-http.js';
import type { NotificationModels, NotificationRow, PushSubscriptionRow } from './models.js';
import { notificationView } from './notifications.js';

export const PUSH_JOB = 'push-notification';
/** A user's devices at most: the next one replaces the one pushed to least recently. */
export const MAX_PUSH_SUBSCRIPTIONS = 20;
const PUSH_RETRIES = 4;

export interface PushSettings {
  /** VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY and VAPID_SUBJECT; without them no push is sent. */
  vapid: VapidKeys | undefined;
  /** Who may be connected to (the push services' addresses, as webhooks'). */
  outbound: OutboundPolicy;
  /** How endpoints' names resolve (the system's resolver when unset; tests give a rebinding one). */
  lookupAll?: LookupAll;
}

export interface NewSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
  expirationTime?: number | null;
  device_name?: string | null;
}

export type SubscriptionView = ReturnType<typeof subscriptionView>;

export class PushSubscriptions {
  private readonly sender: PushSender | undefined;

  constructor(
    private readonly models: NotificationModels,
    private readonly jobs: JobQueue,
    private readonly settings: PushSettings,
    private readonly logger: Logger,
  ) {
    this.sender = settings.vapid ? new PushSender(settings.vapid, { outbound: pushPolicy(settings.outbound), lookupAll: settings.lookupAll }) : undefined;
  }

  /** The VAPID public key front ends subscribe with; undefined when this deployment sends no push. */
  get publicKey(): string | undefined {
    return this.settings.vapid?.publicKey;
  }

  async registerJobs(): Promise<void> {
    await this.jobs.register(PUSH_JOB, (data, job) => this.push(data as PushJob, job), { retryLimit: PUSH_RETRIES });
  }

  /** Checks a subscription's endpoint (throws RefusedDestination), returning its normalised URL. */
  async checkEndpoint(endpoint: string): Promise<string> {
    return checkDestination(endpoint, pushPolicy(this.settings.outbound), this.settings.lookupAll);
  }

  /** Subscribes the endpoint for the user (`created`), or replaces its keys and name (`replaced`). */
  async subscribe(userId: number, subscription: NewSubscription, now = new Date()): Promise<{ outcome: 'created' | 'replaced'; row: PushSubscriptionRow }> {
    const digest = digestOf(subscription.endpoint);
    const fields = {
      user_id: userId,
      endpoint: subscription.endpoint,
      p256dh: subscription.keys.p256dh,
      auth: subscription.keys.auth,
      expiration_time: subscription.expirationTime ?? null,
      device_name: subscription.device_name ?? null,
    };
    return this.models.PushSubscription.sequelize!.transaction(async (transaction) => {
      const existing = await this.models.PushSubscription.findOne({ where: { endpoint_digest: digest }, transaction, lock: transaction.LOCK.UPDATE });
      // A device signed in as someone else now pushes to its new user only.
      if (existing) {
        await existing.update(fields, { transaction });
        return { outcome: 'replaced' as const, row: existing.get({ plain: true }) };
      }
      const mine = await this.models.PushSubscription.findAll({ where: { user_id: userId }, order: [['last_pushed_at', 'ASC'], ['id', 'ASC']], transaction });
      for (const stale of mine.slice(0, Math.max(0, mine.length - MAX_PUSH_SUBSCRIPTIONS + 1))) await stale.destroy({ transaction });
      const row = await this.models.PushSubscription.create({ ...fields, endpoint_digest: digest, created_at: now, last_pushed_at: null }, { transaction });
      return { outcome: 'created' as const, row: row.get({ plain: true }) };
    });
  }

  async list(userId: number): Promise<PushSubscriptionRow[]> {
    return (await this.models.PushSubscription.findAll({ where: { user_id: userId }, order: [['id', 'DESC']], raw: true })) as unknown as PushSubscriptionRow[];
  }

  /** Removes the user's subscription, answering it as it was; undefined when the user has none with this id. */
  async remove(userId: number, id: number): Promise<PushSubscriptionRow | undefined> {
    const row = await this.models.PushSubscription.findOne({ where: { id, user_id: userId } });
    if (!row) return undefined;
    await row.destroy();
    return row.get({ plain: true });
  }

  /** Queues the push of each notification to each device of its user (called for every new notification). */
  async queue(notifications: NotificationRow[]): Promise<void> {
    if (!this.sender || notifications.length === 0) return;
    const userIds = [...new Set(notifications.map((row) => row.user_id))];
    const devices = (await this.models.PushSubscription.findAll({ where: { user_id: userIds }, attributes: ['id', 'user_id'], raw: true })) as unknown as Pick<PushSubscriptionRow, 'id' | 'user_id'>[];
    const jobs = notifications.flatMap((notification) =>
      devices.filter((device) => device.user_id === notification.user_id).map((device) => ({ notification_id: notification.id, subscription_id: device.id })),
    );
    if (jobs.length > 0) await this.jobs.enqueueMany(PUSH_JOB, jobs);
  }

  /** The job: pushes one notification to one device; a device gone is removed, a failure retried. */
  private async push({ notification_id, subscription_id }: PushJob, job: JobAttempt): Promise<string> {
    const [notification, device] = await Promise.all([
      this.models.Notification.findByPk(notification_id, { raw: true }) as Promise<NotificationRow | null>,
      this.models.PushSubscription.findByPk(subscription_id, { raw: true }) as Promise<PushSubscriptionRow | null>,
    ]);
    // Unsubscribed, read, or given to another user meanwhile: nothing to push.
    if (!notification || !device || device.user_id !== notification.user_id || notification.read_at) return 'skipped';
    const sent = await this.sender!.send({ endpoint: device.endpoint, keys: { p256dh: device.p256dh, auth: device.auth } }, pushPayload(notification));
    switch (sent.outcome) {
      case 'delivered':
        await this.models.PushSubscription.update({ last_pushed_at: new Date() }, { where: { id: device.id } });
        return 'delivered';
      case 'gone':
        await this.models.PushSubscription.destroy({ where: { id: device.id } });
        this.logger.info({ subscription: device.id, status: sent.status }, 'push subscription gone; removed');
        return 'gone';
      case 'failed':
        if (job.lastAttempt) this.logger.warn({ subscription: device.id, reason: sent.reason }, 'push failed on its last try');
        throw new Error(`push to subscription ${device.id} failed: ${sent.reason}`);
    }
  }
}

/**
 * Webhooks' policy, with http only where private addresses are allowed too (the tests and the sandbox,
 * for the push service simulator on loopback): a browser's subscription always names an https push
 * service (RFC 8030 §8), so an http endpoint elsewhere was not made by a browser.
 */
function pushPolicy(outbound: OutboundPolicy): OutboundPolicy {
  return { ...outbound, allowHttp: outbound.allowHttp && outbound.allowPrivateAddresses };
}

interface PushJob {
  notification_id: number;
  subscription_id: number;
}

/** What a device's service worker receives: the notification as the API shows it. */
export function pushPayload(notification: NotificationRow): object {
  return notificationView(notification);
}

/** A subscription as the contract shows it. */
export function subscriptionView(row: PushSubscriptionRow) {
  return {
    id: row.id,
    device_name: row.device_name,
    push_service: new URL(row.endpoint).origin,
    created_at: new Date(row.created_at).toISOString(),
    last_pushed_at: row.last_pushed_at ? new Date(row.last_pushed_at).toISOString() : null,
  };
}

function digestOf(endpoint: string): string {
  return createHash('sha256').update(endpoint).digest('hex');
}

