/**
 * The HTTP client that delivers outbound webhooks to the addresses customers register, Web Push
 * messages to the push services browsers name, and the court's files to imports, safe against
 * server-side request forgery (SSRF): a customer must not be able to make our servers call our own
 * network, the cloud's metadata service or anything else that only trusts us because we are inside.
 *
 * The guarantee: unless the policy allows private addresses, no request is sent to an address outside
 * public unicast space (loopback, private, link-local, unique-local, CGNAT, multicast, unspecified,
 * reserved and the other special-purpose ranges of ipaddr.js), whatever the name resolved to before. An
 * IPv6 address that carries an IPv4 one (mapped, compatible, NAT64, 6to4, Teredo) is judged by the IPv4
 * address it carries. It holds because:
 * - every delivery checks again, on the addresses the socket connects to: the connection resolves its
 *   host name through our own `lookup`, which refuses before any connection is opened. A name that
 *   resolved to a public address at registration and resolves to 127.0.0.1 now (DNS rebinding) is
 *   refused. Literal addresses, which Node connects to without a lookup, are checked before the request;
 * - each delivery opens a socket of its own (`agent: false`): no pooled connection skips the check;
 * - redirects are not followed: a 302 to http://169.254.169.254/ is an answer, not a second request.
 * The check at registration (`checkDestination`) is for the customer: they hear at once that an address
 * cannot work. It protects nothing by itself, since DNS answers change.
 *
 * Every delivery ends within `timeoutMs` (resolution, connection, request and answer) and keeps at most
 * 1,024 bytes of the answer, so a slow or endless receiver costs bounded time and memory.
 */
import { promises as dns } from 'node:dns';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import { context, propagation } from '@opentelemetry/api';
import ipaddr from 'ipaddr.js';

export interface OutboundPolicy {
  /** http:// allowed (false in production: only https). */
  allowHttp: boolean;
  /** Addresses in private, loopback, link-local, unique-local, CGNAT, multicast, unspecified, reserved ranges allowed (tests and the sandbox only). */
  allowPrivateAddresses: boolean;
  /** Whole request deadline, milliseconds. */
  timeoutMs: number;
}

/** Every address a host name resolves to; the default asks the system resolver, as Node's own connections do. */
export type LookupAll = (hostname: string) => Promise<{ address: string; family: 4 | 6 }[]>;

export type RefusalRule = 'url' | 'https' | 'public_address' | 'resolvable';

/** A destination we will not call: `rule` says which check failed, `value` what failed it (never a password). */
export class RefusedDestination extends Error {
  constructor(
    readonly rule: RefusalRule,
    readonly value: string,
    message: string,
  ) {
    super(message);
    this.name = 'RefusedDestination';
  }
}

/** What one request may carry besides its headers. */
export interface OutboundOptions {
  /**
   * Send the active trace context (W3C `traceparent`, `tracestate`) when tracing is on: only for a
   * receiver that asked for it (a webhook endpoint's `send_trace_context`). Off, no request through this
   * client carries one, although the http instrumentation writes it into every outgoing request.
   */
  traceContext?: boolean;
}

export interface OutboundResponse {
  status: number;
  /** at most 1,024 bytes of the body, as text */
  body: string;
  durationMs: number;
}

/** Enough of an answer to show the receiver's error message, never a whole page. */
const KEPT_BODY_BYTES = 1024;

const USER_AGENT = 'Palanque-Webhooks/1';

/** Readable names of the ipaddr.js ranges, for messages; the rarer ranges are named by their key. */
const RANGE_DESCRIPTIONS: Record<string, string> = {
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT (CGNAT) address',
  private: 'a private address',
  reserved: 'a reserved address',
  uniqueLocal: 'a unique-local address',
};

const systemLookupAll: LookupAll = async (hostname) => {
  const addresses = await dns.lookup(hostname, { all: true, verbatim: true });
  return addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

/**
 * Only public unicast addresses are public. An IPv6 address that carries an IPv4 address is judged by
 * the IPv4 address it carries, since that is where a packet sent to it can end up (a dual-stack socket,
 * a NAT64 gateway, a tunnel): [::ffff:127.0.0.1], [::7f00:1] and [64:ff9b::7f00:1] are loopback. Anything
 * that is not an address is not public.
 */
export function isPublicAddress(address: string): boolean {
  const parsed = parseAddress(address);
  if (!parsed) return false;
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const carried = carriedIPv4(parsed as ipaddr.IPv6);
  if (carried.length > 0) return carried.every((ipv4) => ipv4.range() === 'unicast');
  return parsed.range() === 'unicast';
}

function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  try {
    return ipaddr.parse(address);
  } catch {
    return undefined;
  }
}

