/**
 * The events that notify one person (issue 25; src/notifications/announcements.ts), each driven end to
 * end through the real app with a real job queue and read back through listNotifications, as the person
 * who should hear of it and as the team members who should not:
 * - an SMS campaign completed by the provider's receipts: who sent it (`campaign_completed`), once;
 * - a person writing, by SMS or messenger, in a conversation assigned to a member: that member
 *   (`conversation_reply`); in an unassigned (or unassigned again) conversation, or with an opt-out
 *   keyword, nobody;
 * - a scenario request's run ending, completed or failed: who asked for it (`scenario_request_finished`),
 *   not who approved it;
 * - an invitation to a team: the account with the invited address (`invitation_received`); an address
 *   with no account: nobody, and the invitation stands.
 * Monitor alerts, reading and marking notifications, and push are in notifications.test.ts.
 * Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { randomBytes } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmsProviderSimulator } from '../src/simulators/sms-provider.js';
import { SocialnetSimulator } from '../src/simulators/socialnet.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { defaultAppConfig, startTestApp, type TestApp } from './helpers/app.js';
import { request } from './helpers/http.js';
import { freshBody, recipientSource } from './helpers/sms.js';
import { invite } from './helpers/teams.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const NOTIFICATIONS = '/api/notifications/';
const ACCOUNT = `AC${'3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f'}`;
const SMS_TOKEN = '8f7e6d5c4b3a29180f7e6d5c4b3a2918';
const APP_SECRET = 'notification-events-app-secret-0123456789';
const PAGE_ID = '104857600000025';
const PAGE_TOKEN = 'EAAGnotificationEventsPageToken';
/** Long enough for a background job, short enough to fail quickly. */
const WAIT = { timeout: 20_000, interval: 100 };

const provider = new SmsProviderSimulator();
const network = new SocialnetSimulator(APP_SECRET);
const voters = recipientSource('+5521988');
let senders = 0;
/** A sender number of its own for each credential (a reply finds its credential by the number it was sent to). */
const newSender = () => `+55119400310${String((senders += 1)).padStart(2, '0')}`;

let app: TestApp;
let platformAdmin: TestUser;

beforeAll(async () => {
  await Promise.all([provider.start(), network.start()]);
  provider.addAccount(ACCOUNT, SMS_TOKEN);
  network.connectPage(PAGE_ID, PAGE_TOKEN);
  app = await startTestApp({
    withJobs: true,
    selfPublicUrl: true,
    sms: { providerUrl: provider.url },
    config: { socialnet: { ...defaultAppConfig.socialnet, appSecret: APP_SECRET } },
    socialnetGraphUrl: network.url,
  });
  platformAdmin = await createAdmin(app);
});

afterAll(async () => {
  await app?.close();
  await Promise.all([provider.stop(), network.stop()]);
});

const call = (method: 'GET' | 'POST' | 'PUT', path: string, caller: TestUser, body?: unknown) => request(app.baseUrl, method, path, caller.headers, body);

async function ok(method: 'GET' | 'POST' | 'PUT', path: string, caller: TestUser, body?: unknown, status = 200): Promise<Json> {
  const result = await call(method, path, caller, body);
  expect(result.status, result.text).toBe(status);
  return result.body.data;
}

// --- Teams ---------------------------------------------------------------------------------------

interface Team {
  entityId: number;
  /** Carlos Pereira, who owns the entity. */
  owner: TestUser;
  operator: TestUser;
  /** A second operator: a member who may be assigned conversations too. */
  colleague: TestUser;
  viewer: TestUser;
}

/** A new entity (`fields` its data besides the name Maria Santos) with its owner, two operators and a viewer. */
async function newTeam(fields: Json = {}): Promise<Team> {
  const owner = await createUser(app, { first_name: 'Carlos', last_name: 'Pereira' });
  const [operator, colleague, viewer] = await Promise.all([createUser(app), createUser(app), createUser(app)]);
  const entityId = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos', ...fields });
  for (const [member, role] of [[operator, 'operator'], [colleague, 'operator'], [viewer, 'viewer']] as const) {
    await app.entities.models.Member.create({ entity_id: entityId, user_id: member.user.id, role, added_at: new Date() });
  }
  return { entityId, owner, operator, colleague, viewer };
}

