/**
 * `db seed` (src/demo/seed.ts): the demo data of fixtures/ written into a fresh database, then read back
 * through the real app's HTTP API and compared with the spec's examples (what the mock serves), field by
 * field where the values are stable (not moments and ids the database makes up). Then: a second seed
 * changes nothing; without SECRETS_KEY the SMS records are skipped; SEED_PASSWORD is every user's
 * password. Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryTypes } from 'sequelize';
import { brasiliaDay } from '../src/brasilia-time.js';
import { checkDemoFixtures } from '../src/demo/fixture-checks.js';
import { dailySnapshots, loadDemoFixtures, withCurrentAge } from '../src/demo/fixtures.js';
import { formatSeedReport, type SeedReport } from '../src/demo/seed-report.js';
import { seedDemoData } from '../src/demo/seed.js';
import { readRecipients } from '@palanque/rules/recipients';
import { startTestApp, testAccountSettings, TEST_SECRETS_KEY, type TestApp } from './helpers/app.js';
import { request } from './helpers/http.js';
import { loadSpec, resolvePointer, responseExample } from './helpers/spec.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const fixtures = loadDemoFixtures();
const spec = loadSpec();
const example = (name: string): Json => (resolvePointer(spec, `#/components/examples/${name}`) as Json).value;
/** A named example of an operation's request body. */
const requestExample = (path: string, method: string, name: string): Json =>
  (resolvePointer(spec, `#/paths/${path.replace(/\//g, '~1')}/${method}/requestBody/content/application~1json/examples/${name}`) as Json).value;
const pick = (record: Json, keys: string[]) => Object.fromEntries(keys.map((key) => [key, record[key]]));
const omit = (record: Json, keys: string[]) => Object.fromEntries(Object.entries(record).filter(([key]) => !keys.includes(key)));
const today = () => new Date().toISOString().slice(0, 10);
/** Today in Brasília, the day the monitors' daily series ends on. */
const todayInBrasilia = () => brasiliaDay();
/** Moments as the examples write them: the server's `2026-03-15T10:00:00.000Z` is the example's `2026-03-15T10:00:00Z`. */
const withoutMilliseconds = (value: Json): Json => JSON.parse(JSON.stringify(value), (_key, item) => (typeof item === 'string' ? item.replace(/^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.000Z$/, '$1Z') : item));

let app: TestApp;
let report: SeedReport;
const tokens = new Map<string, string>();

const seed = (target: TestApp, options: { secretsKey?: string; password?: string } = {}) =>
  seedDemoData({ ...target, municipalities: target.catalog }, { passwordHashCost: testAccountSettings.passwordHashCost, ...options });

async function logIn(target: TestApp, username: string, password: string): Promise<Json> {
  const result = await request(target.baseUrl, 'POST', '/api/auth/login', {}, { username, password });
  expect(result.status, result.text).toBe(200);
  return withoutMilliseconds(result.body.data);
}

/** A GET as a demo user, answered 200; returns `data`. */
async function get(username: string, path: string): Promise<Json> {
  const result = await request(app.baseUrl, 'GET', path, { Authorization: `Token ${tokens.get(username)}` });
  expect(result.status, result.text).toBe(200);
  return withoutMilliseconds(result.body.data);
}

