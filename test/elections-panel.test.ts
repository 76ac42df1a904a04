/**
 * The elections-panel sync end to end over HTTP, with a real job queue and the panel simulator on
 * loopback (src/simulators/elections-panel.ts): only the caller's candidates reach the panel, as
 * public cards without documents or contacts, with the caller's token as Bearer and the sync id as
 * Idempotency-Key; the token is sealed (never in clear) while the sync is under way and erased when it
 * ends; asking again while a sync is under way gives that sync; a failure that may pass is retried
 * (with the same key, so a batch the panel took is not imported twice) and a refusal is not; syncs
 * are readable by their owner and admins only; and a deployment without ELECTIONS_PANEL_URL or
 * SECRETS_KEY answers 503. Runs on SQLite, or on PostgreSQL (pg-boss) with TEST_DATABASE_URL.
 */
import { formatCpf, generateCpf } from '@brazilian-utils/brazilian-utils';
import { createDecipheriv, randomBytes } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { appsClosedAfterEach, startTestApp, TEST_SECRETS_KEY, type TestApp } from './helpers/app.js';
import { expectError, request, type Result } from './helpers/http.js';
import { waitFor } from './helpers/process.js';
import { BATCHES_PATH, ElectionsPanelSimulator, type PanelCard } from '../src/simulators/elections-panel.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const SYNC_PATH = '/api/account/';
const syncPath = (id: string) => `/api/elections/syncs/${id}/`;
const QUEUE_NAME = 'elections-panel-sync';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CARD_FIELDS = ['palanque_id', 'name', 'ballot_name', 'ballot_number', 'party', 'office', 'state', 'municipality', 'reelection', 'profiles'];

const panel = new ElectionsPanelSimulator();
const startApp = appsClosedAfterEach();
let app: TestApp;
let admin: TestUser;

const newToken = () => `pnl_live_${randomBytes(12).toString('hex')}`;
const sync = (caller: TestUser, token: string, target: TestApp = app): Promise<Result> =>
  request(target.baseUrl, 'POST', SYNC_PATH, caller.headers, { sync_sm: { elections_token: token } });
const readSync = (caller: TestUser | undefined, id: string): Promise<Result> => request(app.baseUrl, 'GET', syncPath(id), caller?.headers ?? {});

interface SyncRow {
  id: string;
  user_id: number;
  state: string;
  attempts: number;
  token_sealed: string | null;
  entities_sent: number | null;
  panel_reference: string | null;
  error: string | null;
}

async function syncRows(where = '1 = 1', replacements: Record<string, unknown> = {}, target: TestApp = app): Promise<SyncRow[]> {
  return target.sequelize.query<SyncRow>(`SELECT * FROM elections_panel_syncs WHERE ${where} ORDER BY created_at`, { type: QueryTypes.SELECT, replacements });
}

async function rowOf(id: string): Promise<SyncRow> {
  const [row] = await syncRows('id = :id', { id });
  if (!row) throw new Error(`no row for sync ${id}`);
  return row;
}

/** Opens a value sealed with TEST_SECRETS_KEY (`v1.<iv>.<tag>.<ciphertext>`, base64url, AES-256-GCM), written here from the format's description. */
function openSealed(sealed: string): string {
  const [version, iv, tag, ciphertext] = sealed.split('.');
  expect(version).toBe('v1');
  const decipher = createDecipheriv('aes-256-gcm', Buffer.from(TEST_SECRETS_KEY, 'base64'), Buffer.from(iv!, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag!, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext!, 'base64url')), decipher.final()]).toString('utf8');
}

