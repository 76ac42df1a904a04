/**
 * Social monitors through the real app and the contract validator (responses are validated too):
 * creating a monitor for an entity by team role (createSocialMonitor), reading the caller's monitors with
 * their latest metrics per network and their 30-day daily series (getSocialMonitorData), and admins
 * importing metric snapshots (importMonitorMetrics): the counts, re-imports that change nothing,
 * corrections, all-or-nothing 422s, and the same import sent twice at once.
 * One app per file. Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { QueryTypes } from 'sequelize';
import { addDays, brasiliaDay, brasiliaMidnight } from '../src/brasilia-time.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request, type Result } from './helpers/http.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
type Role = 'admin' | 'operator' | 'viewer';

const DATA = '/api/monitor_social/data/';
const ADD = '/api/monitor_social/add_monitor/';
const IMPORT = '/api/monitor_social/import_metrics/';
const ISO_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

let app: TestApp;
const call = (method: 'GET' | 'POST', path: string, headers: Record<string, string> = {}, body?: unknown) =>
  request(app.baseUrl, method, path, headers, body);
let platformAdmin: TestUser;

beforeAll(async () => {
  app = await startTestApp();
  platformAdmin = await createAdmin(app, { first_name: 'Ada', last_name: 'Plataforma' });
});

afterAll(async () => {
  await app?.close();
});

interface Team {
  owner: TestUser;
  id: number;
}

/** A new owner with a new entity (through the store, for speed). */
async function newTeam(nome = 'Maria Santos'): Promise<Team> {
  const owner = await createUser(app);
  return { owner, id: await app.entities.store.create('candidato', owner.user.id, { nome }) };
}

/** Puts a user in a team directly. */
async function join(entityId: number, user: TestUser, role: Role): Promise<void> {
  await app.entities.models.Member.create({ entity_id: entityId, user_id: user.user.id, role, added_at: new Date() });
}

const addMonitor = (caller: TestUser | undefined, body: unknown) => call('POST', ADD, caller?.headers ?? {}, body);
const readMonitors = (caller: TestUser | undefined, idMonitor?: string | number) =>
  call('GET', idMonitor === undefined ? DATA : `${DATA}?id_monitor=${idMonitor}`, caller?.headers ?? {});
const importMetrics = (caller: TestUser | undefined, body: unknown, headers: Record<string, string> = {}) =>
  call('POST', IMPORT, { ...(caller?.headers ?? {}), ...headers }, body);

let names = 0;
/** Creates a monitor through HTTP as `caller` (the team's owner by default) and returns it. */
async function newMonitor(team: Team, fields: Record<string, unknown> = {}, caller: TestUser = team.owner): Promise<Json> {
  names += 1;
  const result = await addMonitor(caller, { entity_id: team.id, name: `Monitor ${names}`, profiles: [{ nm_rede: 'instagram', username: 'mariasantos' }], ...fields });
  expect(result.status, result.text).toBe(201);
  return result.body.data;
}

/** The monitor as getSocialMonitorData shows it to `caller` (a platform admin by default). */
async function viewOf(monitorId: number, caller: TestUser = platformAdmin): Promise<Json> {
  const result = await readMonitors(caller, monitorId);
  expect(result.status, result.text).toBe(200);
  expect(result.body.data).toHaveLength(1);
  return result.body.data[0];
}

async function count(sql: string, replacements: Record<string, unknown>): Promise<number> {
  const [row] = await app.sequelize.query<{ n: number | string }>(sql, { replacements, type: QueryTypes.SELECT });
  return Number(row!.n);
}

const snapshotCount = (monitorId: number) => count('SELECT COUNT(*) AS n FROM metric_snapshots WHERE monitor_id = :monitorId', { monitorId });
const monitorCount = (entityId: number) => count('SELECT COUNT(*) AS n FROM social_monitors WHERE entity_id = :entityId', { entityId });

/** The Brasília day `daysAgo` days before today's there (`YYYY-MM-DD`). */
const brasiliaDayAgo = (daysAgo: number) => addDays(brasiliaDay(), -daysAgo);

/** A moment `daysAgo` days before today (in Brasília) at the given Brasília time of day: never in the future for daysAgo >= 1. */
function dayAt(daysAgo: number, hours: number, minutes = 0, seconds = 0, ms = 0): string {
  return new Date(brasiliaMidnight(brasiliaDayAgo(daysAgo)).getTime() + (((hours * 60 + minutes) * 60 + seconds) * 1000 + ms)).toISOString();
}

let counter = 0;
/** A snapshot with distinct values, so a point shows which snapshot it came from. */
function snapshot(network: string, takenAt: string, fields: Record<string, unknown> = {}): Json {
  counter += 1;
  return { network, taken_at: takenAt, followers: 1000 + counter, posts: 10 + counter, engagement: counter / 100, mentions: counter, ...fields };
}

/** A DailyMetric point from the snapshot it should come from. */
const pointOf = ({ taken_at, ...metrics }: Json) => ({ date: brasiliaDay(new Date(taken_at)), ...metrics });

/** Sorted by network (the contract does not order latest_metrics). */
const byNetwork = (snapshots: Json[]) => [...snapshots].sort((a, b) => (a.network < b.network ? -1 : a.network > b.network ? 1 : 0));

async function imported(monitorId: number, snapshots: Json[]): Promise<Json> {
  const result = await importMetrics(platformAdmin, { monitor_id: monitorId, snapshots });
  expect(result.status, result.text).toBe(200);
  return result.body.data;
}

