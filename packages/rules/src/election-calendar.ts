/**
 * The election calendar's pure rules, shared by the server (src/elections/calendar.ts,
 * src/messaging/compliance.ts) and the stateful msw mock, so both draw the same propaganda spans and the
 * same inauguration days from the same calendar lines (issue 42, section 1).
 *
 * What holds:
 * - A propaganda window is a set of spans of Brasília days, none of which holds a voting day: from the
 *   propaganda start (Lei 9.504/1997 art. 36: after 15 August) to the eve of the first round, and, for a
 *   candidate in the second round, from the day after the first round to the eve of the second. New
 *   propaganda on a voting day is a crime (Lei 9.504/1997 art. 39 §5º).
 * - A second round exists only for President, governors and mayors (of municipalities with more than
 *   200,000 voters): CF arts. 77, 28 and 29 II. Their vices run on the same ticket.
 * - Inauguration (posse) by office: mayors, vice-mayors and councillors 1 January (CF art. 29 III);
 *   President and vice 5 January and governors and vices 6 January from 2027 (CF arts. 82 and 28, as
 *   amended by EC 111/2021), 1 January before; senators and deputies 1 February (CF art. 57 §4º; state
 *   and district assemblies follow it). A supplementary election's winners take office when the court
 *   certifies them, for the rest of the term: no fixed day here (undefined).
 * - SEEDED_CALENDAR is what migration 0032 wrote: the 2024 and 2028 municipal and 2026 general
 *   elections. Later changes go through the admin operations (audited), never by editing this list.
 */

/** The days of one calendar line that the rules read (Brasília days, YYYY-MM-DD). */
export interface CalendarDays {
  year: number;
  scope: 'municipal' | 'general';
  supplementary: boolean;
  propaganda_starts_on: string;
  first_round_on: string;
  second_round_on: string | null;
}

/** One span of days propaganda may go out on, both ends included. */
export interface PropagandaSpan {
  starts_on: string;
  ends_on: string;
  /** The round whose eve the span ends on. */
  round: 1 | 2;
}

/** Court office codes (CD_CARGO) with a second round: president, vice, governor, vice, mayor, vice (CF arts. 77, 28, 29 II). */
export const RUN_OFF_OFFICES: ReadonlySet<number> = new Set([1, 2, 3, 4, 11, 12]);
/** Court office codes disputed in municipal elections: mayor, vice-mayor, councillor. */
export const MUNICIPAL_OFFICES: ReadonlySet<number> = new Set([11, 12, 13]);

/** `day` moved by `days` calendar days. */
export function shiftDay(day: string, days: number): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

/**
 * The spans propaganda may go out on in `election`: to the eve of the first round, and for a run-off
 * candidate (`runOff`, and the election has a second round) from the day after the first round to the
 * eve of the second. A span that would be empty is left out.
 */
export function propagandaSpans(election: CalendarDays, runOff: boolean): PropagandaSpan[] {
  const spans: PropagandaSpan[] = [{ starts_on: election.propaganda_starts_on, ends_on: shiftDay(election.first_round_on, -1), round: 1 }];
  if (runOff && election.second_round_on) {
    spans.push({ starts_on: shiftDay(election.first_round_on, 1), ends_on: shiftDay(election.second_round_on, -1), round: 2 });
  }
  return spans.filter((span) => span.starts_on <= span.ends_on);
}

/** The spans clipped to `typed` (both ends included); empty ones left out. */
export function spansWithin(spans: readonly PropagandaSpan[], typed: { starts_on: string; ends_on: string }): PropagandaSpan[] {
  return spans
    .map((span) => ({ ...span, starts_on: span.starts_on > typed.starts_on ? span.starts_on : typed.starts_on, ends_on: span.ends_on < typed.ends_on ? span.ends_on : typed.ends_on }))
    .filter((span) => span.starts_on <= span.ends_on);
}

/** The span `typed` lies wholly inside, if any. */
export function spanHolding(spans: readonly PropagandaSpan[], typed: { starts_on: string; ends_on: string }): PropagandaSpan | undefined {
  return spans.find((span) => span.starts_on <= typed.starts_on && typed.ends_on <= span.ends_on);
}

/** The election's last voting day for a candidate (`runOff`: in the second round): after it, the election is over. */
export function lastVoteOf(election: CalendarDays, runOff: boolean): string {
  return runOff && election.second_round_on ? election.second_round_on : election.first_round_on;
}

