/**
 * What happens in Palanque, told to the people concerned and to the entities' webhooks (issue 25). Each
 * domain tells its own listeners when something happened, after it committed; this file is the one place
 * that turns those events into notifications (whom, and in which words) and into webhook events
 * (`publish`). The words are Portuguese: the front end shows them as they are.
 *
 * A notification or an event that cannot be made is logged, never thrown into the work that caused it.
 * It is made after that work committed, so a process that stops in between loses it (the work stands).
 */
import type { Sequelize } from 'sequelize';
import { readerOf, type Reader } from '../db/reader.js';
import type { InboxChanges, InboundMessage } from '../chat/changes.js';
import type { TeamInvitations } from '../entities/invitations.js';
import type { InvitationRow } from '../entities/models.js';
import type { UserRow } from '../accounts/models.js';
import { displayName } from '../accounts/users.js';
import type { Logger } from '../logger.js';
import type { CampaignRow } from '../messaging/models.js';
import type { SmsCampaignReports } from '../messaging/campaign-reports.js';
import type { MonitorAlert, MonitorAlerts } from '../monitors/alerts.js';
import type { ScenarioRequest } from '../strategy/scenarios.js';
import type { Strategy } from '../strategy/index.js';
import type { Notifications } from './notifications.js';

/** Sends an event to the webhooks of an entity that asked for its type (webhooks/); none when unset. */
export type PublishEvent = (entityId: number, type: string, data: object) => Promise<void>;

export interface AnnouncementSources {
  sequelize: Sequelize;
  notifications: Notifications;
  campaigns: SmsCampaignReports;
  inbox: InboxChanges;
  strategy: Strategy;
  invitations: TeamInvitations;
  alerts: MonitorAlerts;
  logger: Logger;
  publish?: PublishEvent;
}

/** Makes every domain's events heard: call once, after the domains are made. */
export function announceEvents(sources: AnnouncementSources): void {
  const { notifications, logger } = sources;
  const publish: PublishEvent = async (entityId, type, data) => {
    await sources.publish?.(entityId, type, data).catch((error: unknown) => logger.error({ err: error, type, entity: entityId }, 'a webhook event could not be queued'));
  };
  const users = new UserLookups(sources.sequelize);

  sources.campaigns.onCompleted(async (campaign) => {
    if (campaign.created_by !== null) await notifications.notify([campaign.created_by], campaignNotice(campaign));
    if (campaign.entity_id !== null) await publish(campaign.entity_id, 'sms_campaign.completed', { campaign_id: campaign.id, titulo: campaign.titulo, tally: campaign.tally ? JSON.parse(campaign.tally) : null });
  });

  sources.inbox.onInbound(async (message) => {
    const received = await users.inbound(message);
    if (!received) return;
    if (received.assignee_id !== null) {
      await notifications.notify([received.assignee_id], {
        type: 'conversation_reply',
        title: `Nova mensagem na conversa ${message.conversationId}`,
        body: received.body,
        entityId: message.entityId,
        subject: { kind: 'conversation', id: message.conversationId },
      });
    }
    await publish(message.entityId, 'conversation.message_received', { conversation_id: message.conversationId, message_id: message.messageId, channel: received.channel, text: received.body });
  });

  sources.strategy.onFinished(async (scenario) => {
    const entityId = await users.entityOfMonitor(scenario.monitor_id);
    if (scenario.requested_by !== null) await notifications.notify([scenario.requested_by], scenarioNotice(scenario, entityId));
    if (entityId !== undefined) await publish(entityId, 'scenario_request.finished', { scenario_id: scenario.id, monitor_id: scenario.monitor_id, state: scenario.state });
  });

  sources.invitations.onInvited(async (invitation, entityName, inviter) => {
    const invitee = await users.byEmail(invitation.email);
    if (invitee !== undefined) await notifications.notify([invitee], invitationNotice(invitation, entityName, inviter));
  });

  sources.alerts.onAlert(async (alert) => {
    await publish(alert.monitor.entity_id, 'monitor.alert', alertEvent(alert));
  });
}

