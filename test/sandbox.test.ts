/**
 * The sandbox (`npm run sandbox`, src/sandbox/): the real server on a temporary SQLite database seeded
 * with fixtures/, its writes real, its reset back to the seeded state (timed by `npm run bench:sandbox`),
 * and the provider simulators beside it so that SMS campaigns are delivered and answered, the elections-panel sync
 * completes and an OAuth link is confirmed, with no account anywhere; what a browser front end needs (the
 * local dev servers' origins allowed, the headers it reads exposed, demo keys that survive a restart with
 * SANDBOX_DEMO_KEYS=fixed). The command itself runs as a process at the end, reset by the CLI.
 *
 * The sandbox is SQLite by design (a temporary file), so this file runs the same on both CI passes.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoKeysOf, fixedDemoKey, SANDBOX_ELECTIONS_TOKEN, SandboxSettingError, startSandbox, type DemoUser, type Sandbox } from '../src/sandbox/sandbox.js';
import { bannerOf } from '../src/sandbox/banner.js';
import { SHARED_MUNICIPIOS, startTestApp } from './helpers/app.js';
import { createAdmin } from './helpers/accounts.js';
import { expectError, request } from './helpers/http.js';
import { freePort, waitFor } from './helpers/process.js';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The sandboxes' temporary folders: each is deleted when its sandbox stops. */
const sandboxFolders = () => readdirSync(tmpdir()).filter((name) => name.startsWith('palanque-sandbox-'));
const fixtureUsers = JSON.parse(readFileSync(new URL('../fixtures/users.json', import.meta.url), 'utf8')) as Array<{ username: string; is_admin: boolean }>;

let sandbox: Sandbox;
const as = (user: DemoUser) => ({ Authorization: `Token ${user.key}` });
const demo = (username: string) => sandbox.users.find((user) => user.username === username)!;

beforeAll(async () => {
  sandbox = await startSandbox({
    logger: pino({ level: 'silent' }),
    environment: { ...process.env, PORT: String(await freePort()), MUNICIPIOS_SOURCE: SHARED_MUNICIPIOS, REDIS_URL: '', CORS_ORIGINS: undefined, SANDBOX_DEMO_KEYS: undefined },
  });
});

afterAll(async () => {
  await sandbox?.stop();
});

describe('the seeded sandbox', () => {
  it('has the demo users of fixtures/, each with the password and the key it printed', async () => {
    expect(sandbox.users.map((user) => user.username).sort()).toEqual(fixtureUsers.map((user) => user.username).sort());
    for (const user of sandbox.users) {
      expect(user.isAdmin).toBe(fixtureUsers.find((fixture) => fixture.username === user.username)!.is_admin);
      const login = await request(sandbox.url, 'POST', '/api/auth/login', {}, { username: user.username, password: user.password });
      expect(login.status, login.text).toBe(200);
      const root = await request(sandbox.url, 'GET', '/', as(user));
      expect(root.body.data.user.username).toBe(user.username);
    }
  });

  it('tells the story of the spec examples: Maria da Silva Santos is entity 12 of Carlos', async () => {
    const entity = await request(sandbox.url, 'GET', '/api/entidade/data/?id=12', as(demo('carlos.pereira')));
    expect(entity.status, entity.text).toBe(200);
    expect(entity.body.data.nome).toBe('Maria da Silva Santos');
  });

  it("has the electoral court's demo candidacies: the mayoral ones of São Paulo in 2024", async () => {
    const found = await request(sandbox.url, 'GET', '/api/elections/candidacies/?cd_eleicao=619&cd_cargo=11&codigo_ibge=3550308', as(demo('joana.lima')));
    expect(found.status, found.text).toBe(200);
    expect(found.body.data.results.map((result: { id: number; nm_urna_candidato: string }) => [result.id, result.nm_urna_candidato])).toEqual([[502, 'JOÃO FERREIRA'], [501, 'MARIA SANTOS']]);
  });
});

