/**
 * Configuration comes from the environment only (plus an optional `.env` file, loaded by the entry
 * points). It is validated once at start: a bad value stops the process with a message naming the
 * variable, instead of failing later in a request.
 */
import proxyAddr from 'proxy-addr';
import { z } from 'zod';
import { SIGNUP_MODES, type AccountSettings } from './accounts/settings.js';
import type { InvitationSettings } from './entities/invitations.js';
import type { MailSettings } from './mail/mailer.js';
import { checkVapidKeys, type VapidKeys } from './push/sender.js';
import type { OutboundPolicy } from './webhooks/outbound-http.js';
import type { WebhookSettings } from './webhooks/settings.js';
import { DEFAULT_BUDGETS, DEFAULT_SIGNED_CALLBACKS, type Budget, type RateLimitBudgets, type SignedCallbackBudget } from './http/rate-limits.js';

/** The pinned upstream copy of the municipality list (see ../shared/data/README.md). */
export const DEFAULT_MUNICIPIOS_SOURCE =
  'https://raw.githubusercontent.com/kelvins/municipios-brasileiros/194cfcc3062dfc8a8f55bfdc9a630b3aee1f59f4/csv/municipios.csv';
export const DEFAULT_MUNICIPIOS_SHA256 = '4c7cd386e86e152080b01f439da1407e6e5ee7f41372587f2edae0f69dd8b938';

/** The electoral court's open-data hosts, where its candidacy files are published. */
export const DEFAULT_ELECTIONS_IMPORT_HOSTS = ['cdn.tse.jus.br', 'dadosabertos.tse.jus.br'] as const;
/** The social network's own Graph API (SOCIALNET_GRAPH_URL, SOCIALNET_GRAPH_VERSION unset; tests, the seed tool). */
/** REQUEST_DEADLINE_MS unless set (and for apps built without a configuration: the tests'). */
export const DEFAULT_REQUEST_DEADLINE_MS = 30_000;

export const DEFAULT_SOCIALNET_GRAPH = { graphUrl: 'https://graph.facebook.com', graphVersion: 'v25.0' } as const;

/** A host name (or an IPv4 address), as a URL's host is compared with it. */
const HOST_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** What a server process does (PALANQUE_ROLE). */
export const SERVER_ROLES = ['all', 'api', 'worker'] as const;
export type ServerRole = (typeof SERVER_ROLES)[number];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Settings checked against each other (docs/operations.md, "Settings checked against each other"). A
 * pasted recipient list (`recipient_list_str` of sendSmsCampaign and previewSmsCampaign) travels in the
 * JSON body, so BODY_LIMIT bounds how many numbers it can carry, as the contract's maxLength does.
 */
export const CAMPAIGN_BODY = {
  /** `recipient_list_str`'s maxLength in spec/openapi.yaml (test/config-consistency.test.ts holds them equal). */
  listMaxCharacters: 200_000,
  /** A number as pasted from a spreadsheet: `+5521987654321` and a line break, 15 characters. */
  numberCharacters: 15,
  /** The same in the JSON body: the line break is written `\n`, 16 bytes. */
  numberBytes: 16,
  /**
   * The rest of the body at most: the message (1,600 characters, up to 4 bytes each in UTF-8), the title
   * (120) and the declarations, with room to spare. It is also the smallest BODY_LIMIT accepted.
   */
  otherBytes: 16 * 1024,
} as const;

/** The most pasted numbers a body of `bodyLimit` bytes can carry, and the most the contract's maxLength lets through. */
export function pastedListCapacity(bodyLimit: number): { byBodyLimit: number; byContract: number } {
  return {
    byBodyLimit: Math.max(0, Math.floor((bodyLimit - CAMPAIGN_BODY.otherBytes) / CAMPAIGN_BODY.numberBytes)),
    byContract: Math.floor(CAMPAIGN_BODY.listMaxCharacters / CAMPAIGN_BODY.numberCharacters),
  };
}

const booleanString = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
  .transform((value) => ['true', '1', 'yes'].includes(value));

/** `1mb`, `512kb`, `100b` or a number of bytes. */
const byteSize = z.string().transform((value, ctx) => {
  const match = /^(\d+)\s*(b|kb|mb)?$/i.exec(value.trim());
  if (!match) {
    ctx.addIssue({ code: 'custom', message: 'must be a size such as 1mb, 512kb or a number of bytes' });
    return z.NEVER;
  }
  const units = { b: 1, kb: 1024, mb: 1024 * 1024 } as const;
  return Number(match[1]) * units[(match[2]?.toLowerCase() ?? 'b') as keyof typeof units];
});

/** Express's `trust proxy` setting: false, true, a hop count, or addresses/subnets (checked now, not at start). */
const trustProxy = z.string().transform((value, ctx): boolean | number | string => {
  const trimmed = value.trim();
  if (['', 'false', '0', 'no'].includes(trimmed.toLowerCase())) return false;
  if (['true', 'yes'].includes(trimmed.toLowerCase())) return true;
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  try {
    proxyAddr.compile(trimmed.split(/\s*,\s*/));
    return trimmed;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be true, false, a hop count, or addresses/subnets such as loopback, 10.0.0.0/8' });
    return z.NEVER;
  }
});

