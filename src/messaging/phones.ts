/**
 * Phone numbers as personal data (issue 12): the numbers of campaign recipients and contacts are read
 * whole only by the roles that may `readPersonalData` (an entity's owner and admins, platform admins);
 * the others read them masked. A masked number keeps what identifies no one, its country code and its
 * last four digits (`+5511987654321` -> `+55*******4321`), enough to tell two recipients apart in a
 * report or to recognise one's own number, and as long as the number, so columns stay aligned. Masking
 * happens on the way out, from the stored number; a masked number is never stored.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** How many of the last digits a masked number keeps. */
const SHOWN_DIGITS = 4;

/** `+5511987654321` -> `+55*******4321`: the country code and the last four digits. */
export function maskPhone(e164: string): string {
  // Already masked (a number erased on its owner's request is kept so): nothing more to hide.
  if (e164.includes('*')) return e164;
  const digits = e164.replace(/\D/g, '');
  // The country code's length varies (1 to 3 digits); a number libphonenumber cannot read keeps none of it.
  const countryCode = parsePhoneNumberFromString(e164)?.countryCallingCode ?? '';
  const national = digits.startsWith(countryCode) ? digits.slice(countryCode.length) : digits;
  const shown = national.slice(-SHOWN_DIGITS);
  return `+${countryCode}${'*'.repeat(Math.max(0, national.length - shown.length))}${shown}`;
}
