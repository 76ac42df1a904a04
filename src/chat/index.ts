/** The chat inbox (issue 24), assembled: it listens to SMS for replies and their statuses. */
import type { Sequelize } from 'sequelize';
import type { Teams } from '../entities/teams.js';
import type { Sms } from '../messaging/sms.js';
import { InboxChanges } from './changes.js';
import { Inbox } from './inbox.js';
import { defineChatModels } from './models.js';

export { chatHandlers } from './handlers.js';
export type { Inbox } from './inbox.js';

export function createInbox(sequelize: Sequelize, dependencies: { sms: Sms; teams: Teams }): Inbox {
  const models = defineChatModels(sequelize);
  const inbox = new Inbox(models, dependencies.sms, dependencies.teams, new InboxChanges(models, sequelize));
  dependencies.sms.conversations = inbox;
  return inbox;
}
