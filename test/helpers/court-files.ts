/**
 * Candidacy files of the electoral court, generated in its exact layout and encoding for the tests and
 * the bench: Latin-1 bytes, `;` between values, every value in double quotes (a quote inside doubled), a
 * header row with the court's columns in its order, used and unused alike, and zips like the court's.
 *
 * No real personal data: the people are made up, and their CPFs and voter ids are generated from a seed
 * (deterministic, with valid check digits, so a test can recompute them). Parties, federations, offices,
 * code tables and municipalities are public reference data and are written as the court writes them.
 *
 * A line is a CourtLine: every column as the text the file holds ('#NULO#', '-4' and all), so a test can
 * put any value anywhere. `sampleCandidacy()` gives a valid line to override; SAMPLE_FILES is a ready
 * multi-state sample; `generateCandidacies(n)` makes n lines for the bench.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import iconv from 'iconv-lite';
import yazl from 'yazl';

/** The 2022 layout (consulta_cand_2022_*.csv): 71 columns, every one the import uses among them. */
export const COURT_COLUMNS_2022 = [
  'DT_GERACAO', 'HH_GERACAO', 'ANO_ELEICAO', 'CD_TIPO_ELEICAO', 'NM_TIPO_ELEICAO', 'NR_TURNO', 'CD_ELEICAO',
  'DS_ELEICAO', 'DT_ELEICAO', 'TP_ABRANGENCIA', 'SG_UF', 'SG_UE', 'NM_UE', 'CD_CARGO', 'DS_CARGO', 'SQ_CANDIDATO',
  'NR_CANDIDATO', 'NM_CANDIDATO', 'NM_URNA_CANDIDATO', 'NM_SOCIAL_CANDIDATO', 'NR_CPF_CANDIDATO', 'NM_EMAIL',
  'CD_SITUACAO_CANDIDATURA', 'DS_SITUACAO_CANDIDATURA', 'CD_DETALHE_SITUACAO_CAND', 'DS_DETALHE_SITUACAO_CAND',
  'TP_AGREMIACAO', 'NR_PARTIDO', 'SG_PARTIDO', 'NM_PARTIDO', 'NR_FEDERACAO', 'NM_FEDERACAO', 'SG_FEDERACAO',
  'DS_COMPOSICAO_FEDERACAO', 'SQ_COLIGACAO', 'NM_COLIGACAO', 'DS_COMPOSICAO_COLIGACAO', 'CD_NACIONALIDADE',
  'DS_NACIONALIDADE', 'SG_UF_NASCIMENTO', 'CD_MUNICIPIO_NASCIMENTO', 'NM_MUNICIPIO_NASCIMENTO', 'DT_NASCIMENTO',
  'NR_IDADE_DATA_POSSE', 'NR_TITULO_ELEITORAL_CANDIDATO', 'CD_GENERO', 'DS_GENERO', 'CD_GRAU_INSTRUCAO',
  'DS_GRAU_INSTRUCAO', 'CD_ESTADO_CIVIL', 'DS_ESTADO_CIVIL', 'CD_COR_RACA', 'DS_COR_RACA', 'CD_OCUPACAO',
  'DS_OCUPACAO', 'VR_DESPESA_MAX_CAMPANHA', 'CD_SIT_TOT_TURNO', 'DS_SIT_TOT_TURNO', 'ST_REELEICAO',
  'ST_DECLARAR_BENS', 'NR_PROTOCOLO_CANDIDATURA', 'NR_PROCESSO', 'CD_SITUACAO_CANDIDATO_PLEITO',
  'DS_SITUACAO_CANDIDATO_PLEITO', 'CD_SITUACAO_CANDIDATO_URNA', 'DS_SITUACAO_CANDIDATO_URNA',
  'ST_CANDIDATO_INSERIDO_URNA', 'NM_TIPO_DESTINACAO_VOTOS', 'CD_SITUACAO_CANDIDATO_TOT', 'DS_SITUACAO_CANDIDATO_TOT',
  'ST_PREST_CONTAS', 'ST_SUBSTITUIDO', 'SQ_SUBSTITUIDO', 'SQ_ORDEM_SUPLENCIA', 'DT_ACEITE_CANDIDATURA',
] as const;

/**
 * The 2024 layout (consulta_cand_2024_*.csv): 50 columns. The court dropped, among others,
 * CD_NACIONALIDADE, DS_NACIONALIDADE, NM_MUNICIPIO_NASCIMENTO and ST_REELEICAO, and renamed NM_EMAIL.
 */