describe('POST /api/monitor_social/add_monitor/ (createSocialMonitor)', () => {
  let team: Team;
  let teamAdmin: TestUser;
  let operator: TestUser;
  let viewer: TestUser;
  let stranger: TestUser;

  beforeAll(async () => {
    team = await newTeam('Joana Secreta da Silva');
    teamAdmin = await createUser(app);
    operator = await createUser(app);
    viewer = await createUser(app);
    stranger = await createUser(app);
    await join(team.id, teamAdmin, 'admin');
    await join(team.id, operator, 'operator');
    await join(team.id, viewer, 'viewer');
  });

  it('creates the monitor (201) for the owner, a team admin, an operator and a platform admin: trimmed, networks lower-cased, no metrics', async () => {
    for (const [index, caller] of [team.owner, teamAdmin, operator, platformAdmin].entries()) {
      const result = await addMonitor(caller, {
        entity_id: team.id,
        name: `  Joana — redes oficiais ${index}  `,
        keywords: ['  Joana Silva ', '#JoanaPrefeita'],
        profiles: [
          { nm_rede: ' Instagram ', username: '  joanasilva ', link: 'https://www.instagram.com/joanasilva' },
          { nm_rede: 'X', link: 'https://x.com/joanasilva' },
          { nm_rede: 'TikTok', username: 'joana.oficial' },
        ],
      });
      expect(result.status, result.text).toBe(201);
      const id = result.body.data.id;
      expect(result.body).toEqual({
        success: true,
        data: {
          id: expect.any(Number),
          entity_id: team.id,
          name: `Joana — redes oficiais ${index}`,
          keywords: ['Joana Silva', '#JoanaPrefeita'],
          profiles: [
            { nm_rede: 'instagram', username: 'joanasilva', link: 'https://www.instagram.com/joanasilva' },
            { nm_rede: 'x', link: 'https://x.com/joanasilva' },
            { nm_rede: 'tiktok', username: 'joana.oficial' },
          ],
          created_at: expect.stringMatching(ISO_TIMESTAMP),
          latest_metrics: [],
          daily_series: [],
        },
        message: `Monitor ${id} created.`,
        request_id: result.headers.get('x-request-id'),
      });
      expect(Math.abs(Date.parse(result.body.data.created_at) - Date.now())).toBeLessThan(60_000);
      // It is stored as answered, and remembers who created it.
      expect(await viewOf(id, team.owner)).toEqual(result.body.data);
      expect(await count('SELECT COUNT(*) AS n FROM social_monitors WHERE id = :id AND created_by = :userId', { id, userId: caller.user.id })).toBe(1);
    }
    expect(await monitorCount(team.id)).toBe(4);
  });

  it('accepts a monitor of keywords only and one of profiles only', async () => {
    const keywordsOnly = await addMonitor(operator, { entity_id: team.id, name: 'Só palavras', keywords: ['eleição'] });
    expect(keywordsOnly.status, keywordsOnly.text).toBe(201);
    expect(keywordsOnly.body.data).toMatchObject({ keywords: ['eleição'], profiles: [] });
    const profilesOnly = await addMonitor(operator, { entity_id: team.id, name: 'Só perfis', keywords: [], profiles: [{ nm_rede: 'youtube', link: 'https://youtube.com/@joana' }] });
    expect(profilesOnly.status, profilesOnly.text).toBe(201);
    expect(profilesOnly.body.data).toMatchObject({ keywords: [], profiles: [{ nm_rede: 'youtube', link: 'https://youtube.com/@joana' }] });
  });

  it('answers 403 to a viewer and creates nothing', async () => {
    const before = await monitorCount(team.id);
    const result = await addMonitor(viewer, { entity_id: team.id, name: 'Do viewer', keywords: ['x'] });
    expectError(result, 403, 'forbidden');
    expect(await monitorCount(team.id)).toBe(before);
  });

  it('answers 404 to a stranger, as for an entity that does not exist, revealing nothing but the id', async () => {
    const before = await monitorCount(team.id);
    const hidden = await addMonitor(stranger, { entity_id: team.id, name: 'Do estranho', keywords: ['x'] });
    expectError(hidden, 404, 'not_found');
    expect(hidden.body.error.message).toBe(`There is no entity ${team.id} in your teams.`);
    expect(hidden.body.error.details).toEqual([{ location: 'body', field: 'entity_id', rule: 'in_your_teams', message: expect.any(String), value: team.id }]);
    expect(hidden.text).not.toContain('Joana');
    expect(hidden.text).not.toContain(team.owner.user.username);

    const missingId = 2147483000;
    const missing = await addMonitor(team.owner, { entity_id: missingId, name: 'Sem entidade', keywords: ['x'] });
    expectError(missing, 404, 'not_found');
    expect(missing.body.error.message.replace(String(missingId), 'N')).toBe(hidden.body.error.message.replace(String(team.id), 'N'));
    expect(missing.body.error.details).toEqual([{ location: 'body', field: 'entity_id', rule: 'in_your_teams', message: hidden.body.error.details[0].message, value: missingId }]);
    expect(await monitorCount(team.id)).toBe(before);
  });

  it('checks the caller\'s role before judging the body: a stranger gets 404 and a viewer 403 for an invalid body', async () => {
    const invalid = { entity_id: team.id, name: '   ', keywords: ['Joana', 'joana'] };
    expectError(await addMonitor(stranger, invalid), 404, 'not_found');
    expectError(await addMonitor(viewer, invalid), 403, 'forbidden');
    expectError(await addMonitor(stranger, { entity_id: team.id, name: 'Nada a observar' }), 404, 'not_found');
  });

  it('answers 401 without a valid key', async () => {
    expectError(await addMonitor(undefined, { entity_id: team.id, name: 'Sem chave', keywords: ['x'] }), 401, 'unauthorized');
    expectError(await call('POST', ADD, { Authorization: 'Token plq_not-a-key' }, { entity_id: team.id, name: 'Chave falsa', keywords: ['x'] }), 401, 'unauthorized');
  });

  const detail = (field: string, rule: string, message: string | ReturnType<typeof expect.any>, value?: unknown) => ({
    location: 'body',
    field,
    rule,
    message,
    ...(value !== undefined ? { value } : {}),
  });

  it.each([
    ['a blank name', { name: '  \t ', keywords: ['ok'] }, [detail('name', 'not_blank', 'must not be blank')]],
    ['a blank keyword', { keywords: ['Joana', '   '] }, [detail('keywords.1', 'not_blank', 'must not be blank')]],
    ['a keyword repeated ignoring case and spaces', { keywords: ['Joana Silva', '#joana', '  JOANA silva '] }, [detail('keywords.2', 'unique', 'repeats keywords.0', 'JOANA silva')]],
    ['a profile with neither username nor link', { profiles: [{ nm_rede: 'instagram' }] }, [detail('profiles.0', 'username_or_link', expect.any(String))]],
    ['a blank network', { profiles: [{ nm_rede: '  ', username: 'joana' }] }, [detail('profiles.0.nm_rede', 'not_blank', 'must not be blank')]],
    ['a blank username', { profiles: [{ nm_rede: 'instagram', username: '  ' }] }, [detail('profiles.0.username', 'not_blank', 'must not be blank')]],
    [
      'a profile repeated by network and username, ignoring case',
      { profiles: [{ nm_rede: 'instagram', username: 'JoanaSilva' }, { nm_rede: 'x', username: 'joanasilva' }, { nm_rede: 'Instagram', username: ' joanasilva ' }] },
      [detail('profiles.2', 'unique', 'repeats profiles.0')],
    ],
    [
      'a profile repeated by its link, however pasted',
      { profiles: [{ nm_rede: 'instagram', link: 'https://www.instagram.com/joanasilva' }, { nm_rede: 'instagram', username: 'outra', link: 'http://instagram.com/joanasilva/?utm_source=zap' }] },
      [detail('profiles.1', 'unique', 'repeats profiles.0')],
    ],
    // Each problem once: src/monitors/rules.ts checkProfiles adds one `unique` detail per matching identity
    // (user name, then link), so a profile repeated whole is reported twice with the same field and rule.
    [
      'a profile repeated whole (same username and link)',
      { profiles: [{ nm_rede: 'instagram', username: 'joana', link: 'https://instagram.com/joana' }, { nm_rede: 'instagram', username: 'joana', link: 'https://instagram.com/joana' }] },
      [detail('profiles.1', 'unique', 'repeats profiles.0')],
    ],
    ['a link that is not http(s)', { profiles: [{ nm_rede: 'instagram', link: 'ftp://files.exemplo.com.br/joana' }] }, [detail('profiles.0.link', 'absolute_http_url', expect.any(String), 'ftp://files.exemplo.com.br/joana')]],
    ['a link with credentials', { profiles: [{ nm_rede: 'instagram', link: 'https://joana:segredo@exemplo.com.br/perfil' }] }, [detail('profiles.0.link', 'no_credentials', expect.any(String))]],
    ['no profiles and no keywords', {}, [detail('profiles', 'profiles_or_keywords', expect.any(String))]],
    ['empty lists of profiles and keywords', { profiles: [], keywords: [] }, [detail('profiles', 'profiles_or_keywords', expect.any(String))]],
    [
      'several problems at once, all reported',
      {
        name: ' ',
        keywords: ['Joana', ' ', 'joana'],
        profiles: [{ nm_rede: 'x' }, { nm_rede: 'instagram', link: 'mailto:joana@exemplo.com.br' }],
      },
      [
        detail('name', 'not_blank', 'must not be blank'),
        detail('keywords.1', 'not_blank', 'must not be blank'),
        detail('keywords.2', 'unique', 'repeats keywords.0', 'joana'),
        detail('profiles.0', 'username_or_link', expect.any(String)),
        detail('profiles.1.link', 'absolute_http_url', expect.any(String), 'mailto:joana@exemplo.com.br'),
      ],
    ],
  ])('answers 422 for %s, naming each problem, and creates nothing', async (_case, fields, details) => {
    const before = await monitorCount(team.id);
    const result = await addMonitor(operator, { entity_id: team.id, name: `Inválido ${_case}`, ...fields });
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toEqual(details);
    expect(await monitorCount(team.id)).toBe(before);
  });

  it.each([
    ['no entity_id', (_entityId: number) => ({ name: 'Sem entidade', keywords: ['x'] }), 'entity_id', 'required'],
    ['no name', (entityId: number) => ({ entity_id: entityId, keywords: ['x'] }), 'name', 'required'],
    ['an empty name', (entityId: number) => ({ entity_id: entityId, name: '', keywords: ['x'] }), 'name', 'minLength'],
    ['a name of 201 characters', (entityId: number) => ({ entity_id: entityId, name: 'a'.repeat(201), keywords: ['x'] }), 'name', 'maxLength'],
    ['entity_id 0', (_entityId: number) => ({ entity_id: 0, name: 'Zero', keywords: ['x'] }), 'entity_id', 'minimum'],
    ['a text entity_id', (_entityId: number) => ({ entity_id: 'doze', name: 'Texto', keywords: ['x'] }), 'entity_id', 'type'],
    ['an empty keyword', (entityId: number) => ({ entity_id: entityId, name: 'Vazia', keywords: [''] }), 'keywords.0', 'minLength'],
    ['51 keywords', (entityId: number) => ({ entity_id: entityId, name: 'Muitas', keywords: Array.from({ length: 51 }, (_, i) => `k${i}`) }), 'keywords', 'maxItems'],
    ['a profile without network', (entityId: number) => ({ entity_id: entityId, name: 'Sem rede', profiles: [{ username: 'joana' }] }), 'profiles.0.nm_rede', 'required'],
    ['a link that is no address', (entityId: number) => ({ entity_id: entityId, name: 'Link ruim', profiles: [{ nm_rede: 'x', link: 'não é endereço' }] }), 'profiles.0.link', 'format'],
  ])('answers 422 for %s (the schema)', async (_case, body, field, rule) => {
    const before = await monitorCount(team.id);
    const result = await addMonitor(operator, body(team.id));
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toContainEqual(expect.objectContaining({ location: 'body', field, rule }));
    expect(await monitorCount(team.id)).toBe(before);
  });

  it('answers 409 for a second monitor with the same name on the entity, ignoring case, but not on another entity', async () => {
    const first = await addMonitor(operator, { entity_id: team.id, name: 'Joana oficial', keywords: ['Joana'] });
    expect(first.status, first.text).toBe(201);
    const before = await monitorCount(team.id);

    const again = await addMonitor(team.owner, { entity_id: team.id, name: '  JOANA Oficial ', profiles: [{ nm_rede: 'x', username: 'joana' }] });
    expectError(again, 409, 'conflict');
    expect(again.body.error.details).toEqual([{ location: 'body', field: 'name', rule: 'unique_per_entity', message: expect.any(String), value: 'JOANA Oficial' }]);
    expect(await monitorCount(team.id)).toBe(before);

    const other = await newTeam('Outra Entidade');
    const elsewhere = await addMonitor(other.owner, { entity_id: other.id, name: 'Joana oficial', keywords: ['Joana'] });
    expect(elsewhere.status, elsewhere.text).toBe(201);
    expect(elsewhere.body.data).toMatchObject({ entity_id: other.id, name: 'Joana oficial' });
  });

  it('creates one monitor when the same name is sent twice at once (201 and 409)', async () => {
    const fresh = await newTeam();
    const body = { entity_id: fresh.id, name: 'Corrida', keywords: ['corrida'] };
    const results = await Promise.all([addMonitor(fresh.owner, body), addMonitor(fresh.owner, { ...body, name: 'CORRIDA' })]);
    expect(results.map((result) => result.status).sort()).toEqual([201, 409]);
    expect(await monitorCount(fresh.id)).toBe(1);
  });

  it('answers 400 to a body that is not JSON', async () => {
    const result = await addMonitor(operator, `{"entity_id": ${team.id}, "name": `);
    expectError(result, 400, 'bad_request');
  });
});

