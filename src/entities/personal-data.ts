/**
 * An entity's personal data by team role (issue 18, item 9). The LGPD treats CPF and voter id as personal
 * data and race as sensitive personal data; a campaign's operators and viewers need neither whole.
 *
 * What holds:
 * - Whoever may read them whole (owners and admins of the team, and platform admins: `readPersonalData`
 *   in teams.ts) gets the record as stored. Everyone else gets the CPF with only its middle six digits
 *   (`***.982.247-**`), the voter id with only its last four (`********0183`), the CEP with only its
 *   first five (its sector: `01310-***`), and no `raca` and no `endBase` (the street and number). Masking
 *   happens on the way out, from the stored record; a masked value is never stored.
 * - A masked value posted back stands for the stored value, whoever posts it: the field is left as it
 *   is. On a create there is no stored value, so a masked value is 422 `whole_value`.
 * - A caller who reads a field masked or withheld may not send it other than masked: any whole value, a
 *   null or a `raca` is 403 `whole_view_required` naming the field, *even when it equals the stored
 *   value*. Were a matching value accepted, the answer (200 or 403) would confirm a guess: a race code is
 *   one of six, and a CPF whose middle digits are shown is one of a thousand.
 */
import { ApiError, type ErrorDetail } from '../http/errors.js';
import type { CandidateEntity, TeamRole } from './models.js';

/** The fields only a whole view may write. */
export const PERSONAL_FIELDS = ['cpf', 'titulo_eleitor', 'raca', 'cepBase', 'endBase'] as const;

/** The masked forms, as the contract's MaskedCpf, MaskedVoterId and MaskedCep patterns give them. */
const MASKED_FORMS = {
  cpf: /^\*{3}\.[0-9]{3}\.[0-9]{3}-\*{2}$/,
  titulo_eleitor: /^\*{8}[0-9]{4}$/,
  cepBase: /^[0-9]{5}-\*{3}$/,
} as const;
type MaskedField = keyof typeof MASKED_FORMS;

const digitsOf = (value: string) => value.replace(/\D/g, '');

/** `529.982.247-25` -> `***.982.247-**`: the middle six digits, the common Brazilian public mask. */
export function maskCpf(cpf: string): string {
  const digits = digitsOf(cpf);
  return `***.${digits.slice(3, 6)}.${digits.slice(6, 9)}-**`;
}

/** `102345670183` -> `********0183`: the state code and the check digits, which identify no one. */
export function maskVoterId(voterId: string): string {
  return `********${digitsOf(voterId).slice(-4)}`;
}

/** `01310-100` -> `01310-***`: the sector; the last three digits often name the street. */
export function maskCep(cep: string): string {
  return `${digitsOf(cep).slice(0, 5)}-***`;
}

/** The record as a caller without the whole view reads it. */
export function maskedRecord<Entity extends CandidateEntity>(record: Entity): Entity {
  const { raca: _raca, endBase: _endBase, ...shown } = record;
  return {
    ...shown,
    ...(typeof record.cpf === 'string' ? { cpf: maskCpf(record.cpf) } : {}),
    ...(typeof record.titulo_eleitor === 'string' ? { titulo_eleitor: maskVoterId(record.titulo_eleitor) } : {}),
    ...(typeof record.cepBase === 'string' ? { cepBase: maskCep(record.cepBase) } : {}),
  } as Entity;
}

/**
 * One field's value as a caller without the whole view reads it (the edit history's before and after):
 * masked as `maskedRecord` masks it, null for a field withheld whole (`raca`, `endBase`), as it is for a
 * field that is not personal. `unmasked` values (the history's markers, such as "[erased]") stay as they are.
 */
export function maskedFieldValue(field: string, value: unknown, unmasked: ReadonlySet<unknown> = new Set()): unknown {
  if (value === null || value === undefined || unmasked.has(value)) return value ?? null;
  if (field === 'raca' || field === 'endBase') return null;
  if (typeof value !== 'string') return value;
  if (field === 'cpf') return maskCpf(value);
  if (field === 'titulo_eleitor') return maskVoterId(value);
  if (field === 'cepBase') return maskCep(value);
  return value;
}

function maskedFieldsOf(body: CandidateEntity): MaskedField[] {
  return (Object.keys(MASKED_FORMS) as MaskedField[]).filter((field) => {
    const value = body[field];
    return typeof value === 'string' && MASKED_FORMS[field].test(value);
  });
}

/** The body with its masked values left out: in an update, those fields keep their stored values. */
export function withoutMaskedValues(body: CandidateEntity): CandidateEntity {
  const masked = new Set<string>(maskedFieldsOf(body));
  return Object.fromEntries(Object.entries(body).filter(([field]) => !masked.has(field))) as CandidateEntity;
}

/** A create's masked values: each one a 422 detail, since there is no stored value they could stand for. */
export function maskedValuesOnCreate(body: CandidateEntity): ErrorDetail[] {
  return maskedFieldsOf(body).map((field) => ({
    location: 'body',
    field,
    rule: 'whole_value',
    message: 'must be the whole value: a masked one only stands for the stored value in an update',
    value: body[field] as string,
  }));
}

/**
 * Throws 403 when an update (its masked values already left out) sends a personal field at all, for a
 * caller without the whole view (`role`): one `whole_view_required` detail per field. Whether the value
 * matches the stored one plays no part, so the answer confirms no guess.
 */
export function refusePersonalValues(role: TeamRole, body: CandidateEntity): void {
  const sent = PERSONAL_FIELDS.filter((field) => body[field] !== undefined);
  if (sent.length === 0) return;
  throw new ApiError(
    403,
    'forbidden',
    `Your role in this team (${role}) reads personal data masked, so it may send it only as it read it (masked, or left out): ${sent.join(', ')}.`,
    sent.map((field) => ({
      location: 'body',
      field,
      rule: 'whole_view_required',
      message: 'may be set, changed or cleared only by the owner or an admin, who read it whole; send the masked form or leave it out',
      value: body[field] ?? null,
    })),
  );
}