describe('for a browser front end', () => {
  const EXPOSED = ['X-Served-By', 'Idempotent-Replayed', 'RateLimit', 'RateLimit-Policy', 'ETag', 'X-Request-Id'];
  const exposedTo = async (url: string, origin: string) => {
    const response = await fetch(`${url}/api/research/get_user_research_bookmarks/`, { headers: { Origin: origin, ...as(demo('carlos.pereira')) } });
    return { allowed: response.headers.get('access-control-allow-origin'), exposed: (response.headers.get('access-control-expose-headers') ?? '').split(/\s*,\s*/) };
  };

  it('allows the usual local dev servers by default, and lets their code read the headers a front end uses', async () => {
    for (const origin of ['http://localhost:5173', 'http://localhost:3000', 'http://127.0.0.1:5173', 'http://127.0.0.1:3000']) {
      const { allowed, exposed } = await exposedTo(sandbox.url, origin);
      expect(allowed, origin).toBe(origin);
      expect(exposed).toEqual(expect.arrayContaining(EXPOSED));
      const preflight = await fetch(`${sandbox.url}/api/research/add_research_bookmark/`, {
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization, content-type, idempotency-key' },
      });
      expect(preflight.headers.get('access-control-allow-origin'), origin).toBe(origin);
    }
    expect((await exposedTo(sandbox.url, 'http://localhost:8080')).allowed).toBeNull();
  });

  it('keeps the demo keys across restarts with SANDBOX_DEMO_KEYS=fixed, and takes CORS_ORIGINS over its default origins', { timeout: 120_000 }, async () => {
    const environment = async () => ({
      ...process.env,
      PORT: String(await freePort()),
      MUNICIPIOS_SOURCE: SHARED_MUNICIPIOS,
      REDIS_URL: '',
      SANDBOX_PASSWORD: 'senha-das-chaves-fixas',
      SANDBOX_DEMO_KEYS: 'fixed',
      CORS_ORIGINS: 'https://app.exemplo.com.br',
    });
    const keysOf = (started: Sandbox) => Object.fromEntries(started.users.map((user) => [user.username, user.key]));
    const first = await startSandbox({ logger: pino({ level: 'silent' }), simulators: false, environment: await environment() });
    const firstKeys = keysOf(first);
    await first.stop();
    const second = await startSandbox({ logger: pino({ level: 'silent' }), simulators: false, environment: await environment() });
    try {
      expect(second.demoKeys).toBe('fixed');
      expect(keysOf(second)).toEqual(firstKeys);
      for (const user of second.users) {
        expect(user.key).toMatch(/^plq_[A-Za-z0-9_-]{43}$/);
        expect(user.key).toBe(fixedDemoKey(user.username, 'senha-das-chaves-fixas'));
        expect((await request(second.url, 'GET', '/', as(user))).body.data.user.username).toBe(user.username);
      }
      // Fresh keys (the default) differ from the fixed ones and from one start to the next.
      expect(demo('carlos.pereira').key).not.toBe(firstKeys['carlos.pereira']);

      expect((await exposedTo(second.url, 'https://app.exemplo.com.br')).allowed).toBe('https://app.exemplo.com.br');
      expect((await exposedTo(second.url, 'http://localhost:5173')).allowed).toBeNull();
    } finally {
      await second.stop();
    }
  });

  it('refuses a SANDBOX_DEMO_KEYS it does not know, naming it', async () => {
    expect(() => demoKeysOf('fixa')).toThrow(SandboxSettingError);
    expect(() => demoKeysOf('fixa')).toThrow('SANDBOX_DEMO_KEYS must be "fixed"');
    expect(demoKeysOf(undefined)).toBe('fresh');
    expect(demoKeysOf('fixed')).toBe('fixed');
  });
});

