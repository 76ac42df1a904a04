/**
 * Strategy scenario operations through the real app and the contract validator (requests and responses):
 * asking for a scenario (createScenarioRequest: roles, comparable entities, schema limits), listing a
 * monitor's requests (listScenarioRequests: order, state filter, pages), approving and rejecting them
 * (approvePendingScenarioRequests, rejectPendingScenarioRequests: outcomes per id in order, roles, limits,
 * Idempotency-Key replay, two approvals racing), and how a run ends (Strategy.run called directly: a
 * projection that cannot be made, an unexpected error with and without a retry to follow, a request no
 * longer approved, a queue that refuses the job). The happy path with a real queue is strategy-flow.test.ts.
 * Two apps: one with a real job queue, one without (so nothing but the test runs a scenario).
 * Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request, type Result } from './helpers/http.js';
import type { ScenarioProjection } from '../src/strategy/projection.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MISSING_ID = 2147483647;
const NOT_COMPARABLE = "must be an entity of your teams or one the monitor's entity watches";

const ASK = '/api/strategy/add_scenario_request/';
const LIST = '/api/strategy/get_scenario_requests/';
const APPROVE = '/api/strategy/approve_pending_scenario_requests/';
const REJECT = '/api/strategy/reject_pending_scenario_requests/';

/** The app with a real job queue: approving queues runs, which the queue then runs. */
let app: TestApp;
let owner: TestUser;
let teamAdmin: TestUser;
let operator: TestUser;
let viewer: TestUser;
let platformAdmin: TestUser;
let stranger: TestUser;
/** Owns the entities outside the team. */
let outsider: TestUser;
/** The team's entity, whose monitor the requests are made on. */
let candidateId: number;
/** Another entity of the owner only (the other members are not in its team). */
let ownerOtherId: number;
/** The outsider's entity the candidate watches (guardianship tutor = candidate). */
let watchedId: number;
/** The outsider's entity nobody in the team may compare. */
let foreignId: number;
/** The outsider's entity that watches the candidate (the link the wrong way round). */
let watcherId: number;
let monitorId: number;
/** A monitor of the owner's other entity: its requests are not the candidate monitor's. */
let otherMonitorId: number;

const as = (caller: TestUser | undefined, headers: Record<string, string> = {}) => ({ ...caller?.headers, ...headers });
const ask = (caller: TestUser | undefined, body: unknown) => request(app.baseUrl, 'POST', ASK, as(caller), body);
const approve = (caller: TestUser | undefined, body: unknown, headers: Record<string, string> = {}) => request(app.baseUrl, 'POST', APPROVE, as(caller, headers), body);
const reject = (caller: TestUser | undefined, body: unknown) => request(app.baseUrl, 'POST', REJECT, as(caller), body);
const list = (caller: TestUser | undefined, query: Record<string, string>, target: TestApp = app) =>
  request(target.baseUrl, 'GET', `${LIST}?${new URLSearchParams(query)}`, as(caller));

async function newMonitor(target: TestApp, entityId: number, name: string, createdBy: TestUser): Promise<number> {
  const created = await target.monitors.store.create({ entityId, name, keywords: ['x'], profiles: [], createdBy: createdBy.user.id });
  if (created === 'name_taken') throw new Error(`monitor name ${name} taken`);
  return created.id;
}

/** A pending request made directly through the store (the tests of createScenarioRequest go through HTTP). */
async function pending(monitor = monitorId, entityIds = [candidateId, watchedId], target: TestApp = app, requestedBy: TestUser = owner): Promise<number> {
  return (await target.strategy.scenarios.create({ monitorId: monitor, entityIds, horizonDays: 30, requestedBy: requestedBy.user.id })).id;
}

async function stored(id: number, target: TestApp = app): Promise<Json> {
  return target.strategy.scenarios.byId(id);
}

/** A projection the contract accepts, for requests moved to completed by hand. */
const someProjection = (): ScenarioProjection => ({
  as_of: '2026-11-20T12:00:00.000Z',
  window_days: 30,
  horizon_days: 30,
  entities: [
    { entity_id: candidateId, nome: 'Maria Santos', share_of_voice: 0.6, share_of_voice_trend: 0.01, marketshare: null, tendency: 0, current_share: 0.6, projected_share: 0.6 },
    { entity_id: watchedId, nome: 'João Pereira', share_of_voice: 0.4, share_of_voice_trend: -0.01, marketshare: null, tendency: 0, current_share: 0.4, projected_share: 0.4 },
  ],
});