export const COURT_COLUMNS_2024 = [
  'DT_GERACAO', 'HH_GERACAO', 'ANO_ELEICAO', 'CD_TIPO_ELEICAO', 'NM_TIPO_ELEICAO', 'NR_TURNO', 'CD_ELEICAO',
  'DS_ELEICAO', 'DT_ELEICAO', 'TP_ABRANGENCIA', 'SG_UF', 'SG_UE', 'NM_UE', 'CD_CARGO', 'DS_CARGO', 'SQ_CANDIDATO',
  'NR_CANDIDATO', 'NM_CANDIDATO', 'NM_URNA_CANDIDATO', 'NM_SOCIAL_CANDIDATO', 'NR_CPF_CANDIDATO', 'DS_EMAIL',
  'CD_SITUACAO_CANDIDATURA', 'DS_SITUACAO_CANDIDATURA', 'TP_AGREMIACAO', 'NR_PARTIDO', 'SG_PARTIDO', 'NM_PARTIDO',
  'NR_FEDERACAO', 'NM_FEDERACAO', 'SG_FEDERACAO', 'DS_COMPOSICAO_FEDERACAO', 'SQ_COLIGACAO', 'NM_COLIGACAO',
  'DS_COMPOSICAO_COLIGACAO', 'SG_UF_NASCIMENTO', 'DT_NASCIMENTO', 'NR_TITULO_ELEITORAL_CANDIDATO', 'CD_GENERO',
  'DS_GENERO', 'CD_GRAU_INSTRUCAO', 'DS_GRAU_INSTRUCAO', 'CD_ESTADO_CIVIL', 'DS_ESTADO_CIVIL', 'CD_COR_RACA',
  'DS_COR_RACA', 'CD_OCUPACAO', 'DS_OCUPACAO', 'CD_SIT_TOT_TURNO', 'DS_SIT_TOT_TURNO',
] as const;

export type CourtColumn = (typeof COURT_COLUMNS_2022)[number] | (typeof COURT_COLUMNS_2024)[number];

/** One line of a candidacy file: each column as the text the file holds. */
export type CourtLine = Record<CourtColumn, string>;

export interface CourtCsvOptions {
  /** The header, in order (default the 2022 layout); a column a line lacks is written '#NE'. */
  columns?: readonly string[];
  /** latin1 (default, the court's) or win1252 (to write the odd ’ the court's files carry). */
  encoding?: 'latin1' | 'win1252';
  /** The court's files end lines with \r\n; \n works too. */
  lineEnding?: '\r\n' | '\n';
}

// ---------------------------------------------------------------------------
// Fake identifiers, valid check digits
// ---------------------------------------------------------------------------

/** A CPF (11 digits) made from a seed, with valid check digits; nobody's. */
export function fakeCpf(seed: number): string {
  const base = String(100_000_000 + (Math.abs(Math.trunc(seed)) * 7_919) % 899_999_999).padStart(9, '0');
  const digit = (digits: string) => {
    let sum = 0;
    for (let index = 0; index < digits.length; index++) sum += Number(digits[index]) * (digits.length + 1 - index);
    const rest = (sum * 10) % 11;
    return rest === 10 ? 0 : rest;
  };
  const first = digit(base);
  return `${base}${first}${digit(`${base}${first}`)}`;
}

/** The voter-id state codes (01 SP, 02 MG ... 28 abroad). */
const VOTER_ID_STATES: Record<string, string> = {
  SP: '01', MG: '02', RJ: '03', RS: '04', BA: '05', PR: '06', CE: '07', PE: '08', SC: '09', GO: '10', MA: '11', PB: '12',
  PA: '13', ES: '14', PI: '15', RN: '16', AL: '17', MT: '18', MS: '19', DF: '20', SE: '21', AM: '22', RO: '23', AC: '24',
  AP: '25', RR: '26', TO: '27', ZZ: '28',
};

/** A voter id (título, 12 digits) of a state made from a seed, with valid check digits; nobody's. */
export function fakeVoterId(seed: number, state = 'SP'): string {
  const sequence = String((Math.abs(Math.trunc(seed)) * 48_271) % 100_000_000).padStart(8, '0');
  const uf = VOTER_ID_STATES[state] ?? '28';
  const zeroIsOne = uf === '01' || uf === '02'; // SP and MG: a remainder of 0 gives 1
  const checked = (sum: number) => {
    const rest = sum % 11;
    if (rest === 0 && zeroIsOne) return 1;
    return rest === 10 ? 0 : rest;
  };
  let sum = 0;
  for (let index = 0; index < 8; index++) sum += Number(sequence[index]) * (index + 2);
  const first = checked(sum);
  const second = checked(Number(uf[0]) * 7 + Number(uf[1]) * 8 + first * 9);
  return `${sequence}${uf}${first}${second}`;
}

// ---------------------------------------------------------------------------
// Elections, offices, parties, codes: the court's reference data
// ---------------------------------------------------------------------------

type ElectionColumns = Pick<CourtLine, 'ANO_ELEICAO' | 'CD_TIPO_ELEICAO' | 'NM_TIPO_ELEICAO' | 'NR_TURNO' | 'CD_ELEICAO' | 'DS_ELEICAO' | 'DT_ELEICAO' | 'TP_ABRANGENCIA'>;

const ordinary = { CD_TIPO_ELEICAO: '2', NM_TIPO_ELEICAO: 'ELEIÇÃO ORDINÁRIA' };

