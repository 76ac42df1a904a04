/**
 * An entity's contacts in the stateful mock (src/messaging/contact-handlers.ts): listed by tag, added one
 * by one or imported from CSV (each line judged alone, a report of what was inserted, updated, unchanged
 * or rejected), each with the consent it gave judged by the rule the server imports too
 * (consent-sources.ts), removed, or erased at the person's request, their number masked in the messages
 * sent to it and a queued one canceled.
 */
import type { HttpHandler } from 'msw';
import { CONSENT_KINDS, judgeConsent, type ConsentKind } from '@palanque/rules/consent-sources';
import { errorResponse, type ErrorDetail } from '../../msw-validation.js';
import { conflict, envelope, forbidden, invalidBody } from '../answers.js';
import { entityFor, may, PERMISSION_TEXT, roleIn, type Context, type On, type Permission } from '../auth.js';
import { chatOf } from '../chat/inbox.js';
import { pageOf } from '../paging.js';
import { newId, type State, type StoredContact, type StoredEntity, type TeamRole } from '../store.js';
import { CONSENT_COLUMN, consentDate, CONTACT_COLUMNS, CONTACTS_PER_PAGE, contactTag, contactView, csvLines, noContact } from './contacts.js';
import { contactPhone, isBrazilianMobile, maskPhone } from './phones.js';

