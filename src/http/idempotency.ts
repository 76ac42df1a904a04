/**
 * Idempotency-Key on POST (IETF httpapi draft "The Idempotency-Key HTTP Header Field").
 *
 * The first request with a key claims it by inserting a row; the database's unique index on
 * (key, caller, method, path) lets exactly one of several racing requests win, on one instance or many
 * sharing a database. The winner runs the operation, and its answer (status, relevant headers, exact
 * bytes) is stored before it is sent. Then:
 * - the same key and body again: the stored answer is replayed, with `Idempotent-Replayed: true`,
 *   and the operation does not run;
 * - the same key with another body: 422 `idempotency_key_reused`;
 * - the same key while the first request still runs: 409 `idempotency_key_in_flight`;
 * - a 5xx answer is not stored, and the key is released before that answer is sent (outside the request's
 *   deadline, which refuses the request's statements once it passed), so the retry it invites runs; a
 *   claim left by a crash stops blocking after a bound,
 *   and the retry runs again: operations that create records keep `requestCreationKey` with them so that
 *   this second run finds what the first made (the crash may have come after its commit).
 * Keys expire after IDEMPOTENCY_TTL_SECONDS and are purged.
 *
 * Requests are kept only as a hash, but an answer must be kept whole to be replayed, and answers carry
 * personal data (CPF, voter ids). With SECRETS_KEY the stored answer (body and headers) is sealed with
 * the AES-256-GCM box of the SMS secrets; without it (local development only: production requires the
 * key) answers are kept in clear. A sealed answer that cannot be opened (the key changed or was removed)
 * counts as abandoned: the retry runs again, as after a crash.
 */
import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { DataTypes, Op, UniqueConstraintError, type Model, type ModelStatic, type Sequelize } from 'sequelize';
import { outsideDeadline } from '../db/deadlines.js';
import type { Logger } from '../logger.js';
import { clientKey } from './client.js';
import { ApiError } from './errors.js';
import { operationIdOf } from './operations.js';
import type { SecretBox } from '../security/secret-box.js';

/** Headers worth replaying with a stored answer (others are per-response: dates, request id, limits). */
const REPLAYED_HEADERS = ['content-type', 'location', 'etag', 'cache-control'];

export interface IdempotencySettings {
  ttlMs: number;
  /** A claim older than this whose request never answered (a crash) no longer blocks the key. */
  abandonAfterMs: number;
  /** Seals stored answers (SECRETS_KEY); answers are stored in clear without it. */
  box?: SecretBox | undefined;
}

/** Sealed values are `v1.<iv>.<tag>.<ciphertext>`; a JSON document (a clear answer) never starts so. */
const SEALED_PREFIX = 'v1.';

interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

interface KeyRow {
  id: number;
  key: string;
  caller: string;
  method: string;
  path: string;
  fingerprint: string;
  state: 'in_flight' | 'completed';
  status_code: number | null;
  headers: string | null;
  body: string | null;
  created_at: Date;
  expires_at: Date;
}

type Claim =
  | { kind: 'claimed'; id: number }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'in_flight' }
  | { kind: 'reused' };

export class IdempotencyStore {
  private readonly model: ModelStatic<Model<KeyRow, Partial<KeyRow>>>;

  constructor(
    sequelize: Sequelize,
    private readonly settings: IdempotencySettings,
  ) {
    this.model = sequelize.define<Model<KeyRow, Partial<KeyRow>>>(
      'IdempotencyKey',
      {
        id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
        key: DataTypes.STRING(255),
        caller: DataTypes.STRING(100),
        method: DataTypes.STRING(10),
        path: DataTypes.STRING(500),
        fingerprint: DataTypes.STRING(64),
        state: DataTypes.STRING(20),
        status_code: DataTypes.INTEGER,
        headers: DataTypes.TEXT,
        body: DataTypes.TEXT,
        created_at: DataTypes.DATE,
        expires_at: DataTypes.DATE,
      },
      { tableName: 'idempotency_keys', timestamps: false },
    );
  }

