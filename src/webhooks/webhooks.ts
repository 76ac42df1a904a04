/**
 * Outbound webhooks (issue 25): an entity's endpoints, the events published to them, and each delivery
 * sent by a job as the Standard Webhooks specification says (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`, signed by the `standardwebhooks` package with the endpoint's secret).
 *
 * Guarantees:
 * - A delivery keeps its message id, and its payload, on every try: a receiver drops repeats by id.
 * - A failed try is retried by the job queue with growing delays (WebhookSettings); the last failure
 *   marks the delivery `failed`. A try by hand (`resend`) is one try, never retried.
 * - An endpoint fails from its first failed try after a success (`failing_since`); a failure a day
 *   (`disableAfterMs`) after that disables it, and the entity's owner and admins are notified once (the
 *   update that disables it is conditional, so two failing tries at once cannot both notify).
 * - Where a delivery may go is checked when the endpoint is registered and again on every connect
 *   (outbound-http.ts): an address that became private since (DNS rebinding) fails the try.
 */
import { randomBytes } from 'node:crypto';
import { Op, type Sequelize } from 'sequelize';
import { Webhook } from 'standardwebhooks';
import { withLockedTransaction } from '../db/locks.js';
import type { JobAttempt, JobQueue } from '../jobs/index.js';
import type { Logger } from '../logger.js';
import type { Notifications } from '../notifications/notifications.js';
import type { SecretBox } from '../security/secret-box.js';
import { checkDestination, postJson, RefusedDestination, type LookupAll, type OutboundPolicy } from './outbound-http.js';
import { defineWebhookModels, type AttemptRow, type DeliveryRow, type EndpointRow, type WebhookModels } from './models.js';
import type { WebhookSettings } from './settings.js';

export const WEBHOOK_DELIVERY_JOB = 'webhook-delivery';
export const MAX_ENDPOINTS_PER_ENTITY = 20;
/** The attempts a delivery shows in the log at most (its newest). */
export const ATTEMPTS_SHOWN = 50;

export interface WebhookDependencies {
  jobs: JobQueue;
  logger: Logger;
  notifications: Notifications;
  /** Seals the endpoints' secrets (SECRETS_KEY); without it no endpoint can be registered. */
  box: SecretBox | undefined;
  outbound: OutboundPolicy;
  settings: WebhookSettings;
  /** How names are resolved (tests give one that changes its answer, as a rebinding DNS would). */
  lookupAll?: LookupAll;
  /** Counts failed tries (the metrics); nothing counted when absent. */
  counts?: WebhookCounts;
}

/** What the delivery job counts: each failed try, `final` when no retry follows it. */
export interface WebhookCounts {
  webhookDeliveryFailed(final: boolean): void;
}

export interface NewEndpoint {
  entity_id: number;
  url: string;
  event_types: string[];
  description?: string | null;
  send_trace_context?: boolean;
  created_by: number;
}

export type EndpointChanges = Partial<Pick<EndpointRow, 'url' | 'description' | 'enabled' | 'send_trace_context'> & { event_types: string[] }>;

interface DeliveryJob {
  delivery_id: number;
  trigger: 'automatic' | 'manual';
}

