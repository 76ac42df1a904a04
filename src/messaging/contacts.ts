/**
 * An entity's contacts: the people it may message, each with the consent they gave (issue 23; tables
 * `contacts` and `contact_tags`, migration 0027). Electoral law lets a campaign message only people who
 * gave their number voluntarily; a contact records where, when and to what text, and since issue 42 the
 * kind of source and its evidence (migration 0036; packages/rules/src/consent-sources.ts judges them before they are
 * stored: a bought or third-party list never is). Contacts are erased after the entity's election
 * (contact-retention.ts).
 *
 * What holds:
 * - One contact per number and entity (a unique index): the number is stored in E.164, so two ways of
 *   writing it are one contact. Tags are stored normalised (normalisedTag), so a filter by tag and a
 *   campaign to a tag find what a person would call the same tag.
 * - Numbers and names are personal data (issue 12): `contactView` gives them whole only to roles that
 *   may read personal data, masked to the others (the number by maskPhone, the name as initials).
 *   Masking happens on the way out; a masked value is never stored, except by an erasure.
 * - A contact's number is a Brazilian mobile (@palanque/rules/phones isBrazilianMobile; createContact and the import
 *   refuse others, rule `not_mobile`); one stored before that rule reads `can_receive_sms: false` and
 *   campaigns skip it.
 * - An erasure (`erase`) runs in one transaction, and never races the send job (sending.ts): messages
 *   the provider has or had (any status but `queued`) are masked, which the send job never reads again;
 *   messages no attempt was claimed for are canceled by an update conditional on `send_attempts = 0`,
 *   the same condition the job's claim needs, so one of the two wins; a message whose attempt is open
 *   (it may have been taken) makes the whole erasure roll back (`in_flight`), to be asked again once it
 *   settles. Under PostgreSQL's row locks a claim committed before the cancel is seen by the count that
 *   follows it; one started after it waits for the erasure and then finds the message canceled.
 * Not guaranteed: a campaign created while the erasure runs may still list the number.
 */
import { literal, Op, UniqueConstraintError, type Transaction } from 'sequelize';
import type { ConsentKind } from '@palanque/rules/consent-sources';
import type { components } from '../../sdk/schema.js';
import { asIsoTimestamp, readerOf, type Reader } from '../db/reader.js';
import type { ContactRow, SmsModels } from './models.js';
import type { SmsOptOuts } from './opt-outs.js';
import { isBrazilianMobile, maskPhone } from '@palanque/rules/phones';

export type Contact = components['schemas']['Contact'];
export type ContactErasure = components['schemas']['ContactErasure'];
type ContactConsentKind = components['schemas']['ContactConsentKind'];

/** The most tags a contact holds (the contract's `maxItems`). */
export const MAX_TAGS = 20;
export const MAX_TAG_LENGTH = 60;

/** A tag as stored and compared: Unicode NFC, trimmed, its runs of spaces one space, in lower case. */
export function normalisedTag(tag: string): string {
  return tag.normalize('NFC').trim().replace(/\s+/g, ' ').toLocaleLowerCase('pt-BR');
}

/** `Maria da Silva Santos` -> `M. d. S. S.`: what operators and viewers read of a name. */
export function nameInitials(name: string): string {
  return name
    .trim()
    .split(/\s+/)
    .map((word) => `${[...word][0] ?? ''}.`)
    .join(' ');
}

/** What a contact says of the consent given; null fields of the row are absent parts. */
export interface ConsentFields {
  /** The structured source (packages/rules/src/consent-sources.ts); never a refused one (contact-handlers.ts, contact-import.ts judge it). */
  kind: ConsentKind;
  source: string;
  givenAt: Date;
  text: string | null;
  /** The record that shows a manual or imported consent. */
  evidence: string | null;
}

export interface NewContactFields {
  entityId: number;
  phone: string;
  name: string | null;
  consent: ConsentFields | null;
  tags: string[];
  createdBy: number;
}

/** A contact as read, with its tags. */
export interface StoredContact extends ContactRow {
  tags: string[];
}

export class Contacts {
  constructor(
    private readonly models: SmsModels,
    /** Keeps an opted-out number's suppression through its erasure (opt-outs.ts); without it the opt-out keeps its number. */
    private readonly optOuts?: SmsOptOuts,
  ) {}

  private get sequelize() {
    return this.models.Contact.sequelize!;
  }

  private reader(): Reader {
    return readerOf(this.sequelize);
  }

