/**
 * The electoral court's demo data in the stateful mock (fixtures/elections.json, copied into
 * msw-fixtures.json), for what entities do with candidacies: the summary an entity linked to a candidacy
 * shows (`candidacy`, as the search lists it), and the entity createEntityFromCandidacy fills in, as the
 * server makes them (src/entities/candidacies.ts). Unlike the server, the mock names a municipality as the
 * court writes it (upper case): it has no municipality list.
 */
import type { components } from '../../schema.js';
import { summaryOf, type CourtTables } from './court-reads.js';

type Json = Record<string, unknown>;
type CandidacySummary = components['schemas']['CandidacySummary'];

/** The court's tables, as the fixture holds them (the import's columns). */
export interface CourtSeed {
  elections: Array<{ cd_eleicao: number; ano: number; nr_turno: number; tp_abrangencia: string }>;
  offices: Array<{ cd_cargo: number; ds_cargo: string }>;
  codes: Array<{ code_table: string; code: number; label: string }>;
  parties: Array<{ cd_eleicao: number; nr_partido: number; sg_partido: string }>;
  coalitions: Array<{ sq_coligacao: string; nm_coligacao: string; ds_composicao: string }>;
  units: Array<{ sg_ue: string; nm_ue: string; codigo_ibge: number | null }>;
  candidacies: CandidacyFixture[];
}

interface CandidacyFixture {
  id: number;
  cd_eleicao: number;
  sq_candidato: string;
  sg_uf: string;
  sg_ue: string;
  cd_cargo: number;
  nr_candidato: number;
  nm_candidato: string;
  nm_urna_candidato: string;
  nr_cpf: string | null;
  nr_titulo_eleitoral: string | null;
  nr_partido: number;
  sq_coligacao: string | null;
  cd_nacionalidade: number | null;
  sg_uf_nascimento: string | null;
  nm_municipio_nascimento: string | null;
  dt_nascimento: string | null;
  cd_genero: number | null;
  cd_grau_instrucao: number | null;
  cd_estado_civil: number | null;
  cd_cor_raca: number | null;
  cd_ocupacao: number | null;
  cd_situacao_candidatura: number | null;
  cd_sit_tot_turno: number | null;
  st_reeleicao: boolean | null;
}

export const EMPTY_COURT: CourtSeed = { elections: [], offices: [], codes: [], parties: [], coalitions: [], units: [], candidacies: [] };

const STATES = new Set('AC AL AM AP BA CE DF ES GO MA MG MS MT PA PB PE PI PR RJ RN RO RR RS SC SE SP TO'.split(' '));
const ROUNDS: Readonly<Record<number, string>> = { 1: 'primeiro_turno', 2: 'segundo_turno' };

export function candidacyIn(court: CourtSeed, id: unknown): CandidacyFixture | undefined {
  return court.candidacies.find((candidacy) => candidacy.id === id);
}

const labelOf = (court: CourtSeed, table: string, code: number | null) =>
  code === null ? null : { code, label: court.codes.find((row) => row.code_table === table && row.code === code)?.label ?? null };

/** What an entity linked to candidacy `id` shows of it (the search's summary); undefined when the demo data has no such candidacy. */
export function candidacySummary(court: CourtSeed, id: unknown): CandidacySummary | undefined {
  const candidacy = candidacyIn(court, id);
  // The seed is the whole fixture (fixtures/elections.json); CourtSeed names the part this file reads.
  return candidacy && summaryOf(court as unknown as CourtTables, candidacy as unknown as CourtTables['candidacies'][number]);
}

/**
 * The record createEntityFromCandidacy stores: the court's columns as entity fields, linked to the
 * candidacy; its CPF, voter id and race only `withPersonalData` (a platform admin).
 */
export function entityFromCandidacy(court: CourtSeed, candidacy: CandidacyFixture, withPersonalData: boolean, today = new Date()): Json {
  const election = court.elections.find((row) => row.cd_eleicao === candidacy.cd_eleicao);
  const unit = court.units.find((row) => row.sg_ue === candidacy.sg_ue);
  const state = STATES.has(candidacy.sg_uf) ? candidacy.sg_uf : undefined;
  const bornIn = candidacy.sg_uf_nascimento !== null && STATES.has(candidacy.sg_uf_nascimento) ? candidacy.sg_uf_nascimento : undefined;
  const coalition = court.coalitions.find((row) => row.sq_coligacao === candidacy.sq_coligacao);
  const acronyms = coalition ? coalition.ds_composicao.replace(/[^/(]*\(([^)]*)\)/g, '$1').split('/').map((acronym) => acronym.replace(/\s+/g, '')).filter(Boolean) : [];
  const record: Json = {
    nome: candidacy.nm_candidato,
    nm_urna: candidacy.nm_urna_candidato,
    nr_urna: candidacy.nr_candidato,
    partido: String(candidacy.nr_partido),
    position: court.offices.find((office) => office.cd_cargo === candidacy.cd_cargo)?.ds_cargo.toLocaleLowerCase('pt-BR'),
    tipoDisputa: election?.tp_abrangencia.toLowerCase(),
    ballot: election && ROUNDS[election.nr_turno],
    paisDisputa: 'BR',
    uf: state,
    estado_disputa: state,
    municipio_disputa: unit?.codigo_ibge == null ? undefined : String(unit.codigo_ibge),
    cidade: unit?.codigo_ibge == null ? undefined : unit.nm_ue,
    data_nascimento: candidacy.dt_nascimento ?? undefined,
    idade: candidacy.dt_nascimento ? ageOn(candidacy.dt_nascimento, today) : undefined,
    estado_nascimento: bornIn,
    pais_nascimento: bornIn && 'BR',
    municipio_nascimento: candidacy.nm_municipio_nascimento ?? undefined,
    nacionalidade: candidacy.cd_nacionalidade ?? undefined,
    genero: labelOf(court, 'genero', candidacy.cd_genero)?.label?.toLocaleLowerCase('pt-BR'),
    instrucao: candidacy.cd_grau_instrucao ?? undefined,
    ocupacao: candidacy.cd_ocupacao ?? undefined,
    estado_civil: candidacy.cd_estado_civil ?? undefined,
    reeleicao: candidacy.st_reeleicao ?? undefined,
    ...(coalition ? (acronyms.length > 1 ? { asLegenda: true, nomeLegenda: coalition.nm_coligacao, partidosLegenda: acronyms } : { asLegenda: false }) : {}),
    ...(withPersonalData
      ? {
          cpf: candidacy.nr_cpf?.replace(/^(\d{3})(\d{3})(\d{3})(\d{2})$/, '$1.$2.$3-$4'),
          titulo_eleitor: candidacy.nr_titulo_eleitoral ?? undefined,
          raca: candidacy.cd_cor_raca ?? undefined,
        }
      : {}),
    candidacy_id: candidacy.id,
  };
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined && value !== null));
}

function ageOn(born: string, today: Date): number {
  const [year, month, day] = born.split('-').map(Number) as [number, number, number];
  const beforeBirthday = today.getUTCMonth() + 1 < month || (today.getUTCMonth() + 1 === month && today.getUTCDate() < day);
  return today.getUTCFullYear() - year - (beforeBirthday ? 1 : 0);
}
