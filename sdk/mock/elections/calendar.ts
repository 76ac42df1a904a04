/**
 * The stateful mock's election calendar (src/elections/calendar.ts): the seeded lines (SEEDED_CALENDAR,
 * as migration 0032 wrote them), the election that judges an entity, its propaganda window as spans and
 * the `election_over` rule, drawn by the same pure rules as the server (packages/rules/src/election-calendar.ts).
 * Each mock state has its own calendar, seeded on first use.
 */
import type { components } from '../../schema.js';
import { candidacyIn, type CourtSeed } from './court.js';
import {
  electionOverWarning,
  inaugurationDay,
  outsideWindowWarning,
  MUNICIPAL_OFFICES,
  lineForCourtElection,
  nextLineOfScope,
  officeCodeOf,
  propagandaSpans,
  RUN_OFF_OFFICES,
  runsSecondRound,
  scopeOfCargo,
  SEEDED_CALENDAR,
  spanHolding,
  spansWithin,
  type CalendarSources,
  type PropagandaSpan,
} from '@palanque/rules/election-calendar';

type EffectiveWindow = components['schemas']['SmsEffectiveWindow'];
type ComplianceWarning = components['schemas']['SmsComplianceWarning'];
type ErrorDetail = components['schemas']['ErrorDetail'];

/** A calendar line as the mock keeps it: the contract's line without the inauguration days it derives. */
export type MockCalendarLine = Omit<components['schemas']['ElectionCalendarLine'], 'inaugurations'>;

/** What the rules read of an entity. */
export interface EntityHints {
  candidacy_id?: unknown;
  disputa_eleitoral?: unknown;
  position?: unknown;
  ballot?: unknown;
}

export interface MockContest {
  election: MockCalendarLine;
  runOff: boolean;
  source: string;
}

const calendars = new WeakMap<object, MockCalendarLine[]>();

/** The calendar of a mock state, seeded on first use. */
export function mockCalendarOf(state: object): MockCalendarLine[] {
  let lines = calendars.get(state);
  if (!lines) {
    const at = new Date().toISOString();
    lines = SEEDED_CALENDAR.map((line, index) => ({ ...line, id: index + 1, sources: { ...line.sources }, updated_at: at, updated_by: null }));
    calendars.set(state, lines);
  }
  return lines;
}

type CourtElection = { cd_eleicao: number; ano: number; nr_turno: number; tp_abrangencia: string; cd_tipo_eleicao?: number; ds_eleicao?: string; dt_eleicao?: string };

function lineOfCode(court: CourtSeed, lines: readonly MockCalendarLine[], code: unknown): MockCalendarLine | undefined {
  const election = (court.elections as CourtElection[]).find((row) => row.cd_eleicao === code);
  if (!election?.dt_eleicao) return undefined;
  return lineForCourtElection(lines, { ano: election.ano, cd_tipo_eleicao: election.cd_tipo_eleicao ?? 2, dt_eleicao: election.dt_eleicao, tp_abrangencia: election.tp_abrangencia });
}

/** The election that judges an entity and whether it runs in the second round (calendar.ts contestOf). */
export function mockContestOf(court: CourtSeed, lines: readonly MockCalendarLine[], entity: EntityHints, today: string): MockContest | undefined {
  const candidacy = candidacyIn(court, entity.candidacy_id) as (ReturnType<typeof candidacyIn> & { cd_eleicao: number; cd_cargo: number; cd_sit_tot_turno?: number | null }) | undefined;
  const cdCargo = candidacy?.cd_cargo ?? officeCodeOf(typeof entity.position === 'string' ? entity.position : null);
  let found: { election: MockCalendarLine; source: string; fromCandidacy: boolean } | undefined;
  const byCandidacy = candidacy && lineOfCode(court, lines, candidacy.cd_eleicao);
  if (candidacy && byCandidacy) found = { election: byCandidacy, source: `candidacy ${candidacy.id}`, fromCandidacy: true };
  const byDisputa = !found && typeof entity.disputa_eleitoral === 'number' ? lineOfCode(court, lines, entity.disputa_eleitoral) : undefined;
  if (byDisputa) found = { election: byDisputa, source: `disputa_eleitoral ${String(entity.disputa_eleitoral)}`, fromCandidacy: false };
  const byOffice = !found && cdCargo !== undefined ? nextLineOfScope(lines, scopeOfCargo(cdCargo), today) : undefined;
  if (byOffice) found = { election: byOffice, source: `office ${cdCargo}`, fromCandidacy: false };
  if (!found) return undefined;
  let runsOff = entity.ballot === 'segundo_turno';
  if (found.fromCandidacy && candidacy) {
    const round = (court.elections as CourtElection[]).find((row) => row.cd_eleicao === candidacy.cd_eleicao)?.nr_turno;
    const result = court.codes.find((code) => code.code_table === 'sit_tot_turno' && code.code === candidacy.cd_sit_tot_turno)?.label;
    runsOff = round === 2 || runsSecondRound(result);
  }
  const runOff = runsOff && cdCargo !== undefined && RUN_OFF_OFFICES.has(cdCargo) && found.election.second_round_on !== null;
  return { election: found.election, runOff, source: found.source };
}

