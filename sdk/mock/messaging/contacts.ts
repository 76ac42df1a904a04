/**
 * An entity's contacts as the stateful mock reads and shows them (src/messaging/contacts.ts,
 * contact-import.ts): the import's columns, tags, consent dates and CSV lines, and a contact's view,
 * masked for a role that may not read personal data whole.
 */
import { notFound } from '../answers.js';
import type { StoredContact } from '../store.js';
import { isBrazilianMobile, maskPhone } from './phones.js';

export const CONTACTS_PER_PAGE = 50;
export const CONTACT_COLUMNS: Record<string, 'phone' | 'name' | 'source' | 'givenAt' | 'text' | 'kind' | 'evidence' | 'tags'> = {
  telefone: 'phone', phone: 'phone', nome: 'name', name: 'name', consentimento_origem: 'source', consent_source: 'source',
  consentimento_data: 'givenAt', consent_given_at: 'givenAt', consentimento_texto: 'text', consent_text: 'text', tags: 'tags',
  consentimento_tipo: 'kind', consent_kind: 'kind', consentimento_prova: 'evidence', consent_evidence: 'evidence',
};
/** Where each consent problem's field is read from in the import (contact-import.ts CONSENT_COLUMN). */
export const CONSENT_COLUMN = { kind: 'consentimento_tipo', source: 'consentimento_origem', evidence: 'consentimento_prova' } as const;

export const contactTag = (tag: string) => tag.normalize('NFC').trim().replace(/\s+/g, ' ').toLocaleLowerCase('pt-BR');
export const contactView = (contact: StoredContact, whole: boolean) =>
  whole ? { ...contact, can_receive_sms: isBrazilianMobile(contact.phone) } : { ...contact, can_receive_sms: isBrazilianMobile(contact.phone), phone: maskPhone(contact.phone), name: contact.name === null ? null : contact.name.trim().split(/\s+/).map((word) => `${[...word][0]}.`).join(' ') };
export const noContact = (id: number) =>
  notFound(`There is no contact ${id} in your teams' entities.`, [{ location: 'path', field: 'contact_id', rule: 'in_your_teams', message: 'must be a contact of an entity of one of your teams', value: id }]);

/** A consent date as the import reads it: DD/MM/AAAA, AAAA-MM-DD (midnight in Brasília) or an ISO 8601 date and time. */
export function consentDate(text: string): Date | undefined {
  const dayFirst = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(text);
  const day = dayFirst ? `${dayFirst[3]}-${dayFirst[2]!.padStart(2, '0')}-${dayFirst[1]!.padStart(2, '0')}` : /^\d{4}-\d{2}-\d{2}$/.test(text) ? text : undefined;
  if (day !== undefined) {
    const date = new Date(`${day}T00:00:00-03:00`);
    // 31/02 rolls over into March: a real date reads back the same.
    return !Number.isNaN(date.getTime()) && new Date(date.getTime() - 3 * 3600_000).toISOString().slice(0, 10) === day ? date : undefined;
  }
  if (!/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(text)) return undefined;
  const iso = text.replace(' ', 'T');
  const date = new Date(/[zZ]$|[+-]\d{2}:?\d{2}$/.test(iso) ? iso : `${iso}-03:00`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** The cells of each line of a CSV text (quotes doubled inside quoted cells), with each line's number. */
export function csvLines(text: string, delimiter: string): Array<{ line: number; cells: string[] } | { line: number; unreadable: true }> {
  const lines: Array<{ line: number; cells: string[] } | { line: number; unreadable: true }> = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  let line = 1;
  let start = 1;
  let broken = false;
  const end = () => {
    cells.push(cell);
    if (broken) lines.push({ line: start, unreadable: true });
    else if (cells.some((value) => value.trim() !== '')) lines.push({ line: start, cells });
    cells = [];
    cell = '';
    broken = false;
    start = line;
  };
  const source = text.replace(/^\uFEFF/, '');
  for (let index = 0; index < source.length; index += 1) {
    const character = source[index]!;
    if (quoted) {
      if (character === '"' && source[index + 1] === '"') (cell += '"'), (index += 1);
      else if (character === '"') quoted = false;
      else {
        if (character === '\n') line += 1;
        cell += character;
      }
    } else if (character === '"' && cell === '') quoted = true;
    else if (character === '"') broken = true;
    else if (character === delimiter) cells.push(cell), (cell = '');
    else if (character === '\n' || character === '\r') {
      if (character === '\r' && source[index + 1] === '\n') index += 1;
      line += 1;
      end();
    } else cell += character;
  }
  if (cell !== '' || cells.length > 0) end();
  return lines;
}
