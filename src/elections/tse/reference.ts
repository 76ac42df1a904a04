/**
 * A small view in memory of the court's reference tables: the elections, the offices, the code tables
 * with their labels, the parties of each election as the candidacy files named them, and the parties
 * registered with the court (registered_parties, migration 0037: reference data of its own). The rules that judge an entity against the court's
 * data (src/entities/electoral-rules.ts) read it on every write, so it is not read whole each time.
 *
 * What holds:
 * - One view per database: `courtReferenceOf(sequelize)` returns the same object for the same Sequelize
 *   instance, so whoever writes the tables (the import) and whoever reads them share it.
 * - Each use asks the data's version (CourtCatalog.version: a few index reads, which moves on whenever
 *   an import writes, on any instance) and reads the tables again only when it moved on. `invalidate()`
 *   drops the view outright, for a writer that changed the tables without moving the version on.
 * - A view is read whole, in one go; concurrent uses share one read. A read that fails is not kept: the
 *   next use tries again.
 * - Empty tables give an empty view, in which nothing is "loaded": the rules fed by it judge nothing.
 */
import type { Sequelize } from 'sequelize';
import { readerOf } from '../../db/reader.js';
import type { RegisteredParty } from '@palanque/rules/registered-parties';
import { CourtCatalog, readRegisteredParties } from './catalog.js';
import { BALLOT_DIGITS_BY_OFFICE, type CodeTable, type ElectionRow, type OfficeRow, type PartyRow } from './models.js';
import { normaliseName } from './names.js';

/** An election as the view keeps it. */
export type Election = Omit<ElectionRow, 'updated_at'>;

/** The court's tables as the rules read them. */
export interface CourtView {
  /** Every loaded election, the latest first: by year, the first round first, the one with the most parties first. */
  elections: Election[];
  electionByCode: ReadonlyMap<number, Election>;
  officeByCode: ReadonlyMap<number, OfficeRow>;
  /** Offices by their normalised name (normaliseName of DS_CARGO: `prefeito`, `deputado federal`). */
  officeByName: ReadonlyMap<string, OfficeRow>;
  /** Each loaded code table: code -> label. A table without rows is absent. */
  codes: ReadonlyMap<CodeTable, ReadonlyMap<number, string>>;
  /** Each election's parties by number, as its imported candidacies named them. An election without party rows is absent. */
  partiesByElection: ReadonlyMap<number, ReadonlyMap<number, PartyRow>>;
  /** Every party registration of registered_parties (packages/rules/src/registered-parties.ts says what it covers). */
  registeredParties: readonly RegisteredParty[];
}

/** The scope (TP_ABRANGENCIA) of the elections an office is disputed in. */
export type ElectionScope = 'MUNICIPAL' | 'ESTADUAL' | 'FEDERAL';

const MUNICIPAL_OFFICES = new Set([11, 12, 13]);
const FEDERAL_OFFICES = new Set([1, 2]);

/** Mayor, vice-mayor and councillor: municipal; president and vice-president: federal; the others: state. */
export function scopeOfOffice(cdCargo: number): ElectionScope {
  if (MUNICIPAL_OFFICES.has(cdCargo)) return 'MUNICIPAL';
  return FEDERAL_OFFICES.has(cdCargo) ? 'FEDERAL' : 'ESTADUAL';
}

/** How many digits a ballot number for the office has: the table's, else the law's; undefined if neither knows. */
export function ballotDigitsOf(office: OfficeRow): number | undefined {
  return office.ballot_digits ?? BALLOT_DIGITS_BY_OFFICE.get(office.cd_cargo);
}

export class CourtReference {
  private view: { value: CourtView; version: string } | undefined;
  private reading: { version: string; value: Promise<CourtView> } | undefined;

  constructor(
    private readonly sequelize: Sequelize,
    /** The data's version; CourtCatalog's by default. */
    private readonly versionOf: () => Promise<string> = () => new CourtCatalog(sequelize).version(),
  ) {}

  /** The view of the tables as they are now: the one in memory while the data's version is unchanged. */
  async current(): Promise<CourtView> {
    const version = await this.versionOf();
    if (this.view?.version === version) return this.view.value;
    if (this.reading?.version !== version) {
      const value = this.read(version).finally(() => {
        if (this.reading?.value === value) this.reading = undefined;
      });
      this.reading = { version, value };
    }
    return this.reading.value;
  }

