/**
 * Password hashes on their own (the logins that store and upgrade them are in accounts-sessions): new
 * hashes are argon2id at OWASP's parameters by default, the cost setting scales their memory, the
 * scrypt hashes of earlier releases still verify and ask to be replaced, weaker argon2id hashes ask to
 * be replaced, and a stored hash that is damaged, tampered with or asks for unbounded work matches
 * nothing and never throws.
 */
import { hash as argon2Hash, parseOptions, type Algorithm } from '@node-rs/argon2';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { argon2ParametersFor, decoyHash, hashPassword, verifyPassword } from '../src/accounts/passwords.js';
import { testAccountSettings } from './helpers/app.js';
import { legacyScryptHash } from './helpers/legacy-passwords.js';

const PASSWORD = 'senha antiga de São Paulo';
const DEFAULT_COST = loadConfig({}).accounts.passwordHashCost;
const TEST_COST = testAccountSettings.passwordHashCost;
// The package's `const enum`, which isolated modules cannot read.
const ARGON2ID = 2 as Algorithm;

/** Written by the scrypt code of earlier releases (PASSWORD_HASH_COST=12) for PASSWORD: a row they left behind. */
const RELEASED_SCRYPT_HASH = '$scrypt$ln=12,r=8,p=1$6PyZ4RJnfQotxO8ZwELzwQ==$zBq3EtjqHeOV6lMxR9uGnpX10KSJMxmzTqjMtAkYBBA=';

/** A genuine argon2id hash of `password` with any parameters, as someone writing the row directly could make. */
const argon2idWith = (password: string, parameters: { memoryCost: number; timeCost: number; parallelism: number }) =>
  argon2Hash(password, { ...parameters, algorithm: ARGON2ID });

describe('new hashes', () => {
  it("are argon2id v=19 at OWASP's first choice (m=19456, t=2, p=1) at the default cost, salted, 32 bytes", async () => {
    expect(DEFAULT_COST).toBe(17);
    const stored = await hashPassword(PASSWORD, DEFAULT_COST);
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(parseOptions(stored)).toMatchObject({ saltLen: 16, outputLen: 32 });
    expect(stored).not.toContain(PASSWORD);
    expect(await verifyPassword(PASSWORD, stored, DEFAULT_COST)).toEqual({ valid: true, needsRehash: false });
    expect(await verifyPassword('senha errada', stored, DEFAULT_COST)).toEqual({ valid: false, needsRehash: false });
    // A fresh salt each time.
    expect(await hashPassword(PASSWORD, DEFAULT_COST)).not.toBe(stored);
  });

  it('halve their memory per step of cost below the default, and double it per step above', async () => {
    expect(argon2ParametersFor(17)).toEqual({ memoryCost: 19456, timeCost: 2, parallelism: 1 });
    expect(argon2ParametersFor(16)).toEqual({ memoryCost: 9728, timeCost: 2, parallelism: 1 });
    expect(argon2ParametersFor(12)).toEqual({ memoryCost: 608, timeCost: 2, parallelism: 1 });
    expect(argon2ParametersFor(10)).toEqual({ memoryCost: 152, timeCost: 2, parallelism: 1 });
    expect(argon2ParametersFor(20)).toEqual({ memoryCost: 155_648, timeCost: 2, parallelism: 1 });
    expect(await hashPassword(PASSWORD, TEST_COST)).toMatch(/^\$argon2id\$v=19\$m=608,t=2,p=1\$/);
  });

  it('compare passwords after Unicode normalisation (NFC), as before', async () => {
    const stored = await hashPassword(PASSWORD.normalize('NFD'), TEST_COST);
    expect((await verifyPassword(PASSWORD.normalize('NFC'), stored, TEST_COST)).valid).toBe(true);
  });

  it('include the decoy that unknown users are checked against: argon2id at the current parameters', async () => {
    expect(await decoyHash(DEFAULT_COST)).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await decoyHash(TEST_COST)).toMatch(/^\$argon2id\$v=19\$m=608,t=2,p=1\$/);
  });
});

