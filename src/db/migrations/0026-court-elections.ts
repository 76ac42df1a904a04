import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * The electoral court's (TSE) open data (issue 22; src/elections/tse/): elections, offices, parties,
 * federations and coalitions, the code tables with their labels, the court's electoral units mapped to
 * IBGE municipalities, and the candidacies, all built by the candidacy-file import. Keys are the court's
 * own codes, so a re-import updates rows in place. An entity may be linked to a candidacy.
 *
 * Personal columns (CPF, voter id, birth date, race) are nullable: recent files withhold some of them.
 */
export const name = '0026-court-elections';

const code = { type: DataTypes.INTEGER, allowNull: true };

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('tse_elections', {
    // CD_ELEICAO: one per round (a second round has its own code).
    cd_eleicao: { type: DataTypes.INTEGER, primaryKey: true },
    ano: { type: DataTypes.INTEGER, allowNull: false },
    cd_tipo_eleicao: { type: DataTypes.INTEGER, allowNull: false },
    nr_turno: { type: DataTypes.INTEGER, allowNull: false },
    ds_eleicao: { type: DataTypes.STRING(200), allowNull: false },
    dt_eleicao: { type: DataTypes.DATEONLY, allowNull: false },
    // MUNICIPAL, ESTADUAL or FEDERAL (TP_ABRANGENCIA).
    tp_abrangencia: { type: DataTypes.STRING(20), allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('tse_elections', ['ano'], { name: 'tse_elections_year' });

  await queryInterface.createTable('tse_offices', {
    cd_cargo: { type: DataTypes.INTEGER, primaryKey: true },
    ds_cargo: { type: DataTypes.STRING(100), allowNull: false },
    // How many digits a ballot number for this office has (2 president/governor/mayor ... 5 councillor).
    ballot_digits: { type: DataTypes.INTEGER, allowNull: true },
  });

  // The court's code tables (education, occupation, ...): one row per table and code, with its label.
  await queryInterface.createTable('tse_codes', {
    code_table: { type: DataTypes.STRING(30), primaryKey: true },
    code: { type: DataTypes.INTEGER, primaryKey: true },
    label: { type: DataTypes.STRING(200), allowNull: false },
  });

  await queryInterface.createTable('tse_parties', {
    cd_eleicao: { type: DataTypes.INTEGER, primaryKey: true, references: { model: 'tse_elections', key: 'cd_eleicao' }, onDelete: 'CASCADE' },
    nr_partido: { type: DataTypes.INTEGER, primaryKey: true },
    sg_partido: { type: DataTypes.STRING(30), allowNull: false },
    nm_partido: { type: DataTypes.STRING(200), allowNull: false },
    // The federation the party ran in at this election, if any (NR_FEDERACAO).
    nr_federacao: code,
  });

  await queryInterface.createTable('tse_federations', {
    cd_eleicao: { type: DataTypes.INTEGER, primaryKey: true, references: { model: 'tse_elections', key: 'cd_eleicao' }, onDelete: 'CASCADE' },
    nr_federacao: { type: DataTypes.INTEGER, primaryKey: true },
    sg_federacao: { type: DataTypes.STRING(60), allowNull: false },
    nm_federacao: { type: DataTypes.STRING(200), allowNull: false },
  });

  await queryInterface.createTable('tse_coalitions', {
    // SQ_COLIGACAO: 12 digits, kept as text (beyond a 32-bit integer, and never computed with).
    sq_coligacao: { type: DataTypes.STRING(20), primaryKey: true },
    cd_eleicao: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'tse_elections', key: 'cd_eleicao' }, onDelete: 'CASCADE' },
    nm_coligacao: { type: DataTypes.STRING(300), allowNull: false },
    // DS_COMPOSICAO_COLIGACAO: the parties' acronyms, as the court writes them ("PT / PC do B / PV").
    ds_composicao: { type: DataTypes.STRING(500), allowNull: false },
  });

  // The court's electoral units (SG_UE): a municipality in municipal elections (a TSE code, not IBGE's),
  // a state or the country (BR) in general ones. codigo_ibge is null where the name matched no municipality.
  await queryInterface.createTable('tse_units', {
    sg_ue: { type: DataTypes.STRING(10), primaryKey: true },
    sg_uf: { type: DataTypes.STRING(2), allowNull: false },
    nm_ue: { type: DataTypes.STRING(200), allowNull: false },
    codigo_ibge: { type: DataTypes.INTEGER, allowNull: true },
  });

  await queryInterface.createTable('tse_candidacies', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    cd_eleicao: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'tse_elections', key: 'cd_eleicao' }, onDelete: 'CASCADE' },
    // SQ_CANDIDATO: the candidacy's key at the court (12 digits, as text); with cd_eleicao, the import's key.
    sq_candidato: { type: DataTypes.STRING(20), allowNull: false },
    sg_uf: { type: DataTypes.STRING(2), allowNull: false },
    sg_ue: { type: DataTypes.STRING(10), allowNull: false },
    cd_cargo: { type: DataTypes.INTEGER, allowNull: false },
    nr_candidato: { type: DataTypes.INTEGER, allowNull: false },
    nm_candidato: { type: DataTypes.STRING(200), allowNull: false },
    nm_urna_candidato: { type: DataTypes.STRING(100), allowNull: false },
    // Both names without accents, apostrophes or case, for the accent-insensitive search.
    nm_busca: { type: DataTypes.STRING(310), allowNull: false },
    nr_cpf: { type: DataTypes.STRING(11), allowNull: true },
    nr_titulo_eleitoral: { type: DataTypes.STRING(13), allowNull: true },
    nr_partido: { type: DataTypes.INTEGER, allowNull: false },
    nr_federacao: code,
    sq_coligacao: { type: DataTypes.STRING(20), allowNull: true },
    cd_nacionalidade: code,
    sg_uf_nascimento: { type: DataTypes.STRING(2), allowNull: true },
    nm_municipio_nascimento: { type: DataTypes.STRING(200), allowNull: true },
    dt_nascimento: { type: DataTypes.DATEONLY, allowNull: true },
    cd_genero: code,
    cd_grau_instrucao: code,
    cd_estado_civil: code,
    cd_cor_raca: code,
    cd_ocupacao: code,
    cd_situacao_candidatura: code,
    // CD_SIT_TOT_TURNO: the round's result (eleito, não eleito, 2º turno...), once the votes are counted.
    cd_sit_tot_turno: code,
    st_reeleicao: { type: DataTypes.BOOLEAN, allowNull: true },
    // sha256 of the row as imported: a re-import counts it unchanged without comparing every column.
    row_hash: { type: DataTypes.STRING(64), allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('tse_candidacies', ['cd_eleicao', 'sq_candidato'], { name: 'tse_candidacies_key', unique: true });
  // The search's filters, each ending in the search's order (nm_busca, id): a page is read in order from
  // the index, not sorted from every match.
  await queryInterface.addIndex('tse_candidacies', ['cd_eleicao', 'sg_uf', 'cd_cargo', 'nm_busca', 'id'], { name: 'tse_candidacies_office' });
  await queryInterface.addIndex('tse_candidacies', ['cd_eleicao', 'nm_busca', 'id'], { name: 'tse_candidacies_election_name' });
  await queryInterface.addIndex('tse_candidacies', ['cd_eleicao', 'nr_candidato'], { name: 'tse_candidacies_ballot' });
  await queryInterface.addIndex('tse_candidacies', ['cd_eleicao', 'nr_partido'], { name: 'tse_candidacies_party' });
  await queryInterface.addIndex('tse_candidacies', ['sg_ue'], { name: 'tse_candidacies_unit' });

  // Imports queued by admins (startElectionsImport): the job's progress and report, readable by id.
  await queryInterface.createTable('tse_imports', {
    id: { type: DataTypes.STRING(36), primaryKey: true },
    requested_by: { type: DataTypes.INTEGER, allowNull: true },
    source: { type: DataTypes.STRING(2000), allowNull: false },
    sha256: { type: DataTypes.STRING(64), allowNull: true },
    // queued, running, completed, failed.
    state: { type: DataTypes.STRING(20), allowNull: false },
    rows_read: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    // JSON text: the import's report once it ended (inserted, updated, unchanged, rejected rows...).
    report: { type: DataTypes.TEXT, allowNull: true },
    error: { type: DataTypes.TEXT, allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });

  // The candidacy an entity was created from or linked to. A plain integer, not a foreign key: SQLite
  // cannot drop a column that is one (down), and candidacies are never deleted (a re-import updates them
  // in place, keeping their ids).
  await queryInterface.addColumn('entities', 'candidacy_id', { type: DataTypes.INTEGER, allowNull: true });
  await queryInterface.addIndex('entities', ['candidacy_id'], { name: 'entities_candidacy' });
  // Some older títulos of SP and MG have 13 digits (the court's files carry them). SQLite does not
  // enforce a VARCHAR's length, and changing the column there would rebuild the table.
  if (queryInterface.sequelize.getDialect() === 'postgres') {
    await queryInterface.sequelize.query('ALTER TABLE entities ALTER COLUMN titulo_eleitor TYPE VARCHAR(13)');
  }
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  if (queryInterface.sequelize.getDialect() === 'postgres') {
    await queryInterface.sequelize.query('ALTER TABLE entities ALTER COLUMN titulo_eleitor TYPE VARCHAR(12)');
  }
  // Not removeColumn: on SQLite it rebuilds the table, which the foreign keys to entities forbid.
  await queryInterface.removeIndex('entities', 'entities_candidacy');
  await queryInterface.sequelize.query('ALTER TABLE entities DROP COLUMN candidacy_id');
  for (const table of ['tse_imports', 'tse_candidacies', 'tse_units', 'tse_coalitions', 'tse_federations', 'tse_parties', 'tse_codes', 'tse_offices', 'tse_elections']) {
    await queryInterface.dropTable(table);
  }
}