/** The day the winners of `cdCargo` take office after `election` (see the opening comment); undefined when no fixed day applies. */
export function inaugurationDay(election: Pick<CalendarDays, 'year' | 'supplementary'>, cdCargo: number): string | undefined {
  if (election.supplementary) return undefined;
  const next = election.year + 1;
  if (MUNICIPAL_OFFICES.has(cdCargo)) return `${next}-01-01`; // CF art. 29 III
  if (cdCargo === 1 || cdCargo === 2) return next >= 2027 ? `${next}-01-05` : `${next}-01-01`; // CF art. 82 (EC 111/2021)
  if (cdCargo === 3 || cdCargo === 4) return next >= 2027 ? `${next}-01-06` : `${next}-01-01`; // CF art. 28 (EC 111/2021)
  if (cdCargo >= 5 && cdCargo <= 8) return `${next}-02-01`; // CF art. 57 §4º
  return undefined;
}

/** The legal source of each date of a calendar line, by field. */
export type CalendarSources = Record<'registration_deadline' | 'propaganda_starts_on' | 'first_round_on' | 'second_round_on' | 'certification_on', string>;

/** A calendar line as seeded. */
export interface SeededElection extends CalendarDays {
  title: string;
  uf: null;
  municipality_ibge: null;
  registration_deadline: string;
  certification_on: string;
  sources: CalendarSources;
}

const REGISTRATION = 'Lei 9.504/1997 art. 11 (registration requested until 19h of 15 August of the election year)';
const PROPAGANDA = 'Lei 9.504/1997 art. 36 (propaganda allowed after 15 August of the election year)';
const MUNICIPAL_ROUNDS = {
  first_round_on: 'CF art. 29 II (first Sunday of October)',
  second_round_on: 'CF arts. 29 II and 77 (last Sunday of October; mayors of municipalities with more than 200,000 voters)',
};
const GENERAL_ROUNDS = {
  first_round_on: 'CF arts. 77 and 28 (first Sunday of October)',
  second_round_on: 'CF arts. 77 and 28 (last Sunday of October; President and governors)',
};

/** What migration 0032 seeded. */
export const SEEDED_CALENDAR: readonly SeededElection[] = [
  {
    title: 'Eleições Municipais 2024',
    year: 2024,
    scope: 'municipal',
    supplementary: false,
    uf: null,
    municipality_ibge: null,
    registration_deadline: '2024-08-15',
    propaganda_starts_on: '2024-08-16',
    first_round_on: '2024-10-06',
    second_round_on: '2024-10-27',
    certification_on: '2024-12-19',
    sources: { registration_deadline: REGISTRATION, propaganda_starts_on: PROPAGANDA, ...MUNICIPAL_ROUNDS, certification_on: "TSE's 2024 electoral calendar (Res.-TSE 23.738/2024): diplomação until 19 December 2024" },
  },
  {
    title: 'Eleições Gerais 2026',
    year: 2026,
    scope: 'general',
    supplementary: false,
    uf: null,
    municipality_ibge: null,
    registration_deadline: '2026-08-15',
    propaganda_starts_on: '2026-08-16',
    first_round_on: '2026-10-04',
    second_round_on: '2026-10-25',
    certification_on: '2026-12-19',
    sources: { registration_deadline: REGISTRATION, propaganda_starts_on: PROPAGANDA, ...GENERAL_ROUNDS, certification_on: "TSE's 2026 electoral calendar: diplomação until 19 December 2026" },
  },
  {
    title: 'Eleições Municipais 2028',
    year: 2028,
    scope: 'municipal',
    supplementary: false,
    uf: null,
    municipality_ibge: null,
    registration_deadline: '2028-08-15',
    propaganda_starts_on: '2028-08-16',
    first_round_on: '2028-10-01',
    second_round_on: '2028-10-29',
    certification_on: '2028-12-19',
    sources: {
      registration_deadline: REGISTRATION,
      propaganda_starts_on: PROPAGANDA,
      ...MUNICIPAL_ROUNDS,
      certification_on: "Not yet set by the court: 19 December, the court's usual last day (2022, 2024, 2026), until its 2028 calendar is published",
    },
  },
];

// --- Which line judges an entity (src/elections/calendar.ts reads the rows; both pick alike) -----------

/** The court office codes by the normalised name `position` may spell (feminine forms included). */
const OFFICE_CODES: ReadonlyMap<string, number> = new Map([
  ['presidente', 1], ['presidenta', 1], ['vice presidente', 2], ['vice presidenta', 2],
  ['governador', 3], ['governadora', 3], ['vice governador', 4], ['vice governadora', 4],
  ['senador', 5], ['senadora', 5], ['deputado federal', 6], ['deputada federal', 6],
  ['deputado estadual', 7], ['deputada estadual', 7], ['deputado distrital', 8], ['deputada distrital', 8],
  ['prefeito', 11], ['prefeita', 11], ['vice prefeito', 12], ['vice prefeita', 12],
  ['vereador', 13], ['vereadora', 13],
]);

