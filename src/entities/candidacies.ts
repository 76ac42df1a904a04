/**
 * Entities and the electoral court's candidacies (issue 22): what an entity shows of the candidacy it is
 * linked to (`candidacy_id`), and an entity filled in from a candidacy.
 *
 * What holds:
 * - What an entity shows of its candidacy is the candidacy as the search lists it (CandidacySummary):
 *   never its CPF, voter id or race, whoever reads the entity.
 * - An entity filled in from a candidacy carries the candidacy's CPF, voter id and race only when
 *   `withPersonalData` (the caller reads the court's candidacies whole); otherwise they are left unset.
 *   A masked value is never stored (personal-data.ts), so it is not filled in either.
 * - The court's values are taken as they are; a value the entity rules (rules.ts) refuse is left out of
 *   the entity and named (`withoutRefused`), so the court's data never makes a create fail.
 * - A value the file withholds (null) is left unset; nothing is guessed.
 */
import type { CandidacyRecord, CandidacySummary } from '../elections/tse/catalog.js';
import type { ErrorDetail } from '../http/errors.js';
import { STATE_CODE_BY_ACRONYM } from '../municipalities/rules.js';
import type { CandidateEntity } from './models.js';
import { ageOn } from './rules.js';

/** The candidacy as an entity linked to it shows it: the search's summary, without personal data. */
export function summaryOfCandidacy(candidacy: CandidacyRecord): CandidacySummary {
  return {
    id: candidacy.id,
    cd_eleicao: candidacy.eleicao.cd_eleicao,
    ano: candidacy.eleicao.ano,
    sq_candidato: candidacy.sq_candidato,
    nr_candidato: candidacy.nr_candidato,
    nm_candidato: candidacy.nm_candidato,
    nm_urna_candidato: candidacy.nm_urna_candidato,
    cargo: { cd_cargo: candidacy.cargo.cd_cargo, ds_cargo: candidacy.cargo.ds_cargo },
    partido: { nr_partido: candidacy.partido.nr_partido, sg_partido: candidacy.partido.sg_partido },
    sg_uf: candidacy.sg_uf,
    unidade: candidacy.unidade,
    situacao_candidatura: candidacy.situacao_candidatura,
    sit_tot_turno: candidacy.sit_tot_turno,
  };
}

const ROUNDS: Readonly<Record<number, string>> = { 1: 'primeiro_turno', 2: 'segundo_turno' };

/** The entity a candidacy fills in, linked to it. `today` gives `idade`. */
export function entityFromCandidacy(candidacy: CandidacyRecord, { withPersonalData, today }: { withPersonalData: boolean; today: Date }): CandidateEntity {
  const entity: CandidateEntity = {
    nome: candidacy.nm_candidato,
    nm_urna: candidacy.nm_urna_candidato,
    nr_urna: candidacy.nr_candidato,
    partido: String(candidacy.partido.nr_partido),
    position: candidacy.cargo.ds_cargo.toLocaleLowerCase('pt-BR'),
    tipoDisputa: candidacy.eleicao.tp_abrangencia.toLowerCase(),
    ballot: ROUNDS[candidacy.eleicao.nr_turno],
    paisDisputa: 'BR',
    ...contestPlace(candidacy),
    ...birth(candidacy, today),
    nacionalidade: candidacy.nacionalidade?.code,
    genero: candidacy.genero?.label?.toLocaleLowerCase('pt-BR'),
    instrucao: candidacy.grau_instrucao?.code,
    ocupacao: candidacy.ocupacao?.code,
    estado_civil: candidacy.estado_civil?.code,
    reeleicao: candidacy.reeleicao ?? undefined,
    ...coalition(candidacy),
    ...(withPersonalData ? personalData(candidacy) : {}),
    candidacy_id: candidacy.id,
  };
  return Object.fromEntries(Object.entries(entity).filter(([, value]) => value !== undefined && value !== null)) as CandidateEntity;
}

/** The state and, in municipal elections, the municipality of the contest. */
function contestPlace(candidacy: CandidacyRecord): Partial<CandidateEntity> {
  const state = STATE_CODE_BY_ACRONYM.has(candidacy.sg_uf) ? (candidacy.sg_uf as CandidateEntity['uf']) : undefined;
  const municipality = candidacy.municipio;
  return {
    uf: state,
    estado_disputa: state,
    ...(municipality ? { municipio_disputa: String(municipality.codigo_ibge) as CandidateEntity['municipio_disputa'], cidade: municipality.nome } : {}),
  };
}

function birth(candidacy: CandidacyRecord, today: Date): Partial<CandidateEntity> {
  const state = candidacy.uf_nascimento !== null && STATE_CODE_BY_ACRONYM.has(candidacy.uf_nascimento) ? candidacy.uf_nascimento : undefined;
  const born = candidacy.data_nascimento;
  return {
    ...(born ? { data_nascimento: born, idade: ageOn(new Date(`${born}T00:00:00Z`), today) } : {}),
    ...(state ? { estado_nascimento: state as CandidateEntity['estado_nascimento'], pais_nascimento: 'BR' } : {}),
    municipio_nascimento: candidacy.municipio_nascimento ?? undefined,
  };
}

/**
 * A coalition of several parties: its name and its parties' acronyms. The court writes a federation in a
 * coalition's composition with its parties in brackets ("Federação Brasil da Esperança - FE BRASIL(PT/PC do
 * B/PV) / PSB"): those are the acronyms, without their spaces ("PCdoB").
 */
function coalition(candidacy: CandidacyRecord): Partial<CandidateEntity> {
  const composition = candidacy.coligacao?.ds_composicao;
  if (!composition) return {};
  const acronyms = composition
    .replace(/[^/(]*\(([^)]*)\)/g, '$1')
    .split('/')
    .map((acronym) => acronym.replace(/\s+/g, ''))
    .filter((acronym) => acronym !== '');
  if (acronyms.length < 2) return { asLegenda: false };
  return { asLegenda: true, nomeLegenda: candidacy.coligacao?.nm_coligacao ?? undefined, partidosLegenda: acronyms };
}

function personalData(candidacy: CandidacyRecord): Partial<CandidateEntity> {
  const cpf = candidacy.cpf !== null && /^[0-9]{11}$/.test(candidacy.cpf) ? candidacy.cpf.replace(/^(\d{3})(\d{3})(\d{3})(\d{2})$/, '$1.$2.$3-$4') : undefined;
  const voterId = candidacy.titulo_eleitor !== null && /^[0-9]{12,13}$/.test(candidacy.titulo_eleitor) ? candidacy.titulo_eleitor : undefined;
  return { cpf, titulo_eleitor: voterId, raca: candidacy.cor_raca?.code };
}

/** The entity without the fields the rules refused (each detail's top-level field), and those fields. */
export function withoutRefused(entity: CandidateEntity, problems: ErrorDetail[]): { entity: CandidateEntity; leftOut: string[] } {
  const leftOut = [...new Set(problems.map((problem) => problem.field.split('.')[0]!))];
  const kept = Object.fromEntries(Object.entries(entity).filter(([field]) => !leftOut.includes(field) || field === 'nome')) as CandidateEntity;
  return { entity: kept, leftOut: leftOut.filter((field) => field !== 'nome') };
}
