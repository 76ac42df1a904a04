/** The Sequelize models of the entity tables (created by migration 0005-entities). */
import { DataTypes, type Model, type ModelAttributes, type ModelStatic, type Sequelize } from 'sequelize';
import type { components } from '../../sdk/schema.js';
import { asBoolean, asDate, asJson } from '../db/reader.js';

export type CandidateEntity = components['schemas']['CandidateEntity'];
export type CandidateEntityRecord = components['schemas']['CandidateEntityRecord'];
export type EntityType = components['schemas']['EntityType'];
export type TeamRole = components['schemas']['TeamRole'];

/** The contract's scalar fields, stored as columns of the same names. */
export const SCALAR_FIELDS = [
  'nome', 'tipoDisputa', 'position', 'ballot', 'cpf', 'nm_urna', 'nr_urna', 'foto', 'image_url', 'titulo_eleitor',
  'data_nascimento', 'idade', 'nacionalidade', 'pais_nascimento', 'estado_nascimento', 'municipio_nascimento',
  'partido', 'genero', 'instrucao', 'ocupacao', 'estado_civil', 'raca', 'disputa_eleitoral', 'uf', 'cidade', 'email',
  'list_emails', 'exerce_funcao', 'reeleicao', 'paisDisputa', 'estado_disputa', 'municipio_disputa', 'cepBase',
  'paisBase', 'estadoBase', 'municipioBase', 'endBase', 'first_campaign', 'asLegenda', 'nomeLegenda', 'partidosLegenda',
  // The electoral court's candidacy the entity is linked to (migration 0026; candidacies.ts).
  'candidacy_id',
] as const satisfies ReadonlyArray<keyof CandidateEntity>;

export type ScalarField = (typeof SCALAR_FIELDS)[number];

export type EntityRow = {
  id: number;
  tp: EntityType;
  owner_id: number;
  created_at: Date;
  updated_at: Date;
  /** The user who wrote it last (null when unknown). */
  updated_by: number | null;
  /** Counts the entity's writes: its ETag (migration 0012). */
  version: number;
  /** The idempotent request that created it (src/http/idempotency.ts), if any. */
  creation_key: string | null;
} & {
  [Field in ScalarField]: CandidateEntity[Field] | null;
};

export interface MemberRow {
  id: number;
  entity_id: number;
  user_id: number;
  role: TeamRole;
  added_at: Date;
}

/** An invitation to a team (migration 0023, invitations.ts); `expired` is a pending one past `expires_at`. */
export interface InvitationRow {
  id: number;
  entity_id: number;
  email: string;
  role: TeamRole;
  invited_by: number | null;
  token_hash: string;
  state: 'pending' | 'accepted' | 'declined' | 'withdrawn';
  created_at: Date;
  expires_at: Date;
  answered_at: Date | null;
  answered_by: number | null;
}

export interface SocialReferenceRow {
  id: number;
  entity_id: number;
  tipo: string | null;
  nm: string | null;
  origem_name: string | null;
}

export interface SocialNetworkEntryRow {
  id: number;
  social_reference_id: number;
  position: number;
  nm_rede: string;
  exist_or_active: boolean | null;
  /** The contract's `id` of the profile (the network's id), renamed: `id` is the row's. */
  profile_id: string | null;
  img: string | null;
  img_url: string | null;
  last_full_evaluation_date: Date | null;
  link: string | null;
  tipo: string | null;
  user: string | null;
  username: string | null;
}

export interface MarketshareRow {
  id: number;
  entity_id: number;
  position: number;
  principal: boolean | null;
  marketshare: string;
  tendency: string | null;
  notes: string | null;
  evaluations: number | null;
}

export interface GuardianshipRow {
  id: number;
  tutor_id: number;
  ward_id: number;
  created_at: Date;
  /** The user who created it (migration 0018): the link stands only while they could still create it. */
  created_by: number | null;
}

type Static<Row extends object> = ModelStatic<Model<Row, Partial<Row>>>;

export interface EntityModels {
  Entity: Static<EntityRow>;
  Member: Static<MemberRow>;
  Invitation: Static<InvitationRow>;
  SocialReference: Static<SocialReferenceRow>;
  SocialNetworkEntry: Static<SocialNetworkEntryRow>;
  Marketshare: Static<MarketshareRow>;
  Guardianship: Static<GuardianshipRow>;
}

const id = { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true };
const plain = { timestamps: false } as const;

/** The scalar fields that are not plain text, by kind (the store converts them back when reading). */
export const INTEGER_FIELDS: ReadonlySet<string> = new Set(['nr_urna', 'idade', 'nacionalidade', 'instrucao', 'ocupacao', 'estado_civil', 'raca', 'disputa_eleitoral', 'candidacy_id']);
export const FLAG_FIELDS: ReadonlySet<string> = new Set(['exerce_funcao', 'reeleicao', 'first_campaign', 'asLegenda']);
export const LIST_FIELDS: ReadonlySet<string> = new Set(['list_emails', 'partidosLegenda']);

