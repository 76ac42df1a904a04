/**
 * The demo data read into a new State: the stateful mock starts from it, and `reset()` reads it again,
 * so every write is undone and every key issued forgotten. The seed's SMS replies become the inbox's
 * conversations and opt-outs when the inbox is first read (chat/inbox.ts).
 */
import seedData from '../msw-fixtures.json' with { type: 'json' };
import { EMPTY_COURT, type CourtSeed } from './elections/court.js';
import { INVITATION_LIFETIME_MS } from './entities/team-handlers.js';
import { campaignText } from './messaging/campaign-plan.js';
import { now, seedReplies, type AlertKind, type Invitation, type Json, type State, type StoredAlertRule, type StoredCampaign, type StoredEntity, type TeamRole, type User } from './store.js';

type Seed = typeof seedData;
/** The demo data; `elections`, the electoral court's tables (fixtures/elections.json), may be left out. */
export type StatefulSeed = Pick<Seed, 'users' | 'entities' | 'monitors' | 'research' | 'sms'> & { elections?: CourtSeed };

export function seeded(seed: StatefulSeed): State {
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
