/**
 * The HTTP side of outbound webhooks (webhooks.ts): an entity's owner and admins (and platform admins)
 * register, read, change and remove its endpoints, read their delivery logs, send tests and resend
 * deliveries. Anyone else in the team is refused (403); an endpoint or delivery of an entity outside the
 * caller's teams does not exist for them (404).
 */
import { callerOf, type Caller } from '../http/auth.js';
import { invalidBody } from '../http/body-fields.js';
import { sendEnvelope } from '../http/envelope.js';
import { ApiError, notFound, type ErrorDetail } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import { pageOf } from '../http/pagination.js';
import { apiBaseUrl, type PublicUrlSettings } from '../http/public-url.js';
import type { Teams } from '../entities/teams.js';
import { RefusedDestination } from './outbound-http.js';
import type { EndpointRow } from './models.js';
import { deliveryView, endpointView, MAX_ENDPOINTS_PER_ENTITY, type Webhooks } from './webhooks.js';
import { counted } from '../http/counted.js';

type WebhookOperations =
  | 'listWebhookEndpoints'
  | 'addWebhookEndpoint'
  | 'updateWebhookEndpoint'
  | 'removeWebhookEndpoint'
  | 'listWebhookDeliveries'
  | 'sendTestWebhook'
  | 'resendWebhookDelivery';

const DELIVERIES_PER_PAGE = 30;

export interface WebhookHandlerDependencies {
  webhooks: Webhooks;
  teams: Teams;
  urls: PublicUrlSettings;
}