beforeAll(async () => {
  app = await startTestApp({ withJobs: true });
  [owner, teamAdmin, operator, viewer, stranger, outsider] = (await Promise.all([1, 2, 3, 4, 5, 6].map(() => createUser(app)))) as [TestUser, TestUser, TestUser, TestUser, TestUser, TestUser];
  platformAdmin = await createAdmin(app);
  candidateId = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
  ownerOtherId = await app.entities.store.create('partido', owner.user.id, { nome: 'Partido da Maria' });
  watchedId = await app.entities.store.create('concorrente', outsider.user.id, { nome: 'João Pereira' });
  foreignId = await app.entities.store.create('concorrente', outsider.user.id, { nome: 'Alheio' });
  watcherId = await app.entities.store.create('candidato', outsider.user.id, { nome: 'Observador' });
  const { Member, Guardianship } = app.entities.models;
  for (const [user, role] of [[teamAdmin, 'admin'], [operator, 'operator'], [viewer, 'viewer']] as const) {
    await Member.create({ entity_id: candidateId, user_id: user.user.id, role, added_at: new Date() });
  }
  // The links stand: their creator may change their tutor and is in their ward's team (entities/guardianship.ts).
  const linker = await createUser(app);
  for (const [entityId, role] of [[candidateId, 'operator'], [watchedId, 'viewer'], [watcherId, 'operator']] as const) {
    await Member.create({ entity_id: entityId, user_id: linker.user.id, role, added_at: new Date() });
  }
  await Guardianship.create({ tutor_id: candidateId, ward_id: watchedId, created_by: linker.user.id, created_at: new Date() });
  await Guardianship.create({ tutor_id: watcherId, ward_id: candidateId, created_by: linker.user.id, created_at: new Date() });
  monitorId = await newMonitor(app, candidateId, 'Maria oficial', owner);
  otherMonitorId = await newMonitor(app, ownerOtherId, 'Partido oficial', owner);
});

afterAll(async () => {
  await app?.close();
});

describe('POST /api/strategy/add_scenario_request/ (createScenarioRequest)', () => {
  it('creates a pending request for an owner, a team admin, an operator and a platform admin, keeping the order of entity_ids', async () => {
    for (const [caller, horizon] of [[owner, 1], [teamAdmin, 30], [operator, 200], [platformAdmin, 365]] as const) {
      const before = Date.now();
      const result = await ask(caller, { monitor_id: monitorId, entity_ids: [watchedId, candidateId], horizon_days: horizon });
      expect(result.status, result.text).toBe(201);
      const data = result.body.data;
      expect(data).toEqual({
        id: expect.any(Number),
        monitor_id: monitorId,
        entity_ids: [watchedId, candidateId],
        horizon_days: horizon,
        state: 'pending',
        requested_by: caller.user.id,
        decided_by: null,
        decided_at: null,
        rejection_reason: null,
        failure_reason: null,
        projection: null,
        created_at: expect.stringMatching(ISO),
        updated_at: data.created_at,
      });
      expect(Date.parse(data.created_at)).toBeGreaterThanOrEqual(before - 1000);
      expect(result.body).toMatchObject({ success: true, message: `Scenario request ${data.id} is pending approval.`, request_id: result.headers.get('x-request-id') });
      expect(await stored(data.id)).toEqual(data);
    }
  });

  it('accepts an entity of the caller\'s teams, and one the monitor\'s entity watches though the caller is not in its team', async () => {
    const own = await ask(owner, { monitor_id: monitorId, entity_ids: [candidateId, ownerOtherId, watchedId], horizon_days: 7 });
    expect(own.status, own.text).toBe(201);
    expect(own.body.data.entity_ids).toEqual([candidateId, ownerOtherId, watchedId]);

    // The operator is in neither the watched entity's team nor the owner's other entity's team.
    expect(await app.entities.teams.rolesOf({ user: operator.user } as never, [watchedId, ownerOtherId])).toEqual(new Map());
    const watched = await ask(operator, { monitor_id: monitorId, entity_ids: [candidateId, watchedId], horizon_days: 7 });
    expect(watched.status, watched.text).toBe(201);
    const notHis = await ask(operator, { monitor_id: monitorId, entity_ids: [candidateId, ownerOtherId], horizon_days: 7 });
    expectError(notHis, 422, 'validation_failed');
    expect(notHis.body.error.details).toEqual([{ location: 'body', field: 'entity_ids.1', rule: 'comparable_entity', message: NOT_COMPARABLE, value: ownerOtherId }]);
  });

  it('refuses a foreign entity and a missing id alike (entity_ids.<index>, comparable_entity), and creates nothing', async () => {
    const before = (await app.strategy.scenarios.page(monitorId, undefined, 1, 30)).total;
    const result = await ask(owner, { monitor_id: monitorId, entity_ids: [candidateId, foreignId, MISSING_ID, watchedId, watcherId], horizon_days: 30 });
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toEqual([
      { location: 'body', field: 'entity_ids.1', rule: 'comparable_entity', message: NOT_COMPARABLE, value: foreignId },
      { location: 'body', field: 'entity_ids.2', rule: 'comparable_entity', message: NOT_COMPARABLE, value: MISSING_ID },
      // A link the wrong way round (the entity watches the candidate) does not make it comparable.
      { location: 'body', field: 'entity_ids.4', rule: 'comparable_entity', message: NOT_COMPARABLE, value: watcherId },
    ]);
    expect((await app.strategy.scenarios.page(monitorId, undefined, 1, 30)).total).toBe(before);
  });

  it('is 403 for a viewer, 404 for a stranger (whatever the entities) and for a missing monitor, 401 without a key', async () => {
    const body = { monitor_id: monitorId, entity_ids: [candidateId, watchedId], horizon_days: 30 };
    const forViewer = await ask(viewer, body);
    expectError(forViewer, 403, 'forbidden');

    const forStranger = await ask(stranger, body);
    expectError(forStranger, 404, 'not_found');
    expect(forStranger.body.error.details).toEqual([{ location: 'body', field: 'monitor_id', rule: 'in_your_teams', message: 'must be a monitor of one of your teams', value: monitorId }]);
    // Entities the stranger could not compare do not turn the answer into a 422 that would reveal the monitor.
    const strangerBadEntities = await ask(stranger, { ...body, entity_ids: [foreignId, MISSING_ID] });
    expectError(strangerBadEntities, 404, 'not_found');
    expect(strangerBadEntities.body.error.message).toBe(forStranger.body.error.message);
    // A body that breaks the schema is refused by the validator before any monitor is looked up: the
    // stranger gets the same 422 as a member, which says nothing about the monitor.
    const schemaBroken = { ...body, entity_ids: [candidateId] };
    const strangerSchema = await ask(stranger, schemaBroken);
    expectError(strangerSchema, 422, 'validation_failed');
    expect(strangerSchema.body.error).toEqual((await ask(owner, schemaBroken)).body.error);

    const missing = await ask(owner, { ...body, monitor_id: MISSING_ID });
    expectError(missing, 404, 'not_found');
    expect(missing.body.error.message.replace(String(MISSING_ID), 'N')).toBe(forStranger.body.error.message.replace(String(monitorId), 'N'));

    expectError(await ask(undefined, body), 401, 'unauthorized');
    expect((await app.strategy.scenarios.page(monitorId, undefined, 1, 30)).requests.some((scenario) => [viewer.user.id, stranger.user.id].includes(scenario.requested_by!))).toBe(false);
  });

  it.each([
    ['one entity only', { entity_ids: [1] }, 'entity_ids', 'minItems'],
    ['11 entities', { entity_ids: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] }, 'entity_ids', 'maxItems'],
    ['a repeated id', { entity_ids: [1, 2, 1] }, 'entity_ids', 'uniqueItems'],
    ['horizon_days 0', { horizon_days: 0 }, 'horizon_days', 'minimum'],
    ['horizon_days 366', { horizon_days: 366 }, 'horizon_days', 'maximum'],
    ['no monitor_id', { monitor_id: undefined }, 'monitor_id', 'required'],
  ])('is 422 for %s', async (_, change, field, rule) => {
    const body = { monitor_id: monitorId, entity_ids: [candidateId, watchedId], horizon_days: 30, ...change };
    const result = await ask(owner, JSON.parse(JSON.stringify(body)));
    expectError(result, 422, 'validation_failed');
    expect(result.body.error.details).toContainEqual(expect.objectContaining({ location: 'body', field, rule }));
  });
});