  async claim(identity: Pick<KeyRow, 'key' | 'caller' | 'method' | 'path'>, fingerprint: string): Promise<Claim> {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const now = new Date();
      try {
        const row = await this.model.create({
          ...identity,
          fingerprint,
          state: 'in_flight',
          created_at: now,
          expires_at: new Date(now.getTime() + this.settings.ttlMs),
        });
        return { kind: 'claimed', id: Number(row.get('id')) };
      } catch (error) {
        if (!(error instanceof UniqueConstraintError)) throw error;
      }
      const existing = (await this.model.findOne({ where: identity, raw: true })) as KeyRow | null;
      if (!existing) continue; // released or purged in between: claim again
      if (this.isStale(existing, now)) {
        await this.model.destroy({ where: { id: existing.id, state: existing.state } });
        continue;
      }
      if (existing.fingerprint !== fingerprint) return { kind: 'reused' };
      if (existing.state === 'in_flight') return { kind: 'in_flight' };
      const answer = this.openAnswer(existing);
      if (!answer) {
        // Sealed under another key: nothing to replay, so the key is free again (see the opening comment).
        await this.model.destroy({ where: { id: existing.id, state: existing.state } });
        continue;
      }
      return { kind: 'replay', answer };
    }
    return { kind: 'in_flight' };
  }

  async complete(id: number, answer: StoredAnswer): Promise<void> {
    await this.model.update(
      { state: 'completed', status_code: answer.status, headers: this.seal(JSON.stringify(answer.headers)), body: this.seal(answer.body) },
      { where: { id } },
    );
  }

  /** Whether stored answers are sealed (SECRETS_KEY is set). */
  get sealsAnswers(): boolean {
    return this.settings.box !== undefined;
  }

  private seal(value: string): string {
    return this.settings.box ? this.settings.box.seal(value) : value;
  }

  /** The stored answer, opened; undefined when it is sealed and this store cannot open it. */
  private openAnswer(row: KeyRow): StoredAnswer | undefined {
    try {
      return { status: Number(row.status_code), headers: JSON.parse(this.open(row.headers ?? '{}')), body: this.open(row.body ?? '') };
    } catch {
      return undefined;
    }
  }

  private open(stored: string): string {
    if (!stored.startsWith(SEALED_PREFIX)) return stored; // kept in clear (no SECRETS_KEY when it was stored)
    if (!this.settings.box) throw new Error('a sealed answer, and no SECRETS_KEY to open it');
    return this.settings.box.open(stored);
  }

  async release(id: number): Promise<void> {
    await this.model.destroy({ where: { id } });
  }

  /** Deletes expired keys; returns how many. */
  async purgeExpired(now = new Date()): Promise<number> {
    return this.model.destroy({ where: { expires_at: { [Op.lt]: now } } });
  }

  private isStale(row: KeyRow, now: Date): boolean {
    const expired = new Date(row.expires_at) < now;
    const abandoned = row.state === 'in_flight' && now.getTime() - new Date(row.created_at).getTime() > this.settings.abandonAfterMs;
    return expired || abandoned;
  }
}

/**
 * Operations kept out of this table because a stored row would leak a secret: a login's answer holds
 * an API key shown only once, and the fingerprint of a body with a password is a fast hash of that
 * password (guessable offline without the password hash's cost). Retrying them is safe anyway: a second login
 * issues a second key, a second password check checks again, a second password change finds the
 * current password changed (401), a second deletion finds its key revoked (401). The SDK sends them no key
 * (UNKEYED_POSTS in sdk/client.ts, held to this list by test/sdk-network-errors.test.ts), and so does not
 * resend them after a failed connection: a login resent might count one wrong password twice.
 */
export const NEVER_STORED: ReadonlySet<string> = new Set(['login', 'checkCredential', 'changePassword', 'signUp', 'changeMyEmail', 'deleteMyAccount']);

/**
 * Operations whose body is streamed to the handler, never held whole, so it has no fingerprint to tell a
 * retry's body from the first one's: their key is ignored. Each is idempotent by itself (an import of
 * contacts keyed by number finds a retried file's lines unchanged).
 */
const STREAMED_BODIES = new Set(['importContacts']);

