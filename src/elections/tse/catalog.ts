/**
 * The everyday reads of the electoral court's data (issue 22): elections, offices, the parties and
 * federations of an election, the code tables, the candidacy search and one candidacy, each one plain
 * SELECT (or two) on the Reader (src/db/reader.ts), never through Sequelize's model layer.
 *
 * What holds:
 * - `version()` changes whenever an import writes: it reads the newest `updated_at` and the number of
 *   the elections (the import marks every election it writes to, import.ts, and a deleted election takes
 *   its rows with it) and the highest candidacy id (a candidacy inserted by any other writer, such as
 *   demo-data.ts). Each is an aggregate over a small table or a primary key, so asking costs a few index
 *   reads, and the answers' ETags (read-handlers.ts) are built on it without reading the data they stand
 *   for. A writer that changes rows in place without marking their election must mark it too.
 * - The search reads only candidacies matching every filter given; its SQL text depends only on which
 *   filters are given (and, for a party acronym, on how many party numbers it names: one in practice),
 *   so the Reader prepares a bounded number of texts. The filters use the indexes of migration 0026:
 *   (cd_eleicao, sg_uf, cd_cargo), (cd_eleicao, nr_candidato), (cd_eleicao, nr_partido) and sg_ue.
 *   A name is a LIKE on `nm_busca` (names.ts's normalised names), which no index serves: with no other
 *   filter it reads every candidacy.
 * - Personal data (CPF, voter id, race) leaves this module whole, in `CandidacyRecord`, and only from
 *   `candidacy()`; masking it is the handler's (read-handlers.ts), with the entities' masks. A search
 *   result carries none.
 */
import type { Sequelize } from 'sequelize';
import type { components } from '../../../sdk/schema.js';
import type { RegisteredParty } from '@palanque/rules/registered-parties';
import { asIsoTimestamp, asNumber, readerOf, type Reader } from '../../db/reader.js';
import { CODE_TABLES, type CodeTable, type ElectionRow } from './models.js';
import { normaliseName } from './names.js';

type Schemas = components['schemas'];
export type CourtElection = Schemas['CourtElection'];
export type CourtOffice = Schemas['CourtOffice'];
export type CourtCode = Schemas['CourtCode'];
export type CandidacySummary = Schemas['CandidacySummary'];
export type CourtElectionParties = Schemas['CourtElectionParties'];
export type CourtCodeTables = Schemas['CourtCodeTables'];
/** A candidacy with every personal field whole: the whole view, before any mask. */
export type CandidacyRecord = Omit<Schemas['Candidacy'], 'personal_data' | 'cpf' | 'titulo_eleitor'> & {
  /** 11 digits, as the court writes it; null when withheld. */
  cpf: string | null;
  titulo_eleitor: string | null;
};

/** How many results a page of the search holds. */
export const CANDIDACIES_PER_PAGE = 30;

type Labels = Map<CodeTable, Map<number, string>>;

/** The search's filters, as checked by the contract (each optional; all given must hold). */
export interface CandidacyFilters {
  /** Words of the civil or ballot name, as typed. */
  nome?: string;
  nr_candidato?: number;
  /** The party's numbers, resolved from a number or an acronym (`partyNumbers`). */
  partidos?: number[];
  cd_cargo?: number;
  uf?: string;
  codigo_ibge?: number;
  cd_eleicao?: number;
}

/** The words of a name as the search matches them: `normaliseName`'s, without any other punctuation. */
export function searchWords(nome: string): string[] {
  return normaliseName(nome)
    .split(' ')
    .map((word) => word.replace(/[^\p{L}\p{N}]/gu, ''))
    .filter((word) => word !== '');
}

/** A party acronym as people type it and the court writes it: upper case, no accents, no spaces. */
const acronymKey = (acronym: string) => normaliseName(acronym).replace(/ /g, '').toUpperCase();

/** The court's data as the everyday reads see it; `current()` gives its version with it. */
export class CourtCatalog {
  /** The code tables as last read, with the version they were read at: they change only with an import. */
  private codes: { version: string; labels: Labels } | undefined;

  constructor(private readonly sequelize: Sequelize) {}

  /**
   * The data at its current version: the version an answer's ETag names, and the reads of that answer.
   * An import that writes between the two makes the answer newer than its tag, never older: the next
   * request reads the new version, and its tag differs.
   */
  async current(): Promise<CourtData> {
    const version = await this.version();
    const reader = readerOf(this.sequelize);
    if (this.codes?.version !== version) this.codes = { version, labels: await readLabels(reader) };
    return new CourtData(reader, version, this.codes.labels);
  }

