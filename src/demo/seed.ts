/**
 * `db seed`: writes the demo data of `fixtures/` (the records the spec's examples show) into a database,
 * so that the real server tells the same story as the mock.
 *
 * - Everything is checked before anything is written: each record against the contract's schema of the
 *   body that would create it, and against the domain's own rules (CPF and age, municipalities of the
 *   loaded list, web addresses, phone numbers, monitor profiles and snapshots, and the team rules: who
 *   may ask for, approve or reject a scenario, who may send with a credential).
 * - Records are found by what identifies them (a username, an entity's type and name, a monitor's name
 *   in its entity...), and only missing ones are written: running the seed again changes nothing, and
 *   an interrupted seed completes when run again. The report says what was created and what existed.
 * - Ids: a record gets the id the spec's examples show (Maria da Silva Santos is entity 12) when that id
 *   is free, otherwise the next one; references between fixtures follow the ids actually given.
 * - Moments: records keep the dates the examples show, except the month of metrics, which ends on the
 *   hour of the seed (the 30-day series of `getSocialMonitorData` is counted back from today).
 * - Passwords: each user created gets a generated password (or `password`, e.g. SEED_PASSWORD), returned
 *   once in the report; only its hash is stored. Users that existed keep theirs.
 * - Scenario requests are created pending and moved through the scenario store's own state changes;
 *   `completed` and `failed` come from a real run of the projection on the seeded metrics. No job is
 *   queued: `approved` and `running` requests stay as they are, and no SMS is ever sent.
 * - SMS credentials need SECRETS_KEY to seal their auth token (a random one: the demo account is not a
 *   real provider account); without it the SMS records are skipped, and the report says so.
 */
import { randomBytes } from 'node:crypto';
import { Op, QueryTypes, type Model, type ModelStatic, type Sequelize, type Transaction } from 'sequelize';
import { SegmentedMessage } from 'sms-segments-calculator';
import type { Accounts } from '../accounts/index.js';
import type { UserRow } from '../accounts/models.js';
import { hashPassword } from '../accounts/passwords.js';
import { newReadablePassword, newSecret, secretHash } from '../accounts/secrets.js';
import { normaliseEmail, usernameKey } from '../accounts/users.js';
import { USERNAME_PATTERN } from '../config.js';
import type { Entities } from '../entities/index.js';
import { DEFAULT_INVITATION_SETTINGS } from '../entities/invitations.js';
import type { CandidateEntity, EntityRow, TeamRole } from '../entities/models.js';
import { checkCandidate } from '../entities/rules.js';
import { ContractSchemas } from '../http/contract-schemas.js';
import { loadContract } from '../http/contract.js';
import type { ErrorDetail } from '../http/errors.js';
import type { Logger } from '../logger.js';
import { footerProblem, normalisedFooter } from '../messaging/compliance.js';
import { readRecipients, normalisedPhone } from '../messaging/recipients.js';
import type { Sms } from '../messaging/sms.js';
import type { Monitors } from '../monitors/index.js';
import { MAX_RULES_PER_MONITOR, thresholdFits } from '../monitors/alerts.js';
import { checkKeywords, checkProfiles, checkSnapshots } from '../monitors/rules.js';
import type { MetricSnapshot } from '../monitors/store.js';
import type { MunicipalityCatalog } from '../municipalities/catalog.js';
import { createNewsSources, type NewsSourceRow } from '../news/sources.js';
import { createResearchBookmarks, type ResearchBookmarkRow } from '../research/bookmarks.js';
import { SecretBox } from '../security/secret-box.js';
import type { Strategy } from '../strategy/index.js';
import { defineScenarioModels, type ScenarioEntityRow, type ScenarioRow, type ScenarioState } from '../strategy/models.js';
import { checkWebAddress } from '../web-address.js';
import { loadDemoFixtures, type DemoFixtures, type InvitationFixture, type ScenarioFixture } from './fixtures.js';
import { checkCourtFixture, writeCourtFixture } from '../elections/tse/demo-data.js';
import { passwordProblem } from '../accounts/password-policy.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Where seeded snapshots say they came from (`metric_snapshots.source`). */
export const SEED_SOURCE = 'seed';

/** The demo data cannot be written: the fixtures break a rule, or the database lacks what they need. */
export class SeedError extends Error {
  override name = 'SeedError';
}

/** The database and the domains the seed writes through (the server's, or a test app's). */
export interface SeedTargets {
  sequelize: Sequelize;
  accounts: Accounts;
  entities: Entities;
  monitors: Monitors;
  strategy: Strategy;
  sms: Sms;
  /** The municipality list, loaded: entities name municipalities, which must exist. */
  municipalities: MunicipalityCatalog;
}

export interface SeedOptions {
  /** The cost of the demo users' password hashes (PASSWORD_HASH_COST; see accounts/passwords.ts). */
  passwordHashCost: number;
  /** The password of every user this run creates (SEED_PASSWORD); unset, each gets a generated one. */
  password?: string;
  /** SECRETS_KEY, to seal the SMS credential's auth token; unset, the SMS records are skipped. */
  secretsKey?: string;
  /** The moment of the seed: the month of metrics ends on its hour. */
  now?: Date;
  /** The demo data (the project's `fixtures/` by default). */
  fixtures?: DemoFixtures;
  logger?: Logger;
}

export type SeedKind =
  | 'user'
  | 'entity'
  | 'team member'
  | 'invitation'
  | 'guardianship link'
  | 'monitor'
  | 'metrics'
  | 'monitor alert rule'
  | 'scenario request'
  | 'sms credential'
  | 'sms campaign'
  | 'sms reply'
  | 'research bookmark'
  | 'news source'
  | 'court data';

export interface SeedEntry {
  kind: SeedKind;
  /** What the record is, for people: a username, a name, a title. */
  name: string;
  outcome: 'created' | 'existed' | 'skipped';
  /** Its id in this database. */
  id?: number;
  /** The id the fixture (and the spec's examples) gives it, when the record has another one here. */
  fixture_id?: number;
  note?: string;
}

export interface SeedReport {
  entries: SeedEntry[];
  /** The passwords of the users this run created: shown only here, stored only as hashes. */
  passwords: Array<{ username: string; password: string }>;
  /** What the run left out, and why. */
  notes: string[];
}

type Static<Row extends object> = ModelStatic<Model<Row, Partial<Row>>>;