describe('resetSandbox', () => {
  it('undoes every write, keeping the demo keys and giving the same ids again', async () => {
    const carlos = demo('carlos.pereira');
    const bookmarks = async () => (await request(sandbox.url, 'GET', '/api/research/get_user_research_bookmarks/', as(carlos))).body.data.map((bookmark: { id: number }) => bookmark.id);
    const seeded = await bookmarks();
    const added = await request(sandbox.url, 'POST', '/api/research/add_research_bookmark/', as(carlos), { title: 'Debate na TV', url: 'https://www.exemplo.com.br/debate' });
    expect(added.status, added.text).toBe(201);
    expect(await bookmarks()).toContain(added.body.data.id);
    const login = await request(sandbox.url, 'POST', '/api/auth/login', {}, { username: carlos.username, password: carlos.password });
    const newKey = { Authorization: `Token ${login.body.data.token}` };
    expect((await request(sandbox.url, 'GET', '/api/controle/system_is_online/', newKey)).status).toBe(200);

    const reset = await request(sandbox.url, 'POST', '/api/testes/reset_sandbox/', as(demo('ana.souza')));
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body.data).toEqual({ reset_at: expect.any(String), duration_ms: expect.any(Number), rows: expect.any(Number) });
    // How long it takes is measured by `npm run bench:sandbox`, not here (a loaded test machine is no clock).
    expect(Number.isInteger(reset.body.data.duration_ms)).toBe(true);
    expect(reset.body.data.rows).toBeGreaterThan(5570);

    expect(await bookmarks()).toEqual(seeded);
    expectError(await request(sandbox.url, 'GET', '/api/controle/system_is_online/', newKey), 401, 'unauthorized');
    const again = await request(sandbox.url, 'POST', '/api/research/add_research_bookmark/', as(carlos), { title: 'Debate na TV', url: 'https://www.exemplo.com.br/debate' });
    expect(again.body.data.id).toBe(added.body.data.id);
    await sandbox.reset();
  });

  it('reloads the municipality list, so one created before the reset is gone from it too', async () => {
    const admin = as(demo('ana.souza'));
    const created = await request(sandbox.url, 'POST', '/api/municipios/', admin, {
      codigo_ibge: 3599999,
      nome: 'Município de Teste',
      latitude: -23.5,
      longitude: -46.6,
      capital: false,
      codigo_uf: 35,
    });
    expect(created.status, created.text).toBe(201);
    expect((await request(sandbox.url, 'GET', '/api/municipios/')).body.count).toBe(5571);
    expect((await request(sandbox.url, 'POST', '/api/testes/reset_sandbox/', admin)).status).toBe(200);
    expect((await request(sandbox.url, 'GET', '/api/municipios/')).body.count).toBe(5570);
  });

  it('is for admins only: 403 forbidden for a team owner, 401 without a key, and nothing is reset', async () => {
    const carlos = demo('carlos.pereira');
    const added = await request(sandbox.url, 'POST', '/api/research/add_research_bookmark/', as(carlos), { title: 'Fica', url: 'https://www.exemplo.com.br/fica' });
    expectError(await request(sandbox.url, 'POST', '/api/testes/reset_sandbox/', as(carlos)), 403, 'forbidden');
    expectError(await request(sandbox.url, 'POST', '/api/testes/reset_sandbox/'), 401, 'unauthorized');
    const list = await request(sandbox.url, 'GET', '/api/research/get_user_research_bookmarks/', as(carlos));
    expect(list.body.data.map((bookmark: { id: number }) => bookmark.id)).toContain(added.body.data.id);
    await sandbox.reset();
  });
});