  /** Drops the view: the next use reads the tables again. */
  invalidate(): void {
    this.view = undefined;
  }

  private async read(version: string): Promise<CourtView> {
    const reader = readerOf(this.sequelize);
    const [elections, offices, codes, parties, registered] = await Promise.all([
      reader.rows<Election>('SELECT cd_eleicao, ano, cd_tipo_eleicao, nr_turno, ds_eleicao, dt_eleicao, tp_abrangencia FROM tse_elections'),
      reader.rows<OfficeRow>('SELECT cd_cargo, ds_cargo, ballot_digits FROM tse_offices'),
      reader.rows<{ code_table: CodeTable; code: number; label: string }>('SELECT code_table, code, label FROM tse_codes ORDER BY code_table, code'),
      reader.rows<PartyRow>('SELECT cd_eleicao, nr_partido, sg_partido, nm_partido, nr_federacao FROM tse_parties ORDER BY cd_eleicao, nr_partido'),
      readRegisteredParties(reader),
    ]);
    const value = { ...viewOf(elections.map(electionOf), offices.map(officeOf), codes, parties.map(partyOf)), registeredParties: registered };
    this.view = { value, version };
    return value;
  }
}

const references = new WeakMap<Sequelize, CourtReference>();

/** The view of this database's court tables (one per Sequelize instance). */
export function courtReferenceOf(sequelize: Sequelize): CourtReference {
  let reference = references.get(sequelize);
  if (!reference) {
    reference = new CourtReference(sequelize);
    references.set(sequelize, reference);
  }
  return reference;
}

function viewOf(elections: Election[], offices: OfficeRow[], codeRows: Array<{ code_table: CodeTable; code: number; label: string }>, parties: PartyRow[]): Omit<CourtView, 'registeredParties'> {
  const codes = new Map<CodeTable, Map<number, string>>();
  for (const { code_table, code, label } of codeRows) {
    const table = codes.get(code_table) ?? new Map<number, string>();
    table.set(Number(code), label);
    codes.set(code_table, table);
  }
  const partiesByElection = new Map<number, Map<number, PartyRow>>();
  for (const party of parties) {
    const ofElection = partiesByElection.get(party.cd_eleicao) ?? new Map<number, PartyRow>();
    ofElection.set(party.nr_partido, party);
    partiesByElection.set(party.cd_eleicao, ofElection);
  }
  // A year may hold an ordinary election and supplementary ones (a few municipalities): the one with the
  // most parties first.
  const partyCount = (election: Election) => partiesByElection.get(election.cd_eleicao)?.size ?? 0;
  const latestFirst = [...elections].sort((a, b) => b.ano - a.ano || a.nr_turno - b.nr_turno || partyCount(b) - partyCount(a) || a.cd_eleicao - b.cd_eleicao);
  return {
    elections: latestFirst,
    electionByCode: new Map(elections.map((election) => [election.cd_eleicao, election])),
    officeByCode: new Map(offices.map((office) => [office.cd_cargo, office])),
    officeByName: new Map(offices.map((office) => [normaliseName(office.ds_cargo), office])),
    codes,
    partiesByElection,
  };
}

// The Reader gives SQLite's and PostgreSQL's types as they come: integers may be strings, dates Dates.
const electionOf = (row: Election): Election => ({
  ...row,
  cd_eleicao: Number(row.cd_eleicao),
  ano: Number(row.ano),
  cd_tipo_eleicao: Number(row.cd_tipo_eleicao),
  nr_turno: Number(row.nr_turno),
  dt_eleicao: dateOnly(row.dt_eleicao),
});
const officeOf = (row: OfficeRow): OfficeRow => ({ ...row, cd_cargo: Number(row.cd_cargo), ballot_digits: row.ballot_digits === null ? null : Number(row.ballot_digits) });
const partyOf = (row: PartyRow): PartyRow => ({
  ...row,
  cd_eleicao: Number(row.cd_eleicao),
  nr_partido: Number(row.nr_partido),
  nr_federacao: row.nr_federacao === null ? null : Number(row.nr_federacao),
});

/** YYYY-MM-DD, from a DATEONLY as either database gives it. */
function dateOnly(value: unknown): string {
  return value instanceof Date ? value.toISOString().slice(0, 10) : String(value).slice(0, 10);
}
