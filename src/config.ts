/**
 * Configuration comes from the environment only (plus an optional `.env` file, loaded by the entry
 * points). It is validated once at start: a bad value stops the process with a message naming the
 * variable, instead of failing later in a request.
 *
 * This file composes: each domain owns its variables, their bounds and defaults, and what its settings
 * are made of (`src/<domain>/settings.ts`); here are the server's own (address, database, HTTP limits,
 * jobs), the checks of settings against each other, and the Config the entry points pass on. It sits
 * above the domains (src/README.md, "Layers"): no domain imports it.
 */
import proxyAddr from 'proxy-addr';
import { z } from 'zod';
import { accountsEnvironment, accountSettingsOf, firstAdminOf, type AccountSettings, type FirstAdminSettings } from './accounts/settings.js';
import { rootEnvironment, rootLinksOf, type RootLinkSettings } from './control/settings.js';
import { electionsEnvironment, electionsSettingsOf } from './elections/settings.js';
import type { InvitationSettings } from './entities/invitations.js';
import { entitiesEnvironment, historyRetentionMsOf, invitationSettingsOf } from './entities/settings.js';
import { booleanString, byteSize } from './env-values.js';
import { DEFAULT_BUDGETS, DEFAULT_SIGNED_CALLBACKS, type Budget, type RateLimitBudgets, type SignedCallbackBudget } from './http/rate-limits.js';
import type { MailSettings } from './mail/mailer.js';
import { mailEnvironment, mailSettingsOf } from './mail/settings.js';
import { CAMPAIGN_BODY, checkBodyLimit, pastedListCapacity, smsEnvironment, smsSettingsOf, type SmsEnvironmentSettings } from './messaging/settings.js';
import { municipalitiesEnvironment, municipalitySettingsOf } from './municipalities/settings.js';
import { oauthEnvironment, oauthProvidersOf, type OAuthProviderSettings } from './oauth/settings.js';
import type { VapidKeys } from './push/sender.js';
import { checkVapidPair, pushEnvironment, vapidKeysOf } from './push/settings.js';
import { socialnetEnvironment, socialnetGraphSettingsOf, socialnetSettingsOf, type SocialnetGraphSettings, type SocialnetSettings } from './socialnet/settings.js';
import type { OutboundPolicy } from './webhooks/outbound-http.js';
import { outboundPolicyOf, webhookSettingsOf, webhooksEnvironment, type WebhookSettings } from './webhooks/settings.js';

/** REQUEST_DEADLINE_MS unless set (and for apps built without a configuration: the tests'). */
export const DEFAULT_REQUEST_DEADLINE_MS = 30_000;

