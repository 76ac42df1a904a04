/**
 * A simulator of an OAuth 2.0 provider on loopback, for the tests and the sandbox, written from the RFCs and the providers'
 * documentation, independently of the server's code, so that a mistake there cannot hide itself:
 * - `GET /authorize`: the consent page (RFC 6749 §4.1.1, with PKCE, RFC 7636 §4.3). It checks the
 *   client and the redirect URI (a mismatch is a 400 page, never a redirect, as real providers do), then
 *   that the request is a code request with a state and an S256 challenge; the user who consents is the
 *   one the test set with `consentAs`, or the user refuses (`deny`): 302 back to `redirect_uri` with
 *   `code` and `state`, or with `error=access_denied`, `error_description` and `state` (§4.1.2.1).
 * - `POST /token`: the code exchange (§4.1.3): client_secret_post (§2.3.1), a known, unused, unexpired
 *   code issued to this client for this redirect URI, and `BASE64URL(SHA256(code_verifier))` equal to
 *   the challenge (RFC 7636 §4.6). Errors are §5.2's (`invalid_client`, `invalid_grant`, ...). A second
 *   use of a code is `invalid_grant` and revokes the tokens issued with it (§4.1.2). A refresh token comes
 *   with the first consent of an account only, as Google does, unless `refreshTokens` is `'always'`.
 * - `GET /userinfo` (OpenID Connect userinfo: `sub`, `name`, `email`) and
 *   `GET /channels?part=snippet&mine=true` (YouTube Data API channels.list: `items[].id`,
 *   `items[].snippet.title`), both with the Bearer access token; 401 for a token it did not issue.
 * Tests script failures (`failNextToken`, `failNextProfile`), change how the redirect is written
 * (`redirectStyle`: parameters of the provider's own, spaces as `+`), and read what it received
 * (`authorizations`, `tokenRequests`, `profileRequests`) and issued (`issued`).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { listenOnLoopback, type LoopbackServer } from './loopback.js';

/** An account at the provider: the OpenID `sub` or the channel id, and its name (or channel title). */
export interface SimulatedAccount {
  id: string;
  name: string;
  email?: string;
}

/** What the provider answers instead, once: a JSON body, or a string sent as an HTML page. */
export interface ScriptedAnswer {
  status: number;
  body: object | string;
}

export interface AuthorizationRecord {
  query: Record<string, string>;
  /** `code`: the user consented; `denied`: the user refused; `refused`: the request itself was wrong. */
  outcome: 'code' | 'denied' | 'refused';
  error?: string;
}

export interface TokenRequestRecord {
  form: Record<string, string>;
  /** Whether the client also (or instead) sent HTTP Basic credentials. */
  basicAuth: boolean;
  status: number;
  error?: string;
  /** The PKCE check: reached and passed, reached and failed, or not reached (refused before, or scripted). */
  pkce: 'verified' | 'mismatch' | 'missing' | 'not checked';
}

export interface ProfileRequestRecord {
  path: string;
  query: Record<string, string>;
  token: string | undefined;
  status: number;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string | undefined;
  account: SimulatedAccount;
  scope: string;
}

interface Grant {
  code: string;
  redirectUri: string;
  scope: string;
  codeChallenge: string;
  account: SimulatedAccount;
  issuedAt: number;
  used: boolean;
  /** Access tokens issued with this code, revoked if the code is used again. */
  accessTokens: string[];
}

interface Answer {
  status: number;
  headers?: Record<string, string>;
  body: object | string;
}

const CODE_LIFETIME_MS = 10 * 60_000;
/** A monotonic clock: tests move Date.now to expire Palanque's states, which must not expire the codes here. */
const monotonicNow = () => performance.now();
/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

export class OAuthProviderSimulator {
  readonly authorizations: AuthorizationRecord[] = [];
  readonly tokenRequests: TokenRequestRecord[] = [];
  readonly profileRequests: ProfileRequestRecord[] = [];
  readonly issued: IssuedTokens[] = [];
  /** `first-consent`: a refresh token only the first time an account consents (Google's default). */
  refreshTokens: 'first-consent' | 'always' = 'first-consent';
  /**
   * How the consent page writes its redirect. By default only the RFC's parameters, percent-encoded
   * (a space is %20). `extraParams` are added to it (clients must ignore what they do not know, RFC 6749
   * §4.1.2: Google adds `scope`, `authuser` and `prompt`); `spacesAsPlus` writes it the way RFC 6749
   * Appendix B encodes, application/x-www-form-urlencoded (a space is `+`).
   */
  redirectStyle: { extraParams: Record<string, string>; spacesAsPlus: boolean } = { extraParams: {}, spacesAsPlus: false };
  url = '';
  private readonly redirectUris = new Set<string>();
  private readonly grants = new Map<string, Grant>();
  private readonly accessTokens = new Map<string, SimulatedAccount>();
  private readonly consented = new Set<string>();
  private readonly tokenFailures: ScriptedAnswer[] = [];
  private readonly profileFailures: ScriptedAnswer[] = [];
  private consent: { account: SimulatedAccount } | { denial: string } | undefined;
  private loopback: LoopbackServer | undefined;

