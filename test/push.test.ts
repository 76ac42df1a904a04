/**
 * Web Push to operators' devices (src/push/sender.ts) against the push service simulator
 * (src/simulators/push-service.ts), which decrypts what arrives and checks the VAPID signature itself:
 * - a delivered message decrypts to the payload sent, with the sender's TTL and VAPID subject;
 * - 404 and 410 from the push service are 'gone'; a wrong VAPID key pair, a message the browser cannot
 *   decrypt, a body over 4096 bytes, nobody listening, a push service that never answers and a plain
 *   http: endpoint not allowed are 'failed', and none of them throws;
 * - it connects through outbound webhooks' checked connection: a name that resolves to loopback when
 *   pushing (DNS rebinding), localhost, and IPv6 forms carrying 127.0.0.1 are refused where private
 *   addresses are not allowed, and a redirect is not followed;
 * - the simulator's own refusals, each shown against the same request untouched: no Authorization, a
 *   JWT for another audience, an expired one, no TTL, the legacy aesgcm encoding;
 * - checkVapidKeys: web-push's checks of each key and the subject, and keys of two different pairs.
 */
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import webpush from 'web-push';
import { checkVapidKeys, PushSender, type VapidKeys } from '../src/push/sender.js';
import { PushServiceSimulator, type SimulatedSubscription } from '../src/simulators/push-service.js';
import type { OutboundPolicy } from '../src/webhooks/outbound-http.js';
import { scriptedLookup } from './helpers/lookup.js';

const SUBJECT = 'mailto:plantao@palanque.test';
const vapid: VapidKeys = { ...webpush.generateVAPIDKeys(), subject: SUBJECT };
/** The tests' setting for the simulator on loopback, as webhooks' tests have it (OUTBOUND_ALLOW_PRIVATE_ADDRESSES=true). */
const LOCAL: OutboundPolicy = { allowHttp: true, allowPrivateAddresses: true, timeoutMs: 5_000 };
/** http allowed so that loopback servers can be named, private addresses refused: what production checks, minus TLS. */
const PUBLIC_ONLY: OutboundPolicy = { allowHttp: true, allowPrivateAddresses: false, timeoutMs: 5_000 };
const PAYLOAD = { kind: 'chat.message', title: 'Nova mensagem de eleitor', body: 'São Paulo — "quero ajudar na campanha"', conversationId: 42 };

let pushService: PushServiceSimulator;
let sender: PushSender;