/** The court office code `position` spells, if any ("Vice-Prefeita" -> 12): case, accents and punctuation aside. */
export function officeCodeOf(position: string | null | undefined): number | undefined {
  if (!position) return undefined;
  const key = position.normalize('NFD').replace(/\p{Diacritic}/gu, '').replace(/[^\p{L}\p{N}]+/gu, ' ').trim().toLowerCase();
  return OFFICE_CODES.get(key);
}

/** The calendar scope of an office: municipal for mayors, vice-mayors and councillors, general otherwise. */
export function scopeOfCargo(cdCargo: number): CalendarDays['scope'] {
  return MUNICIPAL_OFFICES.has(cdCargo) ? 'municipal' : 'general';
}

/** The court's label of a candidate who runs in the second round (`2º TURNO`). */
export function runsSecondRound(label: string | null | undefined): boolean {
  return typeof label === 'string' && /^2\s*[º°o]?\s*turno$/i.test(label.trim());
}

/** A court election as the rules read it (tse_elections). */
export interface CourtElectionDays {
  ano: number;
  cd_tipo_eleicao: number;
  dt_eleicao: string;
  tp_abrangencia: string;
}

/** The line of a court election: the one whose first or second round is its day, in its scope; else, for an ordinary one (CD_TIPO_ELEICAO 2), the ordinary line of its year and scope. */
export function lineForCourtElection<Line extends CalendarDays>(lines: readonly Line[], court: CourtElectionDays): Line | undefined {
  const scope: CalendarDays['scope'] = court.tp_abrangencia.toUpperCase() === 'MUNICIPAL' ? 'municipal' : 'general';
  const byDay = lines.find((line) => line.scope === scope && (line.first_round_on === court.dt_eleicao || line.second_round_on === court.dt_eleicao));
  if (byDay) return byDay;
  if (court.cd_tipo_eleicao !== 2) return undefined;
  return lines.find((line) => !line.supplementary && line.scope === scope && line.year === court.ano);
}

/** The next ordinary line of `scope` whose last voting day is `today` or later (lines ordered by first round). */
export function nextLineOfScope<Line extends CalendarDays>(lines: readonly Line[], scope: CalendarDays['scope'], today: string): Line | undefined {
  return [...lines].sort((a, b) => (a.first_round_on < b.first_round_on ? -1 : 1)).find((line) => !line.supplementary && line.scope === scope && (line.second_round_on ?? line.first_round_on) >= today);
}

/** What the warnings read of an entity's effective window (the contract's `SmsEffectiveWindow`, which they echo whole). */
export interface WindowFacts {
  spans: ReadonlyArray<{ starts_on: string; ends_on: string }>;
  source: 'election' | 'typed';
  election: { dt_eleicao: string } | null;
}

/** The warnings below, as the contract's `SmsComplianceWarning` gives them. */
export interface OutsideWindowWarning<Window extends WindowFacts> {
  rule: 'outside_campaign_window';
  message: string;
  day: string;
  window: Window;
}
export interface ElectionOverWarning {
  rule: 'election_over';
  message: string;
  day: string;
  last_vote_on: string;
  calendar_election_id: number;
}

/** An entity's contest as the warnings read it: its calendar line, whether it runs in the second round, and how it was known. */
export interface ContestDays {
  election: CalendarDays & { id: number; title: string };
  runOff: boolean;
  source: string;
}

/**
 * `outside_campaign_window` when `day` lies in none of the window's spans (no voting day ever does:
 * Lei 9.504/1997 art. 39 §5º); the server (compliance.ts) and the mock word it the same.
 */
export function outsideWindowWarning<Window extends WindowFacts>(entityId: number, day: string, window: Window): OutsideWindowWarning<Window> | undefined {
  if (window.spans.some((span) => day >= span.starts_on && day <= span.ends_on)) return undefined;
  const basis = window.source === 'typed' ? 'the window typed for it' : `the election ${window.election ? `voting on ${window.election.dt_eleicao}` : ''}`.trim();
  const open = window.spans.length === 0 ? 'no day' : window.spans.map((span) => `${span.starts_on} to ${span.ends_on}`).join(' and ');
  return {
    rule: 'outside_campaign_window',
    message: `today, ${day} in Brasília, is outside the propaganda window of entity ${entityId}: ${open} (${basis}; voting days are never open, Lei 9.504/1997 art. 39 §5º)`,
    day,
    window,
  };
}

/** `election_over` when `day` is after the contest's last vote for the entity. */
export function electionOverWarning(entityId: number, contest: ContestDays, day: string): ElectionOverWarning | undefined {
  const lastVote = lastVoteOf(contest.election, contest.runOff);
  if (day <= lastVote) return undefined;
  return {
    rule: 'election_over',
    message: `the election of entity ${entityId} (${contest.election.title}, by its ${contest.source}) is over: its last vote for it was on ${lastVote}`,
    day,
    last_vote_on: lastVote,
    calendar_election_id: contest.election.id,
  };
}
