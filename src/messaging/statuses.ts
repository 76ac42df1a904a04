/**
 * The order of a message's statuses, so that receipts arriving late or twice never move it back: a late
 * `sent` never overwrites `delivered`. `queued` is Palanque's own (not handed to the provider yet);
 * the others are the provider's (https://www.twilio.com/docs/messaging/guides/outbound-message-status-in-status-callbacks).
 */
const RANK: Record<string, number> = {
  queued: 0,
  accepted: 1,
  scheduled: 1,
  sending: 2,
  sent: 3,
  delivered: 4,
  undelivered: 4,
  failed: 4,
  canceled: 4,
  read: 5,
};

/** Whether a message in status `current` should take status `next`. */
export function advances(current: string, next: string): boolean {
  return (RANK[next] ?? -1) > (RANK[current] ?? -1);
}

/** Why a message was canceled before it was handed to the provider (sending.ts, campaign-reports.ts). */
export const OPTED_OUT_BEFORE_SENDING = 'The recipient opted out before the message was sent.';
export const CANCELED_WITH_CAMPAIGN = 'The campaign was canceled before the message was sent.';

/** Statuses after which nothing more happens to a message. */
export const FINAL_STATUSES: readonly string[] = ['delivered', 'undelivered', 'failed', 'canceled', 'read'];
/** The provider took the message and may still send receipts for it (`queued` is Palanque's, before it is handed over). */
export const WITH_PROVIDER_STATUSES: readonly string[] = ['accepted', 'scheduled', 'sending', 'sent'];
