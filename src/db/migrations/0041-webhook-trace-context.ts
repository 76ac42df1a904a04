import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Outbound webhooks that carry the trace context (issue 43 §4): an endpoint's `send_trace_context`, false
 * for every endpoint before it, so a receiver gets a W3C `traceparent` only once its endpoint asks.
 */
export const name = '0041-webhook-trace-context';

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.addColumn('webhook_endpoints', 'send_trace_context', { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.removeColumn('webhook_endpoints', 'send_trace_context');
}