describe('GET /api/monitor_social/data/ (getSocialMonitorData)', () => {
  let teamA: Team;
  let teamB: Team;
  let teamC: Team;
  let member: TestUser;
  let stranger: TestUser;
  const ids = { a1: 0, a2: 0, b1: 0, c1: 0 };

  beforeAll(async () => {
    teamA = await newTeam('Entidade A');
    teamB = await newTeam('Entidade B');
    teamC = await newTeam('Entidade C Escondida');
    member = await createUser(app);
    stranger = await createUser(app);
    await join(teamA.id, member, 'operator');
    await join(teamB.id, member, 'viewer');
    ids.a1 = (await newMonitor(teamA)).id;
    ids.b1 = (await newMonitor(teamB)).id;
    ids.c1 = (await newMonitor(teamC)).id;
    ids.a2 = (await newMonitor(teamA, { keywords: ['a2'] })).id;
  });

  const idsOf = (result: Result) => result.body.data.map((monitor: Json) => monitor.id);

  it('lists exactly the monitors of the caller\'s teams, by id, to a member of two teams', async () => {
    const result = await readMonitors(member);
    expect(result.status, result.text).toBe(200);
    expect(result.body).toMatchObject({ success: true, message: '3 monitors.', request_id: result.headers.get('x-request-id') });
    expect(idsOf(result)).toEqual([ids.a1, ids.b1, ids.a2]);
    expect(result.body.data[1]).toEqual(await viewOf(ids.b1));

    const owner = await readMonitors(teamA.owner);
    expect(idsOf(owner)).toEqual([ids.a1, ids.a2]);
    expect(idsOf(await readMonitors(teamC.owner))).toEqual([ids.c1]);
  });

  it('answers an empty list to a user of no team', async () => {
    const result = await readMonitors(stranger);
    expect(result.status, result.text).toBe(200);
    expect(result.body).toEqual({ success: true, data: [], message: '0 monitors.', request_id: result.headers.get('x-request-id') });
  });

  it('lists every monitor to a platform admin, by id', async () => {
    const result = await readMonitors(platformAdmin);
    expect(result.status, result.text).toBe(200);
    const all = await app.sequelize.query<{ id: number }>('SELECT id FROM social_monitors ORDER BY id', { type: QueryTypes.SELECT });
    expect(idsOf(result)).toEqual(all.map((row) => Number(row.id)));
    expect(idsOf(result)).toEqual(expect.arrayContaining([ids.a1, ids.a2, ids.b1, ids.c1]));
  });

  it('answers one monitor with id_monitor, to any role of its team (a viewer included) and a platform admin', async () => {
    for (const caller of [member, teamB.owner, platformAdmin]) {
      const result = await readMonitors(caller, ids.b1);
      expect(result.status, result.text).toBe(200);
      expect(result.body.message).toBe('1 monitor.');
      expect(result.body.data).toEqual([expect.objectContaining({ id: ids.b1, entity_id: teamB.id })]);
    }
  });

  it('answers 404 alike for a monitor outside the caller\'s teams and one that does not exist', async () => {
    const foreign = await readMonitors(member, ids.c1);
    const missingId = 2147483600;
    const missing = await readMonitors(member, missingId);
    expectError(foreign, 404, 'not_found');
    expectError(missing, 404, 'not_found');
    expect(foreign.body.error.message).toBe(`There is no monitor ${ids.c1} in your teams.`);
    expect(missing.body.error.message).toBe(`There is no monitor ${missingId} in your teams.`);
    expect(foreign.body.error.details).toEqual([{ location: 'query', field: 'id_monitor', rule: 'in_your_teams', message: expect.any(String), value: expect.anything() }]);
    expect(missing.body.error.details).toEqual([{ ...foreign.body.error.details[0], value: expect.anything() }]);
    expect(String(foreign.body.error.details[0].value)).toBe(String(ids.c1));
    expect(String(missing.body.error.details[0].value)).toBe(String(missingId));
    expect(foreign.text).not.toContain('Escondida');
    expectError(await readMonitors(stranger, ids.a1), 404, 'not_found');
    // A ten-digit id is well-formed (IdString) but names no monitor.
    expectError(await readMonitors(member, '9999999999'), 404, 'not_found');
  });

  it.each([['abc'], ['0'], ['-1'], ['1.5'], ['']])('answers 400 for id_monitor=%s', async (value) => {
    const result = await readMonitors(member, value);
    expectError(result, 400, 'bad_request');
    expect(result.body.error.details).toContainEqual(expect.objectContaining({ location: 'query', field: 'id_monitor' }));
  });

  it('answers 400 for an unknown parameter and 401 without a valid key', async () => {
    expectError(await call('GET', `${DATA}?monitor=${ids.a1}`, member.headers), 400, 'bad_request');
    expectError(await readMonitors(undefined), 401, 'unauthorized');
    expectError(await readMonitors(undefined, ids.a1), 401, 'unauthorized');
  });
});

