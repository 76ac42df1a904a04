/**
 * How a schema's violations become the error model's details, shared by the server
 * (src/http/validation.ts) and the msw handlers' request checks (msw-validation.ts), so that both name
 * the same fields for the same body.
 */
import type { ErrorDetail } from './error-detail.js';

/**
 * An answer lists at most this many details, and its message says how many more there were: a body with
 * thousands of problems is answered in a few kilobytes, as fast as one with a single problem.
 */
export const MAX_DETAILS = 20;

/** The message and details of an answer: the first MAX_DETAILS, and the message counting the rest. */
export function listedDetails<Detail>(message: string, details: Detail[]): { message: string; details: Detail[] } {
  if (details.length <= MAX_DETAILS) return { message, details };
  const more = details.length - MAX_DETAILS;
  const sentence = /[.!?]$/.test(message) ? message : `${message}.`;
  const counted = more === 1 ? '1 more problem is' : `${more.toLocaleString('en')} more problems are`;
  return { message: `${sentence} ${counted} not listed.`, details: details.slice(0, MAX_DETAILS) };
}

/** An echoed value is cut to this many characters: a huge value costs an answer 200 characters at most. */
export const MAX_ECHOED_LENGTH = 200;

/** A text as a detail echoes it: whole up to MAX_ECHOED_LENGTH characters, else cut there, ending in "…". */
export function echoedText(text: string): string {
  if (text.length <= MAX_ECHOED_LENGTH) return text; // UTF-16 units: never fewer than the characters
  const kept: string[] = [];
  // By characters, so that no surrogate pair is split; stops at the cut, whatever the text's length.
  for (const character of text) {
    if (kept.length === MAX_ECHOED_LENGTH) return `${kept.slice(0, -1).join('')}…`;
    kept.push(character);
  }
  return text;
}

/** Rules by which a value fails the branches of a union, rather than a rule of the branch it meant. */
const BRANCH_RULES = new Set(['type', 'oneOf', 'anyOf']);

/**
 * A field declared as "an object or null" (`oneOf: [Object, null]`) that holds an object with a bad
 * field inside fails every branch, and ajv reports each: the bad field (the detail that helps), then
 * that the value is not null and matches no branch. The last two only repeat the first, so a detail of
 * those rules is dropped when another detail names a field inside the same one. Linear in the details
 * (times their depth): a body of thousands of wrong items is refused as fast as one.
 */
export function withoutBranchNoise<Detail extends Pick<ErrorDetail, 'location' | 'field' | 'rule'>>(details: Detail[]): Detail[] {
  if (!details.some((detail) => BRANCH_RULES.has(detail.rule))) return details;
  // Every field that holds another detail's field (the empty one, the body, holds them all), by location.
  const holders = new Set<string>();
  for (const { location = '', field } of details) {
    if (field === '') continue;
    holders.add(`${location}:`);
    for (let dot = field.indexOf('.'); dot !== -1; dot = field.indexOf('.', dot + 1)) holders.add(`${location}:${field.slice(0, dot)}`);
  }
  return details.filter(({ location = '', field, rule }) => !(BRANCH_RULES.has(rule) && holders.has(`${location}:${field}`)));
}
