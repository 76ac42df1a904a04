/**
 * The social network's inbound operations through the real app and the contract validator (responses are
 * validated too), driven by the network simulator (src/simulators/socialnet.ts), which signs with its own
 * HMAC code: the webhook subscription handshake (verifySocialnetSubscription), signed event deliveries that
 * become monitor snapshots (receiveSocialnetEvents: counts, corrections, a delivery seen before or replayed
 * ignored, copies at once processed once, changes older than the stored one kept out, refused signatures,
 * 422s that store nothing, Idempotency-Key after a refusal), and the data-removal callback with its
 * background job and status page (receiveSocialnetRemoval, getSocialnetRemovalStatus), refusing a signed
 * request without issued_at or too old.
 * Two apps: one configured (with a job queue), one without any socialnet settings.
 * Three tests fail on purpose, each on a defect described where it stands: a form-encoded handshake (`+`
 * for a space) is refused 400; an entry time beyond what a Date holds is a 500; and a removal retried before
 * its job started, run by two workers at once, ends with counts of zero.
 * Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { createHash, createHmac } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brasiliaDay } from '../src/brasilia-time.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import type { JobQueue } from '../src/jobs/index.js';
import { refusingJobQueue } from '../src/jobs/refusing-queue.js';
import { createSocialnetRemovals } from '../src/socialnet/index.js';
import { defaultAppConfig, startTestApp, type TestApp } from './helpers/app.js';
import { expectError, request } from './helpers/http.js';
import { waitFor } from './helpers/process.js';
import { deliver, hubSignature, REMOVAL_PATH, requestRemoval, signedRequest, verify } from '../src/simulators/socialnet.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const VERIFY_TOKEN = 'verify-token-for-palanque-tests';
const APP_SECRET = 'app-secret-of-the-social-network-0123';
const APP_USER = '1024816326';

let app: TestApp;
/** The same app without verify token or app secret. */
let bare: TestApp;
let platformAdmin: TestUser;

/** The settings of the configured app: the defaults, with a verify token and an app secret. */
const configured = { ...defaultAppConfig.socialnet, verifyToken: VERIFY_TOKEN, appSecret: APP_SECRET };

beforeAll(async () => {
  [app, bare] = await Promise.all([
    startTestApp({ config: { socialnet: configured }, withJobs: true }),
    startTestApp(),
  ]);
  platformAdmin = await createAdmin(app);
});

afterAll(async () => {
  await Promise.all([app?.close(), bare?.close()]);
});

async function count(target: TestApp, sql: string, replacements: Record<string, unknown> = {}): Promise<number> {
  const [row] = await target.sequelize.query<{ n: number | string }>(sql, { replacements, type: QueryTypes.SELECT });
  return Number(row!.n);
}

/** Unix seconds, `seconds` before now (after, when negative), on a whole second. */
const secondsAgo = (seconds: number) => Math.floor(Date.now() / 1000) - seconds;
const DAY = 24 * 3600;
const isoOf = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();
/** The Brasília calendar day of an instant: the daily series counts days as a campaign does, not in UTC. */
const dayOf = (unixSeconds: number) => brasiliaDay(new Date(unixSeconds * 1000));

/** A `metrics` change; `fields` override or (with undefined) remove values. */
function metrics(fields: Record<string, unknown> = {}): Json {
  const value: Record<string, unknown> = { network: 'Instagram', username: 'mariasantos', followers: 48210, posts: 1320, engagement: 0.047, mentions: 312, ...fields };
  for (const [key, given] of Object.entries(value)) if (given === undefined) delete value[key];
  return { field: 'metrics', value };
}

/** A delivery of one entry per `entries` item: [time, changes]. */
function delivery(...entries: Array<[number, Json[]]>): Json {
  return { object: 'instagram', entry: entries.map(([time, changes], index) => ({ id: `1784140000000000${index}`, time, changes })) };
}

