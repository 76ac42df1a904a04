/**
 * Idempotency-Key on POST: a retried POST never acts twice. These tests give POST /api/account/
 * (syncElectionsPanel) a stand-in handler that counts its runs and answers what the contract says it
 * answers (201 with a job), so that the store is tested apart from any one domain.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { QueryTypes } from 'sequelize';
import type { OperationHandler } from '../src/http/operations.js';
import { ApiError } from '../src/http/errors.js';
import { startTestApp, type TestApp, type TestAppOptions } from './helpers/app.js';
import { createTestDatabase } from './helpers/database.js';
import { createUser } from './helpers/accounts.js';
import { loadSpec, tryResolvePointer } from './helpers/spec.js';
import { formatCpf, generateCpf } from '@brazilian-utils/brazilian-utils';

interface StandIn {
  runs: number;
  delayMs: number;
  failNext: boolean;
  /** An error in the error model to answer with instead of the job. */
  failWith?: ApiError;
  handler: OperationHandler<'syncElectionsPanel'>;
}

function standIn(): StandIn {
  const state: StandIn = {
    runs: 0,
    delayMs: 0,
    failNext: false,
    handler: async (_req, res) => {
      state.runs += 1;
      if (state.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, state.delayMs));
      if (state.failWith) throw state.failWith;
      if (state.failNext) {
        state.failNext = false;
        throw new Error('the elections panel is down');
      }
      const now = new Date().toISOString();
      res.status(201).json({
        success: true,
        data: { id: randomUUID(), kind: 'elections_panel_sync', state: 'queued', attempts: 0, created_at: now, updated_at: now, error: null, result: null },
        message: `The sync was queued (run ${state.runs}).`,
        request_id: String(res.locals.requestId),
      });
    },
  };
  return state;
}

/** Two users per database (instances sharing a database share them): the callers of the tests. */
const callers = new Map<string, { ana: string; carlos: string }>();

const apps: TestApp[] = [];
const cleanups: Array<() => Promise<void>> = [];
async function start(options: TestAppOptions = {}): Promise<{ app: TestApp; stand: StandIn }> {
  const stand = standIn();
  const app = await startTestApp({ ...options, handlers: { syncElectionsPanel: stand.handler } });
  apps.push(app);
  if (!callers.has(app.database.url)) {
    callers.set(app.database.url, { ana: (await createUser(app)).headers.Authorization!, carlos: (await createUser(app)).headers.Authorization! });
  }
  return { app, stand };
}
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const body = (token = 'pnl_live_3kR9sT2vX8yZ1aB4') => JSON.stringify({ sync_sm: { elections_token: token } });