/** Writes the demo data; see the top of this file for the rules. */
export async function seedDemoData(targets: SeedTargets, options: SeedOptions): Promise<SeedReport> {
  const fixtures = options.fixtures ?? loadDemoFixtures();
  const now = options.now ?? new Date();
  // The password rules of every password a person chooses (src/accounts/password-policy.ts).
  const problem = options.password === undefined ? undefined : passwordProblem(options.password);
  if (problem) throw new SeedError(`The demo users' password ${problem.message}.`);
  if (targets.municipalities.size === 0) {
    throw new SeedError('The municipality list is not loaded, so the entities cannot be checked: import it first (npm run municipios:import).');
  }
  const problems = checkDemoFixtures(fixtures, targets.municipalities, now);
  if (problems.length > 0) throw new SeedError(`The fixtures are invalid:\n  ${problems.join('\n  ')}`);

  const seeder = new Seeder(targets, options, fixtures, now);
  await seeder.run();
  return seeder.report;
}

class Seeder {
  readonly report: SeedReport = { entries: [], passwords: [], notes: [] };
  private readonly users = new Map<string, number>();
  private readonly entities = new Map<number, number>();
  private readonly monitors = new Map<number, number>();
  private readonly credentials = new Map<number, number>();

  constructor(
    private readonly targets: SeedTargets,
    private readonly options: SeedOptions,
    private readonly fixtures: DemoFixtures,
    private readonly now: Date,
  ) {}

  async run(): Promise<void> {
    // First: entities may name candidacies, and their rules read the court's tables.
    await this.seedCourtData();
    await this.seedUsers();
    await this.seedEntities();
    await this.seedGuardianship();
    await this.seedMonitors();
    await this.seedScenarios();
    await this.seedSms();
    await this.seedResearch();
    const created = this.report.entries.filter((entry) => entry.outcome === 'created').length;
    this.options.logger?.info({ created, existed: this.report.entries.length - created }, 'demo data seeded');
  }

  private add(entry: SeedEntry): void {
    this.report.entries.push(entry);
  }

  /** The entry of a record just written, with the fixture's id when it could not be kept. */
  private created(kind: SeedKind, name: string, id: number, fixtureId: number | undefined, note?: string): void {
    this.add({ kind, name, outcome: 'created', id, ...(fixtureId !== undefined && fixtureId !== id ? { fixture_id: fixtureId } : {}), ...(note ? { note } : {}) });
  }

  private existed(kind: SeedKind, name: string, id: number | undefined, note?: string): void {
    this.add({ kind, name, outcome: 'existed', ...(id !== undefined ? { id } : {}), ...(note ? { note } : {}) });
  }

  private user(username: string): number {
    const id = this.users.get(username);
    if (id === undefined) throw new SeedError(`The demo user ${username} was not seeded.`);
    return id;
  }

  private mapped(ids: Map<number, number>, fixtureId: number, what: string): number {
    const id = ids.get(fixtureId);
    if (id === undefined) throw new SeedError(`The demo ${what} ${fixtureId} was not seeded.`);
    return id;
  }

  // --- The electoral court's data ---------------------------------------------------------------

  /** One entry per table: its rows written now, or there already (an import or an earlier seed wrote them). */
  private async seedCourtData(): Promise<void> {
    const written = await writeCourtFixture(this.targets.sequelize, this.fixtures.elections);
    for (const [table, count] of Object.entries(written)) {
      const rows = this.fixtures.elections[table as keyof typeof written].length;
      if (count > 0) this.add({ kind: 'court data', name: `${table} (${count} of ${rows} rows)`, outcome: 'created' });
      else this.existed('court data', `${table} (${rows} rows)`, undefined);
    }
  }

  // --- Users ------------------------------------------------------------------------------------

  private async seedUsers(): Promise<void> {
    const { User } = this.targets.accounts.models;
    for (const fixture of this.fixtures.users) {
      const existing = (await User.findOne({ where: { username_key: usernameKey(fixture.username) }, raw: true })) as UserRow | null;
      if (existing) {
        this.users.set(fixture.username, existing.id);
        this.existed('user', fixture.username, existing.id, 'password unchanged');
        continue;
      }
      if (await this.targets.accounts.users.isEmailTaken(fixture.email)) {
        throw new SeedError(`The e-mail ${fixture.email} of the demo user ${fixture.username} belongs to another account.`);
      }
      const password = this.options.password ?? newReadablePassword();
      const id = await insertRow(User, fixture.id, {
        username: fixture.username,
        username_key: usernameKey(fixture.username),
        email: normaliseEmail(fixture.email),
        first_name: fixture.first_name,
        last_name: fixture.last_name,
        phone: fixture.phone,
        password_hash: await hashPassword(password, this.options.passwordHashCost),
        is_admin: fixture.is_admin,
        is_active: true,
        date_joined: new Date(fixture.date_joined),
        last_login: null,
        contact_visible_to_team: fixture.contact_visible_to_team ?? false,
      });
      this.users.set(fixture.username, id);
      this.report.passwords.push({ username: fixture.username, password });
      this.created('user', fixture.username, id, fixture.id, fixture.is_admin ? 'platform admin' : undefined);
    }
  }

  // --- Entities, teams and guardianship ---------------------------------------------------------

  private async seedEntities(): Promise<void> {
    const { models, store, teams } = this.targets.entities;
    for (const fixture of this.fixtures.entities) {
      const { nome } = fixture.record;
      const existing = (await models.Entity.findOne({ where: { tp: fixture.tp, nome }, order: [['id', 'ASC']], raw: true })) as EntityRow | null;
      if (existing) {
        this.entities.set(fixture.id, existing.id);
        this.existed('entity', nome, existing.id, 'team left as it is');
        continue;
      }
      const owner = this.user(fixture.team.find((member) => member.role === 'owner')!.user);
      const record = withCurrentAge(fixture.record, this.now);
      if (record.cpf != null && (await store.cpfTakenAmong(record.cpf, await teams.entityIdsOf(owner))) !== undefined) {
        throw new SeedError(`The CPF of the demo entity ${nome} is already registered by another entity of its owner's teams.`);
      }
      const sequelize = this.targets.sequelize;
      const { id, members } = await sequelize.transaction(async (transaction) => {
        const times = { created_at: new Date(fixture.created_at), updated_at: new Date(fixture.updated_at) };
        const id = await insertRow(models.Entity, fixture.id, { tp: fixture.tp, owner_id: owner, nome, ...times }, transaction);
        // The columns and the nested records (social reference, networks, marketshare) go through the store.
        await store.update(id, record, { userId: owner }, transaction);
        await models.Entity.update(times, { where: { id }, transaction });
        const members: Array<[string, number, number | undefined, TeamRole]> = [];
        for (const member of fixture.team) {
          const values = { entity_id: id, user_id: this.user(member.user), role: member.role, added_at: new Date(member.added_at) };
          members.push([member.user, await insertRow(models.Member, member.id, values, transaction), member.id, member.role]);
        }
        await this.seedInvitations(id, fixture.invitations ?? [], transaction);
        return { id, members };
      });
      this.entities.set(fixture.id, id);
      const age = record.idade !== fixture.record.idade ? `idade ${record.idade}, the age today (the fixture says ${fixture.record.idade})` : undefined;
      this.created('entity', nome, id, fixture.id, age);
      for (const [username, memberId, fixtureId, role] of members) this.created('team member', `${username} (${role} of ${nome})`, memberId, fixtureId);
    }
  }

