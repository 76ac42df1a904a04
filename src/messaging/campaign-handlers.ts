/**
 * The HTTP side of campaign reports (campaign-reports.ts): an entity's campaigns, a campaign's report and
 * cancel, its per-recipient statuses and their CSV export. Every member of a campaign's entity's team
 * reads it, those who may send with its credentials (owner, admins, operators) cancel it, and platform
 * admins do both for any campaign; anyone else is told it does not exist (404).
 */
import type { Response } from 'express';
import { callerOf } from '../http/auth.js';
import { sendEnvelope } from '../http/envelope.js';
import { ApiError } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import { pageOf } from '../http/pagination.js';
import { apiBaseUrl, type PublicUrlSettings } from '../http/public-url.js';
import type { Teams } from '../entities/teams.js';
import { EXPORT_COLUMNS, notCancelable, type SmsCampaignMessage } from './campaign-reports.js';
import type { Sms } from './sms.js';
import { counted } from '../http/counted.js';

type CampaignOperations = 'listSmsCampaigns' | 'getSmsCampaign' | 'cancelSmsCampaign' | 'listSmsCampaignMessages' | 'exportSmsCampaignMessages';

const CAMPAIGNS_PER_PAGE = 30;
const MESSAGES_PER_PAGE = 50;

export interface CampaignHandlerDependencies {
  sms: Sms;
  teams: Teams;
  urls: PublicUrlSettings;
}

export function smsCampaignHandlers({ sms, teams, urls }: CampaignHandlerDependencies): Pick<Required<OperationHandlers>, CampaignOperations> {
  const reports = sms.reports;
  return {
    async listSmsCampaigns(req, res) {
      // Every team role may read the entity, and so its campaigns.
      const { entity } = await teams.access(callerOf(res), Number(req.query.entity_id), 'read', { location: 'query', field: 'entity_id' });
      const page = req.query.page ?? 1;
      const { total, campaigns } = await reports.page(entity.id, req.query.state, page, CAMPAIGNS_PER_PAGE);
      const listUrl = new URL(apiBaseUrl(req, urls) + '/api/sms/campaigns/');
      listUrl.searchParams.set('entity_id', String(entity.id));
      if (req.query.state) listUrl.searchParams.set('state', req.query.state);
      sendEnvelope(res, 200, pageOf(campaigns, total, page, CAMPAIGNS_PER_PAGE, listUrl.toString()), `${counted(total, 'campaign')}.`);
    },

    async getSmsCampaign(req, res) {
      const report = await reports.readableReport(callerOf(res), req.params.campaign_id);
      sendEnvelope(res, 200, report, `Campaign ${report.id} is ${report.state}.`);
    },

    async cancelSmsCampaign(req, res) {
      const caller = callerOf(res);
      const { campaign, role } = await reports.access(caller, req.params.campaign_id);
      if (!teams.may(caller, role, 'edit')) {
        throw new ApiError(403, 'forbidden', `Your role in this team (${role}) may not cancel its SMS campaigns: its owner, admins and operators may.`);
      }
      const outcome = await sms.cancelCampaign(campaign.id, caller.user.id);
      if ('state' in outcome) throw notCancelable(campaign.id, outcome.state);
      const report = await reports.report(campaign.id);
      sendEnvelope(res, 200, report, `Campaign ${campaign.id} was canceled; ${counted(outcome.canceled, 'message')} ${outcome.canceled === 1 ? 'was' : 'were'} not sent.`);
    },

    async listSmsCampaignMessages(req, res) {
      const access = await reports.access(callerOf(res), req.params.campaign_id);
      const page = req.query.page ?? 1;
      const { total, messages } = await reports.messagePage(access, req.query.status, page, MESSAGES_PER_PAGE);
      const listUrl = new URL(`${apiBaseUrl(req, urls)}/api/sms/campaigns/${access.campaign.id}/messages/`);
      if (req.query.status) listUrl.searchParams.set('status', req.query.status);
      sendEnvelope(res, 200, pageOf(messages, total, page, MESSAGES_PER_PAGE, listUrl.toString()), `${counted(total, 'message')}.`);
    },

    async exportSmsCampaignMessages(req, res) {
      const access = await reports.access(callerOf(res), req.params.campaign_id);
      res.status(200);
      res.setHeader('Content-Type', 'text/csv; charset=utf-8');
      res.setHeader('Content-Disposition', `attachment; filename="campanha-${access.campaign.id}-mensagens.csv"`);
      res.setHeader('Cache-Control', 'no-store');
      try {
        await write(res, csvLine(EXPORT_COLUMNS));
        for await (const batch of reports.exportedMessages(access)) await write(res, batch.map(csvRowOf).join(''));
        res.end();
      } catch (error) {
        // The status line is gone: cutting the connection tells the client the file is incomplete.
        res.destroy(error as Error);
      }
    },
  };
}

/** Writes a chunk, waiting for the client to take the one before when its buffer is full. */
async function write(res: Response, chunk: string): Promise<void> {
  if (res.destroyed) throw new Error('the client closed the connection');
  if (res.write(chunk)) return;
  await new Promise<void>((resolve, reject) => {
    const done = (error?: Error) => {
      res.off('drain', onDrain).off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = () => done();
    const onClose = () => done(new Error('the client closed the connection'));
    res.on('drain', onDrain).on('close', onClose);
  });
}

function csvRowOf(message: SmsCampaignMessage): string {
  return csvLine([
    String(message.id),
    message.recipient,
    message.contact_id === null ? '' : String(message.contact_id),
    message.status,
    message.provider_status,
    message.error_code ?? '',
    defused(message.error_message ?? ''),
    message.price ?? '',
    message.price_unit ?? '',
    message.updated_at,
  ]);
}

/** One CSV line (RFC 4180): fields quoted when they hold a comma, a quote or a line break; CRLF at the end. */
function csvLine(fields: readonly string[]): string {
  return `${fields.map((field) => (/[",\r\n]/.test(field) ? `"${field.replaceAll('"', '""')}"` : field)).join(',')}\r\n`;
}

/** Text a spreadsheet would run as a formula (the provider's error messages are not ours) gets a leading quote. */
function defused(text: string): string {
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}