function sync(app: TestApp, key: string | undefined, payload = body(), caller: 'ana' | 'carlos' = 'ana') {
  return fetch(`${app.baseUrl}/api/account/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: callers.get(app.database.url)![caller], ...(key ? { 'Idempotency-Key': key } : {}) },
    body: payload,
  });
}

describe('replay', () => {
  it('replays the first answer byte for byte, saying so, without running the operation again', async () => {
    const { app, stand } = await start();
    const first = await sync(app, 'key-1');
    const firstBody = await first.text();
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    const again = await sync(app, 'key-1');
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(await again.text()).toBe(firstBody);
    expect(stand.runs).toBe(1);
  });

  it('treats the quoted form of the draft as the same key', async () => {
    const { app, stand } = await start();
    await sync(app, 'key-2');
    const quoted = await sync(app, '"key-2"');
    expect(quoted.headers.get('idempotent-replayed')).toBe('true');
    expect(stand.runs).toBe(1);
  });

  it('stores 4xx answers too: they are complete answers', async () => {
    const { app, stand } = await start();
    stand.failWith = new ApiError(403, 'forbidden', 'Not allowed.');
    const first = await sync(app, 'key-3');
    const again = await sync(app, 'key-3');
    expect([first.status, again.status]).toEqual([403, 403]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(stand.runs).toBe(1);
  });

  it('runs every POST without a key', async () => {
    const { app, stand } = await start();
    await sync(app, undefined);
    await sync(app, undefined);
    expect(stand.runs).toBe(2);
  });

  it('keeps keys per caller: the same key from another caller is another request', async () => {
    const { app, stand } = await start();
    await sync(app, 'shared-key', body(), 'ana');
    const other = await sync(app, 'shared-key', body(), 'carlos');
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    expect(stand.runs).toBe(2);
  });
});

describe('refusals', () => {
  it('answers 422 idempotency_key_reused to the same key with another body', async () => {
    const { app, stand } = await start();
    await sync(app, 'key-4', body('token-a'));
    const other = await sync(app, 'key-4', body('token-b'));
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({ success: false, error: { code: 'idempotency_key_reused', details: [{ field: 'Idempotency-Key' }] } });
    expect(stand.runs).toBe(1);
  });

  it('answers 409 idempotency_key_in_flight while the first request still runs', async () => {
    const { app, stand } = await start();
    stand.delayMs = 400;
    const first = sync(app, 'key-5');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const during = await sync(app, 'key-5');
    expect(during.status).toBe(409);
    expect(during.headers.get('retry-after')).toBe('1');
    expect(await during.json()).toMatchObject({ error: { code: 'idempotency_key_in_flight' } });
    expect((await first).status).toBe(201);
    expect((await sync(app, 'key-5')).headers.get('idempotent-replayed')).toBe('true');
    expect(stand.runs).toBe(1);
  });

  it('does not pin a key on a 5xx: the retry runs', async () => {
    const { app, stand } = await start();
    stand.failNext = true;
    expect((await sync(app, 'key-6')).status).toBe(500);
    const retry = await sync(app, 'key-6');
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(stand.runs).toBe(2);
  });
});

describe('answers holding a secret', () => {
  it('never stores a login answer (it holds the API key): a retried login logs in again', async () => {
    const { app } = await start();
    const ana = await createUser(app);
    const login = () =>
      fetch(`${app.baseUrl}/api/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'login-1' },
        body: JSON.stringify({ username: ana.user.username, password: ana.password }),
      });
    const first = await login();
    const again = await login();
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    const [firstKey, secondKey] = [(await first.json()).data.token, (await again.json()).data.token];
    expect(secondKey).not.toBe(firstKey);
    const stored = await app.sequelize.query("SELECT * FROM idempotency_keys WHERE path = '/api/auth/login'", { type: QueryTypes.SELECT });
    expect(stored).toEqual([]);
  });
});

