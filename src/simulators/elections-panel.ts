/**
 * A simulator of the external elections panel on loopback, for the tests and the sandbox. It speaks the protocol Palanque
 * defined for the panel (src/elections/panel.ts documents it), written here from that description and
 * independently of the server's code, so that a bug there cannot hide itself:
 * - `POST /v1/candidates/batches` with `Authorization: Bearer <token>` (a token the test registered;
 *   any other answers 401), `Idempotency-Key` (required), and the JSON body
 *   `{ source: "palanque", candidates: [card] }`, each card holding exactly the public fields
 *   (an unknown field, such as a CPF, is refused with 422 naming it);
 * - 201 with `{ batch_id, received }` for a new batch; the same key again (for the same token) answers
 *   200 with the same batch, which is not stored twice;
 * - the next requests can be scripted to fail (`failNext`: e.g. 503 then OK, or 422), even after the
 *   batch was stored (a lost answer), and the simulator can be paused to hold requests under way.
 * Every request is recorded with what it carried and what it was answered.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { listenOnLoopback, type LoopbackServer } from './loopback.js';

export const BATCHES_PATH = '/v1/candidates/batches';

/** The public card of a candidate, as the panel accepts it. */
export interface PanelCard {
  palanque_id: number;
  name: string | null;
  ballot_name: string | null;
  ballot_number: number | null;
  party: string | null;
  office: string | null;
  state: string | null;
  municipality: string | null;
  reelection: boolean | null;
  profiles: Array<{ network: string; username: string | null; link: string | null }>;
}

export interface PanelBatch {
  batchId: string;
  token: string;
  idempotencyKey: string;
  source: string;
  candidates: PanelCard[];
  receivedAt: Date;
}

export interface PanelRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  idempotencyKey: string | undefined;
  contentType: string | undefined;
  /** The body exactly as received. */
  rawBody: string;
  /** What the simulator answered. */
  status: number;
  answer: object;
}

export interface ScriptedFailure {
  status: number;
  message?: string;
  /** Store the batch first, then answer with the failure: the panel took it but the answer was lost. */
  afterStoring?: boolean;
}

const CARD_FIELDS = ['palanque_id', 'name', 'ballot_name', 'ballot_number', 'party', 'office', 'state', 'municipality', 'reelection', 'profiles'] as const;
const PROFILE_FIELDS = ['network', 'username', 'link'] as const;

export class ElectionsPanelSimulator {
  /** Batches stored, once per token and Idempotency-Key. */
  readonly batches: PanelBatch[] = [];
  /** Every request, refused ones included, in the order they were answered. */
  readonly requests: PanelRequest[] = [];
  /** Requests that arrived and are held by pause(). */
  held = 0;
  url = '';
  private readonly tokens = new Set<string>();
  private readonly failures: ScriptedFailure[] = [];
  private gate: { promise: Promise<void>; open: () => void } | undefined;
  private loopback: LoopbackServer | undefined;

  /** Accepts this Bearer token. */
  addToken(token: string): void {
    this.tokens.add(token);
  }

  /** The next authenticated requests fail like this, in order (e.g. 503 twice, then they pass). */
  failNext(...failures: ScriptedFailure[]): void {
    this.failures.push(...failures);
  }

  /** Holds every request from now on until resume(), as a slow panel would. */
  pause(): void {
    if (this.gate) return;
    let open = () => {};
    const promise = new Promise<void>((resolve) => (open = resolve));
    this.gate = { promise, open };
  }

  resume(): void {
    this.gate?.open();
    this.gate = undefined;
  }

  requestsWith(token: string): PanelRequest[] {
    return this.requests.filter((request) => request.authorization === `Bearer ${token}`);
  }

  batchesOf(token: string): PanelBatch[] {
    return this.batches.filter((batch) => batch.token === token);
  }

  async start(): Promise<void> {
    this.loopback = await listenOnLoopback((req, res) => {
      void this.receive(req).then(({ status, body }) => {
        res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
      });
    });
    this.url = this.loopback.url;
  }

  async stop(): Promise<void> {
    this.resume();
    await this.loopback?.stop();
  }

  private async receive(req: IncomingMessage): Promise<{ status: number; body: object }> {
    const rawBody = await bodyOf(req);
    if (this.gate) {
      this.held += 1;
      await this.gate.promise;
      this.held -= 1;
    }
    const header = (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(', ') : value;
    };
    const answer = this.answer(req.method ?? '', req.url ?? '', header('authorization'), header('idempotency-key'), header('content-type'), rawBody);
    this.requests.push({
      method: req.method ?? '',
      path: req.url ?? '',
      authorization: header('authorization'),
      idempotencyKey: header('idempotency-key'),
      contentType: header('content-type'),
      rawBody,
      status: answer.status,
      answer: answer.body,
    });
    return answer;
  }