  /**
   * The entity's open invitations, sent now (so they are open for INVITATION_LIFETIME_DAYS' default).
   * Their tokens are made and forgotten: the demo mails nothing, so they admit no sign-up.
   */
  private async seedInvitations(entityId: number, invitations: InvitationFixture[], transaction: Transaction): Promise<void> {
    for (const invitation of invitations) {
      const values = {
        entity_id: entityId,
        email: normaliseEmail(invitation.email),
        role: invitation.role,
        invited_by: this.user(invitation.invited_by),
        token_hash: secretHash(newSecret('')),
        state: 'pending' as const,
        created_at: this.now,
        expires_at: new Date(this.now.getTime() + DEFAULT_INVITATION_SETTINGS.lifetimeMs),
        answered_at: null,
        answered_by: null,
      };
      const row = await this.targets.entities.models.Invitation.create(values, { transaction });
      this.created('invitation', `${invitation.email} (${invitation.role})`, row.get('id') as number, undefined);
    }
  }

  private async seedGuardianship(): Promise<void> {
    const { Guardianship } = this.targets.entities.models;
    for (const link of this.fixtures.guardianship) {
      const tutor = this.mapped(this.entities, link.tutor_id, 'entity');
      const ward = this.mapped(this.entities, link.ward_id, 'entity');
      const name = `${nameOfEntity(this.fixtures, link.tutor_id)} watches ${nameOfEntity(this.fixtures, link.ward_id)}`;
      const existing = (await Guardianship.findOne({ where: { tutor_id: tutor, ward_id: ward }, raw: true })) as { id: number } | null;
      if (existing) {
        this.existed('guardianship link', name, existing.id);
        continue;
      }
      const id = await insertRow(Guardianship, link.id, { tutor_id: tutor, ward_id: ward, created_by: this.user(link.created_by), created_at: new Date(link.created_at) });
      this.created('guardianship link', name, id, link.id);
    }
  }

  // --- Monitors and their month of metrics -------------------------------------------------------

  private async seedMonitors(): Promise<void> {
    const { models, store } = this.targets.monitors;
    for (const fixture of this.fixtures.monitors) {
      const entityId = this.mapped(this.entities, fixture.entity_id, 'entity');
      const existing = (await models.Monitor.findOne({ where: { entity_id: entityId, name_key: fixture.name.toLowerCase() }, raw: true })) as { id: number } | null;
      let monitorId: number;
      if (existing) {
        monitorId = existing.id;
        this.existed('monitor', fixture.name, monitorId);
      } else {
        // Normalised as createSocialMonitor does (the fixtures were checked, so there are no problems here).
        const keywords = checkKeywords(fixture.keywords, []);
        const profiles = checkProfiles(fixture.profiles, []);
        monitorId = await this.targets.sequelize.transaction(async (transaction) => {
          const values = { entity_id: entityId, name: fixture.name, name_key: fixture.name.toLowerCase(), created_by: this.user(fixture.created_by), created_at: new Date(fixture.created_at) };
          const id = await insertRow(models.Monitor, fixture.id, values, transaction);
          await models.Profile.bulkCreate(
            profiles.map((profile, position) => ({ monitor_id: id, position, nm_rede: profile.nm_rede, username: profile.username ?? null, link: profile.link ?? null })),
            { transaction },
          );
          await models.Keyword.bulkCreate(keywords.map((keyword, position) => ({ monitor_id: id, position, keyword })), { transaction });
          return id;
        });
        this.created('monitor', fixture.name, monitorId, fixture.id);
      }
      this.monitors.set(fixture.id, monitorId);

      // A month of metrics once: later runs would add another month at other moments.
      const stored = await models.Snapshot.count({ where: { monitor_id: monitorId } });
      if (stored > 0) {
        this.existed('metrics', fixture.name, undefined, `${stored} snapshots stored already; none added`);
        continue;
      }
      // The rules first: recording the month checks them, as an import would, and one it breaches fires
      // (a notification for the monitor's team), so the demo has an alert to show.
      await this.seedAlertRules(monitorId, fixture);
      const recorded = await store.record(monitorId, dailySnapshots(fixture.metrics, this.now), SEED_SOURCE, this.now);
      this.add({ kind: 'metrics', name: fixture.name, outcome: 'created', note: `${recorded.created} daily ${fixture.metrics.network} snapshots up to today` });
    }
  }

  /** The monitor's alert rules, when it has none yet (seeded with its metrics, once). */
  private async seedAlertRules(monitorId: number, fixture: DemoFixtures['monitors'][number]): Promise<void> {
    const { alerts } = this.targets.monitors;
    if (!fixture.alert_rules?.length || (await alerts.count(monitorId)) > 0) return;
    for (const rule of fixture.alert_rules) {
      const network = rule.network ?? null;
      const added = await alerts.add({ monitor_id: monitorId, kind: rule.kind, network, threshold: rule.threshold, created_by: this.user(rule.created_by) }, this.now);
      if (added === 'max_rules') throw new SeedError(`Monitor ${monitorId} has ${MAX_RULES_PER_MONITOR} alert rules already.`);
      this.created('monitor alert rule', `${fixture.name}: ${rule.kind} ${rule.threshold} on ${network ?? 'every network'}`, added.id, undefined);
    }
  }

  // --- Scenario requests in every state ----------------------------------------------------------

