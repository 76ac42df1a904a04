/**
 * Linking accounts at the two OAuth providers end to end over loopback, the way a browser and the front
 * end do it, against the provider simulator (src/simulators/oauth-provider.ts), which checks the client
 * side of the protocol itself: the client secret in the form, the redirect URI, single-use codes and the
 * PKCE verifier against the challenge.
 * - startSocialLogin: the authorization URL, the state row, 422 for an unknown provider, 503 naming the
 *   missing variables (no client settings, no redirect page, no SECRETS_KEY);
 * - searchnetOAuthCallback (no key; the provider sends the browser to it) and socialVideoOAuthCallback
 *   (the provider sends the browser to the front-end page, which forwards code and state with the key):
 *   a pending link (nothing linked until confirmed), tokens sealed in the database (opened here with
 *   SECRETS_KEY by code of this file), provider refusals, incomplete callbacks, forged, altered,
 *   expired, replayed, other-provider and other-user states, accounts linked to another user, failing
 *   token and profile endpoints, and re-linking;
 * - confirmSocialLogin: the attack it stops (a stranger consenting with the user's state), 404 for
 *   anyone but the user who started the flow, expiry (OAUTH_PENDING_LINK_SECONDS), a repeated
 *   confirmation, 409 when the account was linked to another user meanwhile, and the purge;
 * - listPendingSocialLogins: what a keyless searchnet callback answered, found again by its user alone,
 *   newest first, without confirmed or expired links, and without tokens; 401 without a key.
 * Runs on SQLite, or on PostgreSQL with TEST_DATABASE_URL.
 */
import { createDecipheriv, createHash } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createUser, type TestUser } from './helpers/accounts.js';
import { appsClosedAfterEach, startTestApp, TEST_SECRETS_KEY, type TestApp } from './helpers/app.js';
import { expectError, request, type Result } from './helpers/http.js';
import { base64urlSha256, OAuthProviderSimulator, type SimulatedAccount } from '../src/simulators/oauth-provider.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
type Provider = 'searchnet' | 'socialvideo';

const SEARCHNET_CLIENT = { clientId: '1048576-palanque.apps.searchnet.test', clientSecret: 'GOCSPX-searchnet-client-secret-42' };
const VIDEO_CLIENT = { clientId: '2097152-palanque.apps.socialvideo.test', clientSecret: 'GOCSPX-socialvideo-client-secret-7' };
/** socialvideo sends the browser back to this front-end page, which the test plays. */
const VIDEO_PAGE = 'https://app.palanque.test/contas/video';
const SEALED = /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

const searchnet = new OAuthProviderSimulator(SEARCHNET_CLIENT);
const socialvideo = new OAuthProviderSimulator(VIDEO_CLIENT);
const simulators = { searchnet, socialvideo };
let app: TestApp;
let searchnetCallbackUrl: string;
/** Apps with other settings, started inside a test. */
const startApp = appsClosedAfterEach();

beforeAll(async () => {
  await Promise.all([searchnet.start(), socialvideo.start()]);
  app = await startTestApp({
    oauth: { searchnet: searchnet.clientSettings('/userinfo'), socialvideo: { ...socialvideo.clientSettings('/channels'), redirectUri: VIDEO_PAGE } },
  });
  searchnetCallbackUrl = `${app.baseUrl}/api/callback/searchnet/`;
  searchnet.allowRedirectUri(searchnetCallbackUrl);
  socialvideo.allowRedirectUri(VIDEO_PAGE);
});

afterAll(async () => {
  await app?.close();
  await Promise.all([searchnet.stop(), socialvideo.stop()]);
});

let accountSequence = 0;

/** A new account at `provider`: an OpenID `sub` (digits) or a channel id (`UC…`). */
function newAccount(provider: Provider, name: string): SimulatedAccount {
  accountSequence += 1;
  const id = provider === 'searchnet' ? `1082345678901234${String(accountSequence).padStart(5, '0')}` : `UC7x2Lq9ZbV4mN8pR3t${String(accountSequence).padStart(5, '0')}`;
  return { id, name };
}

const startFlow = (user: TestUser, provider: string) => request(app.baseUrl, 'POST', '/api/usuario/start_social_login/', user.headers, { provider });

/** The browser at the provider's consent page: where the provider sends it back (302 Location). */
async function consentPage(authorizationUrl: string): Promise<URL> {
  const response = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(response.status, await response.text()).toBe(302);
  return new URL(response.headers.get('location')!);
}

/** Starts a flow for `user` and passes the consent page as `account` (or as the refusal set on the simulator). */
async function authorize(user: TestUser, provider: Provider, account?: SimulatedAccount): Promise<{ started: Json; back: URL }> {
  if (account) simulators[provider].consentAs(account);
  const started = await startFlow(user, provider);
  expect(started.status, started.text).toBe(201);
  return { started: started.body.data, back: await consentPage(started.body.data.authorization_url) };
}

/** A query string, percent-encoded (a space is %20), as a front end writes it with encodeURIComponent. */
const queryOf = (params: Record<string, string>) => Object.entries(params).map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join('&');
/** searchnet's callback, as the browser reaches it (no key). */
const searchnetCallback = (params: Record<string, string>) => request(app.baseUrl, 'GET', `/api/callback/searchnet/?${queryOf(params)}`);
/** The front-end page forwarding what the provider sent to socialVideoOAuthCallback, with `caller`'s key. */
const videoCallback = (params: Record<string, string>, caller?: TestUser) => request(app.baseUrl, 'GET', `/api/social_callback/?${queryOf(params)}`, caller?.headers ?? {});
const paramsOf = (back: URL) => Object.fromEntries(back.searchParams);

/** confirmSocialLogin with `caller`'s key (none when undefined). */
const confirmLink = (caller: TestUser | undefined, body: unknown) => request(app.baseUrl, 'POST', '/api/usuario/confirm_social_login/', caller?.headers ?? {}, body);

/** `user` confirms the pending link a callback answered (which must be a 200); the confirmation's answer. */
async function confirmed(pending: Result, user: TestUser): Promise<Result> {
  expect(pending.status, pending.text).toBe(200);
  return confirmLink(user, { pending_link_id: pending.body.data.pending_link_id });
}

async function linksOf(user: TestUser): Promise<Json[]> {
  const listed = await request(app.baseUrl, 'GET', '/api/usuario/get_user_social_logins/', user.headers);
  expect(listed.status, listed.text).toBe(200);
  return listed.body.data;
}

/** Every column of the link rows of an account, read with SQL (so columns the model does not name count too). */
async function linkRows(provider: Provider, externalId: string): Promise<Json[]> {
  return app.sequelize.query('SELECT * FROM social_logins WHERE provider = :provider AND external_id = :externalId', {
    replacements: { provider, externalId },
    type: QueryTypes.SELECT,
  });
}

/** The state's payload (base64url JSON before the dot): nonce `n`, user `u`, provider `p`, expiry `e` (ms). */
const payloadOf = (state: string): { n: string; u: number; p: string; e: number } => JSON.parse(Buffer.from(state.split('.')[0]!, 'base64url').toString('utf8'));
const nonceHashOf = (state: string) => createHash('sha256').update(payloadOf(state).n).digest('hex');

async function stateRow(state: string): Promise<Json> {
  const [row] = await app.sequelize.query('SELECT * FROM oauth_states WHERE nonce_hash = :hash', { replacements: { hash: nonceHashOf(state) }, type: QueryTypes.SELECT });
  return row;
}

