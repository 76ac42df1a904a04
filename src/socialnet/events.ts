/**
 * Event deliveries of the social network's webhook: `metrics` changes become metric snapshots of every
 * monitor that watches the profile. Every change is checked before anything is stored, so a delivery is
 * stored whole or not at all. The same profile twice at the same moment is stored once, the last wins.
 */
import type { components } from '../../sdk/schema.js';
import { invalidBody } from '../http/body-fields.js';
import type { ErrorDetail } from '../http/errors.js';
import { checkMoment, checkNetwork } from '../monitors/rules.js';
import type { MetricSnapshot, MonitorStore, RecordedSnapshots } from '../monitors/store.js';

type Delivery = components['schemas']['SocialnetEventDelivery'];
export type EventResult = components['schemas']['SocialnetEventResult'];

/** Where snapshots from this webhook say they came from. */
const SOURCE = 'socialnet';
const MAX_COUNTER = 1e12;

interface ProfileMetrics {
  snapshot: MetricSnapshot;
  username: string;
}

export async function recordDelivery(delivery: Delivery, monitors: MonitorStore, now = new Date()): Promise<EventResult> {
  const problems: ErrorDetail[] = [];
  const found: ProfileMetrics[] = [];
  delivery.entry.forEach((entry, entryIndex) => {
    const metricsChanges = entry.changes.map((change, index) => ({ change, index })).filter(({ change }) => change.field === 'metrics');
    if (metricsChanges.length === 0) return;
    const takenAt = new Date(entry.time * 1000);
    checkMoment(`entry.${entryIndex}.time`, takenAt, entry.time, now, problems);
    for (const { change, index } of metricsChanges) {
      const metrics = readMetrics(change.value as Record<string, unknown>, `entry.${entryIndex}.changes.${index}.value`, takenAt, problems);
      if (metrics) found.push(metrics);
    }
  });
  if (problems.length > 0) throw invalidBody(problems);

  const totals: RecordedSnapshots = { created: 0, replaced: 0, unchanged: 0 };
  const changes = delivery.entry.reduce((count, entry) => count + entry.changes.length, 0);
  let ignored = changes - found.length;
  for (const { snapshot, username } of found) {
    const watchers = await monitors.watching(snapshot.network, username);
    if (watchers.length === 0) ignored += 1;
    for (const monitorId of watchers) {
      const recorded = await monitors.record(monitorId, [snapshot], SOURCE, now);
      totals.created += recorded.created;
      totals.replaced += recorded.replaced;
      totals.unchanged += recorded.unchanged;
    }
  }
  return { changes, ...totals, ignored };
}

/** A `metrics` value as a snapshot taken at its entry's time; problems name the value's fields. */
function readMetrics(value: Record<string, unknown>, field: string, takenAt: Date, problems: ErrorDetail[]): ProfileMetrics | undefined {
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
  const snapshot: MetricSnapshot = {
    network: network === '' ? '' : checkNetwork(`${field}.network`, network, problems),
    taken_at: takenAt.toISOString(),
    followers: counter('followers', MAX_COUNTER, true),
    posts: counter('posts', MAX_COUNTER, true),
    engagement: counter('engagement', 1000, false),
    mentions: counter('mentions', MAX_COUNTER, true),
  };
  const username = text('username', 150);
  return problems.length === before ? { snapshot, username } : undefined;
}
