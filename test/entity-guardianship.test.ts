/**
 * Guardianship links that outlive team membership (issue 18, item 3), through the real app with a real
 * job queue. A link lets the tutor's team compare the ward in strategy scenarios, and so read the ward's
 * name, marketshare and share of voice in their projections. A link stands only while its creator could
 * still create it (may change the tutor, may read the ward, active account); every use checks this at that
 * moment. Removing a member deletes the links they created from or to that entity, and the ward's owner
 * and admins list and remove the links that point at their entity (listWardLinks, removeWardLink).
 * Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { pino } from 'pino';
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMigrator } from '../src/db/migrator.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';
import { waitFor } from './helpers/process.js';
import { joinTeam } from './helpers/teams.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** What must never reach Mallory once she is out of Bruno's team: his entity's name and principal marketshare. */
const RIVAL_NAME = 'Bruno Rival Secreto';
const RIVAL_MARKETSHARE = 0.3777;

let app: TestApp;
let platformAdmin: TestUser;

const call = (method: 'GET' | 'POST', path: string, caller?: TestUser, body?: unknown) => request(app.baseUrl, method, path, caller?.headers ?? {}, body);

interface Campaign {
  owner: TestUser;
  entityId: number;
  monitorId: number;
}

/** A new owner with an entity and a monitor on it, with two snapshots of metrics. */
async function newCampaign(nome: string, marketshare: string, followers: number): Promise<Campaign> {
  const owner = await createUser(app);
  const entityId = await app.entities.store.create('candidato', owner.user.id, { nome, marketshare: [{ marketshare, tendency: 'up', principal: true }] });
  const created = await call('POST', '/api/monitor_social/add_monitor/', owner, {
    entity_id: entityId,
    name: `${nome} oficial`,
    profiles: [{ nm_rede: 'instagram', username: nome.toLowerCase().replace(/\W+/g, '') }],
  });
  expect(created.status, created.text).toBe(201);
  const monitorId = created.body.data.id;
  const imported = await call('POST', '/api/monitor_social/import_metrics/', platformAdmin, {
    monitor_id: monitorId,
    snapshots: [
      { network: 'instagram', taken_at: '2026-11-10T12:00:00Z', followers, posts: 10, engagement: 0.05, mentions: 3 },
      { network: 'instagram', taken_at: '2026-11-20T12:00:00Z', followers, posts: 12, engagement: 0.06, mentions: 5 },
    ],
  });
  expect(imported.status, imported.text).toBe(200);
  return { owner, entityId, monitorId };
}

const addOperator = (caller: TestUser, entityId: number, user: TestUser, role: 'admin' | 'operator' | 'viewer') => joinTeam(app.baseUrl, caller, user, entityId, role);
const removeOperator = (caller: TestUser, entityId: number, user: TestUser) => call('POST', '/api/operators/remove_operator/', caller, { entity_id: entityId, user_id: user.user.id });
const tutela = (caller: TestUser, query = '') => call('GET', `/api/entidade/tutela/${query ? `?${query}` : ''}`, caller);
const link = (caller: TestUser, tutor: number, ward: number, action: 'add' | 'remove' = 'add') => tutela(caller, `tutor=${tutor}&ward=${ward}&action=${action}`);
const ask = (caller: TestUser, monitorId: number, entityIds: number[]) =>
  call('POST', '/api/strategy/add_scenario_request/', caller, { monitor_id: monitorId, entity_ids: entityIds, horizon_days: 10 });
const approve = (caller: TestUser, monitorId: number, id: number) =>
  call('POST', '/api/strategy/approve_pending_scenario_requests/', caller, { selectedMonitorId: monitorId, scenarios_list: [id] });
const listScenarios = (caller: TestUser, monitorId: number) => call('GET', `/api/strategy/get_scenario_requests/?monitor_id=${monitorId}`, caller);
const wardLinks = (caller: TestUser, entityId: number | string) => call('GET', `/api/entidade/tutela/get_ward_links/?id=${entityId}`, caller);
const removeWardLink = (caller: TestUser | undefined, body: unknown) => call('POST', '/api/entidade/tutela/remove_ward_link/', caller, body);

