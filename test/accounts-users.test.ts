/**
 * The user-facing reads of accounts, through the real app and the contract validator (responses are
 * validated too): the admin's paginated user list (listUsers), a profile (getUser) that is 404 alike
 * for "not yours" and "does not exist", the chat contacts (listChatContacts) and the caller's linked
 * social accounts (listUserSocialLogins). No answer ever carries a password hash or a key.
 * Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UserRow } from '../src/accounts/models.js';
import { createAdmin, createUser, type TestUser } from './helpers/accounts.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectError, type Result } from './helpers/http.js';

async function get(app: TestApp, path: string, headers: Record<string, string> = {}): Promise<Result> {
  const response = await fetch(app.baseUrl + path, { headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
}

/** A GET with a body, which fetch() refuses to send. */
function getWithBody(app: TestApp, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(app.baseUrl + path, { method: 'GET', headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const PUBLIC_USER_FIELDS = ['contact_visible_to_team', 'date_joined', 'deleted_at', 'email', 'first_name', 'id', 'is_active', 'is_admin', 'last_login', 'last_name', 'phone', 'username'];
const SECRET_FIELD = /hash|token|password|secret|key/i;

/** Walks a JSON value and returns every property name in it. */
function allKeys(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) allKeys(item, into);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      into.push(key);
      allKeys(inner, into);
    }
  }
  return into;
}

/** What a user's profile must look like on the wire. */
function expectedProfile(user: UserRow) {
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    first_name: user.first_name,
    last_name: user.last_name,
    phone: user.phone,
    is_admin: Boolean(user.is_admin),
    is_active: Boolean(user.is_active),
    date_joined: new Date(user.date_joined).toISOString(),
    last_login: null,
    deleted_at: null,
    contact_visible_to_team: false,
  };
}

describe('GET /api/auth/account (listUsers)', () => {
  let app: TestApp;
  let admin: TestUser;
  let ids: number[];
  let hashes: string[];

  beforeAll(async () => {
    app = await startTestApp();
    admin = await createAdmin(app);
    for (let i = 0; i < 34; i += 1) await createUser(app);
    const rows = (await app.accounts.models.User.findAll({ raw: true })) as unknown as UserRow[];
    ids = rows.map((row) => row.id).sort((a, b) => a - b);
    hashes = rows.map((row) => row.password_hash);
  });

  afterAll(async () => {
    await app?.close();
  });

  it('pages 35 users 30 at a time, ordered by id, with absolute links', async () => {
    expect(ids).toHaveLength(35);
    const first = await get(app, '/api/auth/account', admin.headers);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ success: true, message: expect.any(String), request_id: first.headers.get('x-request-id') });
    expect(first.body.data).toMatchObject({ count: 35, total_pages: 2, links: { previous: null, next: `${app.baseUrl}/api/auth/account?page=2` } });
    expect(first.body.data.results).toHaveLength(30);
    expect(first.body.data.results.map((user: { id: number }) => user.id)).toEqual(ids.slice(0, 30));

    // The next link works as it is.
    const second = await get(app, new URL(first.body.data.links.next).pathname + new URL(first.body.data.links.next).search, admin.headers);
    expect(second.status, second.text).toBe(200);
    expect(second.body.data).toMatchObject({ count: 35, total_pages: 2, links: { next: null, previous: `${app.baseUrl}/api/auth/account?page=1` } });
    expect(second.body.data.results.map((user: { id: number }) => user.id)).toEqual(ids.slice(30));

    const explicit = await get(app, '/api/auth/account?page=1', admin.headers);
    expect(explicit.body.data).toEqual(first.body.data);
  });

  it('shows the public profile only: no hash, key or token field, and no hash value anywhere', async () => {
    for (const page of [1, 2]) {
      const result = await get(app, `/api/auth/account?page=${page}`, admin.headers);
      expect(result.status).toBe(200);
      for (const user of result.body.data.results) expect(Object.keys(user).sort()).toEqual(PUBLIC_USER_FIELDS);
      expect(allKeys(result.body).filter((key) => SECRET_FIELD.test(key))).toEqual([]);
      for (const hash of hashes) expect(result.text).not.toContain(hash);
      expect(result.text).not.toContain(admin.key);
    }
    const adminRow = (await get(app, '/api/auth/account', admin.headers)).body.data.results.find((user: { id: number }) => user.id === admin.user.id);
    expect(adminRow).toEqual(expectedProfile(admin.user));
  });

  it('answers 404 naming `page` for a page past the last', async () => {
    const result = await get(app, '/api/auth/account?page=3', admin.headers);
    expectError(result, 404, 'not_found');
    expect(result.body.error.details).toContainEqual(expect.objectContaining({ location: 'query', field: 'page' }));
  });

  it.each(['0', 'abc', '-1', '1.5'])('answers 400 for page=%s', async (page) => {
    const result = await get(app, `/api/auth/account?page=${page}`, admin.headers);
    expectError(result, 400, 'bad_request');
    expect(result.body.error.details).toContainEqual(expect.objectContaining({ location: 'query', field: 'page' }));
  });

  it('answers 403 to a non-admin and 401 without a valid key', async () => {
    const user = await createUser(app);
    expectError(await get(app, '/api/auth/account', user.headers), 403, 'forbidden');
    const anonymous = await get(app, '/api/auth/account');
    expectError(anonymous, 401, 'unauthorized');
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Token/);
    expectError(await get(app, '/api/auth/account', { Authorization: 'Token plq_not-a-real-key' }), 401, 'unauthorized');
  });
});

