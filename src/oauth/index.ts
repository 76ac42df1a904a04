/**
 * Linking a user's accounts at OAuth providers (the search provider and the video platform), in three
 * steps: a flow is started for the user (a single-use state and a PKCE challenge); the provider's
 * redirect is checked (the state is used up, the code exchanged for tokens, the account read) and held
 * as a pending link of the user who started the flow, which that user's front end finds again with
 * their key (the browser alone saw the search provider's callback); that user confirms it, and only
 * then is the account linked on their social logins, with the tokens sealed under SECRETS_KEY. The
 * confirmation is what binds the provider account to the user: whoever consented with the user's state
 * chose the account, and the user sees which one before it is theirs.
 */
import { UniqueConstraintError, type Sequelize } from 'sequelize';
import type { components } from '../../sdk/schema.js';
import type { AccountModels, SocialLoginRow } from '../accounts/models.js';
import { SecretBox } from '../security/secret-box.js';
import { isExpired, PendingLinks, type PendingLinkRow, type SealedTokens } from './pending-links.js';
import { HttpOAuthProvider, type LinkableProvider, type OAuthProvider, type ProviderAccount, type TokenSet } from './providers.js';
import type { OAuthClientSettings, OAuthProviderSettings } from './settings.js';
import { OAuthStates, type StateRefusal } from './states.js';

export { ExchangeError, type LinkableProvider } from './providers.js';

export type SocialLogin = components['schemas']['SocialLogin'];
export type Authorization = components['schemas']['SocialLoginAuthorization'];
/** A pending link as the callbacks answer it, less where to confirm it (the handler knows the address). */
export type PendingLink = Omit<components['schemas']['PendingSocialLogin'], 'confirm_url'>;

export type Completion = { pending: PendingLink } | { refused: StateRefusal } | { taken: true };
export type Confirmation = { linked: SocialLogin } | { unknown: true } | { expired: true } | { taken: LinkableProvider };

/** How long a pending link waits for its confirmation unless OAUTH_PENDING_LINK_SECONDS says otherwise. */
export const DEFAULT_PENDING_LINK_MS = 10 * 60_000;

export interface OAuthSettings {
  /** SECRETS_KEY: seals the linked accounts' tokens. */
  secretsKey: string | undefined;
  oauth: OAuthProviderSettings;
  /** OAUTH_PENDING_LINK_SECONDS, in milliseconds. */
  oauthPendingLinkMs?: number;
}

/** The environment variables each provider needs, beyond its defaults. */
const REQUIRED: Record<LinkableProvider, Array<[keyof OAuthClientSettings, string]>> = {
  searchnet: [
    ['clientId', 'SEARCHNET_CLIENT_ID'],
    ['clientSecret', 'SEARCHNET_CLIENT_SECRET'],
  ],
  socialvideo: [
    ['clientId', 'SOCIALVIDEO_CLIENT_ID'],
    ['clientSecret', 'SOCIALVIDEO_CLIENT_SECRET'],
    ['redirectUri', 'SOCIALVIDEO_REDIRECT_URI'],
  ],
};

export class SocialLinks {
  private readonly box: SecretBox | undefined;
  private readonly states: OAuthStates | undefined;
  private readonly pending: PendingLinks;
  private readonly providers = new Map<LinkableProvider, OAuthProvider>();

  constructor(
    sequelize: Sequelize,
    private readonly accounts: AccountModels,
    private readonly settings: OAuthSettings,
  ) {
    this.box = settings.secretsKey ? SecretBox.fromKey(settings.secretsKey) : undefined;
    this.states = this.box && settings.secretsKey ? new OAuthStates(sequelize, this.box, settings.secretsKey) : undefined;
    this.pending = new PendingLinks(sequelize, settings.oauthPendingLinkMs ?? DEFAULT_PENDING_LINK_MS);
    for (const name of ['searchnet', 'socialvideo'] as const) {
      const client = settings.oauth[name];
      if (this.missingFor(name).length === 0 && client.clientId && client.clientSecret) {
        this.providers.set(name, new HttpOAuthProvider(name, { ...client, clientId: client.clientId, clientSecret: client.clientSecret }));
      }
    }
  }

