/**
 * The checks of monitor bodies that JSON Schema cannot express: blank texts, repeats, and snapshots that
 * do not fit their monitor. Each returns the normalised value and adds one 422 detail per problem.
 */
import type { ErrorDetail } from '../http/errors.js';
import { requiredText } from '../http/body-fields.js';
import { checkWebAddress } from '../web-address.js';
import type { MetricSnapshot, MonitoredProfile } from './store.js';

/** How far ahead of the server's clock a snapshot may be taken (clock skew between machines). */
const CLOCK_SKEW_MS = 5 * 60_000;
/** The earliest snapshot taken (older dates are typing mistakes, and SQLite's text dates misread years below 100). */
export const EARLIEST_SNAPSHOT = new Date('2000-01-01T00:00:00Z');
/** The longest network name (the column and the contract's `maxLength`). */
const MAX_NETWORK_LENGTH = 50;

/**
 * A network name, trimmed and lower-cased. Lower-casing can lengthen a text (`İ` becomes two characters),
 * so the length is checked again afterwards.
 */
export function checkNetwork(field: string, value: string, problems: ErrorDetail[]): string {
  const network = requiredText(field, value, problems).toLowerCase();
  if (network.length > MAX_NETWORK_LENGTH) {
    problems.push({ location: 'body', field, rule: 'maxLength', message: `must not be longer than ${MAX_NETWORK_LENGTH} characters once lower-cased`, value });
  }
  return network;
}

/** Keywords trimmed; blank and repeated ones (ignoring case) are problems. */
export function checkKeywords(keywords: string[], problems: ErrorDetail[]): string[] {
  const seen = new Map<string, number>();
  return keywords.map((keyword, index) => {
    const field = `keywords.${index}`;
    const trimmed = requiredText(field, keyword, problems);
    const first = seen.get(trimmed.toLowerCase());
    if (trimmed !== '' && first !== undefined) problems.push(repeated(field, `keywords.${first}`, trimmed));
    else seen.set(trimmed.toLowerCase(), index);
    return trimmed;
  });
}

/** Profiles with a lower-cased network and a trimmed user name or an absolute address (or both); repeats are problems. */
export function checkProfiles(profiles: MonitoredProfile[], problems: ErrorDetail[]): MonitoredProfile[] {
  const seen = new Map<string, number>();
  return profiles.map((profile, index) => {
    const field = `profiles.${index}`;
    const network = checkNetwork(`${field}.nm_rede`, profile.nm_rede, problems);
    const username = profile.username === undefined ? undefined : requiredText(`${field}.username`, profile.username, problems);
    let link: string | undefined;
    let linkKey: string | undefined;
    if (profile.link !== undefined) {
      const address = checkWebAddress(profile.link, `${field}.link`);
      if (address.ok) [link, linkKey] = [address.address.href, address.address.key];
      else problems.push(address.problem);
    }
    if (profile.username === undefined && profile.link === undefined) {
      problems.push({ location: 'body', field, rule: 'username_or_link', message: 'must have a username, a link, or both' });
    }
    // The same profile is the same network with the same user name (ignoring case) or the same address.
    const identities = [username && `${network} user ${username.toLowerCase()}`, linkKey && `${network} link ${linkKey}`].filter(
      (identity): identity is string => !!identity,
    );
    const first = identities.map((identity) => seen.get(identity)).find((index) => index !== undefined);
    if (first !== undefined) problems.push(repeated(field, `profiles.${first}`));
    else for (const identity of identities) seen.set(identity, index);
    return { nm_rede: network, ...(username !== undefined ? { username } : {}), ...(link !== undefined ? { link } : {}) };
  });
}

/**
 * Snapshots with a lower-cased network, which must be one of `networks` (any network when the monitor
 * watches keywords only); none taken in the future, and no two of one network and moment.
 */
export function checkSnapshots(snapshots: MetricSnapshot[], networks: Set<string>, now: Date, problems: ErrorDetail[]): MetricSnapshot[] {
  const seen = new Map<string, number>();
  return snapshots.map((snapshot, index) => {
    const field = `snapshots.${index}`;
    const network = checkNetwork(`${field}.network`, snapshot.network, problems);
    if (network !== '' && networks.size > 0 && !networks.has(network)) {
      problems.push({ location: 'body', field: `${field}.network`, rule: 'watched_network', message: `must be a network the monitor watches (${[...networks].sort().join(', ')})`, value: snapshot.network });
    }
    const takenAt = new Date(snapshot.taken_at);
    checkMoment(`${field}.taken_at`, takenAt, snapshot.taken_at, now, problems);
    const moment = `${network}@${takenAt.getTime()}`;
    const first = seen.get(moment);
    if (first !== undefined) problems.push(repeated(field, `snapshots.${first}`));
    else seen.set(moment, index);
    return { ...snapshot, network, taken_at: takenAt.toISOString() };
  });
}

/** When a snapshot was taken: neither in the future (beyond the clock skew) nor before 2000. */
export function checkMoment(field: string, takenAt: Date, sent: unknown, now: Date, problems: ErrorDetail[]): void {
  if (Number.isNaN(takenAt.getTime())) {
    problems.push({ location: 'body', field, rule: 'date', message: 'must be a real moment', value: sent });
  } else if (takenAt.getTime() > now.getTime() + CLOCK_SKEW_MS) {
    problems.push({ location: 'body', field, rule: 'not_in_future', message: 'must not be in the future', value: sent });
  }
  if (takenAt < EARLIEST_SNAPSHOT) {
    problems.push({ location: 'body', field, rule: 'not_before_2000', message: 'must not be before 2000-01-01', value: sent });
  }
}

function repeated(field: string, first: string, value?: string): ErrorDetail {
  return { location: 'body', field, rule: 'unique', message: `repeats ${first}`, ...(value !== undefined ? { value } : {}) };
}
