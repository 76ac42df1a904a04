/**
 * Where a candidacy import's bytes come from: a path, a file: URL, or an http(s) URL; a candidacy file
 * or the court's zip of them.
 *
 * What holds:
 * - A URL is requested only if its host is one of `allowedHosts` (ELECTIONS_IMPORT_HOSTS) and it is
 *   https, or the host is listed with an explicit `http://` (`http://127.0.0.1`: the tests' servers);
 *   otherwise the import is refused before any request. Redirects are followed by hand, each hop checked
 *   the same way.
 * - The connection is outbound webhooks' checked one (webhooks/outbound-http.ts): a listed name that
 *   resolves to a private, loopback or link-local address when connecting (IPv6 forms judged by the IPv4
 *   address they carry) is refused unless `allowPrivateAddresses` (OUTBOUND_ALLOW_PRIVATE_ADDRESSES); a
 *   host listed as an address (`http://127.0.0.1`) is the operator's own choice and is connected to.
 * - A download goes to a temporary file (a zip is read by random access), capped in bytes and in time;
 *   an answer over the cap is refused as soon as it says so (Content-Length) or reaches it.
 * - The sha256 is of the whole source as given (the zip, or the file), known before any row is read.
 * - In a zip, the candidacy files are the entries named consulta_cand_*.csv; the rest (leiame.pdf) is
 *   ignored. A zip without one is refused.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import yauzl from 'yauzl';
import { openGet, RefusedDestination, type LookupAll } from '../../webhooks/outbound-http.js';
import { CandidacyImportError } from './court-file.js';

export interface SourceLimits {
  /** Host names a URL source may name (ELECTIONS_IMPORT_HOSTS). */
  allowedHosts: readonly string[];
  /** The most bytes a download may have. */
  maxBytes: number;
  /** How long a download may take, from the first request to the last byte. */
  downloadTimeoutMs: number;
  /** Whether a listed host name may resolve to a private address (OUTBOUND_ALLOW_PRIVATE_ADDRESSES). */
  allowPrivateAddresses?: boolean;
  /** How host names resolve (the system's resolver by default). */
  lookupAll?: LookupAll;
}

/** The source as a file on this machine, with its digest. */
export interface LocalSource {
  path: string;
  /** The name its files are reported under when it is a single CSV (the path's or URL's last segment). */
  name: string;
  sha256: string;
  /** Removes the temporary copy of a download (nothing for a local file). */
  remove(): Promise<void>;
}

/** One candidacy file of the source, which can be opened (again) for reading. */
export interface CourtFileEntry {
  name: string;
  open(): Promise<Readable>;
}

const MAX_REDIRECTS = 5;
/** Some CDNs refuse a request that names no client. */
const USER_AGENT = 'Palanque-Import/1';
const COURT_FILE = /^consulta_cand_.*\.csv$/i;

/** Makes the source a local file and hashes it; a URL from a host not allowed is refused unrequested. */
export async function localSource(source: string, limits: SourceLimits): Promise<LocalSource> {
  if (/^https?:\/\//i.test(source)) return download(new URL(source), limits);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source) && !source.startsWith('file:')) {
    throw new CandidacyImportError(`Cannot import from ${source}: a source is a file path, a file: URL or an http(s) URL.`);
  }
  const path = source.startsWith('file:') ? fileURLToPath(source) : resolve(source);
  const hash = createHash('sha256');
  try {
    await pipeline(createReadStream(path), hash);
  } catch (error) {
    throw new CandidacyImportError(`Cannot open ${path}: ${(error as Error).message}`);
  }
  return { path, name: basename(path), sha256: hash.digest('hex'), remove: async () => {} };
}

/** Why ELECTIONS_IMPORT_HOSTS does not let an import download `url`, or undefined when it does. */
export function importUrlRefusal(url: URL, allowedHosts: readonly string[]): { rule: 'http_url' | 'allowed_host' | 'https'; message: string } | undefined {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { rule: 'http_url', message: `Cannot import from ${url.href}: a URL source is https.` };
  }
  const host = url.hostname.toLowerCase();
  const entries = allowedHosts.map((entry) => entry.toLowerCase());
  if (!entries.some((entry) => entry === host || entry === `http://${host}`)) {
    return { rule: 'allowed_host', message: `The host ${host} is not one ELECTIONS_IMPORT_HOSTS allows (${allowedHosts.join(', ') || 'none'}); nothing was downloaded.` };
  }
  if (url.protocol === 'http:' && !entries.includes(`http://${host}`)) {
    return {
      rule: 'https',
      message: `${url.href} is plain http: imports download over https, unless ELECTIONS_IMPORT_HOSTS lists the host as http://${host}; nothing was downloaded.`,
    };
  }
  return undefined;
}

function checkUrl(url: URL, allowedHosts: readonly string[]): void {
  const refusal = importUrlRefusal(url, allowedHosts);
  if (refusal) throw new CandidacyImportError(refusal.message);
}

