/**
 * Notifications (issue 25) through the real app, responses validated by the contract: monitor alert
 * rules that raise a notification once per breach, the caller's notifications (list, unread count, mark
 * read, mark all read; nobody else's), and Web Push of each notification to the caller's devices, through
 * a local stand-in of a push service that decrypts what it receives (a subscription it says is gone is
 * removed), checked like a webhook's address when subscribed and again when pushed (a name re-pointed at
 * loopback meanwhile reaches nothing). Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { createServer, type AddressInfo, type Socket } from 'node:net';
import webpush from 'web-push';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PushServiceSimulator } from '../src/simulators/push-service.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const RULES = '/api/monitor_social/alert_rules/';
const NOTIFICATIONS = '/api/notifications/';
const SUBSCRIPTIONS = '/api/push/subscriptions/';
const HOUR = 3600_000;

let app: TestApp;
let pushService: PushServiceSimulator;
let platformAdmin: TestUser;
const vapid = { ...webpush.generateVAPIDKeys(), subject: 'mailto:alertas@palanque.app' };

beforeAll(async () => {
  pushService = await PushServiceSimulator.start();
  app = await startTestApp({ withJobs: true, vapid });
  platformAdmin = await createAdmin(app);
});

afterAll(async () => {
  await app?.close();
  await pushService?.close();
});

const call = (method: 'GET' | 'POST' | 'DELETE', path: string, caller?: TestUser, body?: unknown) => request(app.baseUrl, method, path, caller?.headers ?? {}, body);

interface Team {
  owner: TestUser;
  viewer: TestUser;
  entityId: number;
  monitorId: number;
}

let monitors = 0;
/** An owner and a viewer of a new entity with a monitor of its Instagram and X profiles. */
async function newTeam(): Promise<Team> {
  const [owner, viewer] = [await createUser(app), await createUser(app)];
  const entityId = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
  await app.entities.models.Member.create({ entity_id: entityId, user_id: viewer.user.id, role: 'viewer', added_at: new Date() });
  monitors += 1;
  const added = await call('POST', '/api/monitor_social/add_monitor/', owner, {
    entity_id: entityId,
    name: `Maria Santos ${monitors}`,
    profiles: [{ nm_rede: 'instagram', username: 'mariasantos' }, { nm_rede: 'x', username: 'mariasantos' }],
  });
  expect(added.status, added.text).toBe(201);
  return { owner, viewer, entityId, monitorId: added.body.data.id };
}

/** Snapshots of one network, `hoursAgo` before now, with the given metrics. */
async function importSnapshots(monitorId: number, network: string, points: Array<{ hoursAgo: number; followers?: number; posts?: number; mentions?: number }>): Promise<void> {
  const snapshots = points.map(({ hoursAgo, followers = 1000, posts = 10, mentions = 5 }) => ({
    network,
    taken_at: new Date(Date.now() - hoursAgo * HOUR).toISOString(),
    followers,
    posts,
    engagement: 0.5,
    mentions,
  }));
  const result = await call('POST', '/api/monitor_social/import_metrics/', platformAdmin, { monitor_id: monitorId, snapshots });
  expect(result.status, result.text).toBe(200);
}

async function notificationsOf(user: TestUser, query = ''): Promise<Json> {
  const result = await call('GET', `${NOTIFICATIONS}${query}`, user);
  expect(result.status, result.text).toBe(200);
  return result.body.data;
}

async function addRule(caller: TestUser, body: Json): Promise<Json> {
  const result = await call('POST', RULES, caller, body);
  expect(result.status, result.text).toBe(201);
  return result.body.data;
}