/**
 * An entity row as the Reader gives it, with the types EntityRow promises on either database: dates as
 * Dates, flags as booleans, lists parsed (SQLite gives text, 0/1 and JSON text).
 */
export function entityRowOf(row: Record<string, unknown>): EntityRow {
  const entity: Record<string, unknown> = { ...row, created_at: asDate(row.created_at), updated_at: asDate(row.updated_at) };
  for (const field of FLAG_FIELDS) entity[field] = row[field] === null || row[field] === undefined ? null : asBoolean(row[field]);
  for (const field of LIST_FIELDS) entity[field] = asJson(row[field]);
  return entity as EntityRow;
}

/** Column types of the scalar fields; lengths and rules live in the migration and the contract. */
function scalarAttributes(): ModelAttributes {
  const typeOf = (field: ScalarField) => {
    if (INTEGER_FIELDS.has(field)) return DataTypes.INTEGER;
    if (FLAG_FIELDS.has(field)) return DataTypes.BOOLEAN;
    if (LIST_FIELDS.has(field)) return DataTypes.JSON;
    return field === 'data_nascimento' ? DataTypes.DATEONLY : DataTypes.STRING;
  };
  return Object.fromEntries(SCALAR_FIELDS.map((field) => [field, typeOf(field)]));
}

export function defineEntityModels(sequelize: Sequelize): EntityModels {
  const define = <Row extends object>(name: string, attributes: ModelAttributes, tableName: string) =>
    sequelize.define<Model<Row, Partial<Row>>>(name, attributes, { tableName, ...plain });
  return {
    Entity: define<EntityRow>(
      'Entity',
      {
        id,
        tp: DataTypes.STRING(20),
        owner_id: DataTypes.INTEGER,
        ...scalarAttributes(),
        created_at: DataTypes.DATE,
        updated_at: DataTypes.DATE,
        updated_by: DataTypes.INTEGER,
        version: DataTypes.INTEGER,
        creation_key: DataTypes.STRING(64),
      },
      'entities',
    ),
    Member: define<MemberRow>(
      'EntityMember',
      { id, entity_id: DataTypes.INTEGER, user_id: DataTypes.INTEGER, role: DataTypes.STRING(20), added_at: DataTypes.DATE },
      'entity_members',
    ),
    Invitation: define<InvitationRow>(
      'TeamInvitation',
      {
        id,
        entity_id: DataTypes.INTEGER,
        email: DataTypes.STRING(254),
        role: DataTypes.STRING(20),
        invited_by: DataTypes.INTEGER,
        token_hash: DataTypes.STRING(64),
        state: DataTypes.STRING(12),
        created_at: DataTypes.DATE,
        expires_at: DataTypes.DATE,
        answered_at: DataTypes.DATE,
        answered_by: DataTypes.INTEGER,
      },
      'team_invitations',
    ),
    SocialReference: define<SocialReferenceRow>(
      'SocialReference',
      { id, entity_id: DataTypes.INTEGER, tipo: DataTypes.STRING, nm: DataTypes.STRING, origem_name: DataTypes.STRING },
      'social_references',
    ),
    SocialNetworkEntry: define<SocialNetworkEntryRow>(
      'SocialNetworkEntry',
      {
        id,
        social_reference_id: DataTypes.INTEGER,
        position: DataTypes.INTEGER,
        nm_rede: DataTypes.STRING,
        exist_or_active: DataTypes.BOOLEAN,
        profile_id: DataTypes.STRING,
        img: DataTypes.STRING,
        img_url: DataTypes.STRING,
        last_full_evaluation_date: DataTypes.DATE,
        link: DataTypes.STRING,
        tipo: DataTypes.STRING,
        user: DataTypes.STRING,
        username: DataTypes.STRING,
      },
      'social_network_entries',
    ),
    Marketshare: define<MarketshareRow>(
      'MarketshareEntry',
      {
        id,
        entity_id: DataTypes.INTEGER,
        position: DataTypes.INTEGER,
        principal: DataTypes.BOOLEAN,
        marketshare: DataTypes.STRING,
        tendency: DataTypes.STRING,
        notes: DataTypes.TEXT,
        evaluations: DataTypes.INTEGER,
      },
      'marketshare_entries',
    ),
    Guardianship: define<GuardianshipRow>(
      'GuardianshipLink',
      { id, tutor_id: DataTypes.INTEGER, ward_id: DataTypes.INTEGER, created_at: DataTypes.DATE, created_by: DataTypes.INTEGER },
      'guardianship_links',
    ),
  };
}