/** The request as its monitor's list shows it once its run has ended. */
function settled(caller: TestUser, monitorId: number, id: number): Promise<Json> {
  return waitFor(
    async () => {
      const found = (await listScenarios(caller, monitorId)).body.data.results.find((scenario: Json) => scenario.id === id);
      return found?.state === 'completed' || found?.state === 'failed' ? found : undefined;
    },
    { timeoutMs: 20_000, what: `scenario request ${id} to finish`, intervalMs: 100 },
  );
}

async function linkRows(wardId: number): Promise<Array<{ tutor_id: number; created_by: number | null }>> {
  const rows = await app.sequelize.query<{ tutor_id: number; created_by: number | null }>('SELECT tutor_id, created_by FROM guardianship_links WHERE ward_id = :wardId ORDER BY id', {
    replacements: { wardId },
    type: QueryTypes.SELECT,
  });
  return rows.map((row) => ({ tutor_id: Number(row.tutor_id), created_by: row.created_by === null ? null : Number(row.created_by) }));
}

/** Nothing of the rival's entity in an answer: not its name, not its marketshare. */
function expectNothingOfRival(text: string): void {
  expect(text).not.toContain(RIVAL_NAME);
  expect(text).not.toContain(String(RIVAL_MARKETSHARE));
}

/** Mallory's campaign, and Bruno's rival campaign in which Mallory becomes a viewer and links her entity to his. */
async function mallorysLink(): Promise<{ mallory: Campaign; bruno: Campaign }> {
  const mallory = await newCampaign(`Mallory ${Math.random().toString(36).slice(2, 8)}`, '20', 1000);
  const bruno = await newCampaign(RIVAL_NAME, '37,77%', 800);
  expect((await addOperator(bruno.owner, bruno.entityId, mallory.owner, 'viewer')).status).toBe(200);
  const linked = await link(mallory.owner, mallory.entityId, bruno.entityId);
  expect(linked.status, linked.text).toBe(200);
  expect(linked.body.data.map((row: Json) => row.ward_id)).toContain(bruno.entityId);
  return { mallory, bruno };
}

beforeAll(async () => {
  app = await startTestApp({ withJobs: true });
  platformAdmin = await createAdmin(app);
});

afterAll(async () => {
  await app?.close();
});