describe('monitor alert rules', () => {
  it('raise a notification for the team once per breach, and again after the breach ends', async () => {
    const team = await newTeam();
    const rule = await addRule(team.owner, { monitor_id: team.monitorId, kind: 'followers_drop', network: 'instagram', threshold: 5 });
    expect(rule).toMatchObject({ monitor_id: team.monitorId, kind: 'followers_drop', network: 'instagram', threshold: 5, breached: false, last_fired_at: null });

    // 1,000 followers 30 hours ago, 960 now: 4%, under the threshold.
    await importSnapshots(team.monitorId, 'instagram', [{ hoursAgo: 30, followers: 1000 }, { hoursAgo: 2, followers: 960 }]);
    expect((await notificationsOf(team.owner)).count).toBe(0);

    // 940 now: 6% down from 1,000 a day before.
    await importSnapshots(team.monitorId, 'instagram', [{ hoursAgo: 1, followers: 940 }]);
    for (const member of [team.owner, team.viewer]) {
      const page = await notificationsOf(member);
      expect(page.count).toBe(1);
      expect(page.unread).toBe(1);
      expect(page.results[0]).toMatchObject({ type: 'monitor_alert', entity_id: team.entityId, subject: { kind: 'monitor', id: team.monitorId }, read_at: null });
      expect(page.results[0].title).toContain('instagram');
      expect(page.results[0].body).toContain('6%');
    }
    const [listed] = (await call('GET', `${RULES}?monitor_id=${team.monitorId}`, team.viewer)).body.data;
    expect(listed.breached).toBe(true);
    expect(Date.parse(listed.last_fired_at)).toBeGreaterThan(Date.now() - 60_000);

    // Still breached (930): no second notification.
    await importSnapshots(team.monitorId, 'instagram', [{ hoursAgo: 0.5, followers: 930 }]);
    expect((await notificationsOf(team.owner)).count).toBe(1);

    // Recovered (1,000 again), then down once more: a new breach fires again.
    await importSnapshots(team.monitorId, 'instagram', [{ hoursAgo: 0.25, followers: 1000 }]);
    expect((await call('GET', `${RULES}?monitor_id=${team.monitorId}`, team.owner)).body.data[0].breached).toBe(false);
    await importSnapshots(team.monitorId, 'instagram', [{ hoursAgo: 0.1, followers: 900 }]);
    expect((await notificationsOf(team.owner)).count).toBe(2);
  });

  it('watch mentions against their 7-day average and profiles that stopped posting, on every network when none is named', async () => {
    const team = await newTeam();
    await addRule(team.owner, { monitor_id: team.monitorId, kind: 'mentions_spike', threshold: 3 });
    await addRule(team.owner, { monitor_id: team.monitorId, kind: 'profile_inactive', network: 'x', threshold: 2 });
    // Posting (39 to 40), and 20 mentions: twice the average of the week before.
    await importSnapshots(team.monitorId, 'x', [{ hoursAgo: 100, mentions: 10, posts: 39 }, { hoursAgo: 50, mentions: 20, posts: 40 }]);
    expect((await notificationsOf(team.owner)).count).toBe(0);
    // 45 mentions: three times the average of 15. Posts still 40 after more than 2 days.
    await importSnapshots(team.monitorId, 'x', [{ hoursAgo: 1, mentions: 45, posts: 40 }]);
    const titles = (await notificationsOf(team.owner)).results.map((notification: Json) => notification.title).sort();
    expect(titles).toEqual(['Alerta: perfil inativo (x)', 'Alerta: pico de menções (x)']);
  });

  it('are added by the team but not its viewers, judged by their kind, and removed', async () => {
    const team = await newTeam();
    const stranger = await createUser(app);
    expectError(await call('POST', RULES, team.viewer, { monitor_id: team.monitorId, kind: 'followers_drop', threshold: 5 }), 403, 'forbidden');
    expectError(await call('POST', RULES, stranger, { monitor_id: team.monitorId, kind: 'followers_drop', threshold: 5 }), 404, 'not_found');
    const invalid = await call('POST', RULES, team.owner, { monitor_id: team.monitorId, kind: 'followers_drop', network: 'tiktok', threshold: 150 });
    expectError(invalid, 422, 'validation_failed');
    expect(invalid.body.error.details.map((detail: Json) => `${detail.field}:${detail.rule}`).sort()).toEqual(['network:monitored_network', 'threshold:threshold_for_kind']);
    expectError(await call('POST', RULES, team.owner, { monitor_id: team.monitorId, kind: 'profile_inactive', threshold: 1.5 }), 422, 'validation_failed');

    const rule = await addRule(team.owner, { monitor_id: team.monitorId, kind: 'profile_inactive', threshold: 7 });
    expectError(await call('DELETE', `${RULES}${rule.id}/`, stranger), 404, 'not_found');
    expectError(await call('DELETE', `${RULES}${rule.id}/`, team.viewer), 403, 'forbidden');
    const removed = await call('DELETE', `${RULES}${rule.id}/`, team.owner);
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body.data.id).toBe(rule.id);
    expectError(await call('DELETE', `${RULES}${rule.id}/`, team.owner), 404, 'not_found');
    expect((await call('GET', `${RULES}?monitor_id=${team.monitorId}`, team.owner)).body.data).toEqual([]);
  });
});

