/**
 * Seed contract test.
 *
 * The interface seed (/work/shared/seed/000_8e7a6f248624fe55.txt) is the
 * contract that existing front ends and external providers (SMS, social
 * networks, search) already rely on. This test holds spec/openapi.yaml to it:
 * the same operations (method + exact path, trailing slashes included), the
 * same authentication, the same query parameters with their exact names, and
 * the conventions the seed declares for every operation (X-Request-Id,
 * Idempotency-Key, the listed status codes, tags, version and servers).
 *
 * The seed's endpoint tables are copied below as data on purpose: the test must
 * not depend on parsing prose at run time. Everything we add beyond the seed is
 * listed separately, each item with the reason we added it.
 */
import { describe, expect, it } from 'vitest';
import { loadSpec, tryResolvePointer } from './helpers/spec.js';

// ---------------------------------------------------------------------------
// Contract data
// ---------------------------------------------------------------------------

type Method = 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH' | 'HEAD' | 'OPTIONS' | 'TRACE';
type Auth = 'none' | 'ApiKeyAuth';
type QueryType = 'string' | 'integer' | 'boolean';

interface QueryParam {
  name: string;
  type: QueryType;
  required: boolean;
}

interface ContractOperation {
  method: Method;
  path: string;
  auth: Auth;
  query: QueryParam[];
}

interface ExtraOperation extends ContractOperation {
  reason: string;
}

interface ExtraQueryParams {
  method: Method;
  path: string;
  query: QueryParam[];
  reason: string;
}

/** Every query parameter in the seed is optional. */
function optional(name: string, type: QueryType): QueryParam {
  return { name, type, required: false };
}

/** Only operations we add may require a query parameter. */
function required(name: string, type: QueryType): QueryParam {
  return { name, type, required: true };
}

/** The seed's "## Endpoints" tables, row by row, in the seed's order. */
const SEED_OPERATIONS: ContractOperation[] = [
  // --- Authentication and sessions ---
  { method: 'POST', path: '/api/auth/login', auth: 'none', query: [] },
  { method: 'POST', path: '/api/auth/logout', auth: 'ApiKeyAuth', query: [] },
  { method: 'POST', path: '/api/tokens/remove_token/', auth: 'none', query: [] },
  { method: 'POST', path: '/check/credential/', auth: 'ApiKeyAuth', query: [] },
  {
    method: 'GET',
    path: '/api/auth/generate_new_pass',
    auth: 'none',
    query: [optional('token', 'string'), optional('email', 'string')],
  },
  { method: 'POST', path: '/api/auth/password_reset/validate_token', auth: 'none', query: [] },
  { method: 'GET', path: '/api/check/email/', auth: 'none', query: [optional('email', 'string')] },
  { method: 'GET', path: '/api/check/login_attempt/', auth: 'none', query: [] },

  // --- Accounts, entities and operators ---
  { method: 'GET', path: '/api/auth/account', auth: 'ApiKeyAuth', query: [] },
  { method: 'GET', path: '/api/account/', auth: 'ApiKeyAuth', query: [optional('only_team', 'string')] },
  { method: 'POST', path: '/api/account/', auth: 'ApiKeyAuth', query: [] },
  { method: 'GET', path: '/api/usuario/{user_id}/', auth: 'ApiKeyAuth', query: [] },
  { method: 'GET', path: '/api/usuario/get_user_social_logins/', auth: 'ApiKeyAuth', query: [] },
  {
    method: 'GET',
    path: '/api/operators/get_operators/',
    auth: 'ApiKeyAuth',
    query: [optional('id', 'string'), optional('tp', 'string')],
  },
  {
    method: 'GET',
    path: '/api/operators/check_operator_email/',
    auth: 'ApiKeyAuth',
    query: [optional('email', 'string'), optional('entity_id', 'string')],
  },
  { method: 'GET', path: '/api/entidade/', auth: 'ApiKeyAuth', query: [] },
  { method: 'GET', path: '/api/entidade/data/', auth: 'ApiKeyAuth', query: [optional('id', 'string')] },
  { method: 'POST', path: '/api/entidade/add/', auth: 'ApiKeyAuth', query: [optional('tp', 'string')] },
  { method: 'GET', path: '/api/entidade/tutela/', auth: 'ApiKeyAuth', query: [] },

  // --- Monitors, strategy, research, news, control, assistants ---
  {
    method: 'GET',
    path: '/api/monitor_social/data/',
    auth: 'ApiKeyAuth',
    query: [optional('id_monitor', 'string')],
  },
  { method: 'POST', path: '/api/strategy/approve_pending_scenario_requests/', auth: 'ApiKeyAuth', query: [] },
  { method: 'GET', path: '/api/research/get_user_research_bookmarks/', auth: 'ApiKeyAuth', query: [] },
  { method: 'GET', path: '/api/news/get_requested_fonts/', auth: 'none', query: [] },
  { method: 'GET', path: '/api/controle/system_is_online/', auth: 'ApiKeyAuth', query: [] },
  { method: 'GET', path: '/api/controle/basic_status/', auth: 'ApiKeyAuth', query: [] },
  { method: 'GET', path: '/', auth: 'ApiKeyAuth', query: [] },

  // --- Messaging, callbacks and webhooks ---
  { method: 'POST', path: '/api/sms/list_credentials/', auth: 'ApiKeyAuth', query: [] },
  { method: 'GET', path: '/api/sms/list_credentials/', auth: 'ApiKeyAuth', query: [] },
  { method: 'POST', path: '/api/callback/provider_sms/', auth: 'none', query: [] },
  { method: 'GET', path: '/api/webhook/provider_sms/', auth: 'none', query: [] },
  {
    method: 'GET',
    path: '/api/webhook/socialnet/',
    auth: 'none',
    query: [
      optional('hub.mode', 'string'),
      optional('hub.challenge', 'string'),
      optional('hub.verify_token', 'string'),
    ],
  },
  { method: 'POST', path: '/api/callback/socialnet_removal/', auth: 'none', query: [] },
  {
    method: 'GET',
    path: '/api/callback/socialnet_removal/',
    auth: 'ApiKeyAuth',
    query: [optional('id', 'string')],
  },
  { method: 'GET', path: '/api/callback/searchnet/', auth: 'none', query: [] },
  { method: 'GET', path: '/api/social_callback/', auth: 'ApiKeyAuth', query: [] },

  // --- Municipalities ---
  // The seed leaves the authentication of this list open; our decision: public.
  {
    method: 'GET',
    path: '/api/municipios/',
    auth: 'none',
    query: [optional('codigo_uf', 'integer'), optional('page', 'integer')],
  },
];

