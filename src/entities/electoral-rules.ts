/**
 * What the electoral court's data adds to the rules of a candidate entity (rules.ts), once its tables are
 * loaded (issue 22): coded fields among the court's codes, a ballot number as long as its office's and
 * starting with the number of a party that runs in its election.
 *
 * What holds:
 * - A rule judges only by tables that are loaded: a code table without rows, an election without parties,
 *   an office that neither a link nor a loaded office name gives leave their fields unjudged. An install
 *   without the court's data accepts what it accepted before.
 * - The office and the election an entity runs in are those of the candidacy it is linked to
 *   (`candidacy_id`). Without a link, the office is the one whose court name `position` spells (case,
 *   accents, hyphens and feminine forms aside: "Prefeita", "vice-prefeito", "Deputada Federal"), and the
 *   election the latest loaded one of that office's scope (municipal, state or federal), its first round
 *   (reference.ts orders them). Nothing else (`tipoDisputa`, `disputa_eleitoral`) is read.
 * - As in rules.ts, the coded fields are judged when sent; the ballot number and the party, a rule between
 *   fields, on the entity as it will be whenever the body names one of them or what sets the office.
 * - The parties an election is judged by are those registered with the court that could run in it: existing
 *   on its day and registered at least six months before (Lei 9.504/1997 art. 4º), from the registered
 *   parties (registered_parties, packages/rules/src/registered-parties.ts), never from the candidacies imported so far: a
 *   2024 entity of PL 22 or PRD 25 is accepted though no imported candidacy names them, one of PTB (merged
 *   into PRD in 2023) is not. An election before that list's coverage (2020) is judged by the parties its
 *   imported candidacies name, as before.
 * - A coalition's parties (`partidosLegenda`) are judged against the acronyms of those parties, in place of
 *   rules.ts's list of parties registered today: a 2022 coalition may name a party merged since (PTB).
 * - Each broken rule is one detail naming the field, the rule and what is allowed: the codes of a short
 *   table, the table to read for a long one (occupation's hundreds), the parties of the election.
 */
import type { Sequelize } from 'sequelize';
import { readerOf } from '../db/reader.js';
import type { CodeTable, OfficeRow, PartyRow } from '../elections/tse/models.js';
import { normaliseName } from '../elections/tse/names.js';
import { FEMININE_FORMS } from '@palanque/rules/candidacy-law';
import { COVERED_FROM, partiesRunningOn } from '@palanque/rules/registered-parties';
import { ballotDigitsOf, courtReferenceOf, scopeOfOffice, type CourtView, type Election } from '../elections/tse/reference.js';
import type { ErrorDetail } from '../http/errors.js';
import type { MunicipalityCatalog } from '../municipalities/catalog.js';
import type { CandidateEntity } from './models.js';
import { checkCandidate, normaliseAcronym, withoutNulls, type CoalitionParties, type Sent } from './rules.js';

/** The entity's coded fields and the court's table of each (`genero` is free text, not a code). */
export const CODED_FIELDS = {
  instrucao: 'grau_instrucao',
  ocupacao: 'ocupacao',
  estado_civil: 'estado_civil',
  raca: 'cor_raca',
  nacionalidade: 'nacionalidade',
} as const satisfies Partial<Record<keyof CandidateEntity, CodeTable>>;
type CodedField = keyof typeof CODED_FIELDS;

/** The fields that set or hold a ballot number's office, election and party. */
const BALLOT_FIELDS = ['nr_urna', 'partido', 'position', 'candidacy_id'] as const;

/** The fields whose rules depend on the entity's office and election. */
const CONTEST_FIELDS = [...BALLOT_FIELDS, 'partidosLegenda'] as const;

/** A table of more codes than this is named in a 422, not listed. */
const LISTED_CODES = 20;

/** A detail's message is at most this long (the contract's ErrorDetail). */
const MESSAGE_LIMIT = 1000;

/** The election and office of the candidacy an entity is linked to. */
export interface LinkedCandidacy {
  id: number;
  cd_eleicao: number;
  cd_cargo: number;
}

