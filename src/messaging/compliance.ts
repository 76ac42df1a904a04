/**
 * The electoral rules an SMS campaign is judged by (issue 23): Brazilian electoral law lets a campaign
 * message only people who gave their number voluntarily, requires every message to identify its sender
 * and offer a way out, and allows propaganda only from 16 August of the election year until the eve of
 * the vote (of the second round, for a candidate in it).
 *
 * What holds:
 * - Each entity has a mode (`sms_compliance`, migration 0027; no row is `warn`): `off` judges nothing,
 *   `warn` lets a campaign go and lists the rules it breaks, `enforce` refuses it. A credential without
 *   an entity (platform admins only) is judged by nothing, as under `off`.
 * - `judge` names every rule broken, each with what and when: `consent_missing` (numbers that are not a
 *   contact of the entity with a consent source, counted, the first few masked: a warning never carries
 *   a whole number, whoever reads it), `footer_missing` (the credential has no footer) and
 *   `outside_campaign_window` (today in Brasília outside the effective window).
 * - The effective window of an entity linked to a court candidacy is its election's: 16 August of the
 *   year to the eve of the vote, of the same year's second round of the same kind of election for a
 *   candidate whose result is `2º TURNO` (the last Sunday of October, the Constitution's date, when the
 *   court's data lacks that round). An entity not linked (or linked to a candidacy no longer loaded)
 *   has the window typed for it, or none, and then the window rule judges nothing.
 * - A footer names an opt-out keyword that opt-outs.ts honours, so the way out it offers works.
 * - The text of every message is its campaign's body and, after a line break, its footer (`messageText`):
 *   what is counted in segments is what the send job hands to the provider.
 * Not judged: a supplementary election's own calendar (its window is the ordinary one's rule).
 */
import { Op, type Sequelize, type Transaction } from 'sequelize';
import type { components } from '../../sdk/schema.js';
import { addDays, brasiliaDay } from '../brasilia-time.js';
import { asIsoTimestamp, readerOf } from '../db/reader.js';
import { courtReferenceOf, type Election } from '../elections/tse/reference.js';
import type { ErrorDetail } from '../http/errors.js';
import type { ComplianceMode, ComplianceRow, ContactRow, SmsModels } from './models.js';
import { OPT_OUT_KEYWORDS, optOutKeywordOf } from './opt-outs.js';
import { maskPhone } from './phones.js';

export type SmsComplianceSettings = components['schemas']['SmsCompliance'];
export type ComplianceWarning = components['schemas']['SmsComplianceWarning'];
export type EffectiveWindow = components['schemas']['SmsEffectiveWindow'];
type TypedWindow = components['schemas']['SmsPropagandaWindow'];

/** The mode of an entity whose compliance was never set. */
export const DEFAULT_MODE: ComplianceMode = 'warn';
/** The longest footer (the contract's `maxLength`): one GSM-7 segment at most. */
export const MAX_FOOTER_LENGTH = 160;
/** How many numbers without consent a warning names (masked). */
const EXAMPLES_SHOWN = 5;
/** Electoral propaganda is allowed from this day of the election year (Lei 9.504/1997, art. 36). */
const PROPAGANDA_STARTS = '08-16';

/** How a campaign was judged: its entity's mode and the rules it breaks (none under `off`). */
export interface Judgement {
  mode: ComplianceMode;
  warnings: ComplianceWarning[];
}

/** What `judge` looks at. */
export interface CampaignToJudge {
  /** The credential's entity; null for a credential without one (not judged). */
  entityId: number | null;
  credentialId: number;
  footer: string | null;
  /** The numbers the campaign goes to, in E.164 (opted-out numbers already left out). */
  numbers: readonly string[];
  /** The numbers among them known to have consent (a campaign to contacts knows); read from the contacts otherwise. */
  consented?: ReadonlySet<string>;
}

// --- Texts and footers ----------------------------------------------------------------------------

/** A message's text as it goes: the body and, after a line break, the footer. */
export function messageText(body: string, footer: string | null): string {
  return footer ? `${body}\n${footer}` : body;
}

/** A footer as stored: trimmed, null when empty or absent. */
export function normalisedFooter(footer: string | null | undefined): string | null {
  const trimmed = footer?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
}

/** What is wrong with a (normalised) footer, if anything: it must name an opt-out keyword as a word. */
export function footerProblem(footer: string | null): ErrorDetail | undefined {
  if (footer === null) return undefined;
  if (footer.split(/\s+/).some((word) => optOutKeywordOf(word) !== undefined)) return undefined;
  return {
    location: 'body',
    field: 'footer',
    rule: 'opt_out_keyword',
    message: `must name an opt-out keyword people can reply (${OPT_OUT_KEYWORDS.slice(0, 6).join(', ')}...)`,
    value: footer.slice(0, 60),
  };
}

// --- Days -----------------------------------------------------------------------------------------

/** The last Sunday of October of `year`: the second round's day (Constitution, arts. 28, 29 and 77). */
export function lastSundayOfOctober(year: number): string {
  const date = new Date(Date.UTC(year, 9, 31));
  date.setUTCDate(31 - date.getUTCDay());
  return date.toISOString().slice(0, 10);
}