export const ELECTIONS = {
  municipal2024: { ...ordinary, ANO_ELEICAO: '2024', NR_TURNO: '1', CD_ELEICAO: '619', DS_ELEICAO: 'Eleições Municipais 2024', DT_ELEICAO: '06/10/2024', TP_ABRANGENCIA: 'MUNICIPAL' },
  federal2022: { ...ordinary, ANO_ELEICAO: '2022', NR_TURNO: '1', CD_ELEICAO: '544', DS_ELEICAO: 'Eleição Geral Federal 2022', DT_ELEICAO: '02/10/2022', TP_ABRANGENCIA: 'FEDERAL' },
  state2022: { ...ordinary, ANO_ELEICAO: '2022', NR_TURNO: '1', CD_ELEICAO: '546', DS_ELEICAO: 'Eleição Geral Estadual 2022', DT_ELEICAO: '02/10/2022', TP_ABRANGENCIA: 'ESTADUAL' },
} satisfies Record<string, ElectionColumns>;

export const OFFICES = {
  presidente: { CD_CARGO: '1', DS_CARGO: 'PRESIDENTE' },
  governador: { CD_CARGO: '3', DS_CARGO: 'GOVERNADOR' },
  senador: { CD_CARGO: '5', DS_CARGO: 'SENADOR' },
  deputadoFederal: { CD_CARGO: '6', DS_CARGO: 'DEPUTADO FEDERAL' },
  deputadoEstadual: { CD_CARGO: '7', DS_CARGO: 'DEPUTADO ESTADUAL' },
  prefeito: { CD_CARGO: '11', DS_CARGO: 'PREFEITO' },
  vicePrefeito: { CD_CARGO: '12', DS_CARGO: 'VICE-PREFEITO' },
  vereador: { CD_CARGO: '13', DS_CARGO: 'VEREADOR' },
} satisfies Record<string, Pick<CourtLine, 'CD_CARGO' | 'DS_CARGO'>>;

type PartyColumns = Pick<CourtLine, 'NR_PARTIDO' | 'SG_PARTIDO' | 'NM_PARTIDO' | 'TP_AGREMIACAO' | 'NR_FEDERACAO' | 'NM_FEDERACAO' | 'SG_FEDERACAO' | 'DS_COMPOSICAO_FEDERACAO'>;

const noFederation = { TP_AGREMIACAO: 'PARTIDO ISOLADO', NR_FEDERACAO: '-1', NM_FEDERACAO: '#NULO#', SG_FEDERACAO: '#NULO#', DS_COMPOSICAO_FEDERACAO: '#NULO#' };
const feBrasil = { TP_AGREMIACAO: 'FEDERAÇÃO', NR_FEDERACAO: '1', NM_FEDERACAO: 'Federação Brasil da Esperança - FE BRASIL', SG_FEDERACAO: 'FE BRASIL', DS_COMPOSICAO_FEDERACAO: 'PT/PC do B/PV' };
const psolRede = { TP_AGREMIACAO: 'FEDERAÇÃO', NR_FEDERACAO: '2', NM_FEDERACAO: 'Federação PSOL REDE', SG_FEDERACAO: 'PSOL/REDE', DS_COMPOSICAO_FEDERACAO: 'PSOL/REDE' };

export const PARTIES = {
  PT: { ...feBrasil, NR_PARTIDO: '13', SG_PARTIDO: 'PT', NM_PARTIDO: 'Partido dos Trabalhadores' },
  PV: { ...feBrasil, NR_PARTIDO: '43', SG_PARTIDO: 'PV', NM_PARTIDO: 'Partido Verde' },
  PSOL: { ...psolRede, NR_PARTIDO: '50', SG_PARTIDO: 'PSOL', NM_PARTIDO: 'Partido Socialismo e Liberdade' },
  MDB: { ...noFederation, NR_PARTIDO: '15', SG_PARTIDO: 'MDB', NM_PARTIDO: 'Movimento Democrático Brasileiro' },
  PSD: { ...noFederation, NR_PARTIDO: '55', SG_PARTIDO: 'PSD', NM_PARTIDO: 'Partido Social Democrático' },
  PL: { ...noFederation, NR_PARTIDO: '22', SG_PARTIDO: 'PL', NM_PARTIDO: 'Partido Liberal' },
} satisfies Record<string, PartyColumns>;

