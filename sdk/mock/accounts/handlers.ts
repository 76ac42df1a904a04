/**
 * The accounts of the stateful mock (src/accounts/): login issues a key (the mock trusts every device:
 * it has no login lock), logout and changePassword revoke keys, a user's sessions, profile, data export
 * and the deletion of their own account under a pseudonym (src/accounts/account-deletion.ts), and who
 * sees a user's contact details. Sign-up and the admins' operations are in sign-up.ts and
 * admin-handlers.ts.
 */
import type { HttpHandler } from 'msw';
import { apiKeyIn, errorResponse } from '../../msw-validation.js';
import { conflict, envelope, invalidBody, notFound } from '../answers.js';
import type { On } from '../auth.js';
import { pageOf } from '../paging.js';
import { newId, now, publicUser, type Json, type StoredEntity } from '../store.js';
import { adminAccountHandlers } from './admin-handlers.js';
import { PASSWORD_MIN_LENGTH, signUpHandlers } from './sign-up.js';

const SESSIONS_PER_PAGE = 30;

export function accountHandlers(on: On, password: string): HttpHandler[] {
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