/** The legal spans of the contest, else of every line. */
function legalSpans(lines: readonly MockCalendarLine[], contest: MockContest | undefined): PropagandaSpan[] {
  return contest ? propagandaSpans(contest.election, contest.runOff) : lines.flatMap((line) => propagandaSpans(line, true));
}

/** The effective window (compliance.ts effectiveWindow). */
export function mockEffectiveWindow(court: CourtSeed, lines: readonly MockCalendarLine[], entity: EntityHints, typed: { starts_on: string; ends_on: string } | null, today: string): EffectiveWindow | null {
  const contest = mockContestOf(court, lines, entity, today);
  if (!contest && !typed) return null;
  const legal = legalSpans(lines, contest);
  const spans = typed ? spansWithin(legal, typed) : legal;
  const starts_on = spans[0]?.starts_on ?? typed!.starts_on;
  const ends_on = spans[spans.length - 1]?.ends_on ?? typed!.ends_on;
  let election: EffectiveWindow['election'] = null;
  if (contest) {
    const round: 1 | 2 = spans.length > 0 ? spans[spans.length - 1]!.round : 1;
    const day = round === 2 && contest.election.second_round_on ? contest.election.second_round_on : contest.election.first_round_on;
    const municipal = contest.election.scope === 'municipal';
    const courtElection = (court.elections as CourtElection[])
      .filter((row) => row.dt_eleicao === day && (row.tp_abrangencia.toUpperCase() === 'MUNICIPAL') === municipal)
      .sort((a, b) => a.cd_eleicao - b.cd_eleicao)[0];
    election = { cd_eleicao: courtElection?.cd_eleicao ?? null, ano: contest.election.year, nr_turno: round, ds_eleicao: courtElection?.ds_eleicao ?? null, dt_eleicao: day };
  }
  return { starts_on, ends_on, spans: spans.map(({ starts_on: from, ends_on: to, round }) => ({ starts_on: from, ends_on: to, round })), source: typed ? 'typed' : 'election', election, calendar_election_id: contest?.election.id ?? null };
}

/** The window and election-over warnings (compliance.ts windowWarnings). */
export function mockWindowWarnings(court: CourtSeed, lines: readonly MockCalendarLine[], entityId: number, entity: EntityHints, typed: { starts_on: string; ends_on: string } | null, day: string, nonElectoral: boolean): ComplianceWarning[] {
  const warnings: ComplianceWarning[] = [];
  if (!nonElectoral) {
    const window = mockEffectiveWindow(court, lines, entity, typed, day);
    const outside = window && outsideWindowWarning(entityId, day, window);
    if (outside) warnings.push(outside);
  }
  const contest = mockContestOf(court, lines, entity, day);
  const over = contest && electionOverWarning(entityId, contest, day);
  if (over) warnings.push(over);
  return warnings;
}

/** The 422 detail of a typed window outside every legal span (compliance-handlers.ts checkLegalWindow). */
export function mockLegalWindowProblem(court: CourtSeed, lines: readonly MockCalendarLine[], entityId: number, entity: EntityHints, window: { starts_on: string; ends_on: string }, today: string): ErrorDetail | undefined {
  const contest = mockContestOf(court, lines, entity, today);
  const spans = legalSpans(lines, contest);
  if (spanHolding(spans, window)) return undefined;
  const of = contest ? `the election of entity ${entityId} (${contest.election.title}, by its ${contest.source})` : 'any election of the calendar (entity ' + entityId + ' has none of its own)';
  const listed = spans.length === 0 ? 'none is open' : spans.map((span) => `${span.starts_on} to ${span.ends_on}`).join(', or ');
  return {
    location: 'body',
    field: 'window',
    rule: 'outside_legal_window',
    message: `must lie inside one legal propaganda span of ${of}: ${listed} (Lei 9.504/1997 arts. 36 and 39 §5º: no voting day is open)`,
    value: `${window.starts_on}..${window.ends_on}`,
  };
}

/** The inauguration day of each office a line fills, by court office code (calendar-handlers.ts viewOf). */
export function inaugurationsOf(line: MockCalendarLine): Record<string, string> {
  const offices = line.scope === 'municipal' ? [...MUNICIPAL_OFFICES] : [1, 2, 3, 4, 5, 6, 7, 8];
  const days: Record<string, string> = {};
  for (const office of offices) {
    const day = inaugurationDay(line, office);
    if (day) days[String(office)] = day;
  }
  return days;
}