  private async seedScenarios(): Promise<void> {
    const { Scenario, ScenarioEntity } = scenarioModels(this.targets.sequelize);
    for (const fixture of this.fixtures.scenarios) {
      const monitorId = this.mapped(this.monitors, fixture.monitor_id, 'monitor');
      const entityIds = fixture.entity_ids.map((id) => this.mapped(this.entities, id, 'entity'));
      const requestedBy = this.user(fixture.requested_by);
      const name = `${fixture.horizon_days} days, entities ${entityIds.join(', ')} (${fixture.state})`;
      const existing = await this.findScenario(monitorId, entityIds, fixture.horizon_days, requestedBy);
      let id: number;
      if (existing) {
        id = existing.id;
      } else {
        const createdAt = new Date(fixture.created_at);
        id = await this.targets.sequelize.transaction(async (transaction) => {
          const values = { monitor_id: monitorId, horizon_days: fixture.horizon_days, state: 'pending' as const, requested_by: requestedBy, created_at: createdAt, updated_at: createdAt };
          const scenarioId = await insertRow(Scenario, fixture.id, values, transaction);
          await ScenarioEntity.bulkCreate(entityIds.map((entityId, position) => ({ scenario_id: scenarioId, position, entity_id: entityId })), { transaction });
          return scenarioId;
        });
      }
      const from = existing?.state ?? 'pending';
      const reached = await this.advance(id, fixture);
      const moved = reached !== from ? (existing ? `moved on from ${from} to ${reached}` : undefined) : undefined;
      const off = reached !== fixture.state ? `is ${reached}, not ${fixture.state} as the fixture says` : undefined;
      const note = [moved, off].filter(Boolean).join('; ') || undefined;
      if (existing) this.existed('scenario request', name, id, note);
      else this.created('scenario request', name, id, fixture.id, note);
    }
  }

  /** The monitor's request by this user for these entities (in this order) and horizon, if any. */
  private async findScenario(monitorId: number, entityIds: number[], horizonDays: number, requestedBy: number): Promise<ScenarioRow | undefined> {
    const { Scenario, ScenarioEntity } = scenarioModels(this.targets.sequelize);
    const candidates = (await Scenario.findAll({ where: { monitor_id: monitorId, horizon_days: horizonDays, requested_by: requestedBy }, order: [['id', 'ASC']], raw: true })) as unknown as ScenarioRow[];
    if (candidates.length === 0) return undefined;
    const links = (await ScenarioEntity.findAll({
      where: { scenario_id: { [Op.in]: candidates.map((row) => row.id) } },
      order: [['scenario_id', 'ASC'], ['position', 'ASC']],
      raw: true,
    })) as unknown as ScenarioEntityRow[];
    const key = entityIds.join(',');
    return candidates.find((row) => links.filter((link) => link.scenario_id === row.id).map((link) => link.entity_id).join(',') === key);
  }

  /**
   * Moves the request along its states with the store's conditional changes until it reaches the
   * fixture's state (the run decides between completed and failed); returns the state it ends in.
   */
  private async advance(id: number, fixture: ScenarioFixture): Promise<ScenarioState> {
    const { scenarios } = this.targets.strategy;
    const target = fixture.state;
    const decision = () => ({ deciderId: this.user(fixture.decided_by!), now: new Date(fixture.decided_at!) });
    for (;;) {
      const state = (await scenarios.byId(id))!.state;
      if (state === target) return state;
      if (state === 'pending' && target === 'rejected') await scenarios.reject(id, fixture.rejection_reason ?? null, decision());
      else if (state === 'pending') await scenarios.approve(id, decision());
      else if (state === 'approved' && target === 'running') await scenarios.start(id);
      else if ((state === 'approved' || state === 'running') && (target === 'completed' || target === 'failed')) {
        // The run's job, done here: it reads the seeded metrics and stores the projection or the reason.
        await this.targets.strategy.run(id, { id: `seed-${id}`, attempt: 1, lastAttempt: true });
      } else return state; // a state the fixture's cannot follow
      if ((await scenarios.byId(id))!.state === state) return state; // no progress (changed meanwhile)
    }
  }

  // --- SMS ----------------------------------------------------------------------------------------

