/**
 * The Sequelize models of the electoral court's data (migration 0026-court-elections). Column names are
 * the court's own (lower-cased), so a reader can hold a row beside the court's layout notes.
 */
import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';

export interface ElectionRow {
  cd_eleicao: number;
  ano: number;
  cd_tipo_eleicao: number;
  nr_turno: number;
  ds_eleicao: string;
  /** YYYY-MM-DD. */
  dt_eleicao: string;
  tp_abrangencia: string;
  updated_at: Date;
}

export interface OfficeRow {
  cd_cargo: number;
  ds_cargo: string;
  ballot_digits: number | null;
}

/** The code tables the candidacy files carry, each from a CD_/DS_ column pair. */
export const CODE_TABLES = [
  'tipo_eleicao', 'genero', 'grau_instrucao', 'estado_civil', 'cor_raca', 'ocupacao', 'nacionalidade',
  'situacao_candidatura', 'sit_tot_turno',
] as const;
export type CodeTable = (typeof CODE_TABLES)[number];

export interface CodeRow {
  code_table: CodeTable;
  code: number;
  label: string;
}

export interface PartyRow {
  cd_eleicao: number;
  nr_partido: number;
  sg_partido: string;
  nm_partido: string;
  nr_federacao: number | null;
}

export interface FederationRow {
  cd_eleicao: number;
  nr_federacao: number;
  sg_federacao: string;
  nm_federacao: string;
}

export interface CoalitionRow {
  sq_coligacao: string;
  cd_eleicao: number;
  nm_coligacao: string;
  ds_composicao: string;
}

export interface UnitRow {
  sg_ue: string;
  sg_uf: string;
  nm_ue: string;
  codigo_ibge: number | null;
}

export interface CandidacyRow {
  id: number;
  cd_eleicao: number;
  sq_candidato: string;
  sg_uf: string;
  sg_ue: string;
  cd_cargo: number;
  nr_candidato: number;
  nm_candidato: string;
  nm_urna_candidato: string;
  nm_busca: string;
  nr_cpf: string | null;
  nr_titulo_eleitoral: string | null;
  nr_partido: number;
  nr_federacao: number | null;
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
  row_hash: string;
  updated_at: Date;
}

export interface ImportRow {
  id: string;
  requested_by: number | null;
  source: string;
  sha256: string | null;
  state: 'queued' | 'running' | 'completed' | 'failed';
  rows_read: number;
  report: string | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
}

type Static<Row extends object> = ModelStatic<Model<Row, Partial<Row>>>;

export interface CourtModels {
  Election: Static<ElectionRow>;
  Office: Static<OfficeRow>;
  Code: Static<CodeRow>;
  Party: Static<PartyRow>;
  Federation: Static<FederationRow>;
  Coalition: Static<CoalitionRow>;
  Unit: Static<UnitRow>;
  Candidacy: Static<CandidacyRow>;
  Import: Static<ImportRow>;
}

const integer = DataTypes.INTEGER;
const text = DataTypes.STRING;
const key = (type: typeof DataTypes.INTEGER | typeof DataTypes.STRING) => ({ type, primaryKey: true });
const options = (tableName: string) => ({ tableName, timestamps: false });