/** The court's code tables as its files label them (a few codes of each). */
export const CODES = {
  genero: { feminino: ['4', 'FEMININO'], masculino: ['2', 'MASCULINO'] },
  grau_instrucao: { superior: ['8', 'SUPERIOR COMPLETO'], medio: ['6', 'ENSINO MÉDIO COMPLETO'], fundamental: ['3', 'ENSINO FUNDAMENTAL INCOMPLETO'] },
  estado_civil: { solteiro: ['1', 'SOLTEIRO(A)'], casado: ['3', 'CASADO(A)'], divorciado: ['9', 'DIVORCIADO(A)'] },
  cor_raca: { branca: ['1', 'BRANCA'], preta: ['2', 'PRETA'], parda: ['3', 'PARDA'], indigena: ['5', 'INDÍGENA'] },
  ocupacao: { empresario: ['257', 'EMPRESÁRIO'], professor: ['277', 'PROFESSOR DE ENSINO MÉDIO'], vereador: ['296', 'VEREADOR'], outros: ['999', 'OUTROS'] },
  nacionalidade: { nata: ['1', 'BRASILEIRA NATA'] },
  situacao_candidatura: { apto: ['12', 'APTO'], inapto: ['3', 'INAPTO'] },
  sit_tot_turno: { eleito: ['1', 'ELEITO'], naoEleito: ['4', 'NÃO ELEITO'], suplente: ['5', 'SUPLENTE'], segundoTurno: ['6', '2º TURNO'] },
} as const;

const code = (cd: string, ds: string, [value, label]: readonly [string, string]) => ({ [cd]: value, [ds]: label }) as Partial<CourtLine>;

// ---------------------------------------------------------------------------
// Lines and files
// ---------------------------------------------------------------------------

/** What the court writes in the columns the import does not read. */
const UNUSED_DEFAULTS: Partial<CourtLine> = {
  DT_GERACAO: '15/09/2024', HH_GERACAO: '02:10:35', NM_SOCIAL_CANDIDATO: '#NULO#', NM_EMAIL: '#NULO#', DS_EMAIL: '#NULO#',
  CD_DETALHE_SITUACAO_CAND: '2', DS_DETALHE_SITUACAO_CAND: 'DEFERIDO', CD_MUNICIPIO_NASCIMENTO: '-3', NR_IDADE_DATA_POSSE: '45',
  VR_DESPESA_MAX_CAMPANHA: '-1', ST_DECLARAR_BENS: 'S', NR_PROTOCOLO_CANDIDATURA: '-1', NR_PROCESSO: '06001234520246260001',
  CD_SITUACAO_CANDIDATO_PLEITO: '2', DS_SITUACAO_CANDIDATO_PLEITO: 'DEFERIDO', CD_SITUACAO_CANDIDATO_URNA: '2',
  DS_SITUACAO_CANDIDATO_URNA: 'DEFERIDO', ST_CANDIDATO_INSERIDO_URNA: 'SIM', NM_TIPO_DESTINACAO_VOTOS: 'Válido',
  CD_SITUACAO_CANDIDATO_TOT: '2', DS_SITUACAO_CANDIDATO_TOT: 'DEFERIDO', ST_PREST_CONTAS: 'S', ST_SUBSTITUIDO: 'N',
  SQ_SUBSTITUIDO: '-1', SQ_ORDEM_SUPLENCIA: '-1', DT_ACEITE_CANDIDATURA: '15/08/2024',
};

/**
 * A valid line, a mayoral candidacy in São Paulo in 2024 unless overridden. Its CPF and voter id come
 * from `seed` (the SQ_CANDIDATO's digits unless given).
 */
export function sampleCandidacy(overrides: Partial<CourtLine> = {}, seed?: number): CourtLine {
  const sq = overrides.SQ_CANDIDATO ?? '250001600001';
  const identity = seed ?? (Number(sq.slice(-7)) || 0);
  const state = overrides.SG_UF && overrides.SG_UF.length === 2 ? overrides.SG_UF : 'SP';
  return {
    ...(UNUSED_DEFAULTS as CourtLine),
    ...ELECTIONS.municipal2024,
    SG_UF: 'SP', SG_UE: '71072', NM_UE: 'SÃO PAULO',
    ...OFFICES.prefeito,
    SQ_CANDIDATO: sq, NR_CANDIDATO: '15', NM_CANDIDATO: 'MARIA DAS GRAÇAS FICTÍCIA', NM_URNA_CANDIDATO: 'MARIA DAS GRAÇAS',
    NR_CPF_CANDIDATO: fakeCpf(identity),
    ...code('CD_SITUACAO_CANDIDATURA', 'DS_SITUACAO_CANDIDATURA', CODES.situacao_candidatura.apto),
    ...PARTIES.MDB,
    SQ_COLIGACAO: '250001900001', NM_COLIGACAO: 'PARTIDO ISOLADO', DS_COMPOSICAO_COLIGACAO: 'MDB',
    ...code('CD_NACIONALIDADE', 'DS_NACIONALIDADE', CODES.nacionalidade.nata),
    SG_UF_NASCIMENTO: 'SP', NM_MUNICIPIO_NASCIMENTO: 'SÃO PAULO', DT_NASCIMENTO: '12/03/1975',
    NR_TITULO_ELEITORAL_CANDIDATO: fakeVoterId(identity, state === 'BR' ? 'SP' : state),
    ...code('CD_GENERO', 'DS_GENERO', CODES.genero.feminino),
    ...code('CD_GRAU_INSTRUCAO', 'DS_GRAU_INSTRUCAO', CODES.grau_instrucao.superior),
    ...code('CD_ESTADO_CIVIL', 'DS_ESTADO_CIVIL', CODES.estado_civil.casado),
    ...code('CD_COR_RACA', 'DS_COR_RACA', CODES.cor_raca.parda),
    ...code('CD_OCUPACAO', 'DS_OCUPACAO', CODES.ocupacao.empresario),
    CD_SIT_TOT_TURNO: '-1', DS_SIT_TOT_TURNO: '#NULO#',
    ST_REELEICAO: 'N',
    ...overrides,
  } as CourtLine;
}

