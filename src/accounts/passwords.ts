/**
 * Password hashing with scrypt (memory-hard, in node:crypto). A hash carries its own parameters in a
 * PHC-style string, `$scrypt$ln=17,r=8,p=1$<salt>$<hash>`, so the cost can be raised later: old hashes
 * still verify, and `needsRehash` tells the caller to store a new one at the next successful login.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const KEY_LENGTH = 32;
const SALT_LENGTH = 16;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;

interface Parameters {
  ln: number;
  r: number;
  p: number;
}

export async function hashPassword(password: string, cost: number): Promise<string> {
  const parameters = { ln: cost, r: BLOCK_SIZE, p: PARALLELISM };
  const salt = randomBytes(SALT_LENGTH);
  const hash = await derive(password, salt, parameters);
  return `$scrypt$ln=${parameters.ln},r=${parameters.r},p=${parameters.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export interface Verification {
  valid: boolean;
  /** The hash was made with weaker parameters than the current ones. */
  needsRehash: boolean;
}

export async function verifyPassword(password: string, stored: string, currentCost: number): Promise<Verification> {
  const parsed = parse(stored);
  if (!parsed) return { valid: false, needsRehash: false };
  const candidate = await derive(password, parsed.salt, parsed.parameters);
  const valid = candidate.length === parsed.hash.length && timingSafeEqual(candidate, parsed.hash);
  return { valid, needsRehash: valid && (parsed.parameters.ln < currentCost || parsed.parameters.r < BLOCK_SIZE) };
}

/**
 * A hash of a random password at the current cost. Checking a password against it costs exactly what
 * checking a real account costs, so a login for an unknown user takes as long as one for a known user.
 */
export function decoyHash(cost: number): Promise<string> {
  return hashPassword(randomBytes(32).toString('base64'), cost);
}

function derive(password: string, salt: Buffer, { ln, r, p }: Parameters): Promise<Buffer> {
  const N = 2 ** ln;
  // Node refuses scrypt above 32 MiB unless told; allow exactly what these parameters need (128·N·r·p).
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r * p };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

function parse(stored: string): { parameters: Parameters; salt: Buffer; hash: Buffer } | undefined {
  const match = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/.exec(stored);
  if (!match) return undefined;
  const [, ln, r, p, salt, hash] = match as unknown as [string, string, string, string, string, string];
  return { parameters: { ln: Number(ln), r: Number(r), p: Number(p) }, salt: Buffer.from(salt, 'base64'), hash: Buffer.from(hash, 'base64') };
}
