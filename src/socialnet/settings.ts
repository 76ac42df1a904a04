/** The social network's settings: its webhook (handshake and signatures) and its Graph API, where messenger answers go. */
import { z } from 'zod';

/** The social network's own Graph API (SOCIALNET_GRAPH_URL, SOCIALNET_GRAPH_VERSION unset; tests, the seed tool). */
export const DEFAULT_SOCIALNET_GRAPH = { graphUrl: 'https://graph.facebook.com', graphVersion: 'v25.0' } as const;

/** The social network's webhook settings; unset, every handshake and signed call is refused (403). */
export interface SocialnetSettings {
  /** SOCIALNET_VERIFY_TOKEN: what the network sends in `hub.verify_token` when it checks the subscription. */
  verifyToken: string | undefined;
  /** SOCIALNET_APP_SECRET: the key of the network's signatures (X-Hub-Signature-256, signed_request). */
  appSecret: string | undefined;
  /** SOCIALNET_REPLAY_WINDOW_SECONDS: how long the hash of a processed delivery is kept; a copy within it is ignored. */
  replayWindowMs: number;
  /** SOCIALNET_REMOVAL_MAX_AGE_SECONDS: how old (by its issued_at) a data-removal signed_request may be. */
  removalMaxAgeMs: number;
}

/** Where the social network's send API is (messenger answers, src/chat/messenger/). */
export interface SocialnetGraphSettings {
  /** SOCIALNET_GRAPH_URL: the network's Graph API (its simulator in tests). */
  graphUrl: string;
  /** SOCIALNET_GRAPH_VERSION: the Graph API version called, such as v25.0. */
  graphVersion: string;
}

export const socialnetEnvironment = z.object({
  SOCIALNET_VERIFY_TOKEN: z.string().min(16, 'must be at least 16 characters').max(256).optional(),
  SOCIALNET_APP_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  // Longer than the network keeps retrying a delivery: a retry or replay within it is ignored.
  SOCIALNET_REPLAY_WINDOW_SECONDS: z.coerce.number().int().min(3600).max(90 * 24 * 3600).default(3 * 24 * 3600),
  SOCIALNET_REMOVAL_MAX_AGE_SECONDS: z.coerce.number().int().min(60).max(30 * 24 * 3600).default(24 * 3600),
  SOCIALNET_GRAPH_URL: z
    .string()
    .url('must be an absolute URL such as https://graph.facebook.com')
    .regex(/^https?:\/\/[^?#]*[^/?#]$/, 'must be http(s), without a trailing slash, query or fragment')
    .default(DEFAULT_SOCIALNET_GRAPH.graphUrl),
  SOCIALNET_GRAPH_VERSION: z.string().regex(/^v\d{1,3}\.\d{1,3}$/, 'must be a Graph API version such as v25.0').default(DEFAULT_SOCIALNET_GRAPH.graphVersion),
});

type SocialnetEnvironment = z.output<typeof socialnetEnvironment>;

export function socialnetSettingsOf(env: SocialnetEnvironment): SocialnetSettings {
  return {
    verifyToken: env.SOCIALNET_VERIFY_TOKEN,
    appSecret: env.SOCIALNET_APP_SECRET,
    replayWindowMs: env.SOCIALNET_REPLAY_WINDOW_SECONDS * 1000,
    removalMaxAgeMs: env.SOCIALNET_REMOVAL_MAX_AGE_SECONDS * 1000,
  };
}

export function socialnetGraphSettingsOf(env: SocialnetEnvironment): SocialnetGraphSettings {
  return { graphUrl: env.SOCIALNET_GRAPH_URL, graphVersion: env.SOCIALNET_GRAPH_VERSION };
}