describe('GET /api/usuario/{user_id}/ (getUser)', () => {
  let app: TestApp;
  let admin: TestUser;
  let ana: TestUser;
  let carlos: TestUser;

  beforeAll(async () => {
    app = await startTestApp();
    admin = await createAdmin(app);
    ana = await createUser(app, { phone: '+5511987654321' });
    carlos = await createUser(app);
  });

  afterAll(async () => {
    await app?.close();
  });

  it('shows a user their own profile, and nothing secret', async () => {
    const result = await get(app, `/api/usuario/${ana.user.id}/`, ana.headers);
    expect(result.status, result.text).toBe(200);
    expect(result.body).toEqual({ success: true, data: expectedProfile(ana.user), message: expect.any(String), request_id: result.headers.get('x-request-id') });
    expect(result.body.data.phone).toBe('+5511987654321');
    expect(allKeys(result.body).filter((key) => SECRET_FIELD.test(key))).toEqual([]);
    expect(result.text).not.toContain(ana.user.password_hash);
  });

  it('shows an admin anyone', async () => {
    for (const someone of [ana, carlos, admin]) {
      const result = await get(app, `/api/usuario/${someone.user.id}/`, admin.headers);
      expect(result.status, result.text).toBe(200);
      expect(result.body.data).toEqual(expectedProfile(someone.user));
    }
  });

  it('answers a non-admin 404 for another user, byte for byte as for a user that does not exist', async () => {
    // Someone Carlos may not see; then the same id once the account is gone.
    const victim = await app.accounts.users.create({ username: 'vitima.teste', email: 'vitima@exemplo.com.br', password: 'uma-senha-qualquer-1' });
    const headers = { ...carlos.headers, 'X-Request-Id': 'probe-enumeration' };
    const hidden = await get(app, `/api/usuario/${victim.id}/`, headers);
    expectError(hidden, 404, 'not_found');
    expect(hidden.body.error.details).toEqual([expect.objectContaining({ location: 'path', field: 'user_id' })]);
    expect(hidden.text).not.toContain('vitima');

    await app.accounts.models.User.destroy({ where: { id: victim.id } });
    const missing = await get(app, `/api/usuario/${victim.id}/`, headers);
    expectError(missing, 404, 'not_found');
    expect(missing.text).toBe(hidden.text);
    expect(missing.headers.get('content-length')).toBe(hidden.headers.get('content-length'));

    // An id that never existed differs only by the id itself; an admin gets the same answer for it.
    const never = await get(app, '/api/usuario/2147483647/', headers);
    const normalise = (text: string, id: number) => text.replaceAll(String(id), '<id>');
    expect(normalise(never.text, 2147483647)).toBe(normalise(hidden.text, victim.id));
    const forAdmin = await get(app, '/api/usuario/2147483647/', { ...admin.headers, 'X-Request-Id': 'probe-enumeration' });
    expect(forAdmin.text).toBe(never.text);
  });

  // The validator's route match is remembered per method and path (src/http/validation.ts): a path asked
  // again must get its own parameters, and what the match refuses must stay refused.
  it('answers the same path alike each time, each path with its own user_id, and a method the path lacks 405 each time', async () => {
    for (const someone of [ana, carlos, ana, admin, carlos]) {
      const result = await get(app, `/api/usuario/${someone.user.id}/`, admin.headers);
      expect(result.status, result.text).toBe(200);
      expect(result.body.data.id).toBe(someone.user.id);
    }
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const invalid = await get(app, '/api/usuario/abc/', admin.headers);
      expectError(invalid, 400, 'bad_request');
      const wrongMethod = await fetch(`${app.baseUrl}/api/usuario/${ana.user.id}/`, { method: 'DELETE', headers: admin.headers });
      expect(wrongMethod.status).toBe(405);
    }
  });

  it.each(['abc', '0', '-1', '1.5', '2147483648'])('answers 400 for user_id %s', async (id) => {
    const result = await get(app, `/api/usuario/${id}/`, ana.headers);
    expectError(result, 400, 'bad_request');
    expect(result.body.error.details).toContainEqual(expect.objectContaining({ location: 'path', field: 'user_id' }));
  });

  it('accepts a text/plain body on the GET and ignores it', async () => {
    const plain = await get(app, `/api/usuario/${ana.user.id}/`, ana.headers);
    const withBody = await getWithBody(app, `/api/usuario/${ana.user.id}/`, { ...ana.headers, 'Content-Type': 'text/plain' }, 'perfil');
    expect(withBody.status, JSON.stringify(withBody.body)).toBe(200);
    expect(withBody.body.data).toEqual(plain.body.data);
    // The body changes nothing about who may be seen.
    const other = await getWithBody(app, `/api/usuario/${carlos.user.id}/`, { ...ana.headers, 'Content-Type': 'text/plain' }, String(carlos.user.id));
    expect(other.status).toBe(404);
  });

  it('answers 401 without a key', async () => {
    expectError(await get(app, `/api/usuario/${ana.user.id}/`), 401, 'unauthorized');
  });
});