const everyone = (team: Team) => [team.owner, team.operator, team.colleague, team.viewer];

/** An SMS credential of the team's entity, sending from a number of its own; its number. */
async function addSmsCredential(team: Team): Promise<{ credentialId: number; sender: string }> {
  const sender = newSender();
  const added = await ok('POST', '/api/sms/add_credential/', platformAdmin, { name: 'Campanha', account_id: ACCOUNT, sender_id: sender, secret: SMS_TOKEN, entity_id: team.entityId }, 201);
  // The notices are under test here, not the electoral rules: the platform admin relaxes the new entity to warn.
  await ok('PUT', `/api/sms/compliance/?entity_id=${team.entityId}`, platformAdmin, { mode: 'warn', window: null }, 200);
  return { credentialId: added.id, sender };
}

// --- Notifications -------------------------------------------------------------------------------

/** The user's notifications of `type`, the newest first. */
async function notificationsOf(user: TestUser, type: string): Promise<Json[]> {
  const page = await ok('GET', NOTIFICATIONS, user);
  return page.results.filter((notification: Json) => notification.type === type);
}

/** Waits for the user to have `count` notifications of `type` (made in the background), and returns them. */
async function awaitNotifications(user: TestUser, type: string, count = 1): Promise<Json[]> {
  await expect.poll(async () => (await notificationsOf(user, type)).length, WAIT).toBe(count);
  return notificationsOf(user, type);
}

/** None of `users` has a notification of `type`. */
async function expectNoneFor(type: string, users: TestUser[]): Promise<void> {
  for (const user of users) expect(await notificationsOf(user, type), `${type} of user ${user.user.id}`).toEqual([]);
}

/** How many notifications about this subject exist at all, whoever they are for. */
async function notificationsAbout(kind: string, id: number): Promise<number> {
  const [row] = await app.sequelize.query<{ n: unknown }>('SELECT COUNT(*) AS n FROM notifications WHERE subject_kind = ? AND subject_id = ?', { replacements: [kind, id], type: QueryTypes.SELECT });
  return Number(row!.n);
}

// --- Conversations -------------------------------------------------------------------------------

/** A person's SMS to `sender` (through the provider's signed webhook); answered once the reply is stored and announced. */
async function textFrom(voter: string, sender: string, body: string): Promise<Json> {
  const answer = await provider.sendReply(`${app.baseUrl}/api/webhook/provider_sms/`, { accountSid: ACCOUNT, from: voter, to: sender, body });
  expect(answer.status, await answer.clone().text()).toBe(200);
  return ((await answer.json()) as Json).data;
}

async function conversationWith(team: Team, participant: string): Promise<number> {
  const listed = await ok('GET', `/api/chat/conversations/?entity_id=${team.entityId}`, team.owner);
  const found = listed.results.find((conversation: Json) => conversation.participant === participant);
  expect(found, `a conversation with ${participant}`).toBeDefined();
  return found.id;
}

const assign = (team: Team, conversationId: number, assignee: TestUser | null) =>
  ok('POST', `/api/chat/conversations/${conversationId}/assign/`, team.owner, { assignee_id: assignee?.user.id ?? null });

// --- The events ----------------------------------------------------------------------------------