/** Operations we add beyond the seed, on purpose. */
const EXTRA_OPERATIONS: ExtraOperation[] = [
  {
    method: 'POST',
    path: '/api/municipios/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: "The seed's Allow header for /api/municipios/ lists POST; an admin creates one municipality.",
  },
  {
    method: 'POST',
    path: '/api/operators/add_operator/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'A team cannot be used without a way to add its operators (issue 6).',
  },
  {
    method: 'POST',
    path: '/api/operators/remove_operator/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'A team cannot be used without a way to remove its operators (issue 6).',
  },
  {
    method: 'GET',
    path: '/api/operators/invitations/',
    auth: 'ApiKeyAuth',
    query: [optional('page', 'integer'), optional('entity_id', 'string'), optional('state', 'string')],
    reason: "A team's managers follow the invitations they sent: open, answered, expired (issue 21).",
  },
  {
    method: 'GET',
    path: '/api/operators/invitations/mine/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'Nobody joins a team without consent: the invitee sees the open invitations to their address (issue 21).',
  },
  {
    method: 'POST',
    path: '/api/operators/invitations/accept/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'The invitee joins a team only by accepting its invitation (issue 21).',
  },
  {
    method: 'POST',
    path: '/api/operators/invitations/decline/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'The invitee may say no to an invitation (issue 21).',
  },
  {
    method: 'POST',
    path: '/api/operators/invitations/withdraw/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: "A team's managers may take back an open invitation (issue 21).",
  },
  {
    method: 'GET',
    path: '/api/entidade/tutela/get_ward_links/',
    auth: 'ApiKeyAuth',
    query: [optional('id', 'string')],
    reason: "An entity's owner and admins must see which entities watch theirs through a guardianship link, and who created each (issue 18).",
  },
  {
    method: 'POST',
    path: '/api/entidade/tutela/remove_ward_link/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: "An entity's owner and admins must be able to stop another entity from watching theirs (issue 18).",
  },
  {
    method: 'POST',
    path: '/api/research/add_research_bookmark/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'The research bookmark list cannot be filled without a way to save a bookmark (issue 6).',
  },
  {
    method: 'POST',
    path: '/api/research/remove_research_bookmark/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'The research bookmark list cannot be pruned without a way to remove a bookmark (issue 6).',
  },
  {
    method: 'POST',
    path: '/api/news/request_font/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'The public list of requested news sources cannot be fed without a way to request one (issue 6).',
  },
  {
    method: 'POST',
    path: '/api/monitor_social/add_monitor/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'Social monitors cannot exist without a way to create one (issue 6).',
  },
  {
    method: 'POST',
    path: '/api/monitor_social/import_metrics/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'Admins import metric snapshots besides the providers\' webhooks (issue 6).',
  },
  {
    method: 'POST',
    path: '/api/strategy/add_scenario_request/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'There is nothing to approve without a way to ask for a scenario (issue 6).',
  },
  {
    method: 'GET',
    path: '/api/strategy/get_scenario_requests/',
    auth: 'ApiKeyAuth',
    query: [required('monitor_id', 'string'), optional('state', 'string'), optional('page', 'integer')],
    reason: 'A scenario request\'s state and projection cannot be read without it (issue 6).',
  },
  {
    method: 'POST',
    path: '/api/strategy/reject_pending_scenario_requests/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'Without it a request nobody wants stays pending for ever (issue 6).',
  },
  {
    method: 'POST',
    path: '/api/webhook/socialnet/',
    auth: 'none',
    query: [],
    reason: 'The subscription the seed\'s handshake confirms delivers its events by POST on the same path (issue 7).',
  },
  {
    method: 'POST',
    path: '/api/sms/add_credential/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'SMS campaigns cannot be sent without a credential to send with (issue 7).',
  },
  {
    method: 'GET',
    path: '/api/sms/list_opt_outs/',
    auth: 'ApiKeyAuth',
    query: [required('entity_id', 'string'), optional('page', 'integer')],
    reason: "Opt-outs belong to an entity; its owner and admins must be able to see who asked to stop receiving its campaigns (issue 18).",
  },
  {
    method: 'GET',
    path: '/api/sms/compliance/',
    auth: 'ApiKeyAuth',
    query: [required('entity_id', 'string')],
    reason: "Electoral law allows campaign messages only with consent, an identified sender and within the propaganda window; a team must see how its entity's campaigns are judged (issue 23).",
  },
  {
    method: 'PUT',
    path: '/api/sms/compliance/',
    auth: 'ApiKeyAuth',
    query: [required('entity_id', 'string')],
    reason: "An entity's owner and admins choose whether the electoral rules warn or refuse, and type a propaganda window when no linked election gives one (issue 23).",
  },
  {
    method: 'PATCH',
    path: '/api/sms/credentials/{credential_id}/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'Every message must identify its sender and offer a way out: a credential carries the footer that says so (issue 23).',
  },
  {
    method: 'POST',
    path: '/api/sms/campaigns/preview/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'A team sees the text as it will go (with the footer), its segments and the compliance warnings before sending (issue 23).',
  },
  {
    method: 'POST',
    path: '/api/usuario/start_social_login/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'The OAuth callbacks need a state Palanque issued: a flow must be started first (issue 7).',
  },
  {
    method: 'POST',
    path: '/api/usuario/confirm_social_login/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'A callback only proves someone consented with the state; the user who started the flow confirms the account before it is linked (issue 18).',
  },
  {
    method: 'GET',
    path: '/api/usuario/get_pending_social_logins/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: "searchnet's callback answers the browser alone, without a key: the front end must find the caller's pending links to offer their confirmation (issue 18).",
  },
  {
    method: 'GET',
    path: '/api/elections/syncs/{sync_id}/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'The elections-panel sync runs later; its outcome must be readable (issue 7).',
  },
  {
    method: 'GET',
    path: '/docs',
    auth: 'none',
    query: [],
    reason: "The seed's `docs` tag has no operation; the running server serves interactive documentation of the spec (issue 8).",
  },
  {
    method: 'GET',
    path: '/openapi.yaml',
    auth: 'none',
    query: [],
    reason: 'Clients and tools read the contract from the running server, as written (issue 8).',
  },
  {
    method: 'GET',
    path: '/openapi.json',
    auth: 'none',
    query: [],
    reason: 'The same contract as JSON, for tools that read only JSON; the documentation page loads it (issue 8).',
  },
  {
    method: 'POST',
    path: '/api/testes/reset_sandbox/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'The sandbox returns to its demo data on request; any other server refuses with 403 not_a_sandbox (issue 10).',
  },
  {
    method: 'POST',
    path: '/api/auth/signup/',
    auth: 'none',
    query: [],
    reason: "The seed's Login/Register tag and its public check/email imply a sign-up; the account exists once its e-mail is confirmed (issue 21).",
  },
  {
    method: 'POST',
    path: '/api/auth/signup/resend/',
    auth: 'none',
    query: [],
    reason: 'A confirmation link that expired or went to the spam folder can be mailed again, throttled (issue 21).',
  },
  {
    method: 'POST',
    path: '/api/auth/unlock/',
    auth: 'none',
    query: [],
    reason: "The owner of a name others keep delayed, on a device without a device token, gets a single-use unlock token by mail (issue 41).",
  },
  {
    method: 'GET',
    path: '/api/entidade/history/',
    auth: 'ApiKeyAuth',
    query: [optional('page', 'integer'), optional('id', 'string'), optional('subject', 'string')],
    reason: "An entity's owner and admins read every change to it, its team, monitors and SMS credentials: who, when, which fields before and after (issue 21).",
  },
  {
    method: 'POST',
    path: '/api/entidade/personal_data/erase/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: "Platform admins erase a recorded person's personal data at their request, in the entity and its edit history (LGPD; issue 21).",
  },
  {
    method: 'POST',
    path: '/api/entidade/personal_data/correct/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: "Platform admins correct a recorded person's personal data at their request (LGPD; issue 21).",
  },
  {
    method: 'POST',
    path: '/api/entidade/from_candidacy/',
    auth: 'ApiKeyAuth',
    query: [optional('tp', 'string')],
    reason: "A team need not type its candidate's or a competitor's data by hand: an entity is filled in from the electoral court's candidacy and linked to it (issue 22).",
  },
  {
    method: 'GET',
    path: '/api/auth/audit_events/',
    auth: 'ApiKeyAuth',
    query: [optional('page', 'integer'), optional('event', 'string'), optional('user_id', 'integer'), optional('since', 'string'), optional('until', 'string')],
    reason: 'Platform admins read the security events: logins, locks, revocations, password and e-mail changes, account changes (issue 21).',
  },
  {
    method: 'GET',
    path: '/api/auth/my_data/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'The data subject downloads everything the service holds about them (LGPD art. 18, II; issue 21).',
  },
  {
    method: 'POST',
    path: '/api/auth/change_email/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'A user moves their account to another address, confirmed from it; the old one is told (issue 21).',
  },
  {
    method: 'POST',
    path: '/api/auth/delete_account/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'The data subject deletes their own account: personal fields erased, keys revoked, records kept under a pseudonym (LGPD art. 18, VI; issue 21).',
  },
  {
    method: 'GET',
    path: '/api/auth/verify_email/',
    auth: 'none',
    query: [optional('token', 'string')],
    reason: "The link of a sign-up's confirmation mail (issue 21).",
  },
  {
    method: 'POST',
    path: '/api/auth/change_password/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'A user changes their own password with the current one; every other key of theirs is revoked (issue 21).',
  },
  {
    method: 'GET',
    path: '/api/auth/sessions/',
    auth: 'ApiKeyAuth',
    query: [optional('page', 'integer')],
    reason: "A user sees their own live keys, one per device that logged in, never the keys themselves (issue 21).",
  },
  {
    method: 'POST',
    path: '/api/auth/sessions/{session_id}/revoke/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: "A user revokes one of their own keys by the id their list shows, such as a lost laptop's (issue 21).",
  },
  {
    method: 'GET',
    path: '/api/auth/profile/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: "A settings page reads the caller's own account without knowing its id (issue 21).",
  },
  {
    method: 'POST',
    path: '/api/auth/profile/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'A user changes their own name and phone (issue 21).',
  },
  {
    method: 'POST',
    path: '/api/auth/account',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'Platform admins create accounts through the API, not only with the database tasks of the CLI (issue 21).',
  },
  {
    method: 'POST',
    path: '/api/auth/account/{user_id}/deactivate/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: "Platform admins deactivate an account through the API, not only the database (issue 21).",
  },
  {
    method: 'POST',
    path: '/api/auth/account/{user_id}/reactivate/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'Platform admins reactivate a deactivated account (issue 21).',
  },
  {
    method: 'POST',
    path: '/api/auth/account/{user_id}/end_sessions/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: "Platform admins end every session of a user, such as after a lost laptop or a departure (issue 21).",
  },
  {
    method: 'POST',
    path: '/api/elections/imports/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: "Platform admins load the electoral court's candidacy files from a running server, as a job with progress (issue 22).",
  },
  {
    method: 'GET',
    path: '/api/elections/imports/{import_id}/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'An import runs later; its progress and report must be readable (issue 22).',
  },
  {
    method: 'GET',
    path: '/api/elections/',
    auth: 'ApiKeyAuth',
    query: [optional('ano', 'integer'), optional('abrangencia', 'string')],
    reason: "The elections of the electoral court's data, by year and scope (issue 22).",
  },
  {
    method: 'GET',
    path: '/api/elections/offices/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'The offices, with the length of their ballot numbers, built from the court\'s files instead of free text (issue 22).',
  },
  {
    method: 'GET',
    path: '/api/elections/parties/',
    auth: 'ApiKeyAuth',
    query: [optional('cd_eleicao', 'integer')],
    reason: 'The parties and federations of an election, from the court\'s files instead of a hard-coded list (issue 22).',
  },
  {
    method: 'GET',
    path: '/api/elections/codes/',
    auth: 'ApiKeyAuth',
    query: [optional('table', 'string')],
    reason: 'The court\'s code tables with labels a front end can show (issue 22).',
  },
  {
    method: 'GET',
    path: '/api/elections/candidacies/',
    auth: 'ApiKeyAuth',
    query: [
      optional('page', 'integer'),
      optional('nome', 'string'),
      optional('nr_candidato', 'integer'),
      optional('partido', 'string'),
      optional('cd_cargo', 'integer'),
      optional('uf', 'string'),
      optional('codigo_ibge', 'integer'),
      optional('cd_eleicao', 'integer'),
    ],
    reason: 'A team finds its candidate and every competitor in the court\'s candidacies instead of typing them (issue 22).',
  },
  {
    method: 'GET',
    path: '/api/elections/candidacy/',
    auth: 'ApiKeyAuth',
    query: [optional('id', 'string')],
    reason: 'One candidacy of the court\'s data, with labels, personal data masked by role (issue 22).',
  },
  // The chat inbox (issue 24): the seed lists the `chat` tag without its operations.
  {
    method: 'GET',
    path: '/api/chat/conversations/',
    auth: 'ApiKeyAuth',
    query: [required('entity_id', 'string'), optional('unread_only', 'boolean'), optional('assignee_id', 'string'), optional('page', 'integer')],
    reason: "A voter's reply that is not an opt-out went nowhere: an entity's conversations with the people who wrote to it (issue 24).",
  },
  { method: 'GET', path: '/api/chat/conversations/{conversation_id}/messages/', auth: 'ApiKeyAuth', query: [optional('page', 'integer')], reason: "A conversation's thread, oldest first (issue 24)." },
  { method: 'POST', path: '/api/chat/conversations/{conversation_id}/messages/', auth: 'ApiKeyAuth', query: [], reason: 'The team answers a conversation, sent once through the provider (issue 24).' },
  { method: 'POST', path: '/api/chat/conversations/{conversation_id}/read/', auth: 'ApiKeyAuth', query: [], reason: "The team marks what it saw, so the unread count means something (issue 24)." },
  { method: 'POST', path: '/api/chat/conversations/{conversation_id}/assign/', auth: 'ApiKeyAuth', query: [], reason: 'A conversation assigned to the member who answers it (issue 24).' },
  {
    method: 'GET',
    path: '/api/chat/changes/',
    auth: 'ApiKeyAuth',
    query: [required('entity_id', 'string'), optional('cursor', 'string'), optional('wait', 'integer')],
    reason: 'New messages reach a front end without reloading: the changes after a cursor, with a long poll (issue 24).',
  },
  { method: 'GET', path: '/api/chat/messenger/pages/', auth: 'ApiKeyAuth', query: [required('entity_id', 'string')], reason: "The social network's Pages whose messages land in an entity's inbox (issue 24, chatMessenger)." },
  { method: 'POST', path: '/api/chat/messenger/pages/', auth: 'ApiKeyAuth', query: [], reason: "An entity's admins connect a Page, with its token for the send API (issue 24, chatMessenger)." },
  { method: 'DELETE', path: '/api/chat/messenger/pages/{page_id}/', auth: 'ApiKeyAuth', query: [], reason: 'A Page leaves the inbox, and its token is forgotten (issue 24, chatMessenger).' },
  // Electoral law built in (issue 42)
  { method: 'GET', path: '/api/elections/calendar/', auth: 'ApiKeyAuth', query: [], reason: "The election calendar the propaganda spans, the age rule and the end of an election are judged by, each date with its legal source (issue 42)." },
  { method: 'POST', path: '/api/elections/calendar/', auth: 'ApiKeyAuth', query: [], reason: 'A platform admin adds an election, a supplementary one among them, audited (issue 42).' },
  { method: 'PUT', path: '/api/elections/calendar/{calendar_id}/', auth: 'ApiKeyAuth', query: [], reason: "A platform admin corrects an election's dates when the court changes them, audited (issue 42)." },
  { method: 'DELETE', path: '/api/elections/calendar/{calendar_id}/', auth: 'ApiKeyAuth', query: [], reason: 'A platform admin removes an election added by mistake, audited (issue 42).' },
  { method: 'GET', path: '/api/elections/registered_parties/', auth: 'ApiKeyAuth', query: [optional('em', 'string')], reason: 'The parties registered with the court on a day, from its published list, not from what was imported (issue 42).' },
  { method: 'POST', path: '/api/sms/opt_outs/', auth: 'ApiKeyAuth', query: [], reason: 'A voter who asked by phone or in person is opted out by hand (Lei 9.504/1997 art. 57-G; issue 42).' },
  { method: 'POST', path: '/api/chat/conversations/{conversation_id}/opt_out/', auth: 'ApiKeyAuth', query: [], reason: "A voter who asked to stop in a conversation is opted out from the inbox (issue 42)." },
  { method: 'GET', path: '/api/contact_retention/', auth: 'ApiKeyAuth', query: [required('entity_id', 'string')], reason: "When an entity's campaign contacts are erased after its election's certification, and whether a hold keeps them (issue 42)." },
  { method: 'PUT', path: '/api/contact_retention/hold/', auth: 'ApiKeyAuth', query: [required('entity_id', 'string')], reason: 'A platform admin holds the contacts of an entity with proceedings pending (CF art. 14 §10), audited (issue 42).' },
  { method: 'DELETE', path: '/api/contact_retention/hold/', auth: 'ApiKeyAuth', query: [required('entity_id', 'string')], reason: 'The hold released once the proceedings end, audited (issue 42).' },
  // Background jobs for platform admins (issue 43 §1, `palanque jobs`)
  { method: 'GET', path: '/api/admin/jobs/', auth: 'ApiKeyAuth', query: [], reason: 'How many background jobs each queue holds in each state, with api and worker processes apart (issue 43).' },
  { method: 'GET', path: '/api/admin/jobs/{queue}/', auth: 'ApiKeyAuth', query: [required('state', 'string'), optional('limit', 'integer')], reason: "A queue's jobs in one state, dead ones with the reason (issue 43)." },
  { method: 'POST', path: '/api/admin/jobs/{queue}/{job_id}/retry/', auth: 'ApiKeyAuth', query: [], reason: 'A dead job given one more try once its cause is fixed (issue 43).' },
  { method: 'POST', path: '/api/admin/jobs/{queue}/purge/', auth: 'ApiKeyAuth', query: [], reason: "A canceled campaign's waiting jobs purged from the queue (issue 43)." },
  // Notifications, monitor alerts and push (issue 25; the seed's `notifications` and `push notifications` tags have no operations)
  { method: 'GET', path: '/api/notifications/', auth: 'ApiKeyAuth', query: [optional('unread_only', 'boolean'), optional('page', 'integer')], reason: "Nothing told a team what happened: the caller's notifications (issue 25)." },
  { method: 'GET', path: '/api/notifications/unread_count/', auth: 'ApiKeyAuth', query: [], reason: 'The number on the bell, cheap to poll (issue 25).' },
  { method: 'POST', path: '/api/notifications/{notification_id}/read/', auth: 'ApiKeyAuth', query: [], reason: 'A notification seen (issue 25).' },
  { method: 'POST', path: '/api/notifications/read_all/', auth: 'ApiKeyAuth', query: [], reason: 'Every notification seen at once (issue 25).' },
  { method: 'GET', path: '/api/monitor_social/alert_rules/', auth: 'ApiKeyAuth', query: [required('monitor_id', 'string')], reason: "A monitor's alert rules, breached or not (issue 25)." },
  { method: 'POST', path: '/api/monitor_social/alert_rules/', auth: 'ApiKeyAuth', query: [], reason: 'A rule that alerts the team when a profile loses followers, a spike of mentions, or a profile goes quiet (issue 25).' },
  { method: 'DELETE', path: '/api/monitor_social/alert_rules/{rule_id}/', auth: 'ApiKeyAuth', query: [], reason: 'A rule no longer wanted (issue 25).' },
  { method: 'GET', path: '/api/push/public_key/', auth: 'ApiKeyAuth', query: [], reason: "The deployment's VAPID key a browser subscribes with (issue 25, push notifications)." },
  { method: 'GET', path: '/api/push/subscriptions/', auth: 'ApiKeyAuth', query: [], reason: "The caller's devices that receive pushes (issue 25, push notifications)." },
  { method: 'POST', path: '/api/push/subscriptions/', auth: 'ApiKeyAuth', query: [], reason: "A device subscribes to the caller's notifications (issue 25, push notifications)." },
  { method: 'DELETE', path: '/api/push/subscriptions/{subscription_id}/', auth: 'ApiKeyAuth', query: [], reason: 'A device stops receiving pushes (issue 25, push notifications).' },
  // Outbound webhooks (issue 25; the seed's `webhooks` tag)
  { method: 'GET', path: '/api/webhooks/endpoints/', auth: 'ApiKeyAuth', query: [required('entity_id', 'string')], reason: "No other system could hear what happens in Palanque: an entity's webhook endpoints (issue 25)." },
  { method: 'POST', path: '/api/webhooks/endpoints/', auth: 'ApiKeyAuth', query: [], reason: 'An endpoint registered for the events it wants, with its signing secret (issue 25).' },
  { method: 'PATCH', path: '/api/webhooks/endpoints/{endpoint_id}/', auth: 'ApiKeyAuth', query: [], reason: 'An endpoint changed, or enabled again after a day of failures disabled it (issue 25).' },
  { method: 'DELETE', path: '/api/webhooks/endpoints/{endpoint_id}/', auth: 'ApiKeyAuth', query: [], reason: 'An endpoint no longer wanted (issue 25).' },
  { method: 'GET', path: '/api/webhooks/endpoints/{endpoint_id}/deliveries/', auth: 'ApiKeyAuth', query: [optional('page', 'integer')], reason: 'The delivery log, each attempt with its status (issue 25).' },
  { method: 'POST', path: '/api/webhooks/endpoints/{endpoint_id}/test/', auth: 'ApiKeyAuth', query: [], reason: 'A test event, to check a receiver (issue 25).' },
  { method: 'POST', path: '/api/webhooks/deliveries/{delivery_id}/resend/', auth: 'ApiKeyAuth', query: [], reason: 'A delivery re-sent by hand (issue 25).' },
  // Campaign reports (issue 23, part A)
  {
    method: 'GET',
    path: '/api/sms/campaigns/',
    auth: 'ApiKeyAuth',
    query: [required('entity_id', 'string'), optional('state', 'string'), optional('page', 'integer')],
    reason: "Once sent, a campaign was never seen again: an entity's campaigns, with their counts by status and cost (issue 23).",
  },
  { method: 'GET', path: '/api/sms/campaigns/{campaign_id}/', auth: 'ApiKeyAuth', query: [], reason: 'A campaign as its team accounts for it: state, counts by status, cost, who sent it and when (issue 23).' },
  {
    method: 'POST',
    path: '/api/sms/campaigns/{campaign_id}/cancel/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: 'A campaign sent by mistake must be stoppable: the messages not yet handed to the provider are not sent (issue 23).',
  },
  {
    method: 'GET',
    path: '/api/sms/campaigns/{campaign_id}/messages/',
    auth: 'ApiKeyAuth',
    query: [optional('status', 'string'), optional('page', 'integer')],
    reason: "Each recipient's status, with the number masked for roles that do not see personal data (issue 23).",
  },
  {
    method: 'GET',
    path: '/api/sms/campaigns/{campaign_id}/messages/export/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: "The recipients' statuses as a CSV file, streamed, for the campaign's accounts (issue 23).",
  },
  // Contacts and consent (issue 23, part B)
  {
    method: 'GET',
    path: '/api/contacts/',
    auth: 'ApiKeyAuth',
    query: [required('entity_id', 'string'), optional('tag', 'string'), optional('page', 'integer')],
    reason: 'Electoral law lets a campaign message only people who gave their number: an entity lists its contacts with their consent (issue 23).',
  },
  { method: 'POST', path: '/api/contacts/', auth: 'ApiKeyAuth', query: [], reason: 'A team records a person it may message and the consent they gave (issue 23).' },
  {
    method: 'POST',
    path: '/api/contacts/import/',
    auth: 'ApiKeyAuth',
    query: [required('entity_id', 'string')],
    reason: 'Contacts come by the thousand from spreadsheets: a CSV import with a report of the rejected lines (issue 23).',
  },
  { method: 'GET', path: '/api/contacts/{contact_id}/', auth: 'ApiKeyAuth', query: [], reason: 'One contact, with its consent (issue 23).' },
  { method: 'DELETE', path: '/api/contacts/{contact_id}/', auth: 'ApiKeyAuth', query: [], reason: 'A team removes a contact it may no longer message (issue 23).' },
  {
    method: 'POST',
    path: '/api/contacts/{contact_id}/erase/',
    auth: 'ApiKeyAuth',
    query: [],
    reason: "A person may ask for their data to be erased (LGPD): the contact and its number in the entity's messages, recorded in the audit log (issue 23).",
  },
];