describe('latest_metrics and daily_series', () => {
  let team: Team;
  let monitor: Json;
  let sibling: Json;
  const sent: Record<string, Json> = {};

  beforeAll(async () => {
    team = await newTeam();
    monitor = await newMonitor(team, {
      profiles: [
        { nm_rede: 'instagram', username: 'maria' },
        { nm_rede: 'facebook', username: 'maria' },
        { nm_rede: 'tiktok', username: 'maria' },
      ],
    });
    sibling = await newMonitor(team, { profiles: [{ nm_rede: 'instagram', username: 'maria2' }] });
    Object.assign(sent, {
      // instagram: an old one outside the window, two on one day (the later counts: at 22:00 in
      // Brasília it is already the next day in UTC), and the newest.
      igOld: snapshot('instagram', dayAt(40, 12)),
      igDay3Late: snapshot('instagram', dayAt(3, 22)),
      igDay3Early: snapshot('instagram', dayAt(3, 8)),
      igNewest: snapshot('instagram', dayAt(1, 10), { followers: 1_000_000_000_000, engagement: 0.047 }),
      // facebook: only one, 40 days old: the latest, but outside the series.
      fbOld: snapshot('facebook', dayAt(40, 9)),
      // tiktok: the edges of the window and of Brasília's days.
      ttBeforeWindow: snapshot('tiktok', dayAt(30, 23, 59, 59, 999)),
      ttFirstDay: snapshot('tiktok', dayAt(29, 0, 0, 0, 0)),
      ttDay3LastMs: snapshot('tiktok', dayAt(3, 23, 59, 59, 999)),
      ttDay2FirstMs: snapshot('tiktok', dayAt(2, 0, 0, 0, 0)),
      ttDay3Earlier: snapshot('tiktok', dayAt(3, 21)),
    });
    // Sent in two imports and out of order: the result depends on taken_at only.
    const all = Object.values(sent);
    await imported(monitor.id, all.slice(5));
    await imported(monitor.id, all.slice(0, 5));
  });

  it('latest_metrics holds exactly the newest snapshot of each network, old ones included', async () => {
    const view = await viewOf(monitor.id, team.owner);
    expect(view.latest_metrics).toHaveLength(3);
    expect(byNetwork(view.latest_metrics)).toEqual([sent.fbOld, sent.igNewest, sent.ttDay2FirstMs]);
  });

  it("daily_series has the last snapshot per network and Brasília day of the last 30 days, by date then network", async () => {
    const view = await viewOf(monitor.id, team.owner);
    expect(view.daily_series).toEqual([
      pointOf(sent.ttFirstDay),
      pointOf(sent.igDay3Late),
      pointOf(sent.ttDay3LastMs),
      pointOf(sent.ttDay2FirstMs),
      pointOf(sent.igNewest),
    ]);
    // The dates are the Brasília days of those snapshots (the first one's is the 30th day back).
    expect(view.daily_series.map((point: Json) => point.date)).toEqual([29, 3, 3, 2, 1].map(brasiliaDayAgo));
    expect(sent.igDay3Late.taken_at.slice(0, 10)).toBe(brasiliaDayAgo(2)); // its UTC day is the next one
  });

  it('shows the same metrics in the list as with id_monitor, and none of them on another monitor', async () => {
    const list = await readMonitors(team.owner);
    expect(list.body.data).toEqual([await viewOf(monitor.id, team.owner), await viewOf(sibling.id, team.owner)]);
    const other = await viewOf(sibling.id, team.owner);
    expect(other.latest_metrics).toEqual([]);
    expect(other.daily_series).toEqual([]);
  });

  it('lists two networks of one day in network order', async () => {
    const fresh = await newMonitor(team, { profiles: [{ nm_rede: 'youtube', username: 'm' }, { nm_rede: 'facebook', username: 'm' }, { nm_rede: 'instagram', username: 'm' }] });
    const day5 = [snapshot('youtube', dayAt(5, 12)), snapshot('instagram', dayAt(5, 13)), snapshot('facebook', dayAt(5, 14))];
    const day4 = [snapshot('instagram', dayAt(4, 1)), snapshot('facebook', dayAt(4, 2))];
    await imported(fresh.id, [...day4, ...day5]);
    const view = await viewOf(fresh.id, team.owner);
    expect(view.daily_series).toEqual([day5[2], day5[1], day5[0], day4[1], day4[0]].map(pointOf));
    expect(byNetwork(view.latest_metrics)).toEqual([day4[1], day4[0], day5[0]]);
  });
});

