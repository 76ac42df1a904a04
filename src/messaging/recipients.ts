/**
 * A campaign's recipient list as typed: numbers separated by commas, semicolons, spaces or new lines,
 * read with libphonenumber-js (Brazil as the default region, so `11940028922` is +55 11 94002-8922),
 * normalised to E.164 and deduplicated in the order given. Its full ("max") metadata checks numbering
 * plans, not just lengths: a mobile number without its area code is not valid.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

export interface RecipientList {
  /** Distinct valid numbers in E.164, in the order first given. */
  numbers: string[];
  /** Entries that are not valid phone numbers, with their position in the list (0-based). */
  invalid: Array<{ position: number; entry: string }>;
  /** Entries dropped because they repeat an earlier number once normalised. */
  repeated: number;
}

/** The entries of a list as typed, before any is read as a number. */
export function entriesOf(text: string): string[] {
  return text.split(/[,;\s]+/).filter((entry) => entry !== '');
}

export function readRecipients(text: string): RecipientList {
  const entries = entriesOf(text);
  // A Set keeps the order of insertion and finds a repeat at once (a list made 10,000 numbers take seconds).
  const numbers = new Set<string>();
  const invalid: RecipientList['invalid'] = [];
  let repeated = 0;
  entries.forEach((entry, position) => {
    const phone = parsePhoneNumberFromString(entry, 'BR');
    if (!phone?.isValid()) {
      invalid.push({ position, entry });
    } else if (numbers.has(phone.number)) {
      repeated += 1;
    } else {
      numbers.add(phone.number);
    }
  });
  return { numbers: [...numbers], invalid, repeated };
}

/** One number in E.164, or undefined when it is not a valid phone number. */
export function normalisedPhone(text: string): string | undefined {
  const phone = parsePhoneNumberFromString(text.trim(), 'BR');
  return phone?.isValid() ? phone.number : undefined;
}
