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
 * "PARE!", " stop ", "SAÍR" opt out. A keyword inside a sentence ("quero parar de receber", "não vou
 * sair") does not: these words are common in ordinary answers, and a wrong opt-out silences a voter who
 * wants the messages. Carriers read STOP the same way.
 */
import { Op, UniqueConstraintError } from 'sequelize';
import type { components } from '../../sdk/schema.js';
import type { OptOutRow, SmsModels } from './models.js';

export type SmsOptOut = components['schemas']['SmsOptOut'];
type Keyword = components['schemas']['SmsOptOutKeyword'];

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

/** An entity's id, or null for the credentials without an entity. */
export type OptOutScope = number | null;

export class SmsOptOuts {
  constructor(private readonly model: SmsModels['OptOut']) {}

  /** Opts `phone` out of each scope; a scope it opted out of already keeps its first row. */
  async record(scopes: OptOutScope[], phone: string, keyword: Keyword): Promise<void> {
    for (const scope of new Set(scopes)) {
      // Looked up first: the unique index cannot keep the null scope unique (a race there leaves a harmless twin).
      if (await this.model.findOne({ attributes: ['id'], where: { entity_id: scope, phone } })) continue;
      try {
        await this.model.create({ entity_id: scope, phone, keyword, opted_out_at: new Date() });
      } catch (error) {
        if (!(error instanceof UniqueConstraintError)) throw error; // another reply recorded it meanwhile
      }
    }
  }

  /** The numbers among `phones` that opted out of the campaigns of `scope`. */
  async among(scope: OptOutScope, phones: string[]): Promise<Set<string>> {
    if (phones.length === 0) return new Set();
    const rows = (await this.model.findAll({ attributes: ['phone'], where: { entity_id: scope, phone: { [Op.in]: phones } }, raw: true })) as unknown as OptOutRow[];
    return new Set(rows.map((row) => row.phone));
  }

  async has(scope: OptOutScope, phone: string): Promise<boolean> {
    return (await this.among(scope, [phone])).size > 0;
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
}

function optOutView(row: OptOutRow): SmsOptOut {
  return { phone: row.phone, keyword: (row.keyword as Keyword | null) ?? null, opted_out_at: new Date(row.opted_out_at).toISOString() };
}