describe('the simulated providers', () => {
  it("takes the banner's reply on a fresh sandbox: a recipient of the demo campaign answers SAIR before anything was sent (issue 46)", async () => {
    // The banner prints this line (src/sandbox/banner.ts); it answered 404 until a campaign reached the number.
    const banner = bannerOf(sandbox);
    // The price it names is the simulator's (it said USD 0.0075 while the simulator billed BRL 0.08).
    expect(banner).toContain('(priced BRL 0.08 a segment)');
    const line = banner.split('\n').find((text) => text.includes('/sandbox/replies'))!;
    const [, body, address] = /curl -d '(.+)' (\S+)$/.exec(line.trim())!;
    expect(sandbox.simulators!.sms.messages.filter((message) => message.to === JSON.parse(body!).from)).toEqual([]);
    const reply = await fetch(address!, { method: 'POST', body });
    expect(reply.status, await reply.clone().text()).toBe(200);
    expect(await reply.json()).toMatchObject({ data: { from: JSON.parse(body!).from, opted_out: true } });
    const [optOut] = await sandbox.server.sequelize.query<{ n: number }>('SELECT count(*) AS n FROM sms_opt_outs WHERE phone = :phone', { replacements: { phone: JSON.parse(body!).from }, type: QueryTypes.SELECT });
    expect(Number(optOut!.n)).toBeGreaterThan(0);
    await sandbox.reset();
  });

  it('sends an SMS campaign through the provider, takes its signed receipts to delivered, and opts out a recipient who answers SAIR', async () => {
    const carlos = as(demo('carlos.pereira'));
    const campaign = (recipients: string) =>
      request(sandbox.url, 'POST', '/api/sms/list_credentials/', carlos, { titulo: 'Caminhada', credencial: 3, mensagem: { mensagem: 'Caminhada amanhã às 9h.', recipient_list_str: recipients } });
    // The demo entity 12 was created after migration 0033, so it is in enforce, and its 2024 election is over:
    // the demo platform admin relaxes it to warn, as a team would ask her to for a test send.
    const relaxed = await request(sandbox.url, 'PUT', '/api/sms/compliance/?entity_id=12', as(demo('ana.souza')), { mode: 'warn' });
    expect(relaxed.status, relaxed.text).toBe(200);
    const first = await campaign('+5511987650000');
    expect(first.status, first.text).toBe(201);
    const statuses = () =>
      sandbox.server.sequelize.query<{ status: string }>('SELECT status FROM sms_messages WHERE campaign_id = :id', { replacements: { id: first.body.data.id }, type: QueryTypes.SELECT });
    await waitFor(async () => ((await statuses()).every((message) => message.status === 'delivered') ? true : undefined), { timeoutMs: 15_000, what: 'the delivered receipt' });
    expect(sandbox.simulators!.sms.messages.map((message) => message.to)).toContain('+5511987650000');

    const reply = await fetch(`${sandbox.simulators!.sms.url}/sandbox/replies`, { method: 'POST', body: JSON.stringify({ from: '+5511987650000', body: 'SAIR' }) });
    expect(reply.status).toBe(200);
    expect(await reply.json()).toMatchObject({ data: { from: '+5511987650000', opted_out: true } });
    const second = await campaign('+5511987650000, +5511987650001');
    expect(second.body.data).toMatchObject({ accepted: 1, opted_out_skipped: 1 });

    // A number nothing was sent to answers the demo credential's sender (knowSandboxAccount).
    const unknown = await fetch(`${sandbox.simulators!.sms.url}/sandbox/replies`, { method: 'POST', body: JSON.stringify({ from: '+5511900000000', body: 'Oi' }) });
    expect(unknown.status).toBe(200);
    expect(await unknown.json()).toMatchObject({ data: { from: '+5511900000000', opted_out: false } });
    await sandbox.reset();
  });

  it("lets a person write to a connected Page through the messenger simulator, and delivers the team's answer", async () => {
    const [credential] = await sandbox.server.sequelize.query<{ entity_id: number }>('SELECT entity_id FROM sms_credentials WHERE id = 3', { type: QueryTypes.SELECT });
    const entityId = credential!.entity_id;
    const ana = as(demo('ana.souza'));
    const pageId = '104857600000042';
    const connected = await request(sandbox.url, 'POST', '/api/chat/messenger/pages/', ana, { entity_id: entityId, page_id: pageId, name: 'Página demo', access_token: 'sandbox-page-token' });
    expect(connected.status, connected.text).toBe(201);
    const written = await fetch(`${sandbox.simulators!.messenger.url}/sandbox/messages`, { method: 'POST', body: JSON.stringify({ page_id: pageId, sender_id: '6543210987654321', text: 'Oi! Quando é o debate?' }) });
    expect(written.status, await written.clone().text()).toBe(201);
    const listed = await request(sandbox.url, 'GET', `/api/chat/conversations/?entity_id=${entityId}`, ana);
    const conversation = listed.body.data.results.find((item: { participant: string }) => item.participant === '6543210987654321');
    expect(conversation).toMatchObject({ channel: 'messenger', page_id: pageId, last_message: { text: 'Oi! Quando é o debate?' } });
    const answered = await request(sandbox.url, 'POST', `/api/chat/conversations/${conversation.id}/messages/`, ana, { text: 'Na quinta, às 20h.' });
    expect(answered.status, answered.text).toBe(201);
    await waitFor(
      async () => {
        const thread = await request(sandbox.url, 'GET', `/api/chat/conversations/${conversation.id}/messages/`, ana);
        return thread.body.data.results.at(-1).status === 'delivered' ? true : undefined;
      },
      { timeoutMs: 15_000, what: 'the answer delivered' },
    );
    expect(sandbox.simulators!.messenger.sent.map((message) => message.text)).toContain('Na quinta, às 20h.');
    await sandbox.reset();
  });

  it('syncs the candidates to the simulated elections panel with the printed token', async () => {
    const sync = await request(sandbox.url, 'POST', '/api/account/', as(demo('carlos.pereira')), { sync_sm: { elections_token: SANDBOX_ELECTIONS_TOKEN } });
    expect(sync.status, sync.text).toBe(201);
    const outcome = await waitFor(
      async () => {
        const state = await request(sandbox.url, 'GET', `/api/elections/syncs/${sync.body.data.id}/`, as(demo('carlos.pereira')));
        return ['completed', 'failed'].includes(state.body.data.state) ? state.body.data : undefined;
      },
      { timeoutMs: 15_000, what: 'the elections-panel sync' },
    );
    expect(outcome.state).toBe('completed');
    expect(sandbox.simulators!.electionsPanel.batchesOf(SANDBOX_ELECTIONS_TOKEN)).toHaveLength(1);
    await sandbox.reset();
  });

  it('links a demo searchnet account: the simulator consents at once, the callback answers a pending link, the user confirms it', async () => {
    const carlos = as(demo('carlos.pereira'));
    const started = await request(sandbox.url, 'POST', '/api/usuario/start_social_login/', carlos, { provider: 'searchnet' });
    expect(started.status, started.text).toBe(201);
    const consent = await fetch(started.body.data.authorization_url, { redirect: 'manual' });
    expect(consent.status).toBe(302);
    const back = new URL(consent.headers.get('location')!);
    const pending = await request(back.origin, 'GET', back.pathname + back.search);
    expect(pending.status, pending.text).toBe(200);
    expect(pending.body.data).toMatchObject({ display_name: 'Conta de demonstração (searchnet)', confirm_url: `${sandbox.url}/api/usuario/confirm_social_login/` });
    const logins = async () => (await request(sandbox.url, 'GET', '/api/usuario/get_user_social_logins/', carlos)).body.data;
    expect(await logins()).toEqual([]);

    const confirmed = await request(sandbox.url, 'POST', '/api/usuario/confirm_social_login/', carlos, { pending_link_id: pending.body.data.pending_link_id });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect((await logins()).map((login: { external_id: string }) => login.external_id)).toEqual(['sandbox-searchnet-account']);
    await sandbox.reset();
  });
});