  /** One page of the entity's contacts by id, only those with `tag` (normalised) if given, and how many match. */
  async page(entityId: number, tag: string | undefined, page: number, pageSize: number): Promise<{ total: number; contacts: StoredContact[] }> {
    const offset = (page - 1) * pageSize;
    const [counted, rows] =
      tag === undefined
        ? await Promise.all([
            this.reader().row<{ total: unknown }>('SELECT COUNT(*) AS total FROM contacts WHERE entity_id = ?', [entityId]),
            this.reader().rows<Record<string, unknown>>(`SELECT ${CONTACT_COLUMNS} FROM contacts c WHERE c.entity_id = ? ORDER BY c.id LIMIT ? OFFSET ?`, [entityId, pageSize, offset]),
          ])
        : await Promise.all([
            this.reader().row<{ total: unknown }>(`SELECT COUNT(*) AS total FROM contacts c WHERE c.entity_id = ? AND ${HAS_TAG}`, [entityId, tag]),
            this.reader().rows<Record<string, unknown>>(`SELECT ${CONTACT_COLUMNS} FROM contacts c WHERE c.entity_id = ? AND ${HAS_TAG} ORDER BY c.id LIMIT ? OFFSET ?`, [entityId, tag, pageSize, offset]),
          ]);
    const contacts = rows.map(contactRowOf);
    await this.attachTags(entityId, contacts);
    return { total: Number(counted?.total ?? 0), contacts };
  }

  /** The contact `id` with its tags, if there is one. */
  async find(id: number): Promise<StoredContact | undefined> {
    if (!Number.isSafeInteger(id)) return undefined;
    const row = await this.reader().row<Record<string, unknown>>(`SELECT ${CONTACT_COLUMNS} FROM contacts c WHERE c.id = CAST(? AS BIGINT)`, [id]);
    if (!row) return undefined;
    const contact = contactRowOf(row);
    await this.attachTags(contact.entity_id, [contact]);
    return contact;
  }

  /** The entity's contact with this number (E.164), if any. */
  async withPhone(entityId: number, phone: string, transaction?: Transaction): Promise<ContactRow | undefined> {
    return ((await this.models.Contact.findOne({ where: { entity_id: entityId, phone }, raw: true, transaction })) as ContactRow | null) ?? undefined;
  }

  /** Adds a contact with its tags; `taken` (with the contact that has it) when the entity has the number already. */
  async create(fields: NewContactFields): Promise<StoredContact | { taken: ContactRow }> {
    try {
      return await this.sequelize.transaction(async (transaction) => {
        const now = new Date();
        const created = await this.models.Contact.create(
          {
            entity_id: fields.entityId,
            phone: fields.phone,
            name: fields.name,
            consent_source: fields.consent?.source ?? null,
            consent_given_at: fields.consent?.givenAt ?? null,
            consent_text: fields.consent?.text ?? null,
            consent_kind: fields.consent?.kind ?? null,
            consent_evidence: fields.consent?.evidence ?? null,
            created_by: fields.createdBy,
            created_at: now,
            updated_at: now,
          },
          { transaction },
        );
        const row = created.get({ plain: true }) as ContactRow;
        const tags = [...new Set(fields.tags)].sort();
        if (tags.length > 0) await this.models.ContactTag.bulkCreate(tags.map((tag) => ({ contact_id: row.id, tag })), { transaction });
        return { ...row, tags };
      });
    } catch (error) {
      if (!(error instanceof UniqueConstraintError)) throw error;
      const taken = await this.withPhone(fields.entityId, fields.phone);
      if (!taken) throw error;
      return { taken };
    }
  }

  /** Removes the contact and its tags; the messages that went to it keep their number but no longer name it. Whether it was there. */
  async remove(id: number): Promise<boolean> {
    return this.sequelize.transaction(async (transaction) => {
      await this.models.Message.update({ contact_id: null }, { where: { contact_id: id }, transaction });
      await this.models.ContactTag.destroy({ where: { contact_id: id }, transaction });
      return (await this.models.Contact.destroy({ where: { id }, transaction })) === 1;
    });
  }