describe('GET /api/strategy/get_scenario_requests/ (listScenarioRequests)', () => {
  let pagedMonitorId: number;
  /** The paged monitor's requests, oldest first. */
  const ids: number[] = [];
  const rejectedIndexes = [5, 20];

  beforeAll(async () => {
    pagedMonitorId = await newMonitor(app, candidateId, 'Monitor paginado', owner);
    const start = Date.now() - 3_600_000;
    for (let index = 0; index < 33; index += 1) {
      const created = await app.strategy.scenarios.create(
        { monitorId: pagedMonitorId, entityIds: [candidateId, watchedId], horizonDays: index + 1, requestedBy: operator.user.id },
        new Date(start + index * 1000),
      );
      ids.push(created.id);
    }
    for (const index of rejectedIndexes) {
      expect(await app.strategy.scenarios.reject(ids[index]!, `Motivo ${index}`, { deciderId: owner.user.id })).toBe(true);
    }
  });

  const newestFirst = (chosen: number[]) => [...chosen].reverse();
  const pendingIds = () => ids.filter((_, index) => !rejectedIndexes.includes(index));

  it('lists newest first, 30 per page, with links that keep monitor_id', async () => {
    const first = await list(owner, { monitor_id: String(pagedMonitorId) });
    expect(first.status, first.text).toBe(200);
    const page1 = first.body.data;
    expect(page1).toMatchObject({ count: 33, total_pages: 2, links: { previous: null } });
    expect(page1.results.map((scenario: Json) => scenario.id)).toEqual(newestFirst(ids).slice(0, 30));
    expect(first.body.message).toBe('33 scenario requests.');
    const next = new URL(page1.links.next);
    expect(next.pathname).toBe(LIST);
    expect(Object.fromEntries(next.searchParams)).toEqual({ monitor_id: String(pagedMonitorId), page: '2' });

    const second = await list(owner, { monitor_id: String(pagedMonitorId), page: '2' });
    expect(second.status, second.text).toBe(200);
    expect(second.body.data.results.map((scenario: Json) => scenario.id)).toEqual(newestFirst(ids).slice(30));
    expect(second.body.data.links.next).toBeNull();
    expect(Object.fromEntries(new URL(second.body.data.links.previous).searchParams)).toEqual({ monitor_id: String(pagedMonitorId), page: '1' });
  });

  it('filters by state; the page links keep the state; page 1 asked explicitly links to page 2', async () => {
    const first = await list(owner, { monitor_id: String(pagedMonitorId), state: 'pending', page: '1' });
    expect(first.status, first.text).toBe(200);
    expect(first.body.data).toMatchObject({ count: 31, total_pages: 2, links: { previous: null } });
    expect(first.body.data.results.map((scenario: Json) => scenario.id)).toEqual(newestFirst(pendingIds()).slice(0, 30));
    expect(first.body.data.results.every((scenario: Json) => scenario.state === 'pending')).toBe(true);
    expect(Object.fromEntries(new URL(first.body.data.links.next).searchParams)).toEqual({ monitor_id: String(pagedMonitorId), state: 'pending', page: '2' });

    const second = await list(owner, { monitor_id: String(pagedMonitorId), state: 'pending', page: '2' });
    expect(second.status, second.text).toBe(200);
    expect(second.body.data).toMatchObject({ count: 31, total_pages: 2, links: { next: null } });
    expect(second.body.data.results.map((scenario: Json) => scenario.id)).toEqual([ids[0]]);
    expect(Object.fromEntries(new URL(second.body.data.links.previous).searchParams)).toEqual({ monitor_id: String(pagedMonitorId), state: 'pending', page: '1' });

    const rejected = await list(viewer, { monitor_id: String(pagedMonitorId), state: 'rejected' });
    expect(rejected.status, rejected.text).toBe(200);
    expect(rejected.body.data).toMatchObject({ count: 2, total_pages: 1, links: { next: null, previous: null } });
    expect(rejected.body.data.results.map((scenario: Json) => [scenario.id, scenario.state, scenario.rejection_reason, scenario.decided_by])).toEqual([
      [ids[20], 'rejected', 'Motivo 20', owner.user.id],
      [ids[5], 'rejected', 'Motivo 5', owner.user.id],
    ]);

    const none = await list(owner, { monitor_id: String(pagedMonitorId), state: 'completed' });
    expect(none.body.data).toEqual({ links: { next: null, previous: null }, count: 0, total_pages: 1, results: [] });
    expect(none.body.message).toBe('0 scenario requests.');
  });

  it('is 404 past the last page', async () => {
    const past = await list(owner, { monitor_id: String(pagedMonitorId), state: 'pending', page: '3' });
    expectError(past, 404, 'not_found');
    expect(past.body.error.details).toEqual([{ location: 'query', field: 'page', rule: 'max_page', message: 'must be <= 2', value: 3 }]);
    expectError(await list(owner, { monitor_id: String(pagedMonitorId), state: 'completed', page: '2' }), 404, 'not_found');
  });

  it('is 400 without monitor_id, with a bad monitor_id or state, or page 0', async () => {
    expectError(await list(owner, {}), 400, 'bad_request');
    expectError(await list(owner, { monitor_id: 'abc' }), 400, 'bad_request');
    expectError(await list(owner, { monitor_id: '0' }), 400, 'bad_request');
    const bogus = await list(owner, { monitor_id: String(pagedMonitorId), state: 'bogus' });
    expectError(bogus, 400, 'bad_request');
    expect(bogus.body.error.details).toContainEqual(expect.objectContaining({ location: 'query', field: 'state' }));
    expectError(await list(owner, { monitor_id: String(pagedMonitorId), page: '0' }), 400, 'bad_request');
  });

  it('lets every team role read, and is 404 for a stranger and a missing monitor, 401 without a key', async () => {
    for (const caller of [owner, teamAdmin, operator, viewer, platformAdmin]) {
      const result = await list(caller, { monitor_id: String(pagedMonitorId), state: 'rejected' });
      expect(result.status, result.text).toBe(200);
      expect(result.body.data.count).toBe(2);
    }
    const forStranger = await list(stranger, { monitor_id: String(pagedMonitorId) });
    expectError(forStranger, 404, 'not_found');
    expect(forStranger.body.error.details).toEqual([{ location: 'query', field: 'monitor_id', rule: 'in_your_teams', message: 'must be a monitor of one of your teams', value: pagedMonitorId }]);
    expectError(await list(owner, { monitor_id: String(MISSING_ID) }), 404, 'not_found');
    expectError(await list(undefined, { monitor_id: String(pagedMonitorId) }), 401, 'unauthorized');
  });

  it('is 404, not 500, for a monitor_id the contract allows but no id can reach (10 digits)', async () => {
    expectError(await list(owner, { monitor_id: '9999999999' }), 404, 'not_found');
  });
});

