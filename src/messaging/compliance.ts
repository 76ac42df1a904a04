/**
 * The electoral rules an SMS campaign is judged by (issue 23): Brazilian electoral law lets a campaign
 * message only people who gave their number voluntarily, requires every message to identify its sender
 * and offer a way out, and allows propaganda only from 16 August of the election year until the eve of
 * the vote (of the second round, for a candidate in it).
 *
 * What holds:
 * - Each entity has a mode (`sms_compliance`, migration 0027): `enforce` refuses a campaign that breaks
 *   a rule, `warn` lets it go and lists the rules it breaks, `off` lets it go too, judged all the same
 *   and its warnings recorded (issue 42). The safe path is the default: an entity without a row is in
 *   `enforce` (migration 0033 gave every entity that existed before it an explicit `warn` row, so
 *   nothing changed for them). Relaxing a mode (`relaxes`) is a platform admin's decision, audited
 *   (compliance-handlers.ts). A credential without an entity (platform admins only) is not judged.
 * - A campaign declared non-electoral (it asks for no vote: Lei 9.504/1997 art. 36-A) is not judged by
 *   the window rule; consent and the footer (the way out) still apply, and the declaration is kept with
 *   the campaign.
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
 * - The text of every message is its campaign's body and, after a line break, its footer (`messageText`, models.ts):
 *   what is counted in segments is what the send job hands to the provider.
 * Not judged: a supplementary election's own calendar (its window is the ordinary one's rule).
 */
import { Op, type Sequelize, type Transaction } from 'sequelize';
import { REFUSED_CONSENT_KINDS } from '@palanque/rules/consent-sources';
import type { components } from '../../sdk/schema.js';
import { addDays, brasiliaDay } from '../brasilia-time.js';
import { asIsoTimestamp, readerOf } from '../db/reader.js';
import { electionOverWarning, outsideWindowWarning, propagandaSpans, spansWithin, type PropagandaSpan } from '@palanque/rules/election-calendar';
import { electionCalendarOf, type EntityContest } from '../elections/calendar.js';
import type { ErrorDetail } from '../http/errors.js';
import type { ComplianceMode, ComplianceRow, ContactRow, SmsModels } from './models.js';
import { OPT_OUT_KEYWORDS, optOutKeywordOf } from './opt-outs.js';
import { maskPhone } from '@palanque/rules/phones';

export type SmsComplianceSettings = components['schemas']['SmsCompliance'];
export type ComplianceWarning = components['schemas']['SmsComplianceWarning'];
export type EffectiveWindow = components['schemas']['SmsEffectiveWindow'];
type TypedWindow = components['schemas']['SmsPropagandaWindow'];

/** The mode of an entity whose compliance was never set. */
export const DEFAULT_MODE: ComplianceMode = 'enforce';
/** The modes from the least to the most strict: a change to an earlier one relaxes the rules. */
const STRICTNESS: readonly ComplianceMode[] = ['off', 'warn', 'enforce'];

/** Whether changing from `before` to `after` relaxes the rules (`enforce` to `warn` or `off`, `warn` to `off`). */
export function relaxes(before: ComplianceMode, after: ComplianceMode): boolean {
  return STRICTNESS.indexOf(after) < STRICTNESS.indexOf(before);
}
/** The longest footer (the contract's `maxLength`): one GSM-7 segment at most. */
export const MAX_FOOTER_LENGTH = 160;
/** How many numbers without consent a warning names (masked). */
const EXAMPLES_SHOWN = 5;

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
  /** Declared non-electoral (Lei 9.504/1997 art. 36-A: no request for votes): the window rule does not judge it. */
  nonElectoral?: boolean;
}