  constructor(readonly client: { clientId: string; clientSecret: string }) {}

  /** Registers a redirect URI of the client: /authorize refuses any other (exact match). */
  allowRedirectUri(uri: string): void {
    this.redirectUris.add(uri);
  }

  /** From now on the user at the consent page is this account, and consents. */
  consentAs(account: SimulatedAccount): void {
    this.consent = { account };
  }

  /** From now on the user at the consent page refuses, which the provider explains with `description`. */
  deny(description: string): void {
    this.consent = { denial: description };
  }

  /** The next token requests that authenticate the client answer these instead, in order (the code is left unused). */
  failNextToken(...answers: ScriptedAnswer[]): void {
    this.tokenFailures.push(...answers);
  }

  /** The next profile reads with a valid token answer these instead, in order. */
  failNextProfile(...answers: ScriptedAnswer[]): void {
    this.profileFailures.push(...answers);
  }

  /** The client settings pointing at this simulator, with `profilePath` as the account endpoint. */
  clientSettings(profilePath: '/userinfo' | '/channels'): { clientId: string; clientSecret: string; authorizeUrl: string; tokenUrl: string; profileUrl: string } {
    return { ...this.client, authorizeUrl: `${this.url}/authorize`, tokenUrl: `${this.url}/token`, profileUrl: this.url + profilePath };
  }

  async start(): Promise<void> {
    this.loopback = await listenOnLoopback((req, res) => {
      // A mistake of the test itself (no user at the consent page) is a 500 naming it, not a hung request.
      const answered = this.handle(req).catch((error: Error): Answer => ({ status: 500, body: { error: 'simulator_error', error_description: error.message } }));
      void answered.then(({ status, headers, body }) => {
        const text = typeof body === 'string' ? body : JSON.stringify(body);
        const type = typeof body === 'string' ? 'text/html; charset=utf-8' : 'application/json; charset=utf-8';
        res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', ...headers }).end(text);
      });
    });
    this.url = this.loopback.url;
  }

  async stop(): Promise<void> {
    await this.loopback?.stop();
  }

  private async handle(req: IncomingMessage): Promise<Answer> {
    const url = new URL(req.url ?? '/', this.url);
    const route = `${req.method} ${url.pathname}`;
    if (route === 'GET /authorize') return this.authorize(url.searchParams);
    if (route === 'POST /token') return this.token(req);
    if (route === 'GET /userinfo' || route === 'GET /channels') return this.profile(req, url);
    return { status: 404, body: { error: 'not_found' } };
  }

  private authorize(params: URLSearchParams): Answer {
    const query = Object.fromEntries(params);
    const refuse = (error: string): Answer => {
      this.authorizations.push({ query, outcome: 'refused', error });
      return { status: 400, body: `<h1>400. That's an error.</h1><p>Error: ${error}</p>` };
    };
    // Without a known client and one of its redirect URIs, redirecting would make this an open redirector.
    if (query.client_id !== this.client.clientId) return refuse('invalid_client');
    if (!query.redirect_uri || !this.redirectUris.has(query.redirect_uri)) return refuse('redirect_uri_mismatch');
    // This simulator tests a client that must always send a state and an S256 challenge.
    if (query.response_type !== 'code') return refuse('unsupported_response_type');
    if (!query.state) return refuse('invalid_request: state is required');
    if (!query.scope) return refuse('invalid_request: scope is required');
    if (!query.code_challenge || query.code_challenge_method !== 'S256') return refuse('invalid_request: an S256 code_challenge is required');
    if (!this.consent) throw new Error('the test set no user at the consent page (consentAs or deny)');

    const answer: Record<string, string> = {};
    if ('denial' in this.consent) {
      this.authorizations.push({ query, outcome: 'denied', error: 'access_denied' });
      Object.assign(answer, { error: 'access_denied', error_description: this.consent.denial });
    } else {
      const code = `4/0A${randomBytes(24).toString('base64url')}`;
      this.grants.set(code, {
        code,
        redirectUri: query.redirect_uri,
        scope: query.scope,
        codeChallenge: query.code_challenge,
        account: this.consent.account,
        issuedAt: monotonicNow(),
        used: false,
        accessTokens: [],
      });
      this.authorizations.push({ query, outcome: 'code' });
      answer.code = code;
    }
    answer.state = query.state;
    return { status: 302, headers: { Location: this.redirectTo(query.redirect_uri, { ...answer, ...this.redirectStyle.extraParams }) }, body: '' };
  }