describe('the attack: a viewer links her entity to a rival, is removed, and reads the rival through a projection', () => {
  it('refuses to compare the rival once the viewer is out of its team, so no projection carries it', async () => {
    const { mallory, bruno } = await mallorysLink();
    expect((await removeOperator(bruno.owner, bruno.entityId, mallory.owner)).status).toBe(200);

    const asked = await ask(mallory.owner, mallory.monitorId, [mallory.entityId, bruno.entityId]);
    if (asked.status === 201) {
      // What the flaw allowed: her own approval runs the projection, which shows the rival's data.
      await approve(mallory.owner, mallory.monitorId, asked.body.data.id);
      expectNothingOfRival(JSON.stringify(await settled(mallory.owner, mallory.monitorId, asked.body.data.id)));
    }
    expectError(asked, 422, 'validation_failed');
    expect(asked.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'entity_ids.1', rule: 'comparable_entity', value: bruno.entityId })]);
    expectNothingOfRival((await listScenarios(mallory.owner, mallory.monitorId)).text);
    expectNothingOfRival((await tutela(mallory.owner)).text);
  });

  it('does not run a request asked while she was in the team, and says why without naming the rival', async () => {
    const { mallory, bruno } = await mallorysLink();
    const asked = await ask(mallory.owner, mallory.monitorId, [mallory.entityId, bruno.entityId]);
    expect(asked.status, asked.text).toBe(201);
    expect((await removeOperator(bruno.owner, bruno.entityId, mallory.owner)).status).toBe(200);

    expect((await approve(mallory.owner, mallory.monitorId, asked.body.data.id)).status).toBe(200);
    const done = await settled(mallory.owner, mallory.monitorId, asked.body.data.id);
    expect(done.state).toBe('failed');
    expect(done.projection).toBeNull();
    expect(done.failure_reason).toBe(`Entity ${bruno.entityId} may no longer be compared on this monitor: it is neither in the requester's teams nor watched by the monitor's entity.`);
    expectNothingOfRival(JSON.stringify(done));
  });

  it('withholds a projection made while she was in the team once she is out of it', async () => {
    const { mallory, bruno } = await mallorysLink();
    const asked = await ask(mallory.owner, mallory.monitorId, [mallory.entityId, bruno.entityId]);
    expect((await approve(mallory.owner, mallory.monitorId, asked.body.data.id)).status).toBe(200);
    const before = await settled(mallory.owner, mallory.monitorId, asked.body.data.id);
    expect(before.state, before.failure_reason).toBe('completed');
    expect(before.projection.entities.map((row: Json) => [row.nome, row.marketshare])).toEqual([
      [expect.stringMatching(/^Mallory/), 0.2],
      [RIVAL_NAME, RIVAL_MARKETSHARE],
    ]);

    expect((await removeOperator(bruno.owner, bruno.entityId, mallory.owner)).status).toBe(200);
    const listed = await listScenarios(mallory.owner, mallory.monitorId);
    const after = listed.body.data.results.find((scenario: Json) => scenario.id === asked.body.data.id);
    expect(after).toMatchObject({ state: 'completed', projection: null });
    expect(after.failure_reason).toBe(`The projection is withheld: entity ${bruno.entityId} may no longer be compared on this monitor.`);
    expectNothingOfRival(listed.text);
    // Approving it again answers the request as it is: withheld there too.
    const again = await approve(mallory.owner, mallory.monitorId, asked.body.data.id);
    expect(again.body.data.results[0]).toMatchObject({ outcome: 'not_pending', scenario: { state: 'completed', projection: null } });
    expectNothingOfRival(again.text);
  });
});

describe('removing a member removes the links they created to or from that entity', () => {
  it('deletes the links of a member the owner removes, and of a member who leaves', async () => {
    const { mallory, bruno } = await mallorysLink();
    expect(await linkRows(bruno.entityId)).toEqual([{ tutor_id: mallory.entityId, created_by: mallory.owner.user.id }]);
    expect((await removeOperator(bruno.owner, bruno.entityId, mallory.owner)).status).toBe(200);
    expect(await linkRows(bruno.entityId)).toEqual([]);

    expect((await addOperator(bruno.owner, bruno.entityId, mallory.owner, 'viewer')).status).toBe(200);
    expect((await link(mallory.owner, mallory.entityId, bruno.entityId)).status).toBe(200);
    expect((await removeOperator(mallory.owner, bruno.entityId, mallory.owner)).status).toBe(200); // she leaves
    expect(await linkRows(bruno.entityId)).toEqual([]);
  });

  it("deletes an operator's links from the tutor when they leave its team, and keeps other members' links", async () => {
    const tutor = await newCampaign('Tutora', '30', 900);
    const ward = await newCampaign('Pupilo', '10', 700);
    const operator = await createUser(app);
    expect((await addOperator(tutor.owner, tutor.entityId, operator, 'operator')).status).toBe(200);
    expect((await addOperator(ward.owner, ward.entityId, operator, 'viewer')).status).toBe(200);
    expect((await link(operator, tutor.entityId, ward.entityId)).status).toBe(200);
    const otherWard = await app.entities.store.create('concorrente', tutor.owner.user.id, { nome: 'Concorrente da tutora' });
    expect((await link(tutor.owner, tutor.entityId, otherWard)).status).toBe(200);

    expect((await removeOperator(tutor.owner, tutor.entityId, operator)).status).toBe(200);
    expect(await linkRows(ward.entityId)).toEqual([]);
    expect(await linkRows(otherWard)).toEqual([{ tutor_id: tutor.entityId, created_by: tutor.owner.user.id }]);
  });
});