/** A rate-limit budget: `<requests>/<seconds>` (e.g. `20/60`), or `off`. */
const budget = z
  .string()
  .regex(/^(off|[1-9]\d{0,6}\/[1-9]\d{0,5})$/i, 'must be <requests>/<seconds> such as 20/60, or off')
  .transform((value): Budget | null => {
    if (value.toLowerCase() === 'off') return null;
    const [points, seconds] = value.split('/').map(Number) as [number, number];
    return { points, seconds };
  })
  .optional();

/** An assistant the deployment offers (the API root lists them); the bounds are the contract's. */
const assistant = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,49}$/, 'must be 1-50 lower-case letters, digits, _ or -, starting with a letter or digit'),
    name: z.string().trim().min(1, 'must not be blank').max(100),
    description: z.string().trim().max(500).default(''),
  })
  .strict();

/** ASSISTANTS: a JSON array of `{"id", "name", "description"}`, ids unique. */
const assistants = z
  .string()
  .transform((value, ctx): unknown => {
    try {
      return JSON.parse(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON array such as [{"id":"estrategista","name":"Estrategista","description":"..."}]' });
      return z.NEVER;
    }
  })
  .pipe(
    z
      .array(assistant, { message: 'must be a JSON array of {"id", "name", "description"} objects' })
      .max(50)
      .refine((list) => new Set(list.map((item) => item.id)).size === list.length, 'must not repeat an id'),
  );

export type Assistant = z.infer<typeof assistant>;

/** Usernames: no `@`, so that a login name is either a username or an e-mail address, never both. */
export const USERNAME_PATTERN = /^[A-Za-z0-9._+-]{1,150}$/;

/** An http(s) endpoint of another service; a query is allowed (some providers need one). */
const endpoint = z
  .string()
  .url('must be an absolute URL')
  .regex(/^https?:\/\/[^#\s]+$/, 'must be an http(s) URL without a fragment');

const environmentSchema = z.object({
  NODE_ENV: z.string().default('development'),
  PORT: z
    .string()
    .regex(/^\d{1,5}$/, 'must be a port number')
    .transform(Number)
    .pipe(z.number().max(65535, 'must be a port number up to 65535'))
    .optional(),
  HOST: z.string().min(1).default('127.0.0.1'),
  BASE_PATH: z
    .string()
    .regex(/^(\/[A-Za-z0-9._~-]+)*$/, 'must be empty or a path such as /v1, with no trailing slash')
    .default(''),
  PUBLIC_URL: z
    .string()
    .url('must be an absolute URL such as https://api.palanque.app')
    .regex(/^https?:\/\/[^?#]*[^/?#]$/, 'must be http(s), without a trailing slash, query or fragment')
    .optional(),
  FRONTEND_RESET_URL: z
    .string()
    .url('must be an absolute URL such as https://app.palanque.app/reset-password')
    .regex(/^https?:\/\/[^#]*$/, 'must be http(s), without a fragment')
    .optional(),
  FRONTEND_VERIFY_URL: z
    .string()
    .url('must be an absolute URL such as https://app.palanque.app/confirm-email')
    .regex(/^https?:\/\/[^#]*$/, 'must be http(s), without a fragment')
    .optional(),
  FRONTEND_SIGNUP_URL: z
    .string()
    .url('must be an absolute URL such as https://app.palanque.app/sign-up')
    .regex(/^https?:\/\/[^#]*$/, 'must be http(s), without a fragment')
    .optional(),
  FRONTEND_UNLOCK_URL: z
    .string()
    .url('must be an absolute URL such as https://app.palanque.app/login')
    .regex(/^https?:\/\/[^#]*$/, 'must be http(s), without a fragment')
    .optional(),
  TRUST_PROXY: trustProxy.optional(),
  DATABASE_URL: z
    .string()
    .regex(/^(sqlite:|postgres:\/\/|postgresql:\/\/)/, 'must start with sqlite: or postgres://')
    .default('sqlite:data/palanque.sqlite'),
  // Behind a transaction pooler (docs/operations.md): the revocation listener's own connection (LISTEN
  // holds a session), and whether the Reader names its prepared statements.
  DATABASE_DIRECT_URL: z.string().regex(/^(postgres:\/\/|postgresql:\/\/)/, 'must start with postgres://').optional(),
  DATABASE_PREPARED_STATEMENTS: booleanString.default(true),
  DB_POOL_MAX: z.coerce.number().int().min(2, 'must be at least 2 (the migrations hold one connection for their lock and work on another)').max(1000).default(10),
  DB_READ_POOL_MAX: z.coerce.number().int().min(1).max(1000).optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  VALIDATE_RESPONSES: booleanString.optional(),
  BODY_LIMIT: byteSize.optional(),
  MUNICIPIOS_SOURCE: z.string().min(1).default(DEFAULT_MUNICIPIOS_SOURCE),
  MUNICIPIOS_SHA256: z
    .string()
    .regex(/^([0-9a-f]{64})?$/i, 'must be a sha256 in hex, or empty to skip the check')
    .default(DEFAULT_MUNICIPIOS_SHA256),
  MUNICIPIOS_REFRESH_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  CORS_ORIGINS: z
    .string()
    .transform((value) => value.split(',').map((origin) => origin.trim()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^https?:\/\/[^/?#\s]+$/, 'must be a comma-separated list of origins such as https://app.palanque.app')))
    .optional(),
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters (it guards /metrics)').optional(),
  // The build's commit, set by the deployment (palanque_build_info's `commit` label).
  GIT_COMMIT: z.string().regex(/^[0-9a-f]{7,40}$/i, 'must be a git commit hash, 7 to 40 hex digits').optional(),
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(30_000),
  // 0 turns each off; a bound under 100 ms would cancel ordinary work on a loaded machine.
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().refine((ms) => ms === 0 || (ms >= 100 && ms <= 3_600_000), 'must be 0 (off) or 100 to 3600000 milliseconds').default(10_000),
  REQUEST_DEADLINE_MS: z.coerce.number().int().refine((ms) => ms === 0 || (ms >= 100 && ms <= 3_600_000), 'must be 0 (off) or 100 to 3600000 milliseconds').default(DEFAULT_REQUEST_DEADLINE_MS),
  KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(65_000),
  MAX_HEADER_BYTES: z.coerce.number().int().min(1_024).max(1_048_576).default(16_384),
  IDEMPOTENCY_TTL_SECONDS: z.coerce.number().int().min(60).max(30 * 24 * 3600).default(24 * 3600),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL').optional(),
  RATE_LIMIT_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_.-]{1,100}$/, 'must be 1-100 letters, digits or : _ . -')
    .default('palanque:rl'),
  RATE_LIMIT_AUTH: budget,
  RATE_LIMIT_READ: budget,
  RATE_LIMIT_WRITE: budget,
  RATE_LIMIT_CALLBACK: budget,
  RATE_LIMIT_CHECK_EMAIL: budget,
  RATE_LIMIT_SIGNED_CALLBACK: budget,
  RATE_LIMIT_CALLBACKS_PER_MESSAGE: z.coerce.number().int().min(1).max(100).default(DEFAULT_SIGNED_CALLBACKS.perMessage),
  TOKEN_LIFETIME_HOURS: z.coerce.number().int().min(1).max(24 * 365).default(24 * 7),
  // A few seconds: it bounds what a lost revocation notice can cost (src/accounts/key-cache.ts).
  AUTH_CACHE_SECONDS: z.coerce.number().int().min(0).max(60).default(5),
  LOGIN_MAX_FAILURES: z.coerce.number().int().min(1).max(1000).default(5),
  LOGIN_LOCK_WINDOW_SECONDS: z.coerce.number().int().min(1).max(24 * 3600).default(15 * 60),
  // High enough for an office behind one address: a lock after this many failures across identifiers.
  LOGIN_ADDRESS_MAX_FAILURES: z.coerce.number().int().min(1).max(100_000).default(100),
  // Seconds, not minutes: the owner of a targeted identifier waits at most this from another address.
  LOGIN_MAX_DELAY_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  PASSWORD_RESET_LIFETIME_MINUTES: z.coerce.number().int().min(1).max(24 * 60).default(30),
  // argon2id's memory in steps of 2x: 17 is OWASP's first choice (19 MiB, t=2, p=1) in production; tests
  // lower it to stay fast (see argon2ParametersFor in accounts/passwords.ts).
  PASSWORD_HASH_COST: z.coerce.number().int().min(10).max(20).default(17),
  // Length over composition (src/accounts/password-policy.ts): OWASP's floor is 8, NIST's 15 for a password used alone.
  PASSWORD_MIN_LENGTH: z.coerce.number().int().min(8).max(64).default(12),
  // Who may sign up (src/accounts/signup.ts): invitations only unless a deployment opens it.
  SIGNUP: z.enum(SIGNUP_MODES).default('invite'),
  EMAIL_VERIFICATION_LIFETIME_HOURS: z.coerce.number().int().min(1).max(30 * 24).default(48),
  SIGNUP_RESEND_SECONDS: z.coerce.number().int().min(1).max(24 * 3600).default(60),
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(100 * 366).default(5 * 365),
  // How long the entities' edit history is kept (src/entities/history.ts); five years, as the audit log.
  HISTORY_RETENTION_DAYS: z.coerce.number().int().min(1).max(100 * 366).default(5 * 365),
  INVITATION_LIFETIME_DAYS: z.coerce.number().int().min(1).max(90).default(7),
  TEAM_MAX_OPEN_INVITATIONS: z.coerce.number().int().min(1).max(1000).default(20),
  ADMIN_USERNAME: z.string().regex(USERNAME_PATTERN, 'must be 1-150 letters, digits or . _ + - (no @)').optional(),
  ADMIN_EMAIL: z.string().email('must be an e-mail address').optional(),
  ADMIN_PASSWORD: z.string().min(12, 'must be at least 12 characters').max(256).optional(),
  SMTP_URL: z.string().regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL').optional(),
  MAIL_FROM: z.string().min(3).default('Palanque <no-reply@palanque.app>'),
  MAIL_DIR: z.string().min(1).default('data/mail'),
  ASSISTANTS: assistants.optional(),
  DOCS_URL: z
    .string()
    .url('must be an absolute URL such as https://palanque.app/docs/api')
    .regex(/^https?:\/\//, 'must be an http(s) URL')
    .optional(),
  SECRETS_KEY: z
    .string()
    .refine((value) => Buffer.from(value, 'base64').length === 32, 'must be 32 bytes, base64-encoded (openssl rand -base64 32)')
    .optional(),
  SMS_PROVIDER_URL: z
    .string()
    .url('must be an absolute URL such as https://api.twilio.com')
    .regex(/^https?:\/\/[^?#]*[^/?#]$/, 'must be http(s), without a trailing slash, query or fragment')
    .default('https://api.twilio.com'),
  SMS_SEND_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  SMS_MAX_RECIPIENTS: z.coerce.number().int().min(1).max(100_000).default(10_000),
  // A month at most: a receipt later than that is not coming.
  SMS_RECEIPT_TIMEOUT_HOURS: z.coerce.number().int().min(1).max(720).default(72),
  // Days after the certification (diplomação) of an entity's election before its contacts are erased
  // (src/messaging/contact-retention.ts): a setting of the deployment, not a figure of the law.
  CONTACT_RETENTION_DAYS_AFTER_CERTIFICATION: z.coerce.number().int().min(31).max(10 * 366).default(180),
  NEWS_MAX_OPEN_REQUESTS: z.coerce.number().int().min(1).max(100_000).default(100),
  // pg-boss keeps a job's timeout under 24 hours.
  JOB_TIMEOUT_SECONDS: z.coerce.number().int().min(5).max(86_000).default(900),
  // What this process does (docs/operations.md, "Roles: api and worker"): all, or one half on PostgreSQL.
  PALANQUE_ROLE: z.enum(SERVER_ROLES, { message: `must be one of ${SERVER_ROLES.join(', ')}` }).default('all'),
  // Jobs one process runs at once (of each kind on pg-boss); the queue's own default when unset.
  JOB_CONCURRENCY: z.coerce.number().int().min(1).max(100).optional(),
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
  ELECTIONS_PANEL_URL: z
    .string()
    .url('must be an absolute URL such as https://painel.example.org')
    .regex(/^https?:\/\/[^?#]*[^/?#]$/, 'must be http(s), without a trailing slash, query or fragment')
    .optional(),
  VAPID_PUBLIC_KEY: z.string().regex(/^[A-Za-z0-9_-]{87}$/, 'must be a VAPID public key, base64url (npx web-push generate-vapid-keys)').optional(),
  VAPID_PRIVATE_KEY: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be a VAPID private key, base64url (npx web-push generate-vapid-keys)').optional(),
  VAPID_SUBJECT: z.string().regex(/^(mailto:|https:\/\/)/, 'must be a mailto: or https: URL the push services may contact').default('mailto:no-reply@palanque.app'),
  // Tests and the sandbox only: webhooks and pushes may go to private and loopback addresses.
  OUTBOUND_ALLOW_PRIVATE_ADDRESSES: booleanString.default(false),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  WEBHOOK_RETRY_DELAY_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  WEBHOOK_RETRIES: z.coerce.number().int().min(0).max(20).default(10),
  WEBHOOK_DISABLE_AFTER_SECONDS: z.coerce.number().int().min(0).max(30 * 24 * 3600).default(24 * 3600),
  ELECTIONS_IMPORT_HOSTS: z
    .string()
    .transform((value) => value.split(',').map((host) => host.trim().toLowerCase()).filter(Boolean))
    // A host is downloaded from over https; `http://host` lets it be plain http (the tests' loopback servers).
    .pipe(z.array(z.string().refine((entry) => HOST_NAME.test(entry.replace(/^http:\/\//, '')), 'must be a comma-separated list of host names such as cdn.tse.jus.br, each written http://host where plain http is allowed')))
    .optional(),
  ELECTIONS_IMPORT_MAX_RECORD_BYTES: z.coerce.number().int().min(1024).max(1024 * 1024).default(8192),
}).superRefine((env, ctx) => {
  // In production, links in e-mails must not follow a client's Host header, and answers kept for
  // Idempotency-Key replays (with the personal data they hold) must not sit in clear.
  if (env.NODE_ENV === 'production') {
    if (!env.PUBLIC_URL) {
      ctx.addIssue({ code: 'custom', path: ['PUBLIC_URL'], message: 'is required when NODE_ENV=production (the address e-mailed links and pagination links are built on; without it they would follow the Host header a client sends)' });
    }
    if (!env.SECRETS_KEY) {
      ctx.addIssue({ code: 'custom', path: ['SECRETS_KEY'], message: 'is required when NODE_ENV=production (it seals stored secrets and the answers kept for Idempotency-Key replays; openssl rand -base64 32)' });
    }
  }
  if (Boolean(env.VAPID_PUBLIC_KEY) !== Boolean(env.VAPID_PRIVATE_KEY)) {
    ctx.addIssue({ code: 'custom', path: [env.VAPID_PUBLIC_KEY ? 'VAPID_PRIVATE_KEY' : 'VAPID_PUBLIC_KEY'], message: 'must be set with its other half (VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY come as a pair)' });
  } else if (env.VAPID_PUBLIC_KEY && env.VAPID_PRIVATE_KEY) {
    try {
      checkVapidKeys({ publicKey: env.VAPID_PUBLIC_KEY, privateKey: env.VAPID_PRIVATE_KEY, subject: env.VAPID_SUBJECT });
    } catch (error) {
      ctx.addIssue({ code: 'custom', path: ['VAPID_PRIVATE_KEY'], message: (error as Error).message });
    }
  }
  checkBodyLimit(env, ctx);
  // A webhook or push try runs inside its job: the queue must not count the job failed (and run it
  // again, sending a second copy) while the try may still be waiting for the endpoint.
  if (env.JOB_TIMEOUT_SECONDS * 1000 < env.WEBHOOK_TIMEOUT_MS) {
    ctx.addIssue({ code: 'custom', path: ['JOB_TIMEOUT_SECONDS'], message: `is ${env.JOB_TIMEOUT_SECONDS} s; must be at least WEBHOOK_TIMEOUT_MS (${env.WEBHOOK_TIMEOUT_MS} ms): a webhook try runs inside its job, and a job that times out first is run again (a second delivery)` });
  }
  // A send job may wait out an earlier call and its margin, list the provider's messages, send, and
  // list again (messaging/sending.ts): the queue must not count it failed meanwhile.
  if (env.PALANQUE_ROLE !== 'all' && env.DATABASE_URL.startsWith('sqlite:')) {
    ctx.addIssue({ code: 'custom', path: ['PALANQUE_ROLE'], message: `must be all on SQLite (${env.PALANQUE_ROLE} needs PostgreSQL: the embedded database belongs to one process, which serves the API and runs the jobs)` });
  }
  const longestSendJobMs = 4 * env.SMS_SEND_TIMEOUT_MS + 4_000;
  if (env.JOB_TIMEOUT_SECONDS * 1000 < longestSendJobMs) {
    ctx.addIssue({ code: 'custom', path: ['JOB_TIMEOUT_SECONDS'], message: `must be at least ${Math.ceil(longestSendJobMs / 1000)} (4 × SMS_SEND_TIMEOUT_MS + 4 s, the longest an SMS send job may take)` });
  }
});

/**
 * BODY_LIMIT against what must fit in a body: refused below CAMPAIGN_BODY.otherBytes (0 would refuse
 * every body: express answers 413 to the smallest), or when it cannot carry a campaign's pasted list of
 * as many numbers as both SMS_MAX_RECIPIENTS and the contract allow (such a list would be refused 413,
 * not 422 naming the cap, and the cap would be a lie).
 */
function checkBodyLimit(env: { BODY_LIMIT?: number; SMS_MAX_RECIPIENTS: number }, ctx: z.RefinementCtx): void {
  if (env.BODY_LIMIT === undefined) return;
  const bytes = env.BODY_LIMIT;
  if (bytes < CAMPAIGN_BODY.otherBytes) {
    ctx.addIssue({ code: 'custom', path: ['BODY_LIMIT'], message: `is ${bytes} bytes; must be at least 16kb (${CAMPAIGN_BODY.otherBytes} bytes): an SMS campaign's longest message with its other fields must fit in a request body` });
    return;
  }
  const { byBodyLimit, byContract } = pastedListCapacity(bytes);
  const wanted = Math.min(env.SMS_MAX_RECIPIENTS, byContract);
  if (byBodyLimit < wanted) {
    const needed = wanted * CAMPAIGN_BODY.numberBytes + CAMPAIGN_BODY.otherBytes;
    ctx.addIssue({
      code: 'custom',
      path: ['BODY_LIMIT'],
      message:
        `is ${bytes} bytes, which carries an SMS campaign of at most ${byBodyLimit} pasted numbers (${CAMPAIGN_BODY.numberBytes} bytes a number plus ${CAMPAIGN_BODY.otherBytes} for the rest), ` +
        `fewer than the ${wanted} that SMS_MAX_RECIPIENTS (${env.SMS_MAX_RECIPIENTS}) and the contract (${byContract}) allow: ` +
        `set BODY_LIMIT to at least ${Math.ceil(needed / 1024)}kb, or SMS_MAX_RECIPIENTS to at most ${byBodyLimit}`,
    });
  }
}

/**
 * Settings that are consistent but may surprise, for the server to log as warnings at start (serve.ts).
 * SMS_MAX_RECIPIENTS above what a pasted list can carry is one: it still applies in full to campaigns to
 * contacts (`mensagem.contatos`), whose numbers are not in the body, so it is not refused.
 */
export function configWarnings(config: Pick<Config, 'bodyLimit' | 'smsMaxRecipients'>): string[] {
  const warnings: string[] = [];
  const { byBodyLimit, byContract } = pastedListCapacity(config.bodyLimit);
  const pasted = Math.min(byBodyLimit, byContract);
  if (config.smsMaxRecipients > pasted) {
    warnings.push(
      `SMS_MAX_RECIPIENTS is ${config.smsMaxRecipients}, but a pasted recipient list (recipient_list_str) carries about ${pasted} numbers at most ` +
        `(${byContract} by the contract's ${CAMPAIGN_BODY.listMaxCharacters} characters, ${byBodyLimit} by BODY_LIMIT, at ${CAMPAIGN_BODY.numberCharacters} characters a number): ` +
        `a longer list is refused (422 max_length, or 413); only campaigns to contacts (mensagem.contatos) reach ${config.smsMaxRecipients}`,
    );
  }
  return warnings;
}

export interface Config {
  env: string;
  port: number;
  host: string;
  basePath: string;
  publicUrl: string | undefined;
  /** FRONTEND_RESET_URL: the front-end page a password-reset e-mail links to (with `email` and `token`); the API's own link when unset. */
  frontendResetUrl: string | undefined;
  /** FRONTEND_VERIFY_URL: the front-end page a sign-up's confirmation e-mail links to (with `token`); the API's own link when unset. */
  frontendVerifyUrl: string | undefined;
  /** FRONTEND_UNLOCK_URL: the front-end login page an unlock mail links to (with `unlock_token`); the mail gives the token alone when unset. */
  frontendUnlockUrl?: string;
  /** FRONTEND_SIGNUP_URL: the front-end sign-up page a team invitation links to (with `invitation` and `email`); without it the mail gives the token for POST /api/auth/signup/. */
  frontendSignUpUrl: string | undefined;
  /** INVITATION_LIFETIME_DAYS and TEAM_MAX_OPEN_INVITATIONS: how long a team invitation stays open, and how many an entity may have open. */
  invitations: InvitationSettings;
  trustProxy: boolean | number | string;
  databaseUrl: string;
  /** DATABASE_DIRECT_URL: PostgreSQL itself, not a pooler, for the one session that LISTENs (key revocations); DATABASE_URL when unset. */
  databaseDirectUrl: string;
  /** DATABASE_PREPARED_STATEMENTS: the Reader's named prepared statements; false behind a transaction pooler that cannot keep them. */
  databasePreparedStatements: boolean;
  /** DB_POOL_MAX: Sequelize's PostgreSQL connections per instance. */
  dbPoolMax: number;
  /** DB_READ_POOL_MAX: the Reader's PostgreSQL connections per instance; two per core when unset. */
  dbReadPoolMax: number | undefined;
  logLevel: (typeof LOG_LEVELS)[number];
  validateResponses: boolean;
  bodyLimit: number;
  municipiosSource: string;
  municipiosSha256: string | undefined;
  /** How often the in-memory municipality list checks the table for changes made elsewhere. */
  municipiosRefreshMs: number;
  shutdownTimeoutMs: number;
  /** Front-end origins allowed by CORS; empty allows none. */
  corsOrigins: string[];
  /** Bearer token for GET /metrics; unset disables the endpoint. */
  metricsToken: string | undefined;
  /** GIT_COMMIT: the commit the build was made from, as palanque_build_info reports it; unknown when unset. */
  gitCommit: string | undefined;
  requestTimeoutMs: number;
  /** DB_STATEMENT_TIMEOUT_MS: a statement running longer is cancelled (503); 0: no bound (db/deadlines.ts). */
  dbStatementTimeoutMs: number;
  /** REQUEST_DEADLINE_MS: an operation still working this long after its request arrived is stopped, rolled back and answered 503; 0: no deadline (http/deadline.ts). */
  requestDeadlineMs: number;
  keepAliveTimeoutMs: number;
  maxHeaderBytes: number;
  /** Shared store for rate limits across instances; memory per instance when unset. */
  redisUrl: string | undefined;
  /** Namespace of the rate-limit keys in Redis: deployments (or tests) sharing one Redis keep apart. */
  rateLimitPrefix: string;
  rateLimits: RateLimitBudgets;
  /** The budget of a signed provider callback's signer (rate-limits.ts chargeSigner); undefined: unlimited once verified. */
  signedCallbacks: SignedCallbackBudget | undefined;
  /** How long an Idempotency-Key and its stored answer are kept. */
  idempotencyTtlMs: number;
  accounts: AccountSettings;
  /** The first admin, created on an empty database (a password is generated when unset). */
  firstAdmin: { username: string; email: string; password: string | undefined };
  mail: MailSettings;
  /** The assistants the API root announces (ASSISTANTS); empty when none. */
  assistants: Assistant[];
  /** Where the API's documentation is published (DOCS_URL); the API root links to it when set. */
  docsUrl: string | undefined;
  socialnet: SocialnetSettings;
  socialnetGraph: SocialnetGraphSettings;
  /** SECRETS_KEY: encrypts the secrets Palanque keeps for later use; without it none can be stored. */
  secretsKey: string | undefined;
  /** VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY, VAPID_SUBJECT: the keys pushes are signed with; without them no push is sent. */
  vapid: VapidKeys | undefined;
  /** Where webhooks and pushes may go: https only in production, public addresses only unless OUTBOUND_ALLOW_PRIVATE_ADDRESSES. */
  outbound: OutboundPolicy;
  /** WEBHOOK_RETRY_DELAY_SECONDS (doubled at each retry), WEBHOOK_RETRIES, WEBHOOK_DISABLE_AFTER_SECONDS (in milliseconds). */
  webhooks: WebhookSettings;
  /** SMS_PROVIDER_URL: the SMS provider's API (its simulator in tests). */
  smsProviderUrl: string;
  /** SMS_SEND_TIMEOUT_MS: how long a call to the SMS provider may take; an earlier call is over once this (and a margin) has passed. */
  smsSendTimeoutMs: number;
  /** SMS_MAX_RECIPIENTS: the most numbers one campaign request may list. */
  smsMaxRecipients: number;
  /** SMS_RECEIPT_TIMEOUT_HOURS, in milliseconds: a message the provider took and sent no receipt for in this long counts as final for its campaign. */
  smsReceiptTimeoutMs: number;
  /** CONTACT_RETENTION_DAYS_AFTER_CERTIFICATION: days after the certification of an entity's election before its contacts are erased (a setting, not a legal figure). */
  contactRetentionDaysAfterCertification: number;
  /** NEWS_MAX_OPEN_REQUESTS: the most news sources one user may have awaiting review. */
  newsMaxOpenRequests: number;
  /** HISTORY_RETENTION_DAYS, in milliseconds: how long the entities' edit history is kept. */
  historyRetentionMs: number;
  /** JOB_TIMEOUT_SECONDS: how long a job may run before the queue counts it failed and retries it (pg-boss). */
  jobTimeoutSeconds: number;
  /** PALANQUE_ROLE: `all` serves the API and runs the jobs; `api` only serves, `worker` only migrates and runs jobs (PostgreSQL). */
  role: ServerRole;
  /** JOB_CONCURRENCY: jobs run at once by this process (pg-boss: of each kind, per fetch); the queue's default when unset. */
  jobConcurrency: number | undefined;
  /** The OAuth providers whose accounts users may link (SEARCHNET_*, SOCIALVIDEO_*). */
  oauth: { searchnet: OAuthClientSettings; socialvideo: OAuthClientSettings };
  /** OAUTH_PENDING_LINK_SECONDS: how long an OAuth callback's pending link waits for its user's confirmation. */
  oauthPendingLinkMs: number;
  /** ELECTIONS_PANEL_URL: the elections panel's API; without it no sync can be queued. */
  electionsPanelUrl: string | undefined;
  /** ELECTIONS_IMPORT_HOSTS: the hosts a candidacy import may download from, over https unless written `http://host` (src/elections/tse/source.ts). */
  electionsImportHosts: string[];
  /** ELECTIONS_IMPORT_MAX_RECORD_BYTES: the longest record a candidacy file may have (src/elections/tse/court-file.ts). */
  electionsImportMaxRecordBytes: number;
}

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

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads and validates the configuration; throws a ConfigError naming every bad variable. */
export function loadConfig(environment: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable means "not set", except MUNICIPIOS_SHA256 where empty deliberately skips the check.
  const present = Object.fromEntries(
    Object.entries(environment).filter(([name, value]) => value !== '' || name === 'MUNICIPIOS_SHA256'),
  );
  const parsed = environmentSchema.safeParse(present);
  if (!parsed.success) {
    // A problem inside a list names its place after the variable, e.g. `ASSISTANTS: (0.id) must be ...`.
    const problems = parsed.error.issues.map((issue) => {
      const within = issue.path.slice(1).map(String).join('.');
      return `${String(issue.path[0])}: ${within ? `(${within}) ` : ''}${issue.message}`;
    });
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const env = parsed.data;
  return {
    env: env.NODE_ENV,
    port: env.PORT ?? 8000,
    host: env.HOST,
    basePath: env.BASE_PATH,
    publicUrl: env.PUBLIC_URL,
    frontendResetUrl: env.FRONTEND_RESET_URL,
    frontendVerifyUrl: env.FRONTEND_VERIFY_URL,
    frontendUnlockUrl: env.FRONTEND_UNLOCK_URL,
    frontendSignUpUrl: env.FRONTEND_SIGNUP_URL,
    invitations: { lifetimeMs: env.INVITATION_LIFETIME_DAYS * 86_400_000, maxOpenPerEntity: env.TEAM_MAX_OPEN_INVITATIONS },
    trustProxy: env.TRUST_PROXY ?? false,
    databaseUrl: env.DATABASE_URL,
    databaseDirectUrl: env.DATABASE_DIRECT_URL ?? env.DATABASE_URL,
    databasePreparedStatements: env.DATABASE_PREPARED_STATEMENTS,
    dbPoolMax: env.DB_POOL_MAX,
    dbReadPoolMax: env.DB_READ_POOL_MAX,
    logLevel: env.LOG_LEVEL,
    // Validate responses everywhere but production unless told otherwise: it catches contract drift in
    // development and tests, and costs CPU where it matters least.
    validateResponses: env.VALIDATE_RESPONSES ?? env.NODE_ENV !== 'production',
    bodyLimit: env.BODY_LIMIT ?? 1024 * 1024,
    municipiosSource: env.MUNICIPIOS_SOURCE,
    municipiosSha256: env.MUNICIPIOS_SHA256 === '' ? undefined : env.MUNICIPIOS_SHA256.toLowerCase(),
    municipiosRefreshMs: env.MUNICIPIOS_REFRESH_SECONDS * 1000,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    corsOrigins: env.CORS_ORIGINS ?? [],
    metricsToken: env.METRICS_TOKEN,
    gitCommit: env.GIT_COMMIT?.toLowerCase(),
    requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
    dbStatementTimeoutMs: env.DB_STATEMENT_TIMEOUT_MS,
    requestDeadlineMs: env.REQUEST_DEADLINE_MS,
    keepAliveTimeoutMs: env.KEEP_ALIVE_TIMEOUT_MS,
    maxHeaderBytes: env.MAX_HEADER_BYTES,
    redisUrl: env.REDIS_URL,
    rateLimitPrefix: env.RATE_LIMIT_PREFIX,
    idempotencyTtlMs: env.IDEMPOTENCY_TTL_SECONDS * 1000,
    rateLimits: {
      auth: pick(env.RATE_LIMIT_AUTH, DEFAULT_BUDGETS.auth),
      read: pick(env.RATE_LIMIT_READ, DEFAULT_BUDGETS.read),
      write: pick(env.RATE_LIMIT_WRITE, DEFAULT_BUDGETS.write),
      callback: pick(env.RATE_LIMIT_CALLBACK, DEFAULT_BUDGETS.callback),
      checkEmail: pick(env.RATE_LIMIT_CHECK_EMAIL, DEFAULT_BUDGETS.checkEmail),
    },
    signedCallbacks: signedCallbacksOf(
      pick(env.RATE_LIMIT_SIGNED_CALLBACK, DEFAULT_SIGNED_CALLBACKS),
      env.RATE_LIMIT_CALLBACKS_PER_MESSAGE,
      pick(env.RATE_LIMIT_CALLBACK, DEFAULT_BUDGETS.callback),
    ),
    accounts: {
      tokenLifetimeMs: env.TOKEN_LIFETIME_HOURS * 3600_000,
      keyCacheMs: env.AUTH_CACHE_SECONDS * 1000,
      loginLock: {
        maxFailures: env.LOGIN_MAX_FAILURES,
        addressMaxFailures: env.LOGIN_ADDRESS_MAX_FAILURES,
        maxDelayMs: env.LOGIN_MAX_DELAY_SECONDS * 1000,
        windowMs: env.LOGIN_LOCK_WINDOW_SECONDS * 1000,
      },
      passwordResetLifetimeMs: env.PASSWORD_RESET_LIFETIME_MINUTES * 60_000,
      passwordHashCost: env.PASSWORD_HASH_COST,
      passwordMinLength: env.PASSWORD_MIN_LENGTH,
      signUp: { mode: env.SIGNUP, linkLifetimeMs: env.EMAIL_VERIFICATION_LIFETIME_HOURS * 3600_000, resendIntervalMs: env.SIGNUP_RESEND_SECONDS * 1000 },
      auditRetentionMs: env.AUDIT_RETENTION_DAYS * 86_400_000,
    },
    firstAdmin: {
      username: env.ADMIN_USERNAME ?? 'admin',
      email: env.ADMIN_EMAIL ?? 'admin@palanque.app',
      password: env.ADMIN_PASSWORD,
    },
    mail: { smtpUrl: env.SMTP_URL, from: env.MAIL_FROM, directory: env.MAIL_DIR },
    assistants: env.ASSISTANTS ?? [],
    docsUrl: env.DOCS_URL,
    socialnet: {
      verifyToken: env.SOCIALNET_VERIFY_TOKEN,
      appSecret: env.SOCIALNET_APP_SECRET,
      replayWindowMs: env.SOCIALNET_REPLAY_WINDOW_SECONDS * 1000,
      removalMaxAgeMs: env.SOCIALNET_REMOVAL_MAX_AGE_SECONDS * 1000,
    },
    socialnetGraph: { graphUrl: env.SOCIALNET_GRAPH_URL, graphVersion: env.SOCIALNET_GRAPH_VERSION },
    secretsKey: env.SECRETS_KEY,
    vapid: env.VAPID_PUBLIC_KEY && env.VAPID_PRIVATE_KEY ? { publicKey: env.VAPID_PUBLIC_KEY, privateKey: env.VAPID_PRIVATE_KEY, subject: env.VAPID_SUBJECT } : undefined,
    outbound: { allowHttp: env.NODE_ENV !== 'production', allowPrivateAddresses: env.OUTBOUND_ALLOW_PRIVATE_ADDRESSES, timeoutMs: env.WEBHOOK_TIMEOUT_MS },
    webhooks: { retryDelaySeconds: env.WEBHOOK_RETRY_DELAY_SECONDS, retries: env.WEBHOOK_RETRIES, disableAfterMs: env.WEBHOOK_DISABLE_AFTER_SECONDS * 1000 },
    smsProviderUrl: env.SMS_PROVIDER_URL,
    smsSendTimeoutMs: env.SMS_SEND_TIMEOUT_MS,
    smsMaxRecipients: env.SMS_MAX_RECIPIENTS,
    smsReceiptTimeoutMs: env.SMS_RECEIPT_TIMEOUT_HOURS * 3_600_000,
    contactRetentionDaysAfterCertification: env.CONTACT_RETENTION_DAYS_AFTER_CERTIFICATION,
    newsMaxOpenRequests: env.NEWS_MAX_OPEN_REQUESTS,
    historyRetentionMs: env.HISTORY_RETENTION_DAYS * 86_400_000,
    jobTimeoutSeconds: env.JOB_TIMEOUT_SECONDS,
    role: env.PALANQUE_ROLE,
    jobConcurrency: env.JOB_CONCURRENCY,
    oauth: {
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
    },
    oauthPendingLinkMs: env.OAUTH_PENDING_LINK_SECONDS * 1000,
    electionsPanelUrl: env.ELECTIONS_PANEL_URL,
    electionsImportHosts: env.ELECTIONS_IMPORT_HOSTS ?? [...DEFAULT_ELECTIONS_IMPORT_HOSTS],
    electionsImportMaxRecordBytes: env.ELECTIONS_IMPORT_MAX_RECORD_BYTES,
  };
}

/** A signer's cap and window, its callbacks per message in flight, and a floor of the address budget's size (never below an address). */
function signedCallbacksOf(cap: Budget | undefined, perMessage: number, address: Budget | undefined): SignedCallbackBudget | undefined {
  if (!cap) return undefined;
  return { ...cap, perMessage, floor: Math.min(cap.points, address?.points ?? DEFAULT_SIGNED_CALLBACKS.floor) };
}

/** A configured budget (null = off) or the default when the variable is unset. */
function pick(configured: Budget | null | undefined, fallback: Budget | undefined): Budget | undefined {
  return configured === undefined ? fallback : (configured ?? undefined);
}

/** loadConfig for the entry points (`npm start`, the sandbox, the hybrid mode): a bad variable ends the process with the message. */
export function loadConfigOrExit(environment: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(environment);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}