/** The office and election an entity runs in, and how they were known (for the messages). */
export interface Contest {
  office: OfficeRow;
  election: Election | undefined;
  source: string;
}

/** `position` as an office name of the view (`officeByName`): "Vice-Prefeita" -> "vice prefeito". */
export function officeKey(position: string): string {
  return normaliseName(position)
    .split(' ')
    .map((word) => FEMININE_FORMS.get(word) ?? word)
    .join(' ');
}

/** The entity's office and election: the linked candidacy's, else `position`'s; undefined when neither gives one. */
export function contestOf(after: Sent, view: CourtView, linked?: LinkedCandidacy): Contest | undefined {
  if (linked) {
    const office = view.officeByCode.get(linked.cd_cargo) ?? { cd_cargo: linked.cd_cargo, ds_cargo: `office ${linked.cd_cargo}`, ballot_digits: null };
    return { office, election: view.electionByCode.get(linked.cd_eleicao), source: `candidacy ${linked.id}` };
  }
  if (after.position === undefined) return undefined;
  const office = view.officeByName.get(officeKey(after.position));
  if (!office) return undefined;
  const scope = scopeOfOffice(office.cd_cargo);
  const election = view.elections.find((candidate) => candidate.tp_abrangencia.toUpperCase() === scope);
  return { office, election, source: `position ${after.position}` };
}

/**
 * The rules of the court's tables a body breaks; `after` is the entity as it will be (the stored one with
 * the body applied), `linked` the candidacy it will be linked to, if any.
 */
export function checkElectoral(sent: Sent, after: Sent, view: CourtView, linked?: LinkedCandidacy): ErrorDetail[] {
  return [...courtCodes(sent, view), ...ballotNumber(sent, after, view, linked)];
}

/** Whether a body names a field these rules judge (else they need not read anything). */
export function namesElectoralFields(body: CandidateEntity): boolean {
  return [...Object.keys(CODED_FIELDS), ...CONTEST_FIELDS].some((field) => body[field as keyof CandidateEntity] !== undefined);
}

/**
 * Every rule a candidate body breaks: rules.ts's, and the court's where its tables are loaded. Reads the
 * linked candidacy (`candidacy_id` as it will be) and the court's tables, unless the body names no field
 * the court's rules judge. A sent `candidacy_id` that names no candidacy is its own detail.
 */
export async function judgeCandidate(
  sequelize: Sequelize,
  municipalities: MunicipalityCatalog,
  body: CandidateEntity,
  { stored, today = new Date() }: { stored?: CandidateEntity; today?: Date } = {},
): Promise<ErrorDetail[]> {
  if (!namesElectoralFields(body)) return checkCandidate(body, municipalities, today, stored);
  const sent = withoutNulls(body);
  const after = withoutNulls({ ...(stored ?? { nome: body.nome }), ...body });
  let linked: LinkedCandidacy | undefined;
  if (after.candidacy_id !== undefined) {
    linked = await linkedCandidacy(sequelize, after.candidacy_id);
    if (!linked && sent.candidacy_id !== undefined) {
      const unknown = problem('candidacy_id', 'existing_candidacy', "must be the id of a candidacy of the court's data", sent.candidacy_id);
      return [...checkCandidate(body, municipalities, today, stored), unknown];
    }
  }
  const view = await courtReferenceOf(sequelize).current();
  const contest = contestOf(after, view, linked);
  return [...checkCandidate(body, municipalities, today, stored, contest && coalitionPartiesOf(contest, view)), ...checkElectoral(sent, after, view, linked)];
}

/** The election and office of candidacy `id`, if there is one. */
export async function linkedCandidacy(sequelize: Sequelize, id: number): Promise<LinkedCandidacy | undefined> {
  if (!Number.isSafeInteger(id) || id > 2147483647) return undefined;
  const row = await readerOf(sequelize).row<LinkedCandidacy>('SELECT id, cd_eleicao, cd_cargo FROM tse_candidacies WHERE id = ?', [id]);
  return row && { id: Number(row.id), cd_eleicao: Number(row.cd_eleicao), cd_cargo: Number(row.cd_cargo) };
}

