/** How outbound webhooks are retried and when a failing endpoint is disabled (config.ts reads them from the environment). */
export interface WebhookSettings {
  /** Seconds before the first retry of a failed delivery, doubled for each further retry (WEBHOOK_RETRY_DELAY_SECONDS). */
  retryDelaySeconds: number;
  /** Retries after the first try (WEBHOOK_RETRIES): 10 retries from 60 s spread them over about 17 hours. */
  retries: number;
  /** An endpoint whose deliveries have failed without a success for this long is disabled (WEBHOOK_DISABLE_AFTER_SECONDS, in milliseconds). */
  disableAfterMs: number;
}

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = { retryDelaySeconds: 60, retries: 10, disableAfterMs: 24 * 3600 * 1000 };