  /** The variables this deployment lacks to link accounts of `provider`; empty when it can. */
  missingFor(provider: LinkableProvider): string[] {
    const missing = REQUIRED[provider].filter(([setting]) => !this.settings.oauth[provider][setting]).map(([, variable]) => variable);
    return this.settings.secretsKey ? missing : [...missing, 'SECRETS_KEY'];
  }

  /** Starts a flow; `apiCallbackUrl` is where searchnet sends the browser back unless configured otherwise. */
  async start(userId: number, provider: LinkableProvider, apiCallbackUrl: string): Promise<Authorization> {
    const { oauthProvider, states } = this.ready(provider);
    const redirectUri = this.settings.oauth[provider].redirectUri ?? apiCallbackUrl;
    const issued = await states.issue(userId, provider, redirectUri);
    return {
      provider,
      authorization_url: oauthProvider.authorizationUrl({ state: issued.state, redirectUri, codeChallenge: issued.codeChallenge }),
      redirect_uri: redirectUri,
      state: issued.state,
      expires_at: issued.expiresAt.toISOString(),
    };
  }

  /**
   * Checks a provider's redirect and holds what it brings as a pending link of the user who started the
   * flow; nothing is linked yet. `userId` is the caller when the callback is authenticated (the state
   * must be theirs). An account already linked to another user is `taken` at once. Throws ExchangeError
   * when the provider's token or account endpoint fails; the state is used up by then, so the user
   * starts again.
   */
  async complete(provider: LinkableProvider, code: string, state: string, userId?: number): Promise<Completion> {
    const { oauthProvider, states } = this.ready(provider);
    const consumed = await states.consume(state, provider, userId);
    if (typeof consumed === 'string') return { refused: consumed };
    const tokens = await oauthProvider.exchange({ code, redirectUri: consumed.redirectUri, codeVerifier: consumed.codeVerifier });
    const account = await oauthProvider.account(tokens.accessToken);
    if (await this.linkedToAnother(consumed.userId, provider, account.externalId)) return { taken: true };
    const held = await this.pending.hold(consumed.userId, provider, account, this.sealed(tokens));
    return { pending: pendingViewOf(held) };
  }

  /**
   * Links the pending link `id` of `userId`. Someone else's is `unknown`, like one that does not exist;
   * a confirmed one answers the link as it stands (a repeated confirmation changes nothing); one whose
   * account another user linked meanwhile is `taken`, and discarded.
   */
  async confirm(userId: number, id: string): Promise<Confirmation> {
    const held = await this.pending.ownedBy(userId, id);
    if (!held) return { unknown: true };
    if (held.confirmed_at) return this.current(held);
    if (isExpired(held)) return { expired: true };
    const account = { externalId: held.external_id, displayName: held.display_name };
    const outcome = await this.link(userId, held.provider, account, { ...held, access_token_sealed: held.access_token_sealed! });
    if ('taken' in outcome) {
      await this.pending.discard(held.id);
      return { taken: held.provider };
    }
    await this.pending.confirmed(held.id);
    return outcome;
  }

  /** What waits for the confirmation of `userId`, newest first (never another user's, never a token). */
  async waitingFor(userId: number): Promise<PendingLink[]> {
    return (await this.pending.waitingFor(userId)).map(pendingViewOf);
  }

  /** The provider reported an error: the state, if genuine (and the caller's, when given), cannot be used any more. */
  async abandon(provider: LinkableProvider, state: string | undefined, userId?: number): Promise<void> {
    if (state && this.states) await this.states.discard(state, provider, userId);
  }