  /** The parties registered with the court (registered_parties, migration 0037), by number then registration. */
  async registeredParties(): Promise<RegisteredParty[]> {
    return readRegisteredParties(readerOf(this.sequelize));
  }

  /** The version of the court's data: changes whenever an import writes (see the top of this file). */
  async version(): Promise<string> {
    const row = await readerOf(this.sequelize).row<Record<string, unknown>>(VERSION_SQL);
    return JSON.stringify(Object.values(row ?? {}).map((value) => (value === null || value === undefined ? null : value instanceof Date ? value.toISOString() : String(value))));
  }
}

/** The registered_parties table, as packages/rules/src/registered-parties.ts types it, by number then registration. */
export async function readRegisteredParties(reader: Reader): Promise<RegisteredParty[]> {
  const rows = await reader.rows<Omit<RegisteredParty, 'nomes_anteriores'> & { nomes_anteriores: string }>(
    'SELECT nr_partido, sg_partido, nm_partido, dt_registro, dt_extincao, tp_extincao, sg_sucessor, nomes_anteriores FROM registered_parties ORDER BY nr_partido, dt_registro',
  );
  return rows.map((row) => ({
    ...row,
    nr_partido: Number(row.nr_partido),
    dt_registro: dateOnly(row.dt_registro)!,
    dt_extincao: row.dt_extincao === null ? null : dateOnly(row.dt_extincao),
    nomes_anteriores: JSON.parse(row.nomes_anteriores) as string[],
  }));
}

/** Every code's label, by table. */
async function readLabels(reader: Reader): Promise<Labels> {
  const rows = await reader.rows<{ code_table: CodeTable; code: number; label: string }>('SELECT code_table, code, label FROM tse_codes ORDER BY code_table, code');
  const labels: Labels = new Map();
  for (const row of rows) {
    const table = labels.get(row.code_table) ?? new Map<number, string>();
    table.set(asNumber(row.code), row.label);
    labels.set(row.code_table, table);
  }
  return labels;
}

export class CourtData {
  constructor(
    private readonly reader: Reader,
    /** Changes whenever an import writes (see the top of this file). */
    readonly version: string,
    private readonly labels: Labels,
  ) {}

  async elections(filters: { ano?: number; abrangencia?: string }): Promise<CourtElection[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    if (filters.ano !== undefined) (where.push('e.ano = ?'), values.push(filters.ano));
    if (filters.abrangencia !== undefined) (where.push('e.tp_abrangencia = ?'), values.push(filters.abrangencia));
    const rows = await this.reader.rows<ElectionColumns>(
      `SELECT ${ELECTION_COLUMNS} FROM tse_elections e ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY e.dt_eleicao DESC, e.cd_eleicao`,
      values,
    );
    return rows.map((row) => electionOf(row, this.labels));
  }

  async election(cdEleicao: number): Promise<CourtElection | undefined> {
    const row = await this.reader.row<ElectionColumns>(`SELECT ${ELECTION_COLUMNS} FROM tse_elections e WHERE e.cd_eleicao = ?`, [cdEleicao]);
    return row && electionOf(row, this.labels);
  }

  async offices(): Promise<CourtOffice[]> {
    return this.reader.rows<CourtOffice>('SELECT cd_cargo, ds_cargo, ballot_digits FROM tse_offices ORDER BY cd_cargo');
  }

  /** The parties and federations of an election; undefined when it is not loaded. */
  async parties(cdEleicao: number): Promise<CourtElectionParties | undefined> {
    const eleicao = await this.election(cdEleicao);
    if (!eleicao) return undefined;
    const [partidos, federations] = await Promise.all([
      this.reader.rows<CourtElectionParties['partidos'][number]>(
        'SELECT nr_partido, sg_partido, nm_partido, nr_federacao FROM tse_parties WHERE cd_eleicao = ? ORDER BY nr_partido',
        [cdEleicao],
      ),
      this.reader.rows<Omit<CourtElectionParties['federacoes'][number], 'partidos'>>(
        'SELECT nr_federacao, sg_federacao, nm_federacao FROM tse_federations WHERE cd_eleicao = ? ORDER BY nr_federacao',
        [cdEleicao],
      ),
    ]);
    const federacoes = federations.map((federation) => ({
      ...federation,
      partidos: partidos.filter((party) => party.nr_federacao === federation.nr_federacao).map((party) => party.nr_partido),
    }));
    return { eleicao, partidos, federacoes };
  }