/** A value as the court writes it: in double quotes, a quote inside doubled. */
function quoted(value: string): string {
  return `"${value.replace(/"/g, '""')}"`;
}

function csvText(lines: Iterable<Partial<CourtLine>>, columns: readonly string[], lineEnding: string): string {
  const rows = [columns.map(quoted).join(';')];
  for (const line of lines) rows.push(columns.map((column) => quoted(line[column as CourtColumn] ?? '#NE')).join(';'));
  return rows.join(lineEnding) + lineEnding;
}

/** A candidacy file's bytes: header, then the lines, in the court's layout and encoding. */
export function courtCsv(lines: Iterable<Partial<CourtLine>>, options: CourtCsvOptions = {}): Buffer {
  const { columns = COURT_COLUMNS_2022, encoding = 'latin1', lineEnding = '\r\n' } = options;
  return iconv.encode(csvText(lines, columns, lineEnding), encoding);
}

/** Writes a candidacy file of any size to `path` a thousand lines at a time (the bench's 100,000). */
export async function writeCourtCsv(path: string, lines: Iterable<Partial<CourtLine>>, options: CourtCsvOptions = {}): Promise<void> {
  const { columns = COURT_COLUMNS_2022, encoding = 'latin1', lineEnding = '\r\n' } = options;
  const out = createWriteStream(path);
  const write = async (text: string) => {
    if (!out.write(iconv.encode(text, encoding))) await once(out, 'drain');
  };
  await write(columns.map(quoted).join(';') + lineEnding);
  let chunk: string[] = [];
  for (const line of lines) {
    chunk.push(columns.map((column) => quoted(line[column as CourtColumn] ?? '#NE')).join(';'));
    if (chunk.length === 1000) {
      await write(chunk.join(lineEnding) + lineEnding);
      chunk = [];
    }
  }
  if (chunk.length > 0) await write(chunk.join(lineEnding) + lineEnding);
  out.end();
  await once(out, 'close');
}

/** A zip of files, as the court publishes them (candidacy files beside a leiame.pdf). */
export async function courtZip(files: Array<{ name: string; content: Buffer | string }>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const { name, content } of files) zip.addBuffer(Buffer.isBuffer(content) ? content : Buffer.from(content), name);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

// ---------------------------------------------------------------------------
// The ready sample: 2024 municipal in SP and MG, 2022 general in SP and BR
// ---------------------------------------------------------------------------

/**
 * The court's units in the sample, by name and code as the court writes them (its own 5-digit codes:
 * the SIAFI code plus a check digit for most, another code for some), with the IBGE code each must map to
 * (null: none). src/elections/tse/municipality-codes.ts says how they map.
 */
export const SAMPLE_UNITS = {
  saoPaulo: { SG_UF: 'SP', SG_UE: '71072', NM_UE: 'SÃO PAULO', ibge: 3550308 },
  santaBarbara: { SG_UF: 'SP', SG_UE: '70173', NM_UE: "SANTA BÁRBARA D'OESTE", ibge: 3545803 },
  embu: { SG_UF: 'SP', SG_UE: '64017', NM_UE: 'EMBU DAS ARTES', ibge: 3515004 },
  // The court's spelling is not IBGE's ("São Luiz do Paraitinga"); the code (SIAFI 7101) maps it.
  saoLuis: { SG_UF: 'SP', SG_UE: '71013', NM_UE: 'SÃO LUÍS DO PARAITINGA', ibge: 3550001 },
  beloHorizonte: { SG_UF: 'MG', SG_UE: '41238', NM_UE: 'BELO HORIZONTE', ibge: 3106200 },
  // The court's code is not SIAFI-based (SIAFI 0688): mapped by name, the reported fallback.
  pingoDagua: { SG_UF: 'MG', SG_UE: '41360', NM_UE: "PINGO D'ÁGUA", ibge: 3150539 },
  // IBGE writes Brazópolis; the code (SIAFI 4177) maps it.
  brasopolis: { SG_UF: 'MG', SG_UE: '41777', NM_UE: 'BRASÓPOLIS', ibge: 3108909 },
  stateSp: { SG_UF: 'SP', SG_UE: 'SP', NM_UE: 'SÃO PAULO', ibge: null },
  brazil: { SG_UF: 'BR', SG_UE: 'BR', NM_UE: 'BRASIL', ibge: null },
} as const;

const unit = ({ SG_UF, SG_UE, NM_UE }: (typeof SAMPLE_UNITS)[keyof typeof SAMPLE_UNITS]) => ({ SG_UF, SG_UE, NM_UE });

