import { z } from 'zod';
import { booleanString } from '../env-values.js';
import type { OutboundPolicy } from './outbound-http.js';

/** How outbound webhooks are retried and when a failing endpoint is disabled (webhooksEnvironment, below, reads them from the environment). */
export interface WebhookSettings {
  /** Seconds before the first retry of a failed delivery, doubled for each further retry (WEBHOOK_RETRY_DELAY_SECONDS). */
  retryDelaySeconds: number;
  /** Retries after the first try (WEBHOOK_RETRIES): 10 retries from 60 s spread them over about 17 hours. */
  retries: number;
  /** An endpoint whose deliveries have failed without a success for this long is disabled (WEBHOOK_DISABLE_AFTER_SECONDS, in milliseconds). */
  disableAfterMs: number;
}

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = { retryDelaySeconds: 60, retries: 10, disableAfterMs: 24 * 3600 * 1000 };

/** The variables of outbound calls (webhooks, pushes, the court's downloads) and of the webhooks' retries. */
export const webhooksEnvironment = z.object({
  // Tests and the sandbox only: webhooks and pushes may go to private and loopback addresses.
  OUTBOUND_ALLOW_PRIVATE_ADDRESSES: booleanString.default(false),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  WEBHOOK_RETRY_DELAY_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  WEBHOOK_RETRIES: z.coerce.number().int().min(0).max(20).default(10),
  WEBHOOK_DISABLE_AFTER_SECONDS: z.coerce.number().int().min(0).max(30 * 24 * 3600).default(24 * 3600),
});

type WebhooksEnvironment = z.output<typeof webhooksEnvironment>;

/** Where webhooks and pushes may go: https only in production, public addresses only unless allowed. */
export function outboundPolicyOf(env: WebhooksEnvironment, production: boolean): OutboundPolicy {
  return { allowHttp: !production, allowPrivateAddresses: env.OUTBOUND_ALLOW_PRIVATE_ADDRESSES, timeoutMs: env.WEBHOOK_TIMEOUT_MS };
}

export function webhookSettingsOf(env: WebhooksEnvironment): WebhookSettings {
  return { retryDelaySeconds: env.WEBHOOK_RETRY_DELAY_SECONDS, retries: env.WEBHOOK_RETRIES, disableAfterMs: env.WEBHOOK_DISABLE_AFTER_SECONDS * 1000 };
}
