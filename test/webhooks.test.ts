/**
 * Outbound webhooks (issue 25) through the real app, responses validated by the contract: an entity's
 * owner registers an endpoint (its secret shown once), events are delivered signed as Standard Webhooks
 * says (checked here with the `standardwebhooks` verifier), a failed delivery is retried with growing
 * delays and logged attempt by attempt, resent by hand, an endpoint failing for a day is disabled (with a
 * notification), and where deliveries may go is checked: a private address is refused when registered,
 * and a name that resolves elsewhere when connecting (DNS rebinding) fails the attempt, reaching nothing.
 * Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const ENDPOINTS = '/api/webhooks/endpoints/';
const HOUR = 3600_000;

/** A receiver on loopback that answers with the statuses queued, then 200, and keeps what it got. */
class Receiver {
  readonly received: Array<{ body: string; headers: IncomingHttpHeaders }> = [];
  private readonly statuses: number[] = [];
  private server!: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
        res.writeHead(this.statuses.shift() ?? 200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/palanque/webhook`;
    return this;
  }

  answer(...statuses: number[]): void {
    this.statuses.push(...statuses);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let app: TestApp;
let receiver: Receiver;
let platformAdmin: TestUser;

beforeAll(async () => {
  receiver = await new Receiver().start();
  app = await startTestApp({ withJobs: true });
  platformAdmin = await createAdmin(app);
});

afterAll(async () => {
  await app?.close();
  await receiver?.close();
});

interface Team {
  owner: TestUser;
  admin: TestUser;
  operator: TestUser;
  entityId: number;
}

async function newTeam(on: TestApp = app): Promise<Team> {
  const [owner, admin, operator] = [await createUser(on), await createUser(on), await createUser(on)];
  const entityId = await on.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
  for (const [user, role] of [[admin, 'admin'], [operator, 'operator']] as const) {
    await on.entities.models.Member.create({ entity_id: entityId, user_id: user.user.id, role, added_at: new Date() });
  }
  return { owner, admin, operator, entityId };
}

async function register(team: Team, url: string, eventTypes: string[] = ['monitor.alert'], on: TestApp = app): Promise<Json> {
  const result = await request(on.baseUrl, 'POST', ENDPOINTS, team.owner.headers, { entity_id: team.entityId, url, event_types: eventTypes, description: 'CRM da campanha' });
  expect(result.status, result.text).toBe(201);
  return result.body.data;
}

async function deliveriesOf(endpointId: number, caller: TestUser, on: TestApp = app): Promise<Json[]> {
  const result = await request(on.baseUrl, 'GET', `${ENDPOINTS}${endpointId}/deliveries/`, caller.headers);
  expect(result.status, result.text).toBe(200);
  return result.body.data.results;
}

/** A monitor alert in the team's entity: a rule, and followers halved in a day. */
async function raiseAlert(team: Team, on: TestApp = app): Promise<void> {
  const call = (method: 'POST', path: string, caller: TestUser, body: unknown) => request(on.baseUrl, method, path, caller.headers, body);
  const monitor = await call('POST', '/api/monitor_social/add_monitor/', team.owner, { entity_id: team.entityId, name: `Monitor ${Date.now()}`, profiles: [{ nm_rede: 'instagram', username: 'mariasantos' }] });
  expect(monitor.status, monitor.text).toBe(201);
  const rule = await call('POST', '/api/monitor_social/alert_rules/', team.owner, { monitor_id: monitor.body.data.id, kind: 'followers_drop', threshold: 5 });
  expect(rule.status, rule.text).toBe(201);
  const admin = on === app ? platformAdmin : await createAdmin(on);
  const snapshots = [30, 1].map((hoursAgo, index) => ({ network: 'instagram', taken_at: new Date(Date.now() - hoursAgo * HOUR).toISOString(), followers: index === 0 ? 1000 : 500, posts: 10, engagement: 0.5, mentions: 5 }));
  const imported = await call('POST', '/api/monitor_social/import_metrics/', admin, { monitor_id: monitor.body.data.id, snapshots });
  expect(imported.status, imported.text).toBe(200);
}

describe('an endpoint', () => {
  it('is registered by the owner or an admin with a secret shown once, and hidden from the rest of the team and strangers', async () => {
    const team = await newTeam();
    const endpoint = await register(team, receiver.url, ['monitor.alert', 'sms_campaign.completed']);
    expect(endpoint).toMatchObject({ entity_id: team.entityId, url: receiver.url, event_types: ['monitor.alert', 'sms_campaign.completed'], enabled: true, failing_since: null });
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    const listed = await request(app.baseUrl, 'GET', `${ENDPOINTS}?entity_id=${team.entityId}`, team.admin.headers);
    expect(listed.body.data).toEqual([expect.objectContaining({ id: endpoint.id })]);
    expect(JSON.stringify(listed.body)).not.toContain(endpoint.secret.slice(6));
    expect(await app.sequelize.query('SELECT secret_sealed FROM webhook_endpoints WHERE id = ?', { replacements: [endpoint.id], plain: true, raw: true })).not.toMatchObject({ secret_sealed: endpoint.secret });

    const stranger = await createUser(app);
    expectError(await request(app.baseUrl, 'GET', `${ENDPOINTS}?entity_id=${team.entityId}`, team.operator.headers), 403, 'forbidden');
    expectError(await request(app.baseUrl, 'POST', ENDPOINTS, team.operator.headers, { entity_id: team.entityId, url: receiver.url, event_types: ['monitor.alert'] }), 403, 'forbidden');
    for (const [method, path] of [['GET', `${ENDPOINTS}${endpoint.id}/deliveries/`], ['POST', `${ENDPOINTS}${endpoint.id}/test/`], ['DELETE', `${ENDPOINTS}${endpoint.id}/`]] as const) {
      expectError(await request(app.baseUrl, method, path, stranger.headers), 404, 'not_found');
      expectError(await request(app.baseUrl, method, path, team.operator.headers), 403, 'forbidden');
    }
    const removed = await request(app.baseUrl, 'DELETE', `${ENDPOINTS}${endpoint.id}/`, team.admin.headers);
    expect(removed.status, removed.text).toBe(200);
    expectError(await request(app.baseUrl, 'DELETE', `${ENDPOINTS}${endpoint.id}/`, team.admin.headers), 404, 'not_found');
  });
});

describe('a delivery', () => {
  it('of a monitor alert fails twice, is retried with growing delays and succeeds, each try signed as Standard Webhooks says', async () => {
    const team = await newTeam();
    const endpoint = await register(team, receiver.url);
    const before = receiver.received.length;
    receiver.answer(500, 503);
    await raiseAlert(team);

    await expect.poll(async () => (await deliveriesOf(endpoint.id, team.owner))[0]?.status, { timeout: 20_000, interval: 200 }).toBe('succeeded');
    const [delivery] = await deliveriesOf(endpoint.id, team.owner);
    expect(delivery.event_type).toBe('monitor.alert');
    expect(delivery.payload).toMatchObject({ type: 'monitor.alert', data: { entity_id: team.entityId, kind: 'followers_drop', network: 'instagram', value: 500, reference: 1000 } });
    expect(delivery.attempts.map((attempt: Json) => [attempt.trigger, attempt.status_code])).toEqual([['automatic', 500], ['automatic', 503], ['automatic', 200]]);
    expect(delivery.attempts[2].error).toBeNull();
    const gaps = delivery.attempts.slice(1).map((attempt: Json, index: number) => Date.parse(attempt.attempted_at) - Date.parse(delivery.attempts[index].attempted_at));
    expect(gaps[0]).toBeGreaterThanOrEqual(900); // the first retry after 1 s
    expect(gaps[1]).toBeGreaterThan(gaps[0]); // the next after twice that

    const tries = receiver.received.slice(before);
    expect(tries).toHaveLength(3);
    const verifier = new Webhook(endpoint.secret);
    for (const { body, headers } of tries) {
      expect(headers['webhook-id']).toBe(delivery.message_id);
      expect(headers['content-type']).toBe('application/json');
      expect(verifier.verify(body, headers as Record<string, string>)).toEqual(delivery.payload);
    }
    // Another secret's verifier refuses it.
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(tries[0]!.body, tries[0]!.headers as Record<string, string>)).toThrow();
    expect((await request(app.baseUrl, 'GET', `${ENDPOINTS}?entity_id=${team.entityId}`, team.owner.headers)).body.data[0].failing_since).toBeNull();
  });

  it('goes only to endpoints that asked for its type, and a test event goes whatever they asked', async () => {
    const team = await newTeam();
    const endpoint = await register(team, receiver.url, ['sms_campaign.completed']);
    await raiseAlert(team);
    const test = await request(app.baseUrl, 'POST', `${ENDPOINTS}${endpoint.id}/test/`, team.owner.headers);
    expect(test.status, test.text).toBe(201);
    expect(test.body.data).toMatchObject({ event_type: 'webhook.test', status: 'pending', attempts: [] });
    await expect.poll(async () => (await deliveriesOf(endpoint.id, team.owner)).map((delivery: Json) => `${delivery.event_type}:${delivery.status}`), { timeout: 10_000 }).toEqual(['webhook.test:succeeded']);
  });

  it('is resent by hand: one more try, logged as manual, with the same message id', async () => {
    const team = await newTeam();
    const endpoint = await register(team, receiver.url);
    receiver.answer(500);
    const test = await request(app.baseUrl, 'POST', `${ENDPOINTS}${endpoint.id}/test/`, team.owner.headers);
    await expect.poll(async () => (await deliveriesOf(endpoint.id, team.owner))[0].status, { timeout: 10_000 }).toBe('succeeded');
    const resent = await request(app.baseUrl, 'POST', `/api/webhooks/deliveries/${test.body.data.id}/resend/`, team.admin.headers);
    expect(resent.status, resent.text).toBe(200);
    expect(resent.body.data.status).toBe('pending');
    await expect.poll(async () => (await deliveriesOf(endpoint.id, team.owner))[0].attempts.map((attempt: Json) => `${attempt.trigger}:${attempt.status_code}`), { timeout: 10_000 }).toEqual([
      'automatic:500',
      'automatic:200',
      'manual:200',
    ]);
    const ids = receiver.received.filter(({ body }) => JSON.parse(body).data.endpoint_id === endpoint.id).map(({ headers }) => headers['webhook-id']);
    expect(new Set(ids)).toEqual(new Set([test.body.data.message_id]));
    expectError(await request(app.baseUrl, 'POST', `/api/webhooks/deliveries/${test.body.data.id}/resend/`, team.operator.headers), 403, 'forbidden');
    expectError(await request(app.baseUrl, 'POST', '/api/webhooks/deliveries/2147483647/resend/', team.owner.headers), 404, 'not_found');
  });
});

describe('a failing endpoint', () => {
  it('is disabled after its failures outlast the limit, its admins are notified, it gets no more events, and can be enabled again', async () => {
    // A limit of 0 s: the first failure is already "a day" of failures.
    const strictApp = await startTestApp({ withJobs: true, webhooks: { disableAfterMs: 0, retries: 2 } });
    try {
      const team = await newTeam(strictApp);
      const endpoint = await register(team, receiver.url, ['monitor.alert'], strictApp);
      receiver.answer(503);
      const test = await request(strictApp.baseUrl, 'POST', `${ENDPOINTS}${endpoint.id}/test/`, team.owner.headers);
      expect(test.status, test.text).toBe(201);
      const endpointNow = async () => (await request(strictApp.baseUrl, 'GET', `${ENDPOINTS}?entity_id=${team.entityId}`, team.owner.headers)).body.data[0];
      await expect.poll(async () => (await endpointNow()).enabled, { timeout: 10_000 }).toBe(false);
      const disabled = await endpointNow();
      expect(disabled.disabled_reason).toContain('503');
      expect(disabled.failing_since).toEqual(expect.any(String));
      // Not retried once disabled: one attempt.
      const [delivery] = await deliveriesOf(endpoint.id, team.owner, strictApp);
      expect(delivery).toMatchObject({ status: 'failed', attempts: [expect.objectContaining({ status_code: 503 })] });

      for (const [member, told] of [[team.owner, true], [team.admin, true], [team.operator, false]] as const) {
        const notifications = (await request(strictApp.baseUrl, 'GET', '/api/notifications/', member.headers)).body.data.results;
        const about = notifications.filter((notification: Json) => notification.type === 'webhook_endpoint_disabled');
        expect(about.length, `${member.user.username}`).toBe(told ? 1 : 0);
        if (told) expect(about[0].subject).toEqual({ kind: 'webhook_endpoint', id: endpoint.id });
      }

      // A disabled endpoint gets no event.
      await raiseAlert(team, strictApp);
      expect(await deliveriesOf(endpoint.id, team.owner, strictApp)).toHaveLength(1);

      const enabled = await request(strictApp.baseUrl, 'PATCH', `${ENDPOINTS}${endpoint.id}/`, team.owner.headers, { enabled: true });
      expect(enabled.status, enabled.text).toBe(200);
      expect(enabled.body.data).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
      expectError(await request(strictApp.baseUrl, 'PATCH', `${ENDPOINTS}${endpoint.id}/`, team.owner.headers, {}), 422, 'validation_failed');
    } finally {
      await strictApp.close();
    }
  });
});

describe('where deliveries may go', () => {
  it('refuses an endpoint on a private, loopback or link-local address when private addresses are not allowed, IPv6 forms carrying 127.0.0.1 included', async () => {
    const strictApp = await startTestApp({ outbound: { allowPrivateAddresses: false } });
    try {
      const team = await newTeam(strictApp);
      for (const url of [receiver.url, 'http://10.0.0.8/hook', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]:8080/hook', 'http://localhost:8080/hook', 'http://[::7f00:1]:8080/hook', 'http://[::ffff:127.0.0.1]:8080/hook', 'http://[64:ff9b::7f00:1]:8080/hook']) {
        const refused = await request(strictApp.baseUrl, 'POST', ENDPOINTS, team.owner.headers, { entity_id: team.entityId, url, event_types: ['monitor.alert'] });
        expectError(refused, 422, 'validation_failed');
        expect(refused.body.error.details[0], url).toMatchObject({ field: 'url', rule: 'public_url', value: url });
      }
    } finally {
      await strictApp.close();
    }
  });

  it('checks the address again when connecting: a name that now resolves to loopback (DNS rebinding) fails the attempt and reaches nothing', async () => {
    let lookups = 0;
    // A public address when the endpoint is registered, loopback when a delivery connects.
    const rebinding = async () => [{ address: (lookups += 1) === 1 ? '93.184.216.34' : '127.0.0.1', family: 4 as const }];
    const strictApp = await startTestApp({ withJobs: true, outbound: { allowPrivateAddresses: false }, lookupAll: rebinding, webhooks: { retries: 0 } });
    try {
      const team = await newTeam(strictApp);
      const port = new URL(receiver.url).port;
      const endpoint = await register(team, `http://rebind.palanque.test:${port}/palanque/webhook`, ['monitor.alert'], strictApp);
      const before = receiver.received.length;
      await request(strictApp.baseUrl, 'POST', `${ENDPOINTS}${endpoint.id}/test/`, team.owner.headers);
      await expect.poll(async () => (await deliveriesOf(endpoint.id, team.owner, strictApp))[0].status, { timeout: 10_000 }).toBe('failed');
      const [delivery] = await deliveriesOf(endpoint.id, team.owner, strictApp);
      expect(delivery.attempts).toHaveLength(1);
      expect(delivery.attempts[0]).toMatchObject({ status_code: null });
      expect(delivery.attempts[0].error).toMatch(/^refused: .*127\.0\.0\.1/);
      expect(receiver.received.length).toBe(before);
    } finally {
      await strictApp.close();
    }
  });
});