describe("the caller's notifications", () => {
  it('are counted, marked read one by one or all at once, and nobody else can touch them', async () => {
    const team = await newTeam();
    await addRule(team.owner, { monitor_id: team.monitorId, kind: 'followers_drop', threshold: 5 });
    await importSnapshots(team.monitorId, 'instagram', [{ hoursAgo: 30, followers: 1000 }, { hoursAgo: 1, followers: 500 }]);
    await importSnapshots(team.monitorId, 'x', [{ hoursAgo: 30, followers: 1000 }, { hoursAgo: 1, followers: 500 }]);
    const page = await notificationsOf(team.owner);
    expect(page.count).toBe(2);
    expect((await call('GET', `${NOTIFICATIONS}unread_count/`, team.owner)).body.data).toEqual({ unread: 2 });

    const [newest, oldest] = page.results;
    expect(newest.id).toBeGreaterThan(oldest.id);
    expectError(await call('POST', `${NOTIFICATIONS}${newest.id}/read/`, team.viewer), 404, 'not_found');
    const read = await call('POST', `${NOTIFICATIONS}${newest.id}/read/`, team.owner);
    expect(read.status, read.text).toBe(200);
    expect(Date.parse(read.body.data.read_at)).toBeGreaterThan(Date.now() - 60_000);
    const again = await call('POST', `${NOTIFICATIONS}${newest.id}/read/`, team.owner);
    expect(again.body.data.read_at).toBe(read.body.data.read_at);

    const unreadOnly = await notificationsOf(team.owner, '?unread_only=true');
    expect(unreadOnly.results.map((notification: Json) => notification.id)).toEqual([oldest.id]);
    const all = await call('POST', `${NOTIFICATIONS}read_all/`, team.owner);
    expect(all.body.data).toEqual({ marked: 1, unread: 0 });
    expect((await call('GET', `${NOTIFICATIONS}unread_count/`, team.owner)).body.data).toEqual({ unread: 0 });
    // The viewer's own are untouched.
    expect((await call('GET', `${NOTIFICATIONS}unread_count/`, team.viewer)).body.data).toEqual({ unread: 2 });
    expectError(await call('GET', `${NOTIFICATIONS}?page=2`, team.owner), 404, 'not_found');
  });
});