describe('GET /api/webhook/socialnet/ (verifySocialnetSubscription)', () => {
  it('answers 200 text/plain with exactly hub.challenge, spaces and unicode included', async () => {
    for (const challenge of ['1158201444', 'olá mundo — ✓ 挑战 +&=?', '  padded  ']) {
      const result = await verify(app.baseUrl, { mode: 'subscribe', token: VERIFY_TOKEN, challenge });
      expect(result.status, result.text).toBe(200);
      expect(result.headers.get('content-type')).toMatch(/^text\/plain\b/);
      expect(result.text).toBe(challenge);
    }
  });

  // Fails: the contract declares the three parameters without `allowReserved`, so the validator refuses a
  // literal `+` (and any reserved character) in the raw query with 400, although the operation documents 400
  // only for a missing or empty parameter. Form-encoded query strings (URLSearchParams, PHP, Go, Python)
  // write a space as `+`, so a verify token or challenge with a space can never be confirmed that way.
  it('answers a form-encoded handshake (spaces as +) like a percent-encoded one', async () => {
    const challenge = 'desafio com espaços 1158201444';
    const result = await verify(app.baseUrl, { mode: 'subscribe', token: VERIFY_TOKEN, challenge }, 'form');
    expect(result.status, result.text).toBe(200);
    expect(result.text).toBe(challenge);
  });

  it('refuses a wrong verify token (403 forbidden)', async () => {
    for (const token of [`${VERIFY_TOKEN}x`, VERIFY_TOKEN.slice(0, -1), VERIFY_TOKEN.toUpperCase()]) {
      const result = await verify(app.baseUrl, { mode: 'subscribe', token, challenge: '42' });
      expectError(result, 403, 'forbidden');
      expect(result.text).not.toContain('"42"');
    }
  });

  it('refuses hub.mode other than subscribe (403 forbidden), even with the right token', async () => {
    for (const mode of ['unsubscribe', 'Subscribe']) {
      expectError(await verify(app.baseUrl, { mode, token: VERIFY_TOKEN, challenge: '42' }), 403, 'forbidden');
    }
  });

  it('answers 400 naming each missing or empty parameter', async () => {
    const full = { mode: 'subscribe', token: VERIFY_TOKEN, challenge: '42' };
    const names = { mode: 'hub.mode', token: 'hub.verify_token', challenge: 'hub.challenge' } as const;
    for (const key of ['mode', 'token', 'challenge'] as const) {
      for (const replacement of [undefined, '']) {
        const result = await verify(app.baseUrl, { ...full, [key]: replacement });
        expectError(result, 400, 'bad_request');
        expect(result.body.error.details.map((detail: Json) => detail.field), `${key}=${JSON.stringify(replacement)}`).toEqual([names[key]]);
      }
    }
    const none = await verify(app.baseUrl, {});
    expectError(none, 400, 'bad_request');
    expect(none.body.error.details.map((detail: Json) => detail.field).sort()).toEqual(['hub.challenge', 'hub.mode', 'hub.verify_token']);
  });

  it('refuses every handshake (403) when no verify token is configured', async () => {
    for (const token of [VERIFY_TOKEN, 'undefined', 'null', ' ']) {
      expectError(await verify(bare.baseUrl, { mode: 'subscribe', token, challenge: '42' }), 403, 'forbidden');
    }
  });
});