describe('POST /api/monitor_social/import_metrics/ (importMonitorMetrics)', () => {
  let team: Team;
  let operator: TestUser;
  let monitor: Json;

  beforeAll(async () => {
    team = await newTeam();
    operator = await createUser(app);
    await join(team.id, operator, 'operator');
    monitor = await newMonitor(team, { profiles: [{ nm_rede: 'instagram', username: 'maria' }, { nm_rede: 'Facebook', link: 'https://facebook.com/maria' }] });
  });

  it('answers 403 to anyone but a platform admin, the monitor\'s owner included, and stores nothing', async () => {
    const body = { monitor_id: monitor.id, snapshots: [snapshot('instagram', dayAt(1, 12))] };
    for (const caller of [team.owner, operator, await createUser(app)]) {
      const result = await importMetrics(caller, body);
      expectError(result, 403, 'forbidden');
    }
    expectError(await importMetrics(team.owner, { ...body, monitor_id: 2147483000 }), 403, 'forbidden');
    expect(await snapshotCount(monitor.id)).toBe(0);
  });

  it('answers 404 for a monitor that does not exist, and 401 without a valid key', async () => {
    const missingId = 2147483000;
    const result = await importMetrics(platformAdmin, { monitor_id: missingId, snapshots: [snapshot('instagram', dayAt(1, 12))] });
    expectError(result, 404, 'not_found');
    expect(result.body.error.details).toEqual([{ location: 'body', field: 'monitor_id', rule: 'existing_monitor', message: expect.any(String), value: missingId }]);
    expectError(await importMetrics(undefined, { monitor_id: monitor.id, snapshots: [snapshot('instagram', dayAt(1, 12))] }), 401, 'unauthorized');
    expect(await snapshotCount(monitor.id)).toBe(0);
  });

  it('imports (200) and counts: new ones created, the same batch again unchanged, a corrected value replaced', async () => {
    const fresh = await newMonitor(team, { profiles: [{ nm_rede: 'instagram', username: 'maria' }, { nm_rede: 'facebook', username: 'maria' }] });
    const batch = [snapshot('instagram', dayAt(2, 10)), snapshot('instagram', dayAt(1, 10)), snapshot('facebook', dayAt(1, 10))];

    const first = await importMetrics(platformAdmin, { monitor_id: fresh.id, snapshots: batch });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({
      success: true,
      data: { monitor_id: fresh.id, received: 3, created: 3, replaced: 0, unchanged: 0 },
      message: `3 snapshots imported into monitor ${fresh.id}.`,
      request_id: first.headers.get('x-request-id'),
    });
    expect(await snapshotCount(fresh.id)).toBe(3);

    const again = await importMetrics(platformAdmin, { monitor_id: fresh.id, snapshots: batch });
    expect(again.status, again.text).toBe(200);
    expect(again.body.data).toEqual({ monitor_id: fresh.id, received: 3, created: 0, replaced: 0, unchanged: 3 });
    expect(await snapshotCount(fresh.id)).toBe(3);

    // The same moment written otherwise (another offset) is the same snapshot.
    const corrected = { ...batch[1], taken_at: new Date(batch[1].taken_at).toISOString().replace(/\.\d+Z$/, 'Z'), followers: batch[1].followers + 7, engagement: 0.5 };
    const fix = await importMetrics(platformAdmin, { monitor_id: fresh.id, snapshots: [batch[0], corrected, batch[2]] });
    expect(fix.body.data).toEqual({ monitor_id: fresh.id, received: 3, created: 0, replaced: 1, unchanged: 2 });
    expect(await snapshotCount(fresh.id)).toBe(3);
    const view = await viewOf(fresh.id);
    expect(byNetwork(view.latest_metrics)).toEqual([batch[2], { ...corrected, taken_at: batch[1].taken_at }]);

    const one = await importMetrics(platformAdmin, { monitor_id: fresh.id, snapshots: [snapshot('facebook', dayAt(3, 10))] });
    expect(one.body).toMatchObject({ data: { monitor_id: fresh.id, received: 1, created: 1, replaced: 0, unchanged: 0 }, message: `1 snapshot imported into monitor ${fresh.id}.` });

    const mixed = await importMetrics(platformAdmin, {
      monitor_id: fresh.id,
      snapshots: [snapshot('facebook', dayAt(4, 10)), { ...batch[0], mentions: batch[0].mentions + 1 }, batch[2]],
    });
    expect(mixed.body.data).toEqual({ monitor_id: fresh.id, received: 3, created: 1, replaced: 1, unchanged: 1 });
    expect(await snapshotCount(fresh.id)).toBe(5);
  });

  it('matches the network ignoring case, and stores it lower-cased', async () => {
    const fresh = await newMonitor(team, { profiles: [{ nm_rede: 'instagram', username: 'maria' }] });
    const takenAt = dayAt(1, 15);
    const first = await importMetrics(platformAdmin, { monitor_id: fresh.id, snapshots: [snapshot('Instagram', takenAt, { followers: 5, posts: 6, engagement: 0.25, mentions: 7 })] });
    expect(first.status, first.text).toBe(200);
    expect(first.body.data).toMatchObject({ created: 1 });
    const again = await importMetrics(platformAdmin, { monitor_id: fresh.id, snapshots: [snapshot(' INSTAGRAM ', takenAt, { followers: 5, posts: 6, engagement: 0.25, mentions: 7 })] });
    expect(again.status, again.text).toBe(200);
    expect(again.body.data).toMatchObject({ created: 0, unchanged: 1 });
    expect((await viewOf(fresh.id)).latest_metrics).toEqual([{ network: 'instagram', taken_at: takenAt, followers: 5, posts: 6, engagement: 0.25, mentions: 7 }]);
    // A profile network sent in capitals is watched lower-cased too.
    const watchedFacebook = await importMetrics(platformAdmin, { monitor_id: monitor.id, snapshots: [snapshot('facebook', dayAt(1, 15))] });
    expect(watchedFacebook.status, watchedFacebook.text).toBe(200);
  });

  it('accepts any network on a monitor that watches keywords only', async () => {
    const keywordsOnly = await newMonitor(team, { profiles: [], keywords: ['Maria Santos'] });
    const data = await imported(keywordsOnly.id, [snapshot('tiktok', dayAt(1, 9)), snapshot('Kwai', dayAt(1, 9))]);
    expect(data).toEqual({ monitor_id: keywordsOnly.id, received: 2, created: 2, replaced: 0, unchanged: 0 });
    expect(byNetwork((await viewOf(keywordsOnly.id)).latest_metrics).map((metric: Json) => metric.network)).toEqual(['kwai', 'tiktok']);
  });

  it('refuses snapshots before 2000 (typing mistakes, which SQLite\'s text dates would also misread) and keeps 2000-01-01 exactly', async () => {
    const keywordsOnly = await newMonitor(team, { profiles: [], keywords: ['História'] });
    const ancient = await importMetrics(platformAdmin, { monitor_id: keywordsOnly.id, snapshots: [snapshot('arquivo', '0001-01-01T00:00:00.000Z')] });
    expectError(ancient, 422, 'validation_failed');
    expect(ancient.body.error.details).toEqual([
      { location: 'body', field: 'snapshots.0.taken_at', rule: 'not_before_2000', message: 'must not be before 2000-01-01', value: '0001-01-01T00:00:00.000Z' },
    ]);
    const earliest = snapshot('arquivo', '2000-01-01T00:00:00.000Z');
    expect(await imported(keywordsOnly.id, [earliest])).toMatchObject({ created: 1 });
    expect((await viewOf(keywordsOnly.id)).latest_metrics).toEqual([earliest]);
    expect(await imported(keywordsOnly.id, [earliest])).toMatchObject({ created: 0, unchanged: 1 });
    expect(await snapshotCount(keywordsOnly.id)).toBe(1);
  });

  it('accepts a snapshot taken less than 5 minutes ahead of the server clock (clock skew)', async () => {
    const fresh = await newMonitor(team, { profiles: [{ nm_rede: 'instagram', username: 'maria' }] });
    const data = await imported(fresh.id, [snapshot('instagram', new Date(Date.now() + 60_000).toISOString())]);
    expect(data).toMatchObject({ created: 1 });
  });

  describe('answers 422 and stores nothing', () => {
    let target: Json;
    let stored: number;

    beforeAll(async () => {
      target = await newMonitor(team, { profiles: [{ nm_rede: 'instagram', username: 'maria' }, { nm_rede: 'facebook', username: 'maria' }] });
      await imported(target.id, [snapshot('instagram', dayAt(10, 10))]);
      stored = await snapshotCount(target.id);
    });

    const good = () => snapshot('instagram', dayAt(2, 10));
    const future = new Date(Date.now() + 10 * 60_000).toISOString();
    const sameMoment = dayAt(2, 3); // 03:00 in Brasília, 06:00 UTC
    const sameMomentOtherwise = new Date(Date.parse(sameMoment)).toISOString().replace('T06:', 'T03:').replace('Z', '-03:00');

    it.each([
      ['a network the monitor does not watch', () => [good(), snapshot('TikTok', dayAt(1, 10))], [
        { location: 'body', field: 'snapshots.1.network', rule: 'watched_network', message: 'must be a network the monitor watches (facebook, instagram)', value: 'TikTok' },
      ]],
      ['a snapshot taken more than 5 minutes in the future', () => [snapshot('instagram', future), good()], [
        { location: 'body', field: 'snapshots.0.taken_at', rule: 'not_in_future', message: 'must not be in the future', value: future },
      ]],
      ['two snapshots of one network and moment', () => [snapshot('facebook', sameMoment), good(), snapshot('Facebook', sameMomentOtherwise)], [
        { location: 'body', field: 'snapshots.2', rule: 'unique', message: 'repeats snapshots.0' },
      ]],
      ['a blank network', () => [good(), snapshot('   ', dayAt(1, 10))], [
        { location: 'body', field: 'snapshots.1.network', rule: 'not_blank', message: 'must not be blank' },
      ]],
      ['several problems at once', () => [snapshot('x', future), good(), snapshot('instagram', good().taken_at)], [
        { location: 'body', field: 'snapshots.0.network', rule: 'watched_network', message: expect.any(String), value: 'x' },
        { location: 'body', field: 'snapshots.0.taken_at', rule: 'not_in_future', message: 'must not be in the future', value: future },
        { location: 'body', field: 'snapshots.2', rule: 'unique', message: 'repeats snapshots.1' },
      ]],
    ])('for %s', async (_case, snapshots, details) => {
      const result = await importMetrics(platformAdmin, { monitor_id: target.id, snapshots: snapshots() });
      expectError(result, 422, 'validation_failed');
      expect(result.body.error.details).toEqual(details);
      expect(await snapshotCount(target.id)).toBe(stored);
      expect((await viewOf(target.id)).latest_metrics).toHaveLength(1);
    });

    it.each([
      ['negative followers', () => ({ snapshots: [good(), snapshot('instagram', dayAt(1, 10), { followers: -1 })] }), 'snapshots.1.followers', 'minimum'],
      ['fractional posts', () => ({ snapshots: [good(), snapshot('instagram', dayAt(1, 10), { posts: 1.5 })] }), 'snapshots.1.posts', 'type'],
      ['an engagement above 1000', () => ({ snapshots: [snapshot('instagram', dayAt(1, 10), { engagement: 1000.5 })] }), 'snapshots.0.engagement', 'maximum'],
      ['a taken_at that is no timestamp', () => ({ snapshots: [good(), snapshot('instagram', 'ontem')] }), 'snapshots.1.taken_at', 'format'],
      ['a snapshot without mentions', () => ({ snapshots: [good(), { network: 'instagram', taken_at: dayAt(1, 10), followers: 1, posts: 1, engagement: 0 }] }), 'snapshots.1.mentions', 'required'],
      ['an empty list of snapshots', () => ({ snapshots: [] }), 'snapshots', 'minItems'],
      ['no snapshots', () => ({}), 'snapshots', 'required'],
      ['monitor_id 0', () => ({ monitor_id: 0, snapshots: [good()] }), 'monitor_id', 'minimum'],
    ])('for %s (the schema)', async (_case, fields, field, rule) => {
      const result = await importMetrics(platformAdmin, { monitor_id: target.id, ...fields() });
      expectError(result, 422, 'validation_failed');
      expect(result.body.error.details).toContainEqual(expect.objectContaining({ location: 'body', field, rule }));
      expect(await snapshotCount(target.id)).toBe(stored);
    });

    it('and 400 for a body that is not JSON', async () => {
      expectError(await importMetrics(platformAdmin, `{"monitor_id": ${target.id}, "snapshots": [`), 400, 'bad_request');
      expect(await snapshotCount(target.id)).toBe(stored);
    });
  });
});

