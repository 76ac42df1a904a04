/**
 * Candidacies the electoral court would refuse (issue 42, section 6), on the server: finds what the pure
 * rules of packages/rules/src/candidacy-law.ts need (the office, the election and its dates, the federations running in
 * it) and asks them. The handlers apply them to candidates (`tp=candidato`) on create, on an update and on
 * create-from-candidacy alike.
 *
 * What holds:
 * - A rule judges a body that sends one of the fields it reads (packages/rules/src/candidacy-law.ts RULE_FIELDS), on the
 *   entity as it will be; a stored value is not judged again by an update that sends none of them.
 * - The office is the linked candidacy's (`candidacy_id`), else the one `position` spells, by the law's
 *   list of offices: the court's tables are not needed.
 * - The election is the calendar's (`electionFor`: the linked candidacy's, else `disputa_eleitoral`'s,
 *   else the next of the office's scope). Without one, the minimum age is not judged (there is no day to
 *   measure it on), and the coalition rules judge by today's law with the 2022 federations.
 * - The federations are those of the court's tables for the entity's court election when they name any,
 *   else the 2022 registrations (packages/rules/src/candidacy-law.ts FEDERATIONS_2022).
 */
import type { Sequelize } from 'sequelize';
import {
  checkCandidacyLaw,
  OFFICES_BY_LAW,
  officeOfPosition,
  sendsFieldOf,
  type ElectionFacts,
  type Federation,
  type LawOffice,
} from '@palanque/rules/candidacy-law';
import { brasiliaDay } from '../brasilia-time.js';
import { readerOf } from '../db/reader.js';
import { electionCalendarOf, inaugurationOn, type CalendarElection, type ElectionHints } from '../elections/calendar.js';
import { courtReferenceOf, scopeOfOffice } from '../elections/tse/reference.js';
import type { ErrorDetail } from '../http/errors.js';
import type { CandidateEntity } from './models.js';
import { linkedCandidacy, type LinkedCandidacy } from './electoral-rules.js';
import { withoutNulls } from './rules.js';

/** The election calendar as these rules read it (H1's ElectionCalendar; a stub in tests). */
export interface ElectionLookup {
  electionFor(hints: ElectionHints, today: string): Promise<Pick<CalendarElection, 'title' | 'year' | 'registration_deadline' | 'supplementary'> | undefined>;
  inaugurationOn(election: Pick<CalendarElection, 'year' | 'supplementary'>, cdCargo: number): string | undefined;
}

/** The calendar of this database. */
export function calendarLookupOf(sequelize: Sequelize): ElectionLookup {
  const calendar = electionCalendarOf(sequelize);
  return {
    electionFor: (hints, today) => calendar.electionFor(hints, today),
    inaugurationOn: (election, cdCargo) => inaugurationOn(election as CalendarElection, cdCargo),
  };
}

/** The fields whose rules need the office or the election (else nothing is read). */
const CONTEST_RULES = ['office_scope', 'proportional_coalition', 'minimum_age'] as const;

/**
 * The rules of packages/rules/src/candidacy-law.ts a candidate body breaks. `stored` is the entity an update applies to;
 * `elections` the calendar (this database's by default); `today` a Brasília day.
 */
export async function judgeCandidacyLaw(
  sequelize: Sequelize,
  body: CandidateEntity,
  { stored, today = brasiliaDay(), elections = calendarLookupOf(sequelize) }: { stored?: CandidateEntity; today?: string; elections?: ElectionLookup } = {},
): Promise<ErrorDetail[]> {
  const sent = withoutNulls(body);
  const after = withoutNulls({ ...(stored ?? { nome: body.nome }), ...body });
  if (!CONTEST_RULES.some((rule) => sendsFieldOf(sent, rule))) return checkCandidacyLaw({ sent, after });
  const linked = after.candidacy_id === undefined ? undefined : await linkedCandidacy(sequelize, after.candidacy_id);
  const { office, officeSource } = officeOf(after, linked);
  if (!office) return checkCandidacyLaw({ sent, after });
  const election = await electionFacts(sequelize, after, office, linked, today, elections);
  return checkCandidacyLaw({ sent, after, office, officeSource, election });
}

function officeOf(after: Partial<CandidateEntity>, linked: LinkedCandidacy | undefined): { office?: LawOffice; officeSource?: string } {
  if (linked) return { office: OFFICES_BY_LAW.get(linked.cd_cargo), officeSource: `candidacy ${linked.id}` };
  const office = officeOfPosition(after.position);
  return office ? { office, officeSource: `position ${after.position}` } : {};
}

/** The calendar's election (its title, year and the day the age is measured on) and the court's federations and party. */
async function electionFacts(
  sequelize: Sequelize,
  after: Partial<CandidateEntity>,
  office: LawOffice,
  linked: LinkedCandidacy | undefined,
  today: string,
  elections: ElectionLookup,
): Promise<ElectionFacts> {
  const calendar = await elections.electionFor({ candidacy_id: linked?.id, disputa_eleitoral: after.disputa_eleitoral, cd_cargo: office.cd_cargo }, today);
  const facts: ElectionFacts = {};
  if (calendar) {
    facts.title = calendar.title;
    facts.year = calendar.year;
    facts.ageMeasuredOn = office.ageMeasuredAt === 'registration_deadline' ? calendar.registration_deadline : elections.inaugurationOn(calendar, office.cd_cargo);
  }
  if ((after.partidosLegenda?.length ?? 0) > 1) Object.assign(facts, await courtParties(sequelize, after, office, linked, calendar?.year));
  return facts;
}

/**
 * The federations and the entity's party acronym in the court's tables: of the linked candidacy's
 * election, else of the latest loaded election of the office's scope in the calendar's year (any year
 * without one). Nothing when the tables name no federation for it.
 */
async function courtParties(sequelize: Sequelize, after: Partial<CandidateEntity>, office: LawOffice, linked: LinkedCandidacy | undefined, year: number | undefined): Promise<Pick<ElectionFacts, 'federations' | 'partyAcronym' | 'year'>> {
  const view = await courtReferenceOf(sequelize).current();
  const scope = scopeOfOffice(office.cd_cargo);
  const election = linked
    ? view.electionByCode.get(linked.cd_eleicao)
    : view.elections.find((candidate) => candidate.tp_abrangencia.toUpperCase() === scope && (year === undefined || candidate.ano === year));
  const parties = election && view.partiesByElection.get(election.cd_eleicao);
  if (!election || !parties) return {};
  const partyAcronym = after.partido === undefined ? undefined : parties.get(Number(after.partido))?.sg_partido;
  const members = new Map<number, string[]>();
  for (const party of parties.values()) if (party.nr_federacao !== null) members.set(party.nr_federacao, [...(members.get(party.nr_federacao) ?? []), party.sg_partido]);
  const facts: Pick<ElectionFacts, 'federations' | 'partyAcronym' | 'year'> = { ...(partyAcronym ? { partyAcronym } : {}), ...(linked && year === undefined ? { year: election.ano } : {}) };
  if (members.size === 0) return facts;
  const names = new Map(
    (await readerOf(sequelize).rows<{ nr_federacao: unknown; nm_federacao: unknown }>('SELECT nr_federacao, nm_federacao FROM tse_federations WHERE cd_eleicao = ?', [election.cd_eleicao])).map((row) => [
      Number(row.nr_federacao),
      String(row.nm_federacao),
    ]),
  );
  const federations: Federation[] = [...members].map(([number, acronyms]) => ({ name: names.get(number) ?? `federation ${number}`, parties: acronyms }));
  return { ...facts, federations };
}