  private answer(method: string, path: string, authorization: string | undefined, idempotencyKey: string | undefined, contentType: string | undefined, rawBody: string): { status: number; body: object } {
    if (path !== BATCHES_PATH) return refusal(404, 'not_found', `No resource ${path}`);
    if (method !== 'POST') return refusal(405, 'method_not_allowed', `${method} is not allowed here`);
    const token = /^Bearer (\S+)$/.exec(authorization ?? '')?.[1];
    if (!token || !this.tokens.has(token)) return refusal(401, 'invalid_token', 'The token is unknown or revoked');
    const failure = this.failures.shift();
    if (failure && !failure.afterStoring) return refusal(failure.status, 'scripted', failure.message ?? `scripted ${failure.status}`);
    if (!(contentType ?? '').startsWith('application/json')) return refusal(415, 'unsupported_media_type', 'Send application/json');
    if (!idempotencyKey) return refusal(400, 'idempotency_key_required', 'The Idempotency-Key header is required');
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      return refusal(400, 'malformed_json', 'The body is not JSON');
    }
    const problem = problemOf(body);
    if (problem) return refusal(422, 'invalid_batch', problem);
    const batch = body as { source: string; candidates: PanelCard[] };

    let stored = this.batches.find((candidate) => candidate.token === token && candidate.idempotencyKey === idempotencyKey);
    const replay = stored !== undefined;
    if (!stored) {
      stored = { batchId: `bat_${randomBytes(8).toString('hex')}`, token, idempotencyKey, source: batch.source, candidates: batch.candidates, receivedAt: new Date() };
      this.batches.push(stored);
    }
    if (failure) return refusal(failure.status, 'scripted', failure.message ?? `scripted ${failure.status}`);
    return { status: replay ? 200 : 201, body: { batch_id: stored.batchId, received: stored.candidates.length } };
  }
}

function refusal(status: number, code: string, message: string): { status: number; body: object } {
  return { status, body: { error: code, message } };
}

/** What is wrong with a batch body, or undefined when it has the expected shape. */
export function problemOf(body: unknown): string | undefined {
  if (!isObject(body)) return 'the body must be a JSON object';
  const extra = Object.keys(body).filter((key) => key !== 'source' && key !== 'candidates');
  if (extra.length > 0) return `unknown field ${extra[0]}`;
  if (body.source !== 'palanque') return 'source must be "palanque"';
  if (!Array.isArray(body.candidates)) return 'candidates must be an array';
  for (const [index, card] of body.candidates.entries()) {
    const where = `candidates[${index}]`;
    if (!isObject(card)) return `${where} must be an object`;
    const unknown = Object.keys(card).filter((key) => !(CARD_FIELDS as readonly string[]).includes(key));
    if (unknown.length > 0) return `${where}.${unknown[0]} is not a field of a card`;
    const missing = CARD_FIELDS.filter((key) => !(key in card));
    if (missing.length > 0) return `${where}.${missing[0]} is required`;
    if (!Number.isInteger(card.palanque_id) || (card.palanque_id as number) < 1) return `${where}.palanque_id must be a positive integer`;
    for (const field of ['name', 'ballot_name', 'party', 'office', 'state', 'municipality'] as const) {
      if (card[field] !== null && typeof card[field] !== 'string') return `${where}.${field} must be a string or null`;
    }
    if (card.ballot_number !== null && !Number.isInteger(card.ballot_number)) return `${where}.ballot_number must be an integer or null`;
    if (card.reelection !== null && typeof card.reelection !== 'boolean') return `${where}.reelection must be a boolean or null`;
    if (!Array.isArray(card.profiles)) return `${where}.profiles must be an array`;
    for (const [position, profile] of card.profiles.entries()) {
      const at = `${where}.profiles[${position}]`;
      if (!isObject(profile)) return `${at} must be an object`;
      const strange = Object.keys(profile).filter((key) => !(PROFILE_FIELDS as readonly string[]).includes(key));
      if (strange.length > 0) return `${at}.${strange[0]} is not a field of a profile`;
      if (typeof profile.network !== 'string' || profile.network === '') return `${at}.network must be a non-empty string`;
      for (const field of ['username', 'link'] as const) {
        if (!(field in profile) || (profile[field] !== null && typeof profile[field] !== 'string')) return `${at}.${field} must be a string or null`;
      }
    }
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