const municipal2024SP: CourtLine[] = [
  sampleCandidacy({ ...unit(SAMPLE_UNITS.saoPaulo), SQ_CANDIDATO: '250001600001' }),
  sampleCandidacy({
    ...unit(SAMPLE_UNITS.saoPaulo), ...OFFICES.vicePrefeito, SQ_CANDIDATO: '250001600002', NR_CANDIDATO: '15',
    NM_CANDIDATO: 'JOÃO BATISTA DE ASSUNÇÃO', NM_URNA_CANDIDATO: 'JOÃO DO BAIRRO', ...code('CD_GENERO', 'DS_GENERO', CODES.genero.masculino),
  }),
  sampleCandidacy({
    ...unit(SAMPLE_UNITS.saoPaulo), ...PARTIES.PSOL, SQ_CANDIDATO: '250001600003', NR_CANDIDATO: '50',
    NM_CANDIDATO: 'ANA LÚCIA CONCEIÇÃO', NM_URNA_CANDIDATO: 'ANA LÚCIA', SQ_COLIGACAO: '250001900002',
    NM_COLIGACAO: 'AMOR POR SÃO PAULO', DS_COMPOSICAO_COLIGACAO: 'Federação PSOL REDE(PSOL/REDE) / Federação Brasil da Esperança - FE BRASIL(PT/PC do B/PV) / PDT',
  }),
  // Quotes inside a value, a withheld CPF and voter id, race withheld, no birth date.
  sampleCandidacy({
    ...unit(SAMPLE_UNITS.saoPaulo), ...OFFICES.vereador, ...PARTIES.PT, SQ_CANDIDATO: '250001600004', NR_CANDIDATO: '13123',
    NM_CANDIDATO: 'JOSÉ APARECIDO DOS SANTOS', NM_URNA_CANDIDATO: 'ZÉ "DO POVO"', NR_CPF_CANDIDATO: '-4',
    NR_TITULO_ELEITORAL_CANDIDATO: '-4', CD_COR_RACA: '-4', DS_COR_RACA: '#NE', DT_NASCIMENTO: '#NULO#',
    SQ_COLIGACAO: '-1', NM_COLIGACAO: '#NULO#', DS_COMPOSICAO_COLIGACAO: '#NULO#', ...code('CD_GENERO', 'DS_GENERO', CODES.genero.masculino),
  }),
  sampleCandidacy({
    ...unit(SAMPLE_UNITS.santaBarbara), ...OFFICES.vereador, ...PARTIES.PV, SQ_CANDIDATO: '250001600005', NR_CANDIDATO: '43210',
    NM_CANDIDATO: "MARIA D'ÁVILA CAMARGO", NM_URNA_CANDIDATO: "PROFESSORA MARIA D'ÁVILA", ...code('CD_OCUPACAO', 'DS_OCUPACAO', CODES.ocupacao.professor),
  }),
  sampleCandidacy({
    ...unit(SAMPLE_UNITS.embu), ...OFFICES.prefeito, ...PARTIES.PSD, SQ_CANDIDATO: '250001600006', NR_CANDIDATO: '55',
    NM_CANDIDATO: 'CARLOS EDUARDO ÍNDIO DA SILVA', NM_URNA_CANDIDATO: 'CACÁ', ...code('CD_COR_RACA', 'DS_COR_RACA', CODES.cor_raca.indigena),
  }),
  sampleCandidacy({
    ...unit(SAMPLE_UNITS.saoLuis), ...OFFICES.vereador, ...PARTIES.PL, SQ_CANDIDATO: '250001600007', NR_CANDIDATO: '22333',
    NM_CANDIDATO: 'BENEDITO ARAÚJO', NM_URNA_CANDIDATO: 'DITO ARAÚJO',
  }),
];

const municipal2024MG: CourtLine[] = [
  sampleCandidacy({
    ...unit(SAMPLE_UNITS.beloHorizonte), ...PARTIES.PT, SQ_CANDIDATO: '130001700001', NR_CANDIDATO: '13',
    NM_CANDIDATO: 'HELENA MÜLLER FICTÍCIA', NM_URNA_CANDIDATO: 'HELENA', SG_UF_NASCIMENTO: 'MG', NM_MUNICIPIO_NASCIMENTO: 'BELO HORIZONTE',
  }),
  sampleCandidacy({
    ...unit(SAMPLE_UNITS.beloHorizonte), ...OFFICES.vereador, ...PARTIES.MDB, SQ_CANDIDATO: '130001700002', NR_CANDIDATO: '15015',
    NM_CANDIDATO: 'PAULO HENRIQUE GONÇALVES', NM_URNA_CANDIDATO: 'PAULÃO', ...code('CD_GENERO', 'DS_GENERO', CODES.genero.masculino),
    ...code('CD_SIT_TOT_TURNO', 'DS_SIT_TOT_TURNO', CODES.sit_tot_turno.suplente),
  }),
  sampleCandidacy({
    ...unit(SAMPLE_UNITS.pingoDagua), ...OFFICES.prefeito, ...PARTIES.PSD, SQ_CANDIDATO: '130001700003', NR_CANDIDATO: '55',
    NM_CANDIDATO: 'SEBASTIÃO CORRÊA', NM_URNA_CANDIDATO: 'TIÃO', ...code('CD_GRAU_INSTRUCAO', 'DS_GRAU_INSTRUCAO', CODES.grau_instrucao.medio),
  }),
  sampleCandidacy({
    ...unit(SAMPLE_UNITS.brasopolis), ...OFFICES.vereador, ...PARTIES.PL, SQ_CANDIDATO: '130001700004', NR_CANDIDATO: '22022',
    NM_CANDIDATO: 'GERALDA DE FÁTIMA', NM_URNA_CANDIDATO: 'GERALDA',
  }),
];

