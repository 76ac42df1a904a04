/**
 * Web Push to operators' devices (src/push/sender.ts) against the push service simulator
 * (src/simulators/push-service.ts), which decrypts what arrives and checks the VAPID signature itself:
 * - a delivered message decrypts to the payload sent, with the sender's TTL and VAPID subject;
 * - 404 and 410 from the push service are 'gone'; a wrong VAPID key pair, a message the browser cannot
 *   decrypt, a body over 4096 bytes, nobody listening, a push service that never answers and a plain
 *   http: endpoint not allowed are 'failed', and none of them throws;
 * - the simulator's own refusals, each shown against the same request untouched: no Authorization, a
 *   JWT for another audience, an expired one, no TTL, the legacy aesgcm encoding;
 * - checkVapidKeys: web-push's checks of each key and the subject, and keys of two different pairs.
 */
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import webpush from 'web-push';
import { checkVapidKeys, PushSender, type VapidKeys } from '../src/push/sender.js';
import { PushServiceSimulator, type SimulatedSubscription } from '../src/simulators/push-service.js';

const SUBJECT = 'mailto:plantao@palanque.test';
const vapid: VapidKeys = { ...webpush.generateVAPIDKeys(), subject: SUBJECT };
const PAYLOAD = { kind: 'chat.message', title: 'Nova mensagem de eleitor', body: 'São Paulo — "quero ajudar na campanha"', conversationId: 42 };

let pushService: PushServiceSimulator;
let sender: PushSender;

beforeAll(async () => {
  pushService = await PushServiceSimulator.start();
  sender = new PushSender(vapid, { ttlSeconds: 3600, allowLoopbackHttp: true });
});

afterAll(async () => {
  await pushService.close();
});

