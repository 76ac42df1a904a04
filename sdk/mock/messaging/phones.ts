/**
 * Phone numbers as the stateful mock reads and shows them (src/messaging/phones.ts, simplified): the
 * server reads numbering plans with libphonenumber's metadata, which the SDK does not carry, so the mock
 * reads a number by its digits and judges a Brazilian mobile by the shape that metadata describes.
 */
import type { ErrorDetail } from '../../msw-validation.js';

/**
 * Whether an SMS can reach a number (issue 42). The server asks libphonenumber's full metadata for a
 * Brazilian `MOBILE` (src/messaging/phones.ts isBrazilianMobile); the SDK does not depend on
 * libphonenumber, so the mock applies the simpler shape that metadata describes: +55, a 2-digit area
 * code without a 0, then 9 and 8 digits. Landlines, toll-free and foreign numbers are not mobiles.
 */
export function isBrazilianMobile(e164: string): boolean {
  return /^\+55[1-9][1-9]9\d{8}$/.test(e164);
}

/** `+5511987654321` -> `+55*******4321` (phones.ts; the mock takes every number but +1 ones to have a two-digit country code). */
export function maskPhone(e164: string): string {
  const code = e164.startsWith('+1') ? '1' : e164.slice(1, 3);
  const national = e164.slice(1 + code.length);
  return `+${code}${'*'.repeat(Math.max(0, national.length - 4))}${national.slice(-4)}`;
}

/** A Brazilian number in E.164, by its digits only (the server reads numbering plans with libphonenumber). */
export function contactPhone(text: string): string | undefined {
  const digits = text.replace(/\D/g, '');
  if (text.trim().startsWith('+')) return /^\d{10,15}$/.test(digits) ? `+${digits}` : undefined;
  if (/^\d{10,11}$/.test(digits)) return `+55${digits}`;
  return /^55\d{10,11}$/.test(digits) ? `+${digits}` : undefined;
}
export const maskedPhone = (phone: string) => (phone.startsWith('+55') ? `+55${'*'.repeat(phone.length - 7)}${phone.slice(-4)}` : `+${'*'.repeat(phone.length - 5)}${phone.slice(-4)}`);

/** The numbers of a pasted list, simplified as the mock's sendSmsCampaign reads them, with the server's 422 details. */
export function listedNumbers(list: string): { numbers: string[]; problems: ErrorDetail[] } {
  const problems: ErrorDetail[] = [];
  const numbers: string[] = [];
  list.split(/[\r\n,;]+/).map((entry) => entry.trim()).filter(Boolean).forEach((entry, position) => {
    const digits = entry.replace(/\D/g, '');
    // A national number may start with the trunk prefix 0 (`0800 123 4567`, `021 98765-4321`), as libphonenumber reads it.
    const national = digits.replace(/^0/, '');
    const e164 = /^\+\d{10,15}$/.test(entry.replace(/[\s().-]/g, '')) ? `+${digits}` : /^\d{10,11}$/.test(national) ? `+55${national}` : undefined;
    if (e164 === undefined) problems.push({ location: 'body', field: 'mensagem.recipient_list_str', rule: 'phone_number', message: `entry ${position + 1} is not a valid phone number`, value: entry.slice(0, 40) });
    else numbers.push(e164);
  });
  if (numbers.length === 0 && problems.length === 0) problems.push({ location: 'body', field: 'mensagem.recipient_list_str', rule: 'not_blank', message: 'must hold at least one phone number' });
  return { numbers, problems };
}
