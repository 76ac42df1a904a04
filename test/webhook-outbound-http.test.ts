/**
 * The outbound webhook client (src/webhooks/outbound-http.ts) against servers on loopback: it delivers
 * where the policy allows, and where it does not (private addresses, a name re-pointed at loopback after
 * registration, a redirect) the server receives nothing. Names resolve through fake lookups, so no test
 * depends on real DNS.
 */
import { createServer, type IncomingHttpHeaders, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkDestination,
  isPublicAddress,
  postJson,
  RefusedDestination,
  type LookupAll,
  type OutboundPolicy,
} from '../src/webhooks/outbound-http.js';
import { scriptedLookup } from './helpers/lookup.js';

const PRODUCTION: OutboundPolicy = { allowHttp: false, allowPrivateAddresses: false, timeoutMs: 2_000 };
const LOCAL: OutboundPolicy = { allowHttp: true, allowPrivateAddresses: true, timeoutMs: 2_000 };
/** http:// allowed so the loopback servers can be named, but private addresses still refused. */
const HTTP_PUBLIC_ONLY: OutboundPolicy = { allowHttp: true, allowPrivateAddresses: false, timeoutMs: 2_000 };

const EXAMPLE_ADDRESS = '93.184.216.34';

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface TestServer {
  port: number;
  url: string;
  received: Received[];
}

const servers: Server[] = [];

afterEach(async () => {
  const closing = servers.splice(0).map(
    (server) =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  );
  await Promise.all(closing);
});

/** A server on 127.0.0.1 that records every request (once its body has arrived), then lets `answer` reply. */
async function startServer(answer: RequestListener = (_request, response) => response.end('ok')): Promise<TestServer> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString() });
      answer(request, response);
    });
  });
  servers.push(server);
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  return { port, url: `http://127.0.0.1:${port}/`, received };
}

/** The refusal `promise` rejects with; fails the test when it resolves or rejects with something else. */
async function refusal(promise: Promise<unknown>): Promise<RefusedDestination> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(RefusedDestination);
  return error as RefusedDestination;
}

describe('isPublicAddress', () => {
  it.each(['8.8.8.8', '2001:4860:4860::8888', EXAMPLE_ADDRESS, '::ffff:8.8.8.8'])('judges %s public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    'fe80::1',
    'fc00::1',
    '::ffff:127.0.0.1',
    '224.0.0.1',
    '::',
    '255.255.255.255',
  ])('judges %s not public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  // IPv6 forms that carry an IPv4 address are judged by the address they carry, both ways.
  it.each([
    ['::ffff:0:808:808', 'IPv4-translated'],
    ['::808:808', 'IPv4-compatible'],
    ['64:ff9b::808:808', "NAT64's well-known prefix"],
    ['2002:808:808::1', '6to4'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'Teredo, server 65.54.227.120 and client 8.8.8.8'],
  ])('judges %s (%s, carrying a public IPv4 address) public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it.each([
    ['::7f00:1', 'IPv4-compatible 127.0.0.1'],
    ['::ffff:7f00:1', 'IPv4-mapped 127.0.0.1, in hexadecimal'],
    ['::ffff:0:7f00:1', 'IPv4-translated 127.0.0.1'],
    ['::a9fe:a9fe', 'IPv4-compatible 169.254.169.254'],
    ['64:ff9b::7f00:1', "NAT64's well-known prefix, 127.0.0.1"],
    ['64:ff9b::a00:5', "NAT64's well-known prefix, 10.0.0.5"],
    ['64:ff9b:1::808:808', "NAT64's local-use prefix, whose translator is the site's own"],
    ['2002:7f00:1::1', '6to4 of 127.0.0.1'],
    ['2002:c0a8:101::1', '6to4 of 192.168.1.1'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo, client 127.0.0.1'],
    ['2001:0:a00:1:8000:63bf:f7f7:f7f7', 'Teredo, server 10.0.0.1'],
  ])('judges %s (%s) not public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it('judges what is not an address not public', () => {
    expect(isPublicAddress('hooks.example.org')).toBe(false);
    expect(isPublicAddress('')).toBe(false);
  });
});

