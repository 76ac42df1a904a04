/**
 * A small fake data set of the electoral court's tables (fixtures/elections.json): the demo elections of
 * `db seed` and the sandbox, and the tests' sample (test/helpers/court-data.ts). Its rows are the tables'
 * own (the court's column names), its people made up.
 *
 * What holds:
 * - Rows are written by their keys, only where missing, in one transaction: a second run, or a run on a
 *   database an import already filled, changes no row that is there. Candidacies are keyed as the import
 *   keys them (election and SQ_CANDIDATO) and keep the fixture's id when it is free (the spec's examples
 *   show those ids); on PostgreSQL the id sequence is moved past it first, so the import never picks it.
 * - `nm_busca` and `row_hash` are the import's (names.ts, import.ts): importing the same row later counts
 *   it unchanged.
 * - `checkCourtFixture` lists what would make the story wrong: a ballot number of the wrong length for
 *   its office, a candidacy naming an election, office, party, federation, coalition or unit the file
 *   lacks, a unit mapped to an IBGE code the municipality list does not have.
 */
import { QueryTypes, type Model, type ModelStatic, type Sequelize, type Transaction } from 'sequelize';
import type { MunicipalityCatalog } from '../../municipalities/catalog.js';
import {
  BALLOT_DIGITS_BY_OFFICE,
  defineCourtModels,
  type CandidacyRow,
  type CoalitionRow,
  type CodeRow,
  type ElectionRow,
  type FederationRow,
  type OfficeRow,
  type PartyRow,
  type UnitRow,
} from './models.js';
import { rowHash } from './import.js';
import { searchableName } from './names.js';

/** fixtures/elections.json: the tables' rows, timestamps as ISO text. */
export interface CourtFixture {
  elections: Array<Omit<ElectionRow, 'updated_at'> & { updated_at: string }>;
  offices: OfficeRow[];
  codes: CodeRow[];
  parties: PartyRow[];
  federations: FederationRow[];
  coalitions: CoalitionRow[];
  units: UnitRow[];
  candidacies: Array<Omit<CandidacyRow, 'nm_busca' | 'row_hash' | 'updated_at'> & { updated_at: string }>;
}

type AnyModel = ModelStatic<Model>;

/** How many rows of each table the run wrote (the others were there). */
export type CourtWriteCounts = Record<keyof CourtFixture, number>;

/** Writes the fixture's missing rows (see the top of this file); returns how many of each it wrote. */
export async function writeCourtFixture(sequelize: Sequelize, fixture: CourtFixture): Promise<CourtWriteCounts> {
  const models = defineCourtModels(sequelize);
  return sequelize.transaction(async (transaction) => {
    const missing = async <Row extends object>(rows: Row[], model: AnyModel, key: (row: Row) => string): Promise<Row[]> => {
      const existing = new Set(((await model.findAll({ raw: true, transaction })) as unknown as Row[]).map(key));
      return rows.filter((row) => !existing.has(key(row)));
    };
    const counts = {} as CourtWriteCounts;
    const write = async <Row extends object>(table: keyof CourtFixture, model: AnyModel, rows: Row[], key: (row: Row) => string) => {
      const absent = await missing(rows, model, key);
      if (absent.length > 0) await model.bulkCreate(absent as never[], { transaction });
      counts[table] = absent.length;
    };
    await write('elections', models.Election as unknown as AnyModel, fixture.elections.map((row) => ({ ...row, updated_at: new Date(row.updated_at) })), (row) => `${row.cd_eleicao}`);
    await write('offices', models.Office as unknown as AnyModel, fixture.offices, (row) => `${row.cd_cargo}`);
    await write('codes', models.Code as unknown as AnyModel, fixture.codes, (row) => `${row.code_table}/${row.code}`);
    await write('federations', models.Federation as unknown as AnyModel, fixture.federations, (row) => `${row.cd_eleicao}/${row.nr_federacao}`);
    await write('parties', models.Party as unknown as AnyModel, fixture.parties, (row) => `${row.cd_eleicao}/${row.nr_partido}`);
    await write('coalitions', models.Coalition as unknown as AnyModel, fixture.coalitions, (row) => row.sq_coligacao);
    await write('units', models.Unit as unknown as AnyModel, fixture.units, (row) => row.sg_ue);

    const candidacies = await missing(fixture.candidacies, models.Candidacy as unknown as AnyModel, (row) => `${row.cd_eleicao}/${row.sq_candidato}`);
    const taken = new Set(((await models.Candidacy.findAll({ attributes: ['id'], raw: true, transaction })) as unknown as Array<{ id: number }>).map((row) => row.id));
    for (const { id, ...row } of candidacies) {
      const free = !taken.has(id);
      if (free) await reserveCandidacyId(sequelize, id, transaction);
      const { updated_at: updatedAt, ...columns } = row;
      const candidacy = { ...columns, nm_busca: searchableName(row.nm_candidato, row.nm_urna_candidato) };
      const values = { ...candidacy, row_hash: rowHash(candidacy), updated_at: new Date(updatedAt) };
      await models.Candidacy.create(free ? { ...values, id } : values, { transaction });
    }
    counts.candidacies = candidacies.length;
    return counts;
  });
}

