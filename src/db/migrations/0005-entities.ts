import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Campaign entities (src/entities/): candidates, competitors and parties with every field of the
 * contract's candidate, their teams, their social-network reference and entries, their market-share
 * estimates, and the guardianship links between them. Nested records have tables of their own.
 */
export const name = '0005-entities';

const text = (length: number) => ({ type: DataTypes.STRING(length), allowNull: true });
const integer = { type: DataTypes.INTEGER, allowNull: true };
const flag = { type: DataTypes.BOOLEAN, allowNull: true };
const entityId = { type: DataTypes.INTEGER, allowNull: false, references: { model: 'entities', key: 'id' }, onDelete: 'CASCADE' };

export async function up({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  await queryInterface.createTable('entities', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    tp: { type: DataTypes.STRING(20), allowNull: false },
    owner_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'users', key: 'id' } },
    nome: { type: DataTypes.STRING(200), allowNull: false },
    tipoDisputa: text(50),
    position: text(100),
    ballot: text(50),
    cpf: text(14),
    nm_urna: text(100),
    nr_urna: integer,
    foto: text(500),
    image_url: text(2048),
    titulo_eleitor: text(12),
    data_nascimento: { type: DataTypes.DATEONLY, allowNull: true },
    idade: integer,
    nacionalidade: integer,
    pais_nascimento: text(2),
    estado_nascimento: text(2),
    municipio_nascimento: text(200),
    partido: text(2),
    genero: text(30),
    instrucao: integer,
    ocupacao: integer,
    estado_civil: integer,
    raca: integer,
    disputa_eleitoral: integer,
    uf: text(2),
    cidade: text(200),
    email: text(254),
    list_emails: { type: DataTypes.JSON, allowNull: true },
    exerce_funcao: flag,
    reeleicao: flag,
    paisDisputa: text(2),
    estado_disputa: text(2),
    municipio_disputa: text(7),
    cepBase: text(9),
    paisBase: text(2),
    estadoBase: text(2),
    municipioBase: text(7),
    endBase: text(300),
    first_campaign: flag,
    asLegenda: flag,
    nomeLegenda: text(200),
    partidosLegenda: { type: DataTypes.JSON, allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('entities', ['cpf'], { name: 'entities_cpf' });
  await queryInterface.addIndex('entities', ['tp', 'id'], { name: 'entities_type' });

  await queryInterface.createTable('entity_members', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    entity_id: entityId,
    user_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    role: { type: DataTypes.STRING(20), allowNull: false },
    added_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('entity_members', ['entity_id', 'user_id'], { name: 'entity_members_unique', unique: true });
  await queryInterface.addIndex('entity_members', ['user_id', 'entity_id'], { name: 'entity_members_user' });

  await queryInterface.createTable('social_references', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    entity_id: { ...entityId, unique: true },
    tipo: text(50),
    nm: text(200),
    origem_name: text(200),
  });

  await queryInterface.createTable('social_network_entries', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    social_reference_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'social_references', key: 'id' }, onDelete: 'CASCADE' },
    position: { type: DataTypes.INTEGER, allowNull: false },
    nm_rede: { type: DataTypes.STRING(50), allowNull: false },
    exist_or_active: flag,
    profile_id: text(100),
    img: text(2048),
    img_url: text(2048),
    last_full_evaluation_date: { type: DataTypes.DATE, allowNull: true },
    link: text(2048),
    tipo: text(50),
    user: text(150),
    username: text(150),
  });
  await queryInterface.addIndex('social_network_entries', ['social_reference_id', 'position'], { name: 'social_network_entries_reference' });

  await queryInterface.createTable('marketshare_entries', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    entity_id: entityId,
    position: { type: DataTypes.INTEGER, allowNull: false },
    principal: flag,
    marketshare: { type: DataTypes.STRING(20), allowNull: false },
    tendency: text(20),
    notes: { type: DataTypes.TEXT, allowNull: true },
    evaluations: integer,
  });
  await queryInterface.addIndex('marketshare_entries', ['entity_id', 'position'], { name: 'marketshare_entries_entity' });

  await queryInterface.createTable('guardianship_links', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    tutor_id: entityId,
    ward_id: entityId,
    created_at: { type: DataTypes.DATE, allowNull: false },
  });
  await queryInterface.addIndex('guardianship_links', ['tutor_id', 'ward_id'], { name: 'guardianship_links_unique', unique: true });
}

export async function down({ context: queryInterface }: { context: QueryInterface }): Promise<void> {
  for (const table of ['guardianship_links', 'marketshare_entries', 'social_network_entries', 'social_references', 'entity_members', 'entities']) {
    await queryInterface.dropTable(table);
  }
}