/** The court's label of a candidate who runs in the second round (`2º TURNO`). */
function runsSecondRound(label: string | undefined): boolean {
  return label !== undefined && /^2\s*[º°o]?\s*turno$/i.test(label.trim());
}

// --- The rules ------------------------------------------------------------------------------------

export class SmsCompliance {
  constructor(
    private readonly models: SmsModels,
    private readonly sequelize: Sequelize,
    /** Today in Brasília (tests may fix it). */
    private readonly today: () => string = () => brasiliaDay(),
  ) {}

  /** The entity's stored settings, if it has any. */
  private async stored(entityId: number): Promise<ComplianceRow | undefined> {
    return ((await this.models.Compliance.findByPk(entityId, { raw: true })) as ComplianceRow | null) ?? undefined;
  }

  /** The entity's settings as getSmsCompliance answers them (`candidacy_id`: the entity's link to the court's data). */
  async settingsOf(entity: { id: number; candidacy_id?: number | null }): Promise<SmsComplianceSettings> {
    const row = await this.stored(entity.id);
    const window = typedWindowOf(row);
    return {
      entity_id: entity.id,
      mode: row?.mode ?? DEFAULT_MODE,
      window,
      effective_window: await this.effectiveWindow(entity.candidacy_id ?? null, window),
      updated_at: row ? asIsoTimestamp(row.updated_at) : null,
      updated_by: row?.updated_by ?? null,
    };
  }

  /**
   * Replaces the entity's settings in `transaction` and returns the stored row before (undefined: none).
   * The caller records the change in the entity's history in the same transaction.
   */
  async set(entityId: number, settings: { mode: ComplianceMode; window: TypedWindow | null }, actorId: number, transaction: Transaction): Promise<ComplianceRow | undefined> {
    const before = ((await this.models.Compliance.findByPk(entityId, { raw: true, transaction })) as ComplianceRow | null) ?? undefined;
    await this.models.Compliance.upsert(
      {
        entity_id: entityId,
        mode: settings.mode,
        window_starts_on: settings.window?.starts_on ?? null,
        window_ends_on: settings.window?.ends_on ?? null,
        updated_by: actorId,
        updated_at: new Date(),
      },
      { transaction },
    );
    return before;
  }

  /** The window the rule judges by: the linked election's, else the typed one, else none. */
  async effectiveWindow(candidacyId: number | null, typed: TypedWindow | null): Promise<EffectiveWindow | null> {
    const fromElection = candidacyId === null ? undefined : await this.electionWindow(candidacyId);
    if (fromElection) return fromElection;
    return typed ? { starts_on: typed.starts_on, ends_on: typed.ends_on, source: 'typed', election: null } : null;
  }

  /** 16 August of the candidacy's election year to the eve of its vote (of the second round for a candidate in it). */
  private async electionWindow(candidacyId: number): Promise<EffectiveWindow | undefined> {
    if (!Number.isSafeInteger(candidacyId) || candidacyId > 2147483647) return undefined;
    const candidacy = await readerOf(this.sequelize).row<{ cd_eleicao: unknown; cd_sit_tot_turno: unknown }>(
      'SELECT cd_eleicao, cd_sit_tot_turno FROM tse_candidacies WHERE id = ?',
      [candidacyId],
    );
    if (!candidacy) return undefined;
    const view = await courtReferenceOf(this.sequelize).current();
    const election = view.electionByCode.get(Number(candidacy.cd_eleicao));
    if (!election) return undefined;
    const result = candidacy.cd_sit_tot_turno === null ? undefined : view.codes.get('sit_tot_turno')?.get(Number(candidacy.cd_sit_tot_turno));
    const vote = election.nr_turno === 1 && runsSecondRound(result) ? secondRoundOf(election, view.elections) : voteOf(election);
    return { starts_on: `${election.ano}-${PROPAGANDA_STARTS}`, ends_on: addDays(vote.dt_eleicao, -1), source: 'election', election: vote };
  }

  /** The rules a campaign breaks under its entity's mode (none under `off`, or without an entity). */
  async judge(campaign: CampaignToJudge): Promise<Judgement> {
    if (campaign.entityId === null) return { mode: 'off', warnings: [] };
    const row = await this.stored(campaign.entityId);
    const mode = row?.mode ?? DEFAULT_MODE;
    if (mode === 'off') return { mode, warnings: [] };
    const warnings = [
      ...(await this.consentWarnings(campaign.entityId, campaign.numbers, campaign.consented)),
      ...(campaign.footer === null ? [footerWarning(campaign.credentialId)] : []),
      ...(await this.windowWarnings(campaign.entityId, typedWindowOf(row))),
    ];
    return { mode, warnings };
  }

