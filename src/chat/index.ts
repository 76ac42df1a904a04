/**
 * The chat inbox (issue 24), assembled: it listens to SMS for replies and their statuses, and its
 * messenger channel to the social network's webhook and send API.
 */
import type { Sequelize } from 'sequelize';
import type { SocialnetGraphSettings } from '../socialnet/settings.js';
import type { Teams } from '../entities/teams.js';
import type { JobQueue } from '../jobs/index.js';
import type { Logger } from '../logger.js';
import type { Sms } from '../messaging/sms.js';
import type { SecretBox } from '../security/secret-box.js';
import { InboxChanges } from './changes.js';
import { Inbox } from './inbox.js';
import { MessengerChannel } from './messenger/channel.js';
import { HttpMessengerSendApi, type MessengerSendApi } from './messenger/send-api.js';
import { defineChatModels } from './models.js';

export { chatHandlers } from './handlers.js';
export { messengerHandlers } from './messenger/handlers.js';
export type { Inbox } from './inbox.js';
export type { MessengerChannel } from './messenger/channel.js';

export interface InboxDependencies {
  sms: Sms;
  teams: Teams;
  jobs: JobQueue;
  logger: Logger;
  /** Seals the messenger Pages' tokens (SECRETS_KEY). */
  box: SecretBox | undefined;
  graph: SocialnetGraphSettings;
  /** How long a call to the send API may take. */
  sendTimeoutMs: number;
  /** Replaces the send API (tests). */
  sendApi?: MessengerSendApi;
}

export function createInbox(sequelize: Sequelize, dependencies: InboxDependencies): Inbox {
  const models = defineChatModels(sequelize);
  const changes = new InboxChanges(models, sequelize);
  const { jobs, logger, box, graph, sendTimeoutMs } = dependencies;
  const api = dependencies.sendApi ?? new HttpMessengerSendApi({ graphUrl: graph.graphUrl, version: graph.graphVersion, timeoutMs: sendTimeoutMs });
  const messenger = new MessengerChannel(models, changes, { jobs, api, box, logger, sendTimeoutMs });
  const inbox = new Inbox(models, dependencies.sms, dependencies.teams, changes, messenger);
  dependencies.sms.conversations = inbox;
  return inbox;
}
