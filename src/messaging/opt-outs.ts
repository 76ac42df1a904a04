/**
 * SMS opt-outs, kept per entity (migration 0014).
 *
 * The guarantee: a reply whose only word is an opt-out keyword opts its sender out of the campaigns of
 * the entity whose credential received it. The signature was checked against that credential's auth
 * token (handlers.ts). Every credential of that entity honours it: a campaign skips the number when it
 * is created, and the send job cancels a message queued before. No other entity's credential does, so
 * a team that knows its own provider token can sign replies for its own credentials only, and cannot
 * silence another team's voters. The credentials without an entity (admins only) share one scope,
 * `null`. A reply to a sender number its account has no credential for binds every entity with a
 * credential on that account: the signature proves the account, not the number.
 * Not guaranteed: entities given one provider account share its token, so each can sign replies for
 * the other's senders.
 *
 * Keywords are matched against the whole reply once it is normalised (optOutKeywordOf): "Sair.",
 * "PARE!", " stop ", "SAÍR" opt out. Carriers read STOP the same way. A reply in the voter's own words
 * opts out too when it is a request to stop ("não quero mais receber", "me tira dessa lista", "pare de
 * mandar"; packages/rules/src/opt-out-phrases.ts, shared with the stateful mock), while a keyword inside an ordinary
 * answer ("não vou sair de casa", "quero parar no comitê") does not: a wrong opt-out silences a voter
 * who wants the messages. LGPD (Lei 13.709/2018) art. 8 §5º lets a person withdraw consent at any time;
 * Lei 9.504/1997 art. 57-G gives the sender 48 hours to remove them. A team may also opt a number out
 * by hand, or the number of a conversation in its inbox (source `manual`, `conversation`).
 *
 * Suppressions (migration 0034): every opt-out of an entity is also kept as HMAC-SHA256 of the number
 * under a key of the entity's own, so it outlives the erasure of the person's contact, which removes the
 * number itself (Contacts.erase calls keepThroughErasure in its transaction). A campaign, the send job
 * and the inbox check both (`among`, `has`). The key is 32 random bytes per entity, sealed with the
 * SecretBox under SECRETS_KEY, rather than derived from SECRETS_KEY with HKDF: both make the table
 * irreversible without the server's secret (there are only ~10^9 Brazilian mobile numbers, so an
 * unkeyed or publicly keyed hash would be reversed by trying them all in minutes), but a derived key
 * changes when SECRETS_KEY is rotated, silently voiding every suppression, while a sealed random key is
 * only sealed again; and a key found once (a log, a dump of one entity) opens no other entity's table.
 * Not guaranteed: without SECRETS_KEY nothing is hashed, and an erasure then leaves the opt-out's
 * number in `sms_opt_outs` (no credential can be stored either, so nothing can be sent). The shared
 * scope of the credentials without an entity (admins only) has no contacts to erase and no suppressions.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { DataTypes, Op, QueryTypes, UniqueConstraintError, type Model, type ModelStatic, type Transaction } from 'sequelize';
import type { components } from '../../sdk/schema.js';
import { optOutPhraseOf } from '@palanque/rules/opt-out-phrases';
import type { SecretBox } from '../security/secret-box.js';
import type { OptOutRow, SmsModels } from './models.js';

export type SmsOptOut = components['schemas']['SmsOptOut'];
type Keyword = components['schemas']['SmsOptOutKeyword'];
/** How an opt-out came: a reply, a team member by hand, or from a conversation in the inbox. */
export type OptOutSource = 'reply' | 'manual' | 'conversation';