/** Opens a `v1.<iv>.<tag>.<ciphertext>` value with the test SECRETS_KEY (AES-256-GCM), independently of src/. */
function openSealed(sealed: string): string {
  const [, iv, tag, ciphertext] = sealed.split('.') as [string, string, string, string];
  const decipher = createDecipheriv('aes-256-gcm', Buffer.from(TEST_SECRETS_KEY, 'base64'), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}

/** `state` with one character of the part at `index` (0: payload, 1: MAC) changed. */
function flipped(state: string, index: 0 | 1): string {
  const parts = state.split('.');
  const part = parts[index]!;
  const at = Math.floor(part.length / 2);
  parts[index] = part.slice(0, at) + (part[at] === 'A' ? 'B' : 'A') + part.slice(at + 1);
  return parts.join('.');
}

/** Runs `work` with Date.now at `ms`: the app runs in this process, so its state check sees that time. */
async function atTime<T>(ms: number, work: () => Promise<T>): Promise<T> {
  const clock = vi.spyOn(Date, 'now').mockReturnValue(ms);
  try {
    return await work();
  } finally {
    clock.mockRestore();
  }
}

function jsonOrUndefined(text: string): Json {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A 400 invalid_token about the state, whose message says why (`reason`). */
function expectStateRefused(result: Result, reason?: RegExp): void {
  expectError(result, 400, 'invalid_token');
  if (reason) expect(result.body.error.message).toMatch(reason);
  expect(result.body.error.details).toEqual([expect.objectContaining({ field: 'state', location: 'query' })]);
}

describe('POST /api/usuario/start_social_login/ (startSocialLogin)', () => {
  // Regression: the method guard once took the first path of the contract that matched, and
  // /api/usuario/{user_id}/ (GET only) matched /api/usuario/start_social_login/, so POST answered 405.
  it('routes the path to startSocialLogin, not to /api/usuario/{user_id}/', async () => {
    const user = await createUser(app);
    const options = await fetch(`${app.baseUrl}/api/usuario/start_social_login/`, { method: 'OPTIONS' });
    expect(options.headers.get('allow')).toBe('POST, OPTIONS');
    expect((await startFlow(user, 'searchnet')).status).not.toBe(405);
  });

  it('starts a searchnet flow: a consent URL with the state and an S256 challenge, back to the API callback', async () => {
    const user = await createUser(app);
    const before = Date.now();
    const started = await startFlow(user, 'searchnet');
    expect(started.status, started.text).toBe(201);
    const data = started.body.data;
    expect(Object.keys(data).sort()).toEqual(['authorization_url', 'expires_at', 'provider', 'redirect_uri', 'state']);
    expect(data).toMatchObject({ provider: 'searchnet', redirect_uri: searchnetCallbackUrl });
    // Ten minutes to consent.
    expect(Date.parse(data.expires_at) - before).toBeGreaterThanOrEqual(10 * 60_000 - 1000);
    expect(Date.parse(data.expires_at) - Date.now()).toBeLessThanOrEqual(10 * 60_000);

    const url = new URL(data.authorization_url);
    expect(url.origin + url.pathname).toBe(`${searchnet.url}/authorize`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: SEARCHNET_CLIENT.clientId,
      redirect_uri: searchnetCallbackUrl,
      scope: 'openid profile email',
      state: data.state,
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge_method: 'S256',
    });
    // Nothing secret goes to the browser.
    expect(data.authorization_url).not.toContain(SEARCHNET_CLIENT.clientSecret);

    // The state names the caller and the provider, and is kept, unused, with the verifier sealed.
    expect(payloadOf(data.state)).toMatchObject({ u: user.user.id, p: 'searchnet', e: Date.parse(data.expires_at) });
    const row = await stateRow(data.state);
    expect(row).toMatchObject({ user_id: user.user.id, provider: 'searchnet', redirect_uri: searchnetCallbackUrl, used_at: null });
    expect(row.verifier_sealed).toMatch(SEALED);
    expect(base64urlSha256(openSealed(row.verifier_sealed))).toBe(url.searchParams.get('code_challenge'));
  });

  it('starts a socialvideo flow back to the configured front-end page, with the channel scope', async () => {
    const user = await createUser(app);
    const started = await startFlow(user, 'socialvideo');
    expect(started.status, started.text).toBe(201);
    expect(started.body.data).toMatchObject({ provider: 'socialvideo', redirect_uri: VIDEO_PAGE });
    const url = new URL(started.body.data.authorization_url);
    expect(url.origin + url.pathname).toBe(`${socialvideo.url}/authorize`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: VIDEO_CLIENT.clientId,
      redirect_uri: VIDEO_PAGE,
      scope: 'https://www.googleapis.com/auth/youtube.readonly',
      state: started.body.data.state,
      code_challenge_method: 'S256',
    });
  });

  it('answers 422 for a provider that cannot be linked (socialnet) or none, and 401 without a key', async () => {
    const user = await createUser(app);
    for (const body of [{ provider: 'socialnet' }, {}]) {
      const refused = await request(app.baseUrl, 'POST', '/api/usuario/start_social_login/', user.headers, body);
      expectError(refused, 422, 'validation_failed');
      expect(refused.body.error.details.map((detail: Json) => detail.field)).toContain('provider');
    }
    expectError(await request(app.baseUrl, 'POST', '/api/usuario/start_social_login/', {}, { provider: 'searchnet' }), 401, 'unauthorized');
    const rows = await app.sequelize.query('SELECT * FROM oauth_states WHERE user_id = :id', { replacements: { id: user.user.id }, type: QueryTypes.SELECT });
    expect(rows).toEqual([]);
  });

  /** startSocialLogin on `target` answers 503 service_unavailable needing exactly `variables`, and keeps no state. */
  async function expectUnavailable(target: TestApp, provider: Provider, variables: string[]): Promise<void> {
    const user = await createUser(target);
    const result = await request(target.baseUrl, 'POST', '/api/usuario/start_social_login/', user.headers, { provider });
    expectError(result, 503, 'service_unavailable');
    expect(result.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(result.body.error.details.map((detail: Json) => detail.message)).toEqual(variables.map((variable) => `needs ${variable}`));
    for (const variable of variables) expect(result.body.error.message).toContain(variable);
    const [count] = await target.sequelize.query<{ n: number | string }>('SELECT COUNT(*) AS n FROM oauth_states', { type: QueryTypes.SELECT });
    expect(Number(count!.n)).toBe(0);
  }

  it('answers 503 naming the client variables when a provider is not configured', async () => {
    const bare = await startApp();
    await expectUnavailable(bare, 'searchnet', ['SEARCHNET_CLIENT_ID', 'SEARCHNET_CLIENT_SECRET']);
    await expectUnavailable(bare, 'socialvideo', ['SOCIALVIDEO_CLIENT_ID', 'SOCIALVIDEO_CLIENT_SECRET', 'SOCIALVIDEO_REDIRECT_URI']);
    // Nor can a callback complete anything there: the state cannot be Palanque's.
    expectStateRefused(await request(bare.baseUrl, 'GET', `/api/callback/searchnet/?${queryOf({ code: 'c', state: 'a.b' })}`), /does not link searchnet/);
  });

  it('answers 503 naming SOCIALVIDEO_REDIRECT_URI when only the front-end page is missing', async () => {
    const noPage = await startApp({ oauth: { socialvideo: socialvideo.clientSettings('/channels') } });
    await expectUnavailable(noPage, 'socialvideo', ['SOCIALVIDEO_REDIRECT_URI']);
  });

  it('answers 503 naming SECRETS_KEY when the tokens could not be kept sealed', async () => {
    const noKey = await startApp({
      sms: { secretsKey: null },
      oauth: { searchnet: searchnet.clientSettings('/userinfo'), socialvideo: { ...socialvideo.clientSettings('/channels'), redirectUri: VIDEO_PAGE } },
    });
    await expectUnavailable(noKey, 'searchnet', ['SECRETS_KEY']);
    await expectUnavailable(noKey, 'socialvideo', ['SECRETS_KEY']);
  });
});

describe('GET /api/callback/searchnet/ (searchnetOAuthCallback)', () => {
  it('links the account: code exchanged with the client secret and the PKCE verifier, tokens sealed, link listed', async () => {
    const user = await createUser(app);
    const account = { ...newAccount('searchnet', 'Maria Santos'), email: 'maria@searchnet.test' };
    const { started, back } = await authorize(user, 'searchnet', account);
    // The provider sends the browser straight to the API callback.
    expect(back.origin + back.pathname).toBe(searchnetCallbackUrl);
    expect(back.searchParams.get('state')).toBe(started.state);
    const tokensBefore = searchnet.tokenRequests.length;

    const pending = await request(back.origin, 'GET', back.pathname + back.search);
    expect(pending.status, pending.text).toBe(200);
    expect(pending.body.data).toMatchObject({ provider: 'searchnet', external_id: account.id, display_name: 'Maria Santos' });
    expect(await linksOf(user)).toEqual([]);
    const linked = await confirmed(pending, user);
    expect(linked.status, linked.text).toBe(200);
    expect(linked.body.data).toEqual({ provider: 'searchnet', external_id: account.id, display_name: 'Maria Santos', linked_at: expect.any(String) });
    expect(Math.abs(Date.parse(linked.body.data.linked_at) - Date.now())).toBeLessThan(60_000);

    // One exchange, authenticated in the form (client_secret_post), for the same redirect URI, with a verifier matching the challenge.
    const exchanges = searchnet.tokenRequests.slice(tokensBefore);
    expect(exchanges).toHaveLength(1);
    const [exchange] = exchanges;
    expect(exchange).toMatchObject({ status: 200, pkce: 'verified', basicAuth: false });
    expect(exchange!.form).toMatchObject({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code'),
      redirect_uri: searchnetCallbackUrl,
      client_id: SEARCHNET_CLIENT.clientId,
      client_secret: SEARCHNET_CLIENT.clientSecret,
    });
    expect(base64urlSha256(exchange!.form.code_verifier!)).toBe(new URL(started.authorization_url).searchParams.get('code_challenge'));
    const issued = searchnet.issued.at(-1)!;
    expect(issued.account.id).toBe(account.id);
    expect(searchnet.profileRequests.at(-1)).toMatchObject({ path: '/userinfo', token: issued.accessToken, status: 200 });

    expect(await linksOf(user)).toEqual([linked.body.data]);
    const listed = await request(app.baseUrl, 'GET', '/api/usuario/get_user_social_logins/', user.headers);
    expect(listed.text).not.toContain(issued.accessToken);
    expect(listed.text).not.toContain('token');

    // Sealed at rest: nowhere in the row in clear, and opening to exactly what the provider issued.
    const [row, ...others] = await linkRows('searchnet', account.id);
    expect(others).toEqual([]);
    expect(row.user_id).toBe(user.user.id);
    const rowText = JSON.stringify(row);
    expect(rowText).not.toContain(issued.accessToken);
    expect(rowText).not.toContain(issued.refreshToken!);
    expect(row.access_token_sealed).toMatch(SEALED);
    expect(row.refresh_token_sealed).toMatch(SEALED);
    expect(openSealed(row.access_token_sealed)).toBe(issued.accessToken);
    expect(openSealed(row.refresh_token_sealed)).toBe(issued.refreshToken);
    expect(row.scope).toBe('openid profile email');
    expect(Math.abs(new Date(row.token_expires_at).getTime() - (Date.now() + 3599_000))).toBeLessThan(60_000);

    // The state is used up and its verifier was never kept in clear.
    const state = await stateRow(started.state);
    expect(state.used_at).not.toBeNull();
    expect(JSON.stringify(state)).not.toContain(exchange!.form.code_verifier);
    // Nor do the logs hold a token or the client secret.
    const logs = JSON.stringify(app.logs);
    for (const secret of [issued.accessToken, issued.refreshToken!, SEARCHNET_CLIENT.clientSecret]) expect(logs).not.toContain(secret);
  });

  it('passes on access_denied as 400 bad_request with the description, and that state cannot be used after', async () => {
    const user = await createUser(app);
    searchnet.deny('The user denied access to Palanque.');
    const { started, back } = await authorize(user, 'searchnet');
    expect(paramsOf(back)).toEqual({ error: 'access_denied', error_description: 'The user denied access to Palanque.', state: started.state });
    const tokensBefore = searchnet.tokenRequests.length;

    const refused = await request(back.origin, 'GET', back.pathname + back.search);
    expectError(refused, 400, 'bad_request');
    expect(refused.body.error.details).toEqual([
      { location: 'query', field: 'error', rule: 'provider_error', message: 'The user denied access to Palanque.', value: 'access_denied' },
    ]);
    expect(searchnet.tokenRequests.length).toBe(tokensBefore);
    // A code obtained some other way cannot complete the refused flow.
    expectStateRefused(await searchnetCallback({ code: '4/0Aforeign-code', state: started.state }), /already used/);
    expect(searchnet.tokenRequests.length).toBe(tokensBefore);
    expect(await linksOf(user)).toEqual([]);
  });

  it('answers 400 bad_request naming a missing or empty code or state', async () => {
    const cases: Array<[Record<string, string>, string[]]> = [
      [{ state: 'some.state' }, ['code']],
      [{ code: '4/0Acode' }, ['state']],
      [{}, ['code', 'state']],
      [{ code: '', state: 'some.state' }, ['code']],
      [{ code: '4/0Acode', state: '' }, ['state']],
    ];
    for (const [params, missing] of cases) {
      const result = await searchnetCallback(params);
      expectError(result, 400, 'bad_request');
      expect(result.body.error.details.map((detail: Json) => detail.field), JSON.stringify(params)).toEqual(missing);
    }
  });

  it('refuses forged and altered states with 400 invalid_token, before any exchange', async () => {
    const owner = await createUser(app);
    const intruder = await createUser(app);
    const { started, back } = await authorize(owner, 'searchnet', newAccount('searchnet', 'Owner'));
    const code = back.searchParams.get('code')!;
    const { n, p, e } = payloadOf(started.state);
    const mac = started.state.split('.')[1]!;
    const reencoded = (payload: object) => Buffer.from(JSON.stringify(payload)).toString('base64url');
    const forgeries = {
      'not a state': 'not-a-state',
      'made up': `${reencoded({ n: 'x'.repeat(43), u: owner.user.id, p, e })}.${'A'.repeat(43)}`,
      'payload changed': flipped(started.state, 0),
      'MAC changed': flipped(started.state, 1),
      // The attack that matters: the owner's genuine state, re-addressed to another user.
      'user changed': `${reencoded({ n, u: intruder.user.id, p, e })}.${mac}`,
      'a part added': `${started.state}.x`,
    };
    const tokensBefore = searchnet.tokenRequests.length;
    for (const [what, state] of Object.entries(forgeries)) {
      const result = await searchnetCallback({ code, state });
      expect(result.status, what).toBe(400);
      expectStateRefused(result, /not issued by Palanque or was altered/);
    }
    expect(searchnet.tokenRequests.length).toBe(tokensBefore);
    expect(await linksOf(intruder)).toEqual([]);

    // The genuine state is intact, and links the owner's account.
    const linked = await confirmed(await searchnetCallback({ code, state: started.state }), owner);
    expect(linked.status, linked.text).toBe(200);
    expect(await linksOf(owner)).toHaveLength(1);
  });

  it('refuses a state from its expiry on (and takes it 1 ms before), and a state whose row has expired', async () => {
    const user = await createUser(app);
    const account = newAccount('searchnet', 'Time');
    const early = await authorize(user, 'searchnet', account);
    const late = await authorize(user, 'searchnet', account);
    const tokensBefore = searchnet.tokenRequests.length;

    const expired = await atTime(Date.parse(late.started.expires_at), () => request(late.back.origin, 'GET', late.back.pathname + late.back.search));
    expectStateRefused(expired, /expired/);
    expect(searchnet.tokenRequests.length).toBe(tokensBefore);

    const justInTime = await atTime(Date.parse(early.started.expires_at) - 1, () => request(early.back.origin, 'GET', early.back.pathname + early.back.search));
    expect(justInTime.status, justInTime.text).toBe(200);

    // The row's expiry is checked too, not only the signed one (the message may not say which).
    const third = await authorize(user, 'searchnet', account);
    await app.sequelize.model('OAuthState').update({ expires_at: new Date(Date.now() - 1000) }, { where: { nonce_hash: nonceHashOf(third.started.state) } });
    expectStateRefused(await request(third.back.origin, 'GET', third.back.pathname + third.back.search));
    expect(searchnet.tokenRequests.length).toBe(tokensBefore + 1);
  });

  it('refuses a state already used (a replayed callback), without a second exchange', async () => {
    const user = await createUser(app);
    const { back } = await authorize(user, 'searchnet', newAccount('searchnet', 'Replay'));
    const first = await request(back.origin, 'GET', back.pathname + back.search);
    expect(first.status, first.text).toBe(200);
    const tokensBefore = searchnet.tokenRequests.length;
    expectStateRefused(await request(back.origin, 'GET', back.pathname + back.search), /already used/);
    expect(searchnet.tokenRequests.length).toBe(tokensBefore);
  });

  it('refuses a state issued for socialvideo, and socialvideo refuses one issued for searchnet', async () => {
    const user = await createUser(app);
    const video = await authorize(user, 'socialvideo', newAccount('socialvideo', 'Canal'));
    expectStateRefused(await searchnetCallback(paramsOf(video.back)), /another provider/);
    const search = await authorize(user, 'searchnet', newAccount('searchnet', 'Busca'));
    expectStateRefused(await videoCallback(paramsOf(search.back), user), /another provider/);
    expect(await linksOf(user)).toEqual([]);
  });

  it('answers 409 for an account linked to another user, leaving that link as it was', async () => {
    const [first, second] = [await createUser(app), await createUser(app)];
    const account = newAccount('searchnet', 'Shared Account');
    const firstBack = (await authorize(first, 'searchnet', account)).back;
    expect((await confirmed(await request(firstBack.origin, 'GET', firstBack.pathname + firstBack.search), first)).status).toBe(200);
    const [before] = await linkRows('searchnet', account.id);

    const { back } = await authorize(second, 'searchnet', { ...account, name: 'Renamed by the second user' });
    const taken = await request(back.origin, 'GET', back.pathname + back.search);
    expectError(taken, 409, 'conflict');
    expect(taken.body.error.details).toEqual([expect.objectContaining({ field: 'code', rule: 'unique_link' })]);

    expect(await linkRows('searchnet', account.id)).toEqual([before]);
    expect(await linksOf(second)).toEqual([]);
    expect((await linksOf(first)).map((link) => link.display_name)).toEqual(['Shared Account']);
  });

  it('answers 500 when the token endpoint fails, with its error code when it sent one, and the state is used up', async () => {
    const user = await createUser(app);
    const account = newAccount('searchnet', 'Exchange');

    // The provider is down: no error code to pass on.
    const down = await authorize(user, 'searchnet', account);
    searchnet.failNextToken({ status: 503, body: '<html>Service Unavailable</html>' });
    const failed = await request(down.back.origin, 'GET', down.back.pathname + down.back.search);
    expectError(failed, 500, 'internal_error');
    expect(failed.body.error.message).toMatch(/start again/);
    expect(failed.body.error.details).toEqual([]);
    // The state went with the attempt: retrying it is refused, without another exchange.
    const tokensBefore = searchnet.tokenRequests.length;
    expectStateRefused(await request(down.back.origin, 'GET', down.back.pathname + down.back.search), /already used/);
    expect(searchnet.tokenRequests.length).toBe(tokensBefore);

    // A code the provider already redeemed: it answers invalid_grant (its own single-use check), passed on.
    const good = await authorize(user, 'searchnet', account);
    expect((await confirmed(await searchnetCallback(paramsOf(good.back)), user)).status).toBe(200);
    const fresh = await authorize(user, 'searchnet', account);
    const reused = await searchnetCallback({ code: good.back.searchParams.get('code')!, state: fresh.started.state });
    expectError(reused, 500, 'internal_error');
    expect(reused.body.error.details).toEqual([expect.objectContaining({ field: 'code', rule: 'token_exchange', value: 'invalid_grant' })]);
    expect(searchnet.tokenRequests.at(-1)).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(await linksOf(user)).toHaveLength(1);
  });

  it('answers 500 when the userinfo read fails or names no account, and links nothing', async () => {
    const user = await createUser(app);
    const account = newAccount('searchnet', 'Profile');
    const answers = [
      { status: 500, body: { error: 'internal_failure' } },
      { status: 200, body: { name: 'No sub' } },
    ];
    for (const answer of answers) {
      const { back } = await authorize(user, 'searchnet', account);
      searchnet.failNextProfile(answer);
      const failed = await request(back.origin, 'GET', back.pathname + back.search);
      expectError(failed, 500, 'internal_error');
      expect(failed.body.error.message).toMatch(/start again/);
      expect(searchnet.profileRequests.at(-1)!.status).toBe(answer.status);
      expectStateRefused(await request(back.origin, 'GET', back.pathname + back.search), /already used/);
    }
    expect(await linksOf(user)).toEqual([]);
    expect(await linkRows('searchnet', account.id)).toEqual([]);
  });

  it('re-linking refreshes the name and tokens, keeps the refresh token when none comes, takes a new one when it does', async () => {
    const user = await createUser(app);
    const account = newAccount('searchnet', 'Maria');
    const link = async (name: string) => {
      const { back } = await authorize(user, 'searchnet', { ...account, name });
      const linked = await confirmed(await request(back.origin, 'GET', back.pathname + back.search), user);
      expect(linked.status, linked.text).toBe(200);
      const [row, ...others] = await linkRows('searchnet', account.id);
      expect(others).toEqual([]);
      return { data: linked.body.data, row, issued: searchnet.issued.at(-1)! };
    };

    const first = await link('Maria');
    expect(first.issued.refreshToken).toBeDefined();
    const second = await link('Maria Santos');
    // The simulator sends a refresh token with the first consent only.
    expect(second.issued.refreshToken).toBeUndefined();
    expect(second.data).toEqual({ ...first.data, display_name: 'Maria Santos' });
    expect(second.row).toMatchObject({ id: first.row.id, display_name: 'Maria Santos' });
    expect(second.row.access_token_sealed).not.toBe(first.row.access_token_sealed);
    expect(openSealed(second.row.access_token_sealed)).toBe(second.issued.accessToken);
    expect(second.row.refresh_token_sealed).toBe(first.row.refresh_token_sealed);
    expect(openSealed(second.row.refresh_token_sealed)).toBe(first.issued.refreshToken);

    searchnet.refreshTokens = 'always';
    try {
      const third = await link('Maria Santos');
      expect(openSealed(third.row.refresh_token_sealed)).toBe(third.issued.refreshToken);
      expect(third.issued.refreshToken).not.toBe(first.issued.refreshToken);
    } finally {
      searchnet.refreshTokens = 'first-consent';
    }
    expect(await linksOf(user)).toEqual([{ ...first.data, display_name: 'Maria Santos' }]);
  });

  // RFC 6749 §4.1.2: the client MUST ignore response parameters it does not know, and Google (searchnet's
  // default endpoints) sends the browser back with `scope`, `authuser` and `prompt` besides `code` and `state`.
  it("links the account when the provider's redirect carries parameters of its own (Google's scope, authuser, prompt)", async () => {
    const user = await createUser(app);
    searchnet.redirectStyle.extraParams = { scope: 'email profile openid https://www.googleapis.com/auth/userinfo.email', authuser: '0', prompt: 'consent' };
    try {
      const { back } = await authorize(user, 'searchnet', newAccount('searchnet', 'Google style'));
      expect(back.searchParams.get('authuser')).toBe('0');
      const linked = await request(back.origin, 'GET', back.pathname + back.search);
      expect(linked.status, linked.text).toBe(200);
    } finally {
      searchnet.redirectStyle.extraParams = {};
    }
  });

  // RFC 6749 (§4.1.2.1, Appendix B) adds the redirect's parameters application/x-www-form-urlencoded, where
  // a space is `+` (GitHub and Microsoft write error_description so); the contract's parameters allow it.
  it('reads a form-encoded redirect (spaces as +) like a percent-encoded one', async () => {
    const user = await createUser(app);
    searchnet.deny('The user denied access to Palanque.');
    searchnet.redirectStyle.spacesAsPlus = true;
    try {
      const { back } = await authorize(user, 'searchnet');
      expect(back.search).toContain('error_description=The+user+denied');
      const refused = await request(back.origin, 'GET', back.pathname + back.search);
      expectError(refused, 400, 'bad_request');
      expect(refused.body.error.details).toEqual([
        { location: 'query', field: 'error', rule: 'provider_error', message: 'The user denied access to Palanque.', value: 'access_denied' },
      ]);
    } finally {
      searchnet.redirectStyle.spacesAsPlus = false;
    }
  });

  // The provider's words go into `error.details[].message`, which the error model caps at 1000 characters:
  // the callback's `error_description` (the contract lets it be 1024 long) and the token endpoint's (any length).
  it("keeps a provider's long error_description within the error model", async () => {
    const long = `The user denied access. ${'x'.repeat(1000)}`;
    expect(long.length).toBeLessThanOrEqual(1024);
    const refused = await fetch(`${app.baseUrl}/api/callback/searchnet/?${queryOf({ error: 'access_denied', error_description: long, state: 'a.b' })}`);
    const refusedText = await refused.text();
    expect.soft(refused.status, refusedText.slice(0, 200)).toBe(400);
    const refusedDetail = jsonOrUndefined(refusedText)?.error?.details?.[0];
    expect.soft(refusedDetail).toMatchObject({ field: 'error', rule: 'provider_error', value: 'access_denied' });
    expect.soft(refusedDetail?.message?.length).toBeLessThanOrEqual(1000);

    const user = await createUser(app);
    const { back } = await authorize(user, 'searchnet', newAccount('searchnet', 'Long words'));
    searchnet.failNextToken({ status: 400, body: { error: 'invalid_grant', error_description: 'y'.repeat(2000) } });
    const failed = await fetch(back);
    const failedText = await failed.text();
    expect.soft(failed.status).toBe(500);
    const failedDetail = jsonOrUndefined(failedText)?.error?.details?.[0];
    expect.soft(failedDetail, failedText.slice(0, 200)).toMatchObject({ field: 'code', rule: 'token_exchange', value: 'invalid_grant' });
    expect.soft(failedDetail?.message?.length).toBeLessThanOrEqual(1000);
  });
});

describe('GET /api/social_callback/ (socialVideoOAuthCallback)', () => {
  it('links the channel: the provider returns to the front-end page, which forwards code and state with the key', async () => {
    const user = await createUser(app);
    const channel = newAccount('socialvideo', 'Maria Santos Oficial');
    const { started, back } = await authorize(user, 'socialvideo', channel);
    expect(back.origin + back.pathname).toBe(VIDEO_PAGE);
    expect(Object.keys(paramsOf(back)).sort()).toEqual(['code', 'state']);

    const linked = await confirmed(await videoCallback(paramsOf(back), user), user);
    expect(linked.status, linked.text).toBe(200);
    expect(linked.body.data).toEqual({ provider: 'socialvideo', external_id: channel.id, display_name: 'Maria Santos Oficial', linked_at: expect.any(String) });
    expect(await linksOf(user)).toEqual([linked.body.data]);

    const exchange = socialvideo.tokenRequests.at(-1)!;
    expect(exchange).toMatchObject({ status: 200, pkce: 'verified', basicAuth: false });
    expect(exchange.form).toMatchObject({ redirect_uri: VIDEO_PAGE, client_id: VIDEO_CLIENT.clientId, client_secret: VIDEO_CLIENT.clientSecret });
    expect(base64urlSha256(exchange.form.code_verifier!)).toBe(new URL(started.authorization_url).searchParams.get('code_challenge'));
    const issued = socialvideo.issued.at(-1)!;
    expect(socialvideo.profileRequests.at(-1)).toMatchObject({ path: '/channels', query: { part: 'snippet', mine: 'true' }, token: issued.accessToken, status: 200 });

    const [row] = await linkRows('socialvideo', channel.id);
    expect(JSON.stringify(row)).not.toContain(issued.accessToken);
    expect(JSON.stringify(row)).not.toContain(issued.refreshToken!);
    expect(openSealed(row.access_token_sealed)).toBe(issued.accessToken);
    expect(openSealed(row.refresh_token_sealed)).toBe(issued.refreshToken);
    expect(row.scope).toBe('https://www.googleapis.com/auth/youtube.readonly');
  });

  it('answers 401 without a valid key, and the state stays usable by its owner', async () => {
    const user = await createUser(app);
    const { back } = await authorize(user, 'socialvideo', newAccount('socialvideo', 'Sem chave'));
    expectError(await videoCallback(paramsOf(back)), 401, 'unauthorized');
    expectError(await request(app.baseUrl, 'GET', `/api/social_callback/${back.search}`, { Authorization: 'Token not-a-key' }), 401, 'unauthorized');
    expect((await videoCallback(paramsOf(back), user)).status).toBe(200);
  });

  it("refuses another user's state with 400 invalid_token without using it up: its owner completes it", async () => {
    const [owner, other] = [await createUser(app), await createUser(app)];
    const channel = newAccount('socialvideo', 'Canal do dono');
    const { back } = await authorize(owner, 'socialvideo', channel);
    const tokensBefore = socialvideo.tokenRequests.length;

    expectStateRefused(await videoCallback(paramsOf(back), other), /another user/);
    expect(socialvideo.tokenRequests.length).toBe(tokensBefore);
    expect(await linksOf(other)).toEqual([]);

    const linked = await confirmed(await videoCallback(paramsOf(back), owner), owner);
    expect(linked.status, linked.text).toBe(200);
    expect((await linksOf(owner)).map((link) => link.external_id)).toEqual([channel.id]);
  });

  // The contract says a state of another user is not used up by the attempt: an error callback
  // (`error=access_denied&state=…`) forwarded by another user must not spoil the owner's flow either.
  it("does not let another user's error callback use up the owner's state", async () => {
    const [owner, other] = [await createUser(app), await createUser(app)];
    const { back } = await authorize(owner, 'socialvideo', newAccount('socialvideo', 'Canal estragado'));
    const spoiled = await videoCallback({ error: 'access_denied', state: back.searchParams.get('state')! }, other);
    expectError(spoiled, 400, 'bad_request');
    const pending = await videoCallback(paramsOf(back), owner);
    expect(pending.status, pending.text).toBe(200);
  });

  it('passes on access_denied and names a missing code or state, with 400 bad_request', async () => {
    const user = await createUser(app);
    socialvideo.deny('O usuário negou o acesso.');
    const { back } = await authorize(user, 'socialvideo');
    const refused = await videoCallback(paramsOf(back), user);
    expectError(refused, 400, 'bad_request');
    expect(refused.body.error.details).toEqual([{ location: 'query', field: 'error', rule: 'provider_error', message: 'O usuário negou o acesso.', value: 'access_denied' }]);

    for (const [params, missing] of [[{ state: 'a.b' }, ['code']], [{ code: 'c' }, ['state']], [{}, ['code', 'state']]] as const) {
      const result = await videoCallback(params, user);
      expectError(result, 400, 'bad_request');
      expect(result.body.error.details.map((detail: Json) => detail.field)).toEqual(missing);
    }
  });

  it('refuses forged, replayed and expired states with 400 invalid_token', async () => {
    const user = await createUser(app);
    const channel = newAccount('socialvideo', 'Estados');
    const { started, back } = await authorize(user, 'socialvideo', channel);
    const code = back.searchParams.get('code')!;
    expectStateRefused(await videoCallback({ code, state: flipped(started.state, 0) }, user), /altered/);
    expectStateRefused(await atTime(Date.parse(started.expires_at), () => videoCallback({ code, state: started.state }, user)), /expired/);
    expect((await videoCallback({ code, state: started.state }, user)).status).toBe(200);
    expectStateRefused(await videoCallback({ code, state: started.state }, user), /already used/);
  });

  it('answers 500 when the channel read fails or finds no channel, and 409 for a channel of another user', async () => {
    const [user, other] = [await createUser(app), await createUser(app)];
    const channel = newAccount('socialvideo', 'Canal');
    for (const answer of [
      { status: 403, body: { error: { code: 403, message: 'The request cannot be completed because you have exceeded your quota.', status: 'PERMISSION_DENIED' } } },
      // A Google account without a YouTube channel.
      { status: 200, body: { kind: 'youtube#channelListResponse', pageInfo: { totalResults: 0, resultsPerPage: 5 } } },
    ]) {
      const { back } = await authorize(user, 'socialvideo', channel);
      socialvideo.failNextProfile(answer);
      const failed = await videoCallback(paramsOf(back), user);
      expectError(failed, 500, 'internal_error');
      expect(failed.body.error.message).toMatch(/start again/);
    }
    expect(await linkRows('socialvideo', channel.id)).toEqual([]);

    const mine = await authorize(user, 'socialvideo', channel);
    expect((await confirmed(await videoCallback(paramsOf(mine.back), user), user)).status).toBe(200);
    const theirs = await authorize(other, 'socialvideo', channel);
    expectError(await videoCallback(paramsOf(theirs.back), other), 409, 'conflict');
    expect(await linksOf(other)).toEqual([]);
  });
});

describe('a link waits for the user who started it (POST /api/usuario/confirm_social_login/, confirmSocialLogin)', () => {
  /** The pending link rows of an account, read with SQL. */
  async function pendingRows(provider: Provider, externalId: string): Promise<Json[]> {
    return app.sequelize.query('SELECT * FROM oauth_pending_links WHERE provider = :provider AND external_id = :externalId', {
      replacements: { provider, externalId },
      type: QueryTypes.SELECT,
    });
  }

  it("Mallory's consent on A's state links nothing; the callback answers what A would confirm; only A's key confirms it", async () => {
    const [ana, mallory] = [await createUser(app), await createUser(app)];
    const theirs = newAccount('searchnet', 'Mallory Example');
    // A starts a flow; Mallory gets hold of the consent URL and consents with her own provider account.
    const started = await startFlow(ana, 'searchnet');
    expect(started.status, started.text).toBe(201);
    searchnet.consentAs(theirs);
    const back = await consentPage(started.body.data.authorization_url);

    // The browser reaches the callback without a key: the code is exchanged, but nothing is linked.
    const pending = await request(back.origin, 'GET', back.pathname + back.search);
    expect(await linksOf(ana)).toEqual([]);
    expect(await linkRows('searchnet', theirs.id)).toEqual([]);
    expect(pending.status, pending.text).toBe(200);
    expect(pending.body.data).toEqual({
      pending_link_id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      provider: 'searchnet',
      external_id: theirs.id,
      display_name: 'Mallory Example',
      expires_at: expect.any(String),
      confirm_url: `${app.baseUrl}/api/usuario/confirm_social_login/`,
    });
    const issued = searchnet.issued.at(-1)!;
    expect(pending.text).not.toContain(issued.accessToken);
    expect(pending.text).not.toContain(issued.refreshToken!);
    expect(await linksOf(ana)).toEqual([]);
    expect(await linkRows('searchnet', theirs.id)).toEqual([]);
    const id = pending.body.data.pending_link_id;

    // Mallory cannot confirm it with her key: 404, exactly as for an id that does not exist.
    const refused = await confirmLink(mallory, { pending_link_id: id });
    expectError(refused, 404, 'not_found');
    const unknown = await confirmLink(mallory, { pending_link_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7' });
    expectError(unknown, 404, 'not_found');
    const withoutValue = (result: Result) => result.body.error.details.map(({ value: _value, ...detail }: Json) => detail);
    expect(withoutValue(refused)).toEqual(withoutValue(unknown));
    expect(refused.body.error.message.replace(id, '')).toBe(unknown.body.error.message.replace('7c9e6679-7425-40de-944b-e07fc1f90ae7', ''));
    expect(await linksOf(mallory)).toEqual([]);
    expect(await linksOf(ana)).toEqual([]);
    // Nor without a key.
    expectError(await confirmLink(undefined, { pending_link_id: id }), 401, 'unauthorized');

    // A sees whose account it is, and only A's confirmation links it.
    const confirmed = await confirmLink(ana, { pending_link_id: id });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body.data).toEqual({ provider: 'searchnet', external_id: theirs.id, display_name: 'Mallory Example', linked_at: expect.any(String) });
    expect(await linksOf(ana)).toEqual([confirmed.body.data]);
    const [row] = await linkRows('searchnet', theirs.id);
    expect(row.user_id).toBe(ana.user.id);
    expect(openSealed(row.access_token_sealed)).toBe(issued.accessToken);
    expect(openSealed(row.refresh_token_sealed)).toBe(issued.refreshToken);
  });

  it('keeps the tokens sealed while pending, and forgets them once confirmed', async () => {
    const user = await createUser(app);
    const account = newAccount('searchnet', 'Sealed');
    const { back } = await authorize(user, 'searchnet', account);
    const pending = await request(back.origin, 'GET', back.pathname + back.search);
    expect(pending.status, pending.text).toBe(200);
    const issued = searchnet.issued.at(-1)!;
    const [held] = await pendingRows('searchnet', account.id);
    expect(held).toMatchObject({ id: pending.body.data.pending_link_id, user_id: user.user.id, display_name: 'Sealed', confirmed_at: null });
    expect(JSON.stringify(held)).not.toContain(issued.accessToken);
    expect(openSealed(held.access_token_sealed)).toBe(issued.accessToken);
    expect(openSealed(held.refresh_token_sealed)).toBe(issued.refreshToken);
    expect(app.logs.some((line) => JSON.stringify(line).includes(issued.accessToken))).toBe(false);

    expect((await confirmLink(user, { pending_link_id: held.id })).status).toBe(200);
    const [done] = await pendingRows('searchnet', account.id);
    expect(done.confirmed_at).not.toBeNull();
    expect(done.access_token_sealed).toBeNull();
    expect(done.refresh_token_sealed).toBeNull();
  });

  it('refuses an expired pending link with 400 invalid_token, from its expiry on, and links nothing', async () => {
    const user = await createUser(app);
    const account = newAccount('searchnet', 'Too late');
    const { back } = await authorize(user, 'searchnet', account);
    const pending = (await request(back.origin, 'GET', back.pathname + back.search)).body.data;
    // Ten minutes by default.
    expect(Date.parse(pending.expires_at) - Date.now()).toBeGreaterThan(10 * 60_000 - 60_000);
    expect(Date.parse(pending.expires_at) - Date.now()).toBeLessThanOrEqual(10 * 60_000);

    const late = await atTime(Date.parse(pending.expires_at), () => confirmLink(user, { pending_link_id: pending.pending_link_id }));
    expectError(late, 400, 'invalid_token');
    expect(late.body.error.message).toMatch(/expired/);
    expect(late.body.error.details).toEqual([{ location: 'body', field: 'pending_link_id', rule: 'expired', message: expect.any(String), value: pending.pending_link_id }]);
    expect(await linksOf(user)).toEqual([]);
    // Still refused afterwards: the expiry is final.
    expectError(await atTime(Date.parse(pending.expires_at) + 1, () => confirmLink(user, { pending_link_id: pending.pending_link_id })), 400, 'invalid_token');

    const inTime = await authorize(user, 'searchnet', account);
    const second = (await request(inTime.back.origin, 'GET', inTime.back.pathname + inTime.back.search)).body.data;
    const justInTime = await atTime(Date.parse(second.expires_at) - 1, () => confirmLink(user, { pending_link_id: second.pending_link_id }));
    expect(justInTime.status, justInTime.text).toBe(200);
  });

  it('takes its lifetime from OAUTH_PENDING_LINK_SECONDS', async () => {
    expect(loadConfig({ OAUTH_PENDING_LINK_SECONDS: '120' }).oauthPendingLinkMs).toBe(120_000);
    expect(loadConfig({}).oauthPendingLinkMs).toBe(600_000);
    for (const wrong of ['0', '59', 'soon', '86401']) expect(() => loadConfig({ OAUTH_PENDING_LINK_SECONDS: wrong }), wrong).toThrow(/OAUTH_PENDING_LINK_SECONDS/);

    const short = await startApp({ oauth: { searchnet: searchnet.clientSettings('/userinfo') }, oauthPendingLinkMs: 90_000 });
    searchnet.allowRedirectUri(`${short.baseUrl}/api/callback/searchnet/`);
    const user = await createUser(short);
    searchnet.consentAs(newAccount('searchnet', 'Short'));
    const started = await request(short.baseUrl, 'POST', '/api/usuario/start_social_login/', user.headers, { provider: 'searchnet' });
    const back = await consentPage(started.body.data.authorization_url);
    const before = Date.now();
    const pending = await request(back.origin, 'GET', back.pathname + back.search);
    expect(pending.status, pending.text).toBe(200);
    expect(Date.parse(pending.body.data.expires_at) - before).toBeGreaterThanOrEqual(90_000 - 1000);
    expect(Date.parse(pending.body.data.expires_at) - Date.now()).toBeLessThanOrEqual(90_000);
  });

  it('answers a second confirmation like the first (idempotent), with the link as it is', async () => {
    const user = await createUser(app);
    const { back } = await authorize(user, 'searchnet', newAccount('searchnet', 'Twice'));
    const id = (await request(back.origin, 'GET', back.pathname + back.search)).body.data.pending_link_id;
    const first = await confirmLink(user, { pending_link_id: id });
    expect(first.status, first.text).toBe(200);
    const second = await confirmLink(user, { pending_link_id: id });
    expect(second.status, second.text).toBe(200);
    expect(second.body.data).toEqual(first.body.data);
    expect(await linksOf(user)).toEqual([first.body.data]);
  });

  it('answers 409 unique_link at confirmation when another user linked the account meanwhile, and discards the pending link', async () => {
    const [first, second] = [await createUser(app), await createUser(app)];
    const account = newAccount('searchnet', 'Contested');
    const pendingOf = async (user: TestUser) => {
      const { back } = await authorize(user, 'searchnet', account);
      const pending = await request(back.origin, 'GET', back.pathname + back.search);
      expect(pending.status, pending.text).toBe(200);
      return pending.body.data.pending_link_id as string;
    };
    // Both consent before either confirms: the callback cannot know yet.
    const [firstId, secondId] = [await pendingOf(first), await pendingOf(second)];
    expect((await confirmLink(first, { pending_link_id: firstId })).status).toBe(200);
    const taken = await confirmLink(second, { pending_link_id: secondId });
    expectError(taken, 409, 'conflict');
    expect(taken.body.error.details).toEqual([expect.objectContaining({ location: 'body', field: 'pending_link_id', rule: 'unique_link' })]);
    expect(await linksOf(second)).toEqual([]);
    expect((await linkRows('searchnet', account.id)).map((row) => row.user_id)).toEqual([first.user.id]);
    // Discarded: it can never succeed, and its tokens are not kept.
    expectError(await confirmLink(second, { pending_link_id: secondId }), 404, 'not_found');
    expect((await pendingRows('searchnet', account.id)).map((row) => row.user_id)).toEqual([first.user.id]);
  });

  it('answers 422 for a missing or malformed pending_link_id', async () => {
    const user = await createUser(app);
    for (const body of [{}, { pending_link_id: 'not-an-id' }, { pending_link_id: 12 }]) {
      const refused = await confirmLink(user, body);
      expectError(refused, 422, 'validation_failed');
      expect(refused.body.error.details.map((detail: Json) => detail.field), JSON.stringify(body)).toContain('pending_link_id');
    }
  });

  it('a forwarded socialvideo callback also waits for the confirmation', async () => {
    const user = await createUser(app);
    const channel = newAccount('socialvideo', 'Canal pendente');
    const { back } = await authorize(user, 'socialvideo', channel);
    const pending = await videoCallback(paramsOf(back), user);
    expect(pending.status, pending.text).toBe(200);
    expect(pending.body.data).toMatchObject({ provider: 'socialvideo', external_id: channel.id, display_name: 'Canal pendente' });
    expect(await linksOf(user)).toEqual([]);
    expect((await confirmLink(user, { pending_link_id: pending.body.data.pending_link_id })).status).toBe(200);
    expect((await linksOf(user)).map((link) => link.external_id)).toEqual([channel.id]);
  });

  it('purges pending links once expired, with the housekeeping', async () => {
    const user = await createUser(app);
    const [stale, fresh] = [newAccount('searchnet', 'Stale'), newAccount('searchnet', 'Fresh')];
    for (const account of [stale, fresh]) {
      const { back } = await authorize(user, 'searchnet', account);
      expect((await request(back.origin, 'GET', back.pathname + back.search)).status).toBe(200);
    }
    await app.sequelize.model('OAuthPendingLink').update({ expires_at: new Date(Date.now() - 1000) }, { where: { external_id: stale.id } });
    expect(await app.socialLinks.purgeExpired()).toBeGreaterThanOrEqual(1);
    expect(await pendingRows('searchnet', stale.id)).toEqual([]);
    expect(await pendingRows('searchnet', fresh.id)).toHaveLength(1);
  });
});

describe('the front end finds what waits for the user (GET /api/usuario/get_pending_social_logins/, listPendingSocialLogins)', () => {
  /** listPendingSocialLogins with `caller`'s key (none when undefined). */
  const listPending = (caller: TestUser | undefined) => request(app.baseUrl, 'GET', '/api/usuario/get_pending_social_logins/', caller?.headers ?? {});

  async function pendingOf(user: TestUser): Promise<Json[]> {
    const listed = await listPending(user);
    expect(listed.status, listed.text).toBe(200);
    return listed.body.data;
  }

  /** `user` starts a searchnet flow, consents as `account`, and the browser reaches the callback without a key; its answer. */
  async function heldFor(user: TestUser, account: SimulatedAccount): Promise<Json> {
    const { back } = await authorize(user, 'searchnet', account);
    const pending = await searchnetCallback(paramsOf(back));
    expect(pending.status, pending.text).toBe(200);
    return pending.body.data;
  }

  it('lists the pending link a searchnet callback answered to the browser, newest first, and it confirms from there', async () => {
    const user = await createUser(app);
    expect(await pendingOf(user)).toEqual([]);
    const older = await heldFor(user, newAccount('searchnet', 'Maria Santos'));
    const newer = await heldFor(user, newAccount('searchnet', 'Maria Santos (campanha)'));

    // Exactly what the callbacks answered, which only the browser saw.
    expect(await pendingOf(user)).toEqual([newer, older]);
    expect(newer.confirm_url).toBe(`${app.baseUrl}/api/usuario/confirm_social_login/`);

    const [listed] = await pendingOf(user);
    const linked = await confirmLink(user, { pending_link_id: listed.pending_link_id });
    expect(linked.status, linked.text).toBe(200);
    expect((await linksOf(user)).map((link) => link.display_name)).toEqual(['Maria Santos (campanha)']);
  });

  it("shows no one else's pending links: another user, even the one who consented, sees only their own", async () => {
    const [ana, mallory] = [await createUser(app), await createUser(app)];
    // Mallory consents on Ana's state with her own account: the link waits for Ana, not for Mallory.
    const anas = await heldFor(ana, newAccount('searchnet', 'Mallory Example'));
    expect(await pendingOf(mallory)).toEqual([]);
    const malloryOwn = await heldFor(mallory, newAccount('searchnet', 'Mallory Own'));
    expect(await pendingOf(mallory)).toEqual([malloryOwn]);
    expect(await pendingOf(ana)).toEqual([anas]);
  });

  it('leaves out confirmed links, and expired ones from their expiry on', async () => {
    const user = await createUser(app);
    const confirmedOne = await heldFor(user, newAccount('searchnet', 'Confirmed'));
    const waiting = await heldFor(user, newAccount('searchnet', 'Waiting'));
    expect((await confirmLink(user, { pending_link_id: confirmedOne.pending_link_id })).status).toBe(200);
    expect(await pendingOf(user)).toEqual([waiting]);

    expect(await atTime(Date.parse(waiting.expires_at) - 1, () => pendingOf(user))).toEqual([waiting]);
    expect(await atTime(Date.parse(waiting.expires_at), () => pendingOf(user))).toEqual([]);
    // Expired, but not purged yet: the row is still there.
    expect(await app.sequelize.model('OAuthPendingLink').count({ where: { id: waiting.pending_link_id } })).toBe(1);
  });

  it('answers no token: each entry has exactly the fields the callback answers', async () => {
    const user = await createUser(app);
    await heldFor(user, newAccount('searchnet', 'Tokens'));
    const issued = searchnet.issued.at(-1)!;
    const listed = await listPending(user);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.text).not.toContain(issued.accessToken);
    expect(listed.text).not.toContain(issued.refreshToken!);
    expect(listed.text).not.toMatch(/sealed|token|scope|v1\.[A-Za-z0-9_-]+\./);
    expect(listed.body.data.map((entry: Json) => Object.keys(entry).sort())).toEqual([['confirm_url', 'display_name', 'expires_at', 'external_id', 'pending_link_id', 'provider']]);
  });

  it('answers 401 without a key, and 200 with one', async () => {
    const user = await createUser(app);
    await heldFor(user, newAccount('searchnet', 'Keyless'));
    const refused = await listPending(undefined);
    expectError(refused, 401, 'unauthorized');
    expect(refused.text).not.toContain('Keyless');
    expect((await listPending(user)).status).toBe(200);
  });
});

it('a callback answers 500 when the token endpoint refuses the client, naming invalid_client', async () => {
  // A deployment whose client secret the provider does not know (rotated at the provider, say).
  const wrong = await startApp({ oauth: { searchnet: { ...searchnet.clientSettings('/userinfo'), clientSecret: 'GOCSPX-an-old-secret' } } });
  searchnet.allowRedirectUri(`${wrong.baseUrl}/api/callback/searchnet/`);
  const user = await createUser(wrong);
  searchnet.consentAs(newAccount('searchnet', 'Wrong secret'));
  const started = await request(wrong.baseUrl, 'POST', '/api/usuario/start_social_login/', user.headers, { provider: 'searchnet' });
  expect(started.status, started.text).toBe(201);
  const back = await consentPage(started.body.data.authorization_url);
  const failed = await request(back.origin, 'GET', back.pathname + back.search);
  expectError(failed, 500, 'internal_error');
  expect(failed.body.error.details).toEqual([expect.objectContaining({ value: 'invalid_client' })]);
  expect(searchnet.tokenRequests.at(-1)).toMatchObject({ status: 401, error: 'invalid_client' });
});