/** Defines the models once per Sequelize instance (a second call returns the same ones). */
export function defineCourtModels(sequelize: Sequelize): CourtModels {
  if (sequelize.isDefined('TseElection')) return modelsOf(sequelize);
  sequelize.define('TseElection', {
    cd_eleicao: key(integer), ano: integer, cd_tipo_eleicao: integer, nr_turno: integer, ds_eleicao: text,
    dt_eleicao: DataTypes.DATEONLY, tp_abrangencia: text, updated_at: DataTypes.DATE,
  }, options('tse_elections'));
  sequelize.define('TseOffice', { cd_cargo: key(integer), ds_cargo: text, ballot_digits: integer }, options('tse_offices'));
  sequelize.define('TseCode', { code_table: key(text), code: key(integer), label: text }, options('tse_codes'));
  sequelize.define('TseParty', { cd_eleicao: key(integer), nr_partido: key(integer), sg_partido: text, nm_partido: text, nr_federacao: integer }, options('tse_parties'));
  sequelize.define('TseFederation', { cd_eleicao: key(integer), nr_federacao: key(integer), sg_federacao: text, nm_federacao: text }, options('tse_federations'));
  sequelize.define('TseCoalition', { sq_coligacao: key(text), cd_eleicao: integer, nm_coligacao: text, ds_composicao: text }, options('tse_coalitions'));
  sequelize.define('TseUnit', { sg_ue: key(text), sg_uf: text, nm_ue: text, codigo_ibge: integer }, options('tse_units'));
  sequelize.define('TseCandidacy', {
    id: { type: integer, primaryKey: true, autoIncrement: true },
    cd_eleicao: integer, sq_candidato: text, sg_uf: text, sg_ue: text, cd_cargo: integer, nr_candidato: integer,
    nm_candidato: text, nm_urna_candidato: text, nm_busca: text, nr_cpf: text, nr_titulo_eleitoral: text,
    nr_partido: integer, nr_federacao: integer, sq_coligacao: text, cd_nacionalidade: integer, sg_uf_nascimento: text,
    nm_municipio_nascimento: text, dt_nascimento: DataTypes.DATEONLY, cd_genero: integer, cd_grau_instrucao: integer,
    cd_estado_civil: integer, cd_cor_raca: integer, cd_ocupacao: integer, cd_situacao_candidatura: integer,
    cd_sit_tot_turno: integer, st_reeleicao: DataTypes.BOOLEAN, row_hash: text, updated_at: DataTypes.DATE,
  }, options('tse_candidacies'));
  sequelize.define('TseImport', {
    id: key(text), requested_by: integer, source: text, sha256: text, state: text, rows_read: integer,
    report: DataTypes.TEXT, error: DataTypes.TEXT, created_at: DataTypes.DATE, updated_at: DataTypes.DATE,
  }, options('tse_imports'));
  return modelsOf(sequelize);
}

function modelsOf(sequelize: Sequelize): CourtModels {
  const model = <Row extends object>(name: string) => sequelize.model(name) as Static<Row>;
  return {
    Election: model<ElectionRow>('TseElection'),
    Office: model<OfficeRow>('TseOffice'),
    Code: model<CodeRow>('TseCode'),
    Party: model<PartyRow>('TseParty'),
    Federation: model<FederationRow>('TseFederation'),
    Coalition: model<CoalitionRow>('TseCoalition'),
    Unit: model<UnitRow>('TseUnit'),
    Candidacy: model<CandidacyRow>('TseCandidacy'),
    Import: model<ImportRow>('TseImport'),
  };
}

/**
 * Ballot-number length by office (CD_CARGO), as the electoral law sets it: president, governor and
 * mayor 2 digits; senator 3; federal deputy 4; state and district deputy and councillor 5. Vices and
 * substitutes (suplentes) carry their head's number. An office the court adds later gets the length of
 * the numbers its file holds.
 */
export const BALLOT_DIGITS_BY_OFFICE: ReadonlyMap<number, number> = new Map([
  [1, 2], // PRESIDENTE
  [2, 2], // VICE-PRESIDENTE
  [3, 2], // GOVERNADOR
  [4, 2], // VICE-GOVERNADOR
  [5, 3], // SENADOR
  [6, 4], // DEPUTADO FEDERAL
  [7, 5], // DEPUTADO ESTADUAL
  [8, 5], // DEPUTADO DISTRITAL
  [9, 3], // 1º SUPLENTE (senator's)
  [10, 3], // 2º SUPLENTE
  [11, 2], // PREFEITO
  [12, 2], // VICE-PREFEITO
  [13, 5], // VEREADOR
]);
