/**
 * The data subject's right of access (LGPD art. 18, II): everything the service holds about one user,
 * as JSON (`exportMyData`).
 *
 * This is also the map of where a user's personal data lives: each section below names a table and
 * the columns kept about the user there. A table that gains a column about users, or a new table that
 * points at them, belongs here (test/accounts-data-export.test.ts checks every table with a column
 * naming a user is covered). Secrets never leave: password hashes, key and token hashes, sealed
 * provider tokens and SMS account secrets are not read at all.
 */
import type { Sequelize } from 'sequelize';
import { asIsoTimestamp, readerOf } from '../db/reader.js';
import { lockSubjects } from './login-lock.js';
import type { UserRow } from './models.js';
import { publicUser, type PublicUser } from './users.js';

type Row = Record<string, unknown>;

/** One section: the rows of one table that are about the user, without secrets. */
interface Section {
  /** Where they are (a table and the column naming the user), for the reader of the export. */
  table: string;
  sql: string;
  /** The parameters; the user's id is given as `?` where the SQL names it. */
  values(user: UserRow): unknown[];
}

/**
 * The sections, by name. Columns are listed one by one, never `*`: a secret added to a table later must
 * not reach an export by default.
 */
export const EXPORT_SECTIONS: Record<string, Section> = {
  sessions: {
    table: 'api_tokens.user_id',
    sql: 'SELECT id, device, created_at, last_used_at, expires_at, revoked_at FROM api_tokens WHERE user_id = ? ORDER BY id',
    values: (user) => [user.id],
  },
  login_devices: {
    table: 'login_devices.user_id',
    sql: 'SELECT kind, created_at, last_used_at, expires_at FROM login_devices WHERE user_id = ? ORDER BY id',
    values: (user) => [user.id],
  },
  password_resets: {
    table: 'password_reset_tokens.user_id',
    sql: 'SELECT created_at, expires_at, used_at FROM password_reset_tokens WHERE user_id = ? ORDER BY id',
    values: (user) => [user.id],
  },
  pending_email_changes: {
    table: 'pending_email_changes.user_id',
    sql: 'SELECT email, created_at, expires_at FROM pending_email_changes WHERE user_id = ? ORDER BY id',
    values: (user) => [user.id],
  },
  social_logins: {
    table: 'social_logins.user_id',
    sql: 'SELECT provider, external_id, display_name, linked_at, scope, token_expires_at FROM social_logins WHERE user_id = ? ORDER BY id',
    values: (user) => [user.id],
  },
  pending_social_logins: {
    table: 'oauth_pending_links.user_id',
    sql: 'SELECT provider, external_id, display_name, created_at, expires_at, confirmed_at FROM oauth_pending_links WHERE user_id = ? ORDER BY id',
    values: (user) => [user.id],
  },
  social_login_attempts: {
    table: 'oauth_states.user_id',
    sql: 'SELECT provider, redirect_uri, expires_at, used_at FROM oauth_states WHERE user_id = ? ORDER BY expires_at',
    values: (user) => [user.id],
  },
  memberships: {
    table: 'entity_members.user_id',
    sql: 'SELECT m.entity_id, e.nome AS entity_name, e.tp AS entity_type, m.role, m.added_at FROM entity_members m JOIN entities e ON e.id = m.entity_id WHERE m.user_id = ? ORDER BY m.entity_id',
    values: (user) => [user.id],
  },
  entities_owned: {
    table: 'entities.owner_id',
    sql: 'SELECT id, tp, nome, created_at FROM entities WHERE owner_id = ? ORDER BY id',
    values: (user) => [user.id],
  },
  entities_last_written: {
    table: 'entities.updated_by',
    sql: 'SELECT id, tp, nome, updated_at FROM entities WHERE updated_by = ? ORDER BY id',
    values: (user) => [user.id],
  },
  guardianship_links_created: {
    table: 'guardianship_links.created_by',
    sql: 'SELECT tutor_id, ward_id, created_at FROM guardianship_links WHERE created_by = ? ORDER BY id',
    values: (user) => [user.id],
  },
  research_bookmarks: {
    table: 'research_bookmarks.user_id',
    sql: 'SELECT id, title, url, source, notes, created_at FROM research_bookmarks WHERE user_id = ? ORDER BY id',
    values: (user) => [user.id],
  },
  news_sources_requested: {
    table: 'news_sources.requested_by',
    sql: 'SELECT id, name, url, status, requested_at FROM news_sources WHERE requested_by = ? ORDER BY id',
    values: (user) => [user.id],
  },
  monitors_created: {
    table: 'social_monitors.created_by',
    sql: 'SELECT id, entity_id, name, created_at FROM social_monitors WHERE created_by = ? ORDER BY id',
    values: (user) => [user.id],
  },
  scenario_requests: {
    table: 'scenario_requests.requested_by, scenario_requests.decided_by',
    sql: 'SELECT id, monitor_id, horizon_days, state, requested_by, decided_by, decided_at, created_at FROM scenario_requests WHERE requested_by = ? OR decided_by = ? ORDER BY id',
    values: (user) => [user.id, user.id],
  },
  sms_credentials_added: {
    table: 'sms_credentials.created_by',
    sql: 'SELECT id, name, provider, sender_id, entity_id, created_at FROM sms_credentials WHERE created_by = ? ORDER BY id',
    values: (user) => [user.id],
  },
  sms_campaigns_sent: {
    table: 'sms_campaigns.created_by',
    sql: 'SELECT id, titulo, credential_id, accepted, rejected, opted_out_skipped, created_at FROM sms_campaigns WHERE created_by = ? ORDER BY id',
    values: (user) => [user.id],
  },
  sms_campaigns_canceled: {
    table: 'sms_campaigns.canceled_by',
    sql: 'SELECT id, titulo, entity_id, finished_at FROM sms_campaigns WHERE canceled_by = ? ORDER BY id',
    values: (user) => [user.id],
  },
  // The contacts the user added to an entity: which and when, not the people's numbers (the team's records).
  contacts_added: {
    table: 'contacts.created_by',
    sql: 'SELECT id, entity_id, created_at FROM contacts WHERE created_by = ? ORDER BY id',
    values: (user) => [user.id],
  },
  sms_compliance_set: {
    table: 'sms_compliance.updated_by',
    sql: 'SELECT entity_id, mode, updated_at FROM sms_compliance WHERE updated_by = ? ORDER BY entity_id',
    values: (user) => [user.id],
  },
  // The opt-outs the user recorded by hand for an entity (optOutSmsNumber): which entity and when, not the voters' numbers.
  sms_opt_outs_recorded: {
    table: 'sms_opt_outs.created_by',
    sql: 'SELECT id, entity_id, source, opted_out_at FROM sms_opt_outs WHERE created_by = ? ORDER BY id',
    values: (user) => [user.id],
  },
  // The holds on an entity's contact erasure the user placed (a platform admin, CF art. 14 §10), with the case named.
  contact_retention_holds: {
    table: 'contact_retention.held_by',
    sql: 'SELECT entity_id, held_at, hold_reason FROM contact_retention WHERE held_by = ? ORDER BY entity_id',
    values: (user) => [user.id],
  },
  // The election calendar lines the user changed last (a platform admin).
  election_calendar_changed: {
    table: 'election_calendar.updated_by',
    sql: 'SELECT id, title, updated_at FROM election_calendar WHERE updated_by = ? ORDER BY id',
    values: (user) => [user.id],
  },
  // The replies the user wrote in an entity's inbox (their own words), and the conversations assigned to them.
  chat_replies_written: {
    table: 'conversation_messages.sent_by',
    sql: 'SELECT id, conversation_id, body, created_at FROM conversation_messages WHERE sent_by = ? ORDER BY id',
    values: (user) => [user.id],
  },
  chat_conversations_assigned: {
    table: 'conversations.assignee_id',
    sql: 'SELECT id, entity_id, channel, created_at FROM conversations WHERE assignee_id = ? ORDER BY id',
    values: (user) => [user.id],
  },
  // The messenger Pages the user connected to an entity's inbox (or last renewed), without their tokens.
  messenger_pages_connected: {
    table: 'messenger_pages.connected_by',
    sql: 'SELECT page_id, entity_id, name, created_at, updated_at FROM messenger_pages WHERE connected_by = ? ORDER BY id',
    values: (user) => [user.id],
  },
  // Notifications (issue 25): the user's own, the devices they receive pushes on (without the endpoint
  // and keys, which are the device's secrets), the monitor alert rules and webhook endpoints they added.
  notifications: {
    table: 'notifications.user_id',
    sql: 'SELECT id, type, title, body, entity_id, subject_kind, subject_id, created_at, read_at FROM notifications WHERE user_id = ? ORDER BY id',
    values: (user) => [user.id],
  },
  push_subscriptions: {
    table: 'push_subscriptions.user_id',
    sql: 'SELECT id, device_name, created_at, last_pushed_at FROM push_subscriptions WHERE user_id = ? ORDER BY id',
    values: (user) => [user.id],
  },
  monitor_alert_rules_added: {
    table: 'monitor_alert_rules.created_by',
    sql: 'SELECT id, monitor_id, kind, network, threshold, created_at FROM monitor_alert_rules WHERE created_by = ? ORDER BY id',
    values: (user) => [user.id],
  },
  webhook_endpoints_added: {
    table: 'webhook_endpoints.created_by',
    sql: 'SELECT id, entity_id, url, event_types, created_at FROM webhook_endpoints WHERE created_by = ? ORDER BY id',
    values: (user) => [user.id],
  },
  elections_panel_syncs: {
    table: 'elections_panel_syncs.user_id',
    sql: 'SELECT id, state, entities_sent, created_at, updated_at FROM elections_panel_syncs WHERE user_id = ? ORDER BY id',
    values: (user) => [user.id],
  },
  social_network_removals: {
    table: 'socialnet_removals.user_id',
    sql: 'SELECT confirmation_code, status, received_at, completed_at FROM socialnet_removals WHERE user_id = ? ORDER BY id',
    values: (user) => [user.id],
  },
  // Not a foreign key (the log outlives accounts), so the schema test cannot find it: listed by hand.
  security_events: {
    table: 'audit_events.user_id, audit_events.actor_id',
    sql: 'SELECT occurred_at, event, actor_id, user_id, address, details FROM audit_events WHERE user_id = ? OR actor_id = ? ORDER BY occurred_at, id',
    values: (user) => [user.id, user.id],
  },
  // The changes the user made to entities (their edit history), without the values: those are the
  // team's records, read through listEntityHistory. Not a foreign key either (history outlives accounts).
  edits_made: {
    table: 'edit_history.actor_id',
    sql: 'SELECT entity_id, subject AS changed, subject_id, action, occurred_at FROM edit_history WHERE actor_id = ? ORDER BY occurred_at, id',
    values: (user) => [user.id],
  },
  membership_counts: {
    table: 'entity_member_counts.user_id',
    sql: 'SELECT tp, total FROM entity_member_counts WHERE user_id = ? ORDER BY tp',
    values: (user) => [user.id],
  },
  // Failed password checks are counted against the names typed (as digests), not the account: those of
  // the user's username and address. Each check is a row per name and client address (which it names)
  // and one per name alone; the first kind says it all.
  failed_logins: {
    table: 'login_failures.subject',
    sql: 'SELECT subject, failed_at FROM login_failures WHERE subject LIKE ? OR subject LIKE ? ORDER BY failed_at',
    values: (user) => [`${lockSubjects.identifierFromAddress(user.username, '')}%`, `${lockSubjects.identifierFromAddress(user.email, '')}%`],
  },
};