/** The middleware, mounted after validation and before the operation's handler. */
export function idempotency(store: IdempotencyStore, logger: Logger): RequestHandler {
  return async (req, res, next) => {
    const header = req.method === 'POST' ? req.get('Idempotency-Key') : undefined;
    const operationId = operationIdOf(req) ?? '';
    if (header === undefined || NEVER_STORED.has(operationId) || STREAMED_BODIES.has(operationId)) return next();
    const identity = { key: unquote(header), caller: clientKey(req), method: req.method, path: req.path };
    const claim = await store.claim(identity, fingerprintOf(req));
    switch (claim.kind) {
      case 'claimed':
        res.locals.creationKey = creationKeyOf(identity);
        storeAnswerBeforeSending(res, {
          store: (answer) => store.complete(claim.id, answer),
          release: () => outsideDeadline(() => store.release(claim.id)),
          logger,
        });
        return next();
      case 'replay':
        replay(res, claim.answer);
        return;
      case 'in_flight':
        throw new ApiError(409, 'idempotency_key_in_flight', 'A request with this Idempotency-Key is still being processed. Retry later.', [], {
          'Retry-After': '1',
        });
      case 'reused':
        throw new ApiError(422, 'idempotency_key_reused', 'This Idempotency-Key was already used with a different request body.', [
          { location: 'header', field: 'Idempotency-Key', rule: 'same_body', message: 'the body differs from the first request with this key' },
        ]);
    }
  };
}

/**
 * The request's key for the records it creates, while it holds its Idempotency-Key. A crash after the
 * operation committed but before its answer was stored leaves the claim to be abandoned, and the retry
 * then runs again: an operation that stores this key with what it creates (under a unique index) finds
 * its earlier record instead of creating a second one. Undefined without an Idempotency-Key.
 */
export function requestCreationKey(res: Response): string | undefined {
  return typeof res.locals.creationKey === 'string' ? res.locals.creationKey : undefined;
}

function creationKeyOf(identity: Pick<KeyRow, 'key' | 'caller' | 'method' | 'path'>): string {
  return createHash('sha256').update(JSON.stringify([identity.caller, identity.method, identity.path, identity.key])).digest('hex');
}

/** The draft sends the key as a structured-field string ("..."); plain keys are accepted too. */
function unquote(key: string): string {
  return /^".*"$/.test(key) ? key.slice(1, -1) : key;
}

/** What makes two requests "the same": content type and exact body bytes. */
function fingerprintOf(req: Request): string {
  const raw = (req as Request & { rawBody?: Buffer }).rawBody ?? Buffer.alloc(0);
  return createHash('sha256').update(req.get('Content-Type') ?? '').update('\n').update(raw).digest('hex');
}

/**
 * Wraps `res.send` so the answer is stored before it goes out (a client that retries after a lost
 * answer finds it); a 5xx answer releases the key instead, before it goes out (a prompt retry must not
 * find the key still claimed), and so does a response never sent.
 */
function storeAnswerBeforeSending(
  res: Response,
  hooks: { store: (answer: StoredAnswer) => Promise<void>; release: () => Promise<void>; logger: Logger },
): void {
  const send = res.send.bind(res);
  let settled = false;
  const releaseQuietly = () => hooks.release().catch((error: unknown) => hooks.logger.warn({ err: error }, 'could not release an idempotency key'));
  res.once('close', () => {
    if (!settled) void releaseQuietly();
  });
  res.send = (body?: unknown) => {
    if (settled) return send(body);
    if (body !== null && typeof body === 'object' && !Buffer.isBuffer(body)) return res.json(body); // comes back as a string
    settled = true;
    if (res.statusCode >= 500) {
      void releaseQuietly().finally(() => send(body));
      return res;
    }
    const answer: StoredAnswer = {
      status: res.statusCode,
      headers: Object.fromEntries(REPLAYED_HEADERS.flatMap((name) => (res.getHeader(name) === undefined ? [] : [[name, String(res.getHeader(name))]]))),
      body: Buffer.isBuffer(body) ? body.toString('utf8') : String(body ?? ''),
    };
    hooks
      .store(answer)
      .catch((error: unknown) => hooks.logger.error({ err: error }, 'could not store an idempotent answer'))
      .finally(() => send(body));
    return res;
  };
}

function replay(res: Response, answer: StoredAnswer): void {
  res.status(answer.status);
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  res.setHeader('Idempotent-Replayed', 'true');
  res.setHeader('Content-Length', Buffer.byteLength(answer.body));
  res.end(answer.body);
}