export function contactHandlers(on: On): HttpHandler[] {
  const contactsOf = (state: State) => state.contacts;
  /** The contact in the path and the caller's role in its entity: 404 for a stranger, 403 for a role that may not. */
  const contactFor = (context: Context, permission: Permission): { contact: StoredContact; role: TeamRole } | Response => {
    const id = Number(context.url.pathname.split('/').filter(Boolean)[2]);
    const contact = contactsOf(context.state).get(id);
    const entity = contact && context.state.entities.get(contact.entity_id);
    const role = entity && roleIn(entity, context.user);
    if (!contact || !role) return noContact(id);
    if (!may(context.user, role, permission)) return forbidden(`Your role in this team (${role}) may not ${PERMISSION_TEXT[permission]}.`);
    return { contact, role };
  };
  const roleOf = (context: Context, entity: StoredEntity) => roleIn(entity, context.user)!;
  return [
    on('listContacts', (context) => {
      const { url, state, base } = context;
      const entity = entityFor(context, Number(url.searchParams.get('entity_id')), { location: 'query', field: 'entity_id' });
      if (entity instanceof Response) return entity;
      const written = url.searchParams.get('tag');
      const tag = written === null ? undefined : contactTag(written);
      if (tag === '') return errorResponse(400, 'bad_request', 'The request is malformed: tag is blank.', [{ location: 'query', field: 'tag', rule: 'not_blank', message: 'must not be blank', value: written! }]);
      const whole = may(context.user, roleOf(context, entity), 'readPersonalData');
      const found = [...contactsOf(state).values()].filter((contact) => contact.entity_id === entity.id && (tag === undefined || contact.tags.includes(tag))).sort((a, b) => a.id - b.id);
      const listUrl = new URL(`${base}/api/contacts/`);
      listUrl.searchParams.set('entity_id', String(entity.id));
      if (tag !== undefined) listUrl.searchParams.set('tag', tag);
      const paged = pageOf(found.map((contact) => contactView(contact, whole)), Number(url.searchParams.get('page') ?? 1), CONTACTS_PER_PAGE, listUrl);
      return paged instanceof Response ? paged : envelope(200, paged, `${found.length} contact${found.length === 1 ? '' : 's'}.`);
    }),
    on('createContact', (context) => {
      const { body, state } = context;
      const entity = entityFor(context, Number(body.entity_id), { location: 'body', field: 'entity_id' }, 'manageTeam');
      if (entity instanceof Response) return entity;
      const problems: ErrorDetail[] = [];
      const phone = contactPhone(String(body.phone));
      if (String(body.phone).trim() === '') problems.push({ location: 'body', field: 'phone', rule: 'not_blank', message: 'must not be blank' });
      else if (!phone) problems.push({ location: 'body', field: 'phone', rule: 'phone_number', message: 'must be a valid phone number', value: String(body.phone) });
      else if (!isBrazilianMobile(phone)) {
        problems.push({ location: 'body', field: 'phone', rule: 'not_mobile', message: 'must be a Brazilian mobile number, the only numbers an SMS reaches (not a landline, toll-free or foreign number)', value: String(body.phone) });
      }
      const consent = (body.consent ?? null) as { kind?: ConsentKind | null; source: string; given_at: string; text?: string | null; evidence?: string | null } | null;
      if (consent && consent.source.trim() === '') problems.push({ location: 'body', field: 'consent.source', rule: 'not_blank', message: 'must not be blank' });
      if (consent && new Date(consent.given_at).getTime() > Date.now()) problems.push({ location: 'body', field: 'consent.given_at', rule: 'not_in_future', message: 'must not be in the future', value: consent.given_at });
      // Consent that can be shown (issue 42): the server's rule, from the module both import.
      const judged = consent && consent.source.trim() !== '' ? judgeConsent({ kind: consent.kind, source: consent.source.trim(), evidence: consent.evidence }) : undefined;
      for (const problem of judged?.problems ?? []) problems.push({ location: 'body', field: `consent.${problem.field}`, rule: problem.rule, message: problem.message, ...(problem.value === undefined ? {} : { value: problem.value }) });
      const tags = ((body.tags ?? []) as string[]).map(contactTag);
      tags.forEach((tag, index) => tag === '' && problems.push({ location: 'body', field: `tags.${index}`, rule: 'not_blank', message: 'must not be blank', value: (body.tags as string[])[index]! }));
      if (problems.length > 0 || !phone) return invalidBody(problems);
      const taken = [...contactsOf(state).values()].find((contact) => contact.entity_id === entity.id && contact.phone === phone);
      if (taken) return conflict(`Contact ${taken.id} of entity ${entity.id} has this number already.`, [{ location: 'body', field: 'phone', rule: 'unique_per_entity', message: `is the number of contact ${taken.id} of this entity`, value: phone }]);
      const name = typeof body.name === 'string' && body.name.trim() !== '' ? body.name.trim() : null;
      const at = new Date().toISOString();
      const contact: StoredContact = {
        id: newId(state, contactsOf(state).keys()),
        entity_id: entity.id,
        phone,
        name,
        consent: consent && judged?.kind ? { kind: judged.kind, source: consent.source.trim(), given_at: new Date(consent.given_at).toISOString(), text: consent.text?.trim() || null, evidence: consent.evidence?.trim() || null } : null,
        tags: [...new Set(tags)].sort(),
        created_at: at,
        updated_at: at,
      };
      contactsOf(state).set(contact.id, contact);
      return envelope(201, contactView(contact, true), `Contact ${contact.id} added.`);
    }),
    on('importContacts', async (context) => {
      const { request, url, state } = context;
      const entity = entityFor(context, Number(url.searchParams.get('entity_id')), { location: 'query', field: 'entity_id' }, 'manageTeam');
      if (entity instanceof Response) return entity;
      const text = await request.text();
      const head = text.replace(/^\uFEFF/, '').split(/\r?\n|\r/)[0] ?? '';
      const delimiter = head.replace(/"[^"]*"/g, '').split(';').length > head.replace(/"[^"]*"/g, '').split(',').length ? ';' : ',';
      const [header, ...rows] = csvLines(text, delimiter);
      const refused = (details: ErrorDetail[]) => errorResponse(422, 'validation_failed', "The file's header is not one the import reads: nothing was imported.", details);
      if (!header || !('cells' in header)) return refused([{ location: 'body', field: 'telefone', rule: 'header', message: 'the file must start with a header row naming its columns, telefone (or phone) among them' }]);
      const names = header.cells.map((cell) => cell.trim().toLowerCase());
      const problems: ErrorDetail[] = names.flatMap((name, index): ErrorDetail[] =>
        !CONTACT_COLUMNS[name]
          ? [{ location: 'body', field: name, rule: 'known_column', message: 'is not a column the import reads', value: header.cells[index]! }]
          : names.findIndex((other) => CONTACT_COLUMNS[other] === CONTACT_COLUMNS[name]) !== index
            ? [{ location: 'body', field: name, rule: 'unique_column', message: 'names the same column as another cell of the header' }]
            : [],
      );
      if (!names.some((name) => CONTACT_COLUMNS[name] === 'phone')) problems.unshift({ location: 'body', field: 'telefone', rule: 'required_column', message: "the header must name the number's column: telefone (or phone)" });
      if (problems.length > 0) return refused(problems);
      const report = { entity_id: entity.id, rows: 0, inserted: 0, updated: 0, unchanged: 0, rejected: 0, rejections: [] as Array<{ line: number; reason: string }> };
      const reject = (line: number, reason: string) => {
        report.rejected += 1;
        if (report.rejections.length < 100) report.rejections.push({ line, reason });
      };
      const seen = new Map<string, number>();
      for (const row of rows) {
        report.rows += 1;
        if (!('cells' in row)) {
          reject(row.line, 'the line is not valid CSV: a quote is misplaced (a quote inside a cell is written twice, and the cell quoted)');
          continue;
        }
        if (row.cells.length > names.length) {
          reject(row.line, `the line has ${row.cells.length} cells; the header names ${names.length} columns`);
          continue;
        }
        const cell = (column: string) => row.cells[names.findIndex((name) => CONTACT_COLUMNS[name] === column)]?.trim() || null;
        const reasons: string[] = [];
        const phone = cell('phone') === null ? undefined : contactPhone(cell('phone')!);
        if (cell('phone') === null) reasons.push('telefone: missing');
        else if (!phone) reasons.push('telefone: not a valid phone number');
        else if (!isBrazilianMobile(phone)) reasons.push('telefone: not a Brazilian mobile number (not_mobile): landlines, toll-free and foreign numbers cannot receive SMS');
        const [source, givenAt, consentText, kindCell, evidence] = [cell('source'), cell('givenAt'), cell('text'), cell('kind'), cell('evidence')];
        let consent: StoredContact['consent'] = null;
        if (source !== null || givenAt !== null || consentText !== null || kindCell !== null || evidence !== null) {
          if (source === null) reasons.push('consentimento_origem: missing, and a consent needs it (with its date)');
          if (givenAt === null) reasons.push('consentimento_data: missing, and a consent needs it (with its origin)');
          const known = kindCell === null ? null : (CONSENT_KINDS as readonly string[]).includes(kindCell.toLowerCase()) ? (kindCell.toLowerCase() as ConsentKind) : undefined;
          if (known === undefined) reasons.push(`consentimento_tipo: not one of ${CONSENT_KINDS.join(', ')}`);
          const judged = source === null ? undefined : judgeConsent({ kind: known, source, evidence });
          for (const problem of judged?.problems ?? []) {
            if (problem.rule === 'consent_kind_required' && known === undefined) continue;
            reasons.push(`${CONSENT_COLUMN[problem.field]}: ${problem.rule}: ${problem.message}`);
          }
          const date = givenAt === null || source === null || !judged?.kind ? undefined : consentDate(givenAt);
          if (givenAt !== null && source !== null && judged?.kind && !date) reasons.push('consentimento_data: not a date (DD/MM/AAAA, AAAA-MM-DD or an ISO 8601 date and time)');
          else if (date && date.getTime() > Date.now()) reasons.push('consentimento_data: in the future');
          if (source !== null && date && judged?.kind) consent = { kind: judged.kind, source, given_at: date.toISOString(), text: consentText, evidence };
        }
        const tags = [...new Set((cell('tags') ?? '').split(/[|,;]/).map(contactTag).filter((tag) => tag !== ''))];
        if (reasons.length > 0 || !phone) {
          reject(row.line, reasons.join('; '));
          continue;
        }
        if (seen.has(phone)) {
          reject(row.line, `telefone: repeats the number of line ${seen.get(phone)}`);
          continue;
        }
        seen.set(phone, row.line);
        const stored = [...contactsOf(state).values()].find((contact) => contact.entity_id === entity.id && contact.phone === phone);
        const at = new Date().toISOString();
        if (!stored) {
          const id = newId(state, contactsOf(state).keys());
          contactsOf(state).set(id, { id, entity_id: entity.id, phone, name: cell('name'), consent, tags: tags.sort(), created_at: at, updated_at: at });
          report.inserted += 1;
          continue;
        }
        const before = JSON.stringify([stored.name, stored.consent, stored.tags]);
        if (cell('name') !== null) stored.name = cell('name');
        if (consent) stored.consent = consent;
        stored.tags = [...new Set([...stored.tags, ...tags])].sort();
        if (JSON.stringify([stored.name, stored.consent, stored.tags]) === before) report.unchanged += 1;
        else {
          stored.updated_at = at;
          report.updated += 1;
        }
      }
      return envelope(200, report, `${report.rows} line${report.rows === 1 ? '' : 's'}: ${report.inserted} inserted, ${report.updated} updated, ${report.unchanged} unchanged, ${report.rejected} rejected.`);
    }),
    on('getContact', (context) => {
      const found = contactFor(context, 'read');
      if (found instanceof Response) return found;
      return envelope(200, contactView(found.contact, may(context.user, found.role, 'readPersonalData')), `Contact ${found.contact.id}.`);
    }),
    on('deleteContact', (context) => {
      const found = contactFor(context, 'manageTeam');
      if (found instanceof Response) return found;
      contactsOf(context.state).delete(found.contact.id);
      return envelope(200, { id: found.contact.id, entity_id: found.contact.entity_id, removed: true }, `Contact ${found.contact.id} removed.`);
    }),
    on('eraseContact', (context) => {
      const found = contactFor(context, 'manageTeam');
      if (found instanceof Response) return found;
      const { contact } = found;
      if (String(context.body.reason ?? '').trim() === '') {
        return invalidBody([{ location: 'body', field: 'reason', rule: 'not_blank', message: "must not be blank: the reference of the person's request", value: String(context.body.reason) }]);
      }
      // The mock sends nothing: the entity's messages to the number are queued (canceled here) or were seeded.
      let masked = 0;
      let canceled = 0;
      for (const campaign of context.state.campaigns.values()) {
        if (campaign.entity_id !== contact.entity_id) continue;
        for (const message of campaign.messages.filter((candidate) => candidate.recipient === contact.phone)) {
          message.recipient = maskPhone(contact.phone);
          if (message.status === 'queued') {
            message.status = 'canceled';
            message.error_message = 'The contact was erased at their request before the message was sent.';
            canceled += 1;
          } else masked += 1;
        }
      }
      contactsOf(context.state).delete(contact.id);
      const messages = masked + canceled;
      return envelope(
        200,
        // An opted-out number stays suppressed (the server keeps a keyed hash of it; opt-outs.ts).
        { id: contact.id, entity_id: contact.entity_id, erased: true, messages_masked: masked, messages_canceled: canceled, replies_masked: 0, suppression_kept: chatOf(context.state).optedOut.has(`${contact.entity_id}:${contact.phone}`) },
        `Contact ${contact.id} was erased; its number was removed from ${messages} message${messages === 1 ? '' : 's'} and 0 replies.`,
      );
    }),
  ];
}