describe('PushSender', () => {
  it('delivers a payload the browser decrypts, with its TTL and the VAPID subject', async () => {
    const subscription = pushService.subscribe();

    expect(await sender.send(subscription, PAYLOAD)).toEqual({ outcome: 'delivered', status: 201 });
    expect(await sender.send(subscription, { kind: 'ping' })).toEqual({ outcome: 'delivered', status: 201 });

    expect(pushService.received(subscription.endpoint)).toEqual([
      { payload: PAYLOAD, ttl: 3600, vapidSubject: SUBJECT },
      { payload: { kind: 'ping' }, ttl: 3600, vapidSubject: SUBJECT },
    ]);
  });

  it('keeps messages for a day by default', async () => {
    const subscription = pushService.subscribe();

    await new PushSender(vapid, { allowLoopbackHttp: true }).send(subscription, PAYLOAD);

    expect(pushService.received(subscription.endpoint).map((message) => message.ttl)).toEqual([86_400]);
  });

  it("is 'gone' with 410 for a subscription the user ended, and 404 for one the push service does not know", async () => {
    const subscription = pushService.subscribe();
    pushService.expire(subscription.endpoint);
    const unknown = { ...pushService.subscribe(), endpoint: `${pushService.url}/push/never-made-by-this-service` };

    expect(await sender.send(subscription, PAYLOAD)).toEqual({ outcome: 'gone', status: 410 });
    expect(await sender.send(unknown, PAYLOAD)).toEqual({ outcome: 'gone', status: 404 });
    expect(pushService.received(subscription.endpoint)).toEqual([]);
  });

  it("is 'failed' with 403 when the VAPID public key is not the signing key's", async () => {
    const otherPair = webpush.generateVAPIDKeys();
    const mismatched = new PushSender({ ...vapid, publicKey: otherPair.publicKey }, { allowLoopbackHttp: true });
    const subscription = pushService.subscribe();

    const outcome = await mismatched.send(subscription, PAYLOAD);

    expect(outcome).toMatchObject({ outcome: 'failed', status: 403 });
    expect(outcome.outcome === 'failed' && outcome.reason).toMatch(/not signed by the key k/);
    expect(pushService.received(subscription.endpoint)).toEqual([]);
  });

  it("is 'failed' with 400 when the message was encrypted for another browser's auth secret", async () => {
    const subscription = pushService.subscribe();
    const otherBrowsers = pushService.subscribe();

    const outcome = await sender.send({ ...subscription, keys: { ...subscription.keys, auth: otherBrowsers.keys.auth } }, PAYLOAD);

    expect(outcome).toMatchObject({ outcome: 'failed', status: 400 });
    expect(pushService.received(subscription.endpoint)).toEqual([]);
  });

  it("is 'failed' with 413 for a payload over the 4096 bytes push services take", async () => {
    const outcome = await sender.send(pushService.subscribe(), { text: 'x'.repeat(5000) });

    expect(outcome).toMatchObject({ outcome: 'failed', status: 413 });
  });

  it("is 'failed' without a status, and does not throw, when nobody listens", async () => {
    const port = await freePort();
    const subscription = { ...pushService.subscribe(), endpoint: `http://127.0.0.1:${port}/push/abc` };

    const outcome = await sender.send(subscription, PAYLOAD);

    expect(outcome).toEqual({ outcome: 'failed', reason: expect.stringMatching(/ECONNREFUSED/) });
  });

  it("is 'failed' once the push service keeps silent for longer than the timeout", async () => {
    const silent = await silentServer();
    try {
      const impatient = new PushSender(vapid, { timeoutMs: 200, allowLoopbackHttp: true });
      const subscription = { ...pushService.subscribe(), endpoint: `http://127.0.0.1:${silent.port}/push/abc` };

      const started = Date.now();
      const outcome = await impatient.send(subscription, PAYLOAD);

      expect(outcome).toEqual({ outcome: 'failed', reason: 'Socket timeout' });
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await silent.close();
    }
  });

  it("is 'failed' for a plain http: endpoint unless loopback http was allowed, and for an endpoint that is not a URL", async () => {
    const subscription = pushService.subscribe();
    const strict = new PushSender(vapid);

    expect(await strict.send(subscription, PAYLOAD)).toEqual({ outcome: 'failed', reason: expect.stringMatching(/https/) });
    expect(await sender.send({ ...subscription, endpoint: 'http://push.example.com/push/abc' }, PAYLOAD)).toEqual({
      outcome: 'failed',
      reason: expect.stringMatching(/https/),
    });
    expect(await sender.send({ ...subscription, endpoint: 'not a url' }, PAYLOAD)).toEqual({ outcome: 'failed', reason: expect.stringMatching(/not a URL/) });
    expect(pushService.received(subscription.endpoint)).toEqual([]);
  });

  it("is 'failed' for a subscription whose keys are malformed", async () => {
    const subscription = pushService.subscribe();

    const outcome = await sender.send({ ...subscription, keys: { ...subscription.keys, p256dh: 'AAAA' } }, PAYLOAD);

    expect(outcome).toEqual({ outcome: 'failed', reason: expect.stringMatching(/p256dh/) });
  });
});

