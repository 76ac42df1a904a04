/**
 * A scenario request's whole life through the real app with a real job queue (pg-boss on PostgreSQL, the
 * table runner on SQLite): a team creates monitors, an admin imports their metrics, an operator asks for
 * a scenario, the owner approves it, the background run computes the projection the contract's formula
 * gives; a second request fails for want of metrics and says why; a third is rejected.
 * Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { request } from './helpers/http.js';
import { waitFor } from './helpers/process.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

let app: TestApp;
let owner: TestUser;
let operator: TestUser;
let platformAdmin: TestUser;
let candidateId: number;
let competitorId: number;
let unmonitoredId: number;
let monitorId: number;

const call = (method: 'GET' | 'POST', path: string, caller: TestUser, body?: unknown) => request(app.baseUrl, method, path, caller.headers, body);

async function createMonitor(caller: TestUser, entityId: number, name: string, network: string): Promise<number> {
  const result = await call('POST', '/api/monitor_social/add_monitor/', caller, {
    entity_id: entityId,
    name,
    profiles: [{ nm_rede: network, username: name.toLowerCase().replace(/\W+/g, '') }],
  });
  expect(result.status, result.text).toBe(201);
  return (result.body as Json).data.id;
}

async function importMetrics(monitor: number, snapshots: Json[]): Promise<void> {
  const result = await call('POST', '/api/monitor_social/import_metrics/', platformAdmin, { monitor_id: monitor, snapshots });
  expect(result.status, result.text).toBe(200);
}

async function scenarios(state?: string): Promise<Json[]> {
  const query = new URLSearchParams({ monitor_id: String(monitorId), ...(state ? { state } : {}) });
  const result = await call('GET', `/api/strategy/get_scenario_requests/?${query}`, operator);
  expect(result.status, result.text).toBe(200);
  return (result.body as Json).data.results;
}

/** The request once its run has ended. */
function settled(id: number): Promise<Json> {
  return waitFor(
    async () => {
      const found = (await scenarios()).find((scenario) => scenario.id === id);
      return found?.state === 'completed' || found?.state === 'failed' ? found : undefined;
    },
    { timeoutMs: 20_000, what: `scenario request ${id} to finish`, intervalMs: 100 },
  );
}

beforeAll(async () => {
  app = await startTestApp({ withJobs: true });
  owner = await createUser(app);
  operator = await createUser(app);
  platformAdmin = await createAdmin(app);
  candidateId = await app.entities.store.create('candidato', owner.user.id, {
    nome: 'Maria Santos',
    marketshare: [{ marketshare: '30', tendency: 'up', principal: true }],
  });
  competitorId = await app.entities.store.create('concorrente', owner.user.id, {
    nome: 'João Pereira',
    marketshare: [{ marketshare: '25,0%', tendency: 'estável' }],
  });
  unmonitoredId = await app.entities.store.create('concorrente', owner.user.id, { nome: 'Sem Monitor' });
  await app.entities.models.Member.create({ entity_id: candidateId, user_id: operator.user.id, role: 'operator', added_at: new Date() });
  // The operator is not in the competitor's team, but the candidate watches the competitor: it may be compared.
  await app.entities.models.Guardianship.create({ tutor_id: candidateId, ward_id: competitorId, created_by: owner.user.id, created_at: new Date() });

  monitorId = await createMonitor(operator, candidateId, 'Maria oficial', 'instagram');
  const competitorMonitor = await createMonitor(owner, competitorId, 'João oficial', 'Instagram');
  // Voice = mentions + engagement × followers: Maria 60 then 60... her share rises from 0.5 to 0.6 over 10 days.
  await importMetrics(monitorId, [
    { network: 'instagram', taken_at: '2026-11-10T12:00:00Z', followers: 1000, posts: 10, engagement: 0.05, mentions: 0 },
    { network: 'instagram', taken_at: '2026-11-20T12:00:00Z', followers: 1000, posts: 12, engagement: 0.06, mentions: 0 },
  ]);
  await importMetrics(competitorMonitor, [
    { network: 'instagram', taken_at: '2026-11-10T12:00:00Z', followers: 500, posts: 5, engagement: 0.1, mentions: 0 },
    { network: 'instagram', taken_at: '2026-11-20T12:00:00Z', followers: 500, posts: 6, engagement: 0.08, mentions: 0 },
  ]);
});

afterAll(async () => {
  await app?.close();
});