describe('checkDestination', () => {
  const publicLookup = () => scriptedLookup([EXAMPLE_ADDRESS]);

  it('accepts an https address whose name resolves to a public address, and returns it normalised', async () => {
    const lookup = publicLookup();
    await expect(checkDestination(' HTTPS://Hooks.Example.org:443/x ', PRODUCTION, lookup)).resolves.toBe('https://hooks.example.org/x');
    expect(lookup.calls).toEqual(['hooks.example.org']);
  });

  it('refuses what is not an absolute URL', async () => {
    const error = await refusal(checkDestination('hooks.example.org/x', PRODUCTION, publicLookup()));
    expect(error.rule).toBe('url');
  });

  it('refuses schemes other than http and https', async () => {
    const error = await refusal(checkDestination('ftp://hooks.example.org/x', LOCAL, publicLookup()));
    expect(error).toMatchObject({ rule: 'url', value: 'ftp:' });
  });

  it('refuses http:// unless the policy allows it', async () => {
    const error = await refusal(checkDestination('http://hooks.example.org/x', PRODUCTION, publicLookup()));
    expect(error.rule).toBe('https');
    await expect(checkDestination('http://hooks.example.org/x', HTTP_PUBLIC_ONLY, publicLookup())).resolves.toBe('http://hooks.example.org/x');
  });

  it('refuses credentials in the address, without repeating them', async () => {
    const error = await refusal(checkDestination('https://ana:s3cret@hooks.example.org/x', PRODUCTION, publicLookup()));
    expect(error.rule).toBe('url');
    expect(`${error.value} ${error.message}`).not.toMatch(/s3cret|ana/);
  });

  it('refuses a name that resolves to a private address, naming it and its range', async () => {
    const error = await refusal(checkDestination('https://hooks.example.org/x', PRODUCTION, scriptedLookup(['10.0.0.5'])));
    expect(error).toMatchObject({ rule: 'public_address', value: '10.0.0.5' });
    expect(error.message).toBe('hooks.example.org resolves to 10.0.0.5, a private address');
  });

  it('refuses a name when any one of its addresses is not public', async () => {
    const error = await refusal(checkDestination('https://hooks.example.org/x', PRODUCTION, scriptedLookup([EXAMPLE_ADDRESS, '::1'])));
    expect(error).toMatchObject({ rule: 'public_address', value: '::1' });
    expect(error.message).toContain('a loopback address');
  });

  it('refuses a private literal address without resolving anything, IPv4-mapped ones included', async () => {
    const lookup = publicLookup();
    const loopback = await refusal(checkDestination('https://127.0.0.1/x', PRODUCTION, lookup));
    expect(loopback).toMatchObject({ rule: 'public_address', value: '127.0.0.1', message: '127.0.0.1 is a loopback address' });
    const mapped = await refusal(checkDestination('https://[::ffff:169.254.169.254]/latest/meta-data', PRODUCTION, lookup));
    expect(mapped.rule).toBe('public_address');
    expect(mapped.message).toContain('a link-local address');
    expect(lookup.calls).toEqual([]);
  });

  it.each(['[::7f00:1]', '[::ffff:127.0.0.1]', '[64:ff9b::7f00:1]', '[64:ff9b:1::7f00:1]', '[2002:7f00:1::]'])(
    'refuses %s, an IPv6 form carrying 127.0.0.1, as a literal and as what a name resolves to',
    async (literal) => {
      const lookup = scriptedLookup([literal.slice(1, -1)]);
      const asLiteral = await refusal(checkDestination(`https://${literal}/hook`, PRODUCTION, lookup));
      expect(asLiteral.rule).toBe('public_address');
      expect(lookup.calls).toEqual([]);
      const asName = await refusal(checkDestination('https://hooks.example.org/hook', PRODUCTION, lookup));
      expect(asName).toMatchObject({ rule: 'public_address', value: literal.slice(1, -1) });
      // The well-known forms name the IPv4 address they carry; the local-use prefix is refused as a range of its own.
      for (const error of [asLiteral, asName]) {
        expect(error.message).toMatch(literal.startsWith('[64:ff9b:1:') ? /special-purpose range "rfc6052"/ : /an IPv6 address carrying 127\.0\.0\.1, a loopback address$/);
      }
    },
  );

  it('refuses a name that does not resolve', async () => {
    const failing: LookupAll = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example.org'), { code: 'ENOTFOUND' });
    };
    const error = await refusal(checkDestination('https://nowhere.example.org/x', PRODUCTION, failing));
    expect(error).toMatchObject({ rule: 'resolvable', value: 'nowhere.example.org' });
    expect(error.message).toContain('ENOTFOUND');
    const empty = await refusal(checkDestination('https://nowhere.example.org/x', PRODUCTION, scriptedLookup([])));
    expect(empty.rule).toBe('resolvable');
  });

  it('accepts private addresses when the policy allows them', async () => {
    await expect(checkDestination('http://127.0.0.1:8080/hook', LOCAL, publicLookup())).resolves.toBe('http://127.0.0.1:8080/hook');
    await expect(checkDestination('https://sandbox.test/hook', LOCAL, scriptedLookup(['192.168.1.1']))).resolves.toBe('https://sandbox.test/hook');
  });
});