const STATUS_WORDS: Record<string, string> = {
  delivered: 'entregues',
  sent: 'enviadas',
  undelivered: 'não entregues',
  failed: 'falharam',
  canceled: 'canceladas',
  opted_out: 'descadastradas',
};

function campaignNotice(campaign: CampaignRow) {
  const counts = campaign.tally ? (JSON.parse(campaign.tally) as { counts: Array<{ status: string; count: number }> }).counts : [];
  const total = counts.reduce((sum, { count }) => sum + count, 0);
  const detail = counts.map(({ status, count }) => `${count.toLocaleString('pt-BR')} ${STATUS_WORDS[status] ?? status}`).join(', ');
  return {
    type: 'campaign_completed' as const,
    title: `Campanha concluída: ${campaign.titulo}`,
    body: `A campanha ${campaign.id} terminou: ${total.toLocaleString('pt-BR')} mensage${total === 1 ? 'm' : 'ns'}${detail ? ` (${detail})` : ''}.`,
    entityId: campaign.entity_id,
    subject: { kind: 'sms_campaign' as const, id: campaign.id },
  };
}

function scenarioNotice(scenario: ScenarioRequest, entityId: number | undefined) {
  const completed = scenario.state === 'completed';
  return {
    type: 'scenario_request_finished' as const,
    title: `Cenário ${scenario.id} ${completed ? 'concluído' : 'não pôde ser calculado'}`,
    body: completed ? `A projeção do cenário ${scenario.id} (monitor ${scenario.monitor_id}) está pronta.` : `O cálculo do cenário ${scenario.id} (monitor ${scenario.monitor_id}) falhou.`,
    entityId: entityId ?? null,
    subject: { kind: 'scenario_request' as const, id: scenario.id },
  };
}

function invitationNotice(invitation: InvitationRow, entityName: string, inviter: UserRow) {
  return {
    type: 'invitation_received' as const,
    title: `Convite para a equipe de ${entityName}`,
    body: `${displayName(inviter)} convidou você para a equipe de ${entityName} como ${invitation.role}. Aceite ou recuse em Convites.`,
    entityId: invitation.entity_id,
    subject: { kind: 'invitation' as const, id: invitation.id },
  };
}

/** A monitor alert as a webhook event's data. */
function alertEvent(alert: MonitorAlert): object {
  return {
    monitor_id: alert.monitor.id,
    rule_id: alert.rule.id,
    kind: alert.rule.kind,
    network: alert.network,
    threshold: Number(alert.rule.threshold),
    value: alert.measured.value,
    reference: alert.measured.reference,
    summary: alert.summary,
  };
}

/** The few reads the announcements need. */
class UserLookups {
  private readonly reader: Reader;

  constructor(sequelize: Sequelize) {
    // What they read was committed before the events that ask are told.
    this.reader = readerOf(sequelize);
  }

  async inbound(message: InboundMessage): Promise<{ assignee_id: number | null; body: string; channel: 'sms' | 'messenger' } | undefined> {
    const row = await this.reader.row<{ assignee_id: number | null; body: string; page_id: string | null }>(
      'SELECT c.assignee_id, cm.body, c.page_id FROM conversation_messages cm JOIN conversations c ON c.id = cm.conversation_id WHERE cm.id = ?',
      [message.messageId],
    );
    return row && { assignee_id: row.assignee_id === null ? null : Number(row.assignee_id), body: row.body, channel: row.page_id === null ? 'sms' : 'messenger' };
  }

  async entityOfMonitor(monitorId: number): Promise<number | undefined> {
    const row = await this.reader.row<{ entity_id: number }>('SELECT entity_id FROM social_monitors WHERE id = ?', [monitorId]);
    return row ? Number(row.entity_id) : undefined;
  }

  async byEmail(email: string): Promise<number | undefined> {
    const row = await this.reader.row<{ id: number }>('SELECT id FROM users WHERE email = ? AND deleted_at IS NULL', [email]);
    return row ? Number(row.id) : undefined;
  }
}
