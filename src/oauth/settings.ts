/** The OAuth providers whose accounts users may link (SEARCHNET_*, SOCIALVIDEO_*), and how long a pending link waits. */
import { z } from 'zod';
import { endpoint } from '../env-values.js';

/** Palanque as a client of an OAuth 2.0 provider; unset credentials leave the provider off. */
export interface OAuthClientSettings {
  clientId: string | undefined;
  clientSecret: string | undefined;
  authorizeUrl: string;
  tokenUrl: string;
  /** Where the account's id and name are read with the access token. */
  profileUrl: string;
  /** Where the provider sends the browser back; unset, the API's own callback. */
  redirectUri: string | undefined;
}

/** The providers' clients, by provider. */
export interface OAuthProviderSettings {
  searchnet: OAuthClientSettings;
  socialvideo: OAuthClientSettings;
}

export const oauthEnvironment = z.object({
  SEARCHNET_CLIENT_ID: z.string().min(1).max(512).optional(),
  SEARCHNET_CLIENT_SECRET: z.string().min(1).max(512).optional(),
  SEARCHNET_AUTHORIZE_URL: endpoint.default('https://accounts.google.com/o/oauth2/v2/auth'),
  SEARCHNET_TOKEN_URL: endpoint.default('https://oauth2.googleapis.com/token'),
  SEARCHNET_USERINFO_URL: endpoint.default('https://openidconnect.googleapis.com/v1/userinfo'),
  SOCIALVIDEO_CLIENT_ID: z.string().min(1).max(512).optional(),
  SOCIALVIDEO_CLIENT_SECRET: z.string().min(1).max(512).optional(),
  SOCIALVIDEO_REDIRECT_URI: endpoint.optional(),
  SOCIALVIDEO_AUTHORIZE_URL: endpoint.default('https://accounts.google.com/o/oauth2/v2/auth'),
  SOCIALVIDEO_TOKEN_URL: endpoint.default('https://oauth2.googleapis.com/token'),
  SOCIALVIDEO_CHANNELS_URL: endpoint.default('https://www.googleapis.com/youtube/v3/channels'),
  OAUTH_PENDING_LINK_SECONDS: z.coerce.number().int().min(60).max(24 * 3600).default(600),
});

export function oauthProvidersOf(env: z.output<typeof oauthEnvironment>): OAuthProviderSettings {
  return {
    searchnet: {
      clientId: env.SEARCHNET_CLIENT_ID,
      clientSecret: env.SEARCHNET_CLIENT_SECRET,
      authorizeUrl: env.SEARCHNET_AUTHORIZE_URL,
      tokenUrl: env.SEARCHNET_TOKEN_URL,
      profileUrl: env.SEARCHNET_USERINFO_URL,
      redirectUri: undefined,
    },
    socialvideo: {
      clientId: env.SOCIALVIDEO_CLIENT_ID,
      clientSecret: env.SOCIALVIDEO_CLIENT_SECRET,
      authorizeUrl: env.SOCIALVIDEO_AUTHORIZE_URL,
      tokenUrl: env.SOCIALVIDEO_TOKEN_URL,
      profileUrl: env.SOCIALVIDEO_CHANNELS_URL,
      redirectUri: env.SOCIALVIDEO_REDIRECT_URI,
    },
  };
}
