/**
 * The SMS provider's calls counted for the metrics (palanque_sms_sent_total, palanque_sms_failed_total),
 * whichever path calls it: a campaign's batch, the per-message send job, an inbox reply. A message is
 * handed over once (sending.ts), so `sent` counts messages the provider took; `failed` counts calls it
 * did not take, by outcome: `refused` fails the message for good, `not_accepted` and `unknown` are
 * retried (or settled by the provider's list) and may end sent.
 */
import { ProviderError, type FailedSendOutcome, type SmsProvider } from './provider.js';

/** What the provider's calls are counted into (the server's Metrics). */
export interface SmsCounts {
  smsSent(provider: string): void;
  smsFailed(provider: string, outcome: FailedSendOutcome): void;
}

/** `provider`, counting its sends under `name` (the credentials' `provider`, the adapter's name). */
export function countedProvider(provider: SmsProvider, name: string, counts: SmsCounts | undefined): SmsProvider {
  if (!counts) return provider;
  return {
    async send(account, sms) {
      try {
        const sent = await provider.send(account, sms);
        counts.smsSent(name);
        return sent;
      } catch (error) {
        // What sending.ts makes of an error that is not the provider's own: its outcome is unknown.
        counts.smsFailed(name, error instanceof ProviderError ? error.outcome : 'unknown');
        throw error;
      }
    },
    list: (account, filter) => provider.list(account, filter),
  };
}