describe('GET /api/account/ (listChatContacts)', () => {
  let app: TestApp;
  let caller: TestUser;
  const admins: Record<string, TestUser> = {};

  beforeAll(async () => {
    app = await startTestApp();
    // Created out of order; names chosen so that a code-point sort would differ from pt-BR order.
    admins.zeca = await createAdmin(app, { first_name: 'zeca', last_name: '' });
    admins.erica = await createAdmin(app, { first_name: 'Érica', last_name: 'Lima' });
    admins.fabio = await createAdmin(app, { username: 'fabio.reis', first_name: '', last_name: '' });
    admins.ana = await createAdmin(app, { first_name: 'Ana', last_name: 'Souza' });
    admins.inactive = await createAdmin(app, { first_name: 'Bruno', last_name: 'Inativo', is_active: false });
    caller = await createUser(app, { first_name: 'Carlos', last_name: 'Pereira' });
    await createUser(app, { first_name: 'Beatriz', last_name: 'Naoadmin' });
  });

  afterAll(async () => {
    await app?.close();
  });

  /** An admin as a contact: their e-mail is not shared until they turn contact_visible_to_team on. */
  function contact(user: TestUser, displayName: string) {
    return { user_id: user.user.id, username: user.user.username, display_name: displayName, email: null, is_admin: true, teams: [] };
  }

  it('lists the active platform admins to a non-admin, ordered by display name, with no teams', async () => {
    const result = await get(app, '/api/account/', caller.headers);
    expect(result.status, result.text).toBe(200);
    expect(result.body).toEqual({
      success: true,
      data: [contact(admins.ana!, 'Ana Souza'), contact(admins.erica!, 'Érica Lima'), contact(admins.fabio!, 'fabio.reis'), contact(admins.zeca!, 'zeca')],
      message: expect.any(String),
      request_id: result.headers.get('x-request-id'),
    });
    expect(result.text).not.toContain('Inativo');
    expect(result.text).not.toContain('Naoadmin');
    expect(allKeys(result.body).filter((key) => SECRET_FIELD.test(key))).toEqual([]);

    const explicit = await get(app, '/api/account/?only_team=false', caller.headers);
    expect(explicit.body.data).toEqual(result.body.data);
  });

  it('does not list an admin to themself', async () => {
    const result = await get(app, '/api/account/', admins.ana!.headers);
    expect(result.status, result.text).toBe(200);
    expect(result.body.data.map((c: { user_id: number }) => c.user_id)).toEqual([admins.erica!.user.id, admins.fabio!.user.id, admins.zeca!.user.id]);
  });

  it('lists nobody with only_team=true (no teams exist yet)', async () => {
    const result = await get(app, '/api/account/?only_team=true', caller.headers);
    expect(result.status, result.text).toBe(200);
    expect(result.body.data).toEqual([]);
  });

  it('takes only_team=1 as true and only_team=0 as false (the seed types the flag as a string)', async () => {
    const one = await get(app, '/api/account/?only_team=1', caller.headers);
    expect(one.status, one.text).toBe(200);
    expect(one.body.data).toEqual([]);
    const zero = await get(app, '/api/account/?only_team=0', caller.headers);
    expect(zero.status, zero.text).toBe(200);
    expect(zero.body.data).toEqual((await get(app, '/api/account/', caller.headers)).body.data);
    expect(zero.body.data).toHaveLength(4);
  });

  it('answers 400 for only_team=maybe (or yes) and 401 without a key', async () => {
    expectError(await get(app, '/api/account/?only_team=yes', caller.headers), 400, 'bad_request');
    const bad = await get(app, '/api/account/?only_team=maybe', caller.headers);
    expectError(bad, 400, 'bad_request');
    expect(bad.body.error.details).toContainEqual(expect.objectContaining({ location: 'query', field: 'only_team' }));
    expectError(await get(app, '/api/account/'), 401, 'unauthorized');
  });
});