  private async seedSms(): Promise<void> {
    const { credentials, campaigns, replies } = this.fixtures.sms;
    const box = this.options.secretsKey ? SecretBox.fromKey(this.options.secretsKey) : undefined;
    const { Credential, Campaign, Message, Reply } = this.targets.sms.models;
    const skipped = (kind: SeedKind, name: string, note: string) => this.add({ kind, name, outcome: 'skipped', note });
    for (const fixture of credentials) {
      const existing = (await Credential.findOne({ where: { account_id: fixture.account_id, sender_id: fixture.sender_id }, raw: true })) as { id: number } | null;
      if (existing) {
        this.credentials.set(fixture.id, existing.id);
        this.existed('sms credential', fixture.name, existing.id);
        continue;
      }
      if (!box) {
        skipped('sms credential', fixture.name, 'no SECRETS_KEY to seal its auth token');
        continue;
      }
      const id = await insertRow(Credential, fixture.id, {
        name: fixture.name,
        provider: 'provider',
        account_id: fixture.account_id,
        sender_id: fixture.sender_id,
        // The demo account is no real provider account: its token is random, and sending with it is refused.
        secret_sealed: box.seal(randomBytes(16).toString('hex')),
        entity_id: fixture.entity_id === undefined ? null : this.mapped(this.entities, fixture.entity_id, 'entity'),
        footer: fixture.footer ?? null,
        created_by: this.user(fixture.created_by),
        created_at: new Date(fixture.created_at),
      });
      this.credentials.set(fixture.id, id);
      this.created('sms credential', fixture.name, id, fixture.id);
    }
    for (const fixture of campaigns) {
      const credentialId = this.credentials.get(fixture.credencial);
      if (credentialId === undefined) {
        skipped('sms campaign', fixture.titulo, 'its credential was not seeded');
        continue;
      }
      const body = fixture.mensagem.mensagem;
      const existing = (await Campaign.findOne({ where: { credential_id: credentialId, titulo: fixture.titulo, body }, raw: true })) as { id: number } | null;
      if (existing) {
        this.existed('sms campaign', fixture.titulo, existing.id);
        continue;
      }
      // Counted as sendSmsCampaign counts them; the messages are stored as the receipts left them, and no job is queued.
      // The demo campaigns go to pasted lists (none goes to contacts).
      const recipients = readRecipients(fixture.mensagem.recipient_list_str ?? '');
      const segmented = new SegmentedMessage(body, 'auto');
      const createdAt = new Date(fixture.created_at);
      // The campaign belongs to its credential's entity, as createCampaign records it (its team lists it).
      const credential = (await Credential.findByPk(credentialId, { attributes: ['entity_id'], raw: true })) as { entity_id: number | null } | null;
      const id = await this.targets.sequelize.transaction(async (transaction) => {
        const campaignId = await insertRow(
          Campaign,
          fixture.id,
          {
            titulo: fixture.titulo,
            credential_id: credentialId,
            body,
            encoding: segmented.encodingName === 'UCS-2' ? 'UCS-2' : 'GSM-7',
            segments: segmented.segmentsCount,
            accepted: recipients.numbers.length,
            rejected: recipients.repeated,
            opted_out_skipped: 0,
            created_by: this.user(fixture.created_by),
            created_at: createdAt,
            // Counted as queued already, so that the sweep for campaigns left without jobs sends nothing.
            jobs_enqueued_at: createdAt,
            entity_id: credential?.entity_id ?? null,
            state: 'sending',
          },
          transaction,
        );
        await Message.bulkCreate(
          fixture.messages.map((message) => ({ campaign_id: campaignId, recipient: message.recipient, status: message.status, provider_sid: message.provider_sid, updated_at: createdAt })),
          { transaction },
        );
        return campaignId;
      });
      this.created('sms campaign', fixture.titulo, id, fixture.id, `${fixture.messages.length} messages (${[...new Set(fixture.messages.map((message) => message.status))].join(', ')}); nothing sent`);
    }
    for (const fixture of replies) {
      const name = `${fixture.body} from ${fixture.from}`;
      const existing = (await Reply.findOne({ where: { message_sid: fixture.message_sid }, raw: true })) as { id: number } | null;
      if (existing) {
        this.existed('sms reply', name, existing.id);
        continue;
      }
      // A reply to a campaign of the story: only with the credential it answers.
      const credential = credentials.find((candidate) => candidate.account_id === fixture.account_id && candidate.sender_id === fixture.to);
      if (!credential || !this.credentials.has(credential.id)) {
        skipped('sms reply', name, 'the credential it answers was not seeded');
        continue;
      }
      // As the provider's webhook would deliver it: the reply is recorded, and an opt-out keyword opts the number out of the credential's entity.
      const received = await this.targets.sms.receiveReply({ sid: fixture.message_sid, accountId: fixture.account_id, from: fixture.from, to: fixture.to, body: fixture.body });
      const row = (await Reply.findOne({ where: { message_sid: fixture.message_sid }, raw: true })) as { id: number } | null;
      this.add({ kind: 'sms reply', name, outcome: 'created', ...(row ? { id: row.id } : {}), ...(received.opted_out ? { note: `${received.from} opted out of campaigns` } : {}) });
    }
    if (!box && this.report.entries.some((entry) => entry.outcome === 'skipped' && entry.kind.startsWith('sms'))) {
      this.report.notes.push('SECRETS_KEY is not set, so the SMS credential (its auth token is sealed with it) was skipped, and its campaign and reply with it.');
    }
  }

  // --- Research bookmarks and news sources -------------------------------------------------------

  private async seedResearch(): Promise<void> {
    const { Bookmark, NewsSource } = researchModels(this.targets.sequelize);
    for (const fixture of this.fixtures.bookmarks) {
      const address = webAddress(fixture.url);
      const userId = this.user(fixture.user);
      const existing = (await Bookmark.findOne({ where: { user_id: userId, url_key: address.key }, raw: true })) as ResearchBookmarkRow | null;
      if (existing) {
        this.existed('research bookmark', fixture.title, existing.id);
        continue;
      }
      const values = { user_id: userId, title: fixture.title, url: address.href, url_key: address.key, source: fixture.source, notes: fixture.notes, created_at: new Date(fixture.created_at) };
      this.created('research bookmark', fixture.title, await insertRow(Bookmark, fixture.id, values), fixture.id, `saved by ${fixture.user}`);
    }
    for (const fixture of this.fixtures.newsSources) {
      const address = webAddress(fixture.url);
      const existing = (await NewsSource.findOne({ where: { url_key: address.key }, raw: true })) as NewsSourceRow | null;
      if (existing) {
        this.existed('news source', fixture.name, existing.id);
        continue;
      }
      const values = {
        name: fixture.name,
        url: address.normalised,
        url_key: address.key,
        status: fixture.status,
        requested_by: this.user(fixture.requested_by),
        requested_at: new Date(fixture.requested_at),
        updated_at: new Date(fixture.updated_at),
      };
      this.created('news source', fixture.name, await insertRow(NewsSource, fixture.id, values), fixture.id, fixture.status);
    }
  }
}

// --- Writing rows -----------------------------------------------------------------------------------

/**
 * Inserts a row with the id `preferredId` when no row has it, otherwise with the next id of the table;
 * returns the id given. On PostgreSQL the table's sequence is first moved past an id chosen here, so
 * that later inserts do not pick it (SQLite's AUTOINCREMENT follows explicit ids by itself).
 */
async function insertRow<Row extends object>(model: Static<Row>, preferredId: number | undefined, values: Partial<Row>, transaction?: Transaction): Promise<number> {
  const free = preferredId !== undefined && !(await model.findByPk(preferredId, { attributes: ['id'], transaction }));
  if (free) await reserveId(model as unknown as ModelStatic<Model>, preferredId, transaction);
  const untyped = model as unknown as ModelStatic<Model>;
  const row = await untyped.create({ ...values, ...(free ? { id: preferredId } : {}) }, { transaction });
  return Number(row.get('id'));
}

async function reserveId(model: ModelStatic<Model>, id: number, transaction?: Transaction): Promise<void> {
  const sequelize = model.sequelize!;
  if (sequelize.getDialect() !== 'postgres') return;
  const [found] = await sequelize.query<{ sequence: string | null }>("SELECT pg_get_serial_sequence(:table, 'id') AS sequence", {
    replacements: { table: model.tableName },
    type: QueryTypes.SELECT,
    transaction,
  });
  if (!found?.sequence) return;
  // The name comes from the catalog, quoted as needed.
  const [state] = await sequelize.query<{ last_value: string | number; is_called: boolean }>(`SELECT last_value, is_called FROM ${found.sequence}`, {
    type: QueryTypes.SELECT,
    transaction,
  });
  const next = state!.is_called ? Number(state!.last_value) + 1 : Number(state!.last_value);
  if (next <= id) await sequelize.query('SELECT setval(:sequence, :id, true)', { replacements: { sequence: found.sequence, id }, transaction });
}