const NAT64_WELL_KNOWN = ipaddr.IPv6.parse('64:ff9b::');
const SIX_TO_FOUR = ipaddr.IPv6.parse('2002::');
const TEREDO = ipaddr.IPv6.parse('2001::');

/**
 * The IPv4 addresses an IPv6 address carries: IPv4-mapped (::ffff:0:0/96), IPv4-translated
 * (::ffff:0:0:0/96, RFC 6145), IPv4-compatible (::/96, RFC 4291), NAT64's well-known prefix
 * (64:ff9b::/96, RFC 6052), 6to4 (2002::/16, RFC 3056) and Teredo (2001::/32, RFC 4380: its server and
 * its client, whose address is stored inverted). NAT64's local-use prefix (64:ff9b:1::/48, RFC 8215)
 * is left out on purpose: where its translator sends is the site's own choice, so it stays not public.
 */
function carriedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const parts = address.parts;
  const fromWords = (high: number, low: number) => ipaddr.fromByteArray([high >> 8, high & 0xff, low >> 8, low & 0xff]) as ipaddr.IPv4;
  const last = fromWords(parts[6]!, parts[7]!);
  const zeroUpTo = (end: number) => parts.slice(0, end).every((part) => part === 0);
  if (zeroUpTo(5) && parts[5] === 0xffff) return [last];
  if (zeroUpTo(4) && parts[4] === 0xffff && parts[5] === 0) return [last];
  // :: and ::1 are the unspecified and loopback addresses, and are named so.
  if (zeroUpTo(6) && (parts[6] !== 0 || parts[7]! > 1)) return [last];
  if (address.match(NAT64_WELL_KNOWN, 96)) return [last];
  if (address.match(SIX_TO_FOUR, 16)) return [fromWords(parts[1]!, parts[2]!)];
  if (address.match(TEREDO, 32)) return [fromWords(parts[2]!, parts[3]!), fromWords(parts[6]! ^ 0xffff, parts[7]! ^ 0xffff)];
  return [];
}

function describeRange(address: string): string {
  const parsed = parseAddress(address);
  if (!parsed) return 'not an IP address';
  const carried = parsed.kind() === 'ipv6' ? carriedIPv4(parsed as ipaddr.IPv6) : [];
  const refused = carried.find((ipv4) => ipv4.range() !== 'unicast');
  if (refused) return `an IPv6 address carrying ${refused.toString()}, ${describeRangeName(refused.range())}`;
  return describeRangeName(parsed.range());
}

function describeRangeName(range: string): string {
  return RANGE_DESCRIPTIONS[range] ?? `an address of the special-purpose range "${range}"`;
}

/**
 * Parses and checks a URL at registration: absolute http(s), no credentials in it (user:pass@), https
 * unless allowHttp, host resolves and EVERY address it resolves to is public unless
 * allowPrivateAddresses. Throws RefusedDestination. Returns the normalised URL string.
 */
export async function checkDestination(url: string, policy: OutboundPolicy, lookupAll: LookupAll = systemLookupAll): Promise<string> {
  const destination = parseDestination(url, policy);
  const host = hostOf(destination);
  if (isIP(host)) {
    refuseUnlessPublic(host, [host], policy);
  } else {
    const addresses = await resolve(host, lookupAll).catch((error: Error) => {
      throw new RefusedDestination('resolvable', host, error.message);
    });
    refuseUnlessPublic(host, addresses.map(({ address }) => address), policy);
  }
  return destination.href;
}

/**
 * POSTs `body` with `headers` (content-type application/json added unless given). The address is checked
 * AGAIN at connect time, on the address actually connected to: defeats DNS rebinding. Redirects are NOT
 * followed (a 3xx is returned as the response). Rejects with RefusedDestination when refused; rejects with
 * an Error whose message says what happened (timeout, connection refused, TLS error) on network failure,
 * a name that does not resolve included: that is worth a retry, unlike a refusal.
 */