describe('an SMS campaign that completed', () => {
  it('is told to the member who sent it, once, and to nobody else of the team', async () => {
    const team = await newTeam();
    const { credentialId } = await addSmsCredential(team);
    const titulo = `Convite comício ${randomBytes(2).toString('hex')}`;
    const campaign = await ok('POST', '/api/sms/list_credentials/', team.operator, { titulo, credencial: credentialId, mensagem: { recipient_list_str: voters(2).join('\n'), mensagem: freshBody('Comício sábado') } }, 201);

    // The send jobs hand both messages to the provider; its receipts then settle them.
    const handed = async () => (await app.sms.models.Message.findAll({ where: { campaign_id: campaign.id }, order: [['id', 'ASC']], raw: true })) as unknown as Array<{ provider_sid: string | null }>;
    await expect.poll(async () => (await handed()).every((message) => message.provider_sid !== null), WAIT).toBe(true);
    const [first, second] = (await handed()).map((message) => message.provider_sid!);
    expect((await provider.sendReceipt(first!, 'delivered')).status).toBe(200);
    // One message still open: not completed, nobody told.
    await expectNoneFor('campaign_completed', everyone(team));
    expect((await provider.sendReceipt(second!, 'undelivered')).status).toBe(200);

    const [notice] = await awaitNotifications(team.operator, 'campaign_completed');
    expect(notice).toMatchObject({ type: 'campaign_completed', entity_id: team.entityId, subject: { kind: 'sms_campaign', id: campaign.id }, read_at: null });
    expect(notice.title).toContain(titulo);
    expect(notice.body).toMatch(new RegExp(`\\b${campaign.id}\\b`));
    expect(notice.body).toMatch(/\b2 mensagens\b/);
    expect((await ok('GET', `/api/sms/campaigns/${campaign.id}/`, team.owner)).state).toBe('completed');

    // A later receipt recounts the finished campaign: it does not complete it again.
    expect((await provider.sendReceipt(first!, 'read')).status).toBe(200);
    expect(await notificationsOf(team.operator, 'campaign_completed')).toHaveLength(1);
    await expectNoneFor('campaign_completed', [team.owner, team.colleague, team.viewer]);
    expect(await notificationsAbout('sms_campaign', campaign.id)).toBe(1);
  });
});

describe('a person writing in a conversation', () => {
  it('by SMS, is told to the member the conversation is assigned to, and not for an opt-out', async () => {
    const team = await newTeam();
    const { sender } = await addSmsCredential(team);
    const voter = voters(1)[0]!;
    await textFrom(voter, sender, 'Onde vai ser o comício?');
    const conversationId = await conversationWith(team, voter);
    await assign(team, conversationId, team.operator);

    const text = freshBody('E a que horas?');
    expect(await textFrom(voter, sender, text)).toMatchObject({ opted_out: false });
    const [notice] = await awaitNotifications(team.operator, 'conversation_reply');
    expect(notice).toMatchObject({ type: 'conversation_reply', entity_id: team.entityId, subject: { kind: 'conversation', id: conversationId }, body: text, read_at: null });
    expect(notice.title).toMatch(new RegExp(`\\b${conversationId}\\b`));
    await expectNoneFor('conversation_reply', [team.owner, team.colleague, team.viewer]);

    // SAIR opts the number out; it is no message of the conversation, and tells nobody.
    expect(await textFrom(voter, sender, 'SAIR')).toMatchObject({ opted_out: true });
    expect(await notificationsOf(team.operator, 'conversation_reply')).toHaveLength(1);
    expect(await notificationsAbout('conversation', conversationId)).toBe(1);
  });

  it('by messenger, is told to the member the conversation is assigned to', async () => {
    const team = await newTeam();
    await ok('POST', '/api/chat/messenger/pages/', team.owner, { entity_id: team.entityId, page_id: PAGE_ID, name: 'Maria Santos 13', access_token: PAGE_TOKEN }, 201);
    const person = `6543210987${randomBytes(3).readUIntBE(0, 3).toString().padStart(8, '0')}`;
    const write = async (text: string) => {
      const written = await network.writeToPage(app.baseUrl, { pageId: PAGE_ID, senderId: person, text });
      expect(written.status, written.text).toBe(200);
      expect(written.body.data).toMatchObject({ messages: 1 });
    };
    await write('Qual é o horário da carreata?');
    const conversationId = await conversationWith(team, person);
    await assign(team, conversationId, team.colleague);

    const text = freshBody('Vai passar pela Rua Augusta?');
    await write(text);
    const [notice] = await awaitNotifications(team.colleague, 'conversation_reply');
    expect(notice).toMatchObject({ type: 'conversation_reply', entity_id: team.entityId, subject: { kind: 'conversation', id: conversationId }, body: text });
    expect(notice.title).toMatch(new RegExp(`\\b${conversationId}\\b`));
    await expectNoneFor('conversation_reply', [team.owner, team.operator, team.viewer]);
  });

  it('unassigned, or unassigned again, is told to nobody', async () => {
    const team = await newTeam();
    const { sender } = await addSmsCredential(team);
    const voter = voters(1)[0]!;
    // The webhook answers once the reply is stored and its listeners ran: nothing is still to come.
    await textFrom(voter, sender, 'Alguém pode me ajudar?');
    const conversationId = await conversationWith(team, voter);
    await textFrom(voter, sender, freshBody('Ainda estou esperando.'));
    await assign(team, conversationId, team.operator);
    await assign(team, conversationId, null);
    await textFrom(voter, sender, freshBody('Olá?'));

    const thread = await ok('GET', `/api/chat/conversations/${conversationId}/messages/`, team.owner);
    expect(thread.results).toHaveLength(3);
    await expectNoneFor('conversation_reply', everyone(team));
    expect(await notificationsAbout('conversation', conversationId)).toBe(0);
  });
});

