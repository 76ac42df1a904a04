/**
 * Event deliveries of the social network's webhook: `metrics` changes become metric snapshots of every
 * monitor that watches the profile; `messaging` events (the messenger) go to the chat inbox's messenger
 * channel (src/chat/messenger/), which stores each message once by its id. Every change is checked before anything is stored, so a delivery is
 * stored whole or not at all. The same profile twice at the same moment is stored once, the last wins.
 * A delivery is processed once: a copy of one seen before (a retry, a replay) is acknowledged and
 * ignored (deliveries.ts). A change carries the time it was made (its `updated_time`, else its entry's
 * `time`), and never overwrites a snapshot stored from a later change.
 */
import type { components } from '../../sdk/schema.js';
import { invalidBody } from '../http/body-fields.js';
import type { ErrorDetail } from '../http/errors.js';
import { checkMoment, checkNetwork } from '../monitors/rules.js';
import type { MonitorStore, RecordedSnapshots, TimedSnapshot } from '../monitors/store.js';
import type { SeenDeliveries } from './deliveries.js';

type Delivery = components['schemas']['SocialnetEventDelivery'];
export type MessagingEvent = NonNullable<Delivery['entry'][number]['messaging']>[number];

/** What a delivery's messaging events became. */
export interface MessagingOutcome {
  messages: number;
  deliveries: number;
  ignored: number;
}
export type EventResult = components['schemas']['SocialnetEventResult'];

/** Who takes the messenger's events: the Page each came to (its entry's id) and the event. */
export interface MessagingReceiver {
  receive(events: Array<{ pageId: string; event: MessagingEvent }>): Promise<MessagingOutcome>;
}

/** Where a delivery's events go. */
export interface DeliveryReceivers {
  monitors: MonitorStore;
  messenger: MessagingReceiver;
}

/** Where snapshots from this webhook say they came from. */
const SOURCE = 'socialnet';
const MAX_COUNTER = 1e12;

interface ProfileMetrics {
  snapshot: TimedSnapshot;
  username: string;
}

/** A delivery checked whole: how many changes and events it has, its `metrics` changes as snapshots, its messenger events. */
interface CheckedDelivery {
  changes: number;
  metrics: ProfileMetrics[];
  messaging: Array<{ pageId: string; event: MessagingEvent }>;
}

/** Checks the delivery (422 naming every problem), then processes it unless it was seen before. */
export async function receiveDelivery(delivery: Delivery, rawBody: Buffer, receivers: DeliveryReceivers, deliveries: SeenDeliveries, now = new Date()): Promise<EventResult> {
  const checked = checkDelivery(delivery, now);
  const claim = await deliveries.claim(rawBody, now);
  if (!claim) return { changes: checked.changes, created: 0, replaced: 0, unchanged: 0, outdated: 0, ignored: checked.changes, messages: 0, deliveries: 0, duplicate: true };
  let result: EventResult;
  try {
    result = await recordDelivery(checked, receivers, now);
  } catch (error) {
    // Not processed: the network retries after an error, and the retry must not be taken for a replay.
    // Should the release fail too, the claim stays unfinished and a retry takes it over later.
    await deliveries.release(claim).catch(() => undefined);
    throw error;
  }
  await deliveries.processed(claim, now);
  return result;
}

function checkDelivery(delivery: Delivery, now: Date): CheckedDelivery {
  const problems: ErrorDetail[] = [];
  const metrics: ProfileMetrics[] = [];
  const messaging = delivery.entry.flatMap((entry) => (entry.messaging ?? []).map((event) => ({ pageId: entry.id, event })));
  delivery.entry.forEach((entry, entryIndex) => {
    const metricsChanges = (entry.changes ?? []).map((change, index) => ({ change, index })).filter(({ change }) => change.field === 'metrics');
    if (metricsChanges.length === 0) return;
    const takenAt = new Date(entry.time * 1000);
    checkMoment(`entry.${entryIndex}.time`, takenAt, entry.time, now, problems);
    // Milliseconds where seconds belong can make a time no Date holds: named above, nothing more to read.
    if (Number.isNaN(takenAt.getTime())) return;
    for (const { change, index } of metricsChanges) {
      const found = readMetrics(change.value as Record<string, unknown>, `entry.${entryIndex}.changes.${index}.value`, takenAt, now, problems);
      if (found) metrics.push(found);
    }
  });
  if (problems.length > 0) throw invalidBody(problems);
  return { changes: delivery.entry.reduce((count, entry) => count + (entry.changes?.length ?? 0), 0) + messaging.length, metrics, messaging };
}