/** The scenario tables' models, as createStrategy defined them on this database. */
function scenarioModels(sequelize: Sequelize): { Scenario: Static<ScenarioRow>; ScenarioEntity: Static<ScenarioEntityRow> } {
  if (!sequelize.isDefined('ScenarioRequest') || !sequelize.isDefined('ScenarioEntity')) {
    const { Scenario, ScenarioEntity } = defineScenarioModels(sequelize);
    return { Scenario, ScenarioEntity };
  }
  return { Scenario: sequelize.model('ScenarioRequest') as Static<ScenarioRow>, ScenarioEntity: sequelize.model('ScenarioEntity') as Static<ScenarioEntityRow> };
}

/** The bookmark and news-source tables' models (their domains keep them to themselves). */
function researchModels(sequelize: Sequelize): { Bookmark: Static<ResearchBookmarkRow>; NewsSource: Static<NewsSourceRow> } {
  if (!sequelize.isDefined('ResearchBookmark')) createResearchBookmarks(sequelize);
  if (!sequelize.isDefined('NewsSource')) createNewsSources(sequelize, Number.POSITIVE_INFINITY); // only its model is used here
  return { Bookmark: sequelize.model('ResearchBookmark') as Static<ResearchBookmarkRow>, NewsSource: sequelize.model('NewsSource') as Static<NewsSourceRow> };
}

// --- The data as written ------------------------------------------------------------------------------

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

function webAddress(url: string) {
  const checked = checkWebAddress(url);
  if (!checked.ok) throw new SeedError(`${url}: ${checked.problem.message}`);
  return checked.address;
}

/** What two addresses are compared by (the address itself when it is not one). */
function addressKey(url: string): string {
  const checked = checkWebAddress(url);
  return checked.ok ? checked.address.key : url;
}

function nameOfEntity(fixtures: DemoFixtures, id: number): string {
  return fixtures.entities.find((entity) => entity.id === id)?.record.nome ?? `entity ${id}`;
}

// --- Checking the fixtures -------------------------------------------------------------------------------

const MAY_EDIT: ReadonlySet<TeamRole> = new Set(['owner', 'admin', 'operator']);
const MAY_DECIDE: ReadonlySet<TeamRole> = new Set(['owner', 'admin']);
const MESSAGE_STATUSES: ReadonlySet<string> = new Set(['queued', 'accepted', 'scheduled', 'sending', 'sent', 'delivered', 'undelivered', 'failed', 'canceled', 'read']);

/**
 * Everything wrong with the fixtures, one line per problem (none: they can be written). Each record is
 * held to the contract's schema of the body that would create it and to the rules the handlers apply.
 */
