/**
 * The HTTP side of an entity's contacts (issue 23): list and read them (every team role; numbers and
 * names whole only for the roles that read personal data, issue 12), add, import from CSV, remove and
 * erase them at the person's request (the entity's owner and admins, who manage its team and read
 * personal data whole; platform admins too). A contact reached by its id is authorized through its
 * entity: a stranger gets 404, as for a contact that does not exist.
 */
import type { Request } from 'express';
import type { AuditLog } from '../accounts/audit-log.js';
import { callerOf, type Caller } from '../http/auth.js';
import { invalidBody, optionalText, requiredText } from '../http/body-fields.js';
import { sendEnvelope } from '../http/envelope.js';
import { ApiError, badRequest, notFound, type ErrorDetail } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import { pageOf } from '../http/pagination.js';
import { apiBaseUrl, type PublicUrlSettings } from '../http/public-url.js';
import type { Teams } from '../entities/teams.js';
import type { TeamRole } from '../entities/models.js';
import {
  ContactImportRefused,
  ContactImportTooLarge,
  ContactImportUndecodable,
  importCharsetOf,
  importContacts,
  importContentEncodingOf,
  MAX_IMPORT_BYTES,
  type ContentEncoding,
} from './contact-import.js';
import { contactView, MAX_TAG_LENGTH, normalisedTag, type Contacts, type StoredContact } from './contacts.js';
import type { SmsModels } from './models.js';
import { isBrazilianMobile } from '@palanque/rules/phones';
import { normalisedPhone } from '@palanque/rules/recipients';
import { counted } from '../http/counted.js';
import { judgeConsent } from '@palanque/rules/consent-sources';

type ContactOperations = 'listContacts' | 'createContact' | 'importContacts' | 'getContact' | 'deleteContact' | 'eraseContact';

const CONTACTS_PER_PAGE = 50;
/** Who adds, imports, removes and erases contacts: the roles that manage the team (and read personal data whole). */
const MANAGE = 'manageTeam';
/** How long to wait before erasing again when a message to the number is with the provider. */
const ERASE_RETRY_AFTER_SECONDS = '60';

export interface ContactHandlerDependencies {
  contacts: Contacts;
  /** The SMS tables, written by the import. */
  models: SmsModels;
  teams: Teams;
  audit: Pick<AuditLog, 'record'>;
  urls: PublicUrlSettings;
}