/** What the job queue holds for a sync: its state and how many tries it made. */
async function queueJobOf(syncId: string): Promise<{ state: string; tries: number } | undefined> {
  if (app.database.dialect === 'postgres') {
    const [job] = await app.sequelize.query<{ state: string; retry_count: number }>(
      `SELECT state, retry_count FROM pgboss.job WHERE name = :name AND data->>'sync_id' = :id`,
      { type: QueryTypes.SELECT, replacements: { name: QUEUE_NAME, id: syncId } },
    );
    return job && { state: job.state, tries: Number(job.retry_count) + 1 };
  }
  const [job] = await app.sequelize.query<{ state: string; attempts: number }>(`SELECT state, attempts FROM jobs WHERE name = :name AND data LIKE :pattern`, {
    type: QueryTypes.SELECT,
    replacements: { name: QUEUE_NAME, pattern: `%${syncId}%` },
  });
  return job && { state: job.state, tries: Number(job.attempts) };
}

/** Everything the queue stores about syncs, as text. */
async function queuePayloads(): Promise<string> {
  const sql = app.database.dialect === 'postgres' ? `SELECT data::text AS data, output::text AS output FROM pgboss.job WHERE name = :name` : `SELECT data, output FROM jobs WHERE name = :name`;
  return JSON.stringify(await app.sequelize.query(sql, { type: QueryTypes.SELECT, replacements: { name: QUEUE_NAME } }));
}

/** Polls the sync over HTTP until its state is one of `states`. */
async function syncIn(caller: TestUser, id: string, states: string[], timeoutMs = 10_000): Promise<Json> {
  return waitFor(async () => {
    const read = await readSync(caller, id);
    expect(read.status, read.text).toBe(200);
    return states.includes(read.body.data.state) ? read.body.data : undefined;
  }, { timeoutMs, what: `sync ${id} to be ${states.join(' or ')}`, intervalMs: 100 });
}

/** A user owning one plain candidate, for the failure tests. */
async function userWithCandidate(nome: string): Promise<{ user: TestUser; entityId: number }> {
  const user = await createUser(app);
  const entityId = await app.entities.store.create('candidato', user.user.id, { nome, nm_urna: nome, nr_urna: 15, partido: '15', position: 'vereador', cpf: formatCpf(generateCpf()) });
  return { user, entityId };
}

beforeAll(async () => {
  await panel.start();
  app = await startTestApp({ withJobs: true, electionsPanelUrl: panel.url });
  admin = await createAdmin(app);
});

afterEach(() => {
  panel.resume(); // a failed test must not leave the panel holding the next test's requests
});

afterAll(async () => {
  await app?.close();
  await panel.stop();
});