export class Webhooks {
  readonly models: WebhookModels;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly dependencies: WebhookDependencies,
  ) {
    this.models = defineWebhookModels(sequelize);
  }

  get canStoreSecrets(): boolean {
    return this.dependencies.box !== undefined;
  }

  async registerJobs(): Promise<void> {
    const { retries, retryDelaySeconds } = this.dependencies.settings;
    await this.dependencies.jobs.register(WEBHOOK_DELIVERY_JOB, (data, job) => this.deliver(data as DeliveryJob, job), {
      retryLimit: retries,
      retryDelaySeconds,
      backoff: true,
    });
  }

  /** Checks an endpoint's URL (throws RefusedDestination), returning it normalised. */
  async checkUrl(url: string): Promise<string> {
    return checkDestination(url, this.dependencies.outbound, this.dependencies.lookupAll);
  }

  // --- Endpoints ----------------------------------------------------------------------------------

  /** Registers an endpoint, answering it with its secret; `max_endpoints` when the entity has its most. */
  async add(endpoint: NewEndpoint, now = new Date()): Promise<{ row: EndpointRow; secret: string } | 'max_endpoints'> {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    // Counted and inserted under the entity's lock, so two registrations at once cannot pass the limit.
    return withLockedTransaction(this.sequelize, [`webhook-endpoints:${endpoint.entity_id}`], async (transaction) => {
      const count = await this.models.Endpoint.count({ where: { entity_id: endpoint.entity_id }, transaction });
      if (count >= MAX_ENDPOINTS_PER_ENTITY) return 'max_endpoints' as const;
      const row = await this.models.Endpoint.create(
        {
          entity_id: endpoint.entity_id,
          url: endpoint.url,
          description: endpoint.description ?? null,
          event_types: eventTypesColumn(endpoint.event_types),
          secret_sealed: this.dependencies.box!.seal(secret),
          enabled: true,
          disabled_reason: null,
          failing_since: null,
          send_trace_context: endpoint.send_trace_context ?? false,
          created_by: endpoint.created_by,
          created_at: now,
          updated_at: now,
        },
        { transaction },
      );
      return { row: row.get({ plain: true }), secret };
    });
  }

  async ofEntity(entityId: number): Promise<EndpointRow[]> {
    return (await this.models.Endpoint.findAll({ where: { entity_id: entityId }, order: [['id', 'ASC']], raw: true })) as unknown as EndpointRow[];
  }

  async endpoint(id: number): Promise<EndpointRow | undefined> {
    return ((await this.models.Endpoint.findByPk(id, { raw: true })) as unknown as EndpointRow | null) ?? undefined;
  }

  /** Changes an endpoint; enabling it clears why it was disabled and its failures. */
  async update(id: number, changes: EndpointChanges, now = new Date()): Promise<EndpointRow> {
    const { event_types, ...fields } = changes;
    const values: Partial<EndpointRow> = { ...fields, updated_at: now };
    if (event_types) values.event_types = eventTypesColumn(event_types);
    if (changes.enabled === true) Object.assign(values, { disabled_reason: null, failing_since: null });
    if (changes.enabled === false) values.disabled_reason = 'Disabled by hand.';
    await this.models.Endpoint.update(values, { where: { id } });
    return (await this.endpoint(id))!;
  }

  async remove(id: number): Promise<void> {
    await this.models.Endpoint.destroy({ where: { id } });
  }

  // --- Events and deliveries ----------------------------------------------------------------------

  /** Queues a delivery of the event to each enabled endpoint of the entity that asked for its type. */
  async publish(entityId: number, type: string, data: object, now = new Date()): Promise<DeliveryRow[]> {
    const endpoints = (await this.models.Endpoint.findAll({ where: { entity_id: entityId, enabled: true }, raw: true })) as unknown as EndpointRow[];
    const wanting = endpoints.filter((endpoint) => endpoint.event_types.split(',').includes(type));
    const deliveries: DeliveryRow[] = [];
    for (const endpoint of wanting) deliveries.push(await this.queue(endpoint, type, { entity_id: entityId, ...data }, now));
    return deliveries;
  }

  /** Queues a `webhook.test` event to the endpoint, enabled or not. */
  async sendTest(endpoint: EndpointRow, requestedBy: number): Promise<DeliveryRow> {
    return this.queue(endpoint, 'webhook.test', { entity_id: endpoint.entity_id, endpoint_id: endpoint.id, requested_by: requestedBy });
  }

  /** Queues one try by hand of a delivery (not retried); the delivery is `pending` until it ends. */
  async resend(delivery: DeliveryRow): Promise<DeliveryRow> {
    await this.models.Delivery.update({ status: 'pending', updated_at: new Date() }, { where: { id: delivery.id } });
    await this.dependencies.jobs.enqueue(WEBHOOK_DELIVERY_JOB, { delivery_id: delivery.id, trigger: 'manual' } satisfies DeliveryJob);
    return (await this.delivery(delivery.id))!;
  }

  async delivery(id: number): Promise<DeliveryRow | undefined> {
    return ((await this.models.Delivery.findByPk(id, { raw: true })) as unknown as DeliveryRow | null) ?? undefined;
  }

  /** A page of the endpoint's deliveries, the newest first, with their attempts. */
  async deliveries(endpointId: number, page: number, pageSize: number): Promise<{ total: number; deliveries: DeliveryRow[]; attempts: Map<number, AttemptRow[]> }> {
    const [total, deliveries] = await Promise.all([
      this.models.Delivery.count({ where: { endpoint_id: endpointId } }),
      this.models.Delivery.findAll({ where: { endpoint_id: endpointId }, order: [['id', 'DESC']], limit: pageSize, offset: (page - 1) * pageSize, raw: true }) as unknown as Promise<DeliveryRow[]>,
    ]);
    return { total, deliveries, attempts: await this.attemptsOf(deliveries.map((delivery) => delivery.id)) };
  }

  async attemptsOf(deliveryIds: number[]): Promise<Map<number, AttemptRow[]>> {
    const attempts = new Map<number, AttemptRow[]>(deliveryIds.map((id) => [id, []]));
    if (deliveryIds.length === 0) return attempts;
    const rows = (await this.models.Attempt.findAll({ where: { delivery_id: { [Op.in]: deliveryIds } }, order: [['id', 'ASC']], raw: true })) as unknown as AttemptRow[];
    for (const row of rows) attempts.get(row.delivery_id)!.push(row);
    for (const [id, list] of attempts) attempts.set(id, list.slice(-ATTEMPTS_SHOWN));
    return attempts;
  }

  private async queue(endpoint: EndpointRow, type: string, data: object, now = new Date()): Promise<DeliveryRow> {
    const payload = JSON.stringify({ type, timestamp: now.toISOString(), data });
    const row = await this.models.Delivery.create({
      endpoint_id: endpoint.id,
      message_id: `msg_${randomBytes(18).toString('base64url').replace(/[-_]/g, '0')}`,
      event_type: type,
      payload,
      status: 'pending',
      attempt_count: 0,
      created_at: now,
      updated_at: now,
    });
    const delivery = row.get({ plain: true });
    await this.dependencies.jobs.enqueue(WEBHOOK_DELIVERY_JOB, { delivery_id: delivery.id, trigger: 'automatic' } satisfies DeliveryJob);
    return delivery;
  }

  // --- The delivery job ---------------------------------------------------------------------------

  /** One try of a delivery: signed, sent, logged; a failure throws for the queue to retry (automatic tries only). */
  private async deliver({ delivery_id, trigger }: DeliveryJob, job: JobAttempt): Promise<string> {
    const delivery = await this.delivery(delivery_id);
    const endpoint = delivery && (await this.endpoint(delivery.endpoint_id));
    if (!delivery || !endpoint) return 'gone'; // removed with its endpoint
    // An endpoint disabled meanwhile gets no more automatic tries; a test or a resend still goes.
    if (trigger === 'automatic' && !endpoint.enabled && delivery.event_type !== 'webhook.test') {
      await this.models.Delivery.update({ status: 'failed', updated_at: new Date() }, { where: { id: delivery.id } });
      return 'endpoint disabled';
    }
    const attempt = await this.attempt(delivery, endpoint, trigger);
    const succeeded = attempt.error === null;
    if (succeeded) await this.models.Endpoint.update({ failing_since: null }, { where: { id: endpoint.id } });
    const disabledNow = !succeeded && (await this.recordFailure(endpoint, attempt));
    // No retry follows a try by hand, the queue's last try, or a try that disabled the endpoint.
    const finalTry = succeeded || trigger === 'manual' || job.lastAttempt || disabledNow;
    await this.models.Delivery.update(
      { status: succeeded ? 'succeeded' : finalTry ? 'failed' : 'pending', attempt_count: delivery.attempt_count + 1, updated_at: attempt.attempted_at },
      { where: { id: delivery.id } },
    );
    if (succeeded) return 'succeeded';
    this.dependencies.counts?.webhookDeliveryFailed(finalTry);
    if (finalTry) return `failed: ${attempt.error}`;
    throw new Error(`webhook delivery ${delivery.id} failed: ${attempt.error}`);
  }

  /** Signs and sends the delivery once, and logs the attempt. */
  private async attempt(delivery: DeliveryRow, endpoint: EndpointRow, trigger: AttemptRow['trigger']): Promise<AttemptRow> {
    const secret = this.dependencies.box?.open(endpoint.secret_sealed);
    const attemptedAt = new Date();
    const started = performance.now();
    let outcome: Pick<AttemptRow, 'status_code' | 'error' | 'response_body'>;
    if (!secret) {
      outcome = { status_code: null, error: 'this deployment has no SECRETS_KEY to open the endpoint secret with', response_body: null };
    } else {
      const headers = {
        'webhook-id': delivery.message_id,
        'webhook-timestamp': String(Math.floor(attemptedAt.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign(delivery.message_id, attemptedAt, delivery.payload),
      };
      // The trace context (the delivery job's span, a child of what published the event) goes only to an endpoint that asked for it.
      const options = { traceContext: Boolean(endpoint.send_trace_context) };
      outcome = await postJson(endpoint.url, delivery.payload, headers, this.dependencies.outbound, this.dependencies.lookupAll, options).then(
        (response) => ({
          status_code: response.status,
          error: response.status >= 200 && response.status < 300 ? null : `the endpoint answered ${response.status}`,
          response_body: response.body.slice(0, 1024) || null,
        }),
        (error: unknown) => ({
          status_code: null,
          error: (error instanceof RefusedDestination ? `refused: ${error.message}` : (error as Error).message).slice(0, 500),
          response_body: null,
        }),
      );
    }
    const row = await this.models.Attempt.create({ delivery_id: delivery.id, trigger, ...outcome, duration_ms: Math.round(performance.now() - started), attempted_at: attemptedAt });
    return row.get({ plain: true });
  }

  /** Notes the endpoint's failure; disables it after a day of failures (once); whether it is now disabled. */
  private async recordFailure(endpoint: EndpointRow, attempt: AttemptRow): Promise<boolean> {
    const now = attempt.attempted_at;
    await this.models.Endpoint.update({ failing_since: now }, { where: { id: endpoint.id, failing_since: null } });
    const failingSince = (await this.endpoint(endpoint.id))?.failing_since;
    if (!failingSince || now.getTime() - new Date(failingSince).getTime() < this.dependencies.settings.disableAfterMs) return false;
    const reason = `Every delivery failed for ${describeSpan(this.dependencies.settings.disableAfterMs)} (the last: ${attempt.error}).`.slice(0, 500);
    const [disabled] = await this.models.Endpoint.update({ enabled: false, disabled_reason: reason, updated_at: now }, { where: { id: endpoint.id, enabled: true } });
    if (disabled === 1) await this.announceDisabled(endpoint, reason);
    return true;
  }

  private async announceDisabled(endpoint: EndpointRow, reason: string): Promise<void> {
    const { notifications, logger } = this.dependencies;
    logger.warn({ endpoint: endpoint.id, entity: endpoint.entity_id, reason }, 'webhook endpoint disabled after a day of failures');
    await notifications.notify(await notifications.teamMembers(endpoint.entity_id, ['owner', 'admin']), {
      type: 'webhook_endpoint_disabled',
      title: `Webhook desativado: ${endpoint.description ?? new URL(endpoint.url).host}`,
      body: `O endpoint ${endpoint.url} foi desativado: ${reason} Corrija o receptor e reative-o.`,
      entityId: endpoint.entity_id,
      subject: { kind: 'webhook_endpoint', id: endpoint.id },
    });
  }
}

function eventTypesColumn(types: string[]): string {
  return [...new Set(types)].sort().join(',');
}

function describeSpan(ms: number): string {
  if (ms % 86_400_000 === 0 && ms > 0) return ms === 86_400_000 ? 'a day' : `${ms / 86_400_000} days`;
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000} hours`;
  return `${Math.round(ms / 1000)} seconds`;
}

/** An endpoint as the contract shows it (never its secret). */
export function endpointView(row: EndpointRow) {
  return {
    id: row.id,
    entity_id: row.entity_id,
    url: row.url,
    description: row.description,
    event_types: row.event_types.split(',') as Array<'sms_campaign.completed' | 'conversation.message_received' | 'scenario_request.finished' | 'monitor.alert'>,
    enabled: Boolean(row.enabled),
    disabled_reason: row.disabled_reason,
    failing_since: row.failing_since ? new Date(row.failing_since).toISOString() : null,
    send_trace_context: Boolean(row.send_trace_context),
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

/** A delivery as the contract shows it, with its attempts. */
export function deliveryView(row: DeliveryRow, attempts: AttemptRow[]) {
  return {
    id: row.id,
    endpoint_id: row.endpoint_id,
    message_id: row.message_id,
    event_type: row.event_type,
    status: row.status,
    payload: JSON.parse(row.payload) as { type: string; timestamp: string; data: Record<string, unknown> },
    attempts: attempts.map((attempt) => ({
      attempted_at: new Date(attempt.attempted_at).toISOString(),
      trigger: attempt.trigger,
      status_code: attempt.status_code === null ? null : Number(attempt.status_code),
      error: attempt.error,
      duration_ms: Number(attempt.duration_ms),
    })),
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}
