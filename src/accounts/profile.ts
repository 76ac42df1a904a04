/**
 * What a user may change of their own account (`updateMyProfile`): their name and phone, and whether their
 * teammates see their e-mail and phone (`contact_visible_to_team`). A field left out
 * keeps its value; names are trimmed; a phone is read as a person writes it and kept in E.164, after
 * libphonenumber-js's full metadata says the number can exist (Brazil when it has no country code), as
 * campaign recipients are read (packages/rules/src/recipients.ts).
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { invalidBody } from '../http/body-fields.js';
import type { ErrorDetail } from '../http/errors.js';
import type { UserRow } from './models.js';

export type ProfileChanges = Partial<Pick<UserRow, 'first_name' | 'last_name' | 'phone' | 'contact_visible_to_team'>>;

export interface ProfileFields {
  first_name?: string;
  last_name?: string;
  phone?: string | null;
  contact_visible_to_team?: boolean;
}

/**
 * The changes a body asks for, checked: 422 naming each field that is wrong, or, given `problems`, those
 * added to it for the caller to report with its own.
 */
export function profileChanges(body: ProfileFields, gathered?: ErrorDetail[]): ProfileChanges {
  const problems: ErrorDetail[] = gathered ?? [];
  const changes: ProfileChanges = {};
  if (body.first_name !== undefined) changes.first_name = body.first_name.trim();
  if (body.last_name !== undefined) changes.last_name = body.last_name.trim();
  if (body.phone !== undefined) changes.phone = phoneOf(body.phone, problems);
  if (body.contact_visible_to_team !== undefined) changes.contact_visible_to_team = body.contact_visible_to_team;
  if (!gathered && problems.length > 0) throw invalidBody(problems);
  return changes;
}

/** A phone in E.164, or null for none (null or blank); a number that cannot exist is a problem. */
function phoneOf(written: string | null, problems: ErrorDetail[]): string | null {
  if (written === null || written.trim() === '') return null;
  const parsed = parsePhoneNumberFromString(written, 'BR');
  if (parsed?.isValid()) return parsed.number;
  problems.push({ location: 'body', field: 'phone', rule: 'phone_number', message: 'must be a valid phone number (a Brazilian one may leave out +55)', value: written });
  return null;
}