it('a server that is not a sandbox refuses resetSandbox with 403 not_a_sandbox and keeps its data', async () => {
  const app = await startTestApp();
  try {
    const admin = await createAdmin(app);
    const users = await app.accounts.users.count();
    expectError(await request(app.baseUrl, 'POST', '/api/testes/reset_sandbox/', admin.headers), 403, 'not_a_sandbox');
    expect(await app.accounts.users.count()).toBe(users);
  } finally {
    await app.close();
  }
});

describe('npm run sandbox', () => {
  it('prints the demo users, serves them, and is reset by `palanque sandbox reset`; Ctrl-C ends it', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const before = sandboxFolders();
    const child = spawn('npm', ['run', '--silent', 'sandbox', '--', '--no-simulators'], {
      cwd: root,
      env: { ...process.env, PORT: String(port), MUNICIPIOS_SOURCE: SHARED_MUNICIPIOS, SANDBOX_PASSWORD: 'senha-do-sandbox-123', REDIS_URL: '', CORS_ORIGINS: undefined, SANDBOX_DEMO_KEYS: undefined },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await waitFor(() => (output.includes('Ctrl-C stops the sandbox') ? true : undefined), { timeoutMs: 90_000, what: 'the sandbox banner', output: () => output });
      expect(output).toContain(`Palanque sandbox on http://127.0.0.1:${port}`);
      expect(output).toContain('Browser front ends on http://localhost:5173, http://localhost:3000, http://127.0.0.1:5173, http://127.0.0.1:3000 may call it');
      expect(output).toContain('SANDBOX_DEMO_KEYS=fixed keeps them the same across restarts');
      const line = output.split('\n').find((text) => text.trim().startsWith('ana.souza'))!;
      const [, password, key] = line.trim().split(/\s+/);
      expect(password).toBe('senha-do-sandbox-123');
      const baseUrl = `http://127.0.0.1:${port}`;
      const login = await request(baseUrl, 'POST', '/api/auth/login', {}, { username: 'ana.souza', password });
      expect(login.status, login.text).toBe(200);

      const cli = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const run = spawn(process.execPath, ['--import', 'tsx', 'cli/palanque.ts', 'sandbox', 'reset', '--json'], {
          cwd: root,
          env: { ...process.env, PALANQUE_BASE_URL: baseUrl, PALANQUE_TOKEN: key, PALANQUE_CONFIG: '/nonexistent/palanque.json' },
        });
        let stdout = '';
        let stderr = '';
        run.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        run.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        run.once('error', reject);
        run.once('close', (code) => resolve({ code, stdout, stderr }));
      });
      expect(cli.code, cli.stderr).toBe(0);
      expect(JSON.parse(cli.stdout)).toMatchObject({ rows: expect.any(Number) });
      // The login's key was issued after the start: the reset forgot it.
      expectError(await request(baseUrl, 'GET', '/api/controle/system_is_online/', { Authorization: `Token ${login.body.data.token}` }), 401, 'unauthorized');
      expect((await request(baseUrl, 'GET', '/api/controle/system_is_online/', { Authorization: `Token ${key}` })).status).toBe(200);
    } finally {
      process.kill(-child.pid!, 'SIGINT');
      await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
    }
    // Its temporary database goes with it.
    await waitFor(() => (sandboxFolders().every((folder) => before.includes(folder)) ? true : undefined), { timeoutMs: 10_000, what: 'the sandbox folder to be deleted' });
  });
});