/** What a server process does (PALANQUE_ROLE). */
export const SERVER_ROLES = ['all', 'api', 'worker'] as const;
export type ServerRole = (typeof SERVER_ROLES)[number];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

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
  SECRETS_KEY: z
    .string()
    .refine((value) => Buffer.from(value, 'base64').length === 32, 'must be 32 bytes, base64-encoded (openssl rand -base64 32)')
    .optional(),
  NEWS_MAX_OPEN_REQUESTS: z.coerce.number().int().min(1).max(100_000).default(100),
  // pg-boss keeps a job's timeout under 24 hours.
  JOB_TIMEOUT_SECONDS: z.coerce.number().int().min(5).max(86_000).default(900),
  // What this process does (docs/operations.md, "Roles: api and worker"): all, or one half on PostgreSQL.
  PALANQUE_ROLE: z.enum(SERVER_ROLES, { message: `must be one of ${SERVER_ROLES.join(', ')}` }).default('all'),
  // Jobs one process runs at once (of each kind on pg-boss); the queue's own default when unset.
  JOB_CONCURRENCY: z.coerce.number().int().min(1).max(100).optional(),
  // Each domain's variables, with their bounds and defaults (src/<domain>/settings.ts).
  ...municipalitiesEnvironment.shape,
  ...accountsEnvironment.shape,
  ...entitiesEnvironment.shape,
  ...mailEnvironment.shape,
  ...rootEnvironment.shape,
  ...smsEnvironment.shape,
  ...socialnetEnvironment.shape,
  ...oauthEnvironment.shape,
  ...electionsEnvironment.shape,
  ...pushEnvironment.shape,
  ...webhooksEnvironment.shape,
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
  checkVapidPair(env, ctx);
  checkBodyLimit(env, ctx);
  // A webhook or push try runs inside its job: the queue must not count the job failed (and run it
  // again, sending a second copy) while the try may still be waiting for the endpoint.
  if (env.JOB_TIMEOUT_SECONDS * 1000 < env.WEBHOOK_TIMEOUT_MS) {
    ctx.addIssue({ code: 'custom', path: ['JOB_TIMEOUT_SECONDS'], message: `is ${env.JOB_TIMEOUT_SECONDS} s; must be at least WEBHOOK_TIMEOUT_MS (${env.WEBHOOK_TIMEOUT_MS} ms): a webhook try runs inside its job, and a job that times out first is run again (a second delivery)` });
  }
  if (env.PALANQUE_ROLE !== 'all' && env.DATABASE_URL.startsWith('sqlite:')) {
    ctx.addIssue({ code: 'custom', path: ['PALANQUE_ROLE'], message: `must be all on SQLite (${env.PALANQUE_ROLE} needs PostgreSQL: the embedded database belongs to one process, which serves the API and runs the jobs)` });
  }
  // A send job may wait out an earlier call and its margin, list the provider's messages, send, and
  // list again (messaging/sending.ts): the queue must not count it failed meanwhile.
  const longestSendJobMs = 4 * env.SMS_SEND_TIMEOUT_MS + 4_000;
  if (env.JOB_TIMEOUT_SECONDS * 1000 < longestSendJobMs) {
    ctx.addIssue({ code: 'custom', path: ['JOB_TIMEOUT_SECONDS'], message: `must be at least ${Math.ceil(longestSendJobMs / 1000)} (4 × SMS_SEND_TIMEOUT_MS + 4 s, the longest an SMS send job may take)` });
  }
});

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

/** The whole configuration: the server's own settings, and each domain's (their variables are in src/<domain>/settings.ts). */
export interface Config extends SmsEnvironmentSettings, RootLinkSettings {
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
  firstAdmin: FirstAdminSettings;
  mail: MailSettings;
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
  oauth: OAuthProviderSettings;
  /** OAUTH_PENDING_LINK_SECONDS: how long an OAuth callback's pending link waits for its user's confirmation. */
  oauthPendingLinkMs: number;
  /** ELECTIONS_PANEL_URL: the elections panel's API; without it no sync can be queued. */
  electionsPanelUrl: string | undefined;
  /** ELECTIONS_IMPORT_HOSTS: the hosts a candidacy import may download from, over https unless written `http://host` (src/elections/tse/source.ts). */
  electionsImportHosts: string[];
  /** ELECTIONS_IMPORT_MAX_RECORD_BYTES: the longest record a candidacy file may have (src/elections/tse/court-file.ts). */
  electionsImportMaxRecordBytes: number;
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
    invitations: invitationSettingsOf(env),
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
    ...municipalitySettingsOf(env),
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
    accounts: accountSettingsOf(env),
    firstAdmin: firstAdminOf(env),
    mail: mailSettingsOf(env),
    ...rootLinksOf(env),
    socialnet: socialnetSettingsOf(env),
    socialnetGraph: socialnetGraphSettingsOf(env),
    secretsKey: env.SECRETS_KEY,
    vapid: vapidKeysOf(env),
    outbound: outboundPolicyOf(env, env.NODE_ENV === 'production'),
    webhooks: webhookSettingsOf(env),
    ...smsSettingsOf(env),
    newsMaxOpenRequests: env.NEWS_MAX_OPEN_REQUESTS,
    historyRetentionMs: historyRetentionMsOf(env),
    jobTimeoutSeconds: env.JOB_TIMEOUT_SECONDS,
    role: env.PALANQUE_ROLE,
    jobConcurrency: env.JOB_CONCURRENCY,
    oauth: oauthProvidersOf(env),
    oauthPendingLinkMs: env.OAUTH_PENDING_LINK_SECONDS * 1000,
    ...electionsSettingsOf(env),
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