  /**
   * Erases the contact at the person's request (see the module's comment): its row and tags, and its
   * number in the entity's messages and in the replies to the entity's credentials. `in_flight` (nothing
   * erased) when a message to the number has an open attempt; `gone` when the contact was removed meanwhile.
   */
  async erase(contact: ContactRow): Promise<ContactErasure | { inFlight: number } | 'gone'> {
    const { Message, Reply, Credential, ContactTag, Contact } = this.models;
    const masked = maskPhone(contact.phone);
    // The entity's campaigns, as a subquery: an entity may have thousands. The id is an integer read from the database.
    const ofEntity = { [Op.in]: literal(`(SELECT id FROM sms_campaigns WHERE entity_id = ${Number(contact.entity_id)})`) };
    const toNumber = { recipient: contact.phone, campaign_id: ofEntity };
    // The entity's suppression key is made before the transaction (opt-outs.ts hashFor says why).
    const hash = await this.optOuts?.hashFor(contact.entity_id, contact.phone);
    try {
      return await this.sequelize.transaction(async (transaction) => {
        // First the cancel, then the count: a claim that beat the cancel is seen by the count (module comment).
        const [canceled] = await Message.update(
          { status: 'canceled', recipient: masked, error_message: 'The contact was erased at their request before the message was sent.', updated_at: new Date() },
          { where: { ...toNumber, status: 'queued', send_attempts: 0 }, transaction },
        );
        const inFlight = await Message.count({ where: { ...toNumber, status: 'queued', send_attempts: { [Op.gt]: 0 } }, transaction });
        if (inFlight > 0) throw new InFlight(inFlight);
        // `updated_at` is left alone: it is when the status last moved (the receipt timeout reads it).
        const [maskedMessages] = await Message.update({ recipient: masked }, { where: { ...toNumber, status: { [Op.ne]: 'queued' } }, transaction });
        await Message.update({ contact_id: null }, { where: { contact_id: contact.id }, transaction });
        const receivers = (await Credential.findAll({ attributes: ['account_id', 'sender_id'], where: { entity_id: contact.entity_id }, raw: true, transaction })) as unknown as Array<{ account_id: string; sender_id: string }>;
        const [maskedReplies] =
          receivers.length === 0
            ? [0]
            : await Reply.update(
                { sender: masked },
                { where: { sender: contact.phone, [Op.or]: receivers.map((credential) => ({ account_id: credential.account_id, recipient: credential.sender_id })) }, transaction },
              );
        await ContactTag.destroy({ where: { contact_id: contact.id }, transaction });
        if ((await Contact.destroy({ where: { id: contact.id }, transaction })) !== 1) throw new Gone();
        // An opt-out outlives the erasure as its suppression, a keyed hash (Lei 9.504 art. 57-G; LGPD art. 16 I), and its row, which holds the number, goes.
        const suppressed = (await this.optOuts?.keepThroughErasure(contact.entity_id, contact.phone, hash, transaction)) ?? false;
        return { id: contact.id, entity_id: contact.entity_id, erased: true as const, messages_masked: maskedMessages, messages_canceled: canceled, replies_masked: maskedReplies, suppression_kept: suppressed };
      });
    } catch (error) {
      if (error instanceof InFlight) return { inFlight: error.count };
      if (error instanceof Gone) return 'gone';
      throw error;
    }
  }

  /** Fills each contact's `tags` (alphabetical): one query for the page's id range of the entity. */
  private async attachTags(entityId: number, contacts: StoredContact[]): Promise<void> {
    if (contacts.length === 0) return;
    const ids = contacts.map((contact) => contact.id);
    const rows = await this.reader().rows<{ contact_id: number; tag: string }>(
      'SELECT t.contact_id, t.tag FROM contact_tags t JOIN contacts c ON c.id = t.contact_id WHERE c.entity_id = ? AND c.id BETWEEN ? AND ? ORDER BY t.contact_id, t.tag',
      [entityId, Math.min(...ids), Math.max(...ids)],
    );
    const byId = new Map(contacts.map((contact) => [contact.id, contact]));
    for (const row of rows) byId.get(Number(row.contact_id))?.tags.push(row.tag);
  }
}

/** Thrown inside the erasure's transaction to roll it back. */
class InFlight extends Error {
  constructor(readonly count: number) {
    super(`${count} message(s) in flight`);
  }
}
class Gone extends Error {}

const CONTACT_COLUMNS = 'c.id, c.entity_id, c.phone, c.name, c.consent_source, c.consent_given_at, c.consent_text, c.consent_kind, c.consent_evidence, c.created_by, c.created_at, c.updated_at';
const HAS_TAG = 'EXISTS (SELECT 1 FROM contact_tags t WHERE t.contact_id = c.id AND t.tag = ?)';

function contactRowOf(row: Record<string, unknown>): StoredContact {
  return {
    id: Number(row.id),
    entity_id: Number(row.entity_id),
    phone: String(row.phone),
    name: (row.name as string | null) ?? null,
    consent_source: (row.consent_source as string | null) ?? null,
    consent_given_at: row.consent_given_at == null ? null : new Date(asIsoTimestamp(row.consent_given_at)),
    consent_text: (row.consent_text as string | null) ?? null,
    consent_kind: (row.consent_kind as string | null) ?? null,
    consent_evidence: (row.consent_evidence as string | null) ?? null,
    created_by: row.created_by == null ? null : Number(row.created_by),
    created_at: new Date(asIsoTimestamp(row.created_at)),
    updated_at: new Date(asIsoTimestamp(row.updated_at)),
    tags: [],
  };
}

/** A contact as the contract shows it: whole for roles that read personal data, masked for the others. */
export function contactView(contact: StoredContact, whole: boolean): Contact {
  return {
    id: contact.id,
    entity_id: contact.entity_id,
    phone: whole ? contact.phone : maskPhone(contact.phone),
    name: contact.name === null ? null : whole ? contact.name : nameInitials(contact.name),
    consent:
      contact.consent_source === null || contact.consent_given_at === null
        ? null
        : {
            kind: contact.consent_kind as ContactConsentKind | null,
            source: contact.consent_source,
            given_at: contact.consent_given_at.toISOString(),
            text: contact.consent_text,
            evidence: contact.consent_evidence,
          },
    tags: contact.tags,
    // A landline (or another number that is not a Brazilian mobile) stored before issue 42: kept, flagged, never sent to.
    can_receive_sms: isBrazilianMobile(contact.phone),
    created_at: contact.created_at.toISOString(),
    updated_at: contact.updated_at.toISOString(),
  };
}