describe('the same import sent twice at once', () => {
  let team: Team;

  beforeAll(async () => {
    team = await newTeam();
  });

  it.each([
    ['different Idempotency-Keys', [{ 'Idempotency-Key': 'importacao-a' }, { 'Idempotency-Key': 'importacao-b' }]],
    ['no Idempotency-Key', [{}, {}]],
  ])('stores each snapshot once, with %s, and counts that add up', async (_case, headers) => {
    const monitor = await newMonitor(team, { profiles: [{ nm_rede: 'instagram', username: 'maria' }, { nm_rede: 'facebook', username: 'maria' }] });
    const batch = Array.from({ length: 40 }, (_, i) => snapshot(i % 2 ? 'instagram' : 'facebook', dayAt(1 + Math.floor(i / 2), 12)));
    const results = await Promise.all(headers.map((extra) => importMetrics(platformAdmin, { monitor_id: monitor.id, snapshots: batch }, extra)));
    for (const result of results) expect(result.status, result.text).toBe(200);
    const counts = results.map((result) => result.body.data).sort((a: Json, b: Json) => b.created - a.created);
    expect(counts).toEqual([
      { monitor_id: monitor.id, received: 40, created: 40, replaced: 0, unchanged: 0 },
      { monitor_id: monitor.id, received: 40, created: 0, replaced: 0, unchanged: 40 },
    ]);
    expect(await snapshotCount(monitor.id)).toBe(40);
    expect((await viewOf(monitor.id)).latest_metrics).toHaveLength(2);
  });
});

