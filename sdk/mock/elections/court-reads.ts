/**
 * The reads of the electoral court's data in the stateful mock (mock/stateful.ts), over its demo data
 * (fixtures/elections.json, copied into msw-fixtures.json): the answers of listElections,
 * listElectionOffices, listElectionParties, getElectionCodes, searchCandidacies and getCandidacy, as the
 * server makes them (src/elections/tse/catalog.ts and read-handlers.ts): the same order, filters, labels,
 * 400s and 404s, and personal data whole for platform admins only (masked CPF and voter id, no race for
 * everyone else). Unlike the server, the mock has no municipality list: a candidacy's `municipio` is its
 * unit's court name, and the search's `nome` matches what this file's normaliser makes of the names.
 */
import type { components } from '../../schema.js';
import type { ErrorDetail } from '../../msw-validation.js';

type Schemas = components['schemas'];
type CourtCode = Schemas['CourtCode'];

/** The court's tables as fixtures/elections.json holds them (the import's columns). */
export interface CourtTables {
  elections: Array<{ cd_eleicao: number; ano: number; cd_tipo_eleicao: number; nr_turno: number; ds_eleicao: string; dt_eleicao: string; tp_abrangencia: string }>;
  offices: Array<{ cd_cargo: number; ds_cargo: string; ballot_digits: number | null }>;
  codes: Array<{ code_table: string; code: number; label: string }>;
  parties: Array<{ cd_eleicao: number; nr_partido: number; sg_partido: string; nm_partido: string; nr_federacao: number | null }>;
  federations: Array<{ cd_eleicao: number; nr_federacao: number; sg_federacao: string; nm_federacao: string }>;
  coalitions: Array<{ sq_coligacao: string; cd_eleicao: number; nm_coligacao: string; ds_composicao: string }>;
  units: Array<{ sg_ue: string; sg_uf: string; nm_ue: string; codigo_ibge: number | null }>;
  candidacies: Array<{
    id: number; cd_eleicao: number; sq_candidato: string; sg_uf: string; sg_ue: string; cd_cargo: number; nr_candidato: number;
    nm_candidato: string; nm_urna_candidato: string; nr_cpf: string | null; nr_titulo_eleitoral: string | null; nr_partido: number;
    nr_federacao: number | null; sq_coligacao: string | null; cd_nacionalidade: number | null; sg_uf_nascimento: string | null;
    nm_municipio_nascimento: string | null; dt_nascimento: string | null; cd_genero: number | null; cd_grau_instrucao: number | null;
    cd_estado_civil: number | null; cd_cor_raca: number | null; cd_ocupacao: number | null; cd_situacao_candidatura: number | null;
    cd_sit_tot_turno: number | null; st_reeleicao: boolean | null; updated_at: string;
  }>;
}
type CandidacyRow = CourtTables['candidacies'][number];

/** An answer: its data and message, or an error (status, code, message, details). */
export type CourtAnswer<Data> = { data: Data; message: string } | { status: 400 | 404; code: string; message: string; details: ErrorDetail[] };

const CODE_TABLES = ['tipo_eleicao', 'genero', 'grau_instrucao', 'estado_civil', 'cor_raca', 'ocupacao', 'nacionalidade', 'situacao_candidatura', 'sit_tot_turno'] as const;
export const CANDIDACIES_PER_PAGE = 30;

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