/** The opt-out keywords, Portuguese then English; the contract lists the same (SmsOptOutKeyword). */
export const OPT_OUT_KEYWORDS: readonly Keyword[] = ['PARAR', 'PARE', 'SAIR', 'CANCELAR', 'DESCADASTRAR', 'STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'OPTOUT'];
const KEYWORDS = new Set<string>(OPT_OUT_KEYWORDS);

/** Accents and other combining marks, punctuation, symbols (emoji among them) and invisible format characters. */
const NOT_PART_OF_A_WORD = /[\p{M}\p{P}\p{S}\p{Cf}]/gu;

/**
 * The keyword a reply is, or undefined: the reply compatibility-decomposed (fullwidth letters become
 * letters, accents come apart), with accents, punctuation and symbols removed, trimmed and upper-cased.
 */
export function optOutKeywordOf(body: string): Keyword | undefined {
  const word = body.normalize('NFKD').replace(NOT_PART_OF_A_WORD, '').trim().toUpperCase();
  return KEYWORDS.has(word) ? (word as Keyword) : undefined;
}

/** How a reply opts out: its keyword, or the phrase it was read with (packages/rules/src/opt-out-phrases.ts); undefined for an ordinary answer. */
export function optOutReadingOf(body: string): { keyword: Keyword | null; phrase: string | null } | undefined {
  const keyword = optOutKeywordOf(body);
  if (keyword) return { keyword, phrase: null };
  const phrase = optOutPhraseOf(body);
  return phrase === undefined ? undefined : { keyword: null, phrase };
}

/** An entity's id, or null for the credentials without an entity. */
export type OptOutScope = number | null;

/** What an opt-out records beside the number. */
export interface OptOutOrigin {
  source: OptOutSource;
  keyword?: Keyword | null;
  phrase?: string | null;
  /** The team member who recorded it by hand. */
  createdBy?: number | null;
}

interface SuppressionKeyRow {
  entity_id: number;
  key_sealed: string;
  created_at: Date;
}

export class SmsOptOuts {
  private readonly keys: ModelStatic<Model<SuppressionKeyRow, Partial<SuppressionKeyRow>>>;
  /** Opened keys by entity: a key never changes once written. */
  private readonly opened = new Map<number, Buffer>();

  constructor(
    private readonly model: SmsModels['OptOut'],
    /** Seals the entities' suppression keys; undefined without SECRETS_KEY (nothing is hashed then). */
    private readonly box?: SecretBox,
  ) {
    const sequelize = model.sequelize!;
    this.keys = (sequelize.models.SmsSuppressionKey as typeof this.keys | undefined) ??
      sequelize.define<Model<SuppressionKeyRow, Partial<SuppressionKeyRow>>>(
        'SmsSuppressionKey',
        { entity_id: { type: DataTypes.INTEGER, primaryKey: true }, key_sealed: DataTypes.TEXT, created_at: DataTypes.DATE },
        { tableName: 'sms_suppression_keys', timestamps: false },
      );
  }

  private get sequelize() {
    return this.model.sequelize!;
  }

  /**
   * Opts `phone` out of each scope; a scope it opted out of already keeps its first row. An entity's
   * scope also gets its suppression (the number's keyed hash), which outlives the contact's erasure.
   * Whether any scope was new.
   */
  async record(scopes: OptOutScope[], phone: string, origin: OptOutOrigin): Promise<boolean> {
    let added = false;
    for (const scope of new Set(scopes)) {
      if (scope !== null) await this.suppress(scope, phone, origin.source);
      // Looked up first: the unique index cannot keep the null scope unique (a race there leaves a harmless twin).
      if (await this.model.findOne({ attributes: ['id'], where: { entity_id: scope, phone } })) continue;
      try {
        await this.model.create({
          entity_id: scope,
          phone,
          keyword: origin.keyword ?? null,
          source: origin.source,
          phrase: origin.phrase ?? null,
          created_by: origin.createdBy ?? null,
          opted_out_at: new Date(),
        } as Partial<OptOutRow>);
        added = true;
      } catch (error) {
        if (!(error instanceof UniqueConstraintError)) throw error; // another reply recorded it meanwhile
      }
    }
    return added;
  }

  /** The numbers among `phones` that opted out of the campaigns of `scope`: by their number, or by their suppression. */
  async among(scope: OptOutScope, phones: string[]): Promise<Set<string>> {
    if (phones.length === 0) return new Set();
    const rows = (await this.model.findAll({ attributes: ['phone'], where: { entity_id: scope, phone: { [Op.in]: phones } }, raw: true })) as unknown as OptOutRow[];
    const found = new Set(rows.map((row) => row.phone));
    const key = scope === null ? undefined : await this.keyOf(scope, false);
    if (!key) return found;
    const byHash = new Map(phones.filter((phone) => !found.has(phone)).map((phone) => [hashOf(key, phone), phone]));
    if (byHash.size === 0) return found;
    const suppressed = await this.sequelize.query<{ phone_hash: string }>('SELECT phone_hash FROM sms_suppressions WHERE entity_id = :scope AND phone_hash IN (:hashes)', {
      type: QueryTypes.SELECT,
      replacements: { scope, hashes: [...byHash.keys()] },
    });
    for (const row of suppressed) found.add(byHash.get(row.phone_hash)!);
    return found;
  }

  async has(scope: OptOutScope, phone: string): Promise<boolean> {
    return (await this.among(scope, [phone])).size > 0;
  }

  /** The entity's opt-out of `phone`, if it has one (by number; an erased number has only its suppression). */
  async find(entityId: number, phone: string): Promise<SmsOptOut | undefined> {
    const row = (await this.model.findOne({ where: { entity_id: entityId, phone }, raw: true })) as OptOutRow | null;
    return row ? optOutView(row) : undefined;
  }

  /**
   * The keyed hash of `phone` for the entity, its key made if it has none: called before an erasure's
   * transaction (a key written inside it could collide with another's and abort it on PostgreSQL).
   * Undefined without SECRETS_KEY.
   */
  async hashFor(entityId: number, phone: string): Promise<string | undefined> {
    const key = await this.keyOf(entityId, true);
    return key && hashOf(key, phone);
  }

  /**
   * In an erasure's transaction: if `phone` opted out of the entity, its suppression is written (`hash`,
   * from hashFor) and the opt-out's row, which holds the number, is removed. Without a hash the row is
   * kept, so the opt-out is never lost. Whether the number stays suppressed.
   */
  async keepThroughErasure(entityId: number, phone: string, hash: string | undefined, transaction: Transaction): Promise<boolean> {
    const rows = (await this.model.findAll({ attributes: ['id', 'source'], where: { entity_id: entityId, phone }, raw: true, transaction })) as unknown as Array<Pick<OptOutRow, 'id' | 'source'>>;
    if (hash === undefined) return rows.length > 0;
    if (rows.length > 0) {
      await insertSuppression(this.sequelize, entityId, hash, rows[0]!.source ?? 'reply', transaction);
      await this.model.destroy({ where: { id: { [Op.in]: rows.map((row) => row.id) } }, transaction });
      return true;
    }
    const [kept] = await this.sequelize.query<{ id: number }>('SELECT id FROM sms_suppressions WHERE entity_id = ? AND phone_hash = ?', { type: QueryTypes.SELECT, replacements: [entityId, hash], transaction });
    return kept !== undefined;
  }

  /** One page of the entity's opt-outs, newest first. */
  async page(entityId: number, page: number, pageSize: number): Promise<{ total: number; optOuts: SmsOptOut[] }> {
    const { count, rows } = await this.model.findAndCountAll({
      where: { entity_id: entityId },
      order: [['opted_out_at', 'DESC'], ['id', 'DESC']],
      limit: pageSize,
      offset: (page - 1) * pageSize,
      raw: true,
    });
    return { total: count, optOuts: (rows as unknown as OptOutRow[]).map(optOutView) };
  }

  private async suppress(entityId: number, phone: string, source: OptOutSource): Promise<void> {
    const key = await this.keyOf(entityId, true);
    if (key) await insertSuppression(this.sequelize, entityId, hashOf(key, phone), source);
  }

  /** The entity's key, opened; made (random, sealed) when `create` and it has none. Undefined without SECRETS_KEY. */
  private async keyOf(entityId: number, create: boolean): Promise<Buffer | undefined> {
    if (!this.box) return undefined;
    const cached = this.opened.get(entityId);
    if (cached) return cached;
    let row = (await this.keys.findByPk(entityId, { raw: true })) as SuppressionKeyRow | null;
    if (!row && create) {
      try {
        await this.keys.create({ entity_id: entityId, key_sealed: this.box.seal(randomBytes(32).toString('base64')), created_at: new Date() });
      } catch (error) {
        if (!(error instanceof UniqueConstraintError)) throw error; // another instance made it first: use theirs
      }
      row = (await this.keys.findByPk(entityId, { raw: true })) as SuppressionKeyRow | null;
    }
    if (!row) return undefined;
    const key = Buffer.from(this.box.open(row.key_sealed), 'base64');
    this.opened.set(entityId, key);
    return key;
  }
}

/** HMAC-SHA256 of the E.164 number under the entity's key, hex. */
function hashOf(key: Buffer, phone: string): string {
  return createHmac('sha256', key).update(phone, 'utf8').digest('hex');
}

/** One suppression; a number suppressed already keeps its first row (ON CONFLICT: no error aborts a PostgreSQL transaction). */
async function insertSuppression(sequelize: NonNullable<SmsModels['OptOut']['sequelize']>, entityId: number, hash: string, source: string, transaction?: Transaction): Promise<void> {
  await sequelize.query('INSERT INTO sms_suppressions (entity_id, phone_hash, source, suppressed_at) VALUES (?, ?, ?, ?) ON CONFLICT (entity_id, phone_hash) DO NOTHING', {
    replacements: [entityId, hash, source, new Date()],
    transaction,
  });
}

function optOutView(row: OptOutRow): SmsOptOut {
  return {
    phone: row.phone,
    keyword: (row.keyword as Keyword | null) ?? null,
    source: (row.source as OptOutSource | null) ?? 'reply',
    phrase: row.phrase ?? null,
    opted_out_at: new Date(row.opted_out_at).toISOString(),
  };
}