describe('texts that grow when lower-cased', () => {
  // 'İ' (Turkish dotted capital I) lower-cases to two characters ('i' + U+0307): a name or network at the
  // contract's maximum length grows past it once lower-cased. A name is only compared lower-cased, so it
  // is kept; a network is stored lower-cased, so one that no longer fits is a 422 naming the field.
  let team: Team;

  beforeAll(async () => {
    team = await newTeam('İzmir Santos');
  });

  it('keeps a 200-character name with an İ, whose lower-cased key has 201', async () => {
    const name = `İstanbul ${'a'.repeat(191)}`;
    const result = await addMonitor(team.owner, { entity_id: team.id, name, keywords: ['x'] });
    expect(result.status, result.text).toBe(201);
    const read = await readMonitors(team.owner, result.body.data.id);
    expect(read.status, read.text).toBe(200);
    expect(read.body.data[0].name).toBe(name);
    expectError(await addMonitor(team.owner, { entity_id: team.id, name: name.toUpperCase(), keywords: ['x'] }), 409, 'conflict');
  });

  it('refuses a 50-character profile network with an İ, which has 51 lower-cased', async () => {
    const network = `İ${'x'.repeat(49)}`;
    const result = await addMonitor(team.owner, { entity_id: team.id, name: 'Rede longa', profiles: [{ nm_rede: network, username: 'joana' }] });
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toEqual([
      { location: 'body', field: 'profiles.0.nm_rede', rule: 'maxLength', message: 'must not be longer than 50 characters once lower-cased', value: network },
    ]);
  });

  it('refuses an imported snapshot whose 50-character network has an İ, and stores nothing', async () => {
    const keywordsOnly = await newMonitor(team, { profiles: [], keywords: ['Turquia'] });
    const network = `İ${'x'.repeat(49)}`;
    const result = await importMetrics(platformAdmin, { monitor_id: keywordsOnly.id, snapshots: [snapshot(network, dayAt(1, 9))] });
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toEqual([
      { location: 'body', field: 'snapshots.0.network', rule: 'maxLength', message: 'must not be longer than 50 characters once lower-cased', value: network },
    ]);
    expect(await snapshotCount(keywordsOnly.id)).toBe(0);
  });
});