export function contactHandlers({ contacts, models, teams, audit, urls }: ContactHandlerDependencies): Pick<Required<OperationHandlers>, ContactOperations> {
  const whole = (caller: Caller, role: TeamRole) => teams.may(caller, role, 'readPersonalData');

  /** The contact named in the path and the caller's role in its entity (404 for a stranger), if the role allows `permission`. */
  const contactInPath = async (caller: Caller, rawId: unknown, permission: 'read' | typeof MANAGE): Promise<{ contact: StoredContact; role: TeamRole }> => {
    const id = Number(rawId);
    const contact = await contacts.find(id);
    const role = contact && (await teams.rolesOf(caller, [contact.entity_id])).get(contact.entity_id);
    if (!contact || !role) {
      throw notFound(`There is no contact ${id} in your teams' entities.`, [
        { location: 'path', field: 'contact_id', rule: 'in_your_teams', message: 'must be a contact of an entity of one of your teams', value: id },
      ]);
    }
    teams.require(caller, role, permission);
    return { contact, role };
  };

  return {
    async listContacts(req, res) {
      const caller = callerOf(res);
      const { entity, role } = await teams.access(caller, Number(req.query.entity_id), 'read', { location: 'query', field: 'entity_id' });
      const tag = req.query.tag === undefined ? undefined : normalisedTag(req.query.tag);
      if (tag === '') throw badRequest('The request is malformed: tag is blank.', [{ location: 'query', field: 'tag', rule: 'not_blank', message: 'must not be blank', value: req.query.tag }]);
      const page = req.query.page ?? 1;
      const { total, contacts: found } = await contacts.page(entity.id, tag, page, CONTACTS_PER_PAGE);
      const listUrl = new URL(apiBaseUrl(req, urls) + '/api/contacts/');
      listUrl.searchParams.set('entity_id', String(entity.id));
      if (tag !== undefined) listUrl.searchParams.set('tag', tag);
      const wholeView = whole(caller, role);
      const shown = found.map((contact) => contactView(contact, wholeView));
      sendEnvelope(res, 200, pageOf(shown, total, page, CONTACTS_PER_PAGE, listUrl.toString()), `${counted(total, 'contact')}.`);
    },

    async createContact(req, res) {
      const caller = callerOf(res);
      const { entity, role } = await teams.access(caller, req.body.entity_id, MANAGE, { location: 'body', field: 'entity_id' });
      const problems: ErrorDetail[] = [];
      const written = requiredText('phone', req.body.phone, problems);
      const phone = written === '' ? undefined : normalisedPhone(written);
      if (written !== '' && !phone) problems.push({ location: 'body', field: 'phone', rule: 'phone_number', message: 'must be a valid phone number', value: req.body.phone });
      else if (phone && !isBrazilianMobile(phone)) {
        problems.push({ location: 'body', field: 'phone', rule: 'not_mobile', message: 'must be a Brazilian mobile number, the only numbers an SMS reaches (not a landline, toll-free or foreign number)', value: req.body.phone });
      }
      const consent = req.body.consent ?? null;
      const source = consent ? requiredText('consent.source', consent.source, problems) : '';
      const givenAt = consent ? new Date(consent.given_at) : undefined;
      if (givenAt && givenAt.getTime() > Date.now()) {
        problems.push({ location: 'body', field: 'consent.given_at', rule: 'not_in_future', message: 'must not be in the future', value: consent!.given_at });
      }
      // Consent that can be shown (issue 42): a kind, never a bought or third-party list (packages/rules/src/consent-sources.ts).
      const judged = consent && source !== '' ? judgeConsent({ kind: consent.kind, source, evidence: consent.evidence }) : undefined;
      for (const problem of judged?.problems ?? []) {
        problems.push({ location: 'body', field: `consent.${problem.field}`, rule: problem.rule, message: problem.message, ...(problem.value === undefined ? {} : { value: problem.value }) });
      }
      const tags = tagsOf(req.body.tags ?? [], problems);
      if (problems.length > 0 || !phone) throw invalidBody(problems);
      const created = await contacts.create({
        entityId: entity.id,
        phone,
        name: optionalText(req.body.name),
        consent: consent && givenAt && judged?.kind ? { kind: judged.kind, source, givenAt, text: optionalText(consent.text), evidence: optionalText(consent.evidence) } : null,
        tags,
        createdBy: caller.user.id,
      });
      if ('taken' in created) {
        throw new ApiError(409, 'conflict', `Contact ${created.taken.id} of entity ${entity.id} has this number already.`, [
          { location: 'body', field: 'phone', rule: 'unique_per_entity', message: `is the number of contact ${created.taken.id} of this entity`, value: phone },
        ]);
      }
      sendEnvelope(res, 201, contactView(created, whole(caller, role)), `Contact ${created.id} added.`);
    },

    async importContacts(req, res) {
      const caller = callerOf(res);
      const { entity } = await teams.access(caller, Number(req.query.entity_id), MANAGE, { location: 'query', field: 'entity_id' });
      const body = importedBodyOf(req as Request);
      const report = await importContacts(models, req as Request, { entityId: entity.id, createdBy: caller.user.id, ...body }).catch((error: unknown) => {
        throw importFailure(error);
      });
      const { rows, inserted, updated, unchanged, rejected } = report;
      sendEnvelope(res, 200, report, `${counted(rows, 'line')}: ${inserted} inserted, ${updated} updated, ${unchanged} unchanged, ${rejected} rejected.`);
    },

    async getContact(req, res) {
      const caller = callerOf(res);
      const { contact, role } = await contactInPath(caller, req.params.contact_id, 'read');
      sendEnvelope(res, 200, contactView(contact, whole(caller, role)), `Contact ${contact.id}.`);
    },

    async deleteContact(req, res) {
      const caller = callerOf(res);
      const { contact } = await contactInPath(caller, req.params.contact_id, MANAGE);
      if (!(await contacts.remove(contact.id))) throw gone(contact.id);
      sendEnvelope(res, 200, { id: contact.id, entity_id: contact.entity_id, removed: true as const }, `Contact ${contact.id} removed.`);
    },

    async eraseContact(req, res) {
      const caller = callerOf(res);
      const { contact } = await contactInPath(caller, req.params.contact_id, MANAGE);
      const reason = req.body.reason.trim();
      if (reason === '') {
        throw invalidBody([{ location: 'body', field: 'reason', rule: 'not_blank', message: "must not be blank: the reference of the person's request", value: req.body.reason }]);
      }
      const erased = await contacts.erase(contact);
      if (erased === 'gone') throw gone(contact.id);
      if ('inFlight' in erased) {
        const count = erased.inFlight;
        const messages = counted(count, 'message');
        throw new ApiError(
          409,
          'conflict',
          `${messages} to this contact ${count === 1 ? 'is' : 'are'} being handed to the provider; nothing was erased. Erase again in a minute.`,
          [{ location: 'path', field: 'contact_id', rule: 'messages_in_flight', message: `has ${messages} being handed to the provider`, value: contact.id }],
          { 'Retry-After': ERASE_RETRY_AFTER_SECONDS },
        );
      }
      // The person's number and name are never in the log: the contact is named by its id.
      const { messages_masked, messages_canceled, replies_masked } = erased;
      await audit.record({
        event: 'contact_erased',
        actorId: caller.user.id,
        address: req.ip,
        details: { entity_id: contact.entity_id, contact_id: contact.id, reason, messages_masked, messages_canceled, replies_masked },
      });
      const messages = messages_masked + messages_canceled;
      const masked = `${counted(messages, 'message')} and ${counted(replies_masked, 'reply', 'replies')}`;
      sendEnvelope(res, 200, erased, `Contact ${contact.id} was erased; its number was removed from ${masked}.`);
    },
  };
}