/** Query parameters we add to seed operations, on purpose. All optional. */
const EXTRA_QUERY_PARAMS: ExtraQueryParams[] = [
  {
    method: 'GET',
    path: '/api/auth/account',
    query: [optional('page', 'integer')],
    reason: 'The user list is paginated.',
  },
  {
    method: 'GET',
    path: '/api/entidade/',
    query: [optional('page', 'integer'), optional('tp', 'string')],
    reason: 'Paginated list of entities, filtered by entity type.',
  },
  {
    method: 'GET',
    path: '/api/news/get_requested_fonts/',
    query: [optional('page', 'integer')],
    reason: 'The public list is paginated (100 a page), so one user cannot make it unbounded (issue 18).',
  },
  {
    method: 'GET',
    path: '/api/entidade/tutela/',
    query: [optional('tutor', 'string'), optional('ward', 'string'), optional('action', 'string')],
    reason: 'Adds or removes a guardianship link: who is the tutor, who is the ward, and which action.',
  },
  {
    method: 'GET',
    path: '/api/callback/searchnet/',
    query: [
      optional('code', 'string'),
      optional('state', 'string'),
      optional('error', 'string'),
      optional('error_description', 'string'),
    ],
    reason: 'OAuth 2.0 authorization-code redirect parameters.',
  },
  {
    method: 'GET',
    path: '/api/social_callback/',
    query: [
      optional('code', 'string'),
      optional('state', 'string'),
      optional('error', 'string'),
      optional('error_description', 'string'),
    ],
    reason: 'OAuth 2.0 authorization-code redirect parameters.',
  },
  {
    method: 'GET',
    path: '/api/webhook/provider_sms/',
    query: [
      optional('MessageSid', 'string'),
      optional('AccountSid', 'string'),
      optional('From', 'string'),
      optional('To', 'string'),
      optional('Body', 'string'),
    ],
    reason: "The SMS provider's inbound-message webhook fields.",
  },
];

