/**
 * A stateful in-browser mock: msw handlers over an in-memory store seeded from the demo data (fixtures/,
 * copied into msw-fixtures.json), where what a test writes is there when it reads. A create shows in the
 * list and the get, an update changes what it names, a removal removes; `reset()` goes back to the seed.
 *
 *   import { setupServer } from 'msw/node';
 *   import { createStatefulHandlers, DEFAULT_BASE_URL } from '@palanque/sdk/msw';
 *   const mock = createStatefulHandlers();
 *   const server = setupServer(...mock.handlers);
 *   beforeAll(() => server.listen());
 *   afterEach(() => mock.reset());
 *   // log in as a demo user (password DEFAULT_MOCK_PASSWORD), then use the SDK as against the server
 *
 * What holds, as on the server (the handlers of src/entities, src/accounts, src/research, src/news,
 * src/messaging, src/monitors): the answers' shapes, statuses and messages (the envelope
 * `{ success, data, message, request_id }`, 201 for a create, the error model for 401, 403, 404, 409 and
 * 422, with the same codes, rules and fields); a key issued by login and needed by every ApiKeyAuth
 * operation; the request checks of msw-validation.ts; the team rules in their simplest form (a user sees
 * the entities of their teams, an admin all); issue 11's partial update (a field left out keeps its
 * value, `null` clears it, market-share entries matched by `id`) and the ETag / If-Match rule (409
 * `edit_conflict` on a stale version). What it does not imitate is listed in the README (msw section).
 *
 * Operations without a handler here fall through to the example handlers (msw.ts), which answer the
 * spec's examples.
 */
import { http, type HttpHandler } from 'msw';
import seedData from './msw-fixtures.json' with { type: 'json' };
import { candidacyIn, candidacySummary, EMPTY_COURT, entityFromCandidacy, type CourtSeed } from './msw-court.js';
import { inaugurationsOf, mockCalendarOf, mockEffectiveWindow, mockLegalWindowProblem, mockWindowWarnings } from './msw-election-calendar.js';
import { candidacyLawDetails } from './msw-candidacy-law.js';
import { asCandidacyDetails } from './candidacy-law.js';
import * as courtReads from './msw-court-reads.js';
import { COVERED_FROM as REGISTERED_PARTIES_FROM, REGISTERED_PARTIES as REGISTERED_PARTY_LIST, partiesRegisteredOn } from './registered-parties.js';
import { apiKeyIn, errorResponse, operationById, refuseInvalidRequest, requiresKey, unauthorizedResponse, type ErrorDetail } from './msw-validation.js';
import { deepfakeProblem, labelProblem, type SyntheticContent } from './synthetic-content.js';
import { CONSENT_KINDS, judgeConsent, REFUSED_CONSENT_KINDS, type ConsentKind } from './consent-sources.js';
import { optOutPhraseOf } from './opt-out-phrases.js';
import type { components } from './schema.js';

/** The demo users' password unless `password` says otherwise (the sandbox's default too). */
export const DEFAULT_MOCK_PASSWORD = 'palanque-sandbox';

export interface StatefulOptions {
  /** Absolute base URL the handlers answer on, as given to `createApiClient` (default http://palanque.test). */
  baseUrl?: string;
  /** The demo data to start from (and to go back to on reset); default: fixtures/. */
  seed?: StatefulSeed;
  /** The password of every demo user (default DEFAULT_MOCK_PASSWORD). */
  password?: string;
}

export interface StatefulHandlers {
  /** The stateful handlers; give them to `setupServer` or `setupWorker` before the example handlers. */
  handlers: HttpHandler[];
  /** Back to the seed: every write undone, every key issued forgotten. */
  reset(): void;
  /**
   * The token the confirmation mail to `email` would carry, for a pending sign-up or change of address
   * (the mock mails nothing): what a front end's test gives verifyEmail. Undefined when none is pending.
   */
  confirmationToken(email: string): string | undefined;
}

type Seed = typeof seedData;
/** The demo data; `elections`, the electoral court's tables (fixtures/elections.json), may be left out. */
export type StatefulSeed = Pick<Seed, 'users' | 'entities' | 'monitors' | 'research' | 'sms'> & { elections?: CourtSeed };
type Entity = components['schemas']['CandidateEntity'];
type TeamRole = 'owner' | 'admin' | 'operator' | 'viewer';
type Json = Record<string, unknown>;