export async function postJson(
  url: string,
  body: string,
  headers: Record<string, string>,
  policy: OutboundPolicy,
  lookupAll: LookupAll = systemLookupAll,
  options: OutboundOptions = {},
): Promise<OutboundResponse> {
  return post(url, body, withDefaultHeaders(headers, body), policy, lookupAll, options);
}

/**
 * POSTs `body` with exactly `headers` (and its own content-length) through the same checked connection
 * as postJson, with the same refusals, deadline and kept answer: for bodies that are not ours to shape,
 * such as Web Push's encrypted messages.
 */
export async function post(
  url: string,
  body: string | Uint8Array,
  headers: Record<string, string>,
  policy: OutboundPolicy,
  lookupAll: LookupAll = systemLookupAll,
  options: OutboundOptions = {},
): Promise<OutboundResponse> {
  const destination = parseDestination(url, policy);
  refuseLiteralUnlessPublic(destination, policy);
  const given = Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'content-length'));
  return exchange(destination, body, { ...given, 'content-length': String(Buffer.byteLength(body)) }, policy, lookupAll, options.traceContext ?? false);
}

/**
 * GETs `url` through the checked connection and resolves with the answer as soon as its headers arrive,
 * its body unread: for downloads, which the caller caps in bytes and ends with `signal` (the whole
 * download's deadline). Redirects are not followed; refusals and failures reject as postJson's do.
 */
export async function openGet(
  url: string,
  headers: Record<string, string>,
  policy: OutboundPolicy,
  signal: AbortSignal,
  lookupAll: LookupAll = systemLookupAll,
): Promise<IncomingMessage> {
  const destination = parseDestination(url, policy);
  refuseLiteralUnlessPublic(destination, policy);
  const send = destination.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolveResponse, reject) => {
    const request = send(destination, { method: 'GET', headers, agent: false, lookup: checkedLookup(policy, lookupAll), signal });
    withoutTraceContext(request);
    request.on('error', (error) => reject(describeFailure(error, destination, 'GET')));
    request.on('response', resolveResponse);
    request.end();
  });
}

/** Node connects to a literal address without calling `lookup`, so the connect-time check would miss it. */
function refuseLiteralUnlessPublic(destination: URL, policy: OutboundPolicy): void {
  const host = hostOf(destination);
  if (isIP(host)) refuseUnlessPublic(host, [host], policy);
}

/** The checks that need no network: absolute http(s), no credentials, https unless allowed. */
function parseDestination(input: string, policy: OutboundPolicy): URL {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw new RefusedDestination('url', input, 'is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RefusedDestination('url', url.protocol, `must be an https:// address, not ${url.protocol}//`);
  }
  if (url.username || url.password) {
    url.username = '';
    url.password = '';
    throw new RefusedDestination('url', url.href, 'must not contain a user name or password');
  }
  if (url.protocol === 'http:' && !policy.allowHttp) throw new RefusedDestination('https', url.href, 'must use https://');
  return url;
}

/** The host as Node connects to it: an IPv6 literal without its brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** Resolves `hostname`; a failure, or no address at all, is an Error that names the host. */
async function resolve(hostname: string, lookupAll: LookupAll): Promise<{ address: string; family: 4 | 6 }[]> {
  let addresses: { address: string; family: 4 | 6 }[];
  try {
    addresses = await lookupAll(hostname);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new Error(`${hostname} does not resolve (${reason})`, { cause: error });
  }
  if (addresses.length === 0) throw new Error(`${hostname} does not resolve to any address`);
  return addresses;
}

/** One non-public address is enough to refuse: a connection may use any of the addresses a name has. */
function refuseUnlessPublic(host: string, addresses: string[], policy: OutboundPolicy): void {
  if (policy.allowPrivateAddresses) return;
  const refused = addresses.find((address) => !isPublicAddress(address));
  if (refused === undefined) return;
  const message =
    host === refused ? `${refused} is ${describeRange(refused)}` : `${host} resolves to ${refused}, ${describeRange(refused)}`;
  throw new RefusedDestination('public_address', refused, message);
}

/**
 * The `lookup` a delivery's socket resolves its host with, so that the addresses checked are the ones it
 * connects to. Node asks for every address (`all`, for its Happy Eyeballs) or for one of a family.
 */