/** The 33 tag names listed in the seed, spelled exactly as there. */
const SEED_TAGS: string[] = [
  'Accounts',
  'Candidato',
  'Company',
  'Elections',
  'Evaluation',
  'push notifications',
  'Frontend Indicators',
  'General',
  'Location',
  'Login/Register',
  'NoAuthorizationFromEcom',
  'Partidos',
  'SMS',
  'Social Networks',
  'callbacks',
  'chat',
  'chatMessenger',
  'concorrentes',
  'controle',
  'docs',
  'entidades',
  'equipe/operadores',
  'ia',
  'monitor_social',
  'news',
  'notifications',
  'old painel elections',
  'reports',
  'research',
  'testes',
  'tools',
  'trends',
  'webhooks',
];

/** Status codes the seed lists on every operation; POST operations also list 201. */
const REQUIRED_STATUSES = ['200', '400', '401', '403', '404', '409', '422', '429', '500'];
const REQUIRED_POST_STATUSES = [...REQUIRED_STATUSES, '201'];

/** The two GET operations the seed declares with a request body. */
const GET_OPERATIONS_WITH_BODY: { method: Method; path: string; mediaType: string }[] = [
  { method: 'GET', path: '/api/usuario/{user_id}/', mediaType: 'text/plain' },
  { method: 'GET', path: '/api/sms/list_credentials/', mediaType: 'application/json' },
];

