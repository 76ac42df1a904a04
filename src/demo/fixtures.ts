/**
 * The demo data of `fixtures/` (see fixtures/README.md): its shape, and reading it. The records follow the
 * contract's shapes (the bodies the API takes, with the ids and moments its answers show), so they can
 * be compared with the spec's examples; people are named by username rather than by id.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { components } from '../../sdk/schema.js';
import type { CandidateEntity } from '../entities/models.js';
import type { MetricSnapshot } from '../monitors/store.js';
import type { CourtFixture } from '../elections/tse/demo-data.js';
import { projectRoot } from '../project-root.js';

type Schemas = components['schemas'];

export const FIXTURES_DIR = join(projectRoot, 'fixtures');

export interface UserFixture {
  id: number;
  username: string;
  email: string;
  first_name: string;
  last_name: string;
  phone: string | null;
  is_admin: boolean;
  date_joined: string;
  /** Shares e-mail and phone with teammates (false when left out, as for a new account). */
  contact_visible_to_team?: boolean;
}

export interface MemberFixture {
  /** The membership's id, when the spec shows it. */
  id?: number;
  user: string;
  role: Schemas['TeamRole'];
  added_at: string;
}

export interface EntityFixture {
  id: number;
  tp: Schemas['EntityType'];
  created_at: string;
  updated_at: string;
  /** The team; exactly one `owner`, who owns the entity. */
  team: MemberFixture[];
  /** The entity as addEntity takes it (no id). */
  record: Omit<Schemas['CandidateEntity'], 'id'>;
  /** Open invitations to its team, sent by a manager (by username) when the demo data is written. */
  invitations?: InvitationFixture[];
}

export interface InvitationFixture {
  email: string;
  role: 'admin' | 'operator' | 'viewer';
  invited_by: string;
}

export interface GuardianshipFixture {
  id: number;
  tutor_id: number;
  ward_id: number;
  /** Username of who created the link: it stands only while they may change the tutor and are in the ward's team. */
  created_by: string;
  created_at: string;
}

export interface DailyMetricsFixture {
  followers: number;
  posts: number;
  engagement: number;
  mentions: number;
}

export interface MonitorFixture {
  id: number;
  entity_id: number;
  name: string;
  keywords: string[];
  profiles: Schemas['MonitoredProfile'][];
  created_by: string;
  created_at: string;
  /** One snapshot a day, oldest first; the last is taken on the day of the seed (see seed.ts). */
  metrics: { network: string; daily: DailyMetricsFixture[] };
  /** Alert rules, added before the metrics are recorded, so that a rule the month breaches fires. */
  alert_rules?: AlertRuleFixture[];
}

/** An alert rule as addMonitorAlertRule takes it (without the monitor), and who added it. */
export interface AlertRuleFixture {
  kind: Schemas['MonitorAlertKind'];
  network?: string | null;
  threshold: number;
  created_by: string;
}

export interface ScenarioFixture {
  id: number;
  monitor_id: number;
  entity_ids: number[];
  horizon_days: number;
  /** The state the request is left in. `completed` and `failed` come from a real run on the seeded data. */
  state: Schemas['ScenarioState'];
  requested_by: string;
  created_at: string;
  decided_by?: string;
  decided_at?: string;
  rejection_reason?: string;
}

export interface SmsCredentialFixture {
  id: number;
  name: string;
  account_id: string;
  sender_id: string;
  entity_id?: number;
  /** The sender's identification and opt-out instruction added to every message (compliance.ts). */
  footer?: string;
  created_by: string;
  created_at: string;
}

export interface SmsCampaignFixture {
  id: number;
  titulo: string;
  credencial: number;
  mensagem: Schemas['SmsCampaignRequest']['mensagem'];
  created_by: string;
  created_at: string;
  /** One per number of the list, with the status the provider's receipts left it in. */
  messages: Array<{ recipient: string; status: string; provider_sid: string }>;
}

export interface SmsReplyFixture {
  message_sid: string;
  account_id: string;
  from: string;
  to: string;
  body: string;
}

export interface BookmarkFixture {
  id: number;
  user: string;
  title: string;
  url: string;
  source: string | null;
  notes: string | null;
  created_at: string;
}

export interface NewsSourceFixture {
  id: number;
  name: string;
  url: string;
  status: 'requested' | 'monitoring' | 'rejected';
  requested_by: string;
  requested_at: string;
  updated_at: string;
}

export interface DemoFixtures {
  users: UserFixture[];
  entities: EntityFixture[];
  guardianship: GuardianshipFixture[];
  monitors: MonitorFixture[];
  scenarios: ScenarioFixture[];
  sms: { credentials: SmsCredentialFixture[]; campaigns: SmsCampaignFixture[]; replies: SmsReplyFixture[] };
  bookmarks: BookmarkFixture[];
  newsSources: NewsSourceFixture[];
  /** The electoral court's tables: a few fake candidacies of the 2024 and 2022 elections (issue 22). */
  elections: CourtFixture;
}

/** Reads the fixture files of `directory` (the project's `fixtures/` by default). */
export function loadDemoFixtures(directory = FIXTURES_DIR): DemoFixtures {
  const read = <T>(file: string): T => JSON.parse(readFileSync(join(directory, file), 'utf8')) as T;
  const entities = read<{ entities: EntityFixture[]; guardianship: GuardianshipFixture[] }>('entities.json');
  const research = read<{ bookmarks: BookmarkFixture[]; news_sources: NewsSourceFixture[] }>('research.json');
  return {
    users: read('users.json'),
    entities: entities.entities,
    guardianship: entities.guardianship,
    monitors: read('monitors.json'),
    scenarios: read('scenarios.json'),
    sms: read('sms.json'),
    bookmarks: research.bookmarks,
    newsSources: research.news_sources,
    elections: read('elections.json'),
  };
}

// --- The data as written at a moment -------------------------------------------------------------------

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** The entity with `idade` as of `today`, when it has a birth date (the rules insist they agree). */
export function withCurrentAge<T extends Pick<CandidateEntity, 'data_nascimento' | 'idade'>>(record: T, today: Date): T {
  if (record.data_nascimento === undefined || record.idade === undefined) return record;
  const born = new Date(`${record.data_nascimento}T00:00:00Z`);
  const years = today.getUTCFullYear() - born.getUTCFullYear();
  const beforeBirthday = today.getUTCMonth() < born.getUTCMonth() || (today.getUTCMonth() === born.getUTCMonth() && today.getUTCDate() < born.getUTCDate());
  return { ...record, idade: beforeBirthday ? years - 1 : years };
}

/**
 * One snapshot a day, the last taken on the hour of `now` and each earlier one a day before the next:
 * 30 rows fill the 30-day series that ends today.
 */
export function dailySnapshots(metrics: DemoFixtures['monitors'][number]['metrics'], now: Date): MetricSnapshot[] {
  const last = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  const count = metrics.daily.length;
  return metrics.daily.map((day, index) => ({
    network: metrics.network,
    taken_at: new Date(last - (count - 1 - index) * DAY_MS).toISOString(),
    followers: day.followers,
    posts: day.posts,
    engagement: day.engagement,
    mentions: day.mentions,
  }));
}