// --- Texts and footers ----------------------------------------------------------------------------

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
      effective_window: await this.effectiveWindow(entity.id, window),
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

  /**
   * The window the rule judges by (issue 42): the legal spans of the election that judges the entity
   * (src/elections/calendar.ts `contestOf`; the second round's span for a run-off candidate), narrowed to
   * the typed window when one is set; without an election, the typed window narrowed to the spans of
   * every election of the calendar (no voting day is ever open); null when neither gives one.
   */
  async effectiveWindow(entityId: number, typed: TypedWindow | null): Promise<EffectiveWindow | null> {
    const contest = await this.contestOf(entityId);
    if (!contest && !typed) return null;
    const legal = contest ? propagandaSpans(contest.election, contest.runOff) : await this.everySpan();
    const spans = typed ? spansWithin(legal, typed) : legal;
    const outer = spans.length > 0 ? spans : legal.length > 0 && !typed ? legal : [];
    const starts_on = outer[0]?.starts_on ?? typed!.starts_on;
    const ends_on = outer[outer.length - 1]?.ends_on ?? typed!.ends_on;
    const election = contest ? await this.voteOf(contest, spans.length > 0 ? spans[spans.length - 1]!.round : 1) : null;
    return {
      starts_on,
      ends_on,
      spans: spans.map(({ starts_on: from, ends_on: to, round }) => ({ starts_on: from, ends_on: to, round })),
      source: typed ? 'typed' : 'election',
      election,
      calendar_election_id: contest?.election.id ?? null,
    };
  }

  /** The legal spans a typed window must lie inside (the entity's election's, else every election's), and the contest. */
  async legalSpans(entityId: number): Promise<{ spans: PropagandaSpan[]; contest: EntityContest | undefined }> {
    const contest = await this.contestOf(entityId);
    return { spans: contest ? propagandaSpans(contest.election, contest.runOff) : await this.everySpan(), contest };
  }

  /** The entity's contest: the election that judges it, and whether it runs in the second round. */
  async contestOf(entityId: number): Promise<EntityContest | undefined> {
    const entity = await readerOf(this.sequelize).row<{ candidacy_id: unknown; disputa_eleitoral: unknown; position: unknown; ballot: unknown }>(
      'SELECT candidacy_id, disputa_eleitoral, position, ballot FROM entities WHERE id = ?',
      [entityId],
    );
    if (!entity) return undefined;
    const number = (value: unknown) => (value === null || value === undefined ? null : Number(value));
    const text = (value: unknown) => (value === null || value === undefined ? null : String(value));
    return electionCalendarOf(this.sequelize).contestOf(
      { candidacy_id: number(entity.candidacy_id), disputa_eleitoral: number(entity.disputa_eleitoral), position: text(entity.position), ballot: text(entity.ballot) },
      this.today(),
    );
  }

  /** Every span of every election of the calendar (second rounds included). */
  private async everySpan(): Promise<PropagandaSpan[]> {
    const lines = await electionCalendarOf(this.sequelize).elections();
    return lines.flatMap((line) => propagandaSpans(line, true));
  }

  /** The vote whose eve ends the window: the court's election of that day when loaded, else the calendar's. */
  private async voteOf(contest: EntityContest, round: 1 | 2): Promise<NonNullable<EffectiveWindow['election']>> {
    const line = contest.election;
    const day = round === 2 && line.second_round_on ? line.second_round_on : line.first_round_on;
    const court = await readerOf(this.sequelize).row<{ cd_eleicao: unknown; ds_eleicao: unknown }>(
      `SELECT cd_eleicao, ds_eleicao FROM tse_elections WHERE dt_eleicao = ? AND ${line.scope === 'municipal' ? "tp_abrangencia = 'MUNICIPAL'" : "tp_abrangencia <> 'MUNICIPAL'"} ORDER BY cd_eleicao`,
      [day],
    );
    return {
      cd_eleicao: court ? Number(court.cd_eleicao) : null,
      ano: line.year,
      nr_turno: round,
      ds_eleicao: court ? String(court.ds_eleicao) : null,
      dt_eleicao: day,
    };
  }

  /** The rules a campaign breaks, under its entity's mode (judged under `off` too, never refused there; none without an entity). */
  async judge(campaign: CampaignToJudge): Promise<Judgement> {
    if (campaign.entityId === null) return { mode: 'off', warnings: [] };
    const row = await this.stored(campaign.entityId);
    const mode = row?.mode ?? DEFAULT_MODE;
    const warnings = [
      ...(await this.consentWarnings(campaign.entityId, campaign.numbers, campaign.consented)),
      ...(campaign.footer === null ? [footerWarning(campaign.credentialId)] : []),
      ...(await this.windowWarnings(campaign.entityId, typedWindowOf(row), campaign.nonElectoral === true)),
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

  /** The numbers among `numbers` that are contacts of the entity with a consent source whose kind is not refused (issue 42; migration 0036). */
  private async consentedAmong(entityId: number, numbers: readonly string[]): Promise<Set<string>> {
    if (numbers.length === 0) return new Set();
    const rows = (await this.models.Contact.findAll({
      attributes: ['phone'],
      where: { entity_id: entityId, phone: { [Op.in]: [...numbers] }, consent_source: { [Op.ne]: null }, ...CONSENT_NOT_REFUSED },
      raw: true,
    })) as unknown as Array<Pick<ContactRow, 'phone'>>;
    return new Set(rows.map((row) => row.phone));
  }

  private async windowWarnings(entityId: number, typed: TypedWindow | null, nonElectoral: boolean): Promise<ComplianceWarning[]> {
    const day = this.today();
    const warnings: ComplianceWarning[] = [];
    if (!nonElectoral) {
      const window = await this.effectiveWindow(entityId, typed);
      const outside = window && outsideWindowWarning(entityId, day, window);
      if (outside) warnings.push(outside);
    }
    // A send for an entity whose election is over is refused under enforce, electoral or not (issue 42, section 2).
    const contest = await this.contestOf(entityId);
    const over = contest && electionOverWarning(entityId, contest, day);
    if (over) warnings.push(over);
    return warnings;
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
    // The label of declared synthetic content is the message's (issue 42, packages/rules/src/synthetic-content.ts).
    field: warning.rule === 'consent_missing' ? audienceField : warning.rule === 'synthetic_content_label' ? 'mensagem.mensagem' : 'credencial',
    rule: warning.rule,
    message: warning.message,
    value: warning.rule === 'consent_missing' ? warning.numbers : warning.rule === 'outside_campaign_window' ? warning.day : warning.rule === 'election_over' ? warning.last_vote_on : warning.rule === 'synthetic_content_label' ? warning.technology : credentialId,
  }));
}