  private redirectTo(redirectUri: string, params: Record<string, string>): string {
    const query = this.redirectStyle.spacesAsPlus
      ? new URLSearchParams(params).toString()
      : Object.entries(params).map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&');
    return `${redirectUri}${redirectUri.includes('?') ? '&' : '?'}${query}`;
  }

  private async token(req: IncomingMessage): Promise<Answer> {
    const form = Object.fromEntries(new URLSearchParams(await bodyOf(req)));
    const record: TokenRequestRecord = { form, basicAuth: /^Basic /i.test(req.headers.authorization ?? ''), status: 0, pkce: 'not checked' };
    this.tokenRequests.push(record);
    const fail = (status: number, error: string, description: string): Answer => {
      Object.assign(record, { status, error });
      return { status, body: { error, error_description: description } };
    };

    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return fail(400, 'invalid_request', 'The body must be form-encoded');
    // client_secret_post: both in the form.
    if (form.client_id !== this.client.clientId || form.client_secret !== this.client.clientSecret) return fail(401, 'invalid_client', 'Unauthorized');
    const scripted = this.tokenFailures.shift();
    if (scripted) {
      record.status = scripted.status;
      return scripted;
    }
    if (form.grant_type !== 'authorization_code') return fail(400, 'unsupported_grant_type', `Unsupported grant type: ${form.grant_type}`);
    const grant = this.grants.get(form.code ?? '');
    if (!grant) return fail(400, 'invalid_grant', 'Malformed auth code.');
    if (grant.used) {
      // RFC 6749 §4.1.2: a code used twice revokes what it gave.
      for (const token of grant.accessTokens) this.accessTokens.delete(token);
      return fail(400, 'invalid_grant', 'Bad Request');
    }
    if (monotonicNow() - grant.issuedAt > CODE_LIFETIME_MS) return fail(400, 'invalid_grant', 'Code expired.');
    if (form.redirect_uri !== grant.redirectUri) return fail(400, 'invalid_grant', 'redirect_uri_mismatch');
    if (form.code_verifier === undefined) {
      record.pkce = 'missing';
      return fail(400, 'invalid_grant', 'Missing code verifier.');
    }
    if (!VERIFIER.test(form.code_verifier) || base64urlSha256(form.code_verifier) !== grant.codeChallenge) {
      record.pkce = 'mismatch';
      return fail(400, 'invalid_grant', 'Invalid code verifier.');
    }
    record.pkce = 'verified';

    grant.used = true;
    const accessToken = `ya29.sim-${randomBytes(24).toString('base64url')}`;
    const firstConsent = !this.consented.has(grant.account.id);
    this.consented.add(grant.account.id);
    const refreshToken = firstConsent || this.refreshTokens === 'always' ? `1//sim-${randomBytes(24).toString('base64url')}` : undefined;
    grant.accessTokens.push(accessToken);
    this.accessTokens.set(accessToken, grant.account);
    this.issued.push({ accessToken, refreshToken, account: grant.account, scope: grant.scope });
    record.status = 200;
    return {
      status: 200,
      body: { access_token: accessToken, token_type: 'Bearer', expires_in: 3599, scope: grant.scope, ...(refreshToken ? { refresh_token: refreshToken } : {}) },
    };
  }

  private profile(req: IncomingMessage, url: URL): Answer {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const record: ProfileRequestRecord = { path: url.pathname, query: Object.fromEntries(url.searchParams), token, status: 0 };
    this.profileRequests.push(record);
    const answer = (result: Answer): Answer => {
      record.status = result.status;
      return result;
    };

    const account = token ? this.accessTokens.get(token) : undefined;
    if (!account) {
      return answer({ status: 401, headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' }, body: { error: 'invalid_token', error_description: 'Invalid Credentials' } });
    }
    const scripted = this.profileFailures.shift();
    if (scripted) return answer(scripted);
    if (url.pathname === '/userinfo') return answer({ status: 200, body: { sub: account.id, name: account.name, email: account.email ?? `${account.id}@searchnet.test` } });
    // channels.list needs a `part`, and a filter: `mine=true` is the channel of the token's user.
    if (!(url.searchParams.get('part') ?? '').split(',').includes('snippet') || url.searchParams.get('mine') !== 'true') {
      return answer({ status: 400, body: { error: { code: 400, message: 'No filter selected. Expected one of: mine, id, forHandle', status: 'INVALID_ARGUMENT' } } });
    }
    return answer({
      status: 200,
      body: { kind: 'youtube#channelListResponse', pageInfo: { totalResults: 1, resultsPerPage: 5 }, items: [{ kind: 'youtube#channel', id: account.id, snippet: { title: account.name } }] },
    });
  }
}

/** The S256 code challenge of a verifier (RFC 7636 §4.2). */
export function base64urlSha256(text: string): string {
  return createHash('sha256').update(text, 'ascii').digest('base64url');
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