describe('POST /api/webhook/socialnet/ (receiveSocialnetEvents)', () => {
  let owner: TestUser;
  let first: number;
  let second: number;
  /** Watches the same user name on another network: never fed by instagram metrics. */
  let otherNetwork: number;

  const snapshotsOf = async (monitorId: number): Promise<Json[]> =>
    (
      await app.sequelize.query<Json>('SELECT network, taken_at, followers, posts, engagement, mentions, source FROM metric_snapshots WHERE monitor_id = :monitorId ORDER BY taken_at', {
        replacements: { monitorId },
        type: QueryTypes.SELECT,
      })
    ).map((row: Json) => ({
      network: row.network,
      taken_at: new Date(row.taken_at).toISOString(),
      followers: Number(row.followers),
      posts: Number(row.posts),
      engagement: Number(row.engagement),
      mentions: Number(row.mentions),
      source: row.source,
    }));
  const allSnapshots = () => count(app, 'SELECT COUNT(*) AS n FROM metric_snapshots');

  async function monitor(entityId: number, name: string, nmRede: string): Promise<number> {
    const row = await app.monitors.store.create({ entityId, name, keywords: [], profiles: [{ nm_rede: nmRede, username: 'MariaSantos' }], createdBy: owner.user.id });
    if (row === 'name_taken') throw new Error('name taken');
    return row.id;
  }

  beforeAll(async () => {
    owner = await createUser(app);
    const entityA = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos' });
    const entityB = await app.entities.store.create('candidato', owner.user.id, { nome: 'Maria Santos (vice)' });
    first = await monitor(entityA, 'Redes oficiais', 'instagram');
    second = await monitor(entityB, 'Redes da vice', 'instagram');
    otherNetwork = await monitor(entityB, 'TikTok', 'tiktok');
  });

  const T1 = secondsAgo(2 * DAY);
  const expectedSnapshot = (time: number, fields: Record<string, unknown> = {}) => ({
    network: 'instagram',
    taken_at: isoOf(time),
    followers: 48210,
    posts: 1320,
    engagement: 0.047,
    mentions: 312,
    source: 'socialnet',
    ...fields,
  });

  it('stores one snapshot, taken at entry.time, in every monitor watching the profile (user name and network ignoring case)', async () => {
    const result = await deliver(app.baseUrl, APP_SECRET, delivery([T1, [metrics()]]));
    expect(result.status, result.text).toBe(200);
    expect(result.body).toEqual({
      success: true,
      data: { changes: 1, created: 2, replaced: 0, unchanged: 0, outdated: 0, ignored: 0, messages: 0, deliveries: 0, duplicate: false },
      message: '1 change received; 2 snapshots stored.',
      request_id: result.headers.get('x-request-id'),
    });
    expect(await snapshotsOf(first)).toEqual([expectedSnapshot(T1)]);
    expect(await snapshotsOf(second)).toEqual([expectedSnapshot(T1)]);
    expect(await snapshotsOf(otherNetwork)).toEqual([]);
  });

  it('acknowledges the same delivery sent again (200) and ignores it as seen before', async () => {
    const result = await deliver(app.baseUrl, APP_SECRET, delivery([T1, [metrics()]]));
    expect(result.status, result.text).toBe(200);
    expect(result.body.data).toEqual({ changes: 1, created: 0, replaced: 0, unchanged: 0, outdated: 0, ignored: 1, messages: 0, deliveries: 0, duplicate: true });
    expect(result.body.message).toBe('Delivery seen before: 1 change ignored.');
    expect(await snapshotsOf(first)).toEqual([expectedSnapshot(T1)]);
    expect(await snapshotsOf(second)).toEqual([expectedSnapshot(T1)]);
  });

  it('replaces a snapshot whose values were corrected', async () => {
    const result = await deliver(app.baseUrl, APP_SECRET, delivery([T1, [metrics({ username: 'MARIASANTOS', network: 'INSTAGRAM', followers: 48300 })]]));
    expect(result.status, result.text).toBe(200);
    expect(result.body.data).toEqual({ changes: 1, created: 0, replaced: 2, unchanged: 0, outdated: 0, ignored: 0, messages: 0, deliveries: 0, duplicate: false });
    expect(await snapshotsOf(first)).toEqual([expectedSnapshot(T1, { followers: 48300 })]);
    expect(await snapshotsOf(second)).toEqual([expectedSnapshot(T1, { followers: 48300 })]);
  });

  const T2 = secondsAgo(DAY);
  it('ignores changes of other fields and metrics of unwatched profiles, storing the rest', async () => {
    const result = await deliver(
      app.baseUrl,
      APP_SECRET,
      delivery(
        [T2, [{ field: 'feed', value: { item: 'post', verb: 'add' } }, metrics({ username: 'outra.conta' }), metrics({ network: 'facebook' })]],
        [T2, [metrics({ followers: 48400, posts: 1321, engagement: 0.05, mentions: 330 })]],
      ),
    );
    expect(result.status, result.text).toBe(200);
    expect(result.body.data).toEqual({ changes: 4, created: 2, replaced: 0, unchanged: 0, outdated: 0, ignored: 3, messages: 0, deliveries: 0, duplicate: false });
    expect(result.body.message).toBe('4 changes received; 2 snapshots stored.');
    const newest = expectedSnapshot(T2, { followers: 48400, posts: 1321, engagement: 0.05, mentions: 330 });
    expect(await snapshotsOf(first)).toEqual([expectedSnapshot(T1, { followers: 48300 }), newest]);
    expect(await snapshotsOf(second)).toEqual([expectedSnapshot(T1, { followers: 48300 }), newest]);
    expect(await snapshotsOf(otherNetwork)).toEqual([]);
  });

  it('shows the delivered metrics in GET /api/monitor_social/data/', async () => {
    const result = await request(app.baseUrl, 'GET', `/api/monitor_social/data/?id_monitor=${first}`, platformAdmin.headers);
    expect(result.status, result.text).toBe(200);
    const [view] = result.body.data;
    expect(view.id).toBe(first);
    expect(view.latest_metrics).toEqual([{ network: 'instagram', taken_at: isoOf(T2), followers: 48400, posts: 1321, engagement: 0.05, mentions: 330 }]);
    expect(view.daily_series).toEqual(
      expect.arrayContaining([
        { date: dayOf(T1), network: 'instagram', followers: 48300, posts: 1320, engagement: 0.047, mentions: 312 },
        { date: dayOf(T2), network: 'instagram', followers: 48400, posts: 1321, engagement: 0.05, mentions: 330 },
      ]),
    );
  });

  describe('replays and ordering', () => {
    const followersAt = async (monitorId: number, time: number) => (await snapshotsOf(monitorId)).filter((snapshot) => snapshot.taken_at === isoOf(time)).map((snapshot) => snapshot.followers);
    const counts = (fields: Record<string, number | boolean>) => ({ changes: 1, created: 0, replaced: 0, unchanged: 0, outdated: 0, ignored: 0, messages: 0, deliveries: 0, duplicate: false, ...fields });

    it('ignores a replay of an earlier signed delivery: the correction sent since, with the same entry.time, stays', async () => {
      const time = secondsAgo(6 * DAY);
      const original = JSON.stringify(delivery([time, [metrics({ followers: 100 })]]));
      const originalSignature = hubSignature(original, APP_SECRET);
      const stored = await deliver(app.baseUrl, APP_SECRET, original, { signature: originalSignature });
      const correction = await deliver(app.baseUrl, APP_SECRET, delivery([time, [metrics({ followers: 150 })]]));
      expect(await followersAt(first, time)).toEqual([150]);

      // The attacker holds the first delivery's exact bytes and signature.
      const replay = await deliver(app.baseUrl, APP_SECRET, original, { signature: originalSignature });
      expect(replay.status, replay.text).toBe(200);
      expect(await followersAt(first, time)).toEqual([150]);
      expect(await followersAt(second, time)).toEqual([150]);
      expect([stored, correction, replay].map((result) => result.body.data)).toEqual([counts({ created: 2 }), counts({ replaced: 2 }), counts({ ignored: 1, messages: 0, deliveries: 0, duplicate: true })]);
    });

    it('processes one of several copies of a delivery arriving at once, and acknowledges the others as seen', async () => {
      const time = secondsAgo(6 * DAY + 3600);
      const raw = JSON.stringify(delivery([time, [metrics({ followers: 300 })]]));
      const results = await Promise.all(Array.from({ length: 6 }, () => deliver(app.baseUrl, APP_SECRET, raw)));
      for (const result of results) expect(result.status, result.text).toBe(200);
      // Processed once: a single copy counts the two snapshots it created (or found created).
      expect(results.filter((result) => result.body.data.created + result.body.data.unchanged > 0)).toHaveLength(1);
      const processed = results.filter((result) => !result.body.data.duplicate);
      expect(processed.map((result) => result.body.data)).toEqual([counts({ created: 2 })]);
      expect(results.filter((result) => result.body.data.duplicate)).toHaveLength(5);
      expect(await followersAt(first, time)).toEqual([300]);
    });

    it('never overwrites a snapshot with a change whose updated_time is older than the stored one', async () => {
      const time = secondsAgo(7 * DAY);
      const at = (followers: number, updatedTime?: number) => deliver(app.baseUrl, APP_SECRET, delivery([time, [metrics({ followers, updated_time: updatedTime })]]));
      const stored = await at(200, time + 600);
      // An earlier computation of the same counters, delivered late: outdated, kept out.
      const earlier = await at(180, time + 300);
      expect(await followersAt(first, time)).toEqual([200]);
      // Without updated_time a change counts from its entry's time: older than time + 600 too.
      const untimed = await at(170);
      expect(await followersAt(first, time)).toEqual([200]);
      expect([stored, earlier, untimed].map((result) => result.body.data)).toEqual([counts({ created: 2 }), counts({ outdated: 2 }), counts({ outdated: 2 })]);
      // The same updated_time is no older: a correction of it replaces it; a later one too.
      expect((await at(210, time + 600)).body.data).toEqual(counts({ replaced: 2 }));
      expect((await at(220, time + 900)).body.data).toEqual(counts({ replaced: 2 }));
      expect((await at(215, time + 800)).body.data).toEqual(counts({ outdated: 2 }));
      expect(await followersAt(first, time)).toEqual([220]);
      expect(await followersAt(second, time)).toEqual([220]);
    });

    it('releases a claim whose processing failed, and lets one left unfinished for 10 minutes (its process died) be taken over once', async () => {
      const deliveries = app.socialnetDeliveries;
      const body = Buffer.from('{"object":"instagram","entry":[],"probe":"claims"}');
      const claim = await deliveries.claim(body);
      expect(claim).toBe(createHash('sha256').update(body).digest('hex'));
      expect(await deliveries.claim(body)).toBeUndefined();
      await deliveries.release(claim!);
      expect(await deliveries.claim(body)).toBe(claim);
      const later = new Date(Date.now() + 11 * 60_000);
      expect(await deliveries.claim(body, later)).toBe(claim);
      expect(await deliveries.claim(body, later)).toBeUndefined();
      // Processed: never taken over, however old; and no longer released.
      await deliveries.processed(claim!, later);
      await deliveries.release(claim!);
      expect(await deliveries.claim(body, new Date(Date.now() + 60 * 60_000))).toBeUndefined();
    });

    it('forgets a delivery once its hash is purged (SOCIALNET_REPLAY_WINDOW_SECONDS), and processes it again', async () => {
      const time = secondsAgo(8 * DAY);
      const raw = JSON.stringify(delivery([time, [metrics({ followers: 400 })]]));
      expect((await deliver(app.baseUrl, APP_SECRET, raw)).body.data.duplicate).toBe(false);
      const seen = () => count(app, 'SELECT COUNT(*) AS n FROM socialnet_deliveries');
      const before = await seen();
      // A window of an hour, two hours from now: every hash kept so far is older.
      expect(await app.socialnetDeliveries.purgeExpired(3600_000, new Date(Date.now() + 2 * 3600_000))).toBe(before);
      expect(await seen()).toBe(0);
      expect((await deliver(app.baseUrl, APP_SECRET, raw)).body.data).toEqual(counts({ unchanged: 2 }));
      // Within the window nothing goes.
      expect(await app.socialnetDeliveries.purgeExpired(3600_000)).toBe(0);
      expect(await seen()).toBe(1);
    });
  });

  describe('signatures', () => {
    const fresh = () => delivery([secondsAgo(3 * DAY), [metrics({ followers: 1 })]]);

    it('answers 401 invalid_signature without X-Hub-Signature-256, storing nothing', async () => {
      const before = await allSnapshots();
      expectError(await deliver(app.baseUrl, APP_SECRET, fresh(), { signature: null }), 401, 'invalid_signature');
      expect(await allSnapshots()).toBe(before);
    });

    it('answers 403 invalid_signature to a wrong signature, one of other bytes, a sha1= one, or a malformed one', async () => {
      const before = await allSnapshots();
      const body = fresh();
      const raw = JSON.stringify(body);
      const cases: Array<[string, string]> = [
        ['other secret', hubSignature(raw, `${APP_SECRET}-other`)],
        ['re-serialised with other spacing', hubSignature(JSON.stringify(body, null, 2), APP_SECRET)],
        ['sha1 prefix', `sha1=${createHmac('sha1', APP_SECRET).update(raw).digest('hex')}`],
        ['sha1 prefix on a sha256 digest', hubSignature(raw, APP_SECRET).replace('sha256=', 'sha1=')],
        ['no prefix', hubSignature(raw, APP_SECRET).slice('sha256='.length)],
        ['truncated', hubSignature(raw, APP_SECRET).slice(0, -2)],
      ];
      for (const [what, signature] of cases) {
        const result = await deliver(app.baseUrl, APP_SECRET, raw, { signature });
        expect(result.status, what).toBe(403);
        expectError(result, 403, 'invalid_signature');
      }
      expect(await allSnapshots()).toBe(before);
    });

    it('refuses (403) any signature when no app secret is configured', async () => {
      const body = fresh();
      for (const secret of [APP_SECRET, '']) {
        expectError(await deliver(bare.baseUrl, secret, body), 403, 'invalid_signature');
      }
      expect(await count(bare, 'SELECT COUNT(*) AS n FROM metric_snapshots')).toBe(0);
    });

    it('processes a signed delivery after an unsigned one with the same Idempotency-Key (no replay of the 401)', async () => {
      const time = secondsAgo(4 * DAY);
      const body = delivery([time, [metrics({ followers: 47000 })]]);
      const headers = { 'Idempotency-Key': 'socialnet-delivery-0001' };
      expectError(await deliver(app.baseUrl, APP_SECRET, body, { signature: null, headers }), 401, 'invalid_signature');
      const signed = await deliver(app.baseUrl, APP_SECRET, body, { headers });
      expect(signed.status, signed.text).toBe(200);
      expect(signed.headers.get('idempotent-replayed')).toBeNull();
      expect(signed.body.data).toEqual({ changes: 1, created: 2, replaced: 0, unchanged: 0, outdated: 0, ignored: 0, messages: 0, deliveries: 0, duplicate: false });
      expect((await snapshotsOf(first)).filter((snapshot) => snapshot.taken_at === isoOf(time))).toEqual([expectedSnapshot(time, { followers: 47000 })]);
      // The signed answer is the one kept for the key.
      const again = await deliver(app.baseUrl, APP_SECRET, body, { headers });
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body.data).toEqual(signed.body.data);
    });
  });

  describe('422: nothing stored', () => {
    const time = secondsAgo(5 * DAY);

    async function expectRefused(body: Json, fields: string[]): Promise<void> {
      const before = await allSnapshots();
      const result = await deliver(app.baseUrl, APP_SECRET, body);
      expectError(result, 422, 'validation_failed');
      const named = result.body.error.details.map((detail: Json) => detail.field);
      for (const field of fields) expect(named, result.text).toContain(field);
      expect(await allSnapshots()).toBe(before);
    }

    it('names followers that are negative, not integers, or missing', async () => {
      for (const followers of [-1, 1.5, undefined, '10']) {
        await expectRefused(delivery([time, [metrics({ followers })]]), ['entry.0.changes.0.value.followers']);
      }
    });

    it('names a blank or missing username', async () => {
      for (const username of ['', '   ', undefined]) {
        await expectRefused(delivery([time, [metrics({ username })]]), ['entry.0.changes.0.value.username']);
      }
    });

    it('names an updated_time that is not whole Unix seconds, in the future or before 2000', async () => {
      for (const updatedTime of [1.5, '1763726400', -1, secondsAgo(-DAY), Date.UTC(1999, 11, 31) / 1000]) {
        await expectRefused(delivery([time, [metrics({ updated_time: updatedTime })]]), ['entry.0.changes.0.value.updated_time']);
      }
    });

    it('names an entry time in the future or before 2000', async () => {
      await expectRefused(delivery([secondsAgo(-DAY), [metrics()]]), ['entry.0.time']);
      await expectRefused(delivery([Date.UTC(1999, 11, 31, 23, 59, 59) / 1000, [metrics()]]), ['entry.0.time']);
    });

    // A time beyond what a Date holds (over 8.64e12 s; the schema allows the messenger's milliseconds).
    it('names an entry time too far in the future to be a date (422, not 500)', async () => {
      await expectRefused(delivery([1e13, [metrics()]]), ['entry.0.time']);
    });

    it('checks the delivery against its schema before the signature (422 signed or not)', async () => {
      for (const signature of [undefined, null]) {
        const before = await allSnapshots();
        const result = await deliver(app.baseUrl, APP_SECRET, { object: 'instagram', entry: [{ id: '1', time: -1, changes: [metrics()] }] }, { signature });
        expectError(result, 422, 'validation_failed');
        expect(await allSnapshots()).toBe(before);
      }
    });

    it('stores nothing of a delivery mixing a good change and a bad one', async () => {
      await expectRefused(delivery([time, [metrics(), metrics({ username: 'MariaSantos', network: 'instagram', followers: -5 })]]), [
        'entry.0.changes.1.value.followers',
      ]);
      await expectRefused(delivery([time, [metrics()]], [secondsAgo(-DAY), [metrics()]]), ['entry.1.time']);
      expect((await snapshotsOf(first)).map((snapshot) => snapshot.taken_at)).not.toContain(isoOf(time));
    });
  });

  it('answers 400 bad_request to a signed body that is not JSON', async () => {
    const before = await allSnapshots();
    expectError(await deliver(app.baseUrl, APP_SECRET, '{"object": "instagram", "entry": ['), 400, 'bad_request');
    expect(await allSnapshots()).toBe(before);
  });
});

