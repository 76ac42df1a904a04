/**
 * A campaign's recipient list as people write it: `(21) 98765-4321`, `21 98765-4321`,
 * `+55 21 98765-4321`, `21987654321`, one per line or separated by commas or semicolons, or several on a
 * line separated by spaces. libphonenumber-js finds the numbers in the text (`findPhoneNumbersInText`,
 * Brazil as the default region, so `11940028922` is +55 11 94002-8922); its full ("max") metadata checks
 * numbering plans, not just lengths, so a mobile number without its area code is not found.
 *
 * Nothing is dropped in silence: whatever text is left around the numbers found (a mistyped number, a
 * word) is an invalid entry, reported, so a sender never believes a number got the message when it did
 * not. The list is first cut at new lines, commas and semicolons, which never belong to a number: the
 * finder would otherwise read `21987654321,21987654322` as one number with the second as its extension.
 * Found numbers are normalised to E.164 and deduplicated in the order given.
 */
import { findPhoneNumbersInText, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { ErrorDetail } from './error-detail.js';

export interface RecipientList {
  /** Distinct valid numbers in E.164, in the order first given. */
  numbers: string[];
  /** Entries that are not valid phone numbers, with their position among the list's entries (0-based). */
  invalid: Array<{ position: number; entry: string }>;
  /** Entries dropped because they repeat an earlier number once normalised. */
  repeated: number;
  /** How many entries the list holds: numbers found, repeats included, and invalid entries. */
  entries: number;
}

/** Where a person separates entries; a phone number never holds one of these. */
const ENTRY_SEPARATORS = /[\r\n,;]+/;
/**
 * The longest text searched for numbers at once. Searching a long run of digits and spaces costs seconds
 * of CPU (a 200 kB line of `1 1 1 …` took 2 s), so a longer line is first cut after each word of eight
 * digits or more (a Brazilian subscriber number has eight or nine: a number ends there), and a part
 * still longer, which holds no number, is one invalid entry, unread.
 */
const MAX_SEARCHED_LENGTH = 256;
const DIGITS_ENDING_A_NUMBER = 8;
/** What may sit between numbers on a line without being an entry of its own (spaces, stray punctuation). */
const FILLER = /^[\s().+\-/]*$/;

/**
 * How many entries a list holds at least, counted without reading any number: its non-blank pieces between
 * separators (exactly its entries when it has one number per line or between commas, as lists do).
 */
export function countPieces(text: string): number {
  let count = 0;
  for (const piece of text.split(ENTRY_SEPARATORS)) if (piece.trim() !== '') count += 1;
  return count;
}

/** An entry of the list: a number found in it, or text left around the numbers. */
type Entry = { number: string } | { invalid: string };

function entriesIn(text: string): Entry[] {
  const entries: Entry[] = [];
  for (const piece of text.split(ENTRY_SEPARATORS)) {
    for (const part of searchableParts(piece)) {
      if (part.length > MAX_SEARCHED_LENGTH) entries.push({ invalid: `${part.trim().slice(0, 40)}… (${part.length} characters, no phone number)` });
      else scan(part, entries);
    }
  }
  return entries;
}

/** A line as it is when short; a long one cut after each word that ends a number (MAX_SEARCHED_LENGTH). */
function searchableParts(piece: string): string[] {
  if (piece.length <= MAX_SEARCHED_LENGTH) return [piece];
  const parts: string[] = [];
  let current: string[] = [];
  for (const word of piece.split(/\s+/)) {
    current.push(word);
    if ((word.match(/\d/g)?.length ?? 0) >= DIGITS_ENDING_A_NUMBER) {
      parts.push(current.join(' '));
      current = [];
    }
  }
  if (current.length > 0) parts.push(current.join(' '));
  return parts;
}

/**
 * The numbers in a piece of text, and what is left around them. What is left is looked at again on its
 * own: the finder reads `+55 21 99876-0003 21998760004` as one candidate, fails it, and finds only the
 * second number; alone, the first is found too.
 */
function scan(text: string, entries: Entry[]): void {
  const found = findPhoneNumbersInText(text, 'BR');
  if (found.length === 0) {
    if (!FILLER.test(text)) entries.push({ invalid: text.trim() });
    return;
  }
  let consumed = 0;
  for (const { number, startsAt, endsAt } of found) {
    scan(text.slice(consumed, startsAt), entries);
    // An extension cannot receive an SMS: the entry is not a number to send to.
    entries.push(number.ext ? { invalid: text.slice(startsAt, endsAt).trim() } : { number: number.number });
    consumed = endsAt;
  }
  scan(text.slice(consumed), entries);
}

export function readRecipients(text: string): RecipientList {
  const entries = entriesIn(text);
  // A Set keeps the order of insertion and finds a repeat at once (a list made 10,000 numbers take seconds).
  const numbers = new Set<string>();
  const invalid: RecipientList['invalid'] = [];
  let repeated = 0;
  entries.forEach((entry, position) => {
    if ('invalid' in entry) invalid.push({ position, entry: entry.invalid });
    else if (numbers.has(entry.number)) repeated += 1;
    else numbers.add(entry.number);
  });
  return { numbers: [...numbers], invalid, repeated, entries: entries.length };
}

/**
 * The details of a list (`field`) whose entries are not phone numbers, one per entry (its first 40
 * characters echoed), or of a list that holds none: the server's campaign plan and the stateful mock
 * refuse a list with the same words.
 */
export function recipientListProblems(recipients: RecipientList, field: string): ErrorDetail[] {
  const problems: ErrorDetail[] = recipients.invalid.map(({ position, entry }) => ({ location: 'body', field, rule: 'phone_number', message: `entry ${position + 1} is not a valid phone number`, value: entry.slice(0, 40) }));
  if (recipients.numbers.length === 0 && recipients.invalid.length === 0) problems.push({ location: 'body', field, rule: 'not_blank', message: 'must hold at least one phone number' });
  return problems;
}

/** One number in E.164, or undefined when it is not a valid phone number. */
export function normalisedPhone(text: string): string | undefined {
  const phone = parsePhoneNumberFromString(text.trim(), 'BR');
  return phone?.isValid() ? phone.number : undefined;
}
