/**
 * The OAuth 2.0 providers whose accounts users link, behind one interface. Both speak the
 * authorization-code grant of RFC 6749 with PKCE (RFC 7636, S256) and authenticate Palanque at the
 * token endpoint with `client_secret_post` (RFC 6749 §2.3.1). They differ in where the account is read:
 * - searchnet: an OpenID Connect provider (Google's endpoints by default); the account is the userinfo
 *   response's `sub` and `name` (https://openid.net/specs/openid-connect-core-1_0.html#UserInfo,
 *   https://developers.google.com/identity/protocols/oauth2/web-server);
 * - socialvideo: a video platform (YouTube's Data API by default); the account is the caller's channel,
 *   `GET {channels}?part=snippet&mine=true`, its `items[0].id` and `items[0].snippet.title`
 *   (https://developers.google.com/youtube/v3/docs/channels/list).
 * Every endpoint is configurable (SEARCHNET_*, SOCIALVIDEO_*): tests point them at a simulator.
 */
import type { OAuthClientSettings } from './settings.js';

export type LinkableProvider = 'searchnet' | 'socialvideo';

export interface TokenSet {
  accessToken: string;
  refreshToken: string | undefined;
  expiresAt: Date | undefined;
  scope: string | undefined;
}

export interface ProviderAccount {
  externalId: string;
  displayName: string;
}

/** The token exchange or the account read failed; `providerError` is the provider's error code, if it sent one. */
export class ExchangeError extends Error {
  override name = 'ExchangeError';

  constructor(
    message: string,
    readonly providerError: string | undefined,
  ) {
    super(message);
  }
}

export interface OAuthProvider {
  readonly name: LinkableProvider;
  /** The consent page the browser is sent to. */
  authorizationUrl(request: { state: string; redirectUri: string; codeChallenge: string }): string;
  exchange(request: { code: string; redirectUri: string; codeVerifier: string }): Promise<TokenSet>;
  account(accessToken: string): Promise<ProviderAccount>;
}

const REQUEST_TIMEOUT_MS = 15_000;

const SCOPES: Record<LinkableProvider, string> = {
  searchnet: 'openid profile email',
  socialvideo: 'https://www.googleapis.com/auth/youtube.readonly',
};

export class HttpOAuthProvider implements OAuthProvider {
  constructor(
    readonly name: LinkableProvider,
    private readonly settings: OAuthClientSettings & { clientId: string; clientSecret: string },
  ) {}

  authorizationUrl({ state, redirectUri, codeChallenge }: { state: string; redirectUri: string; codeChallenge: string }): string {
    const url = new URL(this.settings.authorizeUrl);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', this.settings.clientId);
    url.searchParams.set('redirect_uri', redirectUri);
    url.searchParams.set('scope', SCOPES[this.name]);
    url.searchParams.set('state', state);
    url.searchParams.set('code_challenge', codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
    url.searchParams.set('access_type', 'offline'); // ask for a refresh token
    return url.toString();
  }

  async exchange({ code, redirectUri, codeVerifier }: { code: string; redirectUri: string; codeVerifier: string }): Promise<TokenSet> {
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      client_id: this.settings.clientId,
      client_secret: this.settings.clientSecret,
      code_verifier: codeVerifier,
    });
    const body = await this.call(this.settings.tokenUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: form,
    });
    if (typeof body.access_token !== 'string' || body.access_token === '') throw new ExchangeError('The token endpoint answered without an access_token', undefined);
    const expiresIn = Number(body.expires_in);
    return {
      accessToken: body.access_token,
      refreshToken: typeof body.refresh_token === 'string' ? body.refresh_token : undefined,
      expiresAt: Number.isFinite(expiresIn) && expiresIn > 0 ? new Date(Date.now() + expiresIn * 1000) : undefined,
      scope: typeof body.scope === 'string' ? body.scope : undefined,
    };
  }

  async account(accessToken: string): Promise<ProviderAccount> {
    const url = new URL(this.settings.profileUrl);
    if (this.name === 'socialvideo') {
      url.searchParams.set('part', 'snippet');
      url.searchParams.set('mine', 'true');
    }
    const body = await this.call(url.toString(), { headers: { Authorization: `Bearer ${accessToken}`, Accept: 'application/json' } });
    const account = this.name === 'searchnet' ? userinfoAccount(body) : channelAccount(body);
    if (!account) throw new ExchangeError(`The provider's ${this.name === 'searchnet' ? 'userinfo' : 'channel'} answer names no account`, undefined);
    return account;
  }

  /** A JSON call to the provider; any failure (unreachable, not 2xx, not JSON) is an ExchangeError. */
  private async call(url: string, init: RequestInit): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    } catch (error) {
      throw new ExchangeError(`The provider could not be reached: ${(error as Error).message}`, undefined);
    }
    const body = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    if (!response.ok || !body || typeof body !== 'object') {
      // RFC 6749 §5.2: `error` (e.g. invalid_grant for a used or expired code) and `error_description`.
      const providerError = typeof body?.error === 'string' ? body.error : undefined;
      const description = typeof body?.error_description === 'string' ? `: ${body.error_description}` : '';
      throw new ExchangeError(`The provider answered ${response.status}${providerError ? ` ${providerError}` : ''}${description}`, providerError);
    }
    return body;
  }
}

function userinfoAccount(body: Record<string, unknown>): ProviderAccount | undefined {
  if (typeof body.sub !== 'string' || body.sub === '') return undefined;
  const name = [body.name, body.email].find((value): value is string => typeof value === 'string' && value !== '');
  return { externalId: body.sub, displayName: name ?? body.sub };
}

function channelAccount(body: Record<string, unknown>): ProviderAccount | undefined {
  const [channel] = Array.isArray(body.items) ? (body.items as Array<{ id?: unknown; snippet?: { title?: unknown } }>) : [];
  if (!channel || typeof channel.id !== 'string' || channel.id === '') return undefined;
  const title = channel.snippet?.title;
  return { externalId: channel.id, displayName: typeof title === 'string' && title !== '' ? title : channel.id };
}