describe('POST /api/strategy/approve_pending_scenario_requests/ (approvePendingScenarioRequests)', () => {
  it('answers per id in the order asked: approved (with the queued job), not_pending, not_found (missing, or of another monitor)', async () => {
    const toApprove = await pending();
    const alreadyRejected = await pending();
    await app.strategy.scenarios.reject(alreadyRejected, 'Não.', { deciderId: owner.user.id });
    const ofOtherMonitor = await pending(otherMonitorId, [ownerOtherId, candidateId]);

    const result = await approve(owner, { selectedMonitorId: monitorId, scenarios_list: [toApprove, alreadyRejected, MISSING_ID, ofOtherMonitor] });
    expect(result.status, result.text).toBe(200);
    const data = result.body.data;
    expect(data.monitor_id).toBe(monitorId);
    expect(data.approved).toBe(1);
    expect(result.body.message).toBe('1 of 4 scenario requests approved.');
    expect(data.results.map((outcome: Json) => [outcome.scenario_id, outcome.outcome])).toEqual([
      [toApprove, 'approved'],
      [alreadyRejected, 'not_pending'],
      [MISSING_ID, 'not_found'],
      [ofOtherMonitor, 'not_found'],
    ]);
    const [approved, notPending, missing, other] = data.results;
    expect(approved.job_id).toMatch(UUID);
    expect(approved.scenario).toMatchObject({ id: toApprove, decided_by: owner.user.id, decided_at: expect.stringMatching(ISO), rejection_reason: null });
    expect(['approved', 'running', 'failed', 'completed']).toContain(approved.scenario.state);
    const job = await app.jobs!.get('scenario-run', approved.job_id);
    expect(job?.data).toEqual({ scenario_id: toApprove });
    expect(notPending).toEqual({ scenario_id: alreadyRejected, outcome: 'not_pending', job_id: null, scenario: expect.objectContaining({ id: alreadyRejected, state: 'rejected', rejection_reason: 'Não.' }) });
    expect(missing).toEqual({ scenario_id: MISSING_ID, outcome: 'not_found', job_id: null, scenario: null });
    expect(other).toEqual({ scenario_id: ofOtherMonitor, outcome: 'not_found', job_id: null, scenario: null });
    // The other monitor's request was not touched.
    expect(await stored(ofOtherMonitor)).toMatchObject({ state: 'pending', decided_by: null, decided_at: null });
  });

  it('is 403 for an operator and a viewer, 404 for a stranger and a missing monitor, 401 without a key; the requests stay pending', async () => {
    const id = await pending();
    const body = { selectedMonitorId: monitorId, scenarios_list: [id] };
    for (const caller of [operator, viewer]) {
      const result = await approve(caller, body);
      expectError(result, 403, 'forbidden');
    }
    const forStranger = await approve(stranger, body);
    expectError(forStranger, 404, 'not_found');
    expect(forStranger.body.error.details).toEqual([{ location: 'body', field: 'selectedMonitorId', rule: 'in_your_teams', message: 'must be a monitor of one of your teams', value: monitorId }]);
    expectError(await approve(owner, { ...body, selectedMonitorId: MISSING_ID }), 404, 'not_found');
    expectError(await approve(undefined, body), 401, 'unauthorized');
    expect(await stored(id)).toMatchObject({ state: 'pending', decided_by: null, decided_at: null });
  });

  it('lets a team admin and a platform admin approve, also a platform admin who is a viewer in the team', async () => {
    const adminAsViewer = await createAdmin(app);
    await app.entities.models.Member.create({ entity_id: candidateId, user_id: adminAsViewer.user.id, role: 'viewer', added_at: new Date() });
    for (const caller of [teamAdmin, platformAdmin, adminAsViewer]) {
      const id = await pending();
      const result = await approve(caller, { selectedMonitorId: monitorId, scenarios_list: [id] });
      expect(result.status, result.text).toBe(200);
      expect(result.body.data).toMatchObject({ approved: 1, results: [{ scenario_id: id, outcome: 'approved', scenario: { decided_by: caller.user.id } }] });
    }
  });

  it('is 422 for an empty list, a repeated id and 101 ids, approving nothing', async () => {
    const id = await pending();
    const cases: Array<[number[], string]> = [
      [[], 'minItems'],
      [[id, id], 'uniqueItems'],
      [Array.from({ length: 101 }, (_, index) => (index === 0 ? id : MISSING_ID - index)), 'maxItems'],
    ];
    for (const [ids, rule] of cases) {
      const result = await approve(owner, { selectedMonitorId: monitorId, scenarios_list: ids });
      expectError(result, 422, 'validation_failed');
      expect(result.body.error.details).toContainEqual(expect.objectContaining({ location: 'body', field: 'scenarios_list', rule }));
    }
    expect(await stored(id)).toMatchObject({ state: 'pending', decided_by: null });
  });

  it('replays the first answer for a repeated Idempotency-Key instead of approving again', async () => {
    const id = await pending();
    const enqueue = vi.spyOn(app.jobs!, 'enqueue');
    try {
      const body = { selectedMonitorId: monitorId, scenarios_list: [id] };
      const first = await approve(owner, body, { 'Idempotency-Key': `approve-${id}` });
      expect(first.status, first.text).toBe(200);
      expect(first.body.data.results[0].outcome).toBe('approved');
      expect(first.headers.get('idempotent-replayed')).toBeNull();

      const replay = await approve(owner, body, { 'Idempotency-Key': `approve-${id}` });
      expect(replay.status).toBe(200);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.text).toBe(first.text);
      expect(enqueue).toHaveBeenCalledTimes(1);

      // Without the key the same body acts again, and finds the request no longer pending.
      const fresh = await approve(owner, body);
      expect(fresh.body.data.results[0]).toMatchObject({ outcome: 'not_pending', job_id: null });
      expect(enqueue).toHaveBeenCalledTimes(1);
    } finally {
      enqueue.mockRestore();
    }
  });

  it('lets exactly one of several simultaneous approvals of a request win, queueing one run', async () => {
    const id = await pending();
    const enqueue = vi.spyOn(app.jobs!, 'enqueue');
    try {
      const body = { selectedMonitorId: monitorId, scenarios_list: [id] };
      const answers: Result[] = await Promise.all([owner, teamAdmin, owner, platformAdmin].map((caller) => approve(caller, body)));
      for (const answer of answers) expect(answer.status, answer.text).toBe(200);
      const outcomes = answers.map((answer) => answer.body.data.results[0]);
      expect(outcomes.map((outcome: Json) => outcome.outcome).sort()).toEqual(['approved', 'not_pending', 'not_pending', 'not_pending']);
      expect(answers.map((answer) => answer.body.data.approved).reduce((total: number, count: number) => total + count, 0)).toBe(1);
      const winner = outcomes.find((outcome: Json) => outcome.outcome === 'approved');
      expect(winner.job_id).toMatch(UUID);
      for (const loser of outcomes.filter((outcome: Json) => outcome.outcome === 'not_pending')) {
        expect(loser.job_id).toBeNull();
        expect(loser.scenario.decided_by).toBe(winner.scenario.decided_by);
      }
      expect(enqueue.mock.calls.filter(([name, data]) => name === 'scenario-run' && (data as Json).scenario_id === id)).toHaveLength(1);
      expect((await app.jobs!.get('scenario-run', winner.job_id))?.data).toEqual({ scenario_id: id });
    } finally {
      enqueue.mockRestore();
    }
  });
});

