/**
 * The demo data checked before anything is written: each record against the contract's schema of the
 * body that would create it, and against the domain's own rules (CPF and age, municipalities of the
 * loaded list, web addresses, phone numbers, monitor profiles and snapshots, and the team rules: who may
 * ask for, approve or reject a scenario, who may send with a credential).
 */
import { normaliseEmail, usernameKey } from '../accounts/users.js';
import { USERNAME_PATTERN } from '../accounts/settings.js';
import { checkCourtFixture } from '../elections/tse/demo-data.js';
import type { TeamRole } from '../entities/models.js';
import { checkCandidate } from '../entities/rules.js';
import { ContractSchemas } from '../http/contract-schemas.js';
import { loadContract } from '../http/contract.js';
import type { ErrorDetail } from '../http/errors.js';
import { footerProblem, normalisedFooter } from '../messaging/compliance.js';
import { normalisedPhone, readRecipients } from '@palanque/rules/recipients';
import { MAX_RULES_PER_MONITOR, thresholdFits } from '../monitors/alerts.js';
import { checkKeywords, checkProfiles, checkSnapshots } from '../monitors/rules.js';
import type { MunicipalityCatalog } from '../municipalities/catalog.js';
import { checkWebAddress } from '../web-address.js';
import { dailySnapshots, withCurrentAge, type DemoFixtures } from './fixtures.js';

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

/** What two addresses are compared by (the address itself when it is not one). */
function addressKey(url: string): string {
  const checked = checkWebAddress(url);
  return checked.ok ? checked.address.key : url;
}