/** A demo user as the mock keeps it: the contract's User, writable (logins and the admins' operations change it). */
interface User {
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
interface Member {
  id: number;
  user_id: number;
  role: TeamRole;
  added_at: string;
}
interface StoredEntity {
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
interface State {
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
interface StoredCampaign {
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
interface HistoryRow {
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
interface Invitation {
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

const ENTITIES_PER_PAGE = 30;
const SESSIONS_PER_PAGE = 30;
/** The server's default PASSWORD_MIN_LENGTH (src/accounts/password-policy.ts). */
const PASSWORD_MIN_LENGTH = 12;
/** Fields the API writes itself: accepted in a body (a front end sends back what it read) and ignored. */
const READ_ONLY_FIELDS = new Set(['id', 'tp', 'updated_at', 'updated_by', 'candidacy']);
/** Fields the server answers as null when they have no value (the store's nullable columns). */
const NULLABLE_FIELDS = new Set(['nr_urna', 'municipioBase']);

/** The stateful handlers alone; msw.ts's createStatefulHandlers puts the example handlers behind them. */
export function statefulHandlers({ baseUrl = 'http://palanque.test', seed = seedData, password = DEFAULT_MOCK_PASSWORD }: StatefulOptions = {}): StatefulHandlers {
  const base = baseUrl.replace(/\/+$/, '');
  let state = seeded(seed);
  const on = (operationId: string, answer: (context: Context) => Response | Promise<Response>): HttpHandler => {
    const operation = operationById(operationId);
    if (!operation) throw new TypeError(`The contract has no operation "${operationId}"`);
    const basePath = new URL(base).pathname.replace(/\/$/, '');
    const method = operation.method as 'get' | 'post';
    return http[method](`${base}${operation.path.replace(/\{(.+?)\}/g, ':$1')}`, async ({ request, params }) => {
      const url = new URL(request.url);
      // `/api/usuario/{user_id}/` also matches `/api/usuario/get_user_social_logins/`: not ours.
      if (Object.values(params).some((value) => !/^\d+$/.test(String(value)))) return undefined;
      const refused = await refuseInvalidRequest(operation, request, url.pathname.slice(basePath.length) || '/');
      if (refused) return refused;
      const header = request.headers.get('authorization');
      const key = header === null ? undefined : state.keys.get(apiKeyIn(header) ?? '');
      const user = state.users.find((candidate) => candidate.id === key?.user_id);
      if (requiresKey(operation.node) && !user?.is_active) return unauthorizedResponse('The API key is invalid, expired or revoked. Log in again.');
      const body = request.method === 'GET' ? {} : ((await request.clone().json().catch(() => ({}))) as Json);
      return answer({ request, url, body, user: user!, keyId: key?.id, state, base });
    });
  };
  const handlers = [
    ...accountHandlers(on, password),
    ...entityHandlers(on),
    ...historyHandlers(on),
    ...operatorHandlers(on),
    ...monitorHandlers(on),
    ...researchHandlers(on),
    ...newsHandlers(on),
    ...smsHandlers(on),
    ...complianceHandlers(on),
    ...smsCampaignHandlers(on),
    ...contactHandlers(on),
    ...chatHandlers(on),
    ...alertRuleHandlers(on),
    ...notificationHandlers(on),
    ...courtReadHandlers(on),
  ];
  return {
    handlers,
    reset() {
      // The handlers read `state` at each request, so replacing it resets them all.
      state = seeded(seed);
    },
    confirmationToken(email) {
      const address = email.trim().toLowerCase();
      const waiting = [...state.pendingSignUps, ...state.pendingEmailChanges];
      return waiting.find(([, pending]) => pending.email === address)?.[0];
    },
  };
}

interface Context {
  request: Request;
  url: URL;
  body: Json;
  /** The caller (for ApiKeyAuth operations; they are refused without a live key before this). */
  user: User;
  /** The id of the caller's key, as listMySessions shows it. */
  keyId: number | undefined;
  state: State;
  base: string;
}
type On = (operationId: string, answer: (context: Context) => Response | Promise<Response>) => HttpHandler;

// --- the store --------------------------------------------------------------------------------------

function seeded(seed: StatefulSeed): State {
  const copy = structuredClone(seed);
  const users: User[] = copy.users.map((user) => ({ ...user, phone: user.phone ?? null, last_login: null, is_active: true, deleted_at: null, contact_visible_to_team: (user as { contact_visible_to_team?: boolean }).contact_visible_to_team === true }));
  const userId = (username: string) => users.find((user) => user.username === username)?.id ?? 0;
  let nextId = 1000;
  const entities = new Map<number, StoredEntity>();
  for (const entity of copy.entities.entities) {
    const record = entity.record as unknown as Json;
    // The server gives market-share entries ids; the fixtures leave them out.
    if (Array.isArray(record.marketshare)) record.marketshare = (record.marketshare as Json[]).map((entry) => ({ id: (nextId += 1), ...entry }));
    const members = entity.team.map((member) => ({ id: 'id' in member ? Number(member.id) : (nextId += 1), user_id: userId(member.user), role: member.role as TeamRole, added_at: member.added_at }));
    entities.set(entity.id, { id: entity.id, tp: entity.tp as StoredEntity['tp'], record, created_at: entity.created_at, updated_at: entity.updated_at, updated_by: members[0]?.user_id ?? null, version: 1, members });
  }
  // The demo's open invitations, sent as the data is loaded (as the seed does).
  type InvitationFixture = { email: string; role: Invitation['role']; invited_by: string };
  const invitations: Invitation[] = copy.entities.entities.flatMap((entity) =>
    ((entity as { invitations?: InvitationFixture[] }).invitations ?? []).map((invitation) => ({
      id: (nextId += 1),
      entity_id: entity.id,
      email: invitation.email,
      role: invitation.role,
      state: 'pending' as const,
      invited_by: userId(invitation.invited_by),
      created_at: now(),
      expires_at: new Date(Date.now() + INVITATION_LIFETIME_MS).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      answered_at: null,
    })),
  );
  const monitors = new Map(copy.monitors.map(({ metrics: _metrics, created_by: _by, alert_rules: _rules, ...monitor }) => [monitor.id, { ...monitor, latest_metrics: [], daily_series: [] }]));
  const alertRules = new Map(
    copy.monitors.flatMap((monitor) =>
      (monitor.alert_rules ?? []).map((rule): [number, StoredAlertRule] => {
        const id = (nextId += 1);
        return [id, { id, monitor_id: monitor.id, kind: rule.kind as AlertKind, network: ('network' in rule ? rule.network : undefined) ?? null, threshold: rule.threshold, breached: false, last_fired_at: null, created_at: monitor.created_at }];
      }),
    ),
  );
  const bookmarks = new Map(copy.research.bookmarks.map(({ user, ...bookmark }) => [bookmark.id, { ...bookmark, user_id: userId(user) }]));
  const newsSources = new Map(copy.research.news_sources.map(({ requested_by: _by, ...source }) => [source.id, source]));
  const credentials = new Map(copy.sms.credentials.map(({ created_by: _by, ...credential }) => [credential.id, { ...credential, provider: 'provider' }]));
  const campaigns = new Map(
    copy.sms.campaigns.map((fixture): [number, StoredCampaign] => {
      const messages = fixture.messages.map((message) => ({ id: (nextId += 1), recipient: message.recipient, contact_id: null, status: message.status, error_code: null, error_message: null, price: null, price_unit: null, updated_at: fixture.created_at }));
      const text = campaignText(fixture.mensagem.mensagem);
      const campaign: StoredCampaign = {
        id: fixture.id,
        titulo: fixture.titulo,
        credencial: fixture.credencial,
        entity_id: credentials.get(fixture.credencial)?.entity_id ?? null,
        accepted: messages.length,
        rejected: 0,
        opted_out_skipped: 0,
        not_mobile_skipped: 0,
        not_mobile_examples: [],
        ...text,
        state: 'sending',
        created_at: fixture.created_at,
        created_by: userId(fixture.created_by) || null,
        finished_at: null,
        canceled_by: null,
        footer: null,
        audience: null,
        messages,
      };
      return [campaign.id, campaign];
    }),
  );
  const court = copy.elections ?? EMPTY_COURT;
  const made: State = { users, keys: new Map(), passwords: new Map(), entities, monitors, bookmarks, newsSources, credentials, campaigns, contacts: new Map(), compliance: new Map(), pendingSignUps: new Map(), pendingEmailChanges: new Map(), invitations, history: [], court, alertRules, notifications: [], nextId };
  seedReplies.set(made, copy.sms.replies ?? []);
  return made;
}

function newId(state: State, taken: Iterable<number>): number {
  state.nextId = Math.max(state.nextId, ...taken) + 1;
  return state.nextId;
}

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const displayName = (user: User) => `${user.first_name} ${user.last_name}`.trim() || user.username;
const publicUser = (user: User) => ({ ...user });

function envelope(status: number, data: unknown, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ success: true, data, message, request_id: crypto.randomUUID() }), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}

const notFound = (message: string, details: ErrorDetail[]) => errorResponse(404, 'not_found', message, details);
const conflict = (message: string, details: ErrorDetail[], code = 'conflict') => errorResponse(409, code, message, details);
const forbidden = (message: string) => errorResponse(403, 'forbidden', message);
const invalidBody = (details: ErrorDetail[], message = 'The request body is invalid.') => errorResponse(422, 'validation_failed', message, details);

/** The caller's role in the entity's team (`admin` for a platform admin outside it), or undefined. */
function roleIn(entity: StoredEntity, user: User): TeamRole | undefined {
  const role = entity.members.find((member) => member.user_id === user.id)?.role;
  return role ?? (user.is_admin ? 'admin' : undefined);
}

/** What each team role may do (src/entities/teams.ts). */
const MAY = {
  read: ['owner', 'admin', 'operator', 'viewer'],
  edit: ['owner', 'admin', 'operator'],
  manageTeam: ['owner', 'admin'],
  readPersonalData: ['owner', 'admin'],
} as const satisfies Record<string, readonly TeamRole[]>;
type Permission = keyof typeof MAY;
const PERMISSION_TEXT: Record<Permission, string> = { read: 'read this entity', edit: 'change this entity', manageTeam: 'manage this team', readPersonalData: 'read personal data whole' };

/** Whether the role allows the permission; a platform admin keeps admin rights where a membership gives less. */
function may(user: User, role: TeamRole, permission: Permission): boolean {
  const allowed: readonly TeamRole[] = MAY[permission];
  return allowed.includes(role) || (user.is_admin && allowed.includes('admin'));
}

/**
 * The entity if the caller is in its team with a role allowing `permission`: otherwise the server's 404
 * naming the field that carried the id (a stranger learns nothing), or its 403.
 */
function entityFor(context: Context, id: number, where: Pick<ErrorDetail, 'location' | 'field'>, permission: Permission = 'read'): StoredEntity | Response {
  const entity = context.state.entities.get(id);
  const role = entity && roleIn(entity, context.user);
  if (!entity || !role) return notFound(`There is no entity ${id} in your teams.`, [{ ...where, rule: 'in_your_teams', message: 'must be an entity of one of your teams', value: id }]);
  if (!may(context.user, role, permission)) return forbidden(`Your role in this team (${role}) may not ${PERMISSION_TEXT[permission]}.`);
  return entity;
}

// --- accounts -----------------------------------------------------------------------------------------

function accountHandlers(on: On, password: string): HttpHandler[] {
  return [
    on('login', ({ request, body, state }) => {
      const name = String(body.username).trim().toLowerCase();
      const user = state.users.find((candidate) => candidate.username === name || candidate.email.toLowerCase() === name);
      const pending = user ? undefined : [...state.pendingSignUps.values()].find((signUp) => signUp.username.toLowerCase() === name || signUp.email === name);
      if (pending && pending.password === body.password) {
        return errorResponse(403, 'email_not_verified', `Confirm your e-mail address first: open the link sent to ${pending.email}, or ask for a new one.`);
      }
      if (!user || body.password !== (state.passwords.get(user.id) ?? password)) return errorResponse(401, 'invalid_credentials', 'Invalid username or password.');
      if (!user.is_active) return errorResponse(403, 'account_inactive', 'This account is deactivated. Ask an administrator to reactivate it.');
      const token = [...crypto.getRandomValues(new Uint8Array(24))].map((byte) => byte.toString(16).padStart(2, '0')).join('');
      const expires = new Date(Date.now() + 30 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const device = request.headers.get('user-agent')?.slice(0, 200) || null;
      state.keys.set(token, { id: newId(state, []), user_id: user.id, device, created_at: now(), expires_at: expires });
      user.last_login = now();
      // The device token the login carried is answered back, else a new one (the mock trusts every device: it has no lock).
      const carried = typeof body.device_token === 'string' && body.device_token.startsWith('plqd_') ? body.device_token : undefined;
      const deviceToken = carried ?? `plqd_${[...crypto.getRandomValues(new Uint8Array(32))].map((byte) => byte.toString(16).padStart(2, '0')).join('')}`;
      return envelope(200, { token, token_type: 'Token', expires_at: expires, user: publicUser(user), device_token: deviceToken }, 'Logged in.');
    }),
    on('logout', ({ request, state }) => {
      state.keys.delete(apiKeyIn(request.headers.get('authorization'))!);
      return envelope(200, { revoked: true }, 'Logged out: the key was revoked.');
    }),
    on('changePassword', ({ body, user, keyId, state }) => {
      if (body.current_password !== (state.passwords.get(user.id) ?? password)) {
        return errorResponse(401, 'invalid_credentials', 'The current password is incorrect.', [
          { location: 'body', field: 'current_password', rule: 'current_password', message: "must be the account's current password" },
        ]);
      }
      const next = String(body.new_password);
      const length = [...next].length;
      if (length < PASSWORD_MIN_LENGTH) return invalidBody([{ location: 'body', field: 'new_password', rule: 'min_length', message: `must be at least ${PASSWORD_MIN_LENGTH} characters (it has ${length})` }]);
      if (next === body.current_password) return invalidBody([{ location: 'body', field: 'new_password', rule: 'different_from_current', message: 'must differ from the current password' }]);
      state.passwords.set(user.id, next);
      const others = [...state.keys].filter(([, key]) => key.user_id === user.id && key.id !== keyId);
      for (const [token] of others) state.keys.delete(token);
      const closed = others.length === 1 ? '1 other session was closed' : `${others.length} other sessions were closed`;
      return envelope(200, { changed: true, keys_revoked: others.length }, `The password was changed; ${closed}.`);
    }),
    on('listMySessions', ({ url, user, keyId, state, base }) => {
      const page = Number(url.searchParams.get('page') ?? 1);
      const own = [...state.keys.values()].filter((key) => key.user_id === user.id).sort((a, b) => b.id - a.id);
      const sessions = own.map((key) => ({ id: key.id, device: key.device, created_at: key.created_at, last_used_at: null, expires_at: key.expires_at, current: key.id === keyId }));
      const paged = pageOf(sessions, page, SESSIONS_PER_PAGE, new URL(`${base}/api/auth/sessions/`));
      return paged instanceof Response ? paged : envelope(200, paged, `${own.length} live session${own.length === 1 ? '' : 's'}.`);
    }),
    on('revokeMySession', ({ url, user, state }) => {
      const id = Number(url.pathname.split('/').filter(Boolean).at(-2));
      const found = [...state.keys].find(([, key]) => key.id === id && key.user_id === user.id);
      if (!found) {
        return notFound(`You have no live session ${id} (unknown, expired or already revoked).`, [
          { location: 'path', field: 'session_id', rule: 'own_live_session', message: 'must be the id of one of your live sessions', value: id },
        ]);
      }
      state.keys.delete(found[0]);
      return envelope(200, { revoked: true }, 'The key was revoked.');
    }),
    on('getMyProfile', ({ user }) => envelope(200, publicUser(user), 'Your profile.')),
    on('exportMyData', ({ user, state }) => {
      const sessions = [...state.keys.values()].filter((key) => key.user_id === user.id).map(({ id, device, created_at, expires_at }) => ({ id, device, created_at, last_used_at: null, expires_at, revoked_at: null }));
      const memberships = [...state.entities.values()].flatMap((entity) =>
        entity.members.filter((member) => member.user_id === user.id).map((member) => ({ entity_id: entity.id, entity_name: entity.record.nome, entity_type: entity.tp, role: member.role, added_at: member.added_at })),
      );
      const bookmarks = [...state.bookmarks.values()].filter((bookmark) => bookmark.user_id === user.id).map(({ user_id: _owner, ...bookmark }) => bookmark);
      const kept: Record<string, Json[]> = { sessions, memberships, research_bookmarks: bookmarks };
      const sections = Object.fromEntries(Object.entries(EXPORT_SOURCES).map(([name, source]) => [name, { source, rows: kept[name] ?? [] }]));
      const generated = new Date().toISOString();
      const headers = { 'Content-Disposition': `attachment; filename="palanque-data-${user.username}-${generated.slice(0, 10)}.json"` };
      return envelope(200, { generated_at: generated, account: publicUser(user), sections }, 'Everything Palanque holds about you.', headers);
    }),
    on('deleteMyAccount', ({ body, user, state }) => {
      if (body.current_password !== (state.passwords.get(user.id) ?? password)) {
        return errorResponse(401, 'invalid_credentials', 'The current password is incorrect.', [
          { location: 'body', field: 'current_password', rule: 'current_password', message: "must be the account's current password" },
        ]);
      }
      // As the server (src/accounts/account-deletion.ts): an owned entity goes to its longest-standing admin,
      // or with the account when nobody else is in its team; members without an admin refuse it all.
      const owned = [...state.entities.values()].filter((entity) => entity.members.some((member) => member.user_id === user.id && member.role === 'owner'));
      const others = (entity: StoredEntity) => entity.members.filter((member) => member.user_id !== user.id).sort((a, b) => a.added_at.localeCompare(b.added_at) || a.id - b.id);
      const blocked = owned.filter((entity) => others(entity).length > 0 && !others(entity).some((member) => member.role === 'admin')).map((entity) => entity.id);
      if (blocked.length > 0) {
        return conflict(`You own entities whose teams have other members but no admin to take them over (${blocked.join(', ')}): make a member admin first, or remove the members.`, [
          { field: 'entities_owned', rule: 'no_successor', message: 'have other members but no admin to become their owner: make a member admin first', value: blocked },
        ]);
      }
      const handedOver: number[] = [];
      const deleted: number[] = [];
      for (const entity of owned) {
        const successor = others(entity).find((member) => member.role === 'admin');
        if (successor) {
          successor.role = 'owner';
          handedOver.push(entity.id);
        } else {
          state.entities.delete(entity.id);
          deleted.push(entity.id);
        }
      }
      let teamsLeft = 0;
      for (const entity of state.entities.values()) {
        const before = entity.members.length;
        entity.members = entity.members.filter((member) => member.user_id !== user.id);
        if (entity.members.length < before) teamsLeft += 1;
      }
      teamsLeft += deleted.length;
      const keys = [...state.keys].filter(([, key]) => key.user_id === user.id);
      for (const [token] of keys) state.keys.delete(token);
      for (const [id, bookmark] of state.bookmarks) if (bookmark.user_id === user.id) state.bookmarks.delete(id);
      for (const [token, change] of state.pendingEmailChanges) if (change.user_id === user.id) state.pendingEmailChanges.delete(token);
      const pseudonym = `excluido-${Math.floor(Math.random() * 0x100000000).toString(16).padStart(8, '0')}`;
      const deletedAt = now();
      Object.assign(user, { username: pseudonym, email: `${pseudonym}@excluido.invalid`, first_name: '', last_name: '', phone: null, is_admin: false, is_active: false, deleted_at: deletedAt });
      state.passwords.set(user.id, crypto.randomUUID()); // a password nobody knows
      const data = { deleted: true, username: pseudonym, deleted_at: deletedAt, keys_revoked: keys.length, teams_left: teamsLeft, entities_handed_over: handedOver, entities_deleted: deleted };
      return envelope(200, data, `Your account was deleted: it is now ${pseudonym}; ${keys.length === 1 ? '1 key was revoked' : `${keys.length} keys were revoked`}.`);
    }),
    ...adminAccountHandlers(on),
    ...signUpHandlers(on, password),
    on('updateMyProfile', ({ body, user }) => {
      if (typeof body.first_name === 'string') user.first_name = body.first_name.trim();
      if (typeof body.last_name === 'string') user.last_name = body.last_name.trim();
      if (body.phone !== undefined) {
        // Only the digits are counted (the server checks the numbering plan): 10 or 11 are Brazilian.
        const digits = String(body.phone ?? '').replace(/\D/g, '');
        const e164 = digits === '' ? null : /^\d{10,11}$/.test(digits) ? `+55${digits}` : /^\d{12,15}$/.test(digits) ? `+${digits}` : undefined;
        if (e164 === undefined) return invalidBody([{ location: 'body', field: 'phone', rule: 'phone_number', message: 'must be a valid phone number (a Brazilian one may leave out +55)', value: String(body.phone) }]);
        user.phone = e164;
      }
      if (typeof body.contact_visible_to_team === 'boolean') user.contact_visible_to_team = body.contact_visible_to_team;
      return envelope(200, publicUser(user), 'Your profile was updated.');
    }),
    on('getUser', ({ url, user, state }) => {
      const id = Number(url.pathname.split('/').filter(Boolean).pop());
      const teammates = new Set([...state.entities.values()].filter((entity) => entity.members.some((member) => member.user_id === user.id)).flatMap((entity) => entity.members.map((member) => member.user_id)));
      const found = state.users.find((candidate) => candidate.id === id && (user.is_admin || candidate.id === user.id || teammates.has(candidate.id)));
      if (!found) return notFound(`There is no user ${id} that you can see.`, [{ location: 'path', field: 'user_id', rule: 'visible_user', message: 'must be a user you can see', value: id }]);
      if (user.is_admin || found.id === user.id) return envelope(200, publicUser(found), 'User profile.');
      // A teammate: the e-mail and phone only if shared, never the last login (src/accounts/users.ts).
      const shared = found.contact_visible_to_team;
      return envelope(200, { ...publicUser(found), email: shared ? found.email : null, phone: shared ? found.phone : null, last_login: null }, 'User profile.');
    }),
  ];
}

/**
 * Sign-up as a server with SIGNUP=open answers it, and a user's change of address: the same answer for a
 * free and a taken address, a change only once verifyEmail gets the token (`confirmationToken` tells it;
 * nothing is mailed).
 */
function signUpHandlers(on: On, password: string): HttpHandler[] {
  const linkLifetimeSeconds = 48 * 3600;
  const accepted = (email: string, message: string) => envelope(200, { status: 'confirmation_sent', email, link_expires_in_seconds: linkLifetimeSeconds }, message);
  const newToken = () => [...crypto.getRandomValues(new Uint8Array(24))].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  const forget = (state: State, email: string) => {
    for (const [token, pending] of state.pendingSignUps) if (pending.email === email) state.pendingSignUps.delete(token);
  };
  return [
    on('signUp', ({ body, state }) => {
      const username = String(body.username);
      const email = String(body.email).trim().toLowerCase();
      const chosen = String(body.password);
      const problems: ErrorDetail[] = [];
      if (username.includes('@')) problems.push({ location: 'body', field: 'username', rule: 'username', message: 'must be letters, digits and . _ + - only (no @)', value: username });
      if ([...chosen].length < PASSWORD_MIN_LENGTH) problems.push({ location: 'body', field: 'password', rule: 'min_length', message: `must be at least ${PASSWORD_MIN_LENGTH} characters (it has ${[...chosen].length})` });
      if (problems.length > 0) return invalidBody(problems);
      const key = username.toLowerCase();
      const held = [...state.pendingSignUps.values()].some((pending) => pending.username.toLowerCase() === key && pending.email !== email);
      if (held || state.users.some((other) => other.username.toLowerCase() === key)) {
        return conflict('Another account already has this username.', [{ location: 'body', field: 'username', rule: 'unique', message: 'is taken by another account', value: username }]);
      }
      // A taken address changes nothing (the server mails its owner); a free one gets a pending sign-up.
      if (!state.users.some((other) => other.email === email)) {
        forget(state, email);
        state.pendingSignUps.set(newToken(), { username, email, password: chosen, first_name: String(body.first_name ?? ''), last_name: String(body.last_name ?? '') });
      }
      return accepted(email, 'Check your e-mail. If the address can be used, a link to confirm the account was sent to it.');
    }),
    on('resendSignUpConfirmation', ({ body, state }) => {
      const email = String(body.email).trim().toLowerCase();
      const pending = [...state.pendingSignUps.values()].find((signUp) => signUp.email === email);
      if (pending) {
        forget(state, email);
        state.pendingSignUps.set(newToken(), pending);
      }
      return accepted(email, 'If a sign-up with this address waits for confirmation, a new link was sent to it.');
    }),
    on('changeMyEmail', ({ body, user, state }) => {
      if (body.current_password !== (state.passwords.get(user.id) ?? password)) {
        return errorResponse(401, 'invalid_credentials', 'The current password is incorrect.', [
          { location: 'body', field: 'current_password', rule: 'current_password', message: "must be the account's current password" },
        ]);
      }
      const email = String(body.new_email).trim().toLowerCase();
      if (email === user.email) return invalidBody([{ location: 'body', field: 'new_email', rule: 'different_from_current', message: "must differ from the account's current address", value: email }]);
      // Another account's address changes nothing (the server tells its owner); a newer request replaces the older.
      if (!state.users.some((other) => other.email === email)) {
        for (const [token, pending] of state.pendingEmailChanges) if (pending.user_id === user.id) state.pendingEmailChanges.delete(token);
        state.pendingEmailChanges.set(newToken(), { user_id: user.id, email });
      }
      return envelope(200, { status: 'confirmation_sent', email, link_expires_in_seconds: linkLifetimeSeconds }, "Check the new address's mail. If it can be used, a link to confirm it was sent to it.");
    }),
    on('verifyEmail', ({ url, state }) => {
      const token = url.searchParams.get('token');
      if (token === null) return errorResponse(400, 'bad_request', 'The request is malformed: token is required.', [{ location: 'query', field: 'token', rule: 'required', message: 'is required' }]);
      const change = state.pendingEmailChanges.get(token);
      const mover = change && state.users.find((other) => other.id === change.user_id);
      if (change && mover) {
        state.pendingEmailChanges.delete(token);
        mover.email = change.email;
        return envelope(200, { status: 'email_changed', username: mover.username, email: mover.email }, `The account's e-mail address is now ${mover.email}.`);
      }
      const pending = state.pendingSignUps.get(token);
      if (!pending) {
        return errorResponse(400, 'invalid_token', 'The confirmation link is not valid: unknown, already used or expired. Sign up again, or ask for a new link.', [
          { location: 'query', field: 'token', rule: 'valid_confirmation_token', message: 'must be the token of an unused, unexpired confirmation link' },
        ]);
      }
      forget(state, pending.email);
      const created: User = {
        id: newId(state, state.users.map((other) => other.id)),
        username: pending.username,
        email: pending.email,
        first_name: pending.first_name,
        last_name: pending.last_name,
        phone: null,
        is_admin: false,
        date_joined: now(),
        last_login: null,
        is_active: true,
        contact_visible_to_team: false,
      };
      state.users.push(created);
      state.passwords.set(created.id, pending.password);
      return envelope(200, { status: 'account_activated', username: created.username, email: created.email }, 'The e-mail address is confirmed; you can log in now.');
    }),
  ];
}

/**
 * The sections of exportMyData and where the server reads them (src/accounts/data-export.ts); the mock
 * fills sessions, memberships and research bookmarks, and leaves the others empty.
 */
const EXPORT_SOURCES: Record<string, string> = {
  sessions: 'api_tokens.user_id',
  login_devices: 'login_devices.user_id',
  password_resets: 'password_reset_tokens.user_id',
  pending_email_changes: 'pending_email_changes.user_id',
  social_logins: 'social_logins.user_id',
  pending_social_logins: 'oauth_pending_links.user_id',
  social_login_attempts: 'oauth_states.user_id',
  memberships: 'entity_members.user_id',
  entities_owned: 'entities.owner_id',
  entities_last_written: 'entities.updated_by',
  guardianship_links_created: 'guardianship_links.created_by',
  research_bookmarks: 'research_bookmarks.user_id',
  news_sources_requested: 'news_sources.requested_by',
  monitors_created: 'social_monitors.created_by',
  scenario_requests: 'scenario_requests.requested_by, scenario_requests.decided_by',
  sms_credentials_added: 'sms_credentials.created_by',
  sms_campaigns_sent: 'sms_campaigns.created_by',
  sms_campaigns_canceled: 'sms_campaigns.canceled_by',
  contacts_added: 'contacts.created_by',
  sms_compliance_set: 'sms_compliance.updated_by',
  sms_opt_outs_recorded: 'sms_opt_outs.created_by',
  contact_retention_holds: 'contact_retention.held_by',
  election_calendar_changed: 'election_calendar.updated_by',
  chat_replies_written: 'conversation_messages.sent_by',
  chat_conversations_assigned: 'conversations.assignee_id',
  messenger_pages_connected: 'messenger_pages.connected_by',
  notifications: 'notifications.user_id',
  push_subscriptions: 'push_subscriptions.user_id',
  monitor_alert_rules_added: 'monitor_alert_rules.created_by',
  webhook_endpoints_added: 'webhook_endpoints.created_by',
  elections_panel_syncs: 'elections_panel_syncs.user_id',
  social_network_removals: 'socialnet_removals.user_id',
  security_events: 'audit_events.user_id, audit_events.actor_id',
  edits_made: 'edit_history.actor_id',
  membership_counts: 'entity_member_counts.user_id',
  failed_logins: 'login_failures.subject',
};

/** The platform admins' operations on accounts; a created user logs in with the password given, else the demo one. */
function adminAccountHandlers(on: On): HttpHandler[] {
  const adminOnly = (user: User) => (user.is_admin ? undefined : forbidden('Only platform administrators may do this.'));
  /** The user the path names, or the server's 404. */
  const named = ({ url, state }: Context): User | Response => {
    const id = Number(url.pathname.split('/').filter(Boolean).at(-2));
    return state.users.find((user) => user.id === id) ?? notFound(`There is no user ${id}.`, [{ location: 'path', field: 'user_id', rule: 'existing_user', message: 'must be the id of a user', value: id }]);
  };
  const revokeAllOf = (state: State, userId: number) => {
    const theirs = [...state.keys].filter(([, key]) => key.user_id === userId);
    for (const [token] of theirs) state.keys.delete(token);
    return theirs.length;
  };
  const keysRevoked = (count: number) => (count === 1 ? '1 key was revoked' : `${count} keys were revoked`);
  return [
    on('createUser', ({ body, user, state }) => {
      const refused = adminOnly(user);
      if (refused) return refused;
      const username = String(body.username);
      const email = String(body.email).trim().toLowerCase();
      if (username.includes('@')) return invalidBody([{ location: 'body', field: 'username', rule: 'username', message: 'must be letters, digits and . _ + - only (no @)', value: username }]);
      const taken = state.users.find((other) => other.email === email) ? 'email' : state.users.find((other) => other.username.toLowerCase() === username.toLowerCase()) ? 'username' : undefined;
      if (taken) return conflict(`Another account already has this ${taken === 'email' ? 'e-mail address' : 'username'}.`, [{ location: 'body', field: taken, rule: 'unique', message: 'is taken by another account', value: taken === 'email' ? email : username }]);
      const created: User = {
        id: newId(state, state.users.map((other) => other.id)),
        username,
        email,
        first_name: String(body.first_name ?? ''),
        last_name: String(body.last_name ?? ''),
        phone: null,
        is_admin: body.is_admin === true,
        date_joined: now(),
        last_login: null,
        is_active: true,
        contact_visible_to_team: false,
      };
      state.users.push(created);
      if (typeof body.password === 'string') state.passwords.set(created.id, body.password);
      const how = typeof body.password === 'string' ? '' : `; a link to get a password was mailed to ${email}`;
      return envelope(201, publicUser(created), `User ${created.id} was created${how}.`);
    }),
    on('deactivateUser', (context) => {
      const target = adminOnly(context.user) ?? named(context);
      if (target instanceof Response) return target;
      if (target.id === context.user.id) return conflict('You cannot deactivate your own account; another admin can.', [{ location: 'path', field: 'user_id', rule: 'not_yourself', message: "must not be the caller's own account", value: target.id }]);
      target.is_active = false;
      const revoked = revokeAllOf(context.state, target.id);
      return envelope(200, publicUser(target), `User ${target.id} was deactivated; ${keysRevoked(revoked)}.`);
    }),
    on('reactivateUser', (context) => {
      const target = adminOnly(context.user) ?? named(context);
      if (target instanceof Response) return target;
      if (target.deleted_at) {
        return conflict(`User ${target.id} deleted their account; it cannot be reactivated.`, [
          { location: 'path', field: 'user_id', rule: 'account_deleted', message: 'must not be a deleted account', value: target.id },
        ]);
      }
      target.is_active = true;
      return envelope(200, publicUser(target), `User ${target.id} is active.`);
    }),
    on('endUserSessions', (context) => {
      const target = adminOnly(context.user) ?? named(context);
      if (target instanceof Response) return target;
      const revoked = revokeAllOf(context.state, target.id);
      return envelope(200, { keys_revoked: revoked }, `User ${target.id}: ${keysRevoked(revoked)}.`);
    }),
  ];
}

// --- entities -----------------------------------------------------------------------------------------

// --- edit history and the data subject's rights (src/entities/history-handlers.ts) ---------------------

const HISTORY_PER_PAGE = 50;
const PERSONAL_FIELDS = ['cpf', 'titulo_eleitor', 'raca', 'cepBase', 'endBase'];

/** The fields whose values differ between two records (nested lists as one field each); an empty list counts as none. */
function changedFields(before: Json, after: Json): HistoryRow['changes'] {
  const valueOf = (value: unknown) => (value === undefined || (Array.isArray(value) && value.length === 0) ? null : value);
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((field) => !READ_ONLY_FIELDS.has(field));
  return fields
    .map((field) => ({ field, before: valueOf(before[field]), after: valueOf(after[field]) }))
    .filter((change) => JSON.stringify(change.before) !== JSON.stringify(change.after));
}

/** Records a change of the entity itself; an update that changed nothing is not recorded, as on the server. */
function recordHistory(state: State, entityId: number, action: string, actorId: number, changes: HistoryRow['changes']): void {
  if (action === 'updated' && changes.length === 0) return;
  const id = newId(state, state.history.map((row) => row.id));
  state.history.push({ id, entity_id: entityId, occurred_at: now(), subject: 'entity', subject_id: null, action, actor_id: actorId, changes });
}

function historyHandlers(on: On): HttpHandler[] {
  /** The entity of an admin's body, or the server's 403 or 404. */
  const adminsEntity = ({ user, body, state }: Context): StoredEntity | Response => {
    if (!user.is_admin) return forbidden('Only platform administrators may do this.');
    const entity = state.entities.get(Number(body.entity_id));
    if (!entity) return notFound(`There is no entity ${String(body.entity_id)}.`, [{ location: 'body', field: 'entity_id', rule: 'existing_entity', message: 'must be the id of an entity', value: body.entity_id as number }]);
    return entity;
  };
  const changed = (entity: StoredEntity, data: Json, message: string) => envelope(200, { entity_id: entity.id, ...data, version: entity.version }, message, { ETag: `"${entity.version}"` });
  return [
    on('listEntityHistory', (context) => {
      const { url, state, base } = context;
      const id = url.searchParams.get('id');
      if (id === null) return errorResponse(400, 'bad_request', 'The request is malformed: id is required.', [{ location: 'query', field: 'id', rule: 'required', message: 'is required' }]);
      const entity = entityFor(context, Number(id), { location: 'query', field: 'id' }, 'readPersonalData');
      if (entity instanceof Response) return entity;
      const subject = url.searchParams.get('subject');
      const rows = state.history.filter((row) => row.entity_id === entity.id && (subject === null || row.subject === subject)).reverse();
      const items = rows.map(({ entity_id: _entity, actor_id, ...row }) => {
        const actor = state.users.find((candidate) => candidate.id === actor_id);
        return { ...row, actor: actor_id === null ? null : { id: actor_id, display_name: actor ? displayName(actor) : null } };
      });
      const listUrl = new URL(`${base}/api/entidade/history/`);
      listUrl.searchParams.set('id', String(entity.id));
      if (subject) listUrl.searchParams.set('subject', subject);
      const paged = pageOf(items, Number(url.searchParams.get('page') ?? 1), HISTORY_PER_PAGE, listUrl);
      return paged instanceof Response ? paged : envelope(200, paged, `${items.length} change${items.length === 1 ? '' : 's'}.`);
    }),
    on('erasePersonalData', (context) => {
      const entity = adminsEntity(context);
      if (entity instanceof Response) return entity;
      const fields = (context.body.fields as string[] | undefined) ?? PERSONAL_FIELDS;
      const had = new Set(fields.filter((field) => entity.record[field] != null));
      entity.record = Object.fromEntries(Object.entries(entity.record).filter(([field]) => !fields.includes(field)));
      let redacted = 0;
      for (const row of context.state.history.filter((candidate) => candidate.entity_id === entity.id)) {
        if (!row.changes.some((change) => fields.includes(change.field))) continue;
        const erased = (value: unknown) => (value === null ? null : '[erased]');
        row.changes = row.changes.map((change) => (fields.includes(change.field) ? { field: change.field, before: erased(change.before), after: erased(change.after) } : change));
        redacted += 1;
      }
      recordHistory(context.state, entity.id, 'personal_data_erased', context.user.id, fields.map((field) => ({ field, before: had.has(field) ? '[erased]' : null, after: null })));
      entity.version += 1;
      entity.updated_at = now();
      entity.updated_by = context.user.id;
      return changed(entity, { fields, history_rows_redacted: redacted }, `The personal data of entity ${entity.id} was erased (${fields.join(', ')}).`);
    }),
    on('correctPersonalData', (context) => {
      const entity = adminsEntity(context);
      if (entity instanceof Response) return entity;
      const changes = context.body.changes as Json;
      const before = entity.record;
      entity.record = { ...entity.record, ...changes };
      recordHistory(context.state, entity.id, 'personal_data_corrected', context.user.id, changedFields(before, entity.record));
      entity.version += 1;
      entity.updated_at = now();
      entity.updated_by = context.user.id;
      const fields = Object.keys(changes);
      return changed(entity, { fields }, `The personal data of entity ${entity.id} was corrected (${fields.join(', ')}).`);
    }),
  ];
}

function entityHandlers(on: On): HttpHandler[] {
  return [
    on('listEntities', ({ url, user, state, base }) => {
      const tp = url.searchParams.get('tp') ?? undefined;
      const page = Number(url.searchParams.get('page') ?? 1);
      const visible = [...state.entities.values()].filter((entity) => roleIn(entity, user) && (tp === undefined || entity.tp === tp)).sort((a, b) => a.id - b.id);
      const listUrl = new URL(`${base}/api/entidade/`);
      if (tp) listUrl.searchParams.set('tp', tp);
      const paged = pageOf(visible.map((entity) => summaryOf(state, entity, roleIn(entity, user)!)), page, ENTITIES_PER_PAGE, listUrl);
      return paged instanceof Response ? paged : envelope(200, paged, `${visible.length} entities.`);
    }),
    on('getEntity', (context) => {
      const id = context.url.searchParams.get('id');
      if (id === null) return errorResponse(400, 'bad_request', 'The request is malformed: id is required.', [{ location: 'query', field: 'id', rule: 'required', message: 'is required' }]);
      const entity = entityFor(context, Number(id), { location: 'query', field: 'id' });
      return entity instanceof Response ? entity : entityAnswer(context.state, entity, 200, `Entity ${entity.id}.`);
    }),
    on('addEntity', (context) => {
      const { body, state, user, url, request } = context;
      const ifMatch = request.headers.get('if-match');
      if (body.id === undefined) {
        if (ifMatch !== null) {
          return errorResponse(400, 'bad_request', 'The request is malformed: If-Match applies to updates, and the body has no id.', [
            { location: 'header', field: 'If-Match', rule: 'update_only', message: 'is only for updates: send it with the id of the entity', value: ifMatch.slice(0, 200) },
          ]);
        }
        // Candidacies the court would refuse (msw-candidacy-law.ts), for candidates, before the duplicates as on the server.
        const unlawful = (url.searchParams.get('tp') ?? 'candidato') === 'candidato' ? candidacyLawDetails(state.court, body) : [];
        if (unlawful.length > 0) return invalidBody(unlawful, 'The entity is invalid.');
        const duplicate = cpfTaken(state, user, body.cpf, undefined) ?? candidacyRefused(state, user, body.candidacy_id, undefined);
        if (duplicate) return duplicate;
        const id = newId(state, state.entities.keys());
        const record = applyUpdate({}, withIds(state, body));
        const moment = now();
        const tp = (url.searchParams.get('tp') ?? 'candidato') as StoredEntity['tp'];
        state.entities.set(id, { id, tp, record, created_at: moment, updated_at: moment, updated_by: user.id, version: 1, members: [{ id: newId(state, []), user_id: user.id, role: 'owner', added_at: moment }] });
        recordHistory(state, id, 'created', user.id, changedFields({}, record));
        return entityAnswer(state, state.entities.get(id)!, 201, `Entity ${id} created.`);
      }
      const entity = entityFor(context, Number(body.id), { location: 'body', field: 'id' }, 'edit');
      if (entity instanceof Response) return entity;
      // The server's order: the CPF check, then the version (If-Match), then the nested records.
      const unlawful = entity.tp === 'candidato' ? candidacyLawDetails(state.court, body, entity.record) : [];
      if (unlawful.length > 0) return invalidBody(unlawful, 'The entity is invalid.');
      const duplicate = cpfTaken(state, user, body.cpf, entity.id) ?? candidacyRefused(state, user, body.candidacy_id, entity.id, entity.record.candidacy_id);
      if (duplicate) return duplicate;
      if (ifMatch !== null && ifMatch.trim() !== '*') {
        const tags = ifMatch.split(',').map((tag) => tag.trim().replace(/^W\//, ''));
        const current = `"${entity.version}"`;
        if (!tags.includes(current)) {
          return conflict(`Entity ${entity.id} was changed since you read it: your version is ${ifMatch.slice(0, 100)}, the current one is ${current}. Read it again and reapply your change.`, [
            { location: 'header', field: 'If-Match', rule: 'current_version', message: `must be the current version ${current}`, value: ifMatch.slice(0, 200) },
          ], 'edit_conflict');
        }
      }
      const unknownEntry = unknownMarketshareEntry(entity.record, body);
      if (unknownEntry) return unknownEntry;
      const before = entity.record;
      entity.record = applyUpdate(entity.record, withIds(state, body));
      recordHistory(state, entity.id, 'updated', user.id, changedFields(before, entity.record));
      entity.version += 1;
      entity.updated_at = now();
      entity.updated_by = user.id;
      return entityAnswer(state, entity, 200, `Entity ${entity.id} updated.`);
    }),
    on('createEntityFromCandidacy', ({ body, state, user, url }) => {
      const candidacy = candidacyIn(state.court, body.candidacy_id);
      if (!candidacy) {
        return notFound(`There is no candidacy ${String(body.candidacy_id)} in the court's data.`, [
          { location: 'body', field: 'candidacy_id', rule: 'existing_candidacy', message: "must be the id of a candidacy of the court's data", value: body.candidacy_id as number },
        ]);
      }
      // As the server: the court's personal data for platform admins only.
      const record = entityFromCandidacy(state.court, candidacy, user.is_admin);
      const unlawful = (url.searchParams.get('tp') ?? 'candidato') === 'candidato' ? candidacyLawDetails(state.court, record) : [];
      if (unlawful.length > 0) return invalidBody(asCandidacyDetails(unlawful, candidacy.id), `Candidacy ${candidacy.id} is one the electoral court would refuse, so it is no candidate entity.`);
      const refused = candidacyRefused(state, user, candidacy.id, undefined) ?? cpfTaken(state, user, record.cpf, undefined);
      if (refused) return refused;
      const id = newId(state, state.entities.keys());
      const moment = now();
      const tp = (url.searchParams.get('tp') ?? 'candidato') as StoredEntity['tp'];
      state.entities.set(id, { id, tp, record, created_at: moment, updated_at: moment, updated_by: user.id, version: 1, members: [{ id: newId(state, []), user_id: user.id, role: 'owner', added_at: moment }] });
      recordHistory(state, id, 'created', user.id, changedFields({}, record));
      return entityAnswer(state, state.entities.get(id)!, 201, `Entity ${id} created from candidacy ${candidacy.id}.`);
    }),
  ];
}

/**
 * A `candidacy_id` the server would refuse: one the court's data lacks (422), or one another entity of the
 * caller's teams is linked to (409). `stored` is the entity's current link (posting it back is no new link).
 */
function candidacyRefused(state: State, user: User, candidacyId: unknown, except: number | undefined, stored?: unknown): Response | undefined {
  if (typeof candidacyId !== 'number' || candidacyId === stored) return undefined;
  if (!candidacyIn(state.court, candidacyId)) {
    return invalidBody([{ location: 'body', field: 'candidacy_id', rule: 'existing_candidacy', message: "must be the id of a candidacy of the court's data", value: candidacyId }], 'The entity is invalid.');
  }
  const other = [...state.entities.values()].find((entity) => entity.id !== except && entity.members.some((member) => member.user_id === user.id) && entity.record.candidacy_id === candidacyId);
  if (!other) return undefined;
  return conflict(`Candidacy ${candidacyId} is already linked to entity ${other.id} of your teams.`, [
    { location: 'body', field: 'candidacy_id', rule: 'unique_in_team', message: `is already linked to entity ${other.id} of your teams`, value: candidacyId },
  ]);
}

/**
 * Issue 11's partial update: a field the body leaves out keeps its value, `null` clears it, read-only
 * fields are ignored; `marketshare` is the new list, its entries matched by `id` and updated by the same
 * rule; `referencia_social` is merged the same way (null removes it).
 */
function applyUpdate(stored: Json, sent: Json): Json {
  const record: Json = { ...stored };
  for (const [field, value] of Object.entries(sent)) {
    if (READ_ONLY_FIELDS.has(field) || value === undefined) continue;
    if (value === null) {
      if (NULLABLE_FIELDS.has(field)) record[field] = null;
      else delete record[field];
    } else if (field === 'marketshare' && Array.isArray(value)) {
      const before = new Map(((stored.marketshare ?? []) as Json[]).map((entry) => [entry.id, entry]));
      record.marketshare = (value as Json[]).map((entry) => ({ ...(before.get(entry.id) ?? {}), ...withoutNulls(entry) }));
    } else if (field === 'referencia_social' && typeof value === 'object' && !Array.isArray(value)) {
      record.referencia_social = { ...((stored.referencia_social as Json | undefined) ?? {}), ...(value as Json) };
    } else {
      record[field] = value;
    }
  }
  return record;
}

/** A new market-share entry (no `id`) gets one, as the server's store gives it. */
function withIds(state: State, body: Json): Json {
  if (!Array.isArray(body.marketshare)) return body;
  return { ...body, marketshare: (body.marketshare as Json[]).map((entry) => (entry.id === undefined ? { ...entry, id: newId(state, []) } : entry)) };
}

function withoutNulls(entry: Json): Json {
  return Object.fromEntries(Object.entries(entry).filter(([key, value]) => value !== null || key === 'notes'));
}

function unknownMarketshareEntry(stored: Json, body: Json): Response | undefined {
  if (!Array.isArray(body.marketshare)) return undefined;
  const known = new Set(((stored.marketshare ?? []) as Json[]).map((entry) => entry.id));
  const seen = new Set<unknown>();
  for (const [index, entry] of (body.marketshare as Json[]).entries()) {
    if (entry.id === undefined) continue;
    if (!known.has(entry.id) || seen.has(entry.id)) {
      return invalidBody([{ location: 'body', field: `marketshare.${index}.id`, rule: 'existing_entry', message: "must be the id of one of this entity's marketshare entries (once); send no id for a new entry", value: entry.id as number }], 'The entity is invalid.');
    }
    seen.add(entry.id);
  }
  return undefined;
}

function cpfTaken(state: State, user: User, cpf: unknown, except: number | undefined): Response | undefined {
  if (typeof cpf !== 'string') return undefined;
  const other = [...state.entities.values()].find((entity) => entity.id !== except && entity.members.some((member) => member.user_id === user.id) && entity.record.cpf === cpf);
  if (!other) return undefined;
  return conflict(`This CPF is already registered by entity ${other.id} of your teams.`, [
    { location: 'body', field: 'cpf', rule: 'unique_in_team', message: 'is already registered by another entity of your teams', value: cpf },
  ]);
}

function entityAnswer(state: State, entity: StoredEntity, status: 200 | 201, message: string): Response {
  const author = state.users.find((user) => user.id === entity.updated_by);
  const nullable = Object.fromEntries([...NULLABLE_FIELDS].map((field) => [field, null]));
  const data = {
    id: entity.id,
    ...nullable,
    ...entity.record,
    marketshare: entity.record.marketshare ?? [],
    ...(typeof entity.record.candidacy_id === 'number' ? { candidacy: candidacySummary(state.court, entity.record.candidacy_id) ?? null } : {}),
    tp: entity.tp,
    updated_at: entity.updated_at,
    updated_by: author ? { id: author.id, display_name: displayName(author) } : null,
  };
  return envelope(status, data, message, { ETag: `"${entity.version}"` });
}

function summaryOf(state: State, entity: StoredEntity, role: TeamRole) {
  const field = (name: string) => (entity.record[name] as unknown) ?? null;
  return {
    id: entity.id,
    tp: entity.tp,
    nome: entity.record.nome as string,
    nm_urna: field('nm_urna'),
    nr_urna: field('nr_urna'),
    partido: field('partido'),
    uf: field('uf'),
    cidade: field('cidade'),
    image_url: field('image_url'),
    role,
    created_at: entity.created_at,
    updated_at: entity.updated_at,
    candidacy: typeof entity.record.candidacy_id === 'number' ? (candidacySummary(state.court, entity.record.candidacy_id) ?? null) : null,
  };
}

/** The server's page (src/http/pagination.ts): links that keep the filters, 404 past the last page. */
function pageOf<Item>(items: Item[], page: number, pageSize: number, listUrl: URL) {
  const totalPages = Math.max(1, Math.ceil(items.length / pageSize));
  if (page > totalPages) {
    return errorResponse(404, 'not_found', `Page ${page} does not exist; the last page is ${totalPages}.`, [{ location: 'query', field: 'page', rule: 'max_page', message: `must be <= ${totalPages}`, value: page }]);
  }
  const link = (target: number) => {
    const url = new URL(listUrl);
    url.searchParams.set('page', String(target));
    return url.href;
  };
  return {
    links: { next: page < totalPages ? link(page + 1) : null, previous: page > 1 ? link(page - 1) : null },
    count: items.length,
    total_pages: totalPages,
    results: items.slice((page - 1) * pageSize, page * pageSize),
  };
}

// --- operators ----------------------------------------------------------------------------------------

function operatorHandlers(on: On): HttpHandler[] {
  const operatorOf = (state: State, entity: StoredEntity, member: Member) => {
    const user = state.users.find((candidate) => candidate.id === member.user_id)!;
    return { id: member.id, entity_id: entity.id, user_id: user.id, username: user.username, display_name: displayName(user), email: user.email as string | null, role: member.role, added_at: member.added_at };
  };
  /** What `reader` sees of a member's e-mail: theirs, a platform admin's view, or shared with the team. */
  const seenBy = (reader: User, operator: ReturnType<typeof operatorOf>, state: State) => {
    const member = state.users.find((candidate) => candidate.id === operator.user_id)!;
    return reader.is_admin || reader.id === member.id || member.contact_visible_to_team ? operator : { ...operator, email: null };
  };
  return [
    on('listOperators', (context) => {
      const id = context.url.searchParams.get('id');
      if (id === null) return errorResponse(400, 'bad_request', 'The request is malformed: id is required.', [{ location: 'query', field: 'id', rule: 'required', message: 'is required' }]);
      const entity = entityFor(context, Number(id), { location: 'query', field: 'id' });
      if (entity instanceof Response) return entity;
      const tp = context.url.searchParams.get('tp');
      const operators = entity.members.filter((member) => tp === null || member.role === tp).map((member) => seenBy(context.user, operatorOf(context.state, entity, member), context.state));
      operators.sort((a, b) => Number(b.role === 'owner') - Number(a.role === 'owner') || a.display_name.localeCompare(b.display_name, 'pt-BR'));
      return envelope(200, operators, `${operators.length} members.`);
    }),
    on('addOperator', (context) => {
      const { body, state, user } = context;
      const entity = entityFor(context, Number(body.entity_id), { location: 'body', field: 'entity_id' }, 'manageTeam');
      if (entity instanceof Response) return entity;
      if (body.role === 'admin' && roleIn(entity, user) !== 'owner' && !user.is_admin) return forbidden('Only the owner may invite another admin to the team.');
      const email = String(body.email).trim().toLowerCase();
      const account = state.users.find((candidate) => candidate.email.toLowerCase() === email);
      const member = account && entity.members.find((candidate) => candidate.user_id === account.id);
      if (member) return conflict(`This address is already ${member.role} of this team.`, [{ location: 'body', field: 'email', rule: 'not_in_team', message: `is already ${member.role} of this team`, value: email }]);
      const open = openInvitations(state, entity.id).find((invitation) => invitation.email === email);
      if (open && open.role !== body.role) {
        return conflict(`This address already has an open invitation to this team as ${open.role}; withdraw it first to invite with another role.`, [
          { location: 'body', field: 'email', rule: 'no_open_invitation', message: `has open invitation ${open.id} as ${open.role}`, value: email },
        ]);
      }
      if (open) return envelope(200, invitationOf(state, open), `${email} already has this open invitation; nothing was sent again.`);
      const openCount = openInvitations(state, entity.id).length;
      if (openCount >= MAX_OPEN_INVITATIONS) {
        return conflict(`This entity has ${openCount} open invitations, the most it may have; withdraw one or wait for answers.`, [
          { location: 'body', field: 'entity_id', rule: 'max_open_invitations', message: `may have at most ${MAX_OPEN_INVITATIONS} open invitations`, value: entity.id },
        ]);
      }
      const invitation: Invitation = {
        id: newId(state, state.invitations.map((candidate) => candidate.id)),
        entity_id: entity.id,
        email,
        role: body.role as Invitation['role'],
        state: 'pending',
        invited_by: user.id,
        created_at: now(),
        expires_at: new Date(Date.now() + INVITATION_LIFETIME_MS).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        answered_at: null,
      };
      state.invitations.push(invitation);
      if (account) {
        notify(state, account.id, {
          type: 'invitation_received',
          title: `Convite para a equipe de ${String(entity.record.nome)}`,
          body: `${displayName(user)} convidou você para a equipe de ${String(entity.record.nome)} como ${invitation.role}. Aceite ou recuse em Convites.`,
          entity_id: entity.id,
          subject: { kind: 'invitation', id: invitation.id },
        });
      }
      return envelope(201, invitationOf(state, invitation), `${email} is invited to the team of ${String(entity.record.nome)} as ${invitation.role}.`);
    }),
    on('listTeamInvitations', (context) => {
      const { url, state } = context;
      const id = url.searchParams.get('entity_id');
      if (id === null) return errorResponse(400, 'bad_request', 'The request is malformed: entity_id is required.', [{ location: 'query', field: 'entity_id', rule: 'required', message: 'is required' }]);
      const entity = entityFor(context, Number(id), { location: 'query', field: 'entity_id' }, 'manageTeam');
      if (entity instanceof Response) return entity;
      const wanted = url.searchParams.get('state');
      const views = state.invitations
        .filter((invitation) => invitation.entity_id === entity.id)
        .map((invitation) => invitationOf(state, invitation))
        .filter((view) => wanted === null || view.state === wanted)
        .reverse();
      const listUrl = new URL(`${context.base}/api/operators/invitations/`);
      listUrl.searchParams.set('entity_id', String(entity.id));
      if (wanted !== null) listUrl.searchParams.set('state', wanted);
      const page = pageOf(views, Number(url.searchParams.get('page') ?? 1), 50, listUrl);
      return page instanceof Response ? page : envelope(200, page, `${views.length} invitation${views.length === 1 ? '' : 's'}.`);
    }),
    on('listMyInvitations', ({ state, user }) => {
      const open = state.invitations.filter((invitation) => invitation.email === user.email.toLowerCase() && invitationState(invitation) === 'pending');
      return envelope(200, open.map((invitation) => invitationOf(state, invitation)), `${open.length} open invitation${open.length === 1 ? '' : 's'}.`);
    }),
    on('acceptInvitation', ({ body, state, user }) => {
      const invitation = addressedTo(state, user, Number(body.id));
      if (invitation instanceof Response) return invitation;
      const entity = state.entities.get(invitation.entity_id)!;
      const existing = entity.members.find((member) => member.user_id === user.id);
      if (invitation.state === 'accepted' && existing) return envelope(200, operatorOf(state, entity, existing), `${displayName(user)} is now ${existing.role} of ${String(entity.record.nome)}.`);
      const closed = refuseClosed(invitation);
      if (closed) return closed;
      if (existing) return conflict('You are already in this team.', [{ location: 'body', field: 'id', rule: 'not_in_team', message: 'is an invitation to a team you are already in', value: invitation.id }]);
      Object.assign(invitation, { state: 'accepted', answered_at: now() });
      const member: Member = { id: newId(state, entity.members.map((candidate) => candidate.id)), user_id: user.id, role: invitation.role, added_at: now() };
      entity.members.push(member);
      return envelope(200, operatorOf(state, entity, member), `${displayName(user)} is now ${member.role} of ${String(entity.record.nome)}.`);
    }),
    on('declineInvitation', ({ body, state, user }) => {
      const invitation = addressedTo(state, user, Number(body.id));
      if (invitation instanceof Response) return invitation;
      if (invitation.state !== 'declined') {
        const closed = refuseClosed(invitation);
        if (closed) return closed;
        Object.assign(invitation, { state: 'declined', answered_at: now() });
      }
      return envelope(200, invitationOf(state, invitation), `Invitation ${invitation.id} declined.`);
    }),
    on('withdrawInvitation', (context) => {
      const { body, state, user } = context;
      const entity = entityFor(context, Number(body.entity_id), { location: 'body', field: 'entity_id' }, 'manageTeam');
      if (entity instanceof Response) return entity;
      const invitation = state.invitations.find((candidate) => candidate.id === body.id && candidate.entity_id === entity.id);
      if (!invitation) return notFound(`There is no invitation ${String(body.id)} of this entity.`, [{ location: 'body', field: 'id', rule: 'existing_invitation', message: 'must be an invitation of this entity', value: body.id as number }]);
      if (invitation.role === 'admin' && roleIn(entity, user) !== 'owner' && !user.is_admin) return forbidden('Only the owner may withdraw an invitation to the admin role.');
      if (invitation.state !== 'withdrawn') {
        const closed = refuseClosed(invitation);
        if (closed) return closed;
        Object.assign(invitation, { state: 'withdrawn', answered_at: now() });
      }
      return envelope(200, invitationOf(state, invitation), `Invitation ${invitation.id} withdrawn.`);
    }),
    on('removeOperator', (context) => {
      const { body, user } = context;
      const leaving = body.user_id === user.id;
      const entity = entityFor(context, Number(body.entity_id), { location: 'body', field: 'entity_id' }, leaving ? 'read' : 'manageTeam');
      if (entity instanceof Response) return entity;
      const member = entity.members.find((candidate) => candidate.user_id === body.user_id);
      if (!member) return notFound(`User ${String(body.user_id)} is not in this team.`, [{ location: 'body', field: 'user_id', rule: 'in_team', message: 'must be a member of the team', value: body.user_id as number }]);
      if (member.role === 'owner') return conflict('The owner of an entity cannot be removed from its team.', [{ location: 'body', field: 'user_id', rule: 'not_owner', message: 'is the owner of the entity', value: body.user_id as number }]);
      if (!leaving && member.role === 'admin' && roleIn(entity, user) !== 'owner' && !user.is_admin) return forbidden('Only the owner may remove an admin from the team.');
      entity.members = entity.members.filter((candidate) => candidate !== member);
      return envelope(200, { removed: true }, 'The member was removed from the team.');
    }),
  ];
}

/** The server's defaults (INVITATION_LIFETIME_DAYS, TEAM_MAX_OPEN_INVITATIONS). */
const INVITATION_LIFETIME_MS = 7 * 86_400_000;
const MAX_OPEN_INVITATIONS = 20;

function invitationState(invitation: Invitation): Invitation['state'] | 'expired' {
  return invitation.state === 'pending' && Date.parse(invitation.expires_at) <= Date.now() ? 'expired' : invitation.state;
}

function openInvitations(state: State, entityId: number): Invitation[] {
  return state.invitations.filter((invitation) => invitation.entity_id === entityId && invitationState(invitation) === 'pending');
}

function invitationOf(state: State, invitation: Invitation) {
  const inviter = state.users.find((candidate) => candidate.id === invitation.invited_by);
  const entity = state.entities.get(invitation.entity_id);
  return {
    ...invitation,
    entity_name: String(entity?.record.nome ?? ''),
    state: invitationState(invitation),
    invited_by: inviter ? { id: inviter.id, display_name: displayName(inviter) } : null,
  };
}

/** The invitation if it names the caller's address; the server's 404 otherwise. */
function addressedTo(state: State, user: User, id: number): Invitation | Response {
  const invitation = state.invitations.find((candidate) => candidate.id === id && candidate.email === user.email.toLowerCase());
  return invitation ?? notFound(`There is no invitation ${id} to your address.`, [{ location: 'body', field: 'id', rule: 'existing_invitation', message: 'must be an invitation to your e-mail address', value: id }]);
}

/** The server's 409 for an invitation that is no longer open; undefined while it is. */
function refuseClosed(invitation: Invitation): Response | undefined {
  const current = invitationState(invitation);
  if (current === 'pending') return undefined;
  return conflict(`Invitation ${invitation.id} is ${current}, no longer open.`, [{ location: 'body', field: 'id', rule: 'open_invitation', message: `is ${current}`, value: invitation.id }]);
}

// --- monitors -----------------------------------------------------------------------------------------

function monitorHandlers(on: On): HttpHandler[] {
  return [
    on('getSocialMonitorData', ({ url, user, state }) => {
      const asked = url.searchParams.get('id_monitor');
      const visible = [...state.monitors.values()].filter((monitor) => {
        const entity = state.entities.get(monitor.entity_id);
        return entity !== undefined && roleIn(entity, user) !== undefined;
      });
      if (asked === null) return envelope(200, visible, `${visible.length} monitor${visible.length === 1 ? '' : 's'}.`);
      const monitor = visible.find((candidate) => candidate.id === Number(asked));
      if (!monitor) return notFound(`There is no monitor ${asked} in your teams.`, [{ location: 'query', field: 'id_monitor', rule: 'in_your_teams', message: 'must be a monitor of one of your teams', value: Number(asked) }]);
      return envelope(200, [monitor], '1 monitor.');
    }),
    on('createSocialMonitor', (context) => {
      const { body, state, user } = context;
      const entity = entityFor(context, Number(body.entity_id), { location: 'body', field: 'entity_id' }, 'edit');
      if (entity instanceof Response) return entity;
      const name = String(body.name).trim();
      const keywords = (body.keywords ?? []) as string[];
      const profiles = (body.profiles ?? []) as Json[];
      const problems: ErrorDetail[] = [];
      if (name === '') problems.push({ location: 'body', field: 'name', rule: 'not_blank', message: 'must not be blank' });
      if (keywords.length === 0 && profiles.length === 0) problems.push({ location: 'body', field: 'profiles', rule: 'profiles_or_keywords', message: 'a monitor watches at least one profile or keyword' });
      if (problems.length > 0) return invalidBody(problems);
      if ([...state.monitors.values()].some((monitor) => monitor.entity_id === entity.id && monitor.name === name)) {
        return conflict(`${String(entity.record.nome)} already has a monitor named "${name}".`, [{ location: 'body', field: 'name', rule: 'unique_per_entity', message: 'is the name of another monitor of this entity', value: name }]);
      }
      const id = newId(state, state.monitors.keys());
      const monitor = { id, entity_id: entity.id, name, keywords, profiles, created_at: now(), latest_metrics: [], daily_series: [] };
      state.monitors.set(id, monitor);
      return envelope(201, monitor, `Monitor ${id} created.`);
    }),
  ];
}

// --- research bookmarks and news sources -----------------------------------------------------------

/** The comparison key of a web address (src/web-address.ts, simplified: scheme, `www.`, trailing slash). */
const addressKey = (url: string) => url.trim().replace(/^https?:\/\//i, '').replace(/^www\./i, '').replace(/\/+$/, '').toLowerCase();

function webAddressProblem(url: unknown): ErrorDetail | undefined {
  try {
    const parsed = new URL(String(url).trim());
    if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return undefined;
  } catch {
    // fall through
  }
  return { location: 'body', field: 'url', rule: 'absolute_http_url', message: 'must be an absolute http or https address', value: String(url) };
}

function researchHandlers(on: On): HttpHandler[] {
  const view = ({ user_id: _user, ...bookmark }: Json) => bookmark;
  return [
    on('listResearchBookmarks', ({ user, state }) => {
      const mine = [...state.bookmarks.values()].filter((bookmark) => bookmark.user_id === user.id).map(view);
      return envelope(200, mine, `${mine.length} bookmark${mine.length === 1 ? '' : 's'}.`);
    }),
    on('addResearchBookmark', ({ body, user, state }) => {
      const title = String(body.title ?? '').trim();
      const problems: ErrorDetail[] = [];
      if (title === '') problems.push({ location: 'body', field: 'title', rule: 'not_blank', message: 'must not be blank' });
      const urlProblem = webAddressProblem(body.url);
      if (urlProblem) problems.push(urlProblem);
      if (problems.length > 0) return invalidBody(problems);
      const fields = { title, url: String(body.url).trim(), source: optionalText(body.source), notes: optionalText(body.notes) };
      const existing = [...state.bookmarks.values()].find((bookmark) => bookmark.user_id === user.id && addressKey(bookmark.url) === addressKey(fields.url));
      if (existing) {
        if (existing.title === fields.title && existing.source === fields.source && existing.notes === fields.notes) {
          return envelope(200, view(existing), `You already saved this as bookmark ${existing.id}; nothing changed.`);
        }
        return conflict(`You already saved this address as bookmark ${existing.id}, with other fields. Remove it first.`, [
          { location: 'body', field: 'url', rule: 'unique_per_user', message: `already saved as bookmark ${existing.id}`, value: existing.id },
        ]);
      }
      const id = newId(state, state.bookmarks.keys());
      const bookmark = { id, ...fields, created_at: now(), user_id: user.id };
      state.bookmarks.set(id, bookmark);
      return envelope(201, view(bookmark), `Bookmark ${id} saved.`);
    }),
    on('removeResearchBookmark', ({ body, user, state }) => {
      const id = Number(body.id);
      const bookmark = state.bookmarks.get(id);
      if (!bookmark || bookmark.user_id !== user.id) return notFound(`You have no bookmark ${id}.`, [{ location: 'body', field: 'id', rule: 'own_bookmark', message: 'must be one of your bookmarks', value: id }]);
      state.bookmarks.delete(id);
      return envelope(200, { id, removed: true }, `Bookmark ${id} removed.`);
    }),
  ];
}

function optionalText(value: unknown): string | null {
  const trimmed = typeof value === 'string' ? value.trim() : '';
  return trimmed === '' ? null : trimmed;
}

function newsHandlers(on: On): HttpHandler[] {
  return [
    on('listRequestedNewsSources', ({ state }) => {
      const sources = [...state.newsSources.values()].sort((a, b) => a.id - b.id);
      return envelope(200, sources, `${sources.length} news source${sources.length === 1 ? '' : 's'}; page 1 of 1.`);
    }),
    on('requestNewsSource', ({ body, state }) => {
      const name = String(body.name ?? '').trim();
      const problems: ErrorDetail[] = [];
      if (name === '') problems.push({ location: 'body', field: 'name', rule: 'not_blank', message: 'must not be blank' });
      const urlProblem = webAddressProblem(body.url);
      if (urlProblem) problems.push(urlProblem);
      if (problems.length > 0) return invalidBody(problems);
      const url = String(body.url).trim();
      const existing = [...state.newsSources.values()].find((source) => addressKey(source.url) === addressKey(url));
      if (existing) {
        return conflict(`This news source was already requested (source ${existing.id}, status ${existing.status}).`, [
          { location: 'body', field: 'url', rule: 'unique_source', message: `already requested as source ${existing.id} (${existing.status})`, value: existing.url },
        ]);
      }
      const id = newId(state, state.newsSources.keys());
      const moment = now();
      const source = { id, name, url, status: 'requested', requested_at: moment, updated_at: moment };
      state.newsSources.set(id, source);
      return envelope(201, source, `News source ${id} requested.`);
    }),
  ];
}

// --- SMS credentials ------------------------------------------------------------------------------------

function smsHandlers(on: On): HttpHandler[] {
  return [
    on('listSmsCredentials', ({ user, state }) => {
      const usable = [...state.credentials.values()].filter((credential) => {
        if (user.is_admin) return true;
        const entity = credential.entity_id === null ? undefined : state.entities.get(credential.entity_id);
        return entity !== undefined && entity.members.some((member) => member.user_id === user.id);
      });
      return envelope(200, usable, `${usable.length} credential${usable.length === 1 ? '' : 's'}.`);
    }),
    on('createSmsCredential', ({ body, user, state }) => {
      if (!user.is_admin) return forbidden('Only platform administrators may do this.');
      const name = String(body.name ?? '').trim();
      const senderId = String(body.sender_id ?? '').replace(/[\s().-]/g, '');
      const problems: ErrorDetail[] = [];
      if (name === '') problems.push({ location: 'body', field: 'name', rule: 'not_blank', message: 'must not be blank' });
      if (!/^\+?\d{10,15}$/.test(senderId)) problems.push({ location: 'body', field: 'sender_id', rule: 'phone_number', message: 'must be a valid phone number', value: String(body.sender_id) });
      const footer = footerOf(body.footer);
      if ('problem' in footer) problems.push(footer.problem);
      if (problems.length > 0 || 'problem' in footer) return invalidBody(problems);
      const sender = senderId.startsWith('+') ? senderId : `+55${senderId}`;
      const entityId = body.entity_id === undefined ? null : Number(body.entity_id);
      if (entityId !== null && !state.entities.has(entityId)) return notFound(`There is no entity ${entityId}.`, [{ location: 'body', field: 'entity_id', rule: 'existing_entity', message: 'must be the id of an entity', value: entityId }]);
      if ([...state.credentials.values()].some((credential) => credential.account_id === body.account_id && credential.sender_id === sender)) {
        return conflict('A credential with this account and sender already exists.', [{ location: 'body', field: 'sender_id', rule: 'unique_per_account', message: 'already has a credential on this account', value: sender }]);
      }
      const id = newId(state, state.credentials.keys());
      const credential = { id, name, provider: 'provider', account_id: String(body.account_id), sender_id: sender, entity_id: entityId, footer: footer.footer, created_at: now() };
      state.credentials.set(id, credential);
      return envelope(201, credential, `Credential ${id} added.`);
    }),
  ];
}

// --- SMS compliance: modes, windows, footers and the preview (src/messaging/compliance.ts) -----------

/** An entity's compliance settings as the server keeps them; an entity without them is in mode `enforce` (the safe path is the default, issue 42). */
interface StoredCompliance {
  mode: 'off' | 'warn' | 'enforce';
  window: { starts_on: string; ends_on: string } | null;
  updated_at: string;
  updated_by: number;
}
type ComplianceWarning = components['schemas']['SmsComplianceWarning'];
type EffectiveWindow = components['schemas']['SmsEffectiveWindow'];

/** The opt-out keywords (src/messaging/opt-outs.ts): a footer must name one. */
const OPT_OUT_KEYWORDS = new Set(['PARAR', 'PARE', 'SAIR', 'CANCELAR', 'DESCADASTRAR', 'STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'OPTOUT']);

/** A footer as stored (trimmed, null when empty), or the server's 422 detail when it names no opt-out keyword. */
function footerOf(value: unknown): { footer: string | null } | { problem: ErrorDetail } {
  const footer = typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
  const words = (footer ?? '').split(/\s+/).map((word) => word.normalize('NFKD').replace(/[\p{M}\p{P}\p{S}\p{Cf}]/gu, '').toUpperCase());
  if (footer === null || words.some((word) => OPT_OUT_KEYWORDS.has(word))) return { footer };
  return { problem: { location: 'body', field: 'footer', rule: 'opt_out_keyword', message: 'must name an opt-out keyword people can reply (PARAR, PARE, SAIR, CANCELAR, DESCADASTRAR, STOP...)', value: footer.slice(0, 60) } };
}

/** Today in Brasília, YYYY-MM-DD. */
const brasiliaDay = () => new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());

/** The window the rule judges by: the spans of the election that judges the entity, narrowed to the typed one (sdk/msw-election-calendar.ts). */
function effectiveWindowOf(state: State, entity: StoredEntity, typed: StoredCompliance['window']): EffectiveWindow | null {
  return mockEffectiveWindow(state.court, mockCalendarOf(state), entity.record, typed, brasiliaDay());
}

function complianceOf(state: State, entity: StoredEntity) {
  const stored = state.compliance.get(entity.id);
  const window = stored?.window ?? null;
  return { entity_id: entity.id, mode: stored?.mode ?? 'enforce', window, effective_window: effectiveWindowOf(state, entity, window), updated_at: stored?.updated_at ?? null, updated_by: stored?.updated_by ?? null };
}

/** The rules a campaign breaks under its entity's mode (nothing for a credential without an entity). */
function judgeCampaign(state: State, credential: { id: number; entity_id: number | null; footer?: unknown }, numbers: string[], nonElectoral = false): { mode: StoredCompliance['mode']; warnings: ComplianceWarning[] } {
  const entity = credential.entity_id === null ? undefined : state.entities.get(credential.entity_id);
  if (!entity) return { mode: 'off', warnings: [] };
  const settings = complianceOf(state, entity);
  // Judged under `off` too, never refused there (issue 42); a campaign declared non-electoral (art. 36-A) is not judged by the window.
  const warnings: ComplianceWarning[] = [];
  const consented = new Set(
    [...state.contacts.values()].filter((contact) => contact.entity_id === entity.id && contact.consent && !REFUSED_CONSENT_KINDS.has(contact.consent.kind as ConsentKind)).map((contact) => contact.phone),
  );
  const missing = numbers.filter((number) => !consented.has(number));
  if (missing.length > 0) {
    const examples = missing.slice(0, 5).map(maskPhone);
    const [have, contacts] = missing.length === 1 ? ['has', 'a contact'] : ['have', 'contacts'];
    warnings.push({ rule: 'consent_missing', message: `${missing.length} of ${numbers.length} numbers ${have} no consent on record as ${contacts} of entity ${entity.id}: ${examples.join(', ')}${missing.length > 5 ? ', ...' : ''}`, numbers: missing.length, examples });
  }
  if (!credential.footer) warnings.push({ rule: 'footer_missing', message: `credential ${credential.id} has no footer identifying the sender and offering a way out (updateSmsCredential sets one)` });
  // The window as spans, and the election being over (issue 42), as compliance.ts judges them.
  warnings.push(...mockWindowWarnings(state.court, mockCalendarOf(state), entity.id, entity.record, settings.window, brasiliaDay(), nonElectoral));
  return { mode: settings.mode, warnings };
}

/** The rules a judgement names as 422 details (compliance.ts's refusalDetails): the audience's field for consent, the credential's for the others. */
function complianceDetails(warnings: readonly ComplianceWarning[], field: string, credentialId: number): ErrorDetail[] {
  return warnings.map((warning) => ({
    location: 'body' as const,
    field: warning.rule === 'consent_missing' ? field : 'credencial',
    rule: warning.rule,
    message: warning.message,
    value: warning.rule === 'consent_missing' ? warning.numbers : warning.rule === 'outside_campaign_window' ? warning.day : warning.rule === 'election_over' ? warning.last_vote_on : credentialId,
  }));
}

/** The numbers of a pasted list, simplified as the mock's sendSmsCampaign reads them, with the server's 422 details. */
function listedNumbers(list: string): { numbers: string[]; problems: ErrorDetail[] } {
  const problems: ErrorDetail[] = [];
  const numbers: string[] = [];
  list.split(/[\r\n,;]+/).map((entry) => entry.trim()).filter(Boolean).forEach((entry, position) => {
    const digits = entry.replace(/\D/g, '');
    // A national number may start with the trunk prefix 0 (`0800 123 4567`, `021 98765-4321`), as libphonenumber reads it.
    const national = digits.replace(/^0/, '');
    const e164 = /^\+\d{10,15}$/.test(entry.replace(/[\s().-]/g, '')) ? `+${digits}` : /^\d{10,11}$/.test(national) ? `+55${national}` : undefined;
    if (e164 === undefined) problems.push({ location: 'body', field: 'mensagem.recipient_list_str', rule: 'phone_number', message: `entry ${position + 1} is not a valid phone number`, value: entry.slice(0, 40) });
    else numbers.push(e164);
  });
  if (numbers.length === 0 && problems.length === 0) problems.push({ location: 'body', field: 'mensagem.recipient_list_str', rule: 'not_blank', message: 'must hold at least one phone number' });
  return { numbers, problems };
}

/** A campaign request read as the server's campaign-plan.ts reads it (simplified), or its error answer. */
interface CampaignPlan {
  credential: State['credentials'] extends Map<number, infer Credential> ? Credential : never;
  /** Distinct numbers, in order. */
  numbers: string[];
  /** The contact of each number, for a campaign to contacts. */
  contactIds: Map<string, number>;
  rejected: number;
  /** Distinct numbers left out because an SMS cannot reach them (issue 42, isBrazilianMobile), in order. */
  notMobile: string[];
  /** Distinct numbers left out because they opted out of the entity's campaigns (opt-outs.ts). */
  optedOutSkipped: number;
  footer: string | null;
  text: string;
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
  judgement: ReturnType<typeof judgeCampaign>;
  /** The synthetic content declared (sdk/synthetic-content.ts); null: none. */
  syntheticContent: { technology: string } | null;
  /** Its declaration that it is not electoral propaganda (art. 36-A), trimmed; null: none. */
  nonElectoral: string | null;
}

/** `everyRule` (the preview): a 422 of the body names the compliance rules broken beside its problems, whatever the mode. */
function campaignPlanOf({ body, user, state }: Context, everyRule = false): CampaignPlan | Response {
  const credential = state.credentials.get(Number(body.credencial));
  if (!credential) {
    return notFound(`There is no SMS credential ${String(body.credencial)}.`, [{ location: 'body', field: 'credencial', rule: 'existing_credential', message: 'must be the id of a credential', value: body.credencial as number }]);
  }
  const entity = credential.entity_id === null ? undefined : state.entities.get(credential.entity_id);
  const role = entity && roleIn(entity, user);
  if (!user.is_admin && !(role && may(user, role, 'edit'))) return forbidden(`You may not send with credential ${credential.id}.`);
  const mensagem = body.mensagem as { recipient_list_str?: string; contatos?: { tags?: string[] }; mensagem: string };
  // A declared deepfake is refused under every mode (Res. TSE 23.610/2019 art. 9-C §1º), as the server does.
  const declared = body.synthetic_content as SyntheticContent | undefined;
  const deepfake = deepfakeProblem(declared);
  if (deepfake) return invalidBody([{ location: 'body', ...deepfake }]);
  if ((mensagem.recipient_list_str === undefined) === (mensagem.contatos === undefined)) {
    return invalidBody([
      mensagem.contatos === undefined
        ? { location: 'body', field: 'mensagem.recipient_list_str', rule: 'required', message: 'is required unless mensagem.contatos is given' }
        : { location: 'body', field: 'mensagem.contatos', rule: 'one_audience', message: 'give either mensagem.recipient_list_str or mensagem.contatos, not both' },
    ]);
  }
  let numbers: string[];
  const contactIds = new Map<string, number>();
  if (mensagem.contatos) {
    if (!entity) return invalidBody([{ location: 'body', field: 'mensagem.contatos', rule: 'entity_credential', message: `contacts belong to an entity; credential ${credential.id} has none`, value: credential.id }]);
    const tags = (mensagem.contatos.tags ?? []).map(contactTag);
    const chosen = [...state.contacts.values()].filter((contact) => contact.entity_id === entity.id && (tags.length === 0 || contact.tags.some((tag) => tags.includes(tag))));
    if (chosen.length === 0) return invalidBody([{ location: 'body', field: 'mensagem.contatos', rule: 'not_blank', message: `chooses nobody: entity ${entity.id} has no such contacts` }]);
    for (const contact of chosen.sort((a, b) => a.id - b.id)) contactIds.set(contact.phone, contact.id);
    numbers = [...contactIds.keys()];
  } else {
    const listed = listedNumbers(mensagem.recipient_list_str!);
    if (listed.problems.length > 0) {
      // Every problem at once (issue 42): the compliance rules its valid numbers break, beside the body's problems.
      const judged = judgeCampaign(state, credential, [...new Set(listed.numbers)], typeof body.declaracao_nao_eleitoral === 'string');
      const named = everyRule ? complianceDetails(judged.warnings, 'mensagem.recipient_list_str', credential.id) : [];
      return invalidBody([...listed.problems, ...named]);
    }
    numbers = listed.numbers;
  }
  const listed = [...new Set(numbers)];
  // Only Brazilian mobiles receive SMS (issue 42): the others are skipped and named; none left is 422, as the server answers.
  const notMobile = listed.filter((number) => !isBrazilianMobile(number));
  const distinct = listed.filter(isBrazilianMobile);
  if (distinct.length === 0) {
    const field = mensagem.contatos ? 'mensagem.contatos' : 'mensagem.recipient_list_str';
    const examples = notMobile.slice(0, 5).map(maskPhone).join(', ');
    const message = `holds no Brazilian mobile number, the only numbers an SMS reaches: ${notMobile.length} landline, toll-free or foreign number${notMobile.length === 1 ? '' : 's'} (${examples}${notMobile.length > 5 ? ', ...' : ''})`;
    return invalidBody([{ location: 'body', field, rule: 'not_mobile', message, value: notMobile.length }]);
  }
  const footer = (credential.footer as string | null | undefined) ?? null;
  const text = footer ? `${mensagem.mensagem.trim()}\n${footer}` : mensagem.mensagem.trim();
  const nonElectoral = typeof body.declaracao_nao_eleitoral === 'string' ? body.declaracao_nao_eleitoral.trim() : null;
  if (nonElectoral === '') return invalidBody([{ location: 'body', field: 'declaracao_nao_eleitoral', rule: 'not_blank', message: 'must not be blank' }]);
  // Numbers that opted out of the entity's campaigns (a reply, by hand, a conversation; kept through an erasure) are skipped and counted.
  const optedOut = chatOf(state).optedOut;
  const sendable = credential.entity_id === null ? distinct : distinct.filter((number) => !optedOut.has(`${credential.entity_id}:${number}`));
  const judgement = judgeCampaign(state, credential, sendable, nonElectoral !== null);
  // The label of declared synthetic content (art. 9-B) is one more rule, judged wherever the others are.
  const unlabelled = entity === undefined ? undefined : labelProblem(declared, mensagem.mensagem.trim());
  if (unlabelled) judgement.warnings.push({ rule: 'synthetic_content_label', message: unlabelled.message, technology: String(unlabelled.value) });
  const syntheticContent = declared ? { technology: declared.technology.trim() } : null;
  return { credential, numbers: sendable, optedOutSkipped: distinct.length - sendable.length, contactIds, rejected: numbers.length - listed.length, notMobile, footer, text, ...campaignText(text), judgement, syntheticContent, nonElectoral };
}

function complianceHandlers(on: On): HttpHandler[] {
  const where = { location: 'query', field: 'entity_id' } as const;
  return [
    // The election calendar (src/elections/calendar-handlers.ts): the list, as seeded or as the mock's state holds it.
    on('listElectionCalendar', (context) => {
      const lines = mockCalendarOf(context.state).map((line) => ({ ...line, inaugurations: inaugurationsOf(line) }));
      return envelope(200, lines, `${lines.length} election${lines.length === 1 ? '' : 's'} in the calendar.`);
    }),
    on('getSmsCompliance', (context) => {
      const entity = entityFor(context, Number(context.url.searchParams.get('entity_id')), where);
      if (entity instanceof Response) return entity;
      const settings = complianceOf(context.state, entity);
      return envelope(200, settings, `SMS compliance of entity ${entity.id}: ${settings.mode}${settings.updated_at === null ? ' (the default)' : ''}.`);
    }),
    on('setSmsCompliance', (context) => {
      const { body, state, user } = context;
      const entity = entityFor(context, Number(context.url.searchParams.get('entity_id')), where);
      if (entity instanceof Response) return entity;
      const role = roleIn(entity, user)!;
      if (!may(user, role, 'manageTeam')) return forbidden(`Your role in this team (${role}) may not set its SMS compliance: its owner and admins may.`);
      const window = (body.window ?? null) as StoredCompliance['window'];
      const realDay = (day: string) => {
        const time = Date.parse(`${day}T00:00:00Z`);
        return !Number.isNaN(time) && new Date(time).toISOString().slice(0, 10) === day;
      };
      const unreal = window ? (['starts_on', 'ends_on'] as const).filter((end) => !realDay(window[end])) : [];
      if (unreal.length > 0) return invalidBody(unreal.map((end) => ({ location: 'body', field: `window.${end}`, rule: 'real_date', message: 'must be a real calendar date', value: window![end] })));
      if (window && window.ends_on < window.starts_on) return invalidBody([{ location: 'body', field: 'window.ends_on', rule: 'window_order', message: `must not be before window.starts_on (${window.starts_on})`, value: window.ends_on }]);
      // A typed window lies inside one legal propaganda span (issue 42; sdk/msw-election-calendar.ts).
      const outsideLegal = window && mockLegalWindowProblem(state.court, mockCalendarOf(state), entity.id, entity.record, window, brasiliaDay());
      if (outsideLegal) return invalidBody([outsideLegal]);
      const before = complianceOf(state, entity);
      const mode = body.mode as StoredCompliance['mode'];
      // Relaxing the mode is a platform admin's decision (issue 42), as the server answers.
      const strictness = ['off', 'warn', 'enforce'];
      if (strictness.indexOf(mode) < strictness.indexOf(before.mode) && !user.is_admin) {
        return errorResponse(403, 'forbidden', `Only a platform admin may relax the SMS compliance of entity ${entity.id} from ${before.mode} to ${mode}: under ${mode} a campaign that breaks the electoral rules is sent.`, [
          { location: 'body', field: 'mode', rule: 'platform_admin_to_relax', message: `relaxes ${before.mode} to ${mode}: a platform admin's decision (enforce is the default)`, value: mode },
        ]);
      }
      state.compliance.set(entity.id, { mode, window, updated_at: now(), updated_by: user.id });
      const changes = [
        { field: 'mode', before: before.mode, after: mode },
        { field: 'window_starts_on', before: before.window?.starts_on ?? null, after: window?.starts_on ?? null },
        { field: 'window_ends_on', before: before.window?.ends_on ?? null, after: window?.ends_on ?? null },
      ].filter((change) => change.before !== change.after);
      if (changes.length > 0) state.history.push({ id: newId(state, state.history.map((row) => row.id)), entity_id: entity.id, occurred_at: now(), subject: 'sms_compliance', subject_id: null, action: 'updated', actor_id: user.id, changes });
      const settings = complianceOf(state, entity);
      return envelope(200, settings, `SMS compliance of entity ${entity.id}: ${settings.mode}.`);
    }),
    on('updateSmsCredential', ({ url, body, user, state }) => {
      const id = Number(/\/sms\/credentials\/(\d+)\//.exec(url.pathname)?.[1]);
      const credential = state.credentials.get(id);
      const entity = credential?.entity_id === null || credential === undefined ? undefined : state.entities.get(credential.entity_id);
      const role = entity && roleIn(entity, user);
      if (!credential || !(user.is_admin || role)) {
        return notFound(`There is no SMS credential ${id} in your teams.`, [{ location: 'path', field: 'credential_id', rule: 'existing_credential', message: 'must be the id of a credential of one of your teams', value: id }]);
      }
      if (!may(user, role ?? 'admin', 'manageTeam')) return forbidden(`Your role in this team (${role}) may not change its SMS credentials: its owner and admins may.`);
      const problems: ErrorDetail[] = [];
      for (const field of ['id', 'provider', 'account_id', 'sender_id', 'entity_id'] as const) {
        if (body[field] !== undefined && body[field] !== credential[field]) {
          problems.push({ location: 'body', field, rule: 'immutable', message: `cannot change (it is ${String(credential[field] ?? 'null')}): add a credential for another account or sender`, value: body[field] as string });
        }
      }
      const changes: Json = {};
      if (body.name !== undefined) {
        changes.name = String(body.name).trim();
        if (changes.name === '') problems.push({ location: 'body', field: 'name', rule: 'not_blank', message: 'must not be blank' });
      }
      if (body.footer !== undefined) {
        const read = footerOf(body.footer);
        if ('problem' in read) problems.push(read.problem);
        else changes.footer = read.footer;
      }
      if (problems.length > 0) return invalidBody(problems);
      const updated = { ...credential, ...changes };
      state.credentials.set(id, updated);
      const fields = (['name', 'footer'] as const).filter((field) => field in changes && changes[field] !== (credential[field] ?? null));
      if (entity && fields.length > 0) {
        const historyChanges = fields.map((field) => ({ field, before: credential[field] ?? null, after: changes[field] }));
        state.history.push({ id: newId(state, state.history.map((row) => row.id)), entity_id: entity.id, occurred_at: now(), subject: 'sms_credential', subject_id: id, action: 'updated', actor_id: user.id, changes: historyChanges });
      }
      return envelope(200, updated, `Credential ${id} updated.`);
    }),
    on('previewSmsCampaign', (context) => {
      const plan = campaignPlanOf(context, true);
      if (plan instanceof Response) return plan;
      const { text, footer, encoding, segments, numbers: distinct, rejected, notMobile, judgement: { mode, warnings } } = plan;
      const preview = {
        text,
        footer,
        encoding,
        segments,
        messages: distinct.length,
        rejected,
        opted_out_skipped: plan.optedOutSkipped,
        not_mobile_skipped: notMobile.length,
        not_mobile_examples: notMobile.slice(0, 5).map(maskPhone),
        total_segments: distinct.length * segments,
        compliance: { mode, warnings, would_refuse: mode === 'enforce' && warnings.length > 0 },
      };
      const warned = warnings.length === 0 ? '' : `; ${warnings.length} compliance warning${warnings.length === 1 ? '' : 's'}`;
      return envelope(200, preview, `Preview: ${distinct.length} message${distinct.length === 1 ? '' : 's'} of ${segments} segment${segments === 1 ? '' : 's'}${warned}.`);
    }),
  ];
}

// --- SMS campaigns: sent (nothing leaves the mock), reported, canceled (src/messaging/campaign-reports.ts) ---

const CAMPAIGNS_PER_PAGE = 30;
const CAMPAIGN_MESSAGES_PER_PAGE = 50;
const OPTED_OUT_BEFORE_SENDING = 'The recipient opted out before the message was sent.';
const CANCELED_WITH_CAMPAIGN = 'The campaign was canceled before the message was sent.';
/** The characters of the GSM-7 alphabet (basic set and its extension), as a campaign's encoding is judged. */
const GSM_7 = /^[@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&'()*+,\-./0-9:;<=>?¡A-ZÄÖÑÜ§¿a-zäöñüà^{}\\[~\]|€]*$/;

/** A message's encoding and segments, as the server counts them (sms-segments-calculator, simplified). */
function campaignText(text: string): { encoding: 'GSM-7' | 'UCS-2'; segments: number } {
  const gsm = GSM_7.test(text);
  const length = gsm ? [...text].reduce((sum, char) => sum + ('^{}\\[~]|€'.includes(char) ? 2 : 1), 0) : text.length;
  const [single, multi] = gsm ? [160, 153] : [70, 67];
  return { encoding: gsm ? 'GSM-7' : 'UCS-2', segments: length <= single ? 1 : Math.ceil(length / multi) };
}

/** A message's status as a report shows it (reportStatusOf on the server). */
function reportStatusOf(status: string, errorMessage: string | null): string {
  if (status === 'canceled') return errorMessage === OPTED_OUT_BEFORE_SENDING ? 'opted_out' : 'canceled';
  if (status === 'read') return 'delivered';
  return ['queued', 'sent', 'delivered', 'undelivered', 'failed'].includes(status) ? status : 'sending';
}

/**
 * Whether an SMS can reach a number (issue 42). The server asks libphonenumber's full metadata for a
 * Brazilian `MOBILE` (src/messaging/phones.ts isBrazilianMobile); the SDK does not depend on
 * libphonenumber, so the mock applies the simpler shape that metadata describes: +55, a 2-digit area
 * code without a 0, then 9 and 8 digits. Landlines, toll-free and foreign numbers are not mobiles.
 */
function isBrazilianMobile(e164: string): boolean {
  return /^\+55[1-9][1-9]9\d{8}$/.test(e164);
}

/** `+5511987654321` -> `+55*******4321` (phones.ts; the mock takes every number but +1 ones to have a two-digit country code). */
function maskPhone(e164: string): string {
  const code = e164.startsWith('+1') ? '1' : e164.slice(1, 3);
  const national = e164.slice(1 + code.length);
  return `+${code}${'*'.repeat(Math.max(0, national.length - 4))}${national.slice(-4)}`;
}

function smsCampaignHandlers(on: On): HttpHandler[] {
  const userRef = (state: State, id: number | null) => {
    const found = state.users.find((user) => user.id === id);
    return found ? { id: found.id, display_name: displayName(found) } : null;
  };
  const reportOf = (state: State, campaign: StoredCampaign) => {
    const messages: Record<string, number> = { queued: 0, sending: 0, sent: 0, delivered: 0, undelivered: 0, failed: 0, canceled: 0, opted_out: campaign.opted_out_skipped };
    for (const message of campaign.messages) messages[reportStatusOf(message.status, message.error_message)]! += 1;
    const { messages: _messages, created_by: createdBy, canceled_by: canceledBy, ...fields } = campaign;
    const declaration = campaign.non_electoral_declaration && { non_electoral_declaration: { ...campaign.non_electoral_declaration, declared_by: userRef(state, createdBy) } };
    return { ...fields, sent_by: userRef(state, createdBy), canceled_by: userRef(state, canceledBy), messages, cost: [], ...declaration };
  };
  /** The campaign the path names, with the caller's role, or the server's 404. */
  const campaignFor = ({ url, user, state }: Context): { campaign: StoredCampaign; role: TeamRole } | Response => {
    const id = Number(/\/sms\/campaigns\/(\d+)\//.exec(url.pathname)?.[1]);
    const campaign = state.campaigns.get(id);
    const entity = campaign?.entity_id === null || campaign === undefined ? undefined : state.entities.get(campaign.entity_id);
    const role = campaign && (entity ? roleIn(entity, user) : user.is_admin ? 'admin' : undefined);
    if (!campaign || !role) {
      return notFound(`There is no SMS campaign ${id} in your teams.`, [{ location: 'path', field: 'campaign_id', rule: 'in_your_teams', message: 'must be a campaign of one of your teams', value: id }]);
    }
    return { campaign, role };
  };
  const messageOf = (message: StoredCampaign['messages'][number], whole: boolean) => ({
    id: message.id,
    recipient: whole ? message.recipient : maskPhone(message.recipient),
    contact_id: message.contact_id,
    status: reportStatusOf(message.status, message.error_message),
    provider_status: message.status,
    error_code: message.error_code,
    error_message: message.error_message,
    price: message.price,
    price_unit: message.price_unit,
    updated_at: message.updated_at,
  });
  const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;
  return [
    on('sendSmsCampaign', (context) => {
      const { body, user, state } = context;
      // The list or the contacts, the footer and the compliance judgement, as the preview reads them.
      const plan = campaignPlanOf(context);
      if (plan instanceof Response) return plan;
      const { credential, numbers: distinct, judgement } = plan;
      if (distinct.length === 0) {
        const field = (body.mensagem as Json).contatos === undefined ? 'mensagem.recipient_list_str' : 'mensagem.contatos';
        return invalidBody([{ location: 'body', field, rule: 'not_opted_out', message: 'every number opted out of campaigns' }]);
      }
      if (judgement.mode === 'enforce' && judgement.warnings.length > 0) {
        const field = (body.mensagem as Json).contatos === undefined ? 'mensagem.recipient_list_str' : 'mensagem.contatos';
        const details = judgement.warnings.map((warning) => ({
          location: 'body' as const,
          field: warning.rule === 'consent_missing' ? field : warning.rule === 'synthetic_content_label' ? 'mensagem.mensagem' : 'credencial',
          rule: warning.rule,
          message: warning.message,
          value: warning.rule === 'consent_missing' ? warning.numbers : warning.rule === 'outside_campaign_window' ? warning.day : warning.rule === 'synthetic_content_label' ? warning.technology! : credential.id,
        }));
        const rules = judgement.warnings.map((warning) => warning.rule).join(', ');
        return invalidBody(details, `The campaign breaks the electoral rules entity ${credential.entity_id} enforces (see getSmsCompliance): ${rules}. Nothing was sent.`);
      }
      const { contatos } = body.mensagem as { contatos?: { tags?: string[] } };
      const moment = now();
      const id = newId(state, state.campaigns.keys());
      const campaign: StoredCampaign = {
        id,
        titulo: String(body.titulo),
        credencial: credential.id,
        entity_id: credential.entity_id,
        accepted: distinct.length,
        rejected: plan.rejected,
        opted_out_skipped: plan.optedOutSkipped,
        not_mobile_skipped: plan.notMobile.length,
        not_mobile_examples: plan.notMobile.slice(0, 5).map(maskPhone),
        encoding: plan.encoding,
        segments: plan.segments,
        state: 'sending',
        created_at: moment,
        created_by: user.id,
        finished_at: null,
        canceled_by: null,
        footer: plan.footer,
        audience: contatos ? { tags: (contatos.tags ?? []).map(contactTag) } : null,
        // Under warn and off, the rules it broke (compliance.ts); a campaign not judged has none.
        ...(judgement.mode !== 'enforce' ? { warnings: judgement.warnings } : {}),
        ...(plan.nonElectoral === null ? {} : { non_electoral_declaration: { text: plan.nonElectoral, declared_at: moment } }),
        ...(plan.syntheticContent ? { synthetic_content: plan.syntheticContent } : {}),
        messages: distinct.map((recipient) => ({ id: (state.nextId += 1), recipient, contact_id: plan.contactIds.get(recipient) ?? null, status: 'queued', error_code: null, error_message: null, price: null, price_unit: null, updated_at: moment })),
      };
      state.campaigns.set(id, campaign);
      const { entity_id: _entity, created_by: _by, finished_at: _finished, canceled_by: _canceled, footer: _footer, audience: _audience, non_electoral_declaration: _declaration, messages: _messages, ...answer } = campaign;
      const { warnings } = judgement;
      const warned = judgement.mode !== 'enforce' && warnings.length > 0 ? `; ${plural(warnings.length, 'compliance warning')}` : '';
      return envelope(201, answer, `Campaign ${id} created: ${plural(campaign.accepted, 'message')} queued${warned}.`);
    }),
    on('listSmsCampaigns', (context) => {
      const { url, state, base } = context;
      const entity = entityFor(context, Number(url.searchParams.get('entity_id')), { location: 'query', field: 'entity_id' });
      if (entity instanceof Response) return entity;
      const wanted = url.searchParams.get('state');
      const campaigns = [...state.campaigns.values()].filter((campaign) => campaign.entity_id === entity.id && (wanted === null || campaign.state === wanted)).sort((a, b) => b.id - a.id);
      const listUrl = new URL(`${base}/api/sms/campaigns/`);
      listUrl.searchParams.set('entity_id', String(entity.id));
      if (wanted !== null) listUrl.searchParams.set('state', wanted);
      const paged = pageOf(campaigns.map((campaign) => reportOf(state, campaign)), Number(url.searchParams.get('page') ?? 1), CAMPAIGNS_PER_PAGE, listUrl);
      return paged instanceof Response ? paged : envelope(200, paged, `${plural(campaigns.length, 'campaign')}.`);
    }),
    on('getSmsCampaign', (context) => {
      const found = campaignFor(context);
      return found instanceof Response ? found : envelope(200, reportOf(context.state, found.campaign), `Campaign ${found.campaign.id} is ${found.campaign.state}.`);
    }),
    on('cancelSmsCampaign', (context) => {
      const found = campaignFor(context);
      if (found instanceof Response) return found;
      const { campaign, role } = found;
      if (!may(context.user, role, 'edit')) return forbidden(`Your role in this team (${role}) may not cancel its SMS campaigns: its owner, admins and operators may.`);
      if (campaign.state !== 'queued' && campaign.state !== 'sending') {
        return conflict(`Campaign ${campaign.id} is ${campaign.state}; only a queued or sending campaign can be canceled.`, [
          { location: 'path', field: 'campaign_id', rule: 'cancelable_state', message: 'must be a queued or sending campaign', value: campaign.state },
        ]);
      }
      const moment = now();
      const queued = campaign.messages.filter((message) => message.status === 'queued');
      for (const message of queued) Object.assign(message, { status: 'canceled', error_message: CANCELED_WITH_CAMPAIGN, updated_at: moment });
      Object.assign(campaign, { state: 'canceled', finished_at: moment, canceled_by: context.user.id });
      return envelope(200, reportOf(context.state, campaign), `Campaign ${campaign.id} was canceled; ${plural(queued.length, 'message')} ${queued.length === 1 ? 'was' : 'were'} not sent.`);
    }),
    on('listSmsCampaignMessages', (context) => {
      const found = campaignFor(context);
      if (found instanceof Response) return found;
      const { campaign, role } = found;
      const wanted = context.url.searchParams.get('status');
      const messages = campaign.messages.filter((message) => wanted === null || reportStatusOf(message.status, message.error_message) === wanted);
      const listUrl = new URL(`${context.base}/api/sms/campaigns/${campaign.id}/messages/`);
      if (wanted !== null) listUrl.searchParams.set('status', wanted);
      const whole = may(context.user, role, 'readPersonalData');
      const paged = pageOf(messages.map((message) => messageOf(message, whole)), Number(context.url.searchParams.get('page') ?? 1), CAMPAIGN_MESSAGES_PER_PAGE, listUrl);
      return paged instanceof Response ? paged : envelope(200, paged, `${plural(messages.length, 'message')}.`);
    }),
    on('exportSmsCampaignMessages', (context) => {
      const found = campaignFor(context);
      if (found instanceof Response) return found;
      const whole = may(context.user, found.role, 'readPersonalData');
      const field = (value: unknown) => {
        const text = value === null ? '' : String(value);
        return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
      };
      const columns = ['id', 'recipient', 'contact_id', 'status', 'provider_status', 'error_code', 'error_message', 'price', 'price_unit', 'updated_at'] as const;
      const rows = found.campaign.messages.map((message) => messageOf(message, whole)).map((message) => columns.map((column) => field(message[column])).join(','));
      return new Response([columns.join(','), ...rows].map((line) => `${line}\r\n`).join(''), {
        status: 200,
        headers: { 'Content-Type': 'text/csv; charset=utf-8', 'Content-Disposition': `attachment; filename="campanha-${found.campaign.id}-mensagens.csv"` },
      });
    }),
  ];
}

// --- the electoral court's data (src/elections/tse/read-handlers.ts) -------------------------------------

/**
 * The reads of the court's demo data (answers of msw-court-reads.ts), with the server's weak `ETag` and
 * `Cache-Control`, 304 to an If-None-Match that holds the tag, and the search paged by 30 with its filters
 * kept in the links. The demo data is read-only: no operation writes it.
 */
function courtReadHandlers(on: On): HttpHandler[] {
  const EMPTY: courtReads.CourtTables = { elections: [], offices: [], codes: [], parties: [], federations: [], coalitions: [], units: [], candidacies: [] };
  const tablesOf = (state: State) => ({ ...EMPTY, ...(state.court as unknown as Partial<courtReads.CourtTables>) });
  const answer = <Data>(request: Request, result: courtReads.CourtAnswer<Data> | Response, view: unknown = null): Response => {
    if (result instanceof Response) return result;
    if ('status' in result) return errorResponse(result.status, result.code, result.message, result.details);
    const etag = courtReads.weakTagOf([result.data, view]);
    const headers = { ETag: etag, 'Cache-Control': 'private, no-cache' };
    const sent = request.headers.get('if-none-match');
    if (sent !== null && sent.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag.replace(/^W\//, ''))) return new Response(null, { status: 304, headers });
    return envelope(200, result.data, result.message, headers);
  };
  return [
    on('listElections', ({ request, url, state }) => answer(request, courtReads.listElections(tablesOf(state), url.searchParams))),
    on('listElectionOffices', ({ request, state }) => answer(request, courtReads.listOffices(tablesOf(state)))),
    on('listElectionParties', ({ request, url, state }) => answer(request, courtReads.listParties(tablesOf(state), url.searchParams))),
    // The registered parties are reference data of their own (sdk/registered-parties.ts), as the server's table seeded from it.
    on('listRegisteredParties', ({ url }) => {
      const day = url.searchParams.get('em');
      if (day !== null && (!/^\d{4}-\d{2}-\d{2}$/.test(day) || day < REGISTERED_PARTIES_FROM)) {
        return errorResponse(400, 'bad_request', `The request is malformed: em must be a day (YYYY-MM-DD) from ${REGISTERED_PARTIES_FROM} on.`, [
          { location: 'query', field: 'em', rule: 'covered_day', message: `must be a day from ${REGISTERED_PARTIES_FROM} on (the list of registered parties covers no earlier day)`, value: day },
        ]);
      }
      const parties = day === null ? [...REGISTERED_PARTY_LIST] : partiesRegisteredOn(REGISTERED_PARTY_LIST, day);
      return envelope(200, parties, `${parties.length} ${parties.length === 1 ? 'party' : 'parties'}${day === null ? '' : ` registered on ${day}`}.`);
    }),
    on('getElectionCodes', ({ request, url, state }) => answer(request, courtReads.codeTables(tablesOf(state), url.searchParams))),
    on('searchCandidacies', ({ request, url, state, base }) => {
      const found = courtReads.searchCandidacies(tablesOf(state), url.searchParams);
      if ('status' in found) return answer(request, found);
      const listUrl = new URL(`${base}/api/elections/candidacies/`);
      for (const filter of ['nome', 'nr_candidato', 'partido', 'cd_cargo', 'uf', 'codigo_ibge', 'cd_eleicao']) {
        const value = url.searchParams.get(filter);
        if (value !== null) listUrl.searchParams.set(filter, value);
      }
      const paged = pageOf(found.data, Number(url.searchParams.get('page') ?? 1), courtReads.CANDIDACIES_PER_PAGE, listUrl);
      return answer(request, paged instanceof Response ? paged : { data: paged, message: found.message });
    }),
    on('getCandidacy', ({ request, url, state, user }) => answer(request, courtReads.candidacy(tablesOf(state), url.searchParams, user.is_admin), user.is_admin)),
  ];
}

// --- contacts and consent (src/messaging/contacts.ts, contact-import.ts, contact-handlers.ts) ------------

/** A contact as the server keeps it, its tags sorted. */
interface StoredContact {
  id: number;
  entity_id: number;
  phone: string;
  name: string | null;
  consent: { kind: ConsentKind | null; source: string; given_at: string; text: string | null; evidence: string | null } | null;
  tags: string[];
  created_at: string;
  updated_at: string;
}

const CONTACTS_PER_PAGE = 50;
const CONTACT_COLUMNS: Record<string, 'phone' | 'name' | 'source' | 'givenAt' | 'text' | 'kind' | 'evidence' | 'tags'> = {
  telefone: 'phone', phone: 'phone', nome: 'name', name: 'name', consentimento_origem: 'source', consent_source: 'source',
  consentimento_data: 'givenAt', consent_given_at: 'givenAt', consentimento_texto: 'text', consent_text: 'text', tags: 'tags',
  consentimento_tipo: 'kind', consent_kind: 'kind', consentimento_prova: 'evidence', consent_evidence: 'evidence',
};
/** Where each consent problem's field is read from in the import (contact-import.ts CONSENT_COLUMN). */
const CONSENT_COLUMN = { kind: 'consentimento_tipo', source: 'consentimento_origem', evidence: 'consentimento_prova' } as const;

/** A Brazilian number in E.164, by its digits only (the server reads numbering plans with libphonenumber). */
function contactPhone(text: string): string | undefined {
  const digits = text.replace(/\D/g, '');
  if (text.trim().startsWith('+')) return /^\d{10,15}$/.test(digits) ? `+${digits}` : undefined;
  if (/^\d{10,11}$/.test(digits)) return `+55${digits}`;
  return /^55\d{10,11}$/.test(digits) ? `+${digits}` : undefined;
}
const maskedPhone = (phone: string) => (phone.startsWith('+55') ? `+55${'*'.repeat(phone.length - 7)}${phone.slice(-4)}` : `+${'*'.repeat(phone.length - 5)}${phone.slice(-4)}`);
const contactTag = (tag: string) => tag.normalize('NFC').trim().replace(/\s+/g, ' ').toLocaleLowerCase('pt-BR');
const contactView = (contact: StoredContact, whole: boolean) =>
  whole ? { ...contact, can_receive_sms: isBrazilianMobile(contact.phone) } : { ...contact, can_receive_sms: isBrazilianMobile(contact.phone), phone: maskedPhone(contact.phone), name: contact.name === null ? null : contact.name.trim().split(/\s+/).map((word) => `${[...word][0]}.`).join(' ') };
const noContact = (id: number) =>
  notFound(`There is no contact ${id} in your teams' entities.`, [{ location: 'path', field: 'contact_id', rule: 'in_your_teams', message: 'must be a contact of an entity of one of your teams', value: id }]);

/** A consent date as the import reads it: DD/MM/AAAA, AAAA-MM-DD (midnight in Brasília) or an ISO 8601 date and time. */
function consentDate(text: string): Date | undefined {
  const dayFirst = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(text);
  const day = dayFirst ? `${dayFirst[3]}-${dayFirst[2]!.padStart(2, '0')}-${dayFirst[1]!.padStart(2, '0')}` : /^\d{4}-\d{2}-\d{2}$/.test(text) ? text : undefined;
  if (day !== undefined) {
    const date = new Date(`${day}T00:00:00-03:00`);
    // 31/02 rolls over into March: a real date reads back the same.
    return !Number.isNaN(date.getTime()) && new Date(date.getTime() - 3 * 3600_000).toISOString().slice(0, 10) === day ? date : undefined;
  }
  if (!/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(text)) return undefined;
  const iso = text.replace(' ', 'T');
  const date = new Date(/[zZ]$|[+-]\d{2}:?\d{2}$/.test(iso) ? iso : `${iso}-03:00`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** The cells of each line of a CSV text (quotes doubled inside quoted cells), with each line's number. */
function csvLines(text: string, delimiter: string): Array<{ line: number; cells: string[] } | { line: number; unreadable: true }> {
  const lines: Array<{ line: number; cells: string[] } | { line: number; unreadable: true }> = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  let line = 1;
  let start = 1;
  let broken = false;
  const end = () => {
    cells.push(cell);
    if (broken) lines.push({ line: start, unreadable: true });
    else if (cells.some((value) => value.trim() !== '')) lines.push({ line: start, cells });
    cells = [];
    cell = '';
    broken = false;
    start = line;
  };
  const source = text.replace(/^\uFEFF/, '');
  for (let index = 0; index < source.length; index += 1) {
    const character = source[index]!;
    if (quoted) {
      if (character === '"' && source[index + 1] === '"') (cell += '"'), (index += 1);
      else if (character === '"') quoted = false;
      else {
        if (character === '\n') line += 1;
        cell += character;
      }
    } else if (character === '"' && cell === '') quoted = true;
    else if (character === '"') broken = true;
    else if (character === delimiter) cells.push(cell), (cell = '');
    else if (character === '\n' || character === '\r') {
      if (character === '\r' && source[index + 1] === '\n') index += 1;
      line += 1;
      end();
    } else cell += character;
  }
  if (cell !== '' || cells.length > 0) end();
  return lines;
}

function contactHandlers(on: On): HttpHandler[] {
  const contactsOf = (state: State) => state.contacts;
  /** The contact in the path and the caller's role in its entity: 404 for a stranger, 403 for a role that may not. */
  const contactFor = (context: Context, permission: Permission): { contact: StoredContact; role: TeamRole } | Response => {
    const id = Number(context.url.pathname.split('/').filter(Boolean)[2]);
    const contact = contactsOf(context.state).get(id);
    const entity = contact && context.state.entities.get(contact.entity_id);
    const role = entity && roleIn(entity, context.user);
    if (!contact || !role) return noContact(id);
    if (!may(context.user, role, permission)) return forbidden(`Your role in this team (${role}) may not ${PERMISSION_TEXT[permission]}.`);
    return { contact, role };
  };
  const roleOf = (context: Context, entity: StoredEntity) => roleIn(entity, context.user)!;
  return [
    on('listContacts', (context) => {
      const { url, state, base } = context;
      const entity = entityFor(context, Number(url.searchParams.get('entity_id')), { location: 'query', field: 'entity_id' });
      if (entity instanceof Response) return entity;
      const written = url.searchParams.get('tag');
      const tag = written === null ? undefined : contactTag(written);
      if (tag === '') return errorResponse(400, 'bad_request', 'The request is malformed: tag is blank.', [{ location: 'query', field: 'tag', rule: 'not_blank', message: 'must not be blank', value: written! }]);
      const whole = may(context.user, roleOf(context, entity), 'readPersonalData');
      const found = [...contactsOf(state).values()].filter((contact) => contact.entity_id === entity.id && (tag === undefined || contact.tags.includes(tag))).sort((a, b) => a.id - b.id);
      const listUrl = new URL(`${base}/api/contacts/`);
      listUrl.searchParams.set('entity_id', String(entity.id));
      if (tag !== undefined) listUrl.searchParams.set('tag', tag);
      const paged = pageOf(found.map((contact) => contactView(contact, whole)), Number(url.searchParams.get('page') ?? 1), CONTACTS_PER_PAGE, listUrl);
      return paged instanceof Response ? paged : envelope(200, paged, `${found.length} contact${found.length === 1 ? '' : 's'}.`);
    }),
    on('createContact', (context) => {
      const { body, state } = context;
      const entity = entityFor(context, Number(body.entity_id), { location: 'body', field: 'entity_id' }, 'manageTeam');
      if (entity instanceof Response) return entity;
      const problems: ErrorDetail[] = [];
      const phone = contactPhone(String(body.phone));
      if (String(body.phone).trim() === '') problems.push({ location: 'body', field: 'phone', rule: 'not_blank', message: 'must not be blank' });
      else if (!phone) problems.push({ location: 'body', field: 'phone', rule: 'phone_number', message: 'must be a valid phone number', value: String(body.phone) });
      else if (!isBrazilianMobile(phone)) {
        problems.push({ location: 'body', field: 'phone', rule: 'not_mobile', message: 'must be a Brazilian mobile number, the only numbers an SMS reaches (not a landline, toll-free or foreign number)', value: String(body.phone) });
      }
      const consent = (body.consent ?? null) as { kind?: ConsentKind | null; source: string; given_at: string; text?: string | null; evidence?: string | null } | null;
      if (consent && consent.source.trim() === '') problems.push({ location: 'body', field: 'consent.source', rule: 'not_blank', message: 'must not be blank' });
      if (consent && new Date(consent.given_at).getTime() > Date.now()) problems.push({ location: 'body', field: 'consent.given_at', rule: 'not_in_future', message: 'must not be in the future', value: consent.given_at });
      // Consent that can be shown (issue 42): the server's rule, from the module both import.
      const judged = consent && consent.source.trim() !== '' ? judgeConsent({ kind: consent.kind, source: consent.source.trim(), evidence: consent.evidence }) : undefined;
      for (const problem of judged?.problems ?? []) problems.push({ location: 'body', field: `consent.${problem.field}`, rule: problem.rule, message: problem.message, ...(problem.value === undefined ? {} : { value: problem.value }) });
      const tags = ((body.tags ?? []) as string[]).map(contactTag);
      tags.forEach((tag, index) => tag === '' && problems.push({ location: 'body', field: `tags.${index}`, rule: 'not_blank', message: 'must not be blank', value: (body.tags as string[])[index]! }));
      if (problems.length > 0 || !phone) return invalidBody(problems);
      const taken = [...contactsOf(state).values()].find((contact) => contact.entity_id === entity.id && contact.phone === phone);
      if (taken) return conflict(`Contact ${taken.id} of entity ${entity.id} has this number already.`, [{ location: 'body', field: 'phone', rule: 'unique_per_entity', message: `is the number of contact ${taken.id} of this entity`, value: phone }]);
      const name = typeof body.name === 'string' && body.name.trim() !== '' ? body.name.trim() : null;
      const at = new Date().toISOString();
      const contact: StoredContact = {
        id: newId(state, contactsOf(state).keys()),
        entity_id: entity.id,
        phone,
        name,
        consent: consent && judged?.kind ? { kind: judged.kind, source: consent.source.trim(), given_at: new Date(consent.given_at).toISOString(), text: consent.text?.trim() || null, evidence: consent.evidence?.trim() || null } : null,
        tags: [...new Set(tags)].sort(),
        created_at: at,
        updated_at: at,
      };
      contactsOf(state).set(contact.id, contact);
      return envelope(201, contactView(contact, true), `Contact ${contact.id} added.`);
    }),
    on('importContacts', async (context) => {
      const { request, url, state } = context;
      const entity = entityFor(context, Number(url.searchParams.get('entity_id')), { location: 'query', field: 'entity_id' }, 'manageTeam');
      if (entity instanceof Response) return entity;
      const text = await request.text();
      const head = text.replace(/^\uFEFF/, '').split(/\r?\n|\r/)[0] ?? '';
      const delimiter = head.replace(/"[^"]*"/g, '').split(';').length > head.replace(/"[^"]*"/g, '').split(',').length ? ';' : ',';
      const [header, ...rows] = csvLines(text, delimiter);
      const refused = (details: ErrorDetail[]) => errorResponse(422, 'validation_failed', "The file's header is not one the import reads: nothing was imported.", details);
      if (!header || !('cells' in header)) return refused([{ location: 'body', field: 'telefone', rule: 'header', message: 'the file must start with a header row naming its columns, telefone (or phone) among them' }]);
      const names = header.cells.map((cell) => cell.trim().toLowerCase());
      const problems: ErrorDetail[] = names.flatMap((name, index): ErrorDetail[] =>
        !CONTACT_COLUMNS[name]
          ? [{ location: 'body', field: name, rule: 'known_column', message: 'is not a column the import reads', value: header.cells[index]! }]
          : names.findIndex((other) => CONTACT_COLUMNS[other] === CONTACT_COLUMNS[name]) !== index
            ? [{ location: 'body', field: name, rule: 'unique_column', message: 'names the same column as another cell of the header' }]
            : [],
      );
      if (!names.some((name) => CONTACT_COLUMNS[name] === 'phone')) problems.unshift({ location: 'body', field: 'telefone', rule: 'required_column', message: "the header must name the number's column: telefone (or phone)" });
      if (problems.length > 0) return refused(problems);
      const report = { entity_id: entity.id, rows: 0, inserted: 0, updated: 0, unchanged: 0, rejected: 0, rejections: [] as Array<{ line: number; reason: string }> };
      const reject = (line: number, reason: string) => {
        report.rejected += 1;
        if (report.rejections.length < 100) report.rejections.push({ line, reason });
      };
      const seen = new Map<string, number>();
      for (const row of rows) {
        report.rows += 1;
        if (!('cells' in row)) {
          reject(row.line, 'the line is not valid CSV: a quote is misplaced (a quote inside a cell is written twice, and the cell quoted)');
          continue;
        }
        if (row.cells.length > names.length) {
          reject(row.line, `the line has ${row.cells.length} cells; the header names ${names.length} columns`);
          continue;
        }
        const cell = (column: string) => row.cells[names.findIndex((name) => CONTACT_COLUMNS[name] === column)]?.trim() || null;
        const reasons: string[] = [];
        const phone = cell('phone') === null ? undefined : contactPhone(cell('phone')!);
        if (cell('phone') === null) reasons.push('telefone: missing');
        else if (!phone) reasons.push('telefone: not a valid phone number');
        else if (!isBrazilianMobile(phone)) reasons.push('telefone: not a Brazilian mobile number (not_mobile): landlines, toll-free and foreign numbers cannot receive SMS');
        const [source, givenAt, consentText, kindCell, evidence] = [cell('source'), cell('givenAt'), cell('text'), cell('kind'), cell('evidence')];
        let consent: StoredContact['consent'] = null;
        if (source !== null || givenAt !== null || consentText !== null || kindCell !== null || evidence !== null) {
          if (source === null) reasons.push('consentimento_origem: missing, and a consent needs it (with its date)');
          if (givenAt === null) reasons.push('consentimento_data: missing, and a consent needs it (with its origin)');
          const known = kindCell === null ? null : (CONSENT_KINDS as readonly string[]).includes(kindCell.toLowerCase()) ? (kindCell.toLowerCase() as ConsentKind) : undefined;
          if (known === undefined) reasons.push(`consentimento_tipo: not one of ${CONSENT_KINDS.join(', ')}`);
          const judged = source === null ? undefined : judgeConsent({ kind: known, source, evidence });
          for (const problem of judged?.problems ?? []) {
            if (problem.rule === 'consent_kind_required' && known === undefined) continue;
            reasons.push(`${CONSENT_COLUMN[problem.field]}: ${problem.rule}: ${problem.message}`);
          }
          const date = givenAt === null || source === null || !judged?.kind ? undefined : consentDate(givenAt);
          if (givenAt !== null && source !== null && judged?.kind && !date) reasons.push('consentimento_data: not a date (DD/MM/AAAA, AAAA-MM-DD or an ISO 8601 date and time)');
          else if (date && date.getTime() > Date.now()) reasons.push('consentimento_data: in the future');
          if (source !== null && date && judged?.kind) consent = { kind: judged.kind, source, given_at: date.toISOString(), text: consentText, evidence };
        }
        const tags = [...new Set((cell('tags') ?? '').split(/[|,;]/).map(contactTag).filter((tag) => tag !== ''))];
        if (reasons.length > 0 || !phone) {
          reject(row.line, reasons.join('; '));
          continue;
        }
        if (seen.has(phone)) {
          reject(row.line, `telefone: repeats the number of line ${seen.get(phone)}`);
          continue;
        }
        seen.set(phone, row.line);
        const stored = [...contactsOf(state).values()].find((contact) => contact.entity_id === entity.id && contact.phone === phone);
        const at = new Date().toISOString();
        if (!stored) {
          const id = newId(state, contactsOf(state).keys());
          contactsOf(state).set(id, { id, entity_id: entity.id, phone, name: cell('name'), consent, tags: tags.sort(), created_at: at, updated_at: at });
          report.inserted += 1;
          continue;
        }
        const before = JSON.stringify([stored.name, stored.consent, stored.tags]);
        if (cell('name') !== null) stored.name = cell('name');
        if (consent) stored.consent = consent;
        stored.tags = [...new Set([...stored.tags, ...tags])].sort();
        if (JSON.stringify([stored.name, stored.consent, stored.tags]) === before) report.unchanged += 1;
        else {
          stored.updated_at = at;
          report.updated += 1;
        }
      }
      return envelope(200, report, `${report.rows} line${report.rows === 1 ? '' : 's'}: ${report.inserted} inserted, ${report.updated} updated, ${report.unchanged} unchanged, ${report.rejected} rejected.`);
    }),
    on('getContact', (context) => {
      const found = contactFor(context, 'read');
      if (found instanceof Response) return found;
      return envelope(200, contactView(found.contact, may(context.user, found.role, 'readPersonalData')), `Contact ${found.contact.id}.`);
    }),
    on('deleteContact', (context) => {
      const found = contactFor(context, 'manageTeam');
      if (found instanceof Response) return found;
      contactsOf(context.state).delete(found.contact.id);
      return envelope(200, { id: found.contact.id, entity_id: found.contact.entity_id, removed: true }, `Contact ${found.contact.id} removed.`);
    }),
    on('eraseContact', (context) => {
      const found = contactFor(context, 'manageTeam');
      if (found instanceof Response) return found;
      const { contact } = found;
      if (String(context.body.reason ?? '').trim() === '') {
        return invalidBody([{ location: 'body', field: 'reason', rule: 'not_blank', message: "must not be blank: the reference of the person's request", value: String(context.body.reason) }]);
      }
      // The mock sends nothing: the entity's messages to the number are queued (canceled here) or were seeded.
      let masked = 0;
      let canceled = 0;
      for (const campaign of context.state.campaigns.values()) {
        if (campaign.entity_id !== contact.entity_id) continue;
        for (const message of campaign.messages.filter((candidate) => candidate.recipient === contact.phone)) {
          message.recipient = maskedPhone(contact.phone);
          if (message.status === 'queued') {
            message.status = 'canceled';
            message.error_message = 'The contact was erased at their request before the message was sent.';
            canceled += 1;
          } else masked += 1;
        }
      }
      contactsOf(context.state).delete(contact.id);
      const messages = masked + canceled;
      return envelope(
        200,
        // An opted-out number stays suppressed (the server keeps a keyed hash of it; opt-outs.ts).
        { id: contact.id, entity_id: contact.entity_id, erased: true, messages_masked: masked, messages_canceled: canceled, replies_masked: 0, suppression_kept: chatOf(context.state).optedOut.has(`${contact.entity_id}:${contact.phone}`) },
        `Contact ${contact.id} was erased; its number was removed from ${messages} message${messages === 1 ? '' : 's'} and 0 replies.`,
      );
    }),
  ];
}

// --- The chat inbox (src/chat/): conversations from the demo's replies, answers, reads, assignments, the cursor ---

/** A conversation as the server keeps it (the mock's are SMS ones, from the seed's replies that are not opt-outs). */
interface StoredConversation {
  id: number;
  entity_id: number;
  credential_id: number;
  participant: string;
  assignee_id: number | null;
  unread_count: number;
  created_at: string;
}
interface StoredChatMessage {
  id: number;
  conversation_id: number;
  direction: 'in' | 'out';
  text: string;
  /** `received` in; an answer stays `queued` (the mock sends nothing). */
  status: string;
  sent_by: number | null;
  created_at: string;
}
interface ChatState {
  conversations: Map<number, StoredConversation>;
  messages: StoredChatMessage[];
  /** Every change, numbered in order: what listInboxChanges reads after a cursor. */
  changes: Array<{ id: number; entity_id: number; conversation_id: number; message_id: number | null; kind: 'message' | 'status' | 'read' | 'assigned' }>;
  /** Numbers that opted out, by entity (the seed's opt-out replies). */
  optedOut: Set<string>;
  /** Messenger Pages connected to entities, by Page id (their tokens are not kept: the mock sends nothing). */
  pages: Map<string, StoredMessengerPage>;
}

interface StoredMessengerPage {
  page_id: string;
  entity_id: number;
  name: string;
  connected_by: number;
  created_at: string;
  updated_at: string;
}

const CONVERSATIONS_PER_PAGE = 30;
const CHAT_MESSAGES_PER_PAGE = 50;
/** The inboxes of each mock state (kept beside it: reset replaces the state, and with it these). */
const chats = new WeakMap<State, ChatState>();

/** A reply's text read as the server reads an opt-out (opt-outs.ts): the whole reply one keyword, or a request to stop in the sender's own words (opt-out-phrases.ts). */
const isOptOut = (body: string) => OPT_OUT_KEYWORDS.has(body.normalize('NFKD').replace(/[^\p{L}\p{N}]/gu, '').toUpperCase()) || optOutPhraseOf(body) !== undefined;

/** An opt-out as listed (SmsOptOut), by `entity:number`, for those the mock recorded (the seed's carry no detail). */
type MockOptOut = { phone: string; keyword: null; source: 'reply' | 'manual' | 'conversation'; phrase: null; opted_out_at: string };
const optOutRecords = new WeakMap<ChatState, Map<string, MockOptOut>>();

/** Opts `phone` out of the entity's campaigns, as SmsOptOuts.record does: the opt-out kept, and whether it is new. */
function recordOptOut(chat: ChatState, entityId: number, phone: string, source: MockOptOut['source']): { optOut: MockOptOut; added: boolean } {
  const key = `${entityId}:${phone}`;
  const records = optOutRecords.get(chat) ?? new Map<string, MockOptOut>();
  optOutRecords.set(chat, records);
  const added = !chat.optedOut.has(key);
  chat.optedOut.add(key);
  if (!records.has(key)) records.set(key, { phone, keyword: null, source: added ? source : 'reply', phrase: null, opted_out_at: now() });
  return { optOut: records.get(key)!, added };
}

function chatOf(state: State): ChatState {
  let chat = chats.get(state);
  if (chat) return chat;
  chat = { conversations: new Map(), messages: [], changes: [], optedOut: new Set(), pages: new Map() };
  chats.set(state, chat);
  for (const reply of (seedReplies.get(state) ?? []) as Array<{ from: string; to: string; account_id: string; body: string }>) {
    const credential = [...state.credentials.values()].find((candidate) => candidate.account_id === reply.account_id && candidate.sender_id === reply.to);
    if (!credential || credential.entity_id === null) continue;
    if (isOptOut(reply.body)) {
      chat.optedOut.add(`${credential.entity_id}:${reply.from}`);
      continue;
    }
    receiveChatMessage(state, chat, credential.entity_id, credential.id, reply.from, reply.body);
  }
  return chat;
}
/** The seed's replies of each state (set when the state is made: the State type has no place for them). */
const seedReplies = new WeakMap<State, unknown[]>();

function receiveChatMessage(state: State, chat: ChatState, entityId: number, credentialId: number, from: string, text: string): void {
  let conversation = [...chat.conversations.values()].find((candidate) => candidate.credential_id === credentialId && candidate.participant === from);
  if (!conversation) {
    conversation = { id: newId(state, chat.conversations.keys()), entity_id: entityId, credential_id: credentialId, participant: from, assignee_id: null, unread_count: 0, created_at: now() };
    chat.conversations.set(conversation.id, conversation);
  }
  const message: StoredChatMessage = { id: newId(state, chat.messages.map((stored) => stored.id)), conversation_id: conversation.id, direction: 'in', text, status: 'received', sent_by: null, created_at: now() };
  chat.messages.push(message);
  conversation.unread_count += 1;
  recordChatChange(chat, conversation, message.id, 'message');
}

function recordChatChange(chat: ChatState, conversation: StoredConversation, messageId: number | null, kind: ChatState['changes'][number]['kind']): void {
  chat.changes.push({ id: (chat.changes.at(-1)?.id ?? 0) + 1, entity_id: conversation.entity_id, conversation_id: conversation.id, message_id: messageId, kind });
}

function chatMessageView(state: State, message: StoredChatMessage) {
  const sender = message.sent_by === null ? undefined : state.users.find((user) => user.id === message.sent_by);
  return {
    id: message.id,
    conversation_id: message.conversation_id,
    direction: message.direction,
    text: message.text,
    status: message.status,
    error_code: null,
    sent_by: sender ? { id: sender.id, display_name: displayName(sender) } : null,
    created_at: message.created_at,
  };
}

function conversationView(state: State, chat: ChatState, conversation: StoredConversation, whole: boolean) {
  const last = chat.messages.filter((message) => message.conversation_id === conversation.id).at(-1);
  const contact = [...state.contacts.values()].find((candidate) => candidate.entity_id === conversation.entity_id && candidate.phone === conversation.participant);
  const assignee = conversation.assignee_id === null ? undefined : state.users.find((user) => user.id === conversation.assignee_id);
  return {
    id: conversation.id,
    entity_id: conversation.entity_id,
    channel: 'sms',
    credential_id: conversation.credential_id,
    page_id: null,
    participant: whole ? conversation.participant : maskedPhone(conversation.participant),
    contact: contact ? { id: contact.id, name: contact.name } : null,
    assignee: assignee ? { id: assignee.id, display_name: displayName(assignee) } : null,
    unread_count: conversation.unread_count,
    last_message: last ? chatMessageView(state, last) : null,
    created_at: conversation.created_at,
  };
}

function messengerPageView(state: State, page: StoredMessengerPage) {
  const user = state.users.find((candidate) => candidate.id === page.connected_by);
  return { ...page, connected_by: user ? { id: user.id, display_name: displayName(user) } : null };
}

function chatHandlers(on: On): HttpHandler[] {
  const noConversation = (id: number) =>
    notFound(`There is no conversation ${id} in your teams.`, [{ location: 'path', field: 'conversation_id', rule: 'in_your_teams', message: 'must be a conversation of one of your teams', value: id }]);
  /** The conversation in the path and the caller's role in its entity: 404 for a stranger, 403 for a role that may not. */
  const conversationFor = (context: Context, permission: Permission): { conversation: StoredConversation; role: TeamRole; chat: ChatState } | Response => {
    const id = Number(context.url.pathname.split('/').filter(Boolean)[3]);
    const chat = chatOf(context.state);
    const conversation = chat.conversations.get(id);
    const entity = conversation && context.state.entities.get(conversation.entity_id);
    const role = entity && roleIn(entity, context.user);
    if (!conversation || !role) return noConversation(id);
    if (!may(context.user, role, permission)) return forbidden(`Your role in this team (${role}) may not answer or assign its conversations: its owner, admins and operators may.`);
    return { conversation, role, chat };
  };
  return [
    on('listConversations', (context) => {
      const { url, state, base } = context;
      const entity = entityFor(context, Number(url.searchParams.get('entity_id')), { location: 'query', field: 'entity_id' });
      if (entity instanceof Response) return entity;
      const chat = chatOf(state);
      const whole = may(context.user, roleIn(entity, context.user)!, 'readPersonalData');
      const unreadOnly = url.searchParams.get('unread_only') === 'true';
      const assignee = url.searchParams.get('assignee_id');
      const lastAt = (conversation: StoredConversation) => chat.messages.filter((message) => message.conversation_id === conversation.id).at(-1)?.id ?? 0;
      const found = [...chat.conversations.values()]
        .filter((conversation) => conversation.entity_id === entity.id && (!unreadOnly || conversation.unread_count > 0) && (assignee === null || conversation.assignee_id === Number(assignee)))
        .sort((a, b) => lastAt(b) - lastAt(a));
      const listUrl = new URL(`${base}/api/chat/conversations/`);
      listUrl.searchParams.set('entity_id', String(entity.id));
      const paged = pageOf(found.map((conversation) => conversationView(state, chat, conversation, whole)), Number(url.searchParams.get('page') ?? 1), CONVERSATIONS_PER_PAGE, listUrl);
      return paged instanceof Response ? paged : envelope(200, paged, `${found.length} conversation${found.length === 1 ? '' : 's'}.`);
    }),
    on('listConversationMessages', (context) => {
      const found = conversationFor(context, 'read');
      if (found instanceof Response) return found;
      const thread = found.chat.messages.filter((message) => message.conversation_id === found.conversation.id);
      const listUrl = new URL(`${context.base}/api/chat/conversations/${found.conversation.id}/messages/`);
      const paged = pageOf(thread.map((message) => chatMessageView(context.state, message)), Number(context.url.searchParams.get('page') ?? 1), CHAT_MESSAGES_PER_PAGE, listUrl);
      return paged instanceof Response ? paged : envelope(200, paged, `${thread.length} message${thread.length === 1 ? '' : 's'}.`);
    }),
    on('optOutConversation', (context) => {
      const found = conversationFor(context, 'edit');
      if (found instanceof Response) return found;
      const { conversation, role, chat } = found;
      const { optOut, added } = recordOptOut(chat, conversation.entity_id, conversation.participant, 'conversation');
      const whole = may(context.user, role, 'readPersonalData');
      const shown = whole ? optOut : { ...optOut, phone: maskedPhone(optOut.phone) };
      const entity = conversation.entity_id;
      return envelope(
        added ? 201 : 200,
        shown,
        added ? `The number of conversation ${conversation.id} is opted out of entity ${entity}'s campaigns.` : `The number of conversation ${conversation.id} had opted out of entity ${entity}'s campaigns already.`,
      );
    }),
    on('optOutSmsNumber', (context) => {
      const entity = entityFor(context, Number(context.body.entity_id), { location: 'body', field: 'entity_id' }, 'edit');
      if (entity instanceof Response) return entity;
      const listed = listedNumbers(String(context.body.phone));
      if (listed.problems.length > 0 || listed.numbers.length !== 1) {
        return invalidBody([{ location: 'body', field: 'phone', rule: 'phone_number', message: 'must be a valid phone number', value: String(context.body.phone) }]);
      }
      const phone = listed.numbers[0]!;
      const { optOut, added } = recordOptOut(chatOf(context.state), entity.id, phone, 'manual');
      return envelope(added ? 201 : 200, optOut, added ? `${phone} is opted out of entity ${entity.id}'s campaigns.` : `${phone} had opted out of entity ${entity.id}'s campaigns already.`);
    }),
    on('replyToConversation', (context) => {
      const found = conversationFor(context, 'edit');
      if (found instanceof Response) return found;
      const { conversation, chat } = found;
      if (chat.optedOut.has(`${conversation.entity_id}:${conversation.participant}`)) {
        return errorResponse(422, 'validation_failed', `The number of conversation ${conversation.id} opted out of entity ${conversation.entity_id}'s messages; it is not written to.`, [
          { location: 'path', field: 'conversation_id', rule: 'not_opted_out', message: 'must be a conversation with a number that did not opt out', value: conversation.id },
        ]);
      }
      const message: StoredChatMessage = { id: newId(context.state, chat.messages.map((stored) => stored.id)), conversation_id: conversation.id, direction: 'out', text: String(context.body.text), status: 'queued', sent_by: context.user.id, created_at: now() };
      chat.messages.push(message);
      conversation.unread_count = 0;
      recordChatChange(chat, conversation, message.id, 'message');
      return envelope(201, chatMessageView(context.state, message), `Reply ${message.id} queued for sending.`);
    }),
    on('markConversationRead', (context) => {
      const found = conversationFor(context, 'read');
      if (found instanceof Response) return found;
      const { conversation, role, chat } = found;
      if (conversation.unread_count > 0) {
        conversation.unread_count = 0;
        recordChatChange(chat, conversation, null, 'read');
      }
      return envelope(200, conversationView(context.state, chat, conversation, may(context.user, role, 'readPersonalData')), `Conversation ${conversation.id} marked read.`);
    }),
    on('assignConversation', (context) => {
      const found = conversationFor(context, 'edit');
      if (found instanceof Response) return found;
      const { conversation, role, chat } = found;
      const assigneeId = context.body.assignee_id === null ? null : Number(context.body.assignee_id);
      const member = context.state.entities.get(conversation.entity_id)!.members.find((candidate) => candidate.user_id === assigneeId);
      if (assigneeId !== null && (!member || !['owner', 'admin', 'operator'].includes(member.role))) {
        return invalidBody([{ location: 'body', field: 'assignee_id', rule: 'team_member_who_may_reply', message: "must be the entity's owner, an admin or an operator of its team", value: assigneeId }]);
      }
      if (conversation.assignee_id !== assigneeId) {
        conversation.assignee_id = assigneeId;
        recordChatChange(chat, conversation, null, 'assigned');
      }
      const view = conversationView(context.state, chat, conversation, may(context.user, role, 'readPersonalData'));
      return envelope(200, view, view.assignee ? `Conversation ${view.id} assigned to ${view.assignee.display_name}.` : `Conversation ${view.id} is assigned to nobody.`);
    }),
    on('listMessengerPages', (context) => {
      const entity = entityFor(context, Number(context.url.searchParams.get('entity_id')), { location: 'query', field: 'entity_id' });
      if (entity instanceof Response) return entity;
      const pages = [...chatOf(context.state).pages.values()].filter((page) => page.entity_id === entity.id).map((page) => messengerPageView(context.state, page));
      return envelope(200, pages, `${pages.length} Page${pages.length === 1 ? '' : 's'}.`);
    }),
    on('connectMessengerPage', (context) => {
      const entity = entityFor(context, Number(context.body.entity_id), { location: 'body', field: 'entity_id' }, 'manageTeam');
      if (entity instanceof Response) return entity;
      const pages = chatOf(context.state).pages;
      const pageId = String(context.body.page_id);
      const existing = pages.get(pageId);
      if (existing && existing.entity_id !== entity.id) {
        return errorResponse(422, 'validation_failed', `Page ${pageId} is connected to another entity; its admins must disconnect it first.`, [
          { location: 'body', field: 'page_id', rule: 'not_connected_elsewhere', message: 'must be a Page not connected to another entity', value: pageId },
        ]);
      }
      const at = now();
      const page: StoredMessengerPage = { page_id: pageId, entity_id: entity.id, name: String(context.body.name), connected_by: context.user.id, created_at: existing?.created_at ?? at, updated_at: at };
      pages.set(pageId, page);
      const message = existing ? `Page ${pageId}'s name and token renewed in entity ${entity.id}'s inbox.` : `Page ${pageId} connected to entity ${entity.id}'s inbox.`;
      return envelope(existing ? 200 : 201, messengerPageView(context.state, page), message);
    }),
    on('disconnectMessengerPage', (context) => {
      const pageId = decodeURIComponent(context.url.pathname.split('/').filter(Boolean)[4] ?? '');
      const pages = chatOf(context.state).pages;
      const page = pages.get(pageId);
      const entity = page && context.state.entities.get(page.entity_id);
      const role = entity && roleIn(entity, context.user);
      if (!page || !role) {
        return notFound(`There is no messenger Page ${pageId} connected to an entity of your teams.`, [
          { location: 'path', field: 'page_id', rule: 'in_your_teams', message: 'must be a Page connected to an entity of one of your teams', value: pageId },
        ]);
      }
      if (!may(context.user, role, 'manageTeam')) return forbidden(`Your role in this team (${role}) may not ${PERMISSION_TEXT.manageTeam}.`);
      pages.delete(pageId);
      return envelope(200, messengerPageView(context.state, page), `Page ${pageId} disconnected from entity ${page.entity_id}'s inbox.`);
    }),
    // The mock answers at once (no long poll): nothing changes in it but what a test does.
    on('listInboxChanges', (context) => {
      const { url, state } = context;
      const entity = entityFor(context, Number(url.searchParams.get('entity_id')), { location: 'query', field: 'entity_id' });
      if (entity instanceof Response) return entity;
      const chat = chatOf(state);
      const ofEntity = chat.changes.filter((change) => change.entity_id === entity.id);
      const cursor = url.searchParams.get('cursor');
      if (cursor === null) return envelope(200, { cursor: String(ofEntity.at(-1)?.id ?? 0), changes: [], more: false }, 'No changes.');
      const after = ofEntity.filter((change) => change.id > Number(cursor));
      const answered = after.slice(0, 100);
      const whole = may(context.user, roleIn(entity, context.user)!, 'readPersonalData');
      const changes = answered.map((change) => {
        const message = change.message_id === null ? undefined : chat.messages.find((stored) => stored.id === change.message_id);
        return { kind: change.kind, conversation: conversationView(state, chat, chat.conversations.get(change.conversation_id)!, whole), message: message ? chatMessageView(state, message) : null };
      });
      const next = answered.at(-1)?.id ?? Number(cursor);
      return envelope(200, { cursor: String(next), changes, more: after.length > answered.length }, changes.length === 0 ? 'No changes.' : `${changes.length} change${changes.length === 1 ? '' : 's'}.`);
    }),
  ];
}

// --- monitor alert rules and notifications ---------------------------------------------------------

type AlertKind = components['schemas']['MonitorAlertKind'];
type StoredAlertRule = components['schemas']['MonitorAlertRule'];
type StoredNotification = components['schemas']['Notification'] & { user_id: number };

const MAX_ALERT_RULES = 20;
const NOTIFICATIONS_PER_PAGE = 30;
/** What `threshold` may be for each kind (src/monitors/alerts.ts THRESHOLD_BOUNDS). */
const THRESHOLDS: Record<AlertKind, { min: number; max: number; integer: boolean; meaning: string }> = {
  followers_drop: { min: 0, max: 100, integer: false, meaning: 'over 0 and at most 100 (a percentage)' },
  mentions_spike: { min: 1, max: 1000, integer: false, meaning: 'over 1 and at most 1000 (a multiple of the 7-day average)' },
  profile_inactive: { min: 0, max: 365, integer: true, meaning: 'a whole number of days from 1 to 365' },
};

function notify(state: State, userId: number, notice: Omit<StoredNotification, 'id' | 'user_id' | 'created_at' | 'read_at'>): void {
  state.notifications.push({ id: newId(state, state.notifications.map((row) => row.id)), user_id: userId, ...notice, created_at: now(), read_at: null });
}

/** The monitor if the caller's role in its team allows `permission`: otherwise the server's 404 or 403. */
function monitorFor(context: Context, id: number, where: Pick<ErrorDetail, 'location' | 'field'>, permission: Permission) {
  const monitor = context.state.monitors.get(id);
  const entity = monitor && context.state.entities.get(monitor.entity_id);
  const role = entity && roleIn(entity, context.user);
  if (!monitor || !role) return notFound(`There is no monitor ${id} in your teams.`, [{ ...where, rule: 'in_your_teams', message: 'must be a monitor of one of your teams', value: id }]);
  if (!may(context.user, role, permission)) return forbidden(`Your role in this team (${role}) may not ${PERMISSION_TEXT[permission]}.`);
  return monitor;
}

function alertRuleHandlers(on: On): HttpHandler[] {
  const plural = (count: number) => `${count} alert rule${count === 1 ? '' : 's'}`;
  return [
    on('listMonitorAlertRules', (context) => {
      const monitor = monitorFor(context, Number(context.url.searchParams.get('monitor_id')), { location: 'query', field: 'monitor_id' }, 'read');
      if (monitor instanceof Response) return monitor;
      const rules = [...context.state.alertRules.values()].filter((rule) => rule.monitor_id === monitor.id);
      return envelope(200, rules, `${plural(rules.length)}.`);
    }),
    on('addMonitorAlertRule', (context) => {
      const { body, state } = context;
      const monitor = monitorFor(context, Number(body.monitor_id), { location: 'body', field: 'monitor_id' }, 'edit');
      if (monitor instanceof Response) return monitor;
      const kind = body.kind as AlertKind;
      const threshold = Number(body.threshold);
      const network = (body.network ?? null) as string | null;
      const problems: ErrorDetail[] = [];
      const { min, max, integer, meaning } = THRESHOLDS[kind];
      if (!(threshold > min && threshold <= max && (!integer || Number.isInteger(threshold)))) {
        problems.push({ location: 'body', field: 'threshold', rule: 'threshold_for_kind', message: `must be ${meaning} for ${kind}`, value: threshold });
      }
      const networks = [...new Set(((monitor.profiles ?? []) as Json[]).map((profile) => String(profile.nm_rede)))].sort();
      if (network !== null && !networks.includes(network)) {
        problems.push({ location: 'body', field: 'network', rule: 'monitored_network', message: `must be one of the monitor's networks: ${networks.join(', ') || 'none'}`, value: network });
      }
      if (problems.length > 0) return invalidBody(problems);
      if ([...state.alertRules.values()].filter((rule) => rule.monitor_id === monitor.id).length >= MAX_ALERT_RULES) {
        return invalidBody([{ location: 'body', field: 'monitor_id', rule: 'max_rules', message: `a monitor has at most ${MAX_ALERT_RULES} alert rules; remove one first`, value: monitor.id }]);
      }
      const id = newId(state, state.alertRules.keys());
      const rule: StoredAlertRule = { id, monitor_id: monitor.id, kind, network, threshold, breached: false, last_fired_at: null, created_at: now() };
      state.alertRules.set(id, rule);
      return envelope(201, rule, `Alert rule ${id} added to monitor ${monitor.id}.`);
    }),
    on('removeMonitorAlertRule', (context) => {
      const id = Number(context.url.pathname.split('/').filter(Boolean).at(-1));
      const rule = context.state.alertRules.get(id);
      const missing = notFound(`There is no alert rule ${id} on a monitor of your teams.`, [
        { location: 'path', field: 'rule_id', rule: 'in_your_teams', message: 'must be an alert rule of a monitor of one of your teams', value: id },
      ]);
      if (!rule) return missing;
      const monitor = monitorFor(context, rule.monitor_id, { location: 'path', field: 'rule_id' }, 'edit');
      if (monitor instanceof Response) return monitor.status === 404 ? missing : monitor;
      context.state.alertRules.delete(id);
      return envelope(200, rule, `Alert rule ${id} removed.`);
    }),
  ];
}

function notificationHandlers(on: On): HttpHandler[] {
  const view = ({ user_id: _user, ...notification }: StoredNotification) => notification;
  const mine = (state: State, user: User) => state.notifications.filter((row) => row.user_id === user.id);
  const unreadOf = (state: State, user: User) => mine(state, user).filter((row) => row.read_at === null).length;
  const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;
  return [
    on('listNotifications', ({ url, state, user, base }) => {
      const unreadOnly = url.searchParams.get('unread_only') === 'true';
      const found = mine(state, user).filter((row) => !unreadOnly || row.read_at === null).reverse();
      const listUrl = new URL(`${base}/api/notifications/`);
      if (unreadOnly) listUrl.searchParams.set('unread_only', 'true');
      const paged = pageOf(found.map(view), Number(url.searchParams.get('page') ?? 1), NOTIFICATIONS_PER_PAGE, listUrl);
      if (paged instanceof Response) return paged;
      const unread = unreadOf(state, user);
      return envelope(200, { ...paged, unread }, `${plural(found.length, 'notification')}, ${unread} unread.`);
    }),
    on('countUnreadNotifications', ({ state, user }) => {
      const unread = unreadOf(state, user);
      return envelope(200, { unread }, `${plural(unread, 'unread notification')}.`);
    }),
    on('markNotificationRead', ({ url, state, user }) => {
      const id = Number(url.pathname.split('/').filter(Boolean)[2]);
      const row = mine(state, user).find((candidate) => candidate.id === id);
      if (!row) return notFound(`You have no notification ${id}.`, [{ location: 'path', field: 'notification_id', rule: 'yours', message: 'must be one of your notifications', value: id }]);
      row.read_at ??= now();
      return envelope(200, view(row), `Notification ${id} read.`);
    }),
    on('markAllNotificationsRead', ({ state, user }) => {
      const unread = mine(state, user).filter((row) => row.read_at === null);
      for (const row of unread) row.read_at = now();
      return envelope(200, { marked: unread.length, unread: 0 }, `${plural(unread.length, 'notification')} marked read.`);
    }),
  ];
}