  /** The code tables (only `table`, when given), each by code. */
  async codeTables(table?: CodeTable): Promise<CourtCodeTables> {
    const labels = this.labels;
    const tables = table ? [table] : [...CODE_TABLES];
    return Object.fromEntries(tables.map((name) => [name, [...(labels.get(name) ?? new Map<number, string>())].map(([code, label]) => ({ code, label }))]));
  }

  /**
   * The party numbers a search's `partido` names: its number, or the numbers of the parties of any
   * loaded election (only `cd_eleicao`'s, when given) whose acronym matches ignoring case, accents and
   * spaces. Empty for an acronym nobody has.
   */
  async partyNumbers(partido: string, cdEleicao?: number): Promise<number[]> {
    if (/^[0-9]+$/.test(partido)) return [Number(partido)];
    const parties = await this.reader.rows<{ nr_partido: number; sg_partido: string }>(
      `SELECT DISTINCT nr_partido, sg_partido FROM tse_parties ${cdEleicao === undefined ? '' : 'WHERE cd_eleicao = ?'}`,
      cdEleicao === undefined ? [] : [cdEleicao],
    );
    const wanted = acronymKey(partido);
    return [...new Set(parties.filter((party) => acronymKey(party.sg_partido) === wanted).map((party) => party.nr_partido))].sort((a, b) => a - b);
  }

  /**
   * One page of the candidacies matching `filters`, and how many match in all. By `nm_busca` (the civil
   * name, without case or accents: the same order on both databases), then id.
   */
  async search(filters: CandidacyFilters, page: number): Promise<{ total: number; results: CandidacySummary[] }> {
    const { where, values } = searchConditions(filters);
    const whereSql = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    // The page's ids first, in the order an index of migration 0026 keeps (election, state and office,
    // or election alone, then the name), so the page is read in order and not sorted; the joins only for
    // those 30. The count is its own query: a count beside the page (a window) would make the database
    // read and sort every match for each page.
    const pageOfRows = this.reader.rows<SummaryColumns>(
      `WITH page AS (
         SELECT c.id FROM tse_candidacies c ${whereSql}
         ORDER BY c.nm_busca, c.id LIMIT ? OFFSET ?
       )
       SELECT c.id, c.cd_eleicao, e.ano, c.sq_candidato, c.nr_candidato, c.nm_candidato, c.nm_urna_candidato,
         c.cd_cargo, o.ds_cargo, c.nr_partido, p.sg_partido, c.sg_uf, c.sg_ue, u.nm_ue, u.codigo_ibge,
         c.cd_situacao_candidatura, c.cd_sit_tot_turno
       FROM page JOIN tse_candidacies c ON c.id = page.id
       JOIN tse_elections e ON e.cd_eleicao = c.cd_eleicao
       LEFT JOIN tse_offices o ON o.cd_cargo = c.cd_cargo
       LEFT JOIN tse_parties p ON p.cd_eleicao = c.cd_eleicao AND p.nr_partido = c.nr_partido
       LEFT JOIN tse_units u ON u.sg_ue = c.sg_ue
       ORDER BY c.nm_busca, c.id`,
      [...values, CANDIDACIES_PER_PAGE, (page - 1) * CANDIDACIES_PER_PAGE],
    );
    const [rows, total] = await Promise.all([pageOfRows, this.count(whereSql, values)]);
    return { total, results: rows.map((row) => summaryOf(row, this.labels)) };
  }

  private async count(whereSql: string, values: unknown[]): Promise<number> {
    const row = await this.reader.row<{ total: unknown }>(`SELECT COUNT(*) AS total FROM tse_candidacies c ${whereSql}`, values);
    return asNumber(row?.total ?? 0);
  }

  /** Candidacy `id` with every field whole, or undefined. */
  async candidacy(id: number): Promise<CandidacyRecord | undefined> {
    if (!Number.isSafeInteger(id)) return undefined;
    const row = await this.reader.row<CandidacyColumns>(CANDIDACY_SQL, [id]);
    return row && candidacyOf(row, this.labels);
  }
}