async function recordDelivery({ changes, metrics, messaging }: CheckedDelivery, { monitors, messenger }: DeliveryReceivers, now: Date): Promise<EventResult> {
  const totals: RecordedSnapshots = { created: 0, replaced: 0, unchanged: 0, outdated: 0 };
  let ignored = changes - metrics.length - messaging.length;
  for (const { snapshot, username } of metrics) {
    const watchers = await monitors.watching(snapshot.network, username);
    if (watchers.length === 0) ignored += 1;
    for (const monitorId of watchers) {
      const recorded = await monitors.record(monitorId, [snapshot], SOURCE, now);
      totals.created += recorded.created;
      totals.replaced += recorded.replaced;
      totals.unchanged += recorded.unchanged;
      totals.outdated += recorded.outdated;
    }
  }
  const inbox = messaging.length > 0 ? await messenger.receive(messaging) : { messages: 0, deliveries: 0, ignored: 0 };
  return { changes, ...totals, ignored: ignored + inbox.ignored, messages: inbox.messages, deliveries: inbox.deliveries, duplicate: false };
}

/** A `metrics` value as a snapshot taken at its entry's time; problems name the value's fields. */
function readMetrics(value: Record<string, unknown>, field: string, takenAt: Date, now: Date, problems: ErrorDetail[]): ProfileMetrics | undefined {
  const before = problems.length;
  const text = (name: string, maxLength: number): string => {
    const given = value[name];
    if (typeof given === 'string' && given.trim() !== '' && given.length <= maxLength) return given.trim();
    problems.push({ location: 'body', field: `${field}.${name}`, rule: 'text', message: `must be a text of 1 to ${maxLength} characters` });
    return '';
  };
  const counter = (name: string, maximum: number, integer: boolean): number => {
    const given = value[name];
    if (typeof given === 'number' && given >= 0 && given <= maximum && (!integer || Number.isInteger(given))) return given;
    problems.push({ location: 'body', field: `${field}.${name}`, rule: 'range', message: `must be ${integer ? 'an integer' : 'a number'} from 0 to ${maximum}` });
    return 0;
  };
  const network = text('network', 50);
  const snapshot: TimedSnapshot = {
    network: network === '' ? '' : checkNetwork(`${field}.network`, network, problems),
    taken_at: takenAt.toISOString(),
    followers: counter('followers', MAX_COUNTER, true),
    posts: counter('posts', MAX_COUNTER, true),
    engagement: counter('engagement', 1000, false),
    mentions: counter('mentions', MAX_COUNTER, true),
    changed_at: changeTime(value.updated_time, `${field}.updated_time`, takenAt, now, problems).toISOString(),
  };
  const username = text('username', 150);
  return problems.length === before ? { snapshot, username } : undefined;
}

/** When the change was made: its `updated_time` (whole Unix seconds, not in the future), else its entry's time. */
function changeTime(given: unknown, field: string, takenAt: Date, now: Date, problems: ErrorDetail[]): Date {
  if (given === undefined) return takenAt;
  if (typeof given !== 'number' || !Number.isInteger(given) || given < 0) {
    problems.push({ location: 'body', field, rule: 'unix_time', message: 'must be whole Unix seconds', value: given });
    return takenAt;
  }
  const changedAt = new Date(given * 1000);
  checkMoment(field, changedAt, given, now, problems);
  return Number.isNaN(changedAt.getTime()) ? takenAt : changedAt;
}
