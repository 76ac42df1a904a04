/**
 * Candidacies the electoral court would refuse, in the stateful mock (src/entities/candidacy-law.ts on
 * the server): finds the office, the election and the federations from the mock's court data and the
 * seeded calendar, and asks the rules both share (candidacy-law.ts), so the mock refuses the bodies the
 * server refuses, with the same details.
 *
 * What holds, as on the server: the office is the linked candidacy's, else `position`'s by law; the
 * election is the calendar line of the linked candidacy's court election, else of `disputa_eleitoral`'s,
 * else the next of the office's scope (the seeded calendar: the mock has no calendar edits); without one
 * the minimum age is not judged. The federations are the court data's for the entity's court election
 * when it names any, else the 2022 registrations.
 */
import { checkCandidacyLaw, OFFICES_BY_LAW, officeOfPosition, sendsFieldOf, type ElectionFacts, type LawOffice } from '@palanque/rules/candidacy-law';
import { inaugurationDay, lastVoteOf, MUNICIPAL_OFFICES, SEEDED_CALENDAR, type SeededElection } from '@palanque/rules/election-calendar';
import { candidacyIn, type CourtSeed } from './court.js';
import type { components } from '../../schema.js';

type ErrorDetail = components['schemas']['ErrorDetail'];
type Json = Record<string, unknown>;

/** The fixture's court tables, with the columns these rules read beyond CourtSeed's. */
interface Court {
  elections: Array<CourtSeed['elections'][number] & { cd_tipo_eleicao?: number; dt_eleicao?: string }>;
  parties: Array<CourtSeed['parties'][number] & { nr_federacao?: number | null }>;
  federations?: Array<{ cd_eleicao: number; nr_federacao: number; nm_federacao: string }>;
}
type CandidateEntity = components['schemas']['CandidateEntity'];

/** Today in Brasília, YYYY-MM-DD. */
const brasiliaDay = () => new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());

/** The rules a candidate body breaks; `stored` is the record an update applies to. */
export function candidacyLawDetails(court: CourtSeed, body: Json, stored: Json = {}, today = brasiliaDay(), lines: readonly SeededElection[] = SEEDED_CALENDAR): ErrorDetail[] {
  const sent = withoutNulls(body);
  const after = withoutNulls({ ...stored, ...body });
  if (!(['office_scope', 'proportional_coalition', 'minimum_age'] as const).some((rule) => sendsFieldOf(sent, rule))) return checkCandidacyLaw({ sent, after });
  const data = court as unknown as Court;
  const candidacy = candidacyIn(court, after.candidacy_id);
  const office: LawOffice | undefined = candidacy ? OFFICES_BY_LAW.get(candidacy.cd_cargo) : officeOfPosition(after.position);
  if (!office) return checkCandidacyLaw({ sent, after });
  const officeSource = candidacy ? `candidacy ${candidacy.id}` : `position ${after.position}`;
  const line =
    (candidacy && lineOfCourtElection(data, candidacy.cd_eleicao, lines)) ??
    (typeof after.disputa_eleitoral === 'number' ? lineOfCourtElection(data, after.disputa_eleitoral, lines) : undefined) ??
    lines.find((candidate) => !candidate.supplementary && candidate.scope === scopeOf(office.cd_cargo) && lastVoteOf(candidate, true) >= today);
  const election: ElectionFacts = {};
  if (line) {
    election.title = line.title;
    election.year = line.year;
    election.ageMeasuredOn = office.ageMeasuredAt === 'registration_deadline' ? line.registration_deadline : inaugurationDay(line, office.cd_cargo);
  }
  if ((after.partidosLegenda?.length ?? 0) > 1) Object.assign(election, courtParties(data, after, office, candidacy?.cd_eleicao, line?.year));
  return checkCandidacyLaw({ sent, after, office, officeSource, election });
}

const scopeOf = (cdCargo: number) => (MUNICIPAL_OFFICES.has(cdCargo) ? 'municipal' : 'general');

/** The calendar line of court election `code`: by voting day and scope, else (ordinary elections) by year and scope. */
function lineOfCourtElection(court: Court, code: number, lines: readonly SeededElection[]): SeededElection | undefined {
  const election = court.elections.find((candidate) => candidate.cd_eleicao === code);
  if (!election) return undefined;
  const scope = election.tp_abrangencia.toUpperCase() === 'MUNICIPAL' ? 'municipal' : 'general';
  const byDay = lines.find((line) => line.scope === scope && (line.first_round_on === election.dt_eleicao || line.second_round_on === election.dt_eleicao));
  if (byDay) return byDay;
  if (election.cd_tipo_eleicao !== undefined && election.cd_tipo_eleicao !== 2) return undefined;
  return lines.find((line) => !line.supplementary && line.scope === scope && line.year === election.ano);
}

/** The federations and the entity's party acronym of the court data's election, as the server reads them. */
function courtParties(court: Court, after: Partial<CandidateEntity>, office: LawOffice, linkedElection: number | undefined, year: number | undefined): Pick<ElectionFacts, 'federations' | 'partyAcronym' | 'year'> {
  const scope = MUNICIPAL_OFFICES.has(office.cd_cargo) ? 'MUNICIPAL' : office.cd_cargo === 1 || office.cd_cargo === 2 ? 'FEDERAL' : 'ESTADUAL';
  const latestFirst = [...court.elections].sort((a, b) => b.ano - a.ano || a.nr_turno - b.nr_turno);
  const election =
    linkedElection !== undefined
      ? court.elections.find((candidate) => candidate.cd_eleicao === linkedElection)
      : latestFirst.find((candidate) => candidate.tp_abrangencia.toUpperCase() === scope && (year === undefined || candidate.ano === year));
  const parties = election && court.parties.filter((party) => party.cd_eleicao === election.cd_eleicao).sort((a, b) => a.nr_partido - b.nr_partido);
  if (!election || !parties || parties.length === 0) return {};
  const partyAcronym = after.partido === undefined ? undefined : parties.find((party) => party.nr_partido === Number(after.partido))?.sg_partido;
  const facts = { ...(partyAcronym ? { partyAcronym } : {}), ...(linkedElection !== undefined && year === undefined ? { year: election.ano } : {}) };
  const members = new Map<number, string[]>();
  for (const party of parties) if (party.nr_federacao !== null && party.nr_federacao !== undefined) members.set(party.nr_federacao, [...(members.get(party.nr_federacao) ?? []), party.sg_partido]);
  if (members.size === 0) return facts;
  const nameOf = (number: number) => court.federations?.find((row) => row.cd_eleicao === election.cd_eleicao && row.nr_federacao === number)?.nm_federacao ?? `federation ${number}`;
  return { ...facts, federations: [...members].map(([number, acronyms]) => ({ name: nameOf(number), parties: acronyms })) };
}

function withoutNulls(record: Json): Partial<CandidateEntity> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null && value !== undefined)) as Partial<CandidateEntity>;
}