const general2022SP: CourtLine[] = [
  sampleCandidacy({
    ...ELECTIONS.state2022, ...unit(SAMPLE_UNITS.stateSp), ...OFFICES.governador, ...PARTIES.PSD, SQ_CANDIDATO: '250001610001',
    NR_CANDIDATO: '55', NM_CANDIDATO: 'RICARDO AUGUSTO FICTÍCIO', NM_URNA_CANDIDATO: 'RICARDO AUGUSTO',
    ...code('CD_GENERO', 'DS_GENERO', CODES.genero.masculino), ...code('CD_SIT_TOT_TURNO', 'DS_SIT_TOT_TURNO', CODES.sit_tot_turno.naoEleito),
    DT_GERACAO: '15/03/2023', SQ_COLIGACAO: '250001910001', NM_COLIGACAO: 'SÃO PAULO PRA FRENTE', DS_COMPOSICAO_COLIGACAO: 'PSD / MDB',
  }),
  sampleCandidacy({
    ...ELECTIONS.state2022, ...unit(SAMPLE_UNITS.stateSp), ...OFFICES.deputadoEstadual, ...PARTIES.PT, SQ_CANDIDATO: '250001610002',
    NR_CANDIDATO: '13013', NM_CANDIDATO: 'TEREZINHA ASSIS', NM_URNA_CANDIDATO: 'TEREZINHA DA SAÚDE', ST_REELEICAO: 'S',
    ...code('CD_SIT_TOT_TURNO', 'DS_SIT_TOT_TURNO', CODES.sit_tot_turno.eleito),
  }),
  sampleCandidacy({
    ...ELECTIONS.federal2022, ...unit(SAMPLE_UNITS.stateSp), ...OFFICES.deputadoFederal, ...PARTIES.PSOL, SQ_CANDIDATO: '250001620001',
    NR_CANDIDATO: '5005', NM_CANDIDATO: 'RAFAEL NOGUEIRA FICTÍCIO', NM_URNA_CANDIDATO: 'RAFA NOGUEIRA',
    ...code('CD_GENERO', 'DS_GENERO', CODES.genero.masculino), ...code('CD_SIT_TOT_TURNO', 'DS_SIT_TOT_TURNO', CODES.sit_tot_turno.suplente),
  }),
  sampleCandidacy({
    ...ELECTIONS.federal2022, ...unit(SAMPLE_UNITS.stateSp), ...OFFICES.senador, ...PARTIES.PL, SQ_CANDIDATO: '250001620002',
    NR_CANDIDATO: '222', NM_CANDIDATO: 'CLÁUDIA REGINA FICTÍCIA', NM_URNA_CANDIDATO: 'CLÁUDIA REGINA',
    ...code('CD_SIT_TOT_TURNO', 'DS_SIT_TOT_TURNO', CODES.sit_tot_turno.eleito),
  }),
];

const general2022BR: CourtLine[] = [
  sampleCandidacy({
    ...ELECTIONS.federal2022, ...unit(SAMPLE_UNITS.brazil), ...OFFICES.presidente, ...PARTIES.PV, SQ_CANDIDATO: '280001600001',
    NR_CANDIDATO: '43', NM_CANDIDATO: 'ANTÔNIO CARLOS FICTÍCIO', NM_URNA_CANDIDATO: 'TONINHO', SG_UF_NASCIMENTO: 'BA',
    NM_MUNICIPIO_NASCIMENTO: 'SALVADOR', ...code('CD_GENERO', 'DS_GENERO', CODES.genero.masculino),
    ...code('CD_SIT_TOT_TURNO', 'DS_SIT_TOT_TURNO', CODES.sit_tot_turno.segundoTurno), SQ_COLIGACAO: '280001900001',
    NM_COLIGACAO: 'BRASIL DA ESPERANÇA', DS_COMPOSICAO_COLIGACAO: 'Federação Brasil da Esperança - FE BRASIL(PT/PC do B/PV) / PSB',
  }),
];

/**
 * The ready sample, one entry per file of the court's zips: 2024 in the 2024 layout (SP, MG and the
 * national _BRASIL file holding both), 2022 in the 2022 layout (SP and BR, and _BRASIL).
 */