describe('a scenario request from pending to its end', () => {
  it('goes pending -> approved -> running -> completed, storing the projection of the documented formula', async () => {
    const asked = await call('POST', '/api/strategy/add_scenario_request/', operator, { monitor_id: monitorId, entity_ids: [candidateId, competitorId], horizon_days: 10 });
    expect(asked.status, asked.text).toBe(201);
    const scenario = (asked.body as Json).data;
    expect(scenario).toMatchObject({ state: 'pending', requested_by: operator.user.id, decided_by: null, projection: null, entity_ids: [candidateId, competitorId] });

    const approved = await call('POST', '/api/strategy/approve_pending_scenario_requests/', owner, { selectedMonitorId: monitorId, scenarios_list: [scenario.id] });
    expect(approved.status, approved.text).toBe(200);
    const [outcome] = (approved.body as Json).data.results;
    expect(outcome.outcome).toBe('approved');
    expect(outcome.job_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(['approved', 'running', 'completed']).toContain(outcome.scenario.state);
    expect(outcome.scenario.decided_by).toBe(owner.user.id);

    const done = await settled(scenario.id);
    expect(done.state, done.failure_reason).toBe('completed');
    // Shares of voice: now 60 vs 40 (0.6), at the start 50 vs 50; trend 0.1 / 10 days = 0.01 a day.
    // Maria: current (0.30 + 0.6) / 2 = 0.45; raw 0.45 + 10 × (0.005 + 0.001) = 0.51.
    // João: current (0.25 + 0.4) / 2 = 0.325; raw 0.325 + 10 × (−0.005 + 0) = 0.275. Total 0.785.
    expect(done.projection).toEqual({
      as_of: '2026-11-20T12:00:00.000Z',
      window_days: 30,
      horizon_days: 10,
      entities: [
        { entity_id: candidateId, nome: 'Maria Santos', share_of_voice: 0.6, share_of_voice_trend: 0.01, marketshare: 0.3, tendency: 1, current_share: 0.45, projected_share: 0.6497 },
        { entity_id: competitorId, nome: 'João Pereira', share_of_voice: 0.4, share_of_voice_trend: -0.01, marketshare: 0.25, tendency: 0, current_share: 0.325, projected_share: 0.3503 },
      ],
    });
    expect(done.failure_reason).toBeNull();
    // The scenario is stored completed inside the job; the queue marks the job itself completed just
    // after the handler returns, so under load the two can be read a moment apart.
    await expect.poll(async () => (await app.jobs!.get('scenario-run', outcome.job_id))?.state, { timeout: 10_000 }).toBe('completed');

    const again = await call('POST', '/api/strategy/approve_pending_scenario_requests/', owner, { selectedMonitorId: monitorId, scenarios_list: [scenario.id] });
    expect((again.body as Json).data).toMatchObject({ approved: 0, results: [{ scenario_id: scenario.id, outcome: 'not_pending', job_id: null, scenario: { state: 'completed' } }] });
  });

  it('goes pending -> approved -> running -> failed, saying which entity lacks metrics', async () => {
    const asked = await call('POST', '/api/strategy/add_scenario_request/', owner, { monitor_id: monitorId, entity_ids: [candidateId, unmonitoredId], horizon_days: 30 });
    expect(asked.status, asked.text).toBe(201);
    const id = (asked.body as Json).data.id;
    await call('POST', '/api/strategy/approve_pending_scenario_requests/', owner, { selectedMonitorId: monitorId, scenarios_list: [id] });
    const done = await settled(id);
    expect(done.state).toBe('failed');
    expect(done.failure_reason).toBe(`Entity ${unmonitoredId} (Sem Monitor) has no social monitor.`);
    expect(done.projection).toBeNull();
    expect((await scenarios('failed')).map((scenario) => scenario.id)).toEqual([id]);
  });

  it('goes pending -> rejected, keeping the reason, and a rejected request is not approved later', async () => {
    const asked = await call('POST', '/api/strategy/add_scenario_request/', operator, { monitor_id: monitorId, entity_ids: [competitorId, candidateId], horizon_days: 365 });
    const id = (asked.body as Json).data.id;
    const rejected = await call('POST', '/api/strategy/reject_pending_scenario_requests/', owner, { selectedMonitorId: monitorId, scenarios_list: [id], reason: '  Longo demais.  ' });
    expect(rejected.status, rejected.text).toBe(200);
    expect((rejected.body as Json).data).toMatchObject({
      monitor_id: monitorId,
      rejected: 1,
      results: [{ scenario_id: id, outcome: 'rejected', scenario: { state: 'rejected', rejection_reason: 'Longo demais.', decided_by: owner.user.id } }],
    });
    const approved = await call('POST', '/api/strategy/approve_pending_scenario_requests/', owner, { selectedMonitorId: monitorId, scenarios_list: [id] });
    expect((approved.body as Json).data.results[0]).toMatchObject({ outcome: 'not_pending', scenario: { state: 'rejected' } });
  });
});