export function checkDemoFixtures(fixtures: DemoFixtures, municipalities: MunicipalityCatalog, now = new Date()): string[] {
  const problems: string[] = [];
  const schemas = new ContractSchemas(loadContract());
  const compiled = new Map<string, ReturnType<ContractSchemas['component']>>();
  const conforms = (schema: string, value: unknown, what: string) => {
    const validate = compiled.get(schema) ?? schemas.component(schema);
    compiled.set(schema, validate);
    if (!validate(value)) {
      for (const error of validate.errors ?? []) problems.push(`${what}: ${error.instancePath || '(body)'} ${error.message} (${schema})`);
    }
  };
  const details = (what: string, found: ErrorDetail[]) => {
    for (const detail of found) problems.push(`${what}: ${detail.field ?? ''} ${detail.message}`);
  };
  const moment = (what: string, value: string | undefined) => {
    if (value === undefined) return;
    const time = Date.parse(value);
    if (Number.isNaN(time)) problems.push(`${what}: ${value} is not a moment`);
    else if (time > now.getTime()) problems.push(`${what}: ${value} is in the future`);
  };
  const unique = <T>(items: T[], key: (item: T) => unknown, what: string) => {
    const seen = new Set<unknown>();
    for (const item of items) {
      const value = key(item);
      if (seen.has(value)) problems.push(`${what} ${String(value)} appears twice`);
      seen.add(value);
    }
  };
  problems.push(...checkCourtFixture(fixtures.elections, municipalities));

  // Users.
  const users = new Map(fixtures.users.map((user) => [user.username, user]));
  unique(fixtures.users, (user) => user.id, 'user id');
  unique(fixtures.users, (user) => usernameKey(user.username), 'username');
  unique(fixtures.users, (user) => normaliseEmail(user.email), 'e-mail');
  for (const user of fixtures.users) {
    if (!USERNAME_PATTERN.test(user.username)) problems.push(`user ${user.username}: the username breaks ${USERNAME_PATTERN}`);
    conforms('User', { ...user, is_active: true, last_login: null }, `user ${user.username}`);
    moment(`user ${user.username}`, user.date_joined);
  }
  const knownUser = (username: string, what: string) => {
    if (!users.has(username)) problems.push(`${what}: ${username} is not a demo user`);
    return users.has(username);
  };

  // Entities and their teams: the caller's role decides what each person did.
  const entities = new Map(fixtures.entities.map((entity) => [entity.id, entity]));
  unique(fixtures.entities, (entity) => entity.id, 'entity id');
  unique(fixtures.entities, (entity) => `${entity.tp} ${entity.record.nome}`, 'entity');
  for (const entity of fixtures.entities) {
    const what = `entity ${entity.id} (${entity.record.nome})`;
    const record = withCurrentAge(entity.record, now);
    conforms('CandidateEntity', record, what);
    details(what, checkCandidate(record, municipalities, now));
    if (entity.team.filter((member) => member.role === 'owner').length !== 1) problems.push(`${what}: the team must have exactly one owner`);
    unique(entity.team, (member) => member.user, `${what}: team member`);
    for (const member of entity.team) {
      knownUser(member.user, `${what} team`);
      conforms('TeamRole', member.role, `${what} team`);
      moment(`${what} team`, member.added_at);
    }
    moment(what, entity.created_at);
    moment(what, entity.updated_at);
  }
  const roleOf = (username: string, entityId: number): TeamRole | undefined =>
    entities.get(entityId)?.team.find((member) => member.user === username)?.role ?? (users.get(username)?.is_admin ? 'admin' : undefined);
  const may = (username: string, entityId: number, allowed: ReadonlySet<TeamRole>) => {
    const role = roleOf(username, entityId);
    return role !== undefined && (allowed.has(role) || (users.get(username)?.is_admin === true && allowed.has('admin')));
  };
  const knownEntity = (id: number, what: string) => {
    if (!entities.has(id)) problems.push(`${what}: entity ${id} is not a demo entity`);
    return entities.has(id);
  };

  unique(fixtures.guardianship, (link) => `${link.tutor_id}>${link.ward_id}`, 'guardianship link');
  for (const link of fixtures.guardianship) {
    const what = `guardianship link ${link.id}`;
    knownEntity(link.tutor_id, what);
    knownEntity(link.ward_id, what);
    if (link.tutor_id === link.ward_id) problems.push(`${what}: an entity cannot watch itself`);
    // As manageGuardianship checks it: a link stands only while its creator could still create it.
    if (knownUser(link.created_by, what) && (!may(link.created_by, link.tutor_id, MAY_EDIT) || roleOf(link.created_by, link.ward_id) === undefined)) {
      problems.push(`${what}: ${link.created_by} may not make entity ${link.tutor_id} watch entity ${link.ward_id}`);
    }
    moment(what, link.created_at);
  }

  // Alert rules as addMonitorAlertRule judges them, added by someone who may change the monitor.
  const checkAlertRules = (monitor: DemoFixtures['monitors'][number], networks: ReadonlySet<string>, what: string) => {
    const rules = monitor.alert_rules ?? [];
    if (rules.length > MAX_RULES_PER_MONITOR) problems.push(`${what}: more than ${MAX_RULES_PER_MONITOR} alert rules`);
    for (const [index, rule] of rules.entries()) {
      const where = `${what} alert rule ${index + 1}`;
      conforms('NewMonitorAlertRule', { monitor_id: monitor.id, kind: rule.kind, network: rule.network ?? null, threshold: rule.threshold }, where);
      if (!thresholdFits(rule.kind, rule.threshold)) problems.push(`${where}: threshold ${rule.threshold} does not fit ${rule.kind}`);
      if (rule.network != null && !networks.has(rule.network)) problems.push(`${where}: ${rule.network} is not a network of the monitor`);
      if (knownUser(rule.created_by, where) && !may(rule.created_by, monitor.entity_id, MAY_EDIT)) problems.push(`${where}: ${rule.created_by} may not change monitors of entity ${monitor.entity_id}`);
    }
  };

  // Monitors and their metrics.
  const monitors = new Map(fixtures.monitors.map((monitor) => [monitor.id, monitor]));
  unique(fixtures.monitors, (monitor) => monitor.id, 'monitor id');
  unique(fixtures.monitors, (monitor) => `${monitor.entity_id} ${monitor.name.toLowerCase()}`, 'monitor name');
  for (const monitor of fixtures.monitors) {
    const what = `monitor ${monitor.id} (${monitor.name})`;
    conforms('NewSocialMonitor', { entity_id: monitor.entity_id, name: monitor.name, keywords: monitor.keywords, profiles: monitor.profiles }, what);
    const found: ErrorDetail[] = [];
    const profiles = checkProfiles(monitor.profiles, found);
    checkKeywords(monitor.keywords, found);
    details(what, found);
    if (knownEntity(monitor.entity_id, what) && knownUser(monitor.created_by, what) && !may(monitor.created_by, monitor.entity_id, MAY_EDIT)) {
      problems.push(`${what}: ${monitor.created_by} may not create monitors of entity ${monitor.entity_id}`);
    }
    moment(what, monitor.created_at);
    const snapshots = dailySnapshots(monitor.metrics, now);
    if (snapshots.length === 0) problems.push(`${what}: no metrics`);
    snapshots.forEach((snapshot, index) => conforms('MetricSnapshot', snapshot, `${what} metrics day ${index + 1}`));
    const snapshotProblems: ErrorDetail[] = [];
    const networks = new Set(profiles.map((profile) => profile.nm_rede));
    checkSnapshots(snapshots, networks, now, snapshotProblems);
    details(`${what} metrics`, snapshotProblems);
    checkAlertRules(monitor, networks, what);
  }

  // Scenario requests: asked by someone who may ask, decided by someone who may decide.
  unique(fixtures.scenarios, (scenario) => scenario.id, 'scenario request id');
  unique(fixtures.scenarios, (scenario) => `${scenario.monitor_id} ${scenario.entity_ids.join(',')} ${scenario.horizon_days} ${scenario.requested_by}`, 'scenario request');
  for (const scenario of fixtures.scenarios) {
    const what = `scenario request ${scenario.id}`;
    conforms('NewScenarioRequest', { monitor_id: scenario.monitor_id, entity_ids: scenario.entity_ids, horizon_days: scenario.horizon_days }, what);
    conforms('ScenarioState', scenario.state, what);
    const monitor = monitors.get(scenario.monitor_id);
    if (!monitor) {
      problems.push(`${what}: monitor ${scenario.monitor_id} is not a demo monitor`);
      continue;
    }
    if (knownUser(scenario.requested_by, what) && !may(scenario.requested_by, monitor.entity_id, MAY_EDIT)) {
      problems.push(`${what}: ${scenario.requested_by} may not ask for scenarios on monitor ${monitor.id}`);
    }
    for (const entityId of scenario.entity_ids) {
      if (!knownEntity(entityId, what)) continue;
      const watched = fixtures.guardianship.some((link) => link.tutor_id === monitor.entity_id && link.ward_id === entityId);
      if (!watched && roleOf(scenario.requested_by, entityId) === undefined) problems.push(`${what}: ${scenario.requested_by} may not compare entity ${entityId}`);
    }
    moment(what, scenario.created_at);
    const decided = scenario.state !== 'pending';
    if (decided !== (scenario.decided_by !== undefined && scenario.decided_at !== undefined)) {
      problems.push(`${what}: decided_by and decided_at go with every state but pending`);
    } else if (scenario.decided_by !== undefined && knownUser(scenario.decided_by, what) && !may(scenario.decided_by, monitor.entity_id, MAY_DECIDE)) {
      problems.push(`${what}: ${scenario.decided_by} may not approve or reject scenarios on monitor ${monitor.id}`);
    }
    moment(what, scenario.decided_at);
    if (scenario.decided_at !== undefined && scenario.decided_at < scenario.created_at) problems.push(`${what}: decided before it was asked`);
    if (scenario.rejection_reason !== undefined) {
      if (scenario.state !== 'rejected') problems.push(`${what}: only a rejected request has a rejection_reason`);
      conforms('ScenarioRejectionRequest', { selectedMonitorId: scenario.monitor_id, scenarios_list: [scenario.id], reason: scenario.rejection_reason }, what);
    }
  }

  // SMS: credentials added by admins, campaigns sent by someone who may use the credential.
  const { credentials, campaigns, replies } = fixtures.sms;
  const credentialById = new Map(credentials.map((credential) => [credential.id, credential]));
  unique(credentials, (credential) => credential.id, 'sms credential id');
  unique(credentials, (credential) => `${credential.account_id} ${credential.sender_id}`, 'sms credential');
  for (const credential of credentials) {
    const what = `sms credential ${credential.id}`;
    const { id: _, created_by: createdBy, created_at: createdAt, ...body } = credential;
    conforms('NewSmsCredential', { ...body, secret: '0'.repeat(32) }, what);
    if (normalisedPhone(credential.sender_id) !== credential.sender_id) problems.push(`${what}: sender_id must be a phone number in E.164`);
    if (footerProblem(normalisedFooter(credential.footer))) problems.push(`${what}: its footer must name an opt-out keyword (SAIR, PARAR...)`);
    if (credential.entity_id !== undefined) knownEntity(credential.entity_id, what);
    if (knownUser(createdBy, what) && !users.get(createdBy)!.is_admin) problems.push(`${what}: only admins add credentials, and ${createdBy} is not one`);
    moment(what, createdAt);
  }
  unique(campaigns, (campaign) => campaign.id, 'sms campaign id');
  unique(campaigns.flatMap((campaign) => campaign.messages), (message) => message.provider_sid, 'message provider_sid');
  for (const campaign of campaigns) {
    const what = `sms campaign ${campaign.id}`;
    conforms('SmsCampaignRequest', { titulo: campaign.titulo, credencial: campaign.credencial, mensagem: campaign.mensagem }, what);
    const credential = credentialById.get(campaign.credencial);
    if (!credential) problems.push(`${what}: credential ${campaign.credencial} is not a demo credential`);
    else if (knownUser(campaign.created_by, what)) {
      const allowed = users.get(campaign.created_by)!.is_admin || (credential.entity_id !== undefined && may(campaign.created_by, credential.entity_id, MAY_EDIT));
      if (!allowed) problems.push(`${what}: ${campaign.created_by} may not send with credential ${credential.id}`);
    }
    const recipients = readRecipients(campaign.mensagem.recipient_list_str ?? '');
    for (const { entry } of recipients.invalid) problems.push(`${what}: ${entry} is not a phone number`);
    const messages = campaign.messages.map((message) => message.recipient);
    if (messages.join(',') !== recipients.numbers.join(',')) problems.push(`${what}: the messages must go to ${recipients.numbers.join(', ')}, in this order`);
    for (const message of campaign.messages) if (!MESSAGE_STATUSES.has(message.status)) problems.push(`${what}: ${message.status} is not a message status`);
    moment(what, campaign.created_at);
  }
  for (const reply of replies) {
    const what = `sms reply ${reply.message_sid}`;
    if (!normalisedPhone(reply.from)) problems.push(`${what}: ${reply.from} is not a phone number`);
    if (!credentials.some((credential) => credential.account_id === reply.account_id && credential.sender_id === reply.to)) {
      problems.push(`${what}: it must answer a demo credential's number`);
    }
  }

  // Research bookmarks and news sources.
  unique(fixtures.bookmarks, (bookmark) => bookmark.id, 'research bookmark id');
  for (const bookmark of fixtures.bookmarks) {
    const what = `research bookmark ${bookmark.id}`;
    knownUser(bookmark.user, what);
    conforms('NewResearchBookmark', { title: bookmark.title, url: bookmark.url, source: bookmark.source, notes: bookmark.notes }, what);
    const address = checkWebAddress(bookmark.url);
    if (!address.ok) problems.push(`${what}: ${address.problem.message}`);
    moment(what, bookmark.created_at);
  }
  unique(fixtures.bookmarks, (bookmark) => `${bookmark.user} ${addressKey(bookmark.url)}`, 'research bookmark');
  unique(fixtures.newsSources, (source) => source.id, 'news source id');
  unique(fixtures.newsSources, (source) => addressKey(source.url), 'news source');
  for (const source of fixtures.newsSources) {
    const what = `news source ${source.id}`;
    knownUser(source.requested_by, what);
    conforms('NewsSourceRequest', { name: source.name, url: source.url }, what);
    const address = checkWebAddress(source.url);
    if (!address.ok) problems.push(`${what}: ${address.problem.message}`);
    if (!['requested', 'monitoring', 'rejected'].includes(source.status)) problems.push(`${what}: ${source.status} is not a news-source status`);
    moment(what, source.requested_at);
    moment(what, source.updated_at);
  }
  return problems;
}

