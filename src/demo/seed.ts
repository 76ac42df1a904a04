/**
 * `db seed`: writes the demo data of `fixtures/` (the records the spec's examples show) into a database,
 * so that the real server tells the same story as the mock.
 *
 * - Everything is checked before anything is written (`fixture-checks.ts`): each record against the
 *   contract's schema of the body that would create it, and against the domain's own rules.
 * - Records are found by what identifies them (a username, an entity's type and name, a monitor's name
 *   in its entity...), and only missing ones are written: running the seed again changes nothing, and
 *   an interrupted seed completes when run again. The report says what was created and what existed
 *   (`seed-report.ts`).
 * - Ids: a record gets the id the spec's examples show (Maria da Silva Santos is entity 12) when that id
 *   is free, otherwise the next one (`insert-rows.ts`); references between fixtures follow the ids actually given.
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
import { Op, type Sequelize, type Transaction } from 'sequelize';
import { SegmentedMessage } from 'sms-segments-calculator';
import type { Accounts } from '../accounts/index.js';
import type { UserRow } from '../accounts/models.js';
import { passwordProblem } from '../accounts/password-policy.js';
import { hashPassword } from '../accounts/passwords.js';
import { newReadablePassword, newSecret, secretHash } from '../accounts/secrets.js';
import { normaliseEmail, usernameKey } from '../accounts/users.js';
import { writeCourtFixture } from '../elections/tse/demo-data.js';
import type { Entities } from '../entities/index.js';
import { DEFAULT_INVITATION_SETTINGS } from '../entities/invitations.js';
import type { EntityRow, TeamRole } from '../entities/models.js';
import type { Logger } from '../logger.js';
import { readRecipients } from '@palanque/rules/recipients';
import type { Sms } from '../messaging/sms.js';
import type { Monitors } from '../monitors/index.js';
import { MAX_RULES_PER_MONITOR } from '../monitors/alerts.js';
import { checkKeywords, checkProfiles } from '../monitors/rules.js';
import type { MunicipalityCatalog } from '../municipalities/catalog.js';
import type { NewsSourceRow } from '../news/sources.js';
import type { ResearchBookmarkRow } from '../research/bookmarks.js';
import { SecretBox } from '../security/secret-box.js';
import type { Strategy } from '../strategy/index.js';
import type { ScenarioEntityRow, ScenarioRow, ScenarioState } from '../strategy/models.js';
import { checkWebAddress } from '../web-address.js';
import { checkDemoFixtures } from './fixture-checks.js';
import { dailySnapshots, loadDemoFixtures, withCurrentAge, type DemoFixtures, type InvitationFixture, type ScenarioFixture } from './fixtures.js';
import { insertRow, researchModels, scenarioModels } from './insert-rows.js';
import type { SeedEntry, SeedKind, SeedReport } from './seed-report.js';

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
  /**
   * The auth token the demo SMS credentials are given. Unset, a random one nobody knows (a real
   * provider refuses it); the sandbox gives its provider simulator the one it sets, so a recipient of the
   * demo campaign can answer on a fresh sandbox.
   */
  smsAuthToken?: string;
  /** The moment of the seed: the month of metrics ends on its hour. */
  now?: Date;
  /** The demo data (the project's `fixtures/` by default). */
  fixtures?: DemoFixtures;
  logger?: Logger;
}

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
        // The demo account is no real provider account: its token is random (or the sandbox's simulator's), and a real provider refuses it.
        secret_sealed: box.seal(this.options.smsAuthToken ?? randomBytes(16).toString('hex')),
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

// --- Helpers ------------------------------------------------------------------------------------------

function webAddress(url: string) {
  const checked = checkWebAddress(url);
  if (!checked.ok) throw new SeedError(`${url}: ${checked.problem.message}`);
  return checked.address;
}

function nameOfEntity(fixtures: DemoFixtures, id: number): string {
  return fixtures.entities.find((entity) => entity.id === id)?.record.nome ?? `entity ${id}`;
}