describe('POST /api/strategy/reject_pending_scenario_requests/ (rejectPendingScenarioRequests)', () => {
  it('rejects keeping the trimmed reason; a blank or missing reason is null', async () => {
    const [withReason, blank, without] = [await pending(), await pending(), await pending()];
    const result = await reject(owner, { selectedMonitorId: monitorId, scenarios_list: [withReason], reason: '  Fora do escopo.  ' });
    expect(result.status, result.text).toBe(200);
    expect(result.body.message).toBe('1 of 1 scenario requests rejected.');
    expect(result.body.data).toEqual({
      monitor_id: monitorId,
      rejected: 1,
      results: [
        {
          scenario_id: withReason,
          outcome: 'rejected',
          scenario: expect.objectContaining({ id: withReason, state: 'rejected', rejection_reason: 'Fora do escopo.', decided_by: owner.user.id, decided_at: expect.stringMatching(ISO), projection: null }),
        },
      ],
    });
    expect(await stored(withReason)).toMatchObject({ state: 'rejected', rejection_reason: 'Fora do escopo.' });

    const blanks = await reject(teamAdmin, { selectedMonitorId: monitorId, scenarios_list: [blank], reason: '   ' });
    expect(blanks.body.data.results[0]).toMatchObject({ outcome: 'rejected', scenario: { rejection_reason: null, decided_by: teamAdmin.user.id } });
    const missing = await reject(platformAdmin, { selectedMonitorId: monitorId, scenarios_list: [without] });
    expect(missing.body.data.results[0]).toMatchObject({ outcome: 'rejected', scenario: { rejection_reason: null, decided_by: platformAdmin.user.id } });
  });

  it('answers not_pending for an approved and a completed request, not_found for a missing id and another monitor\'s request, in order', async () => {
    const approvedId = await pending();
    expect(await app.strategy.scenarios.approve(approvedId, { deciderId: owner.user.id })).toBe(true);
    const completedId = await pending();
    await app.strategy.scenarios.approve(completedId, { deciderId: owner.user.id });
    expect(await app.strategy.scenarios.start(completedId)).toBe(true);
    await app.strategy.scenarios.complete(completedId, someProjection());
    const ofOtherMonitor = await pending(otherMonitorId, [ownerOtherId, candidateId]);

    const result = await reject(owner, { selectedMonitorId: monitorId, scenarios_list: [approvedId, MISSING_ID, completedId, ofOtherMonitor], reason: 'Tarde demais.' });
    expect(result.status, result.text).toBe(200);
    expect(result.body.data.rejected).toBe(0);
    expect(result.body.data.results).toEqual([
      { scenario_id: approvedId, outcome: 'not_pending', scenario: expect.objectContaining({ state: 'approved', rejection_reason: null }) },
      { scenario_id: MISSING_ID, outcome: 'not_found', scenario: null },
      { scenario_id: completedId, outcome: 'not_pending', scenario: expect.objectContaining({ state: 'completed', rejection_reason: null, projection: someProjection() }) },
      { scenario_id: ofOtherMonitor, outcome: 'not_found', scenario: null },
    ]);
    expect(await stored(ofOtherMonitor)).toMatchObject({ state: 'pending', decided_by: null, rejection_reason: null });
    expect(await stored(approvedId)).toMatchObject({ state: 'approved', rejection_reason: null });
  });

  it('is 403 for an operator and a viewer, 404 for a stranger; the request stays pending', async () => {
    const id = await pending();
    const body = { selectedMonitorId: monitorId, scenarios_list: [id], reason: 'Não.' };
    expectError(await reject(operator, body), 403, 'forbidden');
    expectError(await reject(viewer, body), 403, 'forbidden');
    expectError(await reject(stranger, body), 404, 'not_found');
    expect(await stored(id)).toMatchObject({ state: 'pending', decided_by: null, rejection_reason: null });
  });

  it('is 422 for a reason over 1000 characters, and takes one of exactly 1000', async () => {
    const id = await pending();
    const tooLong = await reject(owner, { selectedMonitorId: monitorId, scenarios_list: [id], reason: 'x'.repeat(1001) });
    expectError(tooLong, 422, 'validation_failed');
    expect(tooLong.body.error.details).toContainEqual(expect.objectContaining({ location: 'body', field: 'reason', rule: 'maxLength' }));
    expect(await stored(id)).toMatchObject({ state: 'pending' });
    const longest = await reject(owner, { selectedMonitorId: monitorId, scenarios_list: [id], reason: 'x'.repeat(1000) });
    expect(longest.body.data.results[0].scenario.rejection_reason).toHaveLength(1000);
  });
});