describe('answers at rest', () => {
  /** The contract's example candidate with a fresh CPF: its answer holds the CPF and the voter id. */
  function candidate(): Record<string, unknown> {
    const example = structuredClone((tryResolvePointer(loadSpec(), '#/components/examples/NewCandidateEntity') as { value: Record<string, unknown> }).value);
    const born = new Date(`${String(example.data_nascimento)}T00:00:00Z`);
    const age = Math.floor((Date.now() - born.getTime()) / (365.2425 * 24 * 3600_000));
    return { ...example, idade: age, cpf: formatCpf(generateCpf()) };
  }

  async function addWithKey(app: TestApp, key: string, payload: Record<string, unknown>) {
    return fetch(`${app.baseUrl}/api/entidade/add/?tp=candidato`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: callers.get(app.database.url)!.ana, 'Idempotency-Key': key },
      body: JSON.stringify(payload),
    });
  }

  async function storedAnswers(app: TestApp): Promise<string> {
    const rows = await app.sequelize.query<{ headers: string; body: string }>("SELECT headers, body FROM idempotency_keys WHERE path = '/api/entidade/add/'", { type: QueryTypes.SELECT });
    expect(rows).toHaveLength(1);
    return `${rows[0]!.headers}\n${rows[0]!.body}`;
  }

  it('seals a stored answer with SECRETS_KEY: no CPF or voter id in the table, and the replay is byte for byte', async () => {
    const { app } = await start({ withMunicipalities: true });
    const payload = candidate();
    const first = await addWithKey(app, 'entity-1', payload);
    const firstBody = await first.text();
    expect(first.status, firstBody).toBe(201);
    expect(firstBody).toContain(String(payload.cpf));

    const stored = await storedAnswers(app);
    expect(stored).not.toContain(String(payload.cpf));
    expect(stored).not.toContain(String(payload.titulo_eleitor));
    expect(stored).not.toContain('"success"');
    expect(stored).toMatch(/^v1\./);

    const again = await addWithKey(app, 'entity-1', payload);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(await again.text()).toBe(firstBody);
  });

  it('keeps answers in clear without SECRETS_KEY (local development only: production requires the key)', async () => {
    const { app } = await start({ withMunicipalities: true, sms: { secretsKey: null } });
    const payload = candidate();
    expect((await addWithKey(app, 'entity-2', payload)).status).toBe(201);
    expect(await storedAnswers(app)).toContain(String(payload.cpf));
    expect((await addWithKey(app, 'entity-2', payload)).headers.get('idempotent-replayed')).toBe('true');
  });

  it('runs a retry again, without a 500, when the stored answer was sealed under another key', async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const before = await start({ database });
    expect((await sync(before.app, 'rotated')).status).toBe(201);
    const after = await start({ database, sms: { secretsKey: Buffer.alloc(32, 9).toString('base64') } });
    const retried = await sync(after.app, 'rotated');
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(after.stand.runs).toBe(1);
  });
});

describe('expiry', () => {
  it('forgets a key after its time to live, and purges it', async () => {
    const { app, stand } = await start({ idempotency: { ttlMs: 200 } });
    await sync(app, 'key-7');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const later = await sync(app, 'key-7');
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(stand.runs).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await app.idempotencyKeys.purgeExpired()).toBe(1);
    expect(await app.idempotencyKeys.purgeExpired()).toBe(0);
  });

  it('stops a claim left by a crashed request from blocking its key', async () => {
    const { app, stand } = await start({ idempotency: { abandonAfterMs: 200 } });
    // A claim whose request never answered, as a crash would leave it.
    const crashed = await app.idempotencyKeys.claim({ key: 'key-8', caller: 'key:x', method: 'POST', path: '/api/account/' }, 'f');
    expect(crashed.kind).toBe('claimed');
    const orphan = await app.idempotencyKeys.claim({ key: 'key-8', caller: 'key:x', method: 'POST', path: '/api/account/' }, 'f');
    expect(orphan.kind).toBe('in_flight');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = await app.idempotencyKeys.claim({ key: 'key-8', caller: 'key:x', method: 'POST', path: '/api/account/' }, 'f');
    expect(after.kind).toBe('claimed');
    expect(stand.runs).toBe(0);
  });
});

describe('races', () => {
  async function race(targets: TestApp[], stand: StandIn[]): Promise<number[]> {
    const attempts = Array.from({ length: 12 }, (_, i) => sync(targets[i % targets.length]!, 'racing-key'));
    const statuses = (await Promise.all(attempts)).map((response) => response.status);
    expect(stand.reduce((total, s) => total + s.runs, 0)).toBe(1);
    return statuses;
  }

  it('runs the operation once when requests with one key race on one instance', async () => {
    const { app, stand } = await start();
    stand.delayMs = 150;
    const statuses = await race([app], [stand]);
    expect(statuses.filter((status) => status === 201).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
  });

  it('runs the operation once when they race on two instances sharing a database', async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const one = await start({ database });
    const two = await start({ database });
    one.stand.delayMs = 150;
    two.stand.delayMs = 150;
    const statuses = await race([one.app, two.app], [one.stand, two.stand]);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
  });
});
