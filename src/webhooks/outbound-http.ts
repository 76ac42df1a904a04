/**
 * The HTTP client that delivers outbound webhooks to the addresses customers register, safe against
 * server-side request forgery (SSRF): a customer must not be able to make our servers call our own
 * network, the cloud's metadata service or anything else that only trusts us because we are inside.
 *
 * The guarantee: unless the policy allows private addresses, no request is sent to an address outside
 * public unicast space (loopback, private, link-local, unique-local, CGNAT, multicast, unspecified,
 * reserved and the other special-purpose ranges of ipaddr.js), whatever the name resolved to before. It
 * holds because:
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
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
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
 * Only public unicast addresses are public. An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged by
 * the IPv4 address it carries, since that is where a dual-stack socket sends it; anything that is not an
 * address is not public.
 */
export function isPublicAddress(address: string): boolean {
  return rangeOf(address) === 'unicast';
}

/** The ipaddr.js range of `address` (IPv4-mapped addresses as their IPv4), or undefined if it is not one. */
function rangeOf(address: string): string | undefined {
  try {
    return ipaddr.process(address).range();
  } catch {
    return undefined;
  }
}

function describeRange(address: string): string {
  const range = rangeOf(address);
  if (range === undefined) return 'not an IP address';
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
): Promise<OutboundResponse> {
  const destination = parseDestination(url, policy);
  const host = hostOf(destination);
  // Node connects to a literal address without calling `lookup`, so the connect-time check would miss it.
  if (isIP(host)) refuseUnlessPublic(host, [host], policy);
  return exchange(destination, body, withDefaultHeaders(headers, body), policy, lookupAll);
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
  body: string,
  headers: Record<string, string>,
  policy: OutboundPolicy,
  lookupAll: LookupAll,
): Promise<OutboundResponse> {
  const started = performance.now();
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolveResponse, reject) => {
    const request = send(url, { method: 'POST', headers, agent: false, lookup: checkedLookup(policy, lookupAll) });
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
function describeFailure(error: NodeJS.ErrnoException, url: URL): Error {
  if (error instanceof RefusedDestination) return error;
  const code = error.code ?? '';
  let message: string;
  if (code === 'ECONNREFUSED') message = `connection refused by ${url.host}`;
  else if (code === 'ECONNRESET') message = `connection reset by ${url.host}`;
  else if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') message = `${url.host} is unreachable`;
  else if (TLS_ERROR_CODE.test(code) || (code === 'EPROTO' && url.protocol === 'https:')) message = `TLS error with ${url.host}: ${error.message}`;
  else message = `POST to ${url.host} failed: ${error.message}`;
  return new Error(message, { cause: error });
}