async function download(url: URL, limits: SourceLimits): Promise<LocalSource> {
  checkUrl(url, limits.allowedHosts);
  const signal = AbortSignal.timeout(limits.downloadTimeoutMs);
  const directory = await mkdtemp(join(tmpdir(), 'palanque-court-'));
  const remove = () => rm(directory, { recursive: true, force: true });
  const path = join(directory, 'source');
  try {
    const response = await follow(url, limits, signal);
    const declared = Number(response.headers['content-length'] ?? NaN);
    if (declared > limits.maxBytes) {
      response.destroy();
      throw new CandidacyImportError(`${url.href} is ${declared} bytes, more than the ${limits.maxBytes} an import may download.`);
    }
    const hash = createHash('sha256');
    let bytes = 0;
    const counting = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        bytes += chunk.length;
        if (bytes > limits.maxBytes) return callback(new CandidacyImportError(`${url.href} is larger than the ${limits.maxBytes} bytes an import may download.`));
        hash.update(chunk);
        callback(null, chunk);
      },
    });
    await pipeline(response, counting, createWriteStream(path), { signal });
    return { path, name: basename(decodeURIComponent(url.pathname)) || url.hostname, sha256: hash.digest('hex'), remove };
  } catch (error) {
    await remove();
    if (error instanceof CandidacyImportError) throw error;
    if (error instanceof RefusedDestination) {
      throw new CandidacyImportError(`Cannot download ${url.href}: ${error.message}; imports connect to public addresses only, unless OUTBOUND_ALLOW_PRIVATE_ADDRESSES=true.`);
    }
    const reason = signal.aborted ? `it took longer than ${limits.downloadTimeoutMs} ms` : (error as Error).message;
    throw new CandidacyImportError(`Cannot download ${url.href}: ${reason}`);
  }
}

/** Requests the URL, following redirects only to allowed hosts; resolves with a 2xx answer, its body unread. */
async function follow(start: URL, limits: SourceLimits, signal: AbortSignal): Promise<IncomingMessage> {
  let url = start;
  for (let hops = 0; ; hops++) {
    checkUrl(url, limits.allowedHosts);
    // http was checked just above, per host; a host listed as an address is the operator's choice of it.
    const policy = { allowHttp: true, allowPrivateAddresses: (limits.allowPrivateAddresses ?? false) || isIP(url.hostname) !== 0, timeoutMs: limits.downloadTimeoutMs };
    const response = await openGet(url.href, { 'user-agent': USER_AGENT }, policy, signal, limits.lookupAll);
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (status >= 300 && status < 400 && location) {
      response.destroy();
      if (hops >= MAX_REDIRECTS) throw new CandidacyImportError(`Cannot download ${start.href}: more than ${MAX_REDIRECTS} redirects.`);
      url = new URL(location, url);
      continue;
    }
    if (status < 200 || status >= 300) {
      response.destroy(); // release the connection now rather than at garbage collection
      throw new CandidacyImportError(`Cannot download ${url.href}: HTTP ${status}`);
    }
    return response;
  }
}

/** The candidacy files of a local source: the CSV itself, or a zip's consulta_cand_*.csv entries. */
export async function courtFilesOf(source: LocalSource): Promise<{ files: CourtFileEntry[]; close(): void }> {
  if (!(await isZip(source.path))) {
    return { files: [{ name: source.name, open: async () => createReadStream(source.path) }], close: () => {} };
  }
  let zip: yauzl.ZipFile;
  let entries: yauzl.Entry[];
  try {
    zip = await openZip(source.path);
    entries = await entriesOf(zip);
  } catch (error) {
    throw new CandidacyImportError(`Cannot read the zip ${source.name}: ${(error as Error).message}`);
  }
  const files = entries
    .filter((entry) => COURT_FILE.test(basename(entry.fileName)))
    .map((entry) => ({ name: basename(entry.fileName), open: () => zip.openReadStreamPromise(entry) }));
  if (files.length === 0) {
    zip.close();
    const names = entries.map((entry) => entry.fileName).join(', ') || 'nothing';
    throw new CandidacyImportError(`The zip ${source.name} holds no candidacy file (consulta_cand_*.csv); it holds ${names}.`);
  }
  return { files, close: () => zip.close() };
}

async function isZip(path: string): Promise<boolean> {
  const file = await open(path);
  try {
    const { buffer, bytesRead } = await file.read(Buffer.alloc(4), 0, 4, 0);
    return bytesRead === 4 && buffer.readUInt32LE(0) === 0x04034b50; // PK\x03\x04, a zip's first local header
  } finally {
    await file.close();
  }
}

function openZip(path: string): Promise<yauzl.ZipFile> {
  return new Promise((opened, failed) => {
    yauzl.open(path, { lazyEntries: true, autoClose: false }, (error, zip) => (error ? failed(error) : opened(zip)));
  });
}

/** Every entry of the zip's central directory (names and offsets only: nothing is decompressed). */
function entriesOf(zip: yauzl.ZipFile): Promise<yauzl.Entry[]> {
  return new Promise((done, failed) => {
    const entries: yauzl.Entry[] = [];
    zip.on('entry', (entry: yauzl.Entry) => {
      if (!entry.fileName.endsWith('/')) entries.push(entry);
      zip.readEntry();
    });
    zip.once('end', () => done(entries));
    zip.once('error', failed);
    zip.readEntry();
  });
}