describe('POST and GET /api/callback/socialnet_removal/ (receiveSocialnetRemoval, getSocialnetRemovalStatus)', () => {
  let person: TestUser;
  let stranger: TestUser;
  let entityId: number;
  let firstCode: string;
  const payload = { algorithm: 'HMAC-SHA256', issued_at: secondsAgo(60), user_id: APP_USER };

  const removals = (target: TestApp = app) => count(target, 'SELECT COUNT(*) AS n FROM socialnet_removals');
  const status = (caller: TestUser | undefined, query: string) => request(app.baseUrl, 'GET', `${REMOVAL_PATH}${query}`, caller?.headers ?? {});
  /** The status envelope once the removal's job has completed (read by a platform admin). */
  const completed = (code: string): Promise<Json> =>
    waitFor(
      async () => {
        const result = await status(platformAdmin, `?id=${code}`);
        expect(result.status, result.text).toBe(200);
        return result.body.data.status === 'completed' ? result.body : undefined;
      },
      { timeoutMs: 10_000, what: `removal ${code} to complete` },
    );

  beforeAll(async () => {
    person = await createUser(app);
    stranger = await createUser(app);
    // The person's login holds provider tokens (sealed): they go with it, and are counted.
    await app.accounts.models.SocialLogin.create({
      user_id: person.user.id,
      provider: 'socialnet',
      external_id: APP_USER,
      display_name: 'x',
      linked_at: new Date(),
      access_token_sealed: 'v1.sealed-access-token',
      refresh_token_sealed: 'v1.sealed-refresh-token',
    });
    // Another person's login on the same network stays.
    await app.accounts.models.SocialLogin.create({ user_id: stranger.user.id, provider: 'socialnet', external_id: '99887766', display_name: 'y', linked_at: new Date() });
    entityId = await app.entities.store.create('candidato', person.user.id, {
      nome: 'Pessoa Removida',
      referencia_social: {
        tipo: 'x',
        nm: 'x',
        origem_name: 'x',
        social_network: [
          { nm_rede: 'facebook', id: APP_USER },
          { nm_rede: 'facebook', id: '99887766' },
        ],
      },
    });
  });

  const profileIds = async () =>
    (
      await app.sequelize.query<{ profile_id: string }>('SELECT profile_id FROM social_network_entries ORDER BY profile_id', { type: QueryTypes.SELECT })
    ).map((row) => row.profile_id);
  const loginIds = async () =>
    (await app.accounts.models.SocialLogin.findAll({ where: { provider: 'socialnet' }, order: [['external_id', 'ASC']] })).map((row) => row.get('external_id'));

  it('records a valid signed request: 201 with the status url and a confirmation code, not enveloped', async () => {
    expect(await profileIds()).toEqual(['1024816326', '99887766']);
    const result = await requestRemoval(app.baseUrl, APP_SECRET, payload);
    expect(result.status, result.text).toBe(201);
    expect(Object.keys(result.body).sort()).toEqual(['confirmation_code', 'url']);
    firstCode = result.body.confirmation_code;
    expect(firstCode).toMatch(/^[A-Za-z0-9_-]{8,64}$/);
    expect(result.body.url).toBe(`${app.baseUrl}${REMOVAL_PATH}?id=${encodeURIComponent(firstCode)}`);
  });

  it('runs the removal: completed, with the counts, and the rows are gone', async () => {
    const done = await completed(firstCode);
    expect(done).toEqual({
      success: true,
      data: {
        confirmation_code: firstCode,
        status: 'completed',
        received_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        completed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        removed: { social_logins: 1, provider_tokens: 1, profiles: 1 },
      },
      message: 'The data was removed.',
      request_id: expect.any(String),
    });
    expect(new Date(done.data.completed_at).getTime()).toBeGreaterThanOrEqual(new Date(done.data.received_at).getTime());
    expect(await loginIds()).toEqual(['99887766']);
    expect(await profileIds()).toEqual(['99887766']);
    // The entity itself stays, with its other profile.
    const stored = await app.entities.store.load(entityId);
    const entity = stored?.entity;
    expect(entity?.nome).toBe('Pessoa Removida');
    expect(entity?.referencia_social?.social_network?.map((entry) => entry.id)).toEqual(['99887766']);
    // A new version, written by no user: a form still holding the removed profile cannot post it back with If-Match.
    expect(stored).toMatchObject({ version: 2, updatedBy: null });
  });

  it('answers the same signed request again with 200 and the same code, leaving the finished removal as it was', async () => {
    const before = (await completed(firstCode)).data;
    const result = await requestRemoval(app.baseUrl, APP_SECRET, payload);
    expect(result.status, result.text).toBe(200);
    expect(result.body).toEqual({ url: `${app.baseUrl}${REMOVAL_PATH}?id=${encodeURIComponent(firstCode)}`, confirmation_code: firstCode });
    expect(await removals()).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await completed(firstCode)).data).toEqual(before);
  });

  it('lets a platform admin and the person whose login was removed read the status; others get 404', async () => {
    for (const caller of [platformAdmin, person]) {
      const result = await status(caller, `?id=${firstCode}`);
      expect(result.status, result.text).toBe(200);
      expect(result.body.data.confirmation_code).toBe(firstCode);
    }
    expectError(await status(stranger, `?id=${firstCode}`), 404, 'not_found');
    expectError(await status(platformAdmin, '?id=rm_unknown_code_123'), 404, 'not_found');
  });

  it('answers 400 to a missing or malformed id, and 401 without a key', async () => {
    for (const query of ['', '?id=', '?id=short', '?id=has%20space%20inside', `?id=${'a'.repeat(65)}`]) {
      expectError(await status(platformAdmin, query), 400, 'bad_request');
    }
    expectError(await status(undefined, `?id=${firstCode}`), 401, 'unauthorized');
  });

  it('gives a different signed request for the same person, issued nearly 24 hours ago, a new code', async () => {
    const result = await requestRemoval(app.baseUrl, APP_SECRET, { ...payload, issued_at: secondsAgo(DAY - 120) });
    expect(result.status, result.text).toBe(201);
    expect(result.body.confirmation_code).not.toBe(firstCode);
    expect(await removals()).toBe(2);
    // Everything went with the first request: this one finds nothing left.
    expect((await completed(result.body.confirmation_code)).data.removed).toEqual({ social_logins: 0, provider_tokens: 0, profiles: 0 });
  });

  describe('refusals record nothing', () => {
    async function expectRefused(result: Awaited<ReturnType<typeof requestRemoval>>, status: number, code: string, target: TestApp = app): Promise<void> {
      expectError(result, status, code);
      expect(await removals(target)).toBe(target === app ? 2 : 0);
    }

    it('answers 403 invalid_signature to a bad signature', async () => {
      await expectRefused(await requestRemoval(app.baseUrl, `${APP_SECRET}-other`, { ...payload, issued_at: 1 }), 403, 'invalid_signature');
      // A good signature moved onto another payload.
      const [signature] = signedRequest(payload, APP_SECRET).split('.');
      const [, otherPayload] = signedRequest({ ...payload, user_id: '1' }, APP_SECRET).split('.');
      await expectRefused(await requestRemoval(app.baseUrl, APP_SECRET, {}, { signed_request: `${signature}.${otherPayload}` }), 403, 'invalid_signature');
    });

    it('answers 400 to a signed_request that is not <signature>.<payload>', async () => {
      const good = signedRequest({ ...payload, issued_at: 2 }, APP_SECRET);
      for (const signed of ['abc', `${good}.extra`, good.replace('.', ''), `${good.split('.')[0]}.`, `.${good.split('.')[1]}`, good.replace('.', '.$')]) {
        const result = await requestRemoval(app.baseUrl, APP_SECRET, {}, { signed_request: signed });
        await expectRefused(result, 400, 'bad_request');
        expect(result.body.error.details[0].field).toBe('signed_request');
      }
    });

    it('answers 400 to a validly signed payload that is not JSON, names no user, or names another algorithm', async () => {
      const { user_id: _, ...withoutUser } = payload;
      for (const body of ['not json at all', withoutUser, { ...payload, user_id: '' }, { ...payload, user_id: 'bad id!' }, { ...payload, algorithm: 'HMAC-SHA1' }]) {
        await expectRefused(await requestRemoval(app.baseUrl, APP_SECRET, body), 400, 'bad_request');
      }
    });

    it('answers 422 without signed_request', async () => {
      await expectRefused(await requestRemoval(app.baseUrl, APP_SECRET, {}, { other: 'x' }), 422, 'validation_failed');
    });

    /** A validly signed request refused with 400 naming signed_request.issued_at and `rule`. */
    async function expectIssuedAtRefused(issuedAt: unknown, rule: string, target: TestApp = app): Promise<void> {
      const result = await requestRemoval(target.baseUrl, APP_SECRET, { ...payload, issued_at: issuedAt });
      await expectRefused(result, 400, 'bad_request', target);
      expect(result.body.error.details, result.text).toEqual([
        { location: 'body', field: 'signed_request.issued_at', rule, message: expect.any(String), ...(issuedAt === undefined ? {} : { value: issuedAt }) },
      ]);
    }

    it('answers 400 to a signed request without issued_at, or with one that is not whole Unix seconds', async () => {
      await expectIssuedAtRefused(undefined, 'required');
      for (const issuedAt of ['1763726400', 1763726400.5, -5, null]) await expectIssuedAtRefused(issuedAt, 'unix_time');
    });

    it('answers 400 to a signed request issued more than 24 hours ago, or more than 5 minutes ahead', async () => {
      await expectIssuedAtRefused(secondsAgo(DAY + 60), 'max_age');
      await expectIssuedAtRefused(1, 'max_age');
      await expectIssuedAtRefused(secondsAgo(-600), 'not_in_future');
    });

    it('takes the longest age from SOCIALNET_REMOVAL_MAX_AGE_SECONDS', async () => {
      const strict = await startTestApp({ config: { socialnet: { ...configured, removalMaxAgeMs: 600_000 } } });
      try {
        await expectIssuedAtRefused(secondsAgo(1200), 'max_age', strict);
      } finally {
        await strict.close();
      }
    });
  });

  it('accepts a signed request issued a little ahead of the clock (within 5 minutes)', async () => {
    const result = await requestRemoval(app.baseUrl, APP_SECRET, { ...payload, user_id: '31415926', issued_at: secondsAgo(-60) });
    expect(result.status, result.text).toBe(201);
  });

  // The same request retried before its job started is queued twice (its first job may have been lost),
  // so two workers (two instances, or two slots of the SQLite runner) may take the two jobs at once. A
  // run claims the request (received -> processing) in the transaction that deletes, so the second finds
  // it claimed and changes nothing: the counts stay those of the deletion.
  it('keeps the counts of a removal retried before its job started, when two workers take its two jobs', async () => {
    const appUser = '55500011';
    const owner = await createUser(app);
    await app.accounts.models.SocialLogin.create({ user_id: owner.user.id, provider: 'socialnet', external_id: appUser, display_name: 'z', linked_at: new Date() });
    await app.entities.store.create('candidato', owner.user.id, {
      nome: 'Pessoa Apressada',
      referencia_social: { tipo: 'x', nm: 'x', origem_name: 'x', social_network: [{ nm_rede: 'facebook', id: appUser }] },
    });
    const queued: number[] = [];
    // Holds the removal's jobs instead of running them; everything else as a queue that runs nothing.
    const held: JobQueue = {
      ...refusingJobQueue('removals queue their jobs one at a time'),
      async enqueue(_name, data) {
        queued.push((data as { removal_id: number }).removal_id);
        return `held-${queued.length}`;
      },
    };
    const { SocialLogin } = app.accounts.models;
    // The first worker's deletion takes a while, so the second runs while the first holds its claim.
    const slow = {
      findOne: SocialLogin.findOne.bind(SocialLogin),
      count: SocialLogin.count.bind(SocialLogin),
      async destroy(options: Parameters<typeof SocialLogin.destroy>[0]) {
        await new Promise((resolve) => setTimeout(resolve, 300));
        return SocialLogin.destroy(options);
      },
    } as unknown as typeof SocialLogin;
    const worker = (socialLogin: typeof SocialLogin) =>
      createSocialnetRemovals(app.sequelize, { accounts: { ...app.accounts.models, SocialLogin: socialLogin }, entities: app.entities.models, jobs: held });
    const first = worker(slow);
    const second = worker(SocialLogin);

    const signed = signedRequest({ algorithm: 'HMAC-SHA256', issued_at: secondsAgo(30), user_id: appUser }, APP_SECRET);
    const received = await first.receive(signed, appUser);
    expect(await first.receive(signed, appUser)).toEqual({ created: false, code: received.code });
    expect(queued).toHaveLength(2);
    expect(new Set(queued).size).toBe(1);

    const firstRun = first.run(queued[0]!);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The second run either finds the request claimed, or (SQLite) waits out the first one's lock or
    // fails to get it, to be retried by the queue; it never deletes or counts a second time.
    const [firstResult, secondResult] = await Promise.allSettled([firstRun, second.run(queued[1]!)]);
    expect(firstResult).toEqual({ status: 'fulfilled', value: { status: 'completed' } });
    if (secondResult.status === 'fulfilled') expect(['processing', 'completed']).toContain(secondResult.value.status);
    expect(await second.run(queued[1]!)).toEqual({ status: 'completed' });
    expect(await count(app, 'SELECT COUNT(*) AS n FROM social_logins WHERE external_id = :appUser', { appUser })).toBe(0);
    expect(await count(app, 'SELECT COUNT(*) AS n FROM social_network_entries WHERE profile_id = :appUser', { appUser })).toBe(0);
    expect((await completed(received.code)).data.removed).toEqual({ social_logins: 1, provider_tokens: 0, profiles: 1 });
  });
});