// --- The report, for people ------------------------------------------------------------------------------

/** The report as lines of text: what was created, what existed, what was skipped, then the passwords. */
export function formatSeedReport(report: SeedReport): string {
  const lines: string[] = [];
  for (const outcome of ['created', 'existed', 'skipped'] as const) {
    const entries = report.entries.filter((entry) => entry.outcome === outcome);
    if (entries.length === 0) continue;
    lines.push(`${outcome === 'created' ? 'Created' : outcome === 'existed' ? 'Already there' : 'Skipped'} (${entries.length}):`);
    for (const entry of entries) {
      const id = entry.id === undefined ? '' : ` #${entry.id}`;
      const fixtureId = entry.fixture_id === undefined ? '' : ` (the fixture's id ${entry.fixture_id} was taken)`;
      lines.push(`  ${entry.kind}${id}: ${entry.name}${fixtureId}${entry.note ? ` - ${entry.note}` : ''}`);
    }
  }
  for (const note of report.notes) lines.push(`Note: ${note}`);
  return lines.join('\n');
}

/** The passwords of the users created, to print once. */
export function formatSeedPasswords(report: SeedReport): string {
  if (report.passwords.length === 0) return '';
  const width = Math.max(...report.passwords.map(({ username }) => username.length));
  return [
    'The demo users were created with these passwords, shown only this once (they are stored as hashes):',
    '',
    ...report.passwords.map(({ username, password }) => `    ${username.padEnd(width)}  ${password}`),
    '',
  ].join('\n');
}