describe("a scenario request's run that ended", () => {
  it('is told to who asked for it, completed or failed, and not to who approved it', async () => {
    const team = await newTeam({ marketshare: [{ marketshare: '30', tendency: 'up', principal: true }] });
    const { owner, operator } = team;
    const competitorId = await app.entities.store.create('concorrente', owner.user.id, { nome: 'João Pereira', marketshare: [{ marketshare: '25,0%', tendency: 'estável' }] });
    const unmonitoredId = await app.entities.store.create('concorrente', owner.user.id, { nome: 'Sem Monitor' });
    await app.entities.models.Guardianship.create({ tutor_id: team.entityId, ward_id: competitorId, created_by: owner.user.id, created_at: new Date() });
    const monitorOf = async (entityId: number, name: string) =>
      (await ok('POST', '/api/monitor_social/add_monitor/', owner, { entity_id: entityId, name, profiles: [{ nm_rede: 'instagram', username: name.toLowerCase().replace(/\W+/g, '') }] }, 201)).id as number;
    const snapshots = (followers: number) =>
      ['2026-11-10T12:00:00Z', '2026-11-20T12:00:00Z'].map((takenAt) => ({ network: 'instagram', taken_at: takenAt, followers, posts: 10, engagement: 0.05, mentions: 0 }));
    const monitorId = await monitorOf(team.entityId, 'Maria oficial');
    await ok('POST', '/api/monitor_social/import_metrics/', platformAdmin, { monitor_id: monitorId, snapshots: snapshots(1000) });
    await ok('POST', '/api/monitor_social/import_metrics/', platformAdmin, { monitor_id: await monitorOf(competitorId, 'João oficial'), snapshots: snapshots(500) });

    /** `requester` asks for a scenario of `entityIds` and the owner approves it; its id. */
    const askedAndApproved = async (requester: TestUser, entityIds: number[]): Promise<number> => {
      const scenario = await ok('POST', '/api/strategy/add_scenario_request/', requester, { monitor_id: monitorId, entity_ids: entityIds, horizon_days: 10 }, 201);
      const approved = await ok('POST', '/api/strategy/approve_pending_scenario_requests/', owner, { selectedMonitorId: monitorId, scenarios_list: [scenario.id] });
      expect(approved.results[0].outcome).toBe('approved');
      return scenario.id;
    };
    const stateOf = async (id: number) => {
      const listed = await ok('GET', `/api/strategy/get_scenario_requests/?monitor_id=${monitorId}`, owner);
      return listed.results.find((scenario: Json) => scenario.id === id)?.state;
    };

    // The operator asks, the owner approves, the run completes: the operator hears of it.
    const completedId = await askedAndApproved(operator, [team.entityId, competitorId]);
    const [completed] = await awaitNotifications(operator, 'scenario_request_finished');
    expect(await stateOf(completedId)).toBe('completed');
    expect(completed).toMatchObject({ type: 'scenario_request_finished', entity_id: team.entityId, subject: { kind: 'scenario_request', id: completedId }, read_at: null });
    expect(completed.title).toMatch(new RegExp(`\\b${completedId}\\b`));
    expect(completed.title).toMatch(/concluído/);
    expect(completed.body).toMatch(new RegExp(`\\b${completedId}\\b`));
    await expectNoneFor('scenario_request_finished', [owner, team.colleague, team.viewer]);

    // The owner asks for one the run cannot compute (an entity without a monitor): the owner hears it failed.
    const failedId = await askedAndApproved(owner, [team.entityId, unmonitoredId]);
    const [failed] = await awaitNotifications(owner, 'scenario_request_finished');
    expect(await stateOf(failedId)).toBe('failed');
    expect(failed).toMatchObject({ type: 'scenario_request_finished', entity_id: team.entityId, subject: { kind: 'scenario_request', id: failedId } });
    expect(failed.title).toMatch(new RegExp(`\\b${failedId}\\b`));
    expect(failed.title).not.toMatch(/concluído/);
    expect(failed.body).toMatch(/falhou/);
    expect(await notificationsOf(operator, 'scenario_request_finished')).toHaveLength(1);
    await expectNoneFor('scenario_request_finished', [team.colleague, team.viewer]);
  }, 60_000);
});

