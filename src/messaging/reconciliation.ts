/**
 * Finding out from the provider whether it took a message whose send ended without a known outcome (a
 * timeout, a reset connection, a 5xx, a process that died during the call). The provider's list filters
 * by recipient, sender and the UTC day a message was sent, nothing finer, so the days from the attempt's
 * start to today are read and the rest is matched here: the same body, created at or after the second the
 * attempt started (the provider gives `date_created` to the second, so our time is truncated to it).
 */
import type { ListedSms, ProviderAccount, SmsProvider } from './provider.js';

const DAY_MS = 24 * 3600_000;

/** The UTC days from `start`'s through `end`'s, as YYYY-MM-DD. */
export function utcDaysBetween(start: Date, end: Date): string[] {
  const days: string[] = [];
  for (let day = Math.floor(start.getTime() / DAY_MS); day <= Math.floor(end.getTime() / DAY_MS); day += 1) {
    days.push(new Date(day * DAY_MS).toISOString().slice(0, 10));
  }
  return days;
}

/** The listed messages that may be the one an attempt started at `startedAt` sent with `body`, earliest first. */
export function copiesOf(listed: ListedSms[], wanted: { body: string; startedAt: Date }): ListedSms[] {
  const startSecond = Math.floor(wanted.startedAt.getTime() / 1000) * 1000;
  return listed
    .filter((message) => message.body === wanted.body && message.dateCreated.getTime() >= startSecond)
    .sort((a, b) => a.dateCreated.getTime() - b.dateCreated.getTime());
}

/** Every message from `from` to `to` the provider lists as sent on a day from `since`'s to `now`'s, each once. */
export async function listSentSince(
  provider: SmsProvider,
  account: ProviderAccount,
  pair: { from: string; to: string },
  since: Date,
  now = new Date(),
): Promise<ListedSms[]> {
  const bySid = new Map<string, ListedSms>();
  for (const dateSent of utcDaysBetween(since, now)) {
    for (const message of await provider.list(account, { ...pair, dateSent })) bySid.set(message.sid, message);
  }
  return [...bySid.values()];
}