describe('postJson', () => {
  it('POSTs the body with its headers and keeps the first 1,024 bytes of the answer', async () => {
    const answer = 'é'.repeat(600) + 'x'.repeat(3000);
    const server = await startServer((_request, response) => response.writeHead(201, { 'content-type': 'text/plain' }).end(answer));
    const body = JSON.stringify({ type: 'entity.updated', id: 42 });

    const result = await postJson(`${server.url}hooks?team=7`, body, { 'X-Palanque-Signature': 'v1,abc' }, LOCAL);

    expect(result.status).toBe(201);
    // 'é' is two bytes in UTF-8: 512 of them fill the 1,024 bytes.
    expect(result.body).toBe('é'.repeat(512));
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(server.received).toHaveLength(1);
    expect(server.received[0]).toMatchObject({
      method: 'POST',
      url: '/hooks?team=7',
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Palanque-Webhooks/1',
        'x-palanque-signature': 'v1,abc',
        'content-length': String(Buffer.byteLength(body)),
      },
    });
  });

  it('keeps the content-type and user-agent the caller gives', async () => {
    const server = await startServer();
    await postJson(server.url, '{}', { 'Content-Type': 'application/cloudevents+json', 'User-Agent': 'Other/2' }, LOCAL);
    expect(server.received[0]?.headers).toMatchObject({ 'content-type': 'application/cloudevents+json', 'user-agent': 'Other/2' });
  });

  it('connects to the address its lookup answered, not one the system resolver finds', async () => {
    const server = await startServer((_request, response) => response.writeHead(202).end());
    const lookup = scriptedLookup(['127.0.0.1']);
    const result = await postJson(`http://webhooks.test:${server.port}/`, '{}', {}, LOCAL, lookup);
    expect(result.status).toBe(202);
    expect(lookup.calls).toEqual(['webhooks.test']);
    expect(server.received).toHaveLength(1);
  });

  it('refuses a private literal address before connecting', async () => {
    const server = await startServer();
    const ipv4 = await refusal(postJson(server.url, '{}', {}, HTTP_PUBLIC_ONLY));
    expect(ipv4).toMatchObject({ rule: 'public_address', value: '127.0.0.1' });
    const ipv6 = await refusal(postJson(`http://[::1]:${server.port}/`, '{}', {}, HTTP_PUBLIC_ONLY));
    expect(ipv6).toMatchObject({ rule: 'public_address', value: '::1' });
    expect(server.received).toEqual([]);
  });

  it('refuses IPv6 forms carrying 127.0.0.1 before connecting, as literals and as what a name re-points to', async () => {
    const server = await startServer();
    for (const form of ['::7f00:1', '::ffff:127.0.0.1', '64:ff9b::7f00:1']) {
      const literal = await refusal(postJson(`http://[${form}]:${server.port}/`, '{}', {}, HTTP_PUBLIC_ONLY));
      expect(literal.message).toMatch(/an IPv6 address carrying 127\.0\.0\.1, a loopback address$/);
      const lookup = scriptedLookup([EXAMPLE_ADDRESS], [form]);
      await expect(checkDestination(`http://rebind.test:${server.port}/`, HTTP_PUBLIC_ONLY, lookup)).resolves.toBeTruthy();
      const rebound = await refusal(postJson(`http://rebind.test:${server.port}/`, '{}', {}, HTTP_PUBLIC_ONLY, lookup));
      expect(rebound.message).toMatch(/^rebind\.test resolves to .*, an IPv6 address carrying 127\.0\.0\.1, a loopback address$/);
    }
    expect(server.received).toEqual([]);
  });

  it('refuses http:// and credentials unless allowed, as at registration', async () => {
    const server = await startServer();
    expect((await refusal(postJson(server.url, '{}', {}, { ...LOCAL, allowHttp: false }))).rule).toBe('https');
    expect((await refusal(postJson(`http://u:p@127.0.0.1:${server.port}/`, '{}', {}, LOCAL))).rule).toBe('url');
    expect(server.received).toEqual([]);
  });

  it('refuses a name re-pointed at loopback after registration (DNS rebinding), at connect time', async () => {
    const server = await startServer();
    const url = `http://rebind.test:${server.port}/`;
    const lookup = scriptedLookup([EXAMPLE_ADDRESS], ['127.0.0.1']);

    await expect(checkDestination(url, HTTP_PUBLIC_ONLY, lookup)).resolves.toBe(url);
    const error = await refusal(postJson(url, '{}', {}, HTTP_PUBLIC_ONLY, lookup));

    expect(error).toMatchObject({ rule: 'public_address', value: '127.0.0.1' });
    expect(error.message).toBe('rebind.test resolves to 127.0.0.1, a loopback address');
    expect(lookup.calls).toEqual(['rebind.test', 'rebind.test']);
    expect(server.received).toEqual([]);
  });

  it('returns a redirect as the answer and does not follow it', async () => {
    const target = await startServer();
    const redirecting = await startServer((_request, response) => response.writeHead(302, { location: `${target.url}stolen` }).end());

    const result = await postJson(redirecting.url, '{}', {}, LOCAL);

    expect(result.status).toBe(302);
    expect(redirecting.received).toHaveLength(1);
    expect(target.received).toEqual([]);
  });

  it('gives up on a server that never answers after timeoutMs', async () => {
    const server = await startServer(() => {});
    const started = Date.now();
    await expect(postJson(server.url, '{}', {}, { ...LOCAL, timeoutMs: 300 })).rejects.toThrow(/timed out after 300 ms/);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(280);
    expect(elapsed).toBeLessThan(2_000);
    expect(server.received).toHaveLength(1);
  });

  it('counts the answer in the deadline: a body that never ends times out too', async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(200);
      response.write('still sending');
    });
    await expect(postJson(server.url, '{}', {}, { ...LOCAL, timeoutMs: 300 })).rejects.toThrow(/timed out after 300 ms/);
  });

  it('says the connection was refused when nothing listens', async () => {
    const server = await startServer();
    const closed = await new Promise<number>((done) => {
      const port = server.port;
      servers.splice(servers.length - 1, 1)[0]?.close(() => done(port));
    });
    const failure = postJson(`http://127.0.0.1:${closed}/`, '{}', {}, LOCAL);
    await expect(failure).rejects.toThrow(`connection refused by 127.0.0.1:${closed}`);
    await expect(failure).rejects.not.toBeInstanceOf(RefusedDestination);
  });

  it('says it is a TLS error when the server does not speak TLS', async () => {
    const server = await startServer();
    await expect(postJson(`https://127.0.0.1:${server.port}/`, '{}', {}, LOCAL)).rejects.toThrow(/^TLS error with 127\.0\.0\.1:\d+/);
    expect(server.received).toEqual([]);
  });

  it('fails with a plain error, not a refusal, when the name stops resolving', async () => {
    const failure = postJson('https://gone.example.org/', '{}', {}, PRODUCTION, scriptedLookup([]));
    await expect(failure).rejects.toThrow('gone.example.org does not resolve to any address');
    await expect(failure).rejects.not.toBeInstanceOf(RefusedDestination);
  });
});