describe('the push service simulator', () => {
  /** The request web-push would send, to be altered one header at a time. */
  function pushRequest(subscription: SimulatedSubscription, options: { audience?: string; expiration?: number } = {}) {
    const details = webpush.generateRequestDetails(subscription, JSON.stringify(PAYLOAD), { vapidDetails: vapid, TTL: 60, contentEncoding: 'aes128gcm' });
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(details.headers)) if (name !== 'Content-Length') headers[name] = String(value);
    if (options.audience || options.expiration) {
      headers.Authorization = webpush.getVapidHeaders(options.audience ?? pushService.url, SUBJECT, vapid.publicKey, vapid.privateKey, 'aes128gcm', options.expiration).Authorization;
    }
    return { headers, body: details.body };
  }

  async function post(subscription: SimulatedSubscription, request: { headers: Record<string, string>; body: Buffer }): Promise<number> {
    const answer = await fetch(subscription.endpoint, { method: 'POST', headers: request.headers, body: new Uint8Array(request.body) });
    await answer.arrayBuffer();
    return answer.status;
  }

  it('takes the request web-push makes, with 201 and a Location', async () => {
    const subscription = pushService.subscribe();
    const request = pushRequest(subscription);

    const answer = await fetch(subscription.endpoint, { method: 'POST', headers: request.headers, body: new Uint8Array(request.body) });

    expect(answer.status).toBe(201);
    expect(answer.headers.get('location')).toMatch(new RegExp(`^${pushService.url}/message/`));
    expect(pushService.received(subscription.endpoint)).toEqual([{ payload: PAYLOAD, ttl: 60, vapidSubject: SUBJECT }]);
  });

  it('answers 401 without a vapid Authorization', async () => {
    const subscription = pushService.subscribe();
    const { Authorization: _dropped, ...headers } = pushRequest(subscription).headers;

    expect(await post(subscription, { ...pushRequest(subscription), headers })).toBe(401);
  });

  it('answers 403 for a JWT for another audience, or one that expired', async () => {
    const subscription = pushService.subscribe();
    const fiveMinutesAgo = Math.floor(Date.now() / 1000) - 300;

    expect(await post(subscription, pushRequest(subscription, { audience: 'https://fcm.googleapis.com' }))).toBe(403);
    expect(await post(subscription, pushRequest(subscription, { expiration: fiveMinutesAgo }))).toBe(403);
    expect(await post(subscription, pushRequest(subscription, { expiration: fiveMinutesAgo + 3600 }))).toBe(201);
  });

  it('answers 400 without a TTL header, or for the legacy aesgcm encoding', async () => {
    const subscription = pushService.subscribe();
    const { TTL: _dropped, ...withoutTtl } = pushRequest(subscription).headers;
    const legacy = { ...pushRequest(subscription).headers, 'Content-Encoding': 'aesgcm' };

    expect(await post(subscription, { ...pushRequest(subscription), headers: withoutTtl })).toBe(400);
    expect(await post(subscription, { ...pushRequest(subscription), headers: legacy })).toBe(400);
    expect(pushService.received(subscription.endpoint)).toEqual([]);
  });
});

describe('checkVapidKeys', () => {
  it('accepts a key pair from generateVAPIDKeys with a mailto: or https: subject', () => {
    expect(() => checkVapidKeys(vapid)).not.toThrow();
    expect(() => checkVapidKeys({ ...vapid, subject: 'https://palanque.test/contato' })).not.toThrow();
  });

  it('names the malformed key or subject', () => {
    expect(() => checkVapidKeys({ ...vapid, publicKey: vapid.publicKey.slice(0, 40) })).toThrow(/public key/i);
    expect(() => checkVapidKeys({ ...vapid, publicKey: `${vapid.publicKey}=` })).toThrow(/public key/i);
    expect(() => checkVapidKeys({ ...vapid, privateKey: '' })).toThrow(/privateKey/);
    expect(() => checkVapidKeys({ ...vapid, privateKey: vapid.privateKey.slice(1) })).toThrow(/private key/i);
    expect(() => checkVapidKeys({ ...vapid, subject: 'plantao@palanque.test' })).toThrow(/subject/i);
    expect(() => checkVapidKeys({ ...vapid, subject: 'http://palanque.test' })).toThrow(/subject/i);
  });

  it('refuses a public key of another pair than the private key', () => {
    const other = webpush.generateVAPIDKeys();

    expect(() => checkVapidKeys({ ...vapid, publicKey: other.publicKey })).toThrow(/different key pairs/);
  });

  it('refuses a private key that is no P-256 private key', () => {
    const zero = Buffer.alloc(32).toString('base64url');

    expect(() => checkVapidKeys({ ...vapid, privateKey: zero })).toThrow(/VAPID private key/);
  });
});

/** A port on loopback that nothing listens on (it did a moment ago). */
async function freePort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A server that takes connections and never answers. */
async function silentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: TcpServer = createTcpServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