describe('push notifications', () => {
  it('push each notification to the subscribed device, encrypted and signed, and forget a device its push service says is gone', async () => {
    const key = await call('GET', '/api/push/public_key/', platformAdmin);
    expect(key.body.data).toEqual({ public_key: vapid.publicKey });
    const team = await newTeam();
    const device = pushService.subscribe();
    const subscribed = await call('POST', SUBSCRIPTIONS, team.owner, { ...device, expirationTime: null, device_name: 'Chrome no notebook' });
    expect(subscribed.status, subscribed.text).toBe(201);
    expect(subscribed.body.data).toMatchObject({ device_name: 'Chrome no notebook', push_service: pushService.url, last_pushed_at: null });
    expect(JSON.stringify(subscribed.body.data)).not.toContain(device.endpoint);
    const resubscribed = await call('POST', SUBSCRIPTIONS, team.owner, { ...device, device_name: 'Chrome' });
    expect(resubscribed.status, resubscribed.text).toBe(200);
    expect(resubscribed.body.data.id).toBe(subscribed.body.data.id);

    await addRule(team.owner, { monitor_id: team.monitorId, kind: 'followers_drop', threshold: 5 });
    await importSnapshots(team.monitorId, 'instagram', [{ hoursAgo: 30, followers: 1000 }, { hoursAgo: 1, followers: 500 }]);
    const [notification] = (await notificationsOf(team.owner)).results;
    await expect.poll(() => pushService.received(device.endpoint).length, { timeout: 10_000 }).toBe(1);
    const [pushed] = pushService.received(device.endpoint);
    expect(pushed!.payload).toEqual(notification);
    expect(pushed!.vapidSubject).toBe(vapid.subject);
    await expect.poll(async () => (await call('GET', SUBSCRIPTIONS, team.owner)).body.data[0].last_pushed_at, { timeout: 5_000 }).not.toBeNull();

    // The user unsubscribed in the browser: the next push is answered 410 and the subscription removed.
    pushService.expire(device.endpoint);
    await importSnapshots(team.monitorId, 'x', [{ hoursAgo: 30, followers: 1000 }, { hoursAgo: 1, followers: 500 }]);
    await expect.poll(async () => (await call('GET', SUBSCRIPTIONS, team.owner)).body.data, { timeout: 10_000 }).toEqual([]);
  });

  it('refuses an endpoint on a private address where private addresses are not allowed, and a key that is no P-256 point', async () => {
    // The name resolves to loopback, as a rebinding name would once registered.
    const lookupAll = async () => [{ address: '127.0.0.1', family: 4 as const }];
    const strict = await startTestApp({ vapid, outbound: { allowPrivateAddresses: false }, lookupAll });
    try {
      const user = await createUser(strict);
      const device = pushService.subscribe();
      // http is for the simulator where private addresses are allowed: here the endpoint must be https.
      const plain = await request(strict.baseUrl, 'POST', SUBSCRIPTIONS, user.headers, device);
      expect(plain.body.error.details[0]).toMatchObject({ field: 'endpoint', rule: 'public_https_url', message: 'must be an https URL of a public address: must use https://' });
      for (const host of ['127.0.0.1', '[::7f00:1]', '[::ffff:127.0.0.1]', '[64:ff9b::7f00:1]', 'push.palanque.test']) {
        const refused = await request(strict.baseUrl, 'POST', SUBSCRIPTIONS, user.headers, { ...device, endpoint: `https://${host}/push/1` });
        expectError(refused, 422, 'validation_failed');
        expect(refused.body.error.details[0], host).toMatchObject({ field: 'endpoint', rule: 'public_https_url' });
        expect(refused.body.error.details[0].message, host).toMatch(/127\.0\.0\.1(,| is) a loopback address$/);
      }
      const badKey = await request(strict.baseUrl, 'POST', SUBSCRIPTIONS, user.headers, { ...device, endpoint: 'https://93.184.216.34/push/1', keys: { ...device.keys, p256dh: `B${'A'.repeat(86)}` } });
      expect(badKey.body.error.details.map((detail: Json) => detail.rule)).toEqual(['p256_public_key']);
    } finally {
      await strict.close();
    }
  });

  it('checks the address again when pushing: a name that resolves to loopback by then (DNS rebinding) connects to nothing', async () => {
    const listener = await countingListener();
    const answered: string[] = [];
    // Public when the device subscribes, loopback when the push connects.
    const lookupAll = async () => {
      const address = answered.length === 0 ? '93.184.216.34' : '127.0.0.1';
      answered.push(address);
      return [{ address, family: 4 as const }];
    };
    const strict = await startTestApp({ withJobs: true, vapid, outbound: { allowPrivateAddresses: false }, lookupAll });
    try {
      const [admin, owner] = [await createAdmin(strict), await createUser(strict)];
      const entityId = await strict.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
      const monitor = await request(strict.baseUrl, 'POST', '/api/monitor_social/add_monitor/', owner.headers, { entity_id: entityId, name: 'Maria Santos', profiles: [{ nm_rede: 'instagram', username: 'mariasantos' }] });
      expect(monitor.status, monitor.text).toBe(201);
      const subscribed = await request(strict.baseUrl, 'POST', SUBSCRIPTIONS, owner.headers, { ...pushService.subscribe(), endpoint: `https://push.palanque.test:${listener.port}/push/1` });
      expect(subscribed.status, subscribed.text).toBe(201);
      const rule = await request(strict.baseUrl, 'POST', RULES, owner.headers, { monitor_id: monitor.body.data.id, kind: 'followers_drop', threshold: 5 });
      expect(rule.status, rule.text).toBe(201);
      const snapshots = [30, 1].map((hoursAgo, index) => ({ network: 'instagram', taken_at: new Date(Date.now() - hoursAgo * HOUR).toISOString(), followers: index === 0 ? 1000 : 500, posts: 10, engagement: 0.5, mentions: 5 }));
      const imported = await request(strict.baseUrl, 'POST', '/api/monitor_social/import_metrics/', admin.headers, { monitor_id: monitor.body.data.id, snapshots });
      expect(imported.status, imported.text).toBe(200);

      // The push job resolved the name again, got loopback, and refused before connecting.
      await expect.poll(() => answered.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
      expect(answered.slice(0, 2)).toEqual(['93.184.216.34', '127.0.0.1']);
      await new Promise((settle) => setTimeout(settle, 500));
      expect(listener.connections).toBe(0);
      expect((await request(strict.baseUrl, 'GET', SUBSCRIPTIONS, owner.headers)).body.data[0].last_pushed_at).toBeNull();
    } finally {
      await strict.close();
      await listener.close();
    }
  });

  it('answers that this deployment sends no push without VAPID keys', async () => {
    const plain = await startTestApp();
    try {
      const user = await createUser(plain);
      expect((await request(plain.baseUrl, 'GET', '/api/push/public_key/', user.headers)).body.data).toEqual({ public_key: null });
      const refused = await request(plain.baseUrl, 'POST', SUBSCRIPTIONS, user.headers, pushService.subscribe());
      expectError(refused, 422, 'validation_failed');
      expect(refused.body.error.details[0].rule).toBe('push_enabled');
    } finally {
      await plain.close();
    }
  });

  it("removes only the caller's own subscription", async () => {
    const [owner, other] = [await createUser(app), await createUser(app)];
    const added = await call('POST', SUBSCRIPTIONS, owner, pushService.subscribe());
    expect(added.status, added.text).toBe(201);
    expectError(await call('DELETE', `${SUBSCRIPTIONS}${added.body.data.id}/`, other), 404, 'not_found');
    const removed = await call('DELETE', `${SUBSCRIPTIONS}${added.body.data.id}/`, owner);
    expect(removed.status, removed.text).toBe(200);
    expect((await call('GET', SUBSCRIPTIONS, owner)).body.data).toEqual([]);
  });
});

/** A TCP listener on loopback that only counts the connections it is offered. */
async function countingListener(): Promise<{ port: number; connections: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const state = { connections: 0 };
  const server = createServer((socket) => {
    state.connections += 1;
    sockets.add(socket);
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return state.connections;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((closed) => server.close(() => closed()));
    },
  };
}
