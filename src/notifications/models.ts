/** Sequelize models of the notification tables (migration 0030). */
import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import type { components } from '../../sdk/schema.js';

export type NotificationType = components['schemas']['NotificationType'];
export type NotificationSubjectKind = components['schemas']['Notification']['subject']['kind'];

export interface NotificationRow {
  id: number;
  user_id: number;
  type: NotificationType;
  title: string;
  body: string;
  entity_id: number | null;
  subject_kind: NotificationSubjectKind;
  subject_id: number;
  created_at: Date;
  read_at: Date | null;
}

export interface PushSubscriptionRow {
  id: number;
  user_id: number;
  endpoint: string;
  endpoint_digest: string;
  p256dh: string;
  auth: string;
  /** BIGINT: PostgreSQL hands it back as a string. */
  expiration_time: number | string | null;
  device_name: string | null;
  created_at: Date;
  last_pushed_at: Date | null;
}

type Static<Row extends object> = ModelStatic<Model<Row, Partial<Row>>>;

export interface NotificationModels {
  Notification: Static<NotificationRow>;
  PushSubscription: Static<PushSubscriptionRow>;
}

const id = { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true };

export function defineNotificationModels(sequelize: Sequelize): NotificationModels {
  return {
    Notification: sequelize.define<Model<NotificationRow, Partial<NotificationRow>>>(
      'Notification',
      {
        id,
        user_id: DataTypes.INTEGER,
        type: DataTypes.STRING(40),
        title: DataTypes.STRING(200),
        body: DataTypes.STRING(1000),
        entity_id: DataTypes.INTEGER,
        subject_kind: DataTypes.STRING(40),
        subject_id: DataTypes.INTEGER,
        created_at: DataTypes.DATE,
        read_at: DataTypes.DATE,
      },
      { tableName: 'notifications', timestamps: false },
    ),
    PushSubscription: sequelize.define<Model<PushSubscriptionRow, Partial<PushSubscriptionRow>>>(
      'PushSubscription',
      {
        id,
        user_id: DataTypes.INTEGER,
        endpoint: DataTypes.STRING(2048),
        endpoint_digest: DataTypes.STRING(64),
        p256dh: DataTypes.STRING(100),
        auth: DataTypes.STRING(30),
        expiration_time: DataTypes.BIGINT,
        device_name: DataTypes.STRING(100),
        created_at: DataTypes.DATE,
        last_pushed_at: DataTypes.DATE,
      },
      { tableName: 'push_subscriptions', timestamps: false },
    ),
  };
}