function courtCodes(sent: Sent, view: CourtView): ErrorDetail[] {
  return (Object.keys(CODED_FIELDS) as CodedField[]).flatMap((field) => {
    const value = sent[field];
    const codes = view.codes.get(CODED_FIELDS[field]);
    if (typeof value !== 'number' || !codes || codes.has(value)) return [];
    return [problem(field, 'court_code', allowedCodes(CODED_FIELDS[field], codes), value)];
  });
}

function allowedCodes(table: CodeTable, codes: ReadonlyMap<number, string>): string {
  if (codes.size <= LISTED_CODES) return `must be a code of the court's table ${table}: ${[...codes].map(([code, label]) => `${code} ${label}`).join(', ')}`;
  return `must be a code of the court's table ${table} (${codes.size} codes): getElectionCodes lists them, GET /api/elections/codes/?table=${table}`;
}

function ballotNumber(sent: Sent, after: Sent, view: CourtView, linked?: LinkedCandidacy): ErrorDetail[] {
  if (!BALLOT_FIELDS.some((field) => sent[field] !== undefined)) return [];
  const contest = contestOf(after, view, linked);
  if (!contest) return [];
  const found: ErrorDetail[] = [];
  const { office, source } = contest;
  const number = after.nr_urna;
  const digits = ballotDigitsOf(office);
  if (typeof number === 'number' && digits !== undefined && String(number).length !== digits) {
    found.push(problem('nr_urna', 'ballot_digits', `must have ${digits} digits, as ballot numbers for ${office.ds_cargo} have (${source})`, number));
  }
  const running = partiesRunning(contest, view);
  if (!running) return found;
  if (typeof number === 'number' && !running.parties.has(Number(String(number).slice(0, 2)))) {
    found.push(problem('nr_urna', 'party_of_election', `must start with the number of a party ${running.described}`, number));
  }
  if (after.partido !== undefined && !running.parties.has(Number(after.partido))) {
    found.push(problem('partido', 'party_of_election', `must be the number of a party ${running.described}`, after.partido));
  }
  return found;
}

/**
 * The parties that could run in the contest's election, by number, and their description for a message:
 * the registered ones (see the top of this file), else, for an election before the registry's coverage,
 * those its imported candidacies name; undefined when neither is known.
 */
function partiesRunning({ election }: Contest, view: CourtView): { parties: ReadonlyMap<number, Pick<PartyRow, 'nr_partido' | 'sg_partido'>>; described: string } | undefined {
  if (!election) return undefined;
  const registered = view.registeredParties.length > 0 && election.dt_eleicao >= COVERED_FROM ? partiesRunningOn(view.registeredParties, election.dt_eleicao) : undefined;
  const parties = registered ? new Map(registered.map((party) => [party.nr_partido, party])) : view.partiesByElection.get(election.cd_eleicao);
  if (!parties) return undefined;
  const listed = [...parties.values()].map((party) => `${party.nr_partido} ${party.sg_partido}`).join(', ');
  const which = registered ? `registered with the TSE that could run in` : 'running in';
  return { parties, described: `${which} ${election.ds_eleicao} (${election.ano}, round ${election.nr_turno}, ${election.dt_eleicao}): ${listed}` };
}

/** How `partidosLegenda` is judged in the contest's election, when its parties are loaded (rules.ts's list otherwise). */
function coalitionPartiesOf(contest: Contest, view: CourtView): CoalitionParties | undefined {
  const running = partiesRunning(contest, view);
  if (!running) return undefined;
  const acronyms = new Set([...running.parties.values()].map((party) => normaliseAcronym(party.sg_partido)));
  return { acronyms, rule: 'party_of_election', message: clipped(`must be the acronym of a party ${running.described}`) };
}

function problem(field: string, rule: string, message: string, value: ErrorDetail['value']): ErrorDetail {
  return { location: 'body', field, rule, message: clipped(message), value };
}

function clipped(message: string): string {
  return message.length > MESSAGE_LIMIT ? `${message.slice(0, MESSAGE_LIMIT - 1)}…` : message;
}