describe('hashes that ask to be replaced', () => {
  it("verify an earlier release's scrypt hash, and ask to replace it once the password matches", async () => {
    expect(await verifyPassword(PASSWORD, RELEASED_SCRYPT_HASH, DEFAULT_COST)).toEqual({ valid: true, needsRehash: true });
    expect(await verifyPassword(PASSWORD.normalize('NFD'), RELEASED_SCRYPT_HASH, DEFAULT_COST)).toEqual({ valid: true, needsRehash: true });
    expect(await verifyPassword('senha errada', RELEASED_SCRYPT_HASH, DEFAULT_COST)).toEqual({ valid: false, needsRehash: false });
    // Whatever the cost it was made at, and whatever the current one.
    const written = await legacyScryptHash(PASSWORD, { ln: 10 });
    expect(await verifyPassword(PASSWORD, written, TEST_COST)).toEqual({ valid: true, needsRehash: true });
  });

  it('ask to replace an argon2id hash with less memory or fewer passes than the current cost, never a stronger one', async () => {
    const cheap = await hashPassword(PASSWORD, TEST_COST);
    expect(await verifyPassword(PASSWORD, cheap, TEST_COST + 1)).toEqual({ valid: true, needsRehash: true });
    expect(await verifyPassword(PASSWORD, cheap, TEST_COST)).toEqual({ valid: true, needsRehash: false });
    expect(await verifyPassword(PASSWORD, cheap, TEST_COST - 1)).toEqual({ valid: true, needsRehash: false });
    const onePass = await argon2idWith(PASSWORD, { ...argon2ParametersFor(TEST_COST), timeCost: 1 });
    expect(await verifyPassword(PASSWORD, onePass, TEST_COST)).toEqual({ valid: true, needsRehash: true });
    // A wrong password against a weak hash asks for nothing: there is no password to re-hash.
    expect(await verifyPassword('senha errada', cheap, TEST_COST + 1)).toEqual({ valid: false, needsRehash: false });
  });
});

describe('damaged, tampered and unbounded hashes', () => {
  it('match no password and never throw', async () => {
    const genuine = await hashPassword(PASSWORD, TEST_COST);
    const digest = genuine.slice(genuine.lastIndexOf('$') + 1);
    const flipped = genuine.slice(0, -digest.length) + (digest[0] === 'A' ? 'B' : 'A') + digest.slice(1);
    const damaged = [
      '',
      'garbage',
      '!',
      '$argon2id$',
      '$argon2id$v=19$m=608,t=2,p=1$xx$yy',
      genuine.slice(0, -10),
      `${genuine}$extra`,
      flipped,
      genuine.replace('m=608', 'm=609'),
      genuine.replace('t=2', 't=3'),
      genuine.replace('$argon2id$', '$argon2i$'),
      genuine.replace('$argon2id$', '$argon2d$'),
      genuine.replace('v=19', 'v=16'),
      '$scrypt$',
      '$scrypt$ln=12,r=8,p=1$$',
      RELEASED_SCRYPT_HASH.replace('ln=12', 'ln=13'),
      RELEASED_SCRYPT_HASH.replace('ln=12', 'ln=0'),
      RELEASED_SCRYPT_HASH.replace('zBq3', 'zBq4'),
      RELEASED_SCRYPT_HASH.slice(0, -8),
      '$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW',
      'pbkdf2_sha256$600000$salt$hash',
    ];
    for (const stored of damaged) {
      await expect(verifyPassword(PASSWORD, stored, TEST_COST), stored).resolves.toEqual({ valid: false, needsRehash: false });
    }
  });

  it('refuse, unchecked, genuine argon2id hashes that ask for more memory, passes or lanes than any setting writes', async () => {
    const highest = argon2ParametersFor(20);
    // At the bounds of passes and lanes: verified.
    expect((await verifyPassword(PASSWORD, await argon2idWith(PASSWORD, { memoryCost: 64, timeCost: 10, parallelism: 8 }), TEST_COST)).valid).toBe(true);
    // Beyond them, the right password is refused: a tampered row could otherwise make a login allocate
    // terabytes or run for hours.
    for (const parameters of [
      { memoryCost: highest.memoryCost + 8, timeCost: 1, parallelism: 1 },
      { memoryCost: 64, timeCost: 11, parallelism: 1 },
      { memoryCost: 72, timeCost: 1, parallelism: 9 },
    ]) {
      const stored = await argon2idWith(PASSWORD, parameters);
      expect(await verifyPassword(PASSWORD, stored, TEST_COST), stored).toEqual({ valid: false, needsRehash: false });
    }
  });

  it('refuse, unchecked, scrypt hashes with parameters earlier releases never wrote', async () => {
    expect((await verifyPassword(PASSWORD, await legacyScryptHash(PASSWORD, { ln: 4, r: 8, p: 1 }), TEST_COST)).valid).toBe(true);
    for (const parameters of [
      { ln: 4, r: 9, p: 1 },
      { ln: 4, r: 8, p: 2 },
    ]) {
      const stored = await legacyScryptHash(PASSWORD, parameters);
      expect(await verifyPassword(PASSWORD, stored, TEST_COST), stored).toEqual({ valid: false, needsRehash: false });
    }
    // N=2^21 asks for 2 GiB: refused from its text alone.
    expect(await verifyPassword(PASSWORD, RELEASED_SCRYPT_HASH.replace('ln=12', 'ln=21'), TEST_COST)).toEqual({ valid: false, needsRehash: false });
  });
});