export const SAMPLE_FILES: ReadonlyArray<{ name: string; lines: CourtLine[]; columns: readonly string[] }> = [
  { name: 'consulta_cand_2024_SP.csv', lines: municipal2024SP, columns: COURT_COLUMNS_2024 },
  { name: 'consulta_cand_2024_MG.csv', lines: municipal2024MG, columns: COURT_COLUMNS_2024 },
  { name: 'consulta_cand_2024_BRASIL.csv', lines: [...municipal2024SP, ...municipal2024MG], columns: COURT_COLUMNS_2024 },
  { name: 'consulta_cand_2022_BR.csv', lines: general2022BR, columns: COURT_COLUMNS_2022 },
  { name: 'consulta_cand_2022_SP.csv', lines: general2022SP, columns: COURT_COLUMNS_2022 },
  { name: 'consulta_cand_2022_BRASIL.csv', lines: [...general2022BR, ...general2022SP], columns: COURT_COLUMNS_2022 },
];

/** Distinct candidacies in the sample (the _BRASIL files repeat the others). */
export const SAMPLE_CANDIDACIES = municipal2024SP.length + municipal2024MG.length + general2022SP.length + general2022BR.length;

/** The court's layout notes, as its zips carry them beside the files (the import must ignore it). */
const LEIAME = '%PDF-1.4\n% leiame: layout of the candidacy files (stand-in)\n';

/** The sample as one zip of the court's kind (`withBrasil: false` leaves out the _BRASIL files). */
export function sampleZip(options: { withBrasil?: boolean } = {}): Promise<Buffer> {
  const files = SAMPLE_FILES.filter((file) => options.withBrasil !== false || !file.name.includes('_BRASIL'));
  return courtZip([
    { name: 'leiame.pdf', content: LEIAME },
    ...files.map((file) => ({ name: file.name, content: courtCsv(file.lines, { columns: file.columns }) })),
  ]);
}

// ---------------------------------------------------------------------------
// Many lines, for the bench
// ---------------------------------------------------------------------------

const BENCH_UNITS = [
  SAMPLE_UNITS.saoPaulo, SAMPLE_UNITS.santaBarbara, SAMPLE_UNITS.embu, SAMPLE_UNITS.saoLuis,
  { SG_UF: 'SP', SG_UE: '62910', NM_UE: 'CAMPINAS' }, { SG_UF: 'SP', SG_UE: '70718', NM_UE: 'SANTOS' },
  { SG_UF: 'SP', SG_UE: '64777', NM_UE: 'GUARULHOS' }, { SG_UF: 'SP', SG_UE: '69698', NM_UE: 'RIBEIRÃO PRETO' },
] as const;
const FIRST_NAMES = ['MARIA', 'JOSÉ', 'ANA', 'JOÃO', 'ANTÔNIO', 'FRANCISCA', 'LUÍS', 'CONCEIÇÃO', 'SEBASTIÃO', 'LÚCIA'];
const LAST_NAMES = ['DA SILVA', 'DOS SANTOS', 'PEREIRA', 'GONÇALVES', 'D\'ÁVILA', 'ARAÚJO', 'CORRÊA', 'FICTÍCIO'];
const BENCH_PARTIES = Object.values(PARTIES);

/**
 * `count` valid lines of the 2024 municipal election in SP (councillors, a mayor per unit now and then),
 * each with its own SQ_CANDIDATO, name, ballot number and fake CPF; lazily, so 100,000 cost no memory.
 */
export function* generateCandidacies(count: number, options: { firstSq?: number } = {}): Generator<CourtLine> {
  const base = sampleCandidacy();
  const firstSq = options.firstSq ?? 250_002_000_000;
  for (let index = 0; index < count; index++) {
    const party = BENCH_PARTIES[index % BENCH_PARTIES.length] as PartyColumns;
    const mayor = index % 50 === 0;
    const name = `${FIRST_NAMES[index % FIRST_NAMES.length]} ${FIRST_NAMES[(index >> 3) % FIRST_NAMES.length]} ${LAST_NAMES[index % LAST_NAMES.length]} ${index}`;
    yield {
      ...base,
      ...unit(BENCH_UNITS[index % BENCH_UNITS.length] as (typeof BENCH_UNITS)[0]),
      ...(mayor ? OFFICES.prefeito : OFFICES.vereador),
      ...party,
      SQ_CANDIDATO: String(firstSq + index),
      NR_CANDIDATO: mayor ? party.NR_PARTIDO : `${party.NR_PARTIDO}${String(index % 1000).padStart(3, '0')}`,
      NM_CANDIDATO: name,
      NM_URNA_CANDIDATO: name.split(' ').slice(0, 2).join(' '),
      NR_CPF_CANDIDATO: fakeCpf(index + 1),
      NR_TITULO_ELEITORAL_CANDIDATO: fakeVoterId(index + 1, 'SP'),
    };
  }
}
