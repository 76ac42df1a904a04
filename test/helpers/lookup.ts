/** A stand-in for the DNS resolver of the outbound HTTP client (src/webhooks/outbound-http.ts), for tests. */
import type { LookupAll } from '../../src/webhooks/outbound-http.js';

/** A lookup that answers `addresses` in turn, one list per call (the last one after), and records the names asked. */
export function scriptedLookup(...answers: string[][]): LookupAll & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hostname: string) => {
    calls.push(hostname);
    const answer = answers[Math.min(calls.length, answers.length) - 1] ?? [];
    return answer.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
  };
  return Object.assign(lookup, { calls });
}