export interface PersonalDataExport {
  generated_at: string;
  account: PublicUser;
  /** Each section's rows, and where they come from. */
  sections: Record<string, { source: string; rows: Row[] }>;
}

/** Everything held about `user`, read outside any transaction (a Reader's snapshot per section). */
export async function exportPersonalData(sequelize: Sequelize, user: UserRow, now = new Date()): Promise<PersonalDataExport> {
  const reader = readerOf(sequelize);
  const sections: PersonalDataExport['sections'] = {};
  for (const [name, section] of Object.entries(EXPORT_SECTIONS)) {
    const rows = await reader.rows<Row>(section.sql, section.values(user));
    sections[name] = { source: section.table, rows: rows.map(name === 'failed_logins' ? failedLogin : plainRow) };
  }
  return { generated_at: now.toISOString(), account: publicUser(user), sections };
}

/** Timestamps (`*_at`) as ISO text whichever database gave them, JSON text (`details`) parsed; other values as they are. */
function plainRow(row: Row): Row {
  const plain: Row = {};
  for (const [column, value] of Object.entries(row)) {
    if (column === 'details') plain[column] = typeof value === 'string' ? JSON.parse(value) : {}; // as listAuditEvents shows it
    else if (value === null || value === undefined) plain[column] = value;
    else if (column.endsWith('_at')) plain[column] = asIsoTimestamp(value);
    else plain[column] = value;
  }
  return plain;
}

/** A failure with the client address it came from (after the `@` of its subject), never the digest. */
function failedLogin(row: Row): Row {
  const subject = String(row.subject);
  return { failed_at: asIsoTimestamp(row.failed_at), from_address: subject.slice(subject.indexOf('@') + 1) };
}