/** Each filter given, as a condition on the candidacy `c` and its parameters, in a fixed order. */
function searchConditions(filters: CandidacyFilters): { where: string[]; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (condition: string, ...given: unknown[]) => {
    where.push(condition);
    values.push(...given);
  };
  if (filters.cd_eleicao !== undefined) add('c.cd_eleicao = ?', filters.cd_eleicao);
  if (filters.uf !== undefined) add('c.sg_uf = ?', filters.uf);
  if (filters.cd_cargo !== undefined) add('c.cd_cargo = ?', filters.cd_cargo);
  if (filters.nr_candidato !== undefined) add('c.nr_candidato = ?', filters.nr_candidato);
  if (filters.partidos !== undefined) add(`c.nr_partido IN (${filters.partidos.map(() => '?').join(', ')})`, ...filters.partidos);
  // The units mapped to the municipality: one in practice (tse_units is a few thousand rows).
  if (filters.codigo_ibge !== undefined) add('c.sg_ue IN (SELECT u.sg_ue FROM tse_units u WHERE u.codigo_ibge = ?)', filters.codigo_ibge);
  if (filters.nome !== undefined) add('c.nm_busca LIKE ?', `%${searchWords(filters.nome).join('%')}%`);
  return { where, values };
}

/** Aggregates over tse_elections (a few rows) and candidacies' primary key: see `version`. */
const VERSION_SQL = `SELECT
  (SELECT MAX(updated_at) FROM tse_elections) AS elections_at,
  (SELECT COUNT(*) FROM tse_elections) AS elections,
  (SELECT MAX(id) FROM tse_candidacies) AS last_candidacy`;

const ELECTION_COLUMNS = 'e.cd_eleicao, e.ano, e.cd_tipo_eleicao, e.nr_turno, e.ds_eleicao, e.dt_eleicao, e.tp_abrangencia';

type ElectionColumns = Omit<ElectionRow, 'updated_at' | 'tp_abrangencia'> & { tp_abrangencia: CourtElection['tp_abrangencia'] };

/** A code with its label (null when the tables lack it); null for an absent code. */
function codeOf(labels: Labels, table: CodeTable, code: number | null | undefined): CourtCode | null {
  if (code === null || code === undefined) return null;
  const value = asNumber(code);
  return { code: value, label: labels.get(table)?.get(value) ?? null };
}

function electionOf(row: ElectionColumns, labels: Labels): CourtElection {
  return {
    cd_eleicao: row.cd_eleicao,
    ano: row.ano,
    tipo_eleicao: codeOf(labels, 'tipo_eleicao', row.cd_tipo_eleicao)!,
    nr_turno: row.nr_turno,
    ds_eleicao: row.ds_eleicao,
    dt_eleicao: dateOnly(row.dt_eleicao)!,
    tp_abrangencia: row.tp_abrangencia,
  };
}

/** A DATEONLY column: its text on either database (the Reader reads PostgreSQL's as text too). */
function dateOnly(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return value instanceof Date ? value.toISOString().slice(0, 10) : String(value).slice(0, 10);
}

interface SummaryColumns {
  id: number;
  cd_eleicao: number;
  ano: number;
  sq_candidato: string;
  nr_candidato: number;
  nm_candidato: string;
  nm_urna_candidato: string;
  cd_cargo: number;
  ds_cargo: string | null;
  nr_partido: number;
  sg_partido: string | null;
  sg_uf: string;
  sg_ue: string;
  nm_ue: string | null;
  codigo_ibge: number | null;
  cd_situacao_candidatura: number | null;
  cd_sit_tot_turno: number | null;
}

function unitOf(row: Pick<SummaryColumns, 'sg_ue' | 'nm_ue' | 'codigo_ibge'>): CandidacySummary['unidade'] {
  return { sg_ue: row.sg_ue, nm_ue: row.nm_ue ?? row.sg_ue, codigo_ibge: row.codigo_ibge ?? null };
}

function summaryOf(row: SummaryColumns, labels: Labels): CandidacySummary {
  return {
    id: row.id,
    cd_eleicao: row.cd_eleicao,
    ano: row.ano,
    sq_candidato: row.sq_candidato,
    nr_candidato: row.nr_candidato,
    nm_candidato: row.nm_candidato,
    nm_urna_candidato: row.nm_urna_candidato,
    cargo: { cd_cargo: row.cd_cargo, ds_cargo: row.ds_cargo ?? null },
    partido: { nr_partido: row.nr_partido, sg_partido: row.sg_partido ?? null },
    sg_uf: row.sg_uf as CandidacySummary['sg_uf'],
    unidade: unitOf(row),
    situacao_candidatura: codeOf(labels, 'situacao_candidatura', row.cd_situacao_candidatura),
    sit_tot_turno: codeOf(labels, 'sit_tot_turno', row.cd_sit_tot_turno),
  };
}

