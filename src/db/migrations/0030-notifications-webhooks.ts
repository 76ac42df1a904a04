import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Notifications, monitor alerts, push subscriptions and outbound webhooks (issue 25):
 * - `notifications`: each user's in-app notifications (src/notifications/); they go with their user.
 * - `monitor_alert_rules`: rules on a monitor, with the networks whose newest snapshots breach them now
 *   (a rule fires when a network enters that list, so once per breach).
 * - `push_subscriptions`: a user's devices (Web Push); the endpoint is unique: one device, one row.
 * - `webhook_endpoints`, `webhook_deliveries`, `webhook_attempts`: an entity's endpoints with their
 *   signing secret sealed (SECRETS_KEY), each event sent to an endpoint as one delivery, and each try of
 *   a delivery with what the endpoint answered (the delivery log).
 */
export const name = '0030-notifications-webhooks';

const id = { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true };
const userColumn = (allowNull: boolean) => ({ type: DataTypes.INTEGER, allowNull, references: { model: 'users', key: 'id' }, onDelete: allowNull ? 'SET NULL' : 'CASCADE' });

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('notifications', {
    id,
    user_id: userColumn(false),
    type: { type: DataTypes.STRING(40), allowNull: false },
    title: { type: DataTypes.STRING(200), allowNull: false },
    body: { type: DataTypes.STRING(1000), allowNull: false },
    entity_id: { type: DataTypes.INTEGER, allowNull: true },
    subject_kind: { type: DataTypes.STRING(40), allowNull: false },
    subject_id: { type: DataTypes.INTEGER, allowNull: false },
    created_at: { type: DataTypes.DATE, allowNull: false },
    read_at: { type: DataTypes.DATE, allowNull: true },
  });
  await queryInterface.addIndex('notifications', ['user_id', 'id'], { name: 'notifications_user' });
  await queryInterface.addIndex('notifications', ['created_at'], { name: 'notifications_created' });

  await queryInterface.createTable('monitor_alert_rules', {
    id,
    monitor_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'social_monitors', key: 'id' }, onDelete: 'CASCADE' },
    kind: { type: DataTypes.STRING(20), allowNull: false },
    network: { type: DataTypes.STRING(50), allowNull: true },
    threshold: { type: DataTypes.DOUBLE, allowNull: false },
    // The networks breaching the rule now, sorted, comma-separated ('' when none).
    breached_networks: { type: DataTypes.STRING(500), allowNull: false, defaultValue: '' },
    last_fired_at: { type: DataTypes.DATE, allowNull: true },
    created_by: userColumn(true),
    created_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('monitor_alert_rules', ['monitor_id'], { name: 'monitor_alert_rules_monitor' });

  await queryInterface.createTable('push_subscriptions', {
    id,
    user_id: userColumn(false),
    endpoint: { type: DataTypes.STRING(2048), allowNull: false },
    // A digest of the endpoint: unique, where a unique index on 2,048 characters would be too wide.
    endpoint_digest: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    p256dh: { type: DataTypes.STRING(100), allowNull: false },
    auth: { type: DataTypes.STRING(30), allowNull: false },
    expiration_time: { type: DataTypes.BIGINT, allowNull: true },
    device_name: { type: DataTypes.STRING(100), allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    last_pushed_at: { type: DataTypes.DATE, allowNull: true },
  });
  await queryInterface.addIndex('push_subscriptions', ['user_id'], { name: 'push_subscriptions_user' });

  await queryInterface.createTable('webhook_endpoints', {
    id,
    entity_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'entities', key: 'id' }, onDelete: 'CASCADE' },
    url: { type: DataTypes.STRING(2048), allowNull: false },
    description: { type: DataTypes.STRING(200), allowNull: true },
    // The event types it wants, sorted, comma-separated.
    event_types: { type: DataTypes.STRING(500), allowNull: false },
    secret_sealed: { type: DataTypes.TEXT, allowNull: false },
    enabled: { type: DataTypes.BOOLEAN, allowNull: false },
    disabled_reason: { type: DataTypes.STRING(500), allowNull: true },
    // The first failed attempt since its last success: a day of failures disables the endpoint.
    failing_since: { type: DataTypes.DATE, allowNull: true },
    created_by: userColumn(true),
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('webhook_endpoints', ['entity_id'], { name: 'webhook_endpoints_entity' });

  await queryInterface.createTable('webhook_deliveries', {
    id,
    endpoint_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'webhook_endpoints', key: 'id' }, onDelete: 'CASCADE' },
    // The Standard Webhooks message id (`webhook-id`): the same on every try, so receivers can drop repeats.
    message_id: { type: DataTypes.STRING(40), allowNull: false, unique: true },
    event_type: { type: DataTypes.STRING(60), allowNull: false },
    payload: { type: DataTypes.TEXT, allowNull: false },
    status: { type: DataTypes.STRING(16), allowNull: false },
    attempt_count: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('webhook_deliveries', ['endpoint_id', 'id'], { name: 'webhook_deliveries_endpoint' });

  await queryInterface.createTable('webhook_attempts', {
    id,
    delivery_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'webhook_deliveries', key: 'id' }, onDelete: 'CASCADE' },
    trigger: { type: DataTypes.STRING(16), allowNull: false },
    status_code: { type: DataTypes.INTEGER, allowNull: true },
    error: { type: DataTypes.STRING(500), allowNull: true },
    response_body: { type: DataTypes.STRING(1024), allowNull: true },
    duration_ms: { type: DataTypes.INTEGER, allowNull: false },
    attempted_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('webhook_attempts', ['delivery_id'], { name: 'webhook_attempts_delivery' });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  for (const table of ['webhook_attempts', 'webhook_deliveries', 'webhook_endpoints', 'push_subscriptions', 'monitor_alert_rules', 'notifications']) {
    await queryInterface.dropTable(table);
  }
}
