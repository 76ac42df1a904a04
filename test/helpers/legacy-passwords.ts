/**
 * The scrypt password hashes that releases before argon2id wrote (`$scrypt$ln=<log2 N>,r=8,p=1$<salt>$<key>`,
 * base64, NFC-normalised password, 32-byte key), written with node:crypto directly: the rows that
 * accounts upgraded at their next login still hold.
 */
import { randomBytes, scrypt } from 'node:crypto';

export async function legacyScryptHash(password: string, { ln = 12, r = 8, p = 1 } = {}): Promise<string> {
  const salt = randomBytes(16);
  const N = 2 ** ln;
  const key = await new Promise<Buffer>((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, 32, { N, r, p, maxmem: 256 * N * r * p }, (error, derived) => (error ? reject(error) : resolve(derived))),
  );
  return `$scrypt$ln=${ln},r=${r},p=${p}$${salt.toString('base64')}$${key.toString('base64')}`;
}