/** The warnings a campaign was accepted with, from its `compliance` column; undefined when it was accepted under `enforce` or not judged. */
export function storedWarnings(compliance: string | null): ComplianceWarning[] | undefined {
  if (compliance === null) return undefined;
  const judged = JSON.parse(compliance) as Partial<Judgement>;
  return judged.mode === 'warn' || judged.mode === 'off' ? (judged.warnings ?? []) : undefined;
}

/** A campaign's `warnings` field from its stored judgement: present under `warn` and `off` (empty when none), absent otherwise. */
export function warningsOf(compliance: string | null): { warnings?: ComplianceWarning[] } {
  const warnings = storedWarnings(compliance);
  return warnings === undefined ? {} : { warnings };
}

/** The window typed for the entity, from its stored settings. */
function typedWindowOf(row: ComplianceRow | undefined): TypedWindow | null {
  return row?.window_starts_on && row.window_ends_on ? { starts_on: dateOnly(row.window_starts_on), ends_on: dateOnly(row.window_ends_on) } : null;
}

/** YYYY-MM-DD, from a DATEONLY as either database gives it. */
export function dateOnly(value: unknown): string {
  return value instanceof Date ? value.toISOString().slice(0, 10) : String(value).slice(0, 10);
}

/**
 * A stored consent of a refused kind (a bought or third-party list, marked so by migration 0036) is no
 * consent: Lei 9.504/1997 art. 57-B III and art. 57-E §1º (packages/rules/src/consent-sources.ts).
 */
const CONSENT_NOT_REFUSED = { [Op.or]: [{ consent_kind: null }, { consent_kind: { [Op.notIn]: [...REFUSED_CONSENT_KINDS] } }] };