export function webhookHandlers({ webhooks, teams, urls }: WebhookHandlerDependencies): Pick<Required<OperationHandlers>, WebhookOperations> {
  /** The endpoint `id`, if the caller manages its entity's team (404 when it is not theirs to see). */
  async function managedEndpoint(caller: Caller, id: number, field = 'endpoint_id'): Promise<EndpointRow> {
    const missing = () =>
      notFound(`There is no webhook endpoint ${id} of an entity of your teams.`, [
        { location: 'path', field, rule: 'in_your_teams', message: 'must be a webhook endpoint of an entity of one of your teams', value: id },
      ]);
    const endpoint = await webhooks.endpoint(id);
    if (!endpoint) throw missing();
    await manage(caller, endpoint.entity_id, missing);
    return endpoint;
  }

  /** Requires the right to manage the entity's team; `missing` is the 404 to answer for an entity outside the caller's teams. */
  async function manage(caller: Caller, entityId: number, missing: () => ApiError): Promise<void> {
    await teams.access(caller, entityId, 'manageTeam', { location: 'path', field: 'endpoint_id' }).catch((error: unknown) => {
      throw (error as ApiError).status === 404 ? missing() : error;
    });
  }

  /** The URL checked (and normalised), or its problem added to `problems`. */
  async function checkedUrl(url: string, problems: ErrorDetail[]): Promise<string | undefined> {
    try {
      return await webhooks.checkUrl(url);
    } catch (error) {
      if (!(error instanceof RefusedDestination)) throw error;
      problems.push({ location: 'body', field: 'url', rule: 'public_url', message: `must be an https URL of a public address: ${error.message}`, value: url });
      return undefined;
    }
  }

  return {
    async listWebhookEndpoints(req, res) {
      const { entity } = await teams.access(callerOf(res), Number(req.query.entity_id), 'manageTeam', { location: 'query', field: 'entity_id' });
      const rows = await webhooks.ofEntity(entity.id);
      sendEnvelope(res, 200, rows.map(endpointView), `${counted(rows.length, 'webhook endpoint')}.`);
    },

    async addWebhookEndpoint(req, res) {
      const caller = callerOf(res);
      const { entity } = await teams.access(caller, req.body.entity_id, 'manageTeam', { location: 'body', field: 'entity_id' });
      if (!webhooks.canStoreSecrets) {
        throw new ApiError(503, 'service_unavailable', 'This deployment has no SECRETS_KEY, so webhook secrets cannot be kept.', [], { 'Retry-After': '3600' });
      }
      const problems: ErrorDetail[] = [];
      const url = await checkedUrl(req.body.url, problems);
      if (problems.length > 0 || !url) throw invalidBody(problems);
      const added = await webhooks.add({
        entity_id: entity.id,
        url,
        event_types: req.body.event_types,
        description: req.body.description,
        send_trace_context: req.body.send_trace_context,
        created_by: caller.user.id,
      });
      if (added === 'max_endpoints') {
        throw invalidBody([{ location: 'body', field: 'entity_id', rule: 'max_endpoints', message: `an entity has at most ${MAX_ENDPOINTS_PER_ENTITY} webhook endpoints; remove one first`, value: entity.id }]);
      }
      sendEnvelope(res, 201, { ...endpointView(added.row), secret: added.secret }, `Webhook endpoint ${added.row.id} registered. Keep its secret; it is not shown again.`);
    },

    async updateWebhookEndpoint(req, res) {
      const endpoint = await managedEndpoint(callerOf(res), req.params.endpoint_id);
      const problems: ErrorDetail[] = [];
      const url = req.body.url === undefined ? undefined : await checkedUrl(req.body.url, problems);
      if (problems.length > 0) throw invalidBody(problems);
      const updated = await webhooks.update(endpoint.id, { ...req.body, ...(url ? { url } : {}) });
      sendEnvelope(res, 200, endpointView(updated), `Webhook endpoint ${endpoint.id} updated.`);
    },

    async removeWebhookEndpoint(req, res) {
      const endpoint = await managedEndpoint(callerOf(res), req.params.endpoint_id);
      await webhooks.remove(endpoint.id);
      sendEnvelope(res, 200, endpointView(endpoint), `Webhook endpoint ${endpoint.id} removed.`);
    },

    async listWebhookDeliveries(req, res) {
      const endpoint = await managedEndpoint(callerOf(res), req.params.endpoint_id);
      const page = req.query.page ?? 1;
      const { total, deliveries, attempts } = await webhooks.deliveries(endpoint.id, page, DELIVERIES_PER_PAGE);
      const views = deliveries.map((delivery) => deliveryView(delivery, attempts.get(delivery.id) ?? []));
      const listUrl = `${apiBaseUrl(req, urls)}/api/webhooks/endpoints/${endpoint.id}/deliveries/`;
      sendEnvelope(res, 200, pageOf(views, total, page, DELIVERIES_PER_PAGE, listUrl), `${total} deliver${total === 1 ? 'y' : 'ies'}.`);
    },

    async sendTestWebhook(req, res) {
      const caller = callerOf(res);
      const endpoint = await managedEndpoint(caller, req.params.endpoint_id);
      const delivery = await webhooks.sendTest(endpoint, caller.user.id);
      sendEnvelope(res, 201, deliveryView(delivery, []), `Test event queued as delivery ${delivery.id}.`);
    },

    async resendWebhookDelivery(req, res) {
      const caller = callerOf(res);
      const id = req.params.delivery_id;
      const missing = () =>
        notFound(`There is no webhook delivery ${id} of an entity of your teams.`, [
          { location: 'path', field: 'delivery_id', rule: 'in_your_teams', message: 'must be a webhook delivery of an entity of one of your teams', value: id },
        ]);
      const delivery = await webhooks.delivery(id);
      const endpoint = delivery && (await webhooks.endpoint(delivery.endpoint_id));
      if (!delivery || !endpoint) throw missing();
      await manage(caller, endpoint.entity_id, missing);
      const queued = await webhooks.resend(delivery);
      const attempts = await webhooks.attemptsOf([queued.id]);
      sendEnvelope(res, 200, deliveryView(queued, attempts.get(queued.id) ?? []), `Delivery ${queued.id} queued again.`);
    },
  };
}