describe('the simulator', () => {
  it('refuses unknown tokens and malformed batches, and stores a batch once per Idempotency-Key', async () => {
    const token = newToken();
    panel.addToken(token);
    const send = (headers: Record<string, string>, body: unknown) =>
      fetch(panel.url + BATCHES_PATH, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const card: PanelCard = { palanque_id: 1, name: 'A', ballot_name: null, ballot_number: 10, party: '10', office: null, state: 'SP', municipality: null, reelection: null, profiles: [] };
    const key = `key-${randomBytes(4).toString('hex')}`;

    expect((await send({ Authorization: 'Bearer nope', 'Idempotency-Key': key }, { source: 'palanque', candidates: [card] })).status).toBe(401);
    expect((await send({ Authorization: `Bearer ${token}` }, { source: 'palanque', candidates: [card] })).status).toBe(400);
    const leaky = await send({ Authorization: `Bearer ${token}`, 'Idempotency-Key': key }, { source: 'palanque', candidates: [{ ...card, cpf: '529.982.247-25' }] });
    expect(leaky.status).toBe(422);
    expect(((await leaky.json()) as Json).message).toContain('cpf');
    expect((await send({ Authorization: `Bearer ${token}`, 'Idempotency-Key': key }, { source: 'other', candidates: [card] })).status).toBe(422);
    expect(panel.batchesOf(token)).toEqual([]);

    const first = await send({ Authorization: `Bearer ${token}`, 'Idempotency-Key': key }, { source: 'palanque', candidates: [card] });
    expect(first.status).toBe(201);
    const receipt = (await first.json()) as Json;
    expect(receipt).toEqual({ batch_id: expect.stringMatching(/^bat_/), received: 1 });
    const again = await send({ Authorization: `Bearer ${token}`, 'Idempotency-Key': key }, { source: 'palanque', candidates: [card] });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(receipt);
    expect(panel.batchesOf(token)).toHaveLength(1);

    panel.failNext({ status: 503, message: 'busy' });
    expect((await send({ Authorization: `Bearer ${token}`, 'Idempotency-Key': `${key}-2` }, { source: 'palanque', candidates: [] })).status).toBe(503);
    expect((await send({ Authorization: `Bearer ${token}`, 'Idempotency-Key': `${key}-2` }, { source: 'palanque', candidates: [] })).status).toBe(201);
    expect(panel.batchesOf(token)).toHaveLength(2);
  });
});

describe('a sync', () => {
  it('sends only the caller\'s candidates, as public cards, with the token sealed until the end', async () => {
    const owner = await createUser(app);
    const other = await createUser(app);
    const token = newToken();
    panel.addToken(token);

    const privateValues = {
      cpf: formatCpf(generateCpf()),
      titulo_eleitor: '102345670183',
      email: 'contato@mariasantos.com.br',
      list_emails: ['imprensa@mariasantos.com.br', 'agenda@mariasantos.com.br'],
      endBase: 'Av. Paulista, 1000',
      cepBase: '01310-100',
      data_nascimento: '1978-05-14',
    };
    const maria = await app.entities.store.create('candidato', owner.user.id, {
      nome: 'Maria da Silva Santos',
      nm_urna: 'Maria Santos',
      nr_urna: 13123,
      partido: '13',
      position: 'prefeito',
      tipoDisputa: 'municipal',
      estado_disputa: 'SP',
      municipio_disputa: '3550308',
      reeleicao: false,
      ...privateValues,
      referencia_social: {
        tipo: 'candidato',
        nm: 'Maria Santos',
        origem_name: 'cadastro',
        social_network: [
          { nm_rede: 'instagram', username: 'mariasantos', link: 'https://www.instagram.com/mariasantos', user: 'Maria Santos', id: '17841400000000001' },
          { nm_rede: 'youtube', link: 'https://www.youtube.com/@mariasantos' },
        ],
      },
    });
    // In the caller's team through a membership, not ownership.
    const joao = await app.entities.store.create('candidato', other.user.id, {
      nome: 'João Pereira',
      nm_urna: 'João do Povo',
      nr_urna: 45678,
      partido: '45',
      position: 'vereador',
      estado_disputa: 'RJ',
      municipio_disputa: '3304557',
      reeleicao: true,
      cpf: formatCpf(generateCpf()),
    });
    await app.entities.models.Member.create({ entity_id: joao, user_id: owner.user.id, role: 'viewer', added_at: new Date() });
    const rival = await app.entities.store.create('concorrente', owner.user.id, { nome: 'Carlos Rival', nm_urna: 'Carlão', nr_urna: 22, partido: '22', cpf: formatCpf(generateCpf()) });
    const party = await app.entities.store.create('partido', owner.user.id, { nome: 'Partido da Frente' });
    const elsewhere = await app.entities.store.create('candidato', other.user.id, { nome: 'Ana Outra', nm_urna: 'Ana', nr_urna: 13, partido: '13', cpf: formatCpf(generateCpf()) });

    panel.pause(); // the sync stays under way until the panel answers
    const queued = await sync(owner, token);
    expect(queued.status, queued.text).toBe(201);
    expect(queued.text).not.toContain(token);
    const job = queued.body.data;
    expect(job).toEqual({
      id: expect.stringMatching(UUID),
      kind: 'elections_panel_sync',
      state: 'queued',
      attempts: 0,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      error: null,
      result: null,
    });

    // Right after the 201: the token is sealed with SECRETS_KEY, nowhere in clear.
    const early = await rowOf(job.id);
    expect(early).toMatchObject({ user_id: owner.user.id, state: expect.stringMatching(/^(queued|running)$/) });
    expect(early.token_sealed).toEqual(expect.stringMatching(/^v1\./));
    expect(JSON.stringify(early)).not.toContain(token);
    expect(openSealed(early.token_sealed!)).toBe(token);
    expect(await queuePayloads()).not.toContain(token);

    // Asking again while the panel holds the batch gives the same sync, and queues nothing more.
    await waitFor(() => (panel.held === 1 ? true : undefined), { timeoutMs: 10_000, what: 'the sync to reach the panel' });
    const again = await sync(owner, token);
    expect(again.status, again.text).toBe(200);
    expect(again.body.data).toMatchObject({ id: job.id, state: 'running', attempts: 1, result: null });
    expect(await syncRows('user_id = :user', { user: owner.user.id })).toHaveLength(1);
    expect((await queuePayloads()).split(job.id).length - 1).toBe(1);

    panel.resume();
    const done = await syncIn(owner, job.id, ['completed', 'dead']);
    const [batch, ...more] = panel.batchesOf(token);
    expect(more).toEqual([]);
    expect(done).toMatchObject({ id: job.id, state: 'completed', attempts: 1, error: null, result: { entities_sent: 2, panel_reference: batch!.batchId } });

    // What reached the panel: the token as Bearer, the sync id as key, the two candidates' public cards.
    const [received, ...retries] = panel.requestsWith(token);
    expect(retries).toEqual([]);
    expect(received).toMatchObject({ method: 'POST', path: BATCHES_PATH, authorization: `Bearer ${token}`, idempotencyKey: job.id, status: 201 });
    expect(batch!.source).toBe('palanque');
    expect(batch!.candidates).toEqual([
      {
        palanque_id: maria,
        name: 'Maria da Silva Santos',
        ballot_name: 'Maria Santos',
        ballot_number: 13123,
        party: '13',
        office: 'prefeito',
        state: 'SP',
        municipality: '3550308',
        reelection: false,
        profiles: [
          { network: 'instagram', username: 'mariasantos', link: 'https://www.instagram.com/mariasantos' },
          { network: 'youtube', username: null, link: 'https://www.youtube.com/@mariasantos' },
        ],
      },
      { palanque_id: joao, name: 'João Pereira', ballot_name: 'João do Povo', ballot_number: 45678, party: '45', office: 'vereador', state: 'RJ', municipality: '3304557', reelection: true, profiles: [] },
    ]);
    for (const card of JSON.parse(received!.rawBody).candidates as Json[]) expect(Object.keys(card).sort()).toEqual([...CARD_FIELDS].sort());
    for (const value of [privateValues.cpf, privateValues.cpf.replace(/\D/g, ''), privateValues.titulo_eleitor, privateValues.email, ...privateValues.list_emails, privateValues.endBase, privateValues.cepBase, privateValues.data_nascimento]) {
      expect(received!.rawBody).not.toContain(value);
    }
    for (const field of ['cpf', 'titulo_eleitor', 'email', 'list_emails', 'endBase', 'cepBase', 'data_nascimento']) expect(received!.rawBody).not.toContain(`"${field}"`);
    for (const name of ['Carlos Rival', 'Partido da Frente', 'Ana Outra']) expect(received!.rawBody).not.toContain(name);
    expect(batch!.candidates.map((card) => card.palanque_id).filter((id) => [rival, party, elsewhere].includes(id))).toEqual([]);

    // The token is erased once the sync ends; it was never written in clear.
    const ended = await rowOf(job.id);
    expect(ended).toMatchObject({ state: 'completed', token_sealed: null, entities_sent: 2, panel_reference: batch!.batchId });
    expect(JSON.stringify(await syncRows())).not.toContain(token);
    expect(await queuePayloads()).not.toContain(token);
    expect(JSON.stringify(app.logs)).not.toContain(token);

    // Readable by its owner and by admins, by nobody else.
    const byAdmin = await readSync(admin, job.id);
    expect(byAdmin.status, byAdmin.text).toBe(200);
    expect(byAdmin.body.data).toEqual(done);
    expectError(await readSync(other, job.id), 404, 'not_found');

    // A finished sync does not stand in for the next one.
    const next = await sync(owner, token);
    expect(next.status, next.text).toBe(201);
    expect(next.body.data.id).not.toBe(job.id);
    expect(await syncIn(owner, next.body.data.id, ['completed', 'dead'])).toMatchObject({ state: 'completed', result: { entities_sent: 2 } });
    expect(panel.batchesOf(token)).toHaveLength(2);
    expect(panel.requestsWith(token).map((request) => request.idempotencyKey)).toEqual([job.id, next.body.data.id]);
  });

  it('retries a panel failure that may pass, with the same Idempotency-Key, until it completes', { timeout: 45_000 }, async () => {
    const { user, entityId } = await userWithCandidate('Beatriz Lima');
    const token = newToken();
    panel.addToken(token);
    // The panel takes the batch but answers 503 (the answer is lost): the retry must not import it twice.
    panel.failNext({ status: 503, message: 'panel busy, try later', afterStoring: true });

    const queued = await sync(user, token);
    expect(queued.status, queued.text).toBe(201);
    const id = queued.body.data.id;

    const failed = await syncIn(user, id, ['failed', 'completed', 'dead']);
    expect(failed).toMatchObject({ state: 'failed', attempts: 1, result: null });
    expect(failed.error).toContain('503');
    expect(failed.error).toContain('panel busy, try later');
    // Kept sealed for the retry.
    expect(openSealed((await rowOf(id)).token_sealed!)).toBe(token);

    const waiting = await sync(user, token);
    expect(waiting.status, waiting.text).toBe(200);
    expect(waiting.body.data).toMatchObject({ id, state: 'failed' });
    expect(waiting.body.message).toContain('retry');

    const done = await syncIn(user, id, ['completed', 'dead'], 30_000);
    const batches = panel.batchesOf(token);
    expect(batches).toHaveLength(1);
    expect(batches[0]!.candidates.map((card) => card.palanque_id)).toEqual([entityId]);
    expect(done).toMatchObject({ state: 'completed', attempts: 2, error: null, result: { entities_sent: 1, panel_reference: batches[0]!.batchId } });
    expect(panel.requestsWith(token).map((request) => [request.status, request.idempotencyKey])).toEqual([
      [503, id],
      [200, id],
    ]);
    expect(await rowOf(id)).toMatchObject({ state: 'completed', attempts: 2, token_sealed: null });
  });

  it.each([
    { case: 'the token is refused (401)', register: false, failure: undefined, status: 401, mentions: ['refused the token', '401', 'unknown or revoked'] },
    { case: 'the batch is refused (422)', register: true, failure: { status: 422, message: 'office is required for every card' }, status: 422, mentions: ['422', 'office is required for every card'] },
  ])('ends at once without a retry when $case', async ({ register, failure, status, mentions }) => {
    const { user } = await userWithCandidate('Célia Rocha');
    const token = newToken();
    if (register) panel.addToken(token);
    if (failure) panel.failNext(failure);

    const queued = await sync(user, token);
    expect(queued.status, queued.text).toBe(201);
    const id = queued.body.data.id;

    const dead = await syncIn(user, id, ['dead', 'completed', 'failed']);
    expect(dead).toMatchObject({ state: 'dead', attempts: 1, result: null });
    for (const words of mentions) expect(dead.error).toContain(words);
    expect(await rowOf(id)).toMatchObject({ state: 'dead', attempts: 1, token_sealed: null });

    // The queue holds nothing more for it: its one try ended the job.
    const queueJob = await waitFor(async () => {
      const found = await queueJobOf(id);
      return found && found.state !== 'active' && found.state !== 'running' ? found : undefined;
    }, { timeoutMs: 5_000, what: 'the queue job to end' });
    expect(queueJob).toEqual({ state: 'completed', tries: 1 });
    expect(panel.requestsWith(token).map((request) => request.status)).toEqual([status]);
    expect(panel.batchesOf(token)).toEqual([]);

    // A dead sync does not stand in for the next request.
    const next = await sync(user, token);
    expect(next.status, next.text).toBe(201);
    expect(next.body.data.id).not.toBe(id);
    await syncIn(user, next.body.data.id, ['dead', 'completed']);
  });
});

describe('asking for a sync', () => {
  it('answers 422 for a missing, empty or oversized token and 401 without a key, queueing nothing', async () => {
    const user = await createUser(app);
    const requestsBefore = panel.requests.length;
    for (const body of [{ sync_sm: { elections_token: '' } }, { sync_sm: {} }, {}, { sync_sm: { elections_token: 'x'.repeat(513) } }]) {
      const result = await request(app.baseUrl, 'POST', SYNC_PATH, user.headers, body);
      expectError(result, 422, 'validation_failed');
      expect(JSON.stringify(result.body.error.details), result.text).toMatch(/sync_sm/);
    }
    expectError(await request(app.baseUrl, 'POST', SYNC_PATH, {}, { sync_sm: { elections_token: newToken() } }), 401, 'unauthorized');
    expect(await syncRows('user_id = :user', { user: user.user.id })).toEqual([]);
    expect(panel.requests.length).toBe(requestsBefore);
  });

  it('answers 503 naming what the deployment lacks: ELECTIONS_PANEL_URL, SECRETS_KEY or both', async () => {
    const cases = [
      { options: {}, missing: ['ELECTIONS_PANEL_URL'] },
      { options: { electionsPanelUrl: panel.url, sms: { secretsKey: null } }, missing: ['SECRETS_KEY'] },
      { options: { sms: { secretsKey: null } }, missing: ['ELECTIONS_PANEL_URL', 'SECRETS_KEY'] },
    ];
    const requestsBefore = panel.requests.length;
    await Promise.all(
      cases.map(async ({ options, missing }) => {
        const bare = await startApp(options);
        const user = await createUser(bare);
        const token = newToken();
        const result = await sync(user, token, bare);
        expectError(result, 503, 'service_unavailable');
        expect(result.body.error.details.map((detail: Json) => detail.message)).toEqual(missing.map((variable) => `needs ${variable}`));
        for (const variable of ['ELECTIONS_PANEL_URL', 'SECRETS_KEY']) {
          if (missing.includes(variable)) expect(result.body.error.message).toContain(variable);
          else expect(result.body.error.message).not.toContain(variable);
        }
        expect(result.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(result.text).not.toContain(token);
        expect(await syncRows('1 = 1', {}, bare)).toEqual([]);
      }),
    );
    expect(panel.requests.length).toBe(requestsBefore);
  });
});

describe('reading a sync', () => {
  // The operation's description says 422 `validation_failed` for a non-UUID id (and that 400 is not
  // returned), but the app answers every bad parameter 400 `bad_request` (src/http/validation.ts, and
  // e.g. getUser's description): this asserts what the app does; the mismatch is in the contract text.
  it('answers 404 for an unknown id, 400 for one that is not a UUID, and 401 without a key', async () => {
    const user = await createUser(app);
    expectError(await readSync(user, '7d4c1c8e-8a8e-4b7e-9a53-3f0e0c2b9d11'), 404, 'not_found');
    expectError(await readSync(admin, '7d4c1c8e-8a8e-4b7e-9a53-3f0e0c2b9d11'), 404, 'not_found');
    const notUuid = await readSync(user, 'not-a-uuid');
    expectError(notUuid, 400, 'bad_request');
    expect(notUuid.body.error.details).toEqual([expect.objectContaining({ location: 'path', field: 'sync_id', rule: 'format' })]);
    expectError(await readSync(undefined, '7d4c1c8e-8a8e-4b7e-9a53-3f0e0c2b9d11'), 401, 'unauthorized');
  });
});
