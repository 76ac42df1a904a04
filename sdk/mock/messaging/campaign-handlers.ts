/**
 * SMS campaigns in the stateful mock (src/messaging/campaign-reports.ts, campaign-handlers.ts): sent
 * (nothing leaves the mock: a new campaign's messages stay queued, and `enforce` refuses one that breaks
 * the rules), listed, reported with each message's status, canceled while queued or sending, and their
 * messages listed or exported as CSV, numbers masked for a role that may not read them whole.
 */
import type { HttpHandler } from 'msw';
import { conflict, envelope, forbidden, invalidBody, notFound } from '../answers.js';
import { entityFor, may, roleIn, type Context, type On } from '../auth.js';
import { pageOf } from '../paging.js';
import { displayName, newId, now, type Json, type State, type StoredCampaign, type TeamRole } from '../store.js';
import { campaignPlanOf } from './campaign-plan.js';
import { contactTag } from './contacts.js';
import { maskPhone } from './phones.js';

const CAMPAIGNS_PER_PAGE = 30;
const CAMPAIGN_MESSAGES_PER_PAGE = 50;
const OPTED_OUT_BEFORE_SENDING = 'The recipient opted out before the message was sent.';
const CANCELED_WITH_CAMPAIGN = 'The campaign was canceled before the message was sent.';

/** A message's status as a report shows it (reportStatusOf on the server). */
function reportStatusOf(status: string, errorMessage: string | null): string {
  if (status === 'canceled') return errorMessage === OPTED_OUT_BEFORE_SENDING ? 'opted_out' : 'canceled';
  if (status === 'read') return 'delivered';
  return ['queued', 'sent', 'delivered', 'undelivered', 'failed'].includes(status) ? status : 'sending';
}

