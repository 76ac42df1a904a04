/**
 * Phone numbers as personal data (issue 12): the numbers of campaign recipients and contacts are read
 * whole only by the roles that may `readPersonalData` (an entity's owner and admins, platform admins);
 * the others read them masked. A masked number keeps what identifies no one, its country code and its
 * last four digits (`+5511987654321` -> `+55*******4321`), enough to tell two recipients apart in a
 * report or to recognise one's own number, and as long as the number, so columns stay aligned. Masking
 * happens on the way out, from the stored number; a masked number is never stored.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * Whether a number (E.164) can receive a campaign's SMS (issue 42): a Brazilian mobile number, as
 * libphonenumber's full ("max") metadata types it (`MOBILE`). Landlines (`(11) 3222-1234`), toll-free
 * and premium lines (`0800 123 4567`) and foreign numbers (`+1 202 555 0143`) cannot: they are skipped
 * by campaigns with rule `not_mobile`, refused as contacts, and flagged when already stored as one.
 * `FIXED_LINE_OR_MOBILE` (a type the Brazilian metadata does not use today, since its fixed and mobile
 * patterns do not overlap) counts as mobile only in the Brazilian mobile shape: a 2-digit area code,
 * then 9 and 8 digits (the mobile access code `N9+N8N7N6N5+N4N3N2N1` of Anatel Resolução 553/2010,
 * art. 2º, in every area code since 2016; numbering is now ruled by Resolução 749/2022). Foreign mobiles are not Brazilian numbers and are not sent to either.
 */
export function isBrazilianMobile(e164: string): boolean {
  const phone = parsePhoneNumberFromString(e164);
  if (!phone || phone.countryCallingCode !== '55' || !phone.isValid()) return false;
  const type = phone.getType();
  return type === 'MOBILE' || (type === 'FIXED_LINE_OR_MOBILE' && BRAZILIAN_MOBILE_NATIONAL.test(phone.nationalNumber));
}

/** A Brazilian mobile's national number: a 2-digit area code (no 0 in it), 9, and 8 digits. */
const BRAZILIAN_MOBILE_NATIONAL = /^[1-9][1-9]9\d{8}$/;

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
