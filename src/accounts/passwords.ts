/**
 * Password hashing. New hashes are argon2id (@node-rs/argon2, off the event loop) in the PHC string
 * `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`: at the default cost, OWASP's first choice (19 MiB,
 * 2 passes, 1 lane). A hash carries its parameters, so the cost can change and older hashes still
 * verify: argon2id with weaker parameters, and the scrypt hashes of earlier releases
 * (`$scrypt$ln=17,r=8,p=1$<salt>$<hash>`). `needsRehash` then tells the caller to store a new hash at
 * the next successful password check.
 *
 * A stored hash is trusted no further than its format: one that does not parse, or whose parameters
 * ask for more memory or work than any setting writes (a tampered row could ask for terabytes), is
 * refused before any hashing, and verification answers false rather than throwing.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { hash as argon2Hash, parseOptions, verify as argon2Verify, type Algorithm, type ParsedHashOptions, type Version } from '@node-rs/argon2';

/** The cost setting (PASSWORD_HASH_COST) that means OWASP's parameters; also the configuration's default. */
export const OWASP_COST = 17;
/** The highest cost the configuration accepts: no genuine hash asks for more memory than this one. */
const MAX_COST = 20;
const OWASP_MEMORY_KIB = 19_456;
const PASSES = 2;
const LANES = 1;
const SALT_LENGTH = 16;
const KEY_LENGTH = 32;
// The package's enums are `const enum`s, which isolated modules cannot read: their values, spelled out.
const ARGON2ID = 2 as Algorithm;
const VERSION_0X13 = 1 as Version;
/** Beyond these a stored argon2 hash is refused unchecked (the memory of the highest cost, 10 passes, 8 lanes). */
const ARGON2_LIMITS = { memoryKib: memoryKibFor(MAX_COST), passes: 10, lanes: 8 };
/** Beyond these a stored scrypt hash is refused unchecked: the most that earlier releases wrote (N=2^20, r=8, p=1). */
const SCRYPT_LIMITS = { ln: 20, r: 8, p: 1 };

export interface Argon2Parameters {
  /** KiB of memory (`m=`). */
  memoryCost: number;
  /** Passes over the memory (`t=`). */
  timeCost: number;
  /** Lanes (`p=`). */
  parallelism: number;
}

/**
 * The argon2id parameters of a cost setting: OWASP's at 17, and each step below halves the memory (tests
 * use 12: 608 KiB, well under a millisecond) while each step above doubles it (20: 152 MiB).
 */
export function argon2ParametersFor(cost: number): Argon2Parameters {
  return { memoryCost: memoryKibFor(cost), timeCost: PASSES, parallelism: LANES };
}

function memoryKibFor(cost: number): number {
  return Math.round(OWASP_MEMORY_KIB * 2 ** (cost - OWASP_COST));
}

export function hashPassword(password: string, cost: number): Promise<string> {
  return argon2Hash(password.normalize('NFC'), { ...argon2ParametersFor(cost), algorithm: ARGON2ID, version: VERSION_0X13, outputLen: KEY_LENGTH });
}

export interface Verification {
  valid: boolean;
  /** The password matched a hash weaker than the current setting's (or a scrypt one): store a new hash. */
  needsRehash: boolean;
}

const REFUSED: Verification = { valid: false, needsRehash: false };

export async function verifyPassword(password: string, stored: string, currentCost: number): Promise<Verification> {
  try {
    if (stored.startsWith('$argon2id$')) return await verifyArgon2(password, stored, currentCost);
    if (stored.startsWith('$scrypt$')) return await verifyScrypt(password, stored);
  } catch {
    // A hash the library cannot decode (a damaged or tampered row) matches no password.
  }
  return REFUSED;
}

/**
 * A hash of a random password at the current cost. Checking a password against it costs exactly what
 * checking a real account costs, so a login for an unknown user takes as long as one for a known user.
 */
export function decoyHash(cost: number): Promise<string> {
  return hashPassword(randomBytes(32).toString('base64'), cost);
}

async function verifyArgon2(password: string, stored: string, currentCost: number): Promise<Verification> {
  const options = parseOptions(stored);
  if (options.algorithm !== ARGON2ID || !withinArgon2Limits(options)) return REFUSED;
  const valid = await argon2Verify(stored, password.normalize('NFC'));
  return { valid, needsRehash: valid && weakerThan(options, argon2ParametersFor(currentCost)) };
}

function withinArgon2Limits(options: ParsedHashOptions): boolean {
  return options.memoryCost <= ARGON2_LIMITS.memoryKib && options.timeCost <= ARGON2_LIMITS.passes && options.parallelism <= ARGON2_LIMITS.lanes;
}

function weakerThan(options: ParsedHashOptions, wanted: Argon2Parameters): boolean {
  return (
    options.version !== VERSION_0X13 ||
    options.memoryCost < wanted.memoryCost ||
    options.timeCost < wanted.timeCost ||
    options.saltLen < SALT_LENGTH ||
    options.outputLen < KEY_LENGTH
  );
}

interface ScryptParameters {
  ln: number;
  r: number;
  p: number;
}

/** Earlier releases' hashes: checked as they were made, and always replaced once the password matches. */
async function verifyScrypt(password: string, stored: string): Promise<Verification> {
  const parsed = parseScrypt(stored);
  if (!parsed) return REFUSED;
  const candidate = await deriveScrypt(password, parsed.salt, parsed.parameters);
  const valid = candidate.length === parsed.hash.length && timingSafeEqual(candidate, parsed.hash);
  return { valid, needsRehash: valid };
}

function deriveScrypt(password: string, salt: Buffer, { ln, r, p }: ScryptParameters): Promise<Buffer> {
  const N = 2 ** ln;
  // Node refuses scrypt above 32 MiB unless told; allow what these parameters need (128·N·r·p), with room.
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r * p };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

function parseScrypt(stored: string): { parameters: ScryptParameters; salt: Buffer; hash: Buffer } | undefined {
  const match = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/.exec(stored);
  if (!match) return undefined;
  const [, ln, r, p, salt, hash] = match as unknown as [string, string, string, string, string, string];
  const parameters = { ln: Number(ln), r: Number(r), p: Number(p) };
  const withinLimits = parameters.ln >= 1 && parameters.ln <= SCRYPT_LIMITS.ln && parameters.r >= 1 && parameters.r <= SCRYPT_LIMITS.r && parameters.p >= 1 && parameters.p <= SCRYPT_LIMITS.p;
  return withinLimits ? { parameters, salt: Buffer.from(salt, 'base64'), hash: Buffer.from(hash, 'base64') } : undefined;
}