/** On PostgreSQL, moves the candidacies' id sequence past `id`, so that later inserts do not pick it. */
async function reserveCandidacyId(sequelize: Sequelize, id: number, transaction: Transaction): Promise<void> {
  if (sequelize.getDialect() !== 'postgres') return; // SQLite's AUTOINCREMENT follows explicit ids
  await sequelize.query("SELECT setval(pg_get_serial_sequence('tse_candidacies', 'id'), GREATEST(:id, (SELECT COALESCE(MAX(id), 0) FROM tse_candidacies)), true)", {
    replacements: { id },
    type: QueryTypes.SELECT,
    transaction,
  });
}

/** What makes the fixture's story wrong (see the top of this file); empty when it holds. */
export function checkCourtFixture(fixture: CourtFixture, municipalities: Pick<MunicipalityCatalog, 'find'>): string[] {
  const problems: string[] = [];
  const keys = <Row>(rows: Row[], key: (row: Row) => string) => new Set(rows.map(key));
  const elections = keys(fixture.elections, (row) => `${row.cd_eleicao}`);
  const offices = new Map(fixture.offices.map((office) => [office.cd_cargo, office]));
  const parties = keys(fixture.parties, (row) => `${row.cd_eleicao}/${row.nr_partido}`);
  const federations = keys(fixture.federations, (row) => `${row.cd_eleicao}/${row.nr_federacao}`);
  const coalitions = keys(fixture.coalitions, (row) => row.sq_coligacao);
  const units = keys(fixture.units, (row) => row.sg_ue);
  for (const unit of fixture.units) {
    if (unit.codigo_ibge !== null && !municipalities.find(unit.codigo_ibge)) problems.push(`elections.json unit ${unit.sg_ue}: IBGE code ${unit.codigo_ibge} is not in the municipality list`);
  }
  for (const candidacy of fixture.candidacies) {
    const where = `elections.json candidacy ${candidacy.id} (${candidacy.nm_urna_candidato})`;
    const digits = offices.get(candidacy.cd_cargo)?.ballot_digits ?? BALLOT_DIGITS_BY_OFFICE.get(candidacy.cd_cargo);
    if (!elections.has(`${candidacy.cd_eleicao}`)) problems.push(`${where}: election ${candidacy.cd_eleicao} is not in the file`);
    if (!offices.has(candidacy.cd_cargo)) problems.push(`${where}: office ${candidacy.cd_cargo} is not in the file`);
    if (digits !== undefined && String(candidacy.nr_candidato).length !== digits) problems.push(`${where}: ballot number ${candidacy.nr_candidato} must have ${digits} digits for office ${candidacy.cd_cargo}`);
    if (!String(candidacy.nr_candidato).startsWith(String(candidacy.nr_partido))) problems.push(`${where}: ballot number ${candidacy.nr_candidato} must start with its party's number ${candidacy.nr_partido}`);
    if (!parties.has(`${candidacy.cd_eleicao}/${candidacy.nr_partido}`)) problems.push(`${where}: party ${candidacy.nr_partido} is not a party of election ${candidacy.cd_eleicao}`);
    if (candidacy.nr_federacao !== null && !federations.has(`${candidacy.cd_eleicao}/${candidacy.nr_federacao}`)) problems.push(`${where}: federation ${candidacy.nr_federacao} is not in the file`);
    if (candidacy.sq_coligacao !== null && !coalitions.has(candidacy.sq_coligacao)) problems.push(`${where}: coalition ${candidacy.sq_coligacao} is not in the file`);
    if (!units.has(candidacy.sg_ue)) problems.push(`${where}: unit ${candidacy.sg_ue} is not in the file`);
  }
  return problems;
}