describe('scenario runs (Strategy.run) and a queue that refuses, in an app without jobs', () => {
  let bare: TestApp;
  let bareOwner: TestUser;
  let bareViewer: TestUser;
  let bareMonitorId: number;
  const entity: Record<'a' | 'b' | 'noSnapshot' | 'badShare' | 'badTendency', number> = { a: 0, b: 0, noSnapshot: 0, badShare: 0, badTendency: 0 };
  const job = (attempt: number, lastAttempt: boolean) => ({ id: 'test', attempt, lastAttempt });

  async function approvedScenario(entityIds: number[]): Promise<number> {
    const id = await pending(bareMonitorId, entityIds, bare, bareOwner);
    expect(await bare.strategy.scenarios.approve(id, { deciderId: bareOwner.user.id })).toBe(true);
    return id;
  }

  async function listed(id: number): Promise<Json> {
    const result = await list(bareViewer, { monitor_id: String(bareMonitorId) }, bare);
    expect(result.status, result.text).toBe(200);
    return result.body.data.results.find((scenario: Json) => scenario.id === id);
  }

  beforeAll(async () => {
    bare = await startTestApp();
    bareOwner = await createUser(bare);
    bareViewer = await createUser(bare);
    const create = (nome: string, marketshare?: Array<{ marketshare: string; tendency?: string; principal?: boolean }>) =>
      bare.entities.store.create('candidato', bareOwner.user.id, { nome, ...(marketshare ? { marketshare } : {}) });
    entity.a = await create('Ana Lima', [{ marketshare: '40', tendency: 'alta', principal: true }]);
    entity.b = await create('Bruno Costa');
    entity.noSnapshot = await create('Carla Dias');
    entity.badShare = await create('Davi Reis', [{ marketshare: '10', tendency: 'up' }, { marketshare: 'abc', tendency: 'up', principal: true }]);
    entity.badTendency = await create('Eva Rocha', [{ marketshare: '20', tendency: 'sideways' }]);
    await bare.entities.models.Member.create({ entity_id: entity.a, user_id: bareViewer.user.id, role: 'viewer', added_at: new Date() });
    for (const [key, id] of Object.entries(entity)) {
      const monitor = await newMonitor(bare, id, `Monitor ${key}`, bareOwner);
      if (key === 'a') bareMonitorId = monitor;
      if (key === 'noSnapshot') continue;
      await bare.monitors.store.record(
        monitor,
        [
          { network: 'instagram', taken_at: '2026-11-10T12:00:00Z', followers: 1000, posts: 10, engagement: 0.05, mentions: 0 },
          { network: 'instagram', taken_at: key === 'a' ? '2026-11-20T12:00:00Z' : '2026-11-19T12:00:00Z', followers: 1000, posts: 12, engagement: 0.06, mentions: 4 },
        ],
        'import',
      );
    }
  });

  afterAll(async () => {
    await bare?.close();
  });

  it.each([
    ['an entity without a snapshot in the window', () => [entity.a, entity.noSnapshot], () => `Entity ${entity.noSnapshot} (Carla Dias) has no metric snapshot in the 30 days up to 2026-11-20T12:00:00.000Z.`],
    ['a marketshare that is not a number', () => [entity.a, entity.badShare], () => `The marketshare "abc" of Entity ${entity.badShare} (Davi Reis) is not a number from 0 to 100.`],
    ['a tendency that is not a direction', () => [entity.badTendency, entity.a], () => `The tendency "sideways" of Entity ${entity.badTendency} (Eva Rocha) is not one of up, down or stable (alta, baixa, estável).`],
  ])('fails the request with the documented reason for %s', async (_, entityIds, reason) => {
    const id = await approvedScenario(entityIds());
    await expect(bare.strategy.run(id, job(1, false))).resolves.toEqual({ state: 'failed' });
    expect(await listed(id)).toMatchObject({ state: 'failed', failure_reason: reason(), projection: null, decided_by: bareOwner.user.id });
  });

  it('leaves the request running after an unexpected error with a retry to follow, and a retry completes it', async () => {
    const id = await approvedScenario([entity.a, entity.b]);
    const complete = vi.spyOn(bare.strategy.scenarios, 'complete').mockRejectedValueOnce(new Error('connection lost'));
    try {
      await expect(bare.strategy.run(id, job(1, false))).rejects.toThrow('connection lost');
      expect(await listed(id)).toMatchObject({ state: 'running', failure_reason: null, projection: null });
      const running = await list(bareViewer, { monitor_id: String(bareMonitorId), state: 'running' }, bare);
      expect(running.body.data.results.map((scenario: Json) => scenario.id)).toEqual([id]);
      expect(bare.logs).toContainEqual(expect.objectContaining({ msg: 'scenario run failed', scenario_id: id, attempt: 1 }));

      await expect(bare.strategy.run(id, job(2, false))).resolves.toEqual({ state: 'completed' });
      const done = await listed(id);
      expect(done).toMatchObject({ state: 'completed', failure_reason: null });
      expect(done.projection).toMatchObject({ as_of: '2026-11-20T12:00:00.000Z', window_days: 30, horizon_days: 30 });
      expect(done.projection.entities.map((row: Json) => row.entity_id)).toEqual([entity.a, entity.b]);
      expect(complete).toHaveBeenCalledTimes(2);
    } finally {
      complete.mockRestore();
    }
    // A finished request is not run again.
    await expect(bare.strategy.run(id, job(3, true))).resolves.toEqual({ state: 'completed' });
  });

  it('fails the request saying how often and why after an unexpected error on the last attempt, and still throws', async () => {
    const id = await approvedScenario([entity.b, entity.a]);
    const complete = vi.spyOn(bare.strategy.scenarios, 'complete').mockRejectedValueOnce(new Error('connection lost'));
    try {
      await expect(bare.strategy.run(id, job(3, true))).rejects.toThrow('connection lost');
    } finally {
      complete.mockRestore();
    }
    expect(await listed(id)).toMatchObject({ state: 'failed', failure_reason: 'The run failed 3 times; the last error: connection lost', projection: null });
  });

  it('does nothing for a rejected or still pending request and answers its state', async () => {
    const rejectedId = await pending(bareMonitorId, [entity.a, entity.b], bare, bareOwner);
    await bare.strategy.scenarios.reject(rejectedId, 'Não.', { deciderId: bareOwner.user.id });
    const before = await stored(rejectedId, bare);
    await expect(bare.strategy.run(rejectedId, job(1, false))).resolves.toEqual({ state: 'rejected' });
    expect(await stored(rejectedId, bare)).toEqual(before);

    const pendingId = await pending(bareMonitorId, [entity.a, entity.b], bare, bareOwner);
    await expect(bare.strategy.run(pendingId, job(1, false))).resolves.toEqual({ state: 'pending' });
    expect(await stored(pendingId, bare)).toMatchObject({ state: 'pending', projection: null });
  });

  it('answers 500 in the error model when the queue refuses the run, and puts the request back to pending', async () => {
    const id = await pending(bareMonitorId, [entity.a, entity.b], bare, bareOwner);
    const result = await request(bare.baseUrl, 'POST', APPROVE, bareOwner.headers, { selectedMonitorId: bareMonitorId, scenarios_list: [id] });
    expectError(result, 500, 'internal_error');
    expect(result.text).not.toContain('runs no jobs');
    expect(await listed(id)).toMatchObject({ state: 'pending', decided_by: null, decided_at: null });
    // Once pending again it can still be decided.
    expect(await bare.strategy.scenarios.reject(id, null, { deciderId: bareOwner.user.id })).toBe(true);
  });
});