describe('every use checks that the link still stands', () => {
  it("stops a link whose creator's account is deactivated, and brings it back on reactivation", async () => {
    const { mallory, bruno } = await mallorysLink();
    const teammate = await createUser(app);
    expect((await addOperator(mallory.owner, mallory.entityId, teammate, 'operator')).status).toBe(200);
    expect((await ask(teammate, mallory.monitorId, [mallory.entityId, bruno.entityId])).status).toBe(201);

    await app.accounts.users.setActive(mallory.owner.user.id, false);
    expectError(await ask(teammate, mallory.monitorId, [mallory.entityId, bruno.entityId]), 422, 'validation_failed');
    const listed = await tutela(teammate);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([]);
    expectNothingOfRival(listed.text);

    await app.accounts.users.setActive(mallory.owner.user.id, true);
    expect((await ask(teammate, mallory.monitorId, [mallory.entityId, bruno.entityId])).status).toBe(201);
  });

  it('stops a link stored without a creator (written around the app), and adding it again makes the caller its creator', async () => {
    const tutor = await newCampaign('Sem criador', '25', 600);
    const ward = await app.entities.store.create('concorrente', tutor.owner.user.id, { nome: 'Pupilo sem criador' });
    await app.entities.models.Guardianship.create({ tutor_id: tutor.entityId, ward_id: ward, created_at: new Date() });
    expect((await tutela(tutor.owner)).body.data).toEqual([]);

    const added = await link(tutor.owner, tutor.entityId, ward);
    expect(added.body.data.map((row: Json) => row.ward_id)).toEqual([ward]);
    expect(await linkRows(ward)).toEqual([{ tutor_id: tutor.entityId, created_by: tutor.owner.user.id }]);
  });
});