  /** Housekeeping: pending links past their expiry; returns how many rows went. */
  async purgeExpired(): Promise<number> {
    return this.pending.purgeExpired();
  }

  private sealed(tokens: TokenSet): SealedTokens {
    const box = this.box!;
    return {
      access_token_sealed: box.seal(tokens.accessToken),
      refresh_token_sealed: tokens.refreshToken ? box.seal(tokens.refreshToken) : null,
      token_expires_at: tokens.expiresAt ?? null,
      scope: tokens.scope?.slice(0, 1024) ?? null,
    };
  }

  private async linkedToAnother(userId: number, provider: LinkableProvider, externalId: string): Promise<boolean> {
    const existing = (await this.accounts.SocialLogin.findOne({ where: { provider, external_id: externalId }, raw: true })) as SocialLoginRow | null;
    return existing !== null && existing.user_id !== userId;
  }

  private async current(held: PendingLinkRow): Promise<Confirmation> {
    const where = { provider: held.provider, external_id: held.external_id, user_id: held.user_id };
    const row = (await this.accounts.SocialLogin.findOne({ where, raw: true })) as SocialLoginRow | null;
    return row ? { linked: viewOf(row) } : { unknown: true };
  }

  private async link(userId: number, provider: LinkableProvider, account: ProviderAccount, tokens: SealedTokens): Promise<{ linked: SocialLogin } | { taken: true }> {
    const where = { provider, external_id: account.externalId };
    const existing = (await this.accounts.SocialLogin.findOne({ where, raw: true })) as SocialLoginRow | null;
    if (existing && existing.user_id !== userId) return { taken: true };
    const values = {
      display_name: account.displayName.slice(0, 255),
      access_token_sealed: tokens.access_token_sealed,
      // A provider sends a refresh token on the first consent only: keep the one held until a new one comes.
      refresh_token_sealed: tokens.refresh_token_sealed ?? existing?.refresh_token_sealed ?? null,
      token_expires_at: tokens.token_expires_at,
      scope: tokens.scope,
    };
    if (existing) {
      await this.accounts.SocialLogin.update(values, { where: { id: existing.id } });
      return { linked: viewOf({ ...existing, ...values }) };
    }
    try {
      const linkedAt = new Date();
      await this.accounts.SocialLogin.create({ ...where, user_id: userId, linked_at: linkedAt, ...values });
      return { linked: viewOf({ provider, external_id: account.externalId, display_name: values.display_name, linked_at: linkedAt }) };
    } catch (error) {
      // Linked at the same moment by another confirmation: by this user (retry as an update) or another one.
      if (error instanceof UniqueConstraintError) return this.link(userId, provider, account, tokens);
      throw error;
    }
  }

  private ready(provider: LinkableProvider): { oauthProvider: OAuthProvider; states: OAuthStates } {
    const oauthProvider = this.providers.get(provider);
    if (!oauthProvider || !this.states) throw new Error(`OAuth with ${provider} is not configured (${this.missingFor(provider).join(', ')})`);
    return { oauthProvider, states: this.states };
  }
}

function viewOf(row: Pick<SocialLoginRow, 'provider' | 'external_id' | 'display_name' | 'linked_at'>): SocialLogin {
  return { provider: row.provider, external_id: row.external_id, display_name: row.display_name, linked_at: new Date(row.linked_at).toISOString() };
}

function pendingViewOf(row: Pick<PendingLinkRow, 'id' | 'provider' | 'external_id' | 'display_name' | 'expires_at'>): PendingLink {
  return {
    pending_link_id: row.id,
    provider: row.provider,
    external_id: row.external_id,
    display_name: row.display_name,
    expires_at: new Date(row.expires_at).toISOString(),
  };
}

export function createSocialLinks(sequelize: Sequelize, accounts: AccountModels, settings: OAuthSettings): SocialLinks {
  return new SocialLinks(sequelize, accounts, settings);
}