describe('GET /api/usuario/get_user_social_logins/ (listUserSocialLogins)', () => {
  let app: TestApp;
  let caller: TestUser;
  let other: TestUser;

  beforeAll(async () => {
    app = await startTestApp();
    caller = await createUser(app);
    other = await createUser(app);
    const { SocialLogin } = app.accounts.models;
    await SocialLogin.create({ user_id: caller.user.id, provider: 'socialvideo', external_id: 'UC7x2Lq9ZbV4mN8pR3tS1wYa', display_name: 'Maria Santos Oficial', linked_at: new Date('2026-10-02T14:05:00Z') });
    await SocialLogin.create({ user_id: other.user.id, provider: 'socialvideo', external_id: 'UC-someone-else', display_name: 'Outra Pessoa', linked_at: new Date('2026-09-01T10:00:00Z') });
    await SocialLogin.create({ user_id: caller.user.id, provider: 'searchnet', external_id: '112233445566778899', display_name: 'Maria Santos', linked_at: new Date('2026-08-15T08:30:00.250Z') });
  });

  afterAll(async () => {
    await app?.close();
  });

  it("lists only the caller's linked accounts, with exactly provider, external_id, display_name and linked_at", async () => {
    const result = await get(app, '/api/usuario/get_user_social_logins/', caller.headers);
    expect(result.status, result.text).toBe(200);
    expect(result.body).toMatchObject({ success: true, request_id: result.headers.get('x-request-id') });
    const byId = (a: { external_id: string }, b: { external_id: string }) => a.external_id.localeCompare(b.external_id);
    expect([...result.body.data].sort(byId)).toEqual(
      [
        { provider: 'socialvideo', external_id: 'UC7x2Lq9ZbV4mN8pR3tS1wYa', display_name: 'Maria Santos Oficial', linked_at: '2026-10-02T14:05:00.000Z' },
        { provider: 'searchnet', external_id: '112233445566778899', display_name: 'Maria Santos', linked_at: '2026-08-15T08:30:00.250Z' },
      ].sort(byId),
    );
    for (const link of result.body.data) expect(Object.keys(link).sort()).toEqual(['display_name', 'external_id', 'linked_at', 'provider']);
    expect(result.text).not.toContain('UC-someone-else');

    const theirs = await get(app, '/api/usuario/get_user_social_logins/', other.headers);
    expect(theirs.body.data).toEqual([{ provider: 'socialvideo', external_id: 'UC-someone-else', display_name: 'Outra Pessoa', linked_at: '2026-09-01T10:00:00.000Z' }]);
  });

  it('is an empty list for a user with no linked account', async () => {
    const nobody = await createUser(app);
    const result = await get(app, '/api/usuario/get_user_social_logins/', nobody.headers);
    expect(result.status, result.text).toBe(200);
    expect(result.body.data).toEqual([]);
  });

  it('answers 401 without a key', async () => {
    expectError(await get(app, '/api/usuario/get_user_social_logins/'), 401, 'unauthorized');
  });
});