describe('GET /api/entidade/tutela/get_ward_links/ (listWardLinks) and POST /api/entidade/tutela/remove_ward_link/ (removeWardLink)', () => {
  let mallory: Campaign;
  let bruno: Campaign;
  let admin: TestUser;
  let operator: TestUser;
  let viewer: TestUser;
  let stranger: TestUser;

  beforeAll(async () => {
    ({ mallory, bruno } = await mallorysLink());
    [admin, operator, viewer, stranger] = (await Promise.all([1, 2, 3, 4].map(() => createUser(app)))) as [TestUser, TestUser, TestUser, TestUser];
    expect((await addOperator(bruno.owner, bruno.entityId, admin, 'admin')).status).toBe(200);
    expect((await addOperator(bruno.owner, bruno.entityId, operator, 'operator')).status).toBe(200);
    expect((await addOperator(bruno.owner, bruno.entityId, viewer, 'viewer')).status).toBe(200);
  });

  it("lists the links that point at the entity, with their creator, to its owner, its admins and platform admins", async () => {
    for (const caller of [bruno.owner, admin, platformAdmin]) {
      const listed = await wardLinks(caller, bruno.entityId);
      expect(listed.status, listed.text).toBe(200);
      expect(listed.body).toMatchObject({ success: true, message: '1 link points at this entity.' });
      expect(listed.body.data).toEqual([
        {
          id: expect.any(Number),
          tutor_id: mallory.entityId,
          tutor_nome: expect.stringMatching(/^Mallory/),
          ward_id: bruno.entityId,
          ward_nome: RIVAL_NAME,
          ward_tp: 'candidato',
          created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
          created_by: { id: mallory.owner.user.id, display_name: `${mallory.owner.user.first_name} ${mallory.owner.user.last_name}` },
          standing: true,
        },
      ]);
    }
  });

  it('shows a link whose creator is deactivated as not standing', async () => {
    await app.accounts.users.setActive(mallory.owner.user.id, false);
    try {
      const listed = await wardLinks(bruno.owner, bruno.entityId);
      expect(listed.body.data.map((row: Json) => row.standing)).toEqual([false]);
    } finally {
      await app.accounts.users.setActive(mallory.owner.user.id, true);
    }
  });

  it('answers 403 to operators and viewers of the entity, 404 to strangers and for unknown entities, 400 without an id, 401 without a key', async () => {
    expectError(await wardLinks(operator, bruno.entityId), 403, 'forbidden');
    expectError(await wardLinks(viewer, bruno.entityId), 403, 'forbidden');
    const foreign = await wardLinks(stranger, bruno.entityId);
    expectError(foreign, 404, 'not_found');
    expect(foreign.body.error.details).toEqual([expect.objectContaining({ location: 'query', field: 'id', value: bruno.entityId })]);
    expectNothingOfRival(foreign.text);
    expectError(await wardLinks(bruno.owner, 2_000_000_000), 404, 'not_found');
    expectError(await call('GET', '/api/entidade/tutela/get_ward_links/', bruno.owner), 400, 'bad_request');
    expectError(await wardLinks(bruno.owner, 'abc'), 400, 'bad_request');
    expectError(await call('GET', `/api/entidade/tutela/get_ward_links/?id=${bruno.entityId}`), 401, 'unauthorized');
  });

  it('refuses to remove a link to operators, viewers and strangers, and a link that points at another entity', async () => {
    const [row] = (await wardLinks(bruno.owner, bruno.entityId)).body.data;
    const body = { entity_id: bruno.entityId, link_id: row.id };
    expectError(await removeWardLink(operator, body), 403, 'forbidden');
    expectError(await removeWardLink(viewer, body), 403, 'forbidden');
    expectError(await removeWardLink(stranger, body), 404, 'not_found');
    expectError(await removeWardLink(undefined, body), 401, 'unauthorized');
    // The owner of the tutor is no one's admin here: the link points at Bruno's entity, not hers.
    const elsewhere = await removeWardLink(mallory.owner, { entity_id: mallory.entityId, link_id: row.id });
    expectError(elsewhere, 404, 'not_found');
    expect(elsewhere.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'link_id', rule: 'points_at_entity', value: row.id })]);
    expectError(await removeWardLink(bruno.owner, { entity_id: bruno.entityId }), 422, 'validation_failed');
    expect(await linkRows(bruno.entityId)).toHaveLength(1);
  });

  it('lets an admin of the ward remove the link: the tutor may no longer compare it, and removing it again is 404', async () => {
    const [row] = (await wardLinks(admin, bruno.entityId)).body.data;
    const removed = await removeWardLink(admin, { entity_id: bruno.entityId, link_id: row.id });
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body).toMatchObject({ success: true, data: { removed: true }, message: 'The link was removed.' });
    expect(await linkRows(bruno.entityId)).toEqual([]);
    expect((await wardLinks(bruno.owner, bruno.entityId)).body.data).toEqual([]);
    expectError(await removeWardLink(bruno.owner, { entity_id: bruno.entityId, link_id: row.id }), 404, 'not_found');
    // Mallory is still a viewer of Bruno's entity: she may compare it directly, but her teammates no longer may.
    const teammate = await createUser(app);
    expect((await addOperator(mallory.owner, mallory.entityId, teammate, 'operator')).status).toBe(200);
    expectError(await ask(teammate, mallory.monitorId, [mallory.entityId, bruno.entityId]), 422, 'validation_failed');
  });
});

describe('migration 0018', () => {
  it("counts the links made before it as created by their tutor's owner; down removes the column", async () => {
    const owner = await createUser(app);
    const other = await createUser(app);
    const tutor = await app.entities.store.create('candidato', owner.user.id, { nome: 'Antes da migração' });
    const ward = await app.entities.store.create('concorrente', other.user.id, { nome: 'Pupilo antigo' });
    const migrator = createMigrator(app.sequelize, pino({ level: 'silent' }));
    const columns = async () => Object.keys(await app.sequelize.getQueryInterface().describeTable('guardianship_links'));
    await migrator.down({ to: '0018-guardianship-creators' });
    try {
      expect(await columns()).not.toContain('created_by');
      await app.sequelize.getQueryInterface().bulkInsert('guardianship_links', [{ tutor_id: tutor, ward_id: ward, created_at: new Date() }]);
    } finally {
      await migrator.up();
    }
    expect(await linkRows(ward)).toEqual([{ tutor_id: tutor, created_by: owner.user.id }]);
    // The tutor's owner is not in the ward's team: the old link does not stand.
    expect((await wardLinks(other, ward)).body.data.map((row: Json) => [row.created_by?.id, row.standing])).toEqual([[owner.user.id, false]]);
  });
});