/** The charset and Content-Encoding of an import's body, refused (415, 413) before any of it is read. */
function importedBodyOf(req: Request): { charset: string; contentEncoding: ContentEncoding } {
  const charset = importCharsetOf(req.get('Content-Type'));
  if (!charset) {
    throw new ApiError(415, 'unsupported_media_type', 'Unsupported charset in Content-Type; send the file as UTF-8, ISO-8859-1 or Windows-1252.', [
      { location: 'header', field: 'Content-Type', rule: 'charset', message: 'the charset must be utf-8, iso-8859-1 or windows-1252', value: req.get('Content-Type')!.slice(0, 200) },
    ]);
  }
  const contentEncoding = importContentEncodingOf(req.get('Content-Encoding'));
  if (!contentEncoding) {
    throw new ApiError(415, 'unsupported_media_type', 'Unsupported Content-Encoding; this server takes gzip, deflate, br or identity.', [
      { location: 'header', field: 'Content-Encoding', rule: 'content_encoding', message: 'must be gzip, deflate, br or identity', value: req.get('Content-Encoding')!.slice(0, 200) },
    ]);
  }
  if (Number(req.get('Content-Length') ?? 0) > MAX_IMPORT_BYTES) throw tooLarge(`The file is larger than the import takes (${MAX_IMPORT_BYTES} bytes); nothing was imported.`);
  return { charset, contentEncoding };
}

/** What an import that stopped answers: its header refused (422), a body cut (413) or not decompressible (400). */
function importFailure(error: unknown): unknown {
  if (error instanceof ContactImportRefused) return new ApiError(422, 'validation_failed', error.message, error.problems);
  if (error instanceof ContactImportUndecodable) {
    return badRequest(error.message, [{ location: 'header', field: 'Content-Encoding', rule: 'content_encoding', message: `the body must be ${error.encoding}-compressed`, value: error.encoding }]);
  }
  if (error instanceof ContactImportTooLarge) {
    return tooLarge(`The file is larger than the import takes (${MAX_IMPORT_BYTES} bytes): it was cut there: the lines up to line ${error.lastLine} were read and imported (or rejected), the rest were not. Send the rest as another file.`);
  }
  return error;
}

/** A contact's tags, normalised and once each; a blank one adds a `not_blank` problem (the schema bounds the rest). */
function tagsOf(tags: string[], problems: ErrorDetail[]): string[] {
  const normalised: string[] = [];
  tags.forEach((tag, index) => {
    const value = normalisedTag(tag);
    if (value === '') problems.push({ location: 'body', field: `tags.${index}`, rule: 'not_blank', message: 'must not be blank', value: tag });
    else if ([...value].length > MAX_TAG_LENGTH) problems.push({ location: 'body', field: `tags.${index}`, rule: 'maxLength', message: `must NOT have more than ${MAX_TAG_LENGTH} characters` });
    else normalised.push(value);
  });
  return [...new Set(normalised)];
}

function tooLarge(message: string): ApiError {
  return new ApiError(413, 'payload_too_large', message, [{ location: 'body', field: '', rule: 'max_size', message: `must be at most ${MAX_IMPORT_BYTES} bytes` }]);
}

/** The contact went between the read and the write (another request removed it). */
function gone(id: number): ApiError {
  return notFound(`There is no contact ${id} in your teams' entities.`, [
    { location: 'path', field: 'contact_id', rule: 'in_your_teams', message: 'must be a contact of an entity of one of your teams', value: id },
  ]);
}
