/**
 * What the stateful mock keeps (one State per mock, replaced whole by `reset()`): the demo users and the
 * keys login issued, the entities with their teams, and the records of each domain, shaped as the server's
 * tables are; with the ids and the clock every domain writes them with. The shapes live here, below the
 * domains that write them, so that no domain imports another for a type.
 */
import type { ConsentKind } from '@palanque/rules/consent-sources';
import type { components } from '../schema.js';
import type { CourtSeed } from './elections/court.js';

export type TeamRole = 'owner' | 'admin' | 'operator' | 'viewer';
export type Json = Record<string, unknown>;

/** A demo user as the mock keeps it: the contract's User, writable (logins and the admins' operations change it). */
export interface User {
  id: number;
  username: string;
  email: string;
  first_name: string;
  last_name: string;
  phone: string | null;
  is_admin: boolean;
  date_joined: string;
  last_login: string | null;
  is_active: boolean;
  deleted_at?: string | null;
  contact_visible_to_team: boolean;
}
export interface Member {
  id: number;
  user_id: number;
  role: TeamRole;
  added_at: string;
}
export interface StoredEntity {
  id: number;
  tp: 'candidato' | 'concorrente' | 'partido';
  record: Json;
  created_at: string;
  updated_at: string;
  updated_by: number | null;
  version: number;
  members: Member[];
}
/** A key issued by login: whose, and what listMySessions shows of it. */
interface IssuedKey {
  id: number;
  user_id: number;
  device: string | null;
  created_at: string;
  expires_at: string;
}
export interface State {
  users: User[];
  keys: Map<string, IssuedKey>;
  /** Passwords changed with changePassword; the others are the demo password. */
  passwords: Map<number, string>;
  entities: Map<number, StoredEntity>;
  monitors: Map<number, Json & { id: number; entity_id: number; name: string }>;
  bookmarks: Map<number, Json & { id: number; user_id: number; url: string }>;
  newsSources: Map<number, Json & { id: number; url: string; status: string }>;
  credentials: Map<number, Json & { id: number; account_id: string; sender_id: string; entity_id: number | null }>;
  /** SMS campaigns with their messages (the mock sends nothing: a new campaign's messages stay queued). */
  campaigns: Map<number, StoredCampaign>;
  /** The entities' contacts, by id (importContacts, createContact). */
  contacts: Map<number, StoredContact>;
  /** The entities' SMS compliance settings (setSmsCompliance); an entity without them is in mode `enforce` (issue 42). */
  compliance: Map<number, StoredCompliance>;
  /** Sign-ups waiting for confirmation, by the token of their (unsent) mail. */
  pendingSignUps: Map<string, PendingSignUp>;
  /** Users' new addresses waiting for confirmation, by token. */
  pendingEmailChanges: Map<string, { user_id: number; email: string }>;
  /** Invitations to teams (addOperator), the oldest first. */
  invitations: Invitation[];
  /** The entities' edit history (listEntityHistory), the oldest first. */
  history: HistoryRow[];
  /** The electoral court's demo data (read-only): the candidacies entities are created from and linked to. */
  court: CourtSeed;
  /** The monitors' alert rules, by id (the mock keeps no metrics, so none is ever breached). */
  alertRules: Map<number, StoredAlertRule>;
  /** Every user's in-app notifications, the oldest first. */
  notifications: StoredNotification[];
  nextId: number;
}
/** An SMS campaign as the server keeps it (src/messaging/campaign-reports.ts), its messages inside. */
export interface StoredCampaign {
  id: number;
  titulo: string;
  credencial: number;
  entity_id: number | null;
  accepted: number;
  rejected: number;
  opted_out_skipped: number;
  /** Numbers skipped because an SMS cannot reach them (issue 42), and the first five, masked. */
  not_mobile_skipped: number;
  not_mobile_examples: string[];
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
  state: 'queued' | 'sending' | 'completed' | 'canceled';
  created_at: string;
  created_by: number | null;
  finished_at: string | null;
  canceled_by: number | null;
  /** The credential's footer as added to the messages; the contacts' tags it went to (null: a pasted list). */
  footer: string | null;
  audience: { tags: string[] } | null;
  /** The compliance warnings it was accepted with, under `warn` and `off` (left out otherwise). */
  warnings?: ComplianceWarning[];
  /** Its declaration that it is not electoral propaganda (Lei 9.504/1997 art. 36-A), made by its sender; left out when none. */
  non_electoral_declaration?: { text: string; declared_at: string };
  /** The synthetic content it declared (issue 42); left out when none. */
  synthetic_content?: { technology: string };
  messages: Array<{ id: number; recipient: string; contact_id: number | null; status: string; error_code: string | null; error_message: string | null; price: string | null; price_unit: string | null; updated_at: string }>;
}
/** A row of an entity's edit history, as listEntityHistory shows it (without its actor's name). */
export interface HistoryRow {
  id: number;
  entity_id: number;
  occurred_at: string;
  subject: 'entity' | 'team' | 'monitor' | 'sms_credential' | 'sms_compliance';
  subject_id: number | null;
  action: string;
  actor_id: number | null;
  changes: Array<{ field: string; before: unknown; after: unknown }>;
}
/** An invitation to a team, as the server keeps it (src/entities/invitations.ts); `expired` is computed. */
export interface Invitation {
  id: number;
  entity_id: number;
  email: string;
  role: Exclude<TeamRole, 'owner'>;
  state: 'pending' | 'accepted' | 'declined' | 'withdrawn';
  invited_by: number | null;
  created_at: string;
  expires_at: string;
  answered_at: string | null;
}
interface PendingSignUp {
  username: string;
  email: string;
  password: string;
  first_name: string;
  last_name: string;
}

/** An entity's compliance settings as the server keeps them; an entity without them is in mode `enforce` (the safe path is the default, issue 42). */
export interface StoredCompliance {
  mode: 'off' | 'warn' | 'enforce';
  window: { starts_on: string; ends_on: string } | null;
  updated_at: string;
  updated_by: number;
}

export type ComplianceWarning = components['schemas']['SmsComplianceWarning'];

/** A contact as the server keeps it, its tags sorted. */
export interface StoredContact {
  id: number;
  entity_id: number;
  phone: string;
  name: string | null;
  consent: { kind: ConsentKind | null; source: string; given_at: string; text: string | null; evidence: string | null } | null;
  tags: string[];
  created_at: string;
  updated_at: string;
}

export type AlertKind = components['schemas']['MonitorAlertKind'];
export type StoredAlertRule = components['schemas']['MonitorAlertRule'];
export type StoredNotification = components['schemas']['Notification'] & { user_id: number };

/** The seed's replies of each state (set when the state is made: the State type has no place for them). */
export const seedReplies = new WeakMap<State, unknown[]>();

export function newId(state: State, taken: Iterable<number>): number {
  state.nextId = Math.max(state.nextId, ...taken) + 1;
  return state.nextId;
}

export const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
export const displayName = (user: User) => `${user.first_name} ${user.last_name}`.trim() || user.username;
export const publicUser = (user: User) => ({ ...user });
