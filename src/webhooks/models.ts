/** Sequelize models of the outbound webhook tables (migration 0030; 0041 added send_trace_context). */
import { DataTypes, type Model, type ModelAttributes, type ModelStatic, type Sequelize } from 'sequelize';

export interface EndpointRow {
  id: number;
  entity_id: number;
  url: string;
  description: string | null;
  /** Sorted, comma-separated. */
  event_types: string;
  secret_sealed: string;
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: Date | null;
  /** Deliveries carry the W3C trace context (`traceparent`) when tracing is on (migration 0041). */
  send_trace_context: boolean;
  created_by: number | null;
  created_at: Date;
  updated_at: Date;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface DeliveryRow {
  id: number;
  endpoint_id: number;
  message_id: string;
  event_type: string;
  /** The JSON body sent on every try. */
  payload: string;
  status: DeliveryStatus;
  attempt_count: number;
  created_at: Date;
  updated_at: Date;
}

export interface AttemptRow {
  id: number;
  delivery_id: number;
  trigger: 'automatic' | 'manual';
  status_code: number | null;
  error: string | null;
  response_body: string | null;
  duration_ms: number;
  attempted_at: Date;
}

type Static<Row extends object> = ModelStatic<Model<Row, Partial<Row>>>;

export interface WebhookModels {
  Endpoint: Static<EndpointRow>;
  Delivery: Static<DeliveryRow>;
  Attempt: Static<AttemptRow>;
}

const id = { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true };

export function defineWebhookModels(sequelize: Sequelize): WebhookModels {
  const define = <Row extends object>(name: string, attributes: ModelAttributes, tableName: string) =>
    sequelize.define<Model<Row, Partial<Row>>>(name, attributes, { tableName, timestamps: false });
  return {
    Endpoint: define<EndpointRow>(
      'WebhookEndpoint',
      {
        id,
        entity_id: DataTypes.INTEGER,
        url: DataTypes.STRING(2048),
        description: DataTypes.STRING(200),
        event_types: DataTypes.STRING(500),
        secret_sealed: DataTypes.TEXT,
        enabled: DataTypes.BOOLEAN,
        disabled_reason: DataTypes.STRING(500),
        failing_since: DataTypes.DATE,
        send_trace_context: DataTypes.BOOLEAN,
        created_by: DataTypes.INTEGER,
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      'webhook_endpoints',
    ),
    Delivery: define<DeliveryRow>(
      'WebhookDelivery',
      {
        id,
        endpoint_id: DataTypes.INTEGER,
        message_id: DataTypes.STRING(40),
        event_type: DataTypes.STRING(60),
        payload: DataTypes.TEXT,
        status: DataTypes.STRING(16),
        attempt_count: DataTypes.INTEGER,
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
      },
      'webhook_deliveries',
    ),
    Attempt: define<AttemptRow>(
      'WebhookAttempt',
      {
        id,
        delivery_id: DataTypes.INTEGER,
        trigger: DataTypes.STRING(16),
        status_code: DataTypes.INTEGER,
        error: DataTypes.STRING(500),
        response_body: DataTypes.STRING(1024),
        duration_ms: DataTypes.INTEGER,
        attempted_at: DataTypes.DATE,
      },
      'webhook_attempts',
    ),
  };
}