const LOCAL_SERVER_URL = 'http://localhost:8000';

// ---------------------------------------------------------------------------
// Expected contract = seed + our additions
// ---------------------------------------------------------------------------

function operationKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path}`;
}

const EXPECTED_OPERATIONS: ContractOperation[] = [...SEED_OPERATIONS, ...EXTRA_OPERATIONS];

function expectedQueryFor(operation: ContractOperation): QueryParam[] {
  const key = operationKey(operation.method, operation.path);
  const extras = EXTRA_QUERY_PARAMS.filter((extra) => operationKey(extra.method, extra.path) === key);
  return [...operation.query, ...extras.flatMap((extra) => extra.query)];
}

// ---------------------------------------------------------------------------
// Loading the spec and walking it
// ---------------------------------------------------------------------------

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asObject(value: unknown): JsonObject {
  return isObject(value) ? value : {};
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function nonEmptyString(value: unknown): boolean {
  return typeof value === 'string' && value.trim() !== '';
}

const spec: JsonObject = loadSpec();

/** Follows one local JSON pointer; undefined when broken (the "$ref" test lists every broken reference). */
function resolvePointer(ref: string): unknown {
  return tryResolvePointer(spec, ref);
}

/** Replaces a { $ref } node by its target, following chains of refs (undefined if broken or circular). */
function deref(node: unknown): unknown {
  let current = node;
  const seen = new Set<string>();
  while (isObject(current) && typeof current.$ref === 'string') {
    if (seen.has(current.$ref)) return undefined;
    seen.add(current.$ref);
    current = resolvePointer(current.$ref);
  }
  return current;
}

/** Every "$ref" string anywhere in the document. */
function allRefs(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(allRefs);
  if (!isObject(node)) return [];
  const own = typeof node.$ref === 'string' ? [node.$ref] : [];
  return [...own, ...Object.values(node).flatMap(allRefs)];
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

interface SpecOperation {
  key: string;
  method: string;
  path: string;
  operation: JsonObject;
  /** Path-item parameters merged with operation parameters (operation wins), refs resolved. */
  parameters: JsonObject[];
}

function mergedParameters(pathItem: JsonObject, operation: JsonObject): JsonObject[] {
  const byLocation = new Map<string, JsonObject>();
  for (const raw of [...asArray(pathItem.parameters), ...asArray(operation.parameters)]) {
    const parameter = deref(raw);
    if (!isObject(parameter)) continue; // broken $ref: reported by the $ref test
    byLocation.set(`${String(parameter.in)}:${String(parameter.name)}`, parameter);
  }
  return [...byLocation.values()];
}

function listOperations(): SpecOperation[] {
  const operations: SpecOperation[] = [];
  for (const [path, rawPathItem] of Object.entries(asObject(spec.paths))) {
    const pathItem = asObject(deref(rawPathItem));
    for (const method of HTTP_METHODS) {
      if (!isObject(pathItem[method])) continue;
      const operation = pathItem[method];
      operations.push({
        key: operationKey(method, path),
        method: method.toUpperCase(),
        path,
        operation,
        parameters: mergedParameters(pathItem, operation),
      });
    }
  }
  return operations;
}

const specOperations = listOperations();

function findOperation(method: string, path: string): SpecOperation | undefined {
  const key = operationKey(method, path);
  return specOperations.find((operation) => operation.key === key);
}

function findParameter(operation: SpecOperation, location: string, name: string): JsonObject | undefined {
  return operation.parameters.find((parameter) => parameter.in === location && parameter.name === name);
}

function schemaTypeOf(parameter: JsonObject): string {
  const type = asObject(deref(parameter.schema)).type;
  return typeof type === 'string' ? type : `schema.type=${JSON.stringify(type ?? null)}`;
}

function describeQueryParam(key: string, name: string, type: string, required: boolean): string {
  return `${key} ?${name}: ${type}${required ? ' (REQUIRED)' : ''}`;
}

function describeSecurity(security: unknown): string {
  if (security === undefined) return 'no operation-level security';
  if (Array.isArray(security) && security.length === 0) return 'none';
  const json = JSON.stringify(security);
  if (json === JSON.stringify([{ ApiKeyAuth: [] }])) return 'ApiKeyAuth';
  return `unexpected security ${json}`;
}

function sorted(values: string[]): string[] {
  return [...values].sort();
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

describe('spec/openapi.yaml honours the interface seed', () => {
  it('contract data is self-consistent (36 seed operations; additions target seed operations)', () => {
    expect(SEED_OPERATIONS).toHaveLength(36);
    expect(SEED_TAGS).toHaveLength(33);

    const keys = EXPECTED_OPERATIONS.map((operation) => operationKey(operation.method, operation.path));
    expect(new Set(keys).size, 'duplicate operation in the contract data').toBe(keys.length);

    const problems: string[] = [];
    for (const extra of [...EXTRA_OPERATIONS, ...EXTRA_QUERY_PARAMS]) {
      if (!nonEmptyString(extra.reason)) problems.push(`${operationKey(extra.method, extra.path)}: no reason`);
    }
    for (const extra of EXTRA_QUERY_PARAMS) {
      const key = operationKey(extra.method, extra.path);
      const target = EXPECTED_OPERATIONS.find((operation) => operationKey(operation.method, operation.path) === key);
      if (!target) {
        problems.push(`${key}: extra query parameters for an operation not in the contract`);
        continue;
      }
      for (const param of extra.query) {
        if (target.query.some((existing) => existing.name === param.name)) {
          problems.push(`${key}: extra query parameter "${param.name}" is already in the seed`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('uses only local $refs that resolve (parameters, bodies, schemas, responses)', () => {
    const broken = [...new Set(allRefs(spec))].filter((ref) => deref({ $ref: ref }) === undefined);
    expect(sorted(broken)).toEqual([]);
  });

  it('declares exactly the seed operations plus our extra ones (no operation missing, none extra)', () => {
    const actual = sorted(specOperations.map((operation) => operation.key));
    const expected = sorted(EXPECTED_OPERATIONS.map((operation) => operationKey(operation.method, operation.path)));
    expect(actual).toEqual(expected);
  });

  // The remaining per-operation checks skip operations absent from the spec;
  // those are reported by the test above.

  it('declares operation-level security matching the seed: [] for none, [{ ApiKeyAuth: [] }] for ApiKeyAuth', () => {
    const actual: string[] = [];
    const expected: string[] = [];
    for (const contract of EXPECTED_OPERATIONS) {
      const found = findOperation(contract.method, contract.path);
      if (!found) continue;
      actual.push(`${found.key}: ${describeSecurity(found.operation.security)}`);
      expected.push(`${found.key}: ${contract.auth}`);
    }
    expect(sorted(actual)).toEqual(sorted(expected));
  });

  it('declares exactly the seed query parameters plus our extra ones, with matching type, none required', () => {
    const actual: string[] = [];
    const expected: string[] = [];
    for (const contract of EXPECTED_OPERATIONS) {
      const found = findOperation(contract.method, contract.path);
      if (!found) continue;
      for (const parameter of found.parameters.filter((p) => p.in === 'query')) {
        actual.push(
          describeQueryParam(found.key, String(parameter.name), schemaTypeOf(parameter), parameter.required === true),
        );
      }
      for (const param of expectedQueryFor(contract)) {
        expected.push(describeQueryParam(found.key, param.name, param.type, param.required));
      }
    }
    expect(sorted(actual)).toEqual(sorted(expected));
  });

  it('keeps the dotted hub.* query parameter names on GET /api/webhook/socialnet/', () => {
    const found = findOperation('GET', '/api/webhook/socialnet/');
    expect(found, 'GET /api/webhook/socialnet/ is missing').toBeDefined();
    const queryNames = (found?.parameters ?? []).filter((p) => p.in === 'query').map((p) => String(p.name));
    expect(sorted(queryNames)).toEqual(expect.arrayContaining(['hub.challenge', 'hub.mode', 'hub.verify_token']));
  });

  it('declares the optional header parameter X-Request-Id on every operation', () => {
    const problems: string[] = [];
    for (const found of specOperations) {
      const header = findParameter(found, 'header', 'X-Request-Id');
      if (!header) problems.push(`${found.key}: no X-Request-Id header parameter`);
      else if (header.required === true) problems.push(`${found.key}: X-Request-Id must not be required`);
    }
    expect(problems).toEqual([]);
  });

  it('declares the optional header parameter Idempotency-Key, with a maxLength, on every POST operation', () => {
    const problems: string[] = [];
    for (const found of specOperations.filter((operation) => operation.method === 'POST')) {
      const header = findParameter(found, 'header', 'Idempotency-Key');
      if (!header) {
        problems.push(`${found.key}: no Idempotency-Key header parameter`);
        continue;
      }
      if (header.required === true) problems.push(`${found.key}: Idempotency-Key must not be required`);
      if (typeof asObject(deref(header.schema)).maxLength !== 'number') {
        problems.push(`${found.key}: Idempotency-Key schema has no maxLength`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('gives every operation a unique camelCase operationId', () => {
    const problems: string[] = [];
    const seenIds = new Map<string, string>();
    for (const found of specOperations) {
      const id = found.operation.operationId;
      if (typeof id !== 'string') {
        problems.push(`${found.key}: no operationId`);
        continue;
      }
      if (!/^[a-z][a-zA-Z0-9]*$/.test(id)) problems.push(`${found.key}: operationId "${id}" is not camelCase`);
      const previous = seenIds.get(id);
      if (previous) problems.push(`${found.key}: operationId "${id}" is also used by ${previous}`);
      seenIds.set(id, found.key);
    }
    expect(problems).toEqual([]);
  });

  it('gives every operation at least one tag declared in the top-level tags', () => {
    const declaredTags = new Set(asArray(spec.tags).map((tag) => asObject(tag).name));
    const problems: string[] = [];
    for (const found of specOperations) {
      const tags = asArray(found.operation.tags);
      if (!tags.some((tag) => typeof tag === 'string' && declaredTags.has(tag))) {
        problems.push(`${found.key}: no tag among the top-level tags (has ${JSON.stringify(tags)})`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('gives every operation a summary and a description', () => {
    const problems: string[] = [];
    for (const found of specOperations) {
      if (!nonEmptyString(found.operation.summary)) problems.push(`${found.key}: no summary`);
      if (!nonEmptyString(found.operation.description)) problems.push(`${found.key}: no description`);
    }
    expect(problems).toEqual([]);
  });

  it('declares exactly the 33 seed tags at top level, each with a description', () => {
    const tags = asArray(spec.tags).map(asObject);
    expect.soft(sorted(tags.map((tag) => String(tag.name)))).toEqual(sorted(SEED_TAGS));
    const withoutDescription = tags.filter((tag) => !nonEmptyString(tag.description)).map((tag) => String(tag.name));
    expect(withoutDescription).toEqual([]);
  });

  it('lists the seed status responses on every operation (and 201 on POST operations)', () => {
    const problems: string[] = [];
    for (const found of specOperations) {
      const declared = Object.keys(asObject(found.operation.responses));
      const required = found.method === 'POST' ? REQUIRED_POST_STATUSES : REQUIRED_STATUSES;
      const missing = required.filter((status) => !declared.includes(status));
      if (missing.length > 0) problems.push(`${found.key}: missing ${missing.join(', ')}`);
    }
    expect(problems).toEqual([]);
  });

  it('carries info.version 1.0.0', () => {
    expect(asObject(spec.info).version).toBe('1.0.0');
  });

  it('lists the local server and a non-local /v1 server with a defaulted variable', () => {
    const servers = asArray(spec.servers).map(asObject);
    const urls = servers.map((server) => String(server.url));
    expect(urls, 'local development server').toContain(LOCAL_SERVER_URL);

    const isLocal = (url: string): boolean => /^https?:\/\/(localhost|127\.0\.0\.1)(:|\/|$)/.test(url);
    const nonLocal = servers.filter((server) => !isLocal(String(server.url)));
    const notVersioned = nonLocal.map((server) => String(server.url)).filter((url) => !url.endsWith('/v1'));
    expect(notVersioned, 'non-local server urls must end with /v1').toEqual([]);

    const templated = nonLocal.filter((server) => String(server.url).includes('{'));
    expect(templated.length, `no non-local server url with a {variable}; servers: ${JSON.stringify(urls)}`).toBeGreaterThan(0);

    const problems: string[] = [];
    for (const server of templated) {
      const url = String(server.url);
      const variables = asObject(server.variables);
      for (const match of url.matchAll(/\{([^}]+)\}/g)) {
        const name = match[1] ?? '';
        if (!nonEmptyString(asObject(variables[name]).default)) {
          problems.push(`${url}: variable "${name}" has no non-empty default`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('declares the request bodies the seed gives two GET operations, as not required', () => {
    const problems: string[] = [];
    for (const { method, path, mediaType } of GET_OPERATIONS_WITH_BODY) {
      const key = operationKey(method, path);
      const found = findOperation(method, path);
      if (!found) {
        problems.push(`${key}: operation missing`);
        continue;
      }
      const body = deref(found.operation.requestBody);
      if (!isObject(body)) {
        problems.push(`${key}: no requestBody`);
        continue;
      }
      if (body.required === true) problems.push(`${key}: requestBody must not be required`);
      if (!(mediaType in asObject(body.content))) problems.push(`${key}: requestBody has no ${mediaType} content`);
    }
    expect(problems).toEqual([]);
  });
});