export function smsCampaignHandlers(on: On): HttpHandler[] {
  const userRef = (state: State, id: number | null) => {
    const found = state.users.find((user) => user.id === id);
    return found ? { id: found.id, display_name: displayName(found) } : null;
  };
  const reportOf = (state: State, campaign: StoredCampaign) => {
    const messages: Record<string, number> = { queued: 0, sending: 0, sent: 0, delivered: 0, undelivered: 0, failed: 0, canceled: 0, opted_out: campaign.opted_out_skipped };
    for (const message of campaign.messages) messages[reportStatusOf(message.status, message.error_message)]! += 1;
    const { messages: _messages, created_by: createdBy, canceled_by: canceledBy, ...fields } = campaign;
    const declaration = campaign.non_electoral_declaration && { non_electoral_declaration: { ...campaign.non_electoral_declaration, declared_by: userRef(state, createdBy) } };
    return { ...fields, sent_by: userRef(state, createdBy), canceled_by: userRef(state, canceledBy), messages, cost: [], ...declaration };
  };
  /** The campaign the path names, with the caller's role, or the server's 404. */
  const campaignFor = ({ url, user, state }: Context): { campaign: StoredCampaign; role: TeamRole } | Response => {
    const id = Number(/\/sms\/campaigns\/(\d+)\//.exec(url.pathname)?.[1]);
    const campaign = state.campaigns.get(id);
    const entity = campaign?.entity_id === null || campaign === undefined ? undefined : state.entities.get(campaign.entity_id);
    const role = campaign && (entity ? roleIn(entity, user) : user.is_admin ? 'admin' : undefined);
    if (!campaign || !role) {
      return notFound(`There is no SMS campaign ${id} in your teams.`, [{ location: 'path', field: 'campaign_id', rule: 'in_your_teams', message: 'must be a campaign of one of your teams', value: id }]);
    }
    return { campaign, role };
  };
  const messageOf = (message: StoredCampaign['messages'][number], whole: boolean) => ({
    id: message.id,
    recipient: whole ? message.recipient : maskPhone(message.recipient),
    contact_id: message.contact_id,
    status: reportStatusOf(message.status, message.error_message),
    provider_status: message.status,
    error_code: message.error_code,
    error_message: message.error_message,
    price: message.price,
    price_unit: message.price_unit,
    updated_at: message.updated_at,
  });
  const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;
  return [
    on('sendSmsCampaign', (context) => {
      const { body, user, state } = context;
      // The list or the contacts, the footer and the compliance judgement, as the preview reads them.
      const plan = campaignPlanOf(context);
      if (plan instanceof Response) return plan;
      const { credential, numbers: distinct, judgement } = plan;
      if (distinct.length === 0) {
        const field = (body.mensagem as Json).contatos === undefined ? 'mensagem.recipient_list_str' : 'mensagem.contatos';
        return invalidBody([{ location: 'body', field, rule: 'not_opted_out', message: 'every number opted out of campaigns' }]);
      }
      if (judgement.mode === 'enforce' && judgement.warnings.length > 0) {
        const field = (body.mensagem as Json).contatos === undefined ? 'mensagem.recipient_list_str' : 'mensagem.contatos';
        const details = judgement.warnings.map((warning) => ({
          location: 'body' as const,
          field: warning.rule === 'consent_missing' ? field : warning.rule === 'synthetic_content_label' ? 'mensagem.mensagem' : 'credencial',
          rule: warning.rule,
          message: warning.message,
          value: warning.rule === 'consent_missing' ? warning.numbers : warning.rule === 'outside_campaign_window' ? warning.day : warning.rule === 'synthetic_content_label' ? warning.technology! : credential.id,
        }));
        const rules = judgement.warnings.map((warning) => warning.rule).join(', ');
        return invalidBody(details, `The campaign breaks the electoral rules entity ${credential.entity_id} enforces (see getSmsCompliance): ${rules}. Nothing was sent.`);
      }
      const { contatos } = body.mensagem as { contatos?: { tags?: string[] } };
      const moment = now();
      const id = newId(state, state.campaigns.keys());
      const campaign: StoredCampaign = {
        id,
        titulo: String(body.titulo),
        credencial: credential.id,
        entity_id: credential.entity_id,
        accepted: distinct.length,
        rejected: plan.rejected,
        opted_out_skipped: plan.optedOutSkipped,
        not_mobile_skipped: plan.notMobile.length,
        not_mobile_examples: plan.notMobile.slice(0, 5).map(maskPhone),
        encoding: plan.encoding,
        segments: plan.segments,
        state: 'sending',
        created_at: moment,
        created_by: user.id,
        finished_at: null,
        canceled_by: null,
        footer: plan.footer,
        audience: contatos ? { tags: (contatos.tags ?? []).map(contactTag) } : null,
        // Under warn and off, the rules it broke (compliance.ts); a campaign not judged has none.
        ...(judgement.mode !== 'enforce' ? { warnings: judgement.warnings } : {}),
        ...(plan.nonElectoral === null ? {} : { non_electoral_declaration: { text: plan.nonElectoral, declared_at: moment } }),
        ...(plan.syntheticContent ? { synthetic_content: plan.syntheticContent } : {}),
        messages: distinct.map((recipient) => ({ id: (state.nextId += 1), recipient, contact_id: plan.contactIds.get(recipient) ?? null, status: 'queued', error_code: null, error_message: null, price: null, price_unit: null, updated_at: moment })),
      };
      state.campaigns.set(id, campaign);
      const { entity_id: _entity, created_by: _by, finished_at: _finished, canceled_by: _canceled, footer: _footer, audience: _audience, non_electoral_declaration: _declaration, messages: _messages, ...answer } = campaign;
      const { warnings } = judgement;
      const warned = judgement.mode !== 'enforce' && warnings.length > 0 ? `; ${plural(warnings.length, 'compliance warning')}` : '';
      return envelope(201, answer, `Campaign ${id} created: ${plural(campaign.accepted, 'message')} queued${warned}.`);
    }),
    on('listSmsCampaigns', (context) => {
      const { url, state, base } = context;
      const entity = entityFor(context, Number(url.searchParams.get('entity_id')), { location: 'query', field: 'entity_id' });
      if (entity instanceof Response) return entity;
      const wanted = url.searchParams.get('state');
      const campaigns = [...state.campaigns.values()].filter((campaign) => campaign.entity_id === entity.id && (wanted === null || campaign.state === wanted)).sort((a, b) => b.id - a.id);
      const listUrl = new URL(`${base}/api/sms/campaigns/`);
      listUrl.searchParams.set('entity_id', String(entity.id));
      if (wanted !== null) listUrl.searchParams.set('state', wanted);
      const paged = pageOf(campaigns.map((campaign) => reportOf(state, campaign)), Number(url.searchParams.get('page') ?? 1), CAMPAIGNS_PER_PAGE, listUrl);
      return paged instanceof Response ? paged : envelope(200, paged, `${plural(campaigns.length, 'campaign')}.`);
    }),
    on('getSmsCampaign', (context) => {
      const found = campaignFor(context);
      return found instanceof Response ? found : envelope(200, reportOf(context.state, found.campaign), `Campaign ${found.campaign.id} is ${found.campaign.state}.`);
    }),
    on('cancelSmsCampaign', (context) => {
      const found = campaignFor(context);
      if (found instanceof Response) return found;
      const { campaign, role } = found;
      if (!may(context.user, role, 'edit')) return forbidden(`Your role in this team (${role}) may not cancel its SMS campaigns: its owner, admins and operators may.`);
      if (campaign.state !== 'queued' && campaign.state !== 'sending') {
        return conflict(`Campaign ${campaign.id} is ${campaign.state}; only a queued or sending campaign can be canceled.`, [
          { location: 'path', field: 'campaign_id', rule: 'cancelable_state', message: 'must be a queued or sending campaign', value: campaign.state },
        ]);
      }
      const moment = now();
      const queued = campaign.messages.filter((message) => message.status === 'queued');
      for (const message of queued) Object.assign(message, { status: 'canceled', error_message: CANCELED_WITH_CAMPAIGN, updated_at: moment });
      Object.assign(campaign, { state: 'canceled', finished_at: moment, canceled_by: context.user.id });
      return envelope(200, reportOf(context.state, campaign), `Campaign ${campaign.id} was canceled; ${plural(queued.length, 'message')} ${queued.length === 1 ? 'was' : 'were'} not sent.`);
    }),
    on('listSmsCampaignMessages', (context) => {
      const found = campaignFor(context);
      if (found instanceof Response) return found;
      const { campaign, role } = found;
      const wanted = context.url.searchParams.get('status');
      const messages = campaign.messages.filter((message) => wanted === null || reportStatusOf(message.status, message.error_message) === wanted);
      const listUrl = new URL(`${context.base}/api/sms/campaigns/${campaign.id}/messages/`);
      if (wanted !== null) listUrl.searchParams.set('status', wanted);
      const whole = may(context.user, role, 'readPersonalData');
      const paged = pageOf(messages.map((message) => messageOf(message, whole)), Number(context.url.searchParams.get('page') ?? 1), CAMPAIGN_MESSAGES_PER_PAGE, listUrl);
      return paged instanceof Response ? paged : envelope(200, paged, `${plural(messages.length, 'message')}.`);
    }),
    on('exportSmsCampaignMessages', (context) => {
      const found = campaignFor(context);
      if (found instanceof Response) return found;
      const whole = may(context.user, found.role, 'readPersonalData');
      const field = (value: unknown) => {
        const text = value === null ? '' : String(value);
        return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
      };
      const columns = ['id', 'recipient', 'contact_id', 'status', 'provider_status', 'error_code', 'error_message', 'price', 'price_unit', 'updated_at'] as const;
      const rows = found.campaign.messages.map((message) => messageOf(message, whole)).map((message) => columns.map((column) => field(message[column])).join(','));
      return new Response([columns.join(','), ...rows].map((line) => `${line}\r\n`).join(''), {
        status: 200,
        headers: { 'Content-Type': 'text/csv; charset=utf-8', 'Content-Disposition': `attachment; filename="campanha-${found.campaign.id}-mensagens.csv"` },
      });
    }),
  ];
}
