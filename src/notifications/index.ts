/**
 * Notifications (issue 25): each user's in-app notifications, pushed to their devices, and the events
 * that make them (notices.ts).
 */
import type { Sequelize } from 'sequelize';
import type { JobQueue } from '../jobs/index.js';
import type { Logger } from '../logger.js';
import { defineNotificationModels, type NotificationModels } from './models.js';
import { Notifications } from './notifications.js';
import { PushSubscriptions, type PushSettings } from './push-subscriptions.js';

export { Notifications, type Notice } from './notifications.js';
export { PushSubscriptions, type PushSettings } from './push-subscriptions.js';
export { notificationHandlers, pushHandlers } from './handlers.js';

export interface NotificationCenter {
  models: NotificationModels;
  notifications: Notifications;
  push: PushSubscriptions;
}

export function createNotificationCenter(sequelize: Sequelize, settings: PushSettings, { jobs, logger }: { jobs: JobQueue; logger: Logger }): NotificationCenter {
  const models = defineNotificationModels(sequelize);
  const notifications = new Notifications(models, logger);
  const push = new PushSubscriptions(models, jobs, settings, logger);
  notifications.onCreate((rows) => push.queue(rows));
  return { models, notifications, push };
}