describe('an invitation to a team', () => {
  it('is told to the account with the invited address, whatever its case, and to nobody of the team', async () => {
    const team = await newTeam();
    const joana = await createUser(app, { first_name: 'Joana', last_name: 'Lima' });
    const sent = await ok('POST', '/api/operators/add_operator/', team.owner, { entity_id: team.entityId, email: joana.user.email.toUpperCase(), role: 'operator' }, 201);

    const [notice] = await awaitNotifications(joana, 'invitation_received');
    expect(notice).toMatchObject({ type: 'invitation_received', entity_id: team.entityId, subject: { kind: 'invitation', id: sent.id }, read_at: null });
    expect(notice.title).toContain('Maria Santos');
    expect(notice.body).toContain('Carlos Pereira');
    expect(notice.body).toContain('operator');
    await expectNoneFor('invitation_received', everyone(team));
    expect(await notificationsAbout('invitation', sent.id)).toBe(1);
  });

  it('to an address with no account is told to nobody, and stands', async () => {
    const team = await newTeam();
    const address = `ninguem.${randomBytes(4).toString('hex')}@exemplo.com.br`;
    const sent = await ok('POST', '/api/operators/add_operator/', team.owner, { entity_id: team.entityId, email: address, role: 'viewer' }, 201);
    expect(sent).toMatchObject({ state: 'pending' });

    // The invitation's announcement runs after the answer; one to an account holder, made after it and
    // heard, tells that the first one's had its turn.
    const pedro = await createUser(app);
    const next = await invite(app.baseUrl, team.owner, pedro, team.entityId, 'viewer');
    expect(next.status, next.text).toBe(201);
    await awaitNotifications(pedro, 'invitation_received');

    expect(await notificationsAbout('invitation', sent.id)).toBe(0);
    await expectNoneFor('invitation_received', everyone(team));
    const pending = await ok('GET', `/api/operators/invitations/?entity_id=${team.entityId}&state=pending`, team.owner);
    expect(pending.results.map((invitation: Json) => invitation.id).sort()).toEqual([sent.id, next.body.data.id].sort());
    expect(app.logs.filter((line) => Number(line.level) >= 50).map((line) => line.msg)).not.toContainEqual(expect.stringMatching(/invitation|notification/));
  });
});