beforeAll(async () => {
  pushService = await PushServiceSimulator.start();
  sender = new PushSender(vapid, { ttlSeconds: 3600, outbound: LOCAL });
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

    await new PushSender(vapid, { outbound: LOCAL }).send(subscription, PAYLOAD);

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
    const mismatched = new PushSender({ ...vapid, publicKey: otherPair.publicKey }, { outbound: LOCAL });
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

    expect(outcome).toEqual({ outcome: 'failed', reason: `connection refused by 127.0.0.1:${port}` });
  });

  it("is 'failed' once the push service keeps silent for longer than the timeout", async () => {
    const silent = await silentServer();
    try {
      const impatient = new PushSender(vapid, { outbound: { ...LOCAL, timeoutMs: 200 } });
      const subscription = { ...pushService.subscribe(), endpoint: `http://127.0.0.1:${silent.port}/push/abc` };

      const started = Date.now();
      const outcome = await impatient.send(subscription, PAYLOAD);

      expect(outcome).toEqual({ outcome: 'failed', reason: `POST to 127.0.0.1:${silent.port} timed out after 200 ms` });
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await silent.close();
    }
  });

  it("is 'failed' for a plain http: endpoint unless http was allowed, and for an endpoint that is not a URL", async () => {
    const subscription = pushService.subscribe();
    const strict = new PushSender(vapid);

    expect(await strict.send(subscription, PAYLOAD)).toEqual({ outcome: 'failed', reason: "refused the push service's address (https): must use https://" });
    expect(await strict.send({ ...subscription, endpoint: 'http://push.example.com/push/abc' }, PAYLOAD)).toEqual({
      outcome: 'failed',
      reason: "refused the push service's address (https): must use https://",
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

describe('PushSender: where it connects (the checked connection of outbound webhooks)', () => {
  it('connects to the address the lookup it was given answers, where private addresses are allowed', async () => {
    const subscription = pushService.subscribe();
    const lookup = scriptedLookup(['127.0.0.1']);
    const named = new PushSender(vapid, { outbound: LOCAL, lookupAll: lookup });

    const outcome = await named.send({ ...subscription, endpoint: renamed(subscription.endpoint, 'push.test') }, PAYLOAD);

    // The simulator on 127.0.0.1 answered: it refuses a JWT for the audience http://push.test, as a push service would.
    expect(outcome).toMatchObject({ outcome: 'failed', status: 403, reason: expect.stringMatching(/aud must be/) });
    expect(lookup.calls).toEqual(['push.test']);
  });

  it('refuses a name that resolves to loopback at send time (DNS rebinding), and sends nothing', async () => {
    const subscription = pushService.subscribe();
    // The name was public when the subscription was registered; when pushing it answers 127.0.0.1.
    const rebinding = new PushSender(vapid, { outbound: PUBLIC_ONLY, lookupAll: scriptedLookup(['127.0.0.1']) });

    expect(await rebinding.send({ ...subscription, endpoint: renamed(subscription.endpoint, 'push.test') }, PAYLOAD)).toEqual({
      outcome: 'failed',
      reason: "refused the push service's address (public_address): push.test resolves to 127.0.0.1, a loopback address",
    });
    expect(pushService.received(subscription.endpoint)).toEqual([]);
  });

  it('refuses localhost through the system resolver when private addresses are not allowed', async () => {
    const subscription = pushService.subscribe();
    const strict = new PushSender(vapid, { outbound: PUBLIC_ONLY });

    const outcome = await strict.send({ ...subscription, endpoint: renamed(subscription.endpoint, 'localhost') }, PAYLOAD);

    expect(outcome).toEqual({ outcome: 'failed', reason: expect.stringMatching(/^refused the push service's address \(public_address\): localhost resolves to (127\.0\.0\.1|::1), a loopback address$/) });
    expect(pushService.received(subscription.endpoint)).toEqual([]);
  });

  it.each([
    ['[::7f00:1]', '::7f00:1'],
    ['[::ffff:127.0.0.1]', '::ffff:127.0.0.1'],
    ['[64:ff9b::7f00:1]', '64:ff9b::7f00:1'],
    ['[2002:7f00:1::]', '2002:7f00:1::'],
  ])('refuses an IPv6 form carrying 127.0.0.1, as a literal %s and as a name resolving to %s', async (literal, resolved) => {
    const subscription = pushService.subscribe();
    const strict = new PushSender(vapid, { outbound: PUBLIC_ONLY, lookupAll: scriptedLookup([resolved]) });

    const asLiteral = await strict.send({ ...subscription, endpoint: renamed(subscription.endpoint, literal) }, PAYLOAD);
    const asName = await strict.send({ ...subscription, endpoint: renamed(subscription.endpoint, 'push.test') }, PAYLOAD);

    expect(asLiteral).toEqual({ outcome: 'failed', reason: expect.stringMatching(/\(public_address\): .* is an IPv6 address carrying 127\.0\.0\.1, a loopback address$/) });
    expect(asName).toEqual({ outcome: 'failed', reason: expect.stringMatching(/\(public_address\): push\.test resolves to .*, an IPv6 address carrying 127\.0\.0\.1, a loopback address$/) });
    expect(pushService.received(subscription.endpoint)).toEqual([]);
  });

  it('follows no redirect: a 307 from the push service is a failure, not a second request', async () => {
    const subscription = pushService.subscribe();
    const redirecting = await redirectServer(subscription.endpoint);
    try {
      const outcome = await sender.send({ ...subscription, endpoint: `http://127.0.0.1:${redirecting.port}/push/abc` }, PAYLOAD);

      expect(outcome).toMatchObject({ outcome: 'failed', status: 307 });
      expect(pushService.received(subscription.endpoint)).toEqual([]);
    } finally {
      await redirecting.close();
    }
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

/** The endpoint with its host replaced (the port and path kept). */
function renamed(endpoint: string, host: string): string {
  const url = new URL(endpoint);
  return `${url.protocol}//${host}:${url.port}${url.pathname}`;
}

/** A server on loopback that answers every request 307 to `location`. */
async function redirectServer(location: string): Promise<{ port: number; close: () => Promise<void> }> {
  const server = createHttpServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(307, { location }).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