function checkedLookup(policy: OutboundPolicy, lookupAll: LookupAll): LookupFunction {
  return (hostname, options, callback) => {
    const wantedFamily = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
    const answer = async () => {
      const addresses = await resolve(hostname, lookupAll);
      refuseUnlessPublic(hostname, addresses.map(({ address }) => address), policy);
      const usable = addresses.filter(({ family }) => wantedFamily === 0 || family === wantedFamily);
      if (usable.length === 0) throw new Error(`${hostname} has no IPv${wantedFamily} address`);
      return usable;
    };
    answer().then(
      (usable) => (options.all ? callback(null, usable) : callback(null, usable[0]!.address, usable[0]!.family)),
      (error: Error) => callback(error, ''),
    );
  };
}

/** The caller's headers, with our defaults where it gave none; content-length is always the body's own. */
function withDefaultHeaders(headers: Record<string, string>, body: string): Record<string, string> {
  const given = Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'content-length'));
  const names = new Set(Object.keys(given).map((name) => name.toLowerCase()));
  return {
    ...(names.has('content-type') ? {} : { 'content-type': 'application/json' }),
    ...(names.has('user-agent') ? {} : { 'user-agent': USER_AGENT }),
    ...given,
    'content-length': String(Buffer.byteLength(body)),
  };
}

/** One POST on a socket of its own, settled once: by the answer's first bytes, a failure or the deadline. */
function exchange(
  url: URL,
  body: string | Uint8Array,
  headers: Record<string, string>,
  policy: OutboundPolicy,
  lookupAll: LookupAll,
  traceContext: boolean,
): Promise<OutboundResponse> {
  const started = performance.now();
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolveResponse, reject) => {
    // Written here too, so that it goes even with the http instrumentation disabled; with it, the
    // instrumentation writes its own client span's context over it.
    const sent = traceContext ? { ...headers } : headers;
    if (traceContext) propagation.inject(context.active(), sent);
    const request = send(url, { method: 'POST', headers: sent, agent: false, lookup: checkedLookup(policy, lookupAll) });
    if (!traceContext) withoutTraceContext(request);
    const fail = (error: Error) => {
      clearTimeout(deadline);
      reject(error);
      request.destroy();
    };
    const deadline = setTimeout(() => fail(new Error(`POST to ${url.host} timed out after ${policy.timeoutMs} ms`)), policy.timeoutMs);
    request.on('error', (error) => fail(describeFailure(error, url)));
    request.on('response', (response) => {
      readStart(response, KEPT_BODY_BYTES).then((text) => {
        clearTimeout(deadline);
        resolveResponse({ status: response.statusCode ?? 0, body: text, durationMs: Math.round(performance.now() - started) });
        request.destroy();
      }, (error: Error) => fail(describeFailure(error, url)));
    });
    request.end(body);
  });
}

/**
 * Takes out of a request not yet sent the trace context headers the http instrumentation wrote into it
 * (every field of the registered propagators: `traceparent`, `tracestate`, `baggage` by default). Without
 * tracing there are none, and this does nothing.
 */
function withoutTraceContext(request: ClientRequest): void {
  for (const field of propagation.fields()) request.removeHeader(field);
}

/** The first `limit` bytes of the answer as text; reading stops there, since a receiver may send without end. */
function readStart(response: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolveText, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    // A character cut at the limit is dropped: the decoder keeps incomplete sequences back until `end()`.
    const finish = () => resolveText(new StringDecoder('utf8').write(Buffer.concat(chunks).subarray(0, limit)));
    response.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      length += chunk.length;
      if (length >= limit) {
        finish();
        response.destroy();
      }
    });
    response.on('end', finish);
    response.on('error', reject);
  });
}

const TLS_ERROR_CODE = /^(ERR_TLS_|ERR_SSL_|ERR_OSSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/;

/** A network failure as a message a customer can act on; a refusal passes through unchanged. */
function describeFailure(error: NodeJS.ErrnoException, url: URL, method = 'POST'): Error {
  if (error instanceof RefusedDestination) return error;
  const code = error.code ?? '';
  let message: string;
  if (code === 'ECONNREFUSED') message = `connection refused by ${url.host}`;
  else if (code === 'ECONNRESET') message = `connection reset by ${url.host}`;
  else if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') message = `${url.host} is unreachable`;
  else if (TLS_ERROR_CODE.test(code) || (code === 'EPROTO' && url.protocol === 'https:')) message = `TLS error with ${url.host}: ${error.message}`;
  else message = `${method} to ${url.host} failed: ${error.message}`;
  return new Error(message, { cause: error });
}