/** Lower case, no accents or apostrophes, hyphens as spaces (src/elections/tse/names.ts). */
function normalised(text: string): string {
  return text.normalize('NFD').replace(/\p{Diacritic}/gu, '').replace(/['\u2019\u2018`\u00b4]/g, '').replace(/[-\u2010-\u2015]/g, ' ').replace(/\s+/g, ' ').trim().toLowerCase();
}
const words = (text: string) => normalised(text).split(' ').map((word) => word.replace(/[^\p{L}\p{N}]/gu, '')).filter(Boolean);
const acronymKey = (acronym: string) => normalised(acronym).replace(/ /g, '').toUpperCase();

function codeOf(court: CourtTables, table: string, code: number | null): CourtCode | null {
  if (code === null) return null;
  return { code, label: court.codes.find((row) => row.code_table === table && row.code === code)?.label ?? null };
}

function electionOf(court: CourtTables, election: CourtTables['elections'][number]): Schemas['CourtElection'] {
  const { cd_eleicao, ano, nr_turno, ds_eleicao, dt_eleicao } = election;
  return { cd_eleicao, ano, tipo_eleicao: codeOf(court, 'tipo_eleicao', election.cd_tipo_eleicao)!, nr_turno, ds_eleicao, dt_eleicao, tp_abrangencia: election.tp_abrangencia as Schemas['CourtElectionScope'] };
}

export function listElections(court: CourtTables, query: URLSearchParams): CourtAnswer<Schemas['CourtElection'][]> {
  const year = query.get('ano');
  const scope = query.get('abrangencia');
  const elections = court.elections
    .filter((election) => (year === null || election.ano === Number(year)) && (scope === null || election.tp_abrangencia === scope))
    .sort((a, b) => b.dt_eleicao.localeCompare(a.dt_eleicao) || a.cd_eleicao - b.cd_eleicao)
    .map((election) => electionOf(court, election));
  return { data: elections, message: `${plural(elections.length, 'election', 'elections')}.` };
}

export function listOffices(court: CourtTables): CourtAnswer<Schemas['CourtOffice'][]> {
  const offices = [...court.offices].sort((a, b) => a.cd_cargo - b.cd_cargo);
  return { data: offices, message: `${plural(offices.length, 'office', 'offices')}.` };
}

export function listParties(court: CourtTables, query: URLSearchParams): CourtAnswer<Schemas['CourtElectionParties']> {
  const code = query.get('cd_eleicao');
  if (code === null) return { status: 400, code: 'bad_request', message: 'The request is malformed: cd_eleicao is required.', details: [{ location: 'query', field: 'cd_eleicao', rule: 'required', message: 'is required' }] };
  const election = court.elections.find((row) => row.cd_eleicao === Number(code));
  if (!election) {
    return {
      status: 404,
      code: 'not_found',
      message: `There is no election ${code} in the court's data loaded here.`,
      details: [{ location: 'query', field: 'cd_eleicao', rule: 'existing_election', message: 'must be the code of a loaded election (listElections)', value: Number(code) }],
    };
  }
  const partidos = court.parties.filter((party) => party.cd_eleicao === election.cd_eleicao).sort((a, b) => a.nr_partido - b.nr_partido).map(({ cd_eleicao: _code, ...party }) => party);
  const federacoes = court.federations
    .filter((federation) => federation.cd_eleicao === election.cd_eleicao)
    .sort((a, b) => a.nr_federacao - b.nr_federacao)
    .map(({ cd_eleicao: _code, ...federation }) => ({ ...federation, partidos: partidos.filter((party) => party.nr_federacao === federation.nr_federacao).map((party) => party.nr_partido) }));
  return {
    data: { eleicao: electionOf(court, election), partidos, federacoes },
    message: `${plural(partidos.length, 'party', 'parties')} and ${plural(federacoes.length, 'federation', 'federations')} in ${election.ds_eleicao}.`,
  };
}

export function codeTables(court: CourtTables, query: URLSearchParams): CourtAnswer<Schemas['CourtCodeTables']> {
  const table = query.get('table');
  const tables = table === null ? CODE_TABLES : CODE_TABLES.filter((name) => name === table);
  const data = Object.fromEntries(tables.map((name) => [name, court.codes.filter((row) => row.code_table === name).sort((a, b) => a.code - b.code).map(({ code, label }) => ({ code, label }))]));
  return { data, message: `${plural(tables.length, 'code table', 'code tables')}.` };
}

/** A candidacy as the search lists it, and as an entity linked to it shows it (`candidacy`). */
export function summaryOf(court: CourtTables, candidacy: CandidacyRow): Schemas['CandidacySummary'] {
  const unit = court.units.find((row) => row.sg_ue === candidacy.sg_ue);
  return {
    id: candidacy.id,
    cd_eleicao: candidacy.cd_eleicao,
    ano: court.elections.find((election) => election.cd_eleicao === candidacy.cd_eleicao)?.ano ?? 0,
    sq_candidato: candidacy.sq_candidato,
    nr_candidato: candidacy.nr_candidato,
    nm_candidato: candidacy.nm_candidato,
    nm_urna_candidato: candidacy.nm_urna_candidato,
    cargo: { cd_cargo: candidacy.cd_cargo, ds_cargo: court.offices.find((office) => office.cd_cargo === candidacy.cd_cargo)?.ds_cargo ?? null },
    partido: { nr_partido: candidacy.nr_partido, sg_partido: partyOf(court, candidacy)?.sg_partido ?? null },
    sg_uf: candidacy.sg_uf as Schemas['CourtUF'],
    unidade: { sg_ue: candidacy.sg_ue, nm_ue: unit?.nm_ue ?? candidacy.sg_ue, codigo_ibge: unit?.codigo_ibge ?? null },
    situacao_candidatura: codeOf(court, 'situacao_candidatura', candidacy.cd_situacao_candidatura),
    sit_tot_turno: codeOf(court, 'sit_tot_turno', candidacy.cd_sit_tot_turno),
  };
}

const partyOf = (court: CourtTables, candidacy: CandidacyRow) => court.parties.find((party) => party.cd_eleicao === candidacy.cd_eleicao && party.nr_partido === candidacy.nr_partido);
/** The server's order: the civil name (with the ballot name) normalised, then the id. */
const searchName = (candidacy: CandidacyRow) => {
  const civil = normalised(candidacy.nm_candidato);
  const ballot = normalised(candidacy.nm_urna_candidato);
  return civil.includes(ballot) ? civil : `${civil} ${ballot}`;
};

/** The matching candidacies' summaries, all of them (the caller pages them), or a 400 naming the filter. */
export function searchCandidacies(court: CourtTables, query: URLSearchParams): CourtAnswer<Schemas['CandidacySummary'][]> {
  const number = (name: string) => (query.get(name) === null ? undefined : Number(query.get(name)));
  const nome = query.get('nome');
  const wanted = nome === null ? undefined : words(nome);
  if (wanted && wanted.join('').length < 2) {
    return {
      status: 400,
      code: 'bad_request',
      message: 'The request is malformed: nome must have at least 2 letters or digits.',
      details: [{ location: 'query', field: 'nome', rule: 'min_letters', message: 'must have at least 2 letters or digits, ignoring accents, apostrophes and spaces', value: nome }],
    };
  }
  const election = number('cd_eleicao');
  const partido = query.get('partido');
  let parties: number[] | undefined;
  if (partido !== null) {
    parties = /^[0-9]+$/.test(partido)
      ? [Number(partido)]
      : court.parties.filter((party) => (election === undefined || party.cd_eleicao === election) && acronymKey(party.sg_partido) === acronymKey(partido)).map((party) => party.nr_partido);
    if (parties.length === 0) {
      return {
        status: 400,
        code: 'bad_request',
        message: election === undefined ? `No loaded election has a party with the acronym ${partido}.` : `Election ${election} has no party with the acronym ${partido}.`,
        details: [{ location: 'query', field: 'partido', rule: 'known_party', message: "must be a party's number or the acronym of a party of a loaded election (listElectionParties)", value: partido }],
      };
    }
  }
  const ibge = number('codigo_ibge');
  const pattern = wanted && new RegExp(wanted.map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*'));
  const found = court.candidacies
    .filter(
      (candidacy) =>
        (election === undefined || candidacy.cd_eleicao === election) &&
        (query.get('uf') === null || candidacy.sg_uf === query.get('uf')) &&
        (number('cd_cargo') === undefined || candidacy.cd_cargo === number('cd_cargo')) &&
        (number('nr_candidato') === undefined || candidacy.nr_candidato === number('nr_candidato')) &&
        (parties === undefined || parties.includes(candidacy.nr_partido)) &&
        (ibge === undefined || court.units.some((unit) => unit.sg_ue === candidacy.sg_ue && unit.codigo_ibge === ibge)) &&
        (pattern === undefined || pattern.test(searchName(candidacy))),
    )
    .sort((a, b) => (searchName(a) < searchName(b) ? -1 : searchName(a) > searchName(b) ? 1 : a.id - b.id));
  return { data: found.map((candidacy) => summaryOf(court, candidacy)), message: `${plural(found.length, 'candidacy', 'candidacies')}.` };
}

/** Candidacy `id` with labels; personal data whole for a platform admin (`whole`), masked otherwise. */
export function candidacy(court: CourtTables, query: URLSearchParams, whole: boolean): CourtAnswer<Schemas['Candidacy']> {
  const id = query.get('id');
  if (id === null) return { status: 400, code: 'bad_request', message: 'The request is malformed: id is required.', details: [{ location: 'query', field: 'id', rule: 'required', message: 'is required' }] };
  const row = court.candidacies.find((candidacy) => candidacy.id === Number(id));
  if (!row) {
    return {
      status: 404,
      code: 'not_found',
      message: `There is no candidacy ${Number(id)}.`,
      details: [{ location: 'query', field: 'id', rule: 'existing_candidacy', message: 'must be the id of a candidacy (searchCandidacies)', value: Number(id) }],
    };
  }
  const summary = summaryOf(court, row);
  const election = court.elections.find((candidate) => candidate.cd_eleicao === row.cd_eleicao)!;
  const office = court.offices.find((candidate) => candidate.cd_cargo === row.cd_cargo);
  const party = partyOf(court, row);
  const federation = court.federations.find((candidate) => candidate.cd_eleicao === row.cd_eleicao && candidate.nr_federacao === row.nr_federacao);
  const coalition = court.coalitions.find((candidate) => candidate.sq_coligacao === row.sq_coligacao);
  const cpf = row.nr_cpf && /^[0-9]{11}$/.test(row.nr_cpf) ? row.nr_cpf.replace(/^(\d{3})(\d{3})(\d{3})(\d{2})$/, '$1.$2.$3-$4') : null;
  const voterId = row.nr_titulo_eleitoral && /^[0-9]{12,13}$/.test(row.nr_titulo_eleitoral) ? row.nr_titulo_eleitoral : null;
  const data: Schemas['Candidacy'] = {
    id: row.id,
    sq_candidato: row.sq_candidato,
    eleicao: electionOf(court, election),
    cargo: { cd_cargo: row.cd_cargo, ds_cargo: office?.ds_cargo ?? String(row.cd_cargo), ballot_digits: office?.ballot_digits ?? null },
    sg_uf: summary.sg_uf,
    unidade: summary.unidade,
    municipio: summary.unidade.codigo_ibge === null ? null : { codigo_ibge: summary.unidade.codigo_ibge, nome: summary.unidade.nm_ue },
    nr_candidato: row.nr_candidato,
    nm_candidato: row.nm_candidato,
    nm_urna_candidato: row.nm_urna_candidato,
    partido: { nr_partido: row.nr_partido, sg_partido: party?.sg_partido ?? null, nm_partido: party?.nm_partido ?? null },
    federacao: row.nr_federacao === null ? null : { nr_federacao: row.nr_federacao, sg_federacao: federation?.sg_federacao ?? null, nm_federacao: federation?.nm_federacao ?? null },
    coligacao: row.sq_coligacao === null ? null : { sq_coligacao: row.sq_coligacao, nm_coligacao: coalition?.nm_coligacao ?? null, ds_composicao: coalition?.ds_composicao ?? null },
    cpf: whole || cpf === null ? cpf : `***.${cpf.slice(4, 7)}.${cpf.slice(8, 11)}-**`,
    titulo_eleitor: whole || voterId === null ? voterId : `********${voterId.slice(-4)}`,
    data_nascimento: row.dt_nascimento,
    uf_nascimento: row.sg_uf_nascimento,
    municipio_nascimento: row.nm_municipio_nascimento,
    nacionalidade: codeOf(court, 'nacionalidade', row.cd_nacionalidade),
    genero: codeOf(court, 'genero', row.cd_genero),
    grau_instrucao: codeOf(court, 'grau_instrucao', row.cd_grau_instrucao),
    estado_civil: codeOf(court, 'estado_civil', row.cd_estado_civil),
    ...(whole ? { cor_raca: codeOf(court, 'cor_raca', row.cd_cor_raca) } : {}),
    ocupacao: codeOf(court, 'ocupacao', row.cd_ocupacao),
    situacao_candidatura: summary.situacao_candidatura,
    sit_tot_turno: summary.sit_tot_turno,
    reeleicao: row.st_reeleicao,
    personal_data: whole ? 'whole' : 'masked',
    updated_at: row.updated_at,
  };
  return { data, message: `${row.nm_urna_candidato} (${row.nr_candidato}), ${data.cargo.ds_cargo} in ${summary.unidade.nm_ue}, ${election.ds_eleicao}.` };
}

/** A weak tag of an answer's data (FNV-1a over its JSON): the same data, the same tag, as the server's ETag promises. */
export function weakTagOf(data: unknown): string {
  let hash = 0x811c9dc5;
  for (const char of JSON.stringify(data)) {
    hash ^= char.codePointAt(0)!;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `W/"${hash.toString(36).padStart(7, '0')}"`;
}