/** Every row of the tables the seed writes, to compare before and after. */
async function rowCounts(target: TestApp): Promise<Record<string, number>> {
  const tables = [
    'users', 'entities', 'entity_members', 'social_references', 'social_network_entries', 'marketshare_entries', 'guardianship_links',
    'social_monitors', 'monitor_profiles', 'monitor_keywords', 'metric_snapshots', 'monitor_alert_rules', 'notifications', 'scenario_requests', 'scenario_entities',
    'sms_credentials', 'sms_campaigns', 'sms_messages', 'sms_replies', 'sms_opt_outs', 'research_bookmarks', 'news_sources', 'jobs',
    'tse_elections', 'tse_offices', 'tse_codes', 'tse_parties', 'tse_federations', 'tse_coalitions', 'tse_units', 'tse_candidacies',
  ];
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const [row] = await target.sequelize.query<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${table}`, { type: QueryTypes.SELECT });
    counts[table] = Number(row!.n);
  }
  return counts;
}

beforeAll(async () => {
  app = await startTestApp({ withMunicipalities: true });
  report = await seed(app, { secretsKey: TEST_SECRETS_KEY });
  for (const { username, password } of report.passwords) tokens.set(username, (await logIn(app, username, password)).token);
});

afterAll(async () => {
  await app?.close();
});

describe('the report', () => {
  it('lists every record created, with the ids of the spec, and a password per user, once', () => {
    const created = (kind: string) => report.entries.filter((entry) => entry.kind === kind && entry.outcome === 'created');
    expect(report.entries.every((entry) => entry.outcome === 'created')).toBe(true);
    expect(report.entries.some((entry) => entry.fixture_id !== undefined)).toBe(false); // a fresh database honours every id
    expect(created('user').map((entry) => [entry.name, entry.id])).toEqual(fixtures.users.map((user) => [user.username, user.id]));
    expect(created('entity').map((entry) => entry.id)).toEqual([12, 13, 14]);
    expect(created('monitor').map((entry) => entry.id)).toEqual([5, 6]);
    expect(created('metrics')).toHaveLength(2);
    expect(created('monitor alert rule').map((entry) => entry.name)).toEqual([
      'Maria Santos — redes oficiais: mentions_spike 1.15 on instagram',
      'Maria Santos — redes oficiais: profile_inactive 3 on every network',
      'João Ferreira — concorrente: followers_drop 5 on instagram',
    ]);
    expect(created('scenario request').map((entry) => entry.id)).toEqual([31, 32, 34, 35, 36, 37]);
    expect(created('sms credential').map((entry) => entry.id)).toEqual([3]);
    expect(created('sms campaign').map((entry) => entry.id)).toEqual([77]);
    expect(report.passwords.map((entry) => entry.username)).toEqual(fixtures.users.map((user) => user.username));
    expect(new Set(report.passwords.map((entry) => entry.password)).size).toBe(fixtures.users.length);
    for (const { password } of report.passwords) expect(password).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(report.notes).toEqual([]);
    expect(formatSeedReport(report)).toContain('entity #12: Maria da Silva Santos');
  });

  it('stores the passwords only as hashes', async () => {
    const rows = (await app.accounts.models.User.findAll({ raw: true })) as unknown as Array<{ password_hash: string }>;
    for (const row of rows) expect(row.password_hash).toMatch(/^\$argon2id\$/);
    const stored = JSON.stringify(rows);
    for (const { password } of report.passwords) expect(stored).not.toContain(password);
  });
});

describe('the real server tells the story of the spec examples', () => {
  const userFields = ['id', 'username', 'email', 'first_name', 'last_name', 'phone', 'is_admin', 'is_active', 'date_joined'];

  it('logs in Ana Souza, the admin, and Carlos Pereira, the operator, as LoginAdmin and LoginOperator show them', async () => {
    const ana = report.passwords.find((entry) => entry.username === 'ana.souza')!;
    const admin = await logIn(app, 'ana.souza@palanque.app', ana.password); // by e-mail too
    expect(pick(admin.user, userFields)).toEqual(pick(example('LoginAdmin').data.user, userFields));
    const carlos = report.passwords.find((entry) => entry.username === 'carlos.pereira')!;
    const operator = await logIn(app, 'carlos.pereira', carlos.password);
    expect(pick(operator.user, userFields)).toEqual(pick(example('LoginOperator').data.user, userFields));
    expect(pick(await get('ana.souza', '/api/usuario/2/'), userFields)).toEqual(pick(example('UserCarlosEnvelope').data, userFields));
  });

  it('lists the users as listUsers does', async () => {
    const page = await get('ana.souza', '/api/auth/account');
    const shown = responseExample('/api/auth/account', 'get', '200', 'firstPage') as Json;
    expect(page.count).toBe(fixtures.users.length);
    for (const user of shown.data.results) expect(pick(page.results.find((row: Json) => row.id === user.id), userFields)).toEqual(pick(user, userFields));
  });

  it('lists Maria da Silva Santos, her competitor and the party as listEntities does', async () => {
    const shown = (responseExample('/api/entidade/', 'get', '200', 'campaign') as Json).data;
    const listed = await get('carlos.pereira', '/api/entidade/');
    expect(listed.count).toBe(shown.count);
    // The example's image_url of entity 12 differs from the one of CandidateEntityEnvelope (the full record), which the seed keeps.
    expect(listed.results.map((row: Json) => omit(row, ['image_url']))).toEqual(shown.results.map((row: Json) => omit(row, ['image_url'])));
    expect(listed.results.map((row: Json) => row.image_url)).toEqual([example('CandidateEntityEnvelope').data.image_url, null, null]);
    // The demo admin sees them all too, as a platform admin.
    const asAdmin = await get('ana.souza', '/api/entidade/');
    expect(asAdmin.results.map((row: Json) => [row.nome, row.role])).toEqual(shown.results.map((row: Json) => [row.nome, 'admin']));
  });

  it('answers the candidate as CandidateEntityEnvelope shows her (the nested ids are the database\'s)', async () => {
    const entity = await get('carlos.pereira', '/api/entidade/data/?id=12');
    const shown = example('CandidateEntityEnvelope').data;
    const withoutNestedIds = (record: Json) => ({
      ...omit(record, ['idade']),
      referencia_social: {
        ...omit(record.referencia_social, ['id']),
        social_network: record.referencia_social.social_network.map((entry: Json) => omit(entry, ['referencia_social'])),
      },
      marketshare: record.marketshare.map((share: Json) => omit(share, ['id'])),
    });
    expect(withoutNestedIds(entity)).toEqual(withoutNestedIds(shown));
    expect(entity.referencia_social.social_network[0].referencia_social).toBe(entity.referencia_social.id);
    expect(entity.idade).toBe(withCurrentAge(shown, new Date()).idade); // 48 in the example, and until 2027-05-14
    // What addEntity would be sent to create her is the fixture's record.
    expect(omit(fixtures.entities[0]!.record, ['referencia_social', 'idade'])).toEqual(omit(example('NewCandidateEntity'), ['referencia_social', 'idade']));
  });

  it('has her team, her contacts, her guardianship links and the operator check as the examples show', async () => {
    expect(await get('carlos.pereira', '/api/operators/get_operators/?id=12')).toEqual((responseExample('/api/operators/get_operators/', 'get', '200', 'team') as Json).data);
    const check = (asker: string, email: string) => get(asker, `/api/operators/check_operator_email/?entity_id=12&email=${encodeURIComponent(email)}`);
    expect(await check('carlos.pereira', 'joana.lima@exemplo.com.br')).toEqual((responseExample('/api/operators/check_operator_email/', 'get', '200', 'invitable') as Json).data);
    // The member example is a platform admin's answer: only they learn whether an account has the address.
    expect(await check('ana.souza', 'marcos.oliveira@palanque.app')).toEqual((responseExample('/api/operators/check_operator_email/', 'get', '200', 'member') as Json).data);
    // An open invitation Carlos sent to an address without an account (fixtures/entities.json).
    const invitations = await get('carlos.pereira', '/api/operators/invitations/?entity_id=12');
    expect(invitations.results).toEqual([expect.objectContaining({ email: 'rafael.costa@exemplo.com.br', role: 'viewer', state: 'pending', invited_by: { id: 2, display_name: 'Carlos Pereira' } })]);
    expect(await get('carlos.pereira', '/api/account/')).toEqual((responseExample('/api/account/', 'get', '200', 'team') as Json).data);
    expect(await get('carlos.pereira', '/api/entidade/tutela/')).toEqual((responseExample('/api/entidade/tutela/', 'get', '200', 'links') as Json).data);
    expect(await get('carlos.pereira', '/api/entidade/tutela/get_ward_links/?id=13')).toEqual((responseExample('/api/entidade/tutela/get_ward_links/', 'get', '200', 'watched') as Json).data);
    const root = await get('carlos.pereira', '/');
    expect(root.user).toEqual((responseExample('/', 'get', '200', 'root') as Json).data.user);
  });

  it('replays the team examples in order: Carlos invites Joana as InvitationSent shows, she joins as OperatorJoana shows, then is removed', async () => {
    const headers = { Authorization: `Token ${tokens.get('carlos.pereira')}` };
    const invited = await request(app.baseUrl, 'POST', '/api/operators/add_operator/', headers, requestExample('/api/operators/add_operator/', 'post', 'operator'));
    expect(invited.status, invited.text).toBe(201);
    const times = ['id', 'created_at', 'expires_at'];
    expect(omit(invited.body.data, times)).toEqual(omit(example('InvitationSent').data, times));
    expect(invited.body.message).toBe(example('InvitationSent').message);
    const asJoana = { Authorization: `Token ${tokens.get('joana.lima')}` };
    const added = await request(app.baseUrl, 'POST', '/api/operators/invitations/accept/', asJoana, { id: invited.body.data.id });
    expect(added.status, added.text).toBe(200);
    // Joana reads her own membership: her e-mail included.
    expect(omit(withoutMilliseconds(added.body.data), ['id', 'added_at'])).toEqual(omit(example('OperatorJoana').data, ['id', 'added_at']));
    expect(added.body.message).toBe(example('OperatorJoana').message);
    const removed = await request(app.baseUrl, 'POST', '/api/operators/remove_operator/', headers, requestExample('/api/operators/remove_operator/', 'post', 'remove'));
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body.data).toEqual(example('OperatorRemoved').data);
  });

  it('shows the monitors with a month of daily metrics ending today, the last two days as the examples show', async () => {
    const monitors = await get('carlos.pereira', '/api/monitor_social/data/');
    expect(monitors.map((monitor: Json) => monitor.id)).toEqual([5, 6]);
    for (const monitor of monitors) {
      expect(monitor.daily_series).toHaveLength(30);
      expect(new Set(monitor.daily_series.map((point: Json) => point.date)).size).toBe(30);
      expect(monitor.daily_series.at(-1).date).toBe(todayInBrasilia());
      expect(monitor.latest_metrics).toHaveLength(1);
    }
    const [maria] = monitors;
    const created = example('SocialMonitorCreated').data;
    expect(omit(maria, ['latest_metrics', 'daily_series'])).toEqual(omit(created, ['latest_metrics', 'daily_series']));
    expect(pick(maria, ['entity_id', 'name', 'keywords', 'profiles'])).toEqual(requestExample('/api/monitor_social/add_monitor/', 'post', 'officialProfiles'));
    const shown = (responseExample('/api/monitor_social/data/', 'get', '200', 'oneMonitor') as Json).data[0];
    const values = (point: Json) => omit(point, ['date', 'taken_at']);
    expect(maria.daily_series.slice(-2).map(values)).toEqual(shown.daily_series.map(values));
    expect(maria.latest_metrics.map(values)).toEqual(shown.latest_metrics.map(values));
    const imported = requestExample('/api/monitor_social/import_metrics/', 'post', 'twoDays');
    expect(maria.daily_series.slice(-2).map(values)).toEqual(imported.snapshots.map(values));
  });

  it("has the monitors' alert rules, and the alert Maria's month of mentions raised, once, for her team only", async () => {
    const rules = await get('carlos.pereira', '/api/monitor_social/alert_rules/?monitor_id=5');
    expect(rules.map((rule: Json) => pick(rule, ['monitor_id', 'kind', 'network', 'threshold', 'breached']))).toEqual([
      // 312 mentions on the last day, 1.18 times the 7 days before (264.9 on average).
      { monitor_id: 5, kind: 'mentions_spike', network: 'instagram', threshold: 1.15, breached: true },
      // A post or more every day or two.
      { monitor_id: 5, kind: 'profile_inactive', network: null, threshold: 3, breached: false },
    ]);
    expect(rules[0].last_fired_at).not.toBeNull();
    // João's followers grow.
    expect((await get('carlos.pereira', '/api/monitor_social/alert_rules/?monitor_id=6')).map((rule: Json) => [rule.kind, rule.breached])).toEqual([['followers_drop', false]]);

    const alertsOf = async (username: string) => (await get(username, '/api/notifications/')).results.filter((notice: Json) => notice.type === 'monitor_alert');
    for (const member of ['carlos.pereira', 'marcos.oliveira']) {
      const alerts = await alertsOf(member);
      expect(alerts).toHaveLength(1);
      expect(alerts[0]).toMatchObject({ entity_id: 12, subject: { kind: 'monitor', id: 5 }, read_at: null });
      // The multiples to two decimals: to one, both read 1,2.
      expect(alerts[0].body).toBe('Monitor Maria Santos — redes oficiais: 312 menções no instagram, 1,18 vezes a média dos 7 dias anteriores (264,9); o limite é 1,15 vezes.');
    }
    // Ana sees every entity as the platform admin, but is not in the team: the team is who is notified.
    expect(await alertsOf('ana.souza')).toEqual([]);
  });

  it('has scenario requests in every state, the examples\' ones as they show them, and real runs behind completed and failed', async () => {
    const page = await get('carlos.pereira', '/api/strategy/get_scenario_requests/?monitor_id=5');
    const byId = new Map<number, Json>(page.results.map((scenario: Json) => [scenario.id, scenario]));
    expect([...byId.values()].map((scenario) => scenario.state).sort()).toEqual(['approved', 'completed', 'failed', 'pending', 'rejected', 'running']);
    expect(byId.has(33)).toBe(false); // ScenarioApprovalMixed: 33 is not_found
    const stable = ['id', 'monitor_id', 'entity_ids', 'horizon_days', 'rejection_reason', 'created_at', 'decided_at'];

    const completed = (responseExample('/api/strategy/get_scenario_requests/', 'get', '200', 'completed') as Json).data.results[0];
    const mine = byId.get(31);
    expect(pick(mine, [...stable, 'state', 'failure_reason'])).toEqual(pick(completed, [...stable, 'state', 'failure_reason']));
    expect(pick(byId.get(31), ['id', 'monitor_id', 'entity_ids', 'horizon_days', 'created_at'])).toEqual(pick(example('ScenarioRequestPending').data, ['id', 'monitor_id', 'entity_ids', 'horizon_days', 'created_at']));
    const [running] = example('ScenarioApprovalMixed').data.results.filter((result: Json) => result.scenario?.state === 'running');
    expect(pick(byId.get(32), [...stable, 'state'])).toEqual(pick(running.scenario, [...stable, 'state']));
    const rejected = example('ScenarioRejectionDone').data.results[0].scenario;
    expect(pick(byId.get(34), [...stable, 'state', 'updated_at'])).toEqual(pick(rejected, [...stable, 'state', 'updated_at']));
    for (const id of [31, 32, 34, 36, 37]) expect(byId.get(id).decided_by).toBe(2); // the owner, Carlos Pereira
    for (const scenario of byId.values()) expect(scenario.requested_by).toBe(3); // the operator, Marcos Oliveira

    // The projection comes from the seeded metrics: shares of voice and their trends as in the example.
    const projection = mine.projection;
    const expected = completed.projection;
    expect(pick(projection, ['window_days', 'horizon_days'])).toEqual(pick(expected, ['window_days', 'horizon_days']));
    expect(projection.as_of.slice(0, 10)).toBe(today());
    const voice = ['entity_id', 'share_of_voice', 'share_of_voice_trend', 'tendency'];
    expect(projection.entities.map((row: Json) => pick(row, voice))).toEqual(expected.entities.map((row: Json) => pick(row, voice)));
    // The competitor's whole row matches but its name; Maria's marketshare is her entity's 23.5 (the example says 0.3).
    expect(omit(projection.entities[1], ['nome', 'projected_share'])).toEqual(omit(expected.entities[1], ['nome', 'projected_share']));
    expect(projection.entities.map((row: Json) => row.nome)).toEqual(['Maria da Silva Santos', 'João Carlos Ferreira']);
    expect(projection.entities[0].marketshare).toBe(0.235);

    expect(byId.get(37).failure_reason).toBe('Entity 14 (Partido Renovação Democrática) has no social monitor.');
    expect(byId.get(36)).toMatchObject({ state: 'approved', projection: null, failure_reason: null });
    expect(byId.get(35)).toMatchObject({ state: 'pending', decided_by: null, decided_at: null });
    const pending = await get('marcos.oliveira', '/api/strategy/get_scenario_requests/?monitor_id=5&state=pending');
    expect(pending.results.map((scenario: Json) => scenario.id)).toEqual([35]);
  });

  it('lists the SMS credential as listSmsCredentials does, and keeps the campaign of the example without sending it', async () => {
    const shown = (responseExample('/api/sms/list_credentials/', 'get', '200', 'credentials') as Json).data;
    expect(await get('carlos.pereira', '/api/sms/list_credentials/')).toEqual(shown);
    expect(await get('ana.souza', '/api/sms/list_credentials/')).toEqual(shown);
    expect(shown[0]).toEqual(example('SmsCredentialAdded').data);
    expect(await get('marcos.oliveira', '/api/sms/list_credentials/')).toEqual(shown); // operators may send too
    expect(await get('joana.lima', '/api/sms/list_credentials/')).toEqual([]);

    const campaign = withoutMilliseconds(await app.sms.models.Campaign.findByPk(77, { raw: true })) as Json;
    const accepted = example('SmsCampaignAccepted').data;
    expect({ ...pick(campaign, ['id', 'titulo', 'accepted', 'rejected', 'opted_out_skipped', 'encoding', 'segments']), credencial: campaign.credential_id })
      .toEqual(pick(accepted, ['id', 'titulo', 'credencial', 'accepted', 'rejected', 'opted_out_skipped', 'encoding', 'segments']));
    const asked = example('SmsCampaignRequest');
    expect(campaign.body).toBe(asked.mensagem.mensagem);
    const messages = (await app.sms.models.Message.findAll({ where: { campaign_id: 77 }, order: [['id', 'ASC']], raw: true })) as Json[];
    expect(messages.map((message) => message.recipient)).toEqual(['+5511987654321', '+5511998765432', '+5511988887777']);
    const form = (resolvePointer(spec, '#/paths/~1api~1callback~1provider_sms~1/post/requestBody/content/application~1x-www-form-urlencoded/examples/delivered') as Json).value;
    expect(messages.find((message) => message.provider_sid === form.MessageSid)).toMatchObject({ recipient: form.To, status: form.MessageStatus });
    const optOut = (responseExample('/api/webhook/provider_sms/', 'get', '200', 'optOut') as Json).data;
    expect(await app.sms.models.Reply.findOne({ where: { message_sid: optOut.message_sid }, raw: true })).toMatchObject({ sender: optOut.from, body: 'SAIR' });
    // Opted out of the campaigns of the entity whose credential received the reply (credential 3's).
    const receiver = (await app.sms.models.Credential.findByPk(3, { raw: true })) as Json;
    expect(await app.sms.models.OptOut.findAll({ where: { phone: optOut.from }, attributes: ['entity_id', 'keyword'], raw: true })).toEqual([{ entity_id: receiver.entity_id, keyword: 'SAIR' }]);
    // The other reply, a question, is a conversation in the inbox of that entity (issue 24).
    const inbox = await get('carlos.pereira', `/api/chat/conversations/?entity_id=${receiver.entity_id}`);
    expect(inbox.results).toEqual([expect.objectContaining({ participant: '+5511987654321', unread_count: 1, last_message: expect.objectContaining({ direction: 'in', text: 'Onde vai ser o próximo comício?' }) })]);
    expect((await rowCounts(app)).jobs).toBe(0); // nothing queued: no SMS goes out
  });

  it('lists the research bookmarks and the news sources as the examples do', async () => {
    expect(await get('carlos.pereira', '/api/research/get_user_research_bookmarks/')).toEqual(
      (responseExample('/api/research/get_user_research_bookmarks/', 'get', '200', 'bookmarks') as Json).data,
    );
    expect(await get('ana.souza', '/api/research/get_user_research_bookmarks/')).toEqual([]); // personal
    expect(await get('joana.lima', '/api/news/get_requested_fonts/')).toEqual((responseExample('/api/news/get_requested_fonts/', 'get', '200', 'sources') as Json).data);
  });
});

describe("the electoral court's demo data", () => {
  /** A GET as a demo user, its body as sent (moments keep their milliseconds, as the examples of these operations write them). */
  const read = async (username: string, path: string): Promise<Json> => {
    const result = await request(app.baseUrl, 'GET', path, { Authorization: `Token ${tokens.get(username)}` });
    expect(result.status, result.text).toBe(200);
    return result.body;
  };

  it('lists the elections, the mayoral candidacies of São Paulo and a candidacy as the examples show them', async () => {
    expect((await read('joana.lima', '/api/elections/')).data).toEqual((responseExample('/api/elections/', 'get', '200', 'loaded') as Json).data);
    const mayors = await read('joana.lima', '/api/elections/candidacies/?cd_eleicao=619&cd_cargo=11&codigo_ibge=3550308');
    expect(mayors.data).toEqual((responseExample('/api/elections/candidacies/', 'get', '200', 'mayorsOfSaoPaulo') as Json).data);
    expect((await read('ana.souza', '/api/elections/candidacy/?id=501')).data).toEqual(example('CandidacyWhole').data);
    expect((await read('joana.lima', '/api/elections/candidacy/?id=501')).data).toEqual(example('CandidacyMasked').data);
  });

  it('holds the parties, federations, offices and codes the examples show (a part of them)', async () => {
    const parties = (await read('joana.lima', '/api/elections/parties/?cd_eleicao=619')).data;
    const shown = (responseExample('/api/elections/parties/', 'get', '200', 'municipal2024') as Json).data;
    expect(parties.eleicao).toEqual(shown.eleicao);
    expect(parties.partidos).toEqual(expect.arrayContaining(shown.partidos));
    expect(parties.federacoes).toEqual(expect.arrayContaining(shown.federacoes));
    const offices = (await read('joana.lima', '/api/elections/offices/')).data;
    expect(offices).toEqual(expect.arrayContaining((responseExample('/api/elections/offices/', 'get', '200', 'loaded') as Json).data));
    const codes = (await read('joana.lima', '/api/elections/codes/')).data;
    for (const [table, listed] of Object.entries((responseExample('/api/elections/codes/', 'get', '200', 'someTables') as Json).data)) {
      expect(codes[table], table).toEqual(expect.arrayContaining(listed as Json[]));
    }
  });
});

describe('seeding again', () => {
  it('changes nothing, and says that everything was there already', async () => {
    const before = await rowCounts(app);
    const entities = await get('carlos.pereira', '/api/entidade/');
    const monitors = await get('carlos.pereira', '/api/monitor_social/data/');
    const again = await seed(app, { secretsKey: TEST_SECRETS_KEY });
    expect(again.entries.filter((entry) => entry.outcome !== 'existed')).toEqual([]);
    expect(again.passwords).toEqual([]);
    expect(await rowCounts(app)).toEqual(before);
    expect(await get('carlos.pereira', '/api/entidade/')).toEqual(entities);
    expect(await get('carlos.pereira', '/api/monitor_social/data/')).toEqual(monitors);
    // The passwords printed the first time still work.
    const ana = report.passwords.find((entry) => entry.username === 'ana.souza')!;
    await logIn(app, 'ana.souza', ana.password);
  });
});

describe('after the seed', () => {
  it('gives new records ids past the demo ones (PostgreSQL\'s sequences were moved past the ids written)', async () => {
    const user = await app.accounts.users.create({ username: 'nova.pessoa', email: 'nova.pessoa@exemplo.com.br', password: 'uma-senha-qualquer-123' });
    expect(user.id).toBe(8);
    const entity = await app.entities.store.create('concorrente', user.id, { nome: 'Nova Concorrente' });
    expect(entity).toBe(15);
    const monitor = await app.monitors.store.create({ entityId: entity, name: 'Novo monitor', keywords: ['nova'], profiles: [], createdBy: user.id });
    expect(monitor).toMatchObject({ id: 7 });
    const scenario = await app.strategy.scenarios.create({ monitorId: 5, entityIds: [12, 13], horizonDays: 7, requestedBy: user.id });
    expect(scenario.id).toBe(38);
    const credential = await app.sms.addCredential({ name: 'Outra', accountId: `AC${'1'.repeat(32)}`, senderId: '+5511940028923', secret: 'x'.repeat(32), entityId: undefined, createdBy: 1 });
    expect(credential).toMatchObject({ id: 4 });
  });
});

describe('the fixtures', () => {
  it('give each monitor one snapshot a day for 30 days, the last on the hour of the seed', () => {
    const now = new Date('2026-11-22T05:07:22.123Z');
    const snapshots = dailySnapshots(fixtures.monitors[0]!.metrics, now);
    expect(snapshots).toHaveLength(30);
    expect(snapshots.at(-1)!.taken_at).toBe('2026-11-22T05:00:00.000Z');
    expect(snapshots[0]!.taken_at).toBe('2026-10-24T05:00:00.000Z');
  });

  it('keep the numbers of the spec\'s campaign example, written without spaces inside numbers', () => {
    const asked = example('SmsCampaignRequest');
    const campaign = fixtures.sms.campaigns[0]!;
    expect(pick(campaign, ['titulo', 'credencial'])).toEqual(pick(asked, ['titulo', 'credencial']));
    expect(campaign.mensagem.mensagem).toBe(asked.mensagem.mensagem);
    expect(readRecipients(campaign.mensagem.recipient_list_str!)).toEqual({ numbers: campaign.messages.map((message) => message.recipient), invalid: [], repeated: 0, entries: campaign.messages.length });
  });
});

// Found while seeding, and fixed: the mock and the real server read the campaign example alike.
describe('the fixtures are checked before anything is written', () => {
  it('names an alert rule whose threshold, network or author breaks the rules addMonitorAlertRule applies', () => {
    const broken = structuredClone(fixtures);
    broken.monitors[0]!.alert_rules = [
      { kind: 'mentions_spike', network: 'instagram', threshold: 0.5, created_by: 'carlos.pereira' },
      { kind: 'followers_drop', network: 'tiktok', threshold: 5, created_by: 'carlos.pereira' },
      { kind: 'profile_inactive', threshold: 3, created_by: 'joana.lima' },
    ];
    const problems = checkDemoFixtures(broken, app.catalog).filter((problem) => problem.includes('alert rule'));
    expect(problems).toEqual([
      'monitor 5 (Maria Santos — redes oficiais) alert rule 1: threshold 0.5 does not fit mentions_spike',
      'monitor 5 (Maria Santos — redes oficiais) alert rule 2: tiktok is not a network of the monitor',
      'monitor 5 (Maria Santos — redes oficiais) alert rule 3: joana.lima may not change monitors of entity 12',
    ]);
    expect(checkDemoFixtures(fixtures, app.catalog)).toEqual([]);
  });
});

describe('recipients the seed relies on', () => {
  // The mock answers the example as sent and the server reads it: it must hold exactly its three numbers.
  it('the spec\'s SmsCampaignRequest example reads as its three numbers', () => {
    const recipients = readRecipients(example('SmsCampaignRequest').mensagem.recipient_list_str);
    expect(recipients.invalid).toEqual([]);
    expect(recipients.numbers).toEqual(['+5511987654321', '+5511998765432', '+5511988887777']);
  });

  // With the default ("min") metadata a number without its area code passed isValid(), and a campaign
  // queued sends the provider refuses; the full ("max") metadata refuses it.
  it('a Brazilian mobile number without its area code is not a valid recipient', () => {
    expect(readRecipients('98765-4321; 99876-5432')).toMatchObject({ numbers: [], invalid: [{ position: 0 }, { position: 1 }] });
  });
});

describe('options', () => {
  let bare: TestApp;

  beforeAll(async () => {
    bare = await startTestApp({ withMunicipalities: true, sms: { secretsKey: null } });
    // As on a database the server started on first: its first admin took id 1.
    await bare.accounts.users.create({ username: 'admin', email: 'admin@palanque.app', password: 'a-primeira-senha-de-admin', is_admin: true });
  });

  afterAll(async () => {
    await bare?.close();
  });

  it('skips the SMS records without SECRETS_KEY, and gives every user SEED_PASSWORD when set', async () => {
    const password = 'senha-de-demonstracao-2026';
    const seeded = await seed(bare, { password });
    expect(seeded.entries.filter((entry) => entry.outcome === 'skipped').map((entry) => entry.kind)).toEqual(['sms credential', 'sms campaign', 'sms reply', 'sms reply']);
    // The first admin holds id 1, so Ana Souza and the users after her got other ids, and the report says so.
    const moved = seeded.entries.filter((entry) => entry.fixture_id !== undefined).map((entry) => [entry.name, entry.fixture_id, entry.id]);
    expect(moved).toEqual([['ana.souza', 1, 2], ['carlos.pereira', 2, 3], ['marcos.oliveira', 3, 4]]);
    expect(formatSeedReport(seeded)).toContain("user #2: ana.souza (the fixture's id 1 was taken)");
    expect(seeded.notes).toEqual([expect.stringContaining('SECRETS_KEY is not set')]);
    expect(seeded.passwords.map((entry) => entry.password)).toEqual(fixtures.users.map(() => password));
    const carlos = await logIn(bare, 'carlos.pereira', password);
    const credentials = await request(bare.baseUrl, 'GET', '/api/sms/list_credentials/', { Authorization: `Token ${carlos.token}` });
    expect(credentials.body.data).toEqual([]);
    expect(await bare.sms.models.OptOut.count()).toBe(0);
  });

  it('gives the users whose ids are taken the next ones, and follows them in every reference', async () => {
    const seeded = await seed(bare); // again: it finds every record, and says where
    expect(seeded.entries.filter((entry) => entry.outcome === 'created')).toEqual([]);
    const ids = Object.fromEntries(seeded.entries.filter((entry) => entry.kind === 'user').map((entry) => [entry.name, entry.id]));
    expect(ids).toEqual({ 'ana.souza': 2, 'carlos.pereira': 3, 'marcos.oliveira': 4, 'joana.lima': 7 });
    const carlos = await logIn(bare, 'carlos.pereira', 'senha-de-demonstracao-2026');
    const headers = { Authorization: `Token ${carlos.token}` };
    const team = await request(bare.baseUrl, 'GET', '/api/operators/get_operators/?id=12', headers);
    expect(team.body.data.map((member: Json) => [member.id, member.user_id, member.role])).toEqual([[40, 3, 'owner'], [41, 4, 'operator']]);
    const scenarios = await request(bare.baseUrl, 'GET', '/api/strategy/get_scenario_requests/?monitor_id=5', headers);
    expect(new Set(scenarios.body.data.results.map((scenario: Json) => scenario.requested_by))).toEqual(new Set([4]));
    expect(scenarios.body.data.results.find((scenario: Json) => scenario.id === 31)).toMatchObject({ state: 'completed', decided_by: 3 });
  });

  it('refuses a short SEED_PASSWORD, and an empty municipality list, before writing anything', async () => {
    await expect(seed(bare, { password: 'curta' })).rejects.toThrow('at least 12 characters');
    const empty = await startTestApp();
    try {
      await expect(seed(empty)).rejects.toThrow('The municipality list is not loaded');
      expect(await empty.accounts.users.count()).toBe(0);
    } finally {
      await empty.close();
    }
  });
});