/** The candidacy with what its codes name: election, office, party, federation, coalition, unit and IBGE municipality. */
const CANDIDACY_SQL = `SELECT c.*, ${ELECTION_COLUMNS.replace('e.cd_eleicao, ', '')},
    o.ds_cargo, o.ballot_digits, p.sg_partido, p.nm_partido, f.sg_federacao, f.nm_federacao,
    k.nm_coligacao, k.ds_composicao, u.nm_ue, u.codigo_ibge, mu.nome AS municipio_nome
  FROM tse_candidacies c
  JOIN tse_elections e ON e.cd_eleicao = c.cd_eleicao
  LEFT JOIN tse_offices o ON o.cd_cargo = c.cd_cargo
  LEFT JOIN tse_parties p ON p.cd_eleicao = c.cd_eleicao AND p.nr_partido = c.nr_partido
  LEFT JOIN tse_federations f ON f.cd_eleicao = c.cd_eleicao AND f.nr_federacao = c.nr_federacao
  LEFT JOIN tse_coalitions k ON k.sq_coligacao = c.sq_coligacao
  LEFT JOIN tse_units u ON u.sg_ue = c.sg_ue
  LEFT JOIN municipalities mu ON mu.codigo_ibge = u.codigo_ibge
  WHERE c.id = CAST(? AS BIGINT)`;

interface CandidacyColumns extends SummaryColumns, Omit<ElectionColumns, 'cd_eleicao'> {
  ballot_digits: number | null;
  nm_partido: string | null;
  nr_federacao: number | null;
  sg_federacao: string | null;
  nm_federacao: string | null;
  sq_coligacao: string | null;
  nm_coligacao: string | null;
  ds_composicao: string | null;
  municipio_nome: string | null;
  nr_cpf: string | null;
  nr_titulo_eleitoral: string | null;
  dt_nascimento: string | null;
  sg_uf_nascimento: string | null;
  nm_municipio_nascimento: string | null;
  cd_nacionalidade: number | null;
  cd_genero: number | null;
  cd_grau_instrucao: number | null;
  cd_estado_civil: number | null;
  cd_cor_raca: number | null;
  cd_ocupacao: number | null;
  st_reeleicao: unknown;
  updated_at: unknown;
}

function candidacyOf(row: CandidacyColumns, labels: Labels): CandidacyRecord {
  const unidade = unitOf(row);
  return {
    id: row.id,
    sq_candidato: row.sq_candidato,
    eleicao: electionOf(row, labels),
    cargo: { cd_cargo: row.cd_cargo, ds_cargo: row.ds_cargo ?? String(row.cd_cargo), ballot_digits: row.ballot_digits ?? null },
    sg_uf: row.sg_uf as CandidacyRecord['sg_uf'],
    unidade,
    municipio: unidade.codigo_ibge !== null && row.municipio_nome ? { codigo_ibge: unidade.codigo_ibge, nome: row.municipio_nome } : null,
    nr_candidato: row.nr_candidato,
    nm_candidato: row.nm_candidato,
    nm_urna_candidato: row.nm_urna_candidato,
    partido: { nr_partido: row.nr_partido, sg_partido: row.sg_partido ?? null, nm_partido: row.nm_partido ?? null },
    federacao: row.nr_federacao === null ? null : { nr_federacao: row.nr_federacao, sg_federacao: row.sg_federacao ?? null, nm_federacao: row.nm_federacao ?? null },
    coligacao: row.sq_coligacao === null ? null : { sq_coligacao: row.sq_coligacao, nm_coligacao: row.nm_coligacao ?? null, ds_composicao: row.ds_composicao ?? null },
    cpf: row.nr_cpf,
    titulo_eleitor: row.nr_titulo_eleitoral,
    data_nascimento: dateOnly(row.dt_nascimento),
    uf_nascimento: row.sg_uf_nascimento,
    municipio_nascimento: row.nm_municipio_nascimento,
    nacionalidade: codeOf(labels, 'nacionalidade', row.cd_nacionalidade),
    genero: codeOf(labels, 'genero', row.cd_genero),
    grau_instrucao: codeOf(labels, 'grau_instrucao', row.cd_grau_instrucao),
    estado_civil: codeOf(labels, 'estado_civil', row.cd_estado_civil),
    cor_raca: codeOf(labels, 'cor_raca', row.cd_cor_raca),
    ocupacao: codeOf(labels, 'ocupacao', row.cd_ocupacao),
    situacao_candidatura: codeOf(labels, 'situacao_candidatura', row.cd_situacao_candidatura),
    sit_tot_turno: codeOf(labels, 'sit_tot_turno', row.cd_sit_tot_turno),
    reeleicao: row.st_reeleicao === null || row.st_reeleicao === undefined ? null : row.st_reeleicao === true || row.st_reeleicao === 1,
    updated_at: asIsoTimestamp(row.updated_at),
  };
}