  private async consentWarnings(entityId: number, numbers: readonly string[], known?: ReadonlySet<string>): Promise<ComplianceWarning[]> {
    const consented = known ?? (await this.consentedAmong(entityId, numbers));
    const missing = numbers.filter((number) => !consented.has(number));
    if (missing.length === 0) return [];
    const examples = missing.slice(0, EXAMPLES_SHOWN).map(maskPhone);
    const have = missing.length === 1 ? 'has' : 'have';
    const contacts = missing.length === 1 ? 'a contact' : 'contacts';
    return [
      {
        rule: 'consent_missing',
        message: `${missing.length} of ${numbers.length} numbers ${have} no consent on record as ${contacts} of entity ${entityId}: ${examples.join(', ')}${missing.length > EXAMPLES_SHOWN ? ', ...' : ''}`,
        numbers: missing.length,
        examples,
      },
    ];
  }

  /** The numbers among `numbers` that are contacts of the entity with a consent source. */
  private async consentedAmong(entityId: number, numbers: readonly string[]): Promise<Set<string>> {
    if (numbers.length === 0) return new Set();
    const rows = (await this.models.Contact.findAll({
      attributes: ['phone'],
      where: { entity_id: entityId, phone: { [Op.in]: [...numbers] }, consent_source: { [Op.ne]: null } },
      raw: true,
    })) as unknown as Array<Pick<ContactRow, 'phone'>>;
    return new Set(rows.map((row) => row.phone));
  }

  private async windowWarnings(entityId: number, typed: TypedWindow | null): Promise<ComplianceWarning[]> {
    const entity = await readerOf(this.sequelize).row<{ candidacy_id: unknown }>('SELECT candidacy_id FROM entities WHERE id = ?', [entityId]);
    const candidacyId = entity?.candidacy_id === null || entity?.candidacy_id === undefined ? null : Number(entity.candidacy_id);
    const window = await this.effectiveWindow(candidacyId, typed);
    const day = this.today();
    if (!window || (day >= window.starts_on && day <= window.ends_on)) return [];
    const basis = window.election ? `the eve of the vote of ${window.election.dt_eleicao}` : 'the window typed for it';
    return [
      {
        rule: 'outside_campaign_window',
        message: `today, ${day} in Brasília, is outside the propaganda window of entity ${entityId}, ${window.starts_on} to ${window.ends_on} (${basis})`,
        day,
        window,
      },
    ];
  }
}

function footerWarning(credentialId: number): ComplianceWarning {
  return {
    rule: 'footer_missing',
    message: `credential ${credentialId} has no footer identifying the sender and offering a way out (updateSmsCredential sets one)`,
  };
}

/**
 * The 422 details of a campaign refused under `enforce`: each warning as a detail naming the field that
 * brought it (`audienceField`, the list or the contacts, for consent; the credential for the others).
 */
export function refusalDetails(warnings: readonly ComplianceWarning[], audienceField: string, credentialId: number): ErrorDetail[] {
  return warnings.map((warning) => ({
    location: 'body',
    field: warning.rule === 'consent_missing' ? audienceField : 'credencial',
    rule: warning.rule,
    message: warning.message,
    value: warning.rule === 'consent_missing' ? warning.numbers : warning.rule === 'outside_campaign_window' ? warning.day : credentialId,
  }));
}

/** The warnings a campaign was accepted with, from its `compliance` column; undefined when it was not judged under `warn`. */
export function storedWarnings(compliance: string | null): ComplianceWarning[] | undefined {
  if (compliance === null) return undefined;
  const judged = JSON.parse(compliance) as Partial<Judgement>;
  return judged.mode === 'warn' ? (judged.warnings ?? []) : undefined;
}

/** A campaign's `warnings` field from its stored judgement: present under `warn` (empty when none), absent otherwise. */
export function warningsOf(compliance: string | null): { warnings?: ComplianceWarning[] } {
  const warnings = storedWarnings(compliance);
  return warnings === undefined ? {} : { warnings };
}

function voteOf(election: Election): NonNullable<EffectiveWindow['election']> {
  return { cd_eleicao: election.cd_eleicao, ano: election.ano, nr_turno: election.nr_turno === 2 ? 2 : 1, ds_eleicao: election.ds_eleicao, dt_eleicao: election.dt_eleicao };
}

/** The same year's second round of the same kind of election; the Constitution's day when the court's data lacks it. */
function secondRoundOf(first: Election, elections: readonly Election[]): NonNullable<EffectiveWindow['election']> {
  const second = elections.find(
    (election) => election.ano === first.ano && election.nr_turno === 2 && election.cd_tipo_eleicao === first.cd_tipo_eleicao && election.tp_abrangencia === first.tp_abrangencia,
  );
  if (second) return voteOf(second);
  return { cd_eleicao: null, ano: first.ano, nr_turno: 2, ds_eleicao: null, dt_eleicao: lastSundayOfOctober(first.ano) };
}

/** The window typed for the entity, from its stored settings. */
function typedWindowOf(row: ComplianceRow | undefined): TypedWindow | null {
  return row?.window_starts_on && row.window_ends_on ? { starts_on: dateOnly(row.window_starts_on), ends_on: dateOnly(row.window_ends_on) } : null;
}

/** YYYY-MM-DD, from a DATEONLY as either database gives it. */
export function dateOnly(value: unknown): string {
  return value instanceof Date ? value.toISOString().slice(0, 10) : String(value).slice(0, 10);
}
