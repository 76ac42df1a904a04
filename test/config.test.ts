/**
 * The server's configuration comes from the environment and is validated once, at start, so that a bad
 * value stops the process with a message naming the variable instead of failing later in a request.
 * These tests call loadConfig() with explicit environment objects (process.env is never touched) and
 * prove the defaults, the conversions (sizes, booleans, the proxy setting, the sha256) and that every
 * invalid value is reported under its variable's name, all of them at once.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { DEFAULT_MUNICIPIOS_SHA256, DEFAULT_MUNICIPIOS_SOURCE } from '../src/municipalities/settings.js';
import { DEFAULT_BUDGETS, DEFAULT_SIGNED_CALLBACKS } from '../src/http/rate-limits.js';
import webpush from 'web-push';

const VAPID = webpush.generateVAPIDKeys();

/** The ConfigError thrown for an environment, failing the test when loadConfig accepts it. */
function configErrorFor(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig defaults', () => {
  it('serves on 127.0.0.1:8000 with the embedded SQLite database and the pinned municipality list', () => {
    expect(loadConfig({})).toEqual({
      env: 'development',
      port: 8000,
      host: '127.0.0.1',
      basePath: '',
      publicUrl: undefined,
      trustProxy: false,
      databaseUrl: 'sqlite:data/palanque.sqlite',
      databaseDirectUrl: 'sqlite:data/palanque.sqlite',
      databasePreparedStatements: true,
      dbPoolMax: 10,
      dbReadPoolMax: undefined,
      logLevel: 'info',
      validateResponses: true,
      bodyLimit: 1024 * 1024,
      municipiosSource: DEFAULT_MUNICIPIOS_SOURCE,
      municipiosSha256: DEFAULT_MUNICIPIOS_SHA256,
      municipiosRefreshMs: 30_000,
      shutdownTimeoutMs: 10_000,
      corsOrigins: [],
      metricsToken: undefined,
      requestTimeoutMs: 30_000,
      requestDeadlineMs: 30_000,
      dbStatementTimeoutMs: 10_000,
      keepAliveTimeoutMs: 65_000,
      maxHeaderBytes: 16_384,
      redisUrl: undefined,
      rateLimitPrefix: 'palanque:rl',
      rateLimits: DEFAULT_BUDGETS,
      signedCallbacks: DEFAULT_SIGNED_CALLBACKS,
      idempotencyTtlMs: 86_400_000,
      accounts: {
        tokenLifetimeMs: 7 * 24 * 3600_000,
        keyCacheMs: 5_000,
        loginLock: { maxFailures: 5, addressMaxFailures: 100, maxDelayMs: 30_000, windowMs: 900_000 },
        passwordResetLifetimeMs: 30 * 60_000,
        passwordHashCost: 17,
        passwordMinLength: 12,
        signUp: { mode: 'invite', linkLifetimeMs: 48 * 3600_000, resendIntervalMs: 60_000 },
        auditRetentionMs: 1825 * 86_400_000,
      },
      firstAdmin: { username: 'admin', email: 'admin@palanque.app', password: undefined },
      mail: { smtpUrl: undefined, from: 'Palanque <no-reply@palanque.app>', directory: 'data/mail' },
      assistants: [],
      docsUrl: undefined,
      socialnet: { verifyToken: undefined, appSecret: undefined, replayWindowMs: 3 * 24 * 3600_000, removalMaxAgeMs: 24 * 3600_000 },
      socialnetGraph: { graphUrl: 'https://graph.facebook.com', graphVersion: 'v25.0' },
      secretsKey: undefined,
      vapid: undefined,
      outbound: { allowHttp: true, allowPrivateAddresses: false, timeoutMs: 10_000 },
      webhooks: { retryDelaySeconds: 60, retries: 10, disableAfterMs: 24 * 3600_000 },
      smsProviderUrl: 'https://api.twilio.com',
      smsSendTimeoutMs: 15_000,
      smsMaxRecipients: 10_000,
      smsReceiptTimeoutMs: 72 * 3_600_000,
      contactRetentionDaysAfterCertification: 180,
      newsMaxOpenRequests: 100,
      historyRetentionMs: 1825 * 86_400_000,
      invitations: { lifetimeMs: 7 * 86_400_000, maxOpenPerEntity: 20 },
      jobTimeoutSeconds: 900,
      role: 'all',
      oauth: {
        searchnet: {
          clientId: undefined,
          clientSecret: undefined,
          authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
          tokenUrl: 'https://oauth2.googleapis.com/token',
          profileUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
          redirectUri: undefined,
        },
        socialvideo: {
          clientId: undefined,
          clientSecret: undefined,
          authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
          tokenUrl: 'https://oauth2.googleapis.com/token',
          profileUrl: 'https://www.googleapis.com/youtube/v3/channels',
          redirectUri: undefined,
        },
      },
      oauthPendingLinkMs: 600_000,
      electionsPanelUrl: undefined,
      electionsImportHosts: ['cdn.tse.jus.br', 'dadosabertos.tse.jus.br'],
      electionsImportMaxRecordBytes: 8192,
    });
  });

  it('reads the account, first-admin and mail settings', () => {
    const config = loadConfig({
      TOKEN_LIFETIME_HOURS: '12',
      AUTH_CACHE_SECONDS: '0',
      LOGIN_MAX_FAILURES: '3',
      LOGIN_LOCK_WINDOW_SECONDS: '60',
      LOGIN_ADDRESS_MAX_FAILURES: '40',
      LOGIN_MAX_DELAY_SECONDS: '20',
      PASSWORD_RESET_LIFETIME_MINUTES: '10',
      PASSWORD_HASH_COST: '15',
      PASSWORD_MIN_LENGTH: '15',
      SIGNUP: 'open',
      EMAIL_VERIFICATION_LIFETIME_HOURS: '24',
      SIGNUP_RESEND_SECONDS: '300',
      AUDIT_RETENTION_DAYS: '365',
      ADMIN_USERNAME: 'ana.souza',
      ADMIN_EMAIL: 'ana.souza@palanque.app',
      ADMIN_PASSWORD: 'uma-senha-bem-longa',
      SMTP_URL: 'smtps://user:secret@smtp.example.com:465',
      MAIL_FROM: 'Campanha <campanha@example.com>',
      MAIL_DIR: '/var/spool/palanque',
    });
    expect(config.accounts).toEqual({
      tokenLifetimeMs: 12 * 3600_000,
      keyCacheMs: 0,
      loginLock: { maxFailures: 3, addressMaxFailures: 40, maxDelayMs: 20_000, windowMs: 60_000 },
      passwordResetLifetimeMs: 10 * 60_000,
      passwordHashCost: 15,
      passwordMinLength: 15,
      signUp: { mode: 'open', linkLifetimeMs: 24 * 3600_000, resendIntervalMs: 300_000 },
      auditRetentionMs: 365 * 86_400_000,
    });
    expect(config.firstAdmin).toEqual({ username: 'ana.souza', email: 'ana.souza@palanque.app', password: 'uma-senha-bem-longa' });
    expect(config.mail).toEqual({ smtpUrl: 'smtps://user:secret@smtp.example.com:465', from: 'Campanha <campanha@example.com>', directory: '/var/spool/palanque' });
  });

  it('treats an empty variable as not set', () => {
    const config = loadConfig({ PORT: '', HOST: '', BASE_PATH: '', DATABASE_URL: '', LOG_LEVEL: '', BODY_LIMIT: '', MUNICIPIOS_SOURCE: '' });
    expect(config).toMatchObject({
      port: 8000,
      host: '127.0.0.1',
      basePath: '',
      databaseUrl: 'sqlite:data/palanque.sqlite',
      logLevel: 'info',
      bodyLimit: 1024 * 1024,
      municipiosSource: DEFAULT_MUNICIPIOS_SOURCE,
    });
  });

  it('ignores variables it does not know', () => {
    expect(loadConfig({ PATH: '/usr/bin', HOME: '/root' })).toEqual(loadConfig({}));
  });
});

describe('loadConfig values', () => {
  it('reads every variable it knows', () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      PORT: '3000',
      HOST: '0.0.0.0',
      BASE_PATH: '/v1',
      PUBLIC_URL: 'https://api.palanque.app',
      TRUST_PROXY: '1',
      DATABASE_URL: 'postgres://app@db.internal:5432/palanque',
      DATABASE_DIRECT_URL: 'postgres://app@db-primary.internal:5432/palanque',
      DATABASE_PREPARED_STATEMENTS: 'false',
      DB_POOL_MAX: '20',
      DB_READ_POOL_MAX: '6',
      LOG_LEVEL: 'debug',
      VALIDATE_RESPONSES: 'true',
      BODY_LIMIT: '2mb',
      MUNICIPIOS_SOURCE: '/srv/data/municipios.csv',
      MUNICIPIOS_SHA256: 'a'.repeat(64),
      SHUTDOWN_TIMEOUT_MS: '2500',
      MUNICIPIOS_REFRESH_SECONDS: '5',
      CORS_ORIGINS: 'https://app.palanque.app, http://localhost:5173',
      METRICS_TOKEN: 'scrape-me-0123456789abcdef',
      REQUEST_TIMEOUT_MS: '15000',
      REQUEST_DEADLINE_MS: '20000',
      DB_STATEMENT_TIMEOUT_MS: '5000',
      KEEP_ALIVE_TIMEOUT_MS: '75000',
      MAX_HEADER_BYTES: '32768',
      REDIS_URL: 'redis://cache.internal:6379/2',
      RATE_LIMIT_PREFIX: 'palanque-staging:rl',
      RATE_LIMIT_AUTH: '5/10',
      RATE_LIMIT_READ: 'off',
      RATE_LIMIT_WRITE: '100/60',
      RATE_LIMIT_CALLBACK: 'OFF',
      RATE_LIMIT_CHECK_EMAIL: '3/60',
      RATE_LIMIT_SIGNED_CALLBACK: '5000/30',
      RATE_LIMIT_CALLBACKS_PER_MESSAGE: '3',
      IDEMPOTENCY_TTL_SECONDS: '3600',
      ASSISTANTS: '[{"id":"estrategista","name":"Estrategista","description":"Sugere pautas."}]',
      DOCS_URL: 'https://palanque.app/docs/api',
      SOCIALNET_VERIFY_TOKEN: 'verify-token-of-the-subscription',
      SOCIALNET_APP_SECRET: 'app-secret-of-the-social-network',
      SOCIALNET_REPLAY_WINDOW_SECONDS: '604800',
      SOCIALNET_REMOVAL_MAX_AGE_SECONDS: '3600',
      SOCIALNET_GRAPH_URL: 'http://127.0.0.1:4030',
      SOCIALNET_GRAPH_VERSION: 'v24.0',
      SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
      SMS_PROVIDER_URL: 'http://127.0.0.1:4020',
      SMS_SEND_TIMEOUT_MS: '1000',
      SMS_MAX_RECIPIENTS: '500',
      SMS_RECEIPT_TIMEOUT_HOURS: '24',
      NEWS_MAX_OPEN_REQUESTS: '20',
      HISTORY_RETENTION_DAYS: '365',
      JOB_TIMEOUT_SECONDS: '10',
      PALANQUE_ROLE: 'worker',
      JOB_CONCURRENCY: '4',
      SEARCHNET_CLIENT_ID: 'palanque-search',
      SEARCHNET_CLIENT_SECRET: 'search-secret',
      SEARCHNET_AUTHORIZE_URL: 'http://127.0.0.1:4030/authorize',
      SEARCHNET_TOKEN_URL: 'http://127.0.0.1:4030/token',
      SEARCHNET_USERINFO_URL: 'http://127.0.0.1:4030/userinfo',
      SOCIALVIDEO_CLIENT_ID: 'palanque-video',
      SOCIALVIDEO_CLIENT_SECRET: 'video-secret',
      SOCIALVIDEO_REDIRECT_URI: 'https://app.palanque.app/contas/video',
      SOCIALVIDEO_AUTHORIZE_URL: 'http://127.0.0.1:4031/authorize?hl=pt-BR',
      SOCIALVIDEO_TOKEN_URL: 'http://127.0.0.1:4031/token',
      SOCIALVIDEO_CHANNELS_URL: 'http://127.0.0.1:4031/channels',
      OAUTH_PENDING_LINK_SECONDS: '300',
      ELECTIONS_PANEL_URL: 'http://127.0.0.1:4040',
      ELECTIONS_IMPORT_HOSTS: 'CDN.tse.jus.br, HTTP://127.0.0.1',
      ELECTIONS_IMPORT_MAX_RECORD_BYTES: '16384',
      VAPID_PUBLIC_KEY: VAPID.publicKey,
      VAPID_PRIVATE_KEY: VAPID.privateKey,
      VAPID_SUBJECT: 'https://palanque.app/contato',
      OUTBOUND_ALLOW_PRIVATE_ADDRESSES: 'true',
      WEBHOOK_TIMEOUT_MS: '3000',
      WEBHOOK_RETRY_DELAY_SECONDS: '30',
      WEBHOOK_RETRIES: '6',
      WEBHOOK_DISABLE_AFTER_SECONDS: '7200',
    });
    expect(config).toEqual({
      env: 'production',
      port: 3000,
      host: '0.0.0.0',
      basePath: '/v1',
      publicUrl: 'https://api.palanque.app',
      trustProxy: 1,
      databaseUrl: 'postgres://app@db.internal:5432/palanque',
      databaseDirectUrl: 'postgres://app@db-primary.internal:5432/palanque',
      databasePreparedStatements: false,
      dbPoolMax: 20,
      dbReadPoolMax: 6,
      logLevel: 'debug',
      validateResponses: true,
      bodyLimit: 2 * 1024 * 1024,
      municipiosSource: '/srv/data/municipios.csv',
      municipiosSha256: 'a'.repeat(64),
      municipiosRefreshMs: 5_000,
      shutdownTimeoutMs: 2500,
      corsOrigins: ['https://app.palanque.app', 'http://localhost:5173'],
      metricsToken: 'scrape-me-0123456789abcdef',
      requestTimeoutMs: 15_000,
      requestDeadlineMs: 20_000,
      dbStatementTimeoutMs: 5_000,
      keepAliveTimeoutMs: 75_000,
      maxHeaderBytes: 32_768,
      redisUrl: 'redis://cache.internal:6379/2',
      rateLimitPrefix: 'palanque-staging:rl',
      rateLimits: { auth: { points: 5, seconds: 10 }, read: undefined, write: { points: 100, seconds: 60 }, callback: undefined, checkEmail: { points: 3, seconds: 60 } },
      // With the address budget off, a signer's floor is the default address budget's.
      signedCallbacks: { points: 5000, seconds: 30, perMessage: 3, floor: 600 },
      idempotencyTtlMs: 3_600_000,
      accounts: expect.any(Object),
      firstAdmin: expect.any(Object),
      mail: expect.any(Object),
      assistants: [{ id: 'estrategista', name: 'Estrategista', description: 'Sugere pautas.' }],
      docsUrl: 'https://palanque.app/docs/api',
      socialnet: { verifyToken: 'verify-token-of-the-subscription', appSecret: 'app-secret-of-the-social-network', replayWindowMs: 604_800_000, removalMaxAgeMs: 3_600_000 },
      socialnetGraph: { graphUrl: 'http://127.0.0.1:4030', graphVersion: 'v24.0' },
      secretsKey: Buffer.alloc(32, 1).toString('base64'),
      vapid: { ...VAPID, subject: 'https://palanque.app/contato' },
      outbound: { allowHttp: false, allowPrivateAddresses: true, timeoutMs: 3000 },
      webhooks: { retryDelaySeconds: 30, retries: 6, disableAfterMs: 7200_000 },
      smsProviderUrl: 'http://127.0.0.1:4020',
      smsSendTimeoutMs: 1000,
      smsMaxRecipients: 500,
      smsReceiptTimeoutMs: 24 * 3_600_000,
      contactRetentionDaysAfterCertification: 180,
      newsMaxOpenRequests: 20,
      historyRetentionMs: 365 * 86_400_000,
      invitations: { lifetimeMs: 7 * 86_400_000, maxOpenPerEntity: 20 },
      jobTimeoutSeconds: 10,
      role: 'worker',
      jobConcurrency: 4,
      oauth: {
        searchnet: {
          clientId: 'palanque-search',
          clientSecret: 'search-secret',
          authorizeUrl: 'http://127.0.0.1:4030/authorize',
          tokenUrl: 'http://127.0.0.1:4030/token',
          profileUrl: 'http://127.0.0.1:4030/userinfo',
          redirectUri: undefined,
        },
        socialvideo: {
          clientId: 'palanque-video',
          clientSecret: 'video-secret',
          authorizeUrl: 'http://127.0.0.1:4031/authorize?hl=pt-BR',
          tokenUrl: 'http://127.0.0.1:4031/token',
          profileUrl: 'http://127.0.0.1:4031/channels',
          redirectUri: 'https://app.palanque.app/contas/video',
        },
      },
      oauthPendingLinkMs: 300_000,
      electionsPanelUrl: 'http://127.0.0.1:4040',
      electionsImportHosts: ['cdn.tse.jus.br', 'http://127.0.0.1'],
      electionsImportMaxRecordBytes: 16384,
    });
  });

  it('names SECRETS_KEY when it is not 32 bytes, and SMS_PROVIDER_URL when it is not an http(s) URL', () => {
    expect(() => loadConfig({ SECRETS_KEY: Buffer.alloc(16).toString('base64') })).toThrow(/SECRETS_KEY: must be 32 bytes/);
    expect(() => loadConfig({ SMS_PROVIDER_URL: 'ftp://sms.example' })).toThrow(/SMS_PROVIDER_URL: must be http\(s\)/);
    expect(() => loadConfig({ SOCIALNET_GRAPH_URL: 'https://graph.example/' })).toThrow(/SOCIALNET_GRAPH_URL: must be http\(s\), without a trailing slash/);
    expect(() => loadConfig({ SOCIALNET_GRAPH_VERSION: '25.0' })).toThrow(/SOCIALNET_GRAPH_VERSION: must be a Graph API version/);
    expect(() => loadConfig({ SOCIALNET_APP_SECRET: 'short' })).toThrow(/SOCIALNET_APP_SECRET: must be at least 16 characters/);
  });

  it('requires PUBLIC_URL and SECRETS_KEY in production, naming each, and neither elsewhere', () => {
    const secretsKey = Buffer.alloc(32, 1).toString('base64');
    expect(() => loadConfig({ NODE_ENV: 'production', SECRETS_KEY: secretsKey })).toThrow(/PUBLIC_URL: is required when NODE_ENV=production/);
    expect(() => loadConfig({ NODE_ENV: 'production', PUBLIC_URL: 'https://api.palanque.app' })).toThrow(/SECRETS_KEY: is required when NODE_ENV=production/);
    expect(loadConfig({ NODE_ENV: 'production', PUBLIC_URL: 'https://api.palanque.app', SECRETS_KEY: secretsKey }).publicUrl).toBe('https://api.palanque.app');
    expect(loadConfig({ NODE_ENV: 'development' }).publicUrl).toBeUndefined();
  });

  it('reads FRONTEND_RESET_URL, an http(s) page that may carry a query', () => {
    expect(loadConfig({}).frontendResetUrl).toBeUndefined();
    expect(loadConfig({}).frontendVerifyUrl).toBeUndefined();
    expect(loadConfig({}).frontendUnlockUrl).toBeUndefined();
    expect(loadConfig({ FRONTEND_UNLOCK_URL: 'https://app.palanque.app/entrar?desbloquear=1' }).frontendUnlockUrl).toBe('https://app.palanque.app/entrar?desbloquear=1');
    expect(loadConfig({ FRONTEND_VERIFY_URL: 'https://app.palanque.app/confirmar?lang=pt' }).frontendVerifyUrl).toBe('https://app.palanque.app/confirmar?lang=pt');
    expect(loadConfig({ FRONTEND_RESET_URL: 'https://app.palanque.app/reset?lang=pt' }).frontendResetUrl).toBe('https://app.palanque.app/reset?lang=pt');
    expect(() => loadConfig({ FRONTEND_RESET_URL: 'javascript:alert(1)' })).toThrow(/FRONTEND_RESET_URL/);
  });

  it('reads the team invitations: lifetime, limit and the sign-up page their mail links to', () => {
    expect(loadConfig({}).invitations).toEqual({ lifetimeMs: 7 * 86_400_000, maxOpenPerEntity: 20 });
    expect(loadConfig({}).frontendSignUpUrl).toBeUndefined();
    const config = loadConfig({ INVITATION_LIFETIME_DAYS: '3', TEAM_MAX_OPEN_INVITATIONS: '5', FRONTEND_SIGNUP_URL: 'https://app.palanque.app/cadastro' });
    expect(config.invitations).toEqual({ lifetimeMs: 3 * 86_400_000, maxOpenPerEntity: 5 });
    expect(config.frontendSignUpUrl).toBe('https://app.palanque.app/cadastro');
  });

  it('names SMS_SEND_TIMEOUT_MS and JOB_TIMEOUT_SECONDS out of range, and a job timeout too short for an SMS send job', () => {
    expect(() => loadConfig({ SMS_SEND_TIMEOUT_MS: '50' })).toThrow(/SMS_SEND_TIMEOUT_MS: .*100/);
    expect(() => loadConfig({ JOB_TIMEOUT_SECONDS: 'soon' })).toThrow(/JOB_TIMEOUT_SECONDS: /);
    expect(() => loadConfig({ JOB_TIMEOUT_SECONDS: '100000' })).toThrow(/JOB_TIMEOUT_SECONDS: /);
    // 4 × 15 s + 4 s: the longest an SMS send job may take at the default send timeout.
    expect(() => loadConfig({ JOB_TIMEOUT_SECONDS: '60' })).toThrow(/JOB_TIMEOUT_SECONDS: must be at least 64 \(4 × SMS_SEND_TIMEOUT_MS/);
    expect(loadConfig({ JOB_TIMEOUT_SECONDS: '64' }).jobTimeoutSeconds).toBe(64);
  });

  it('names SOCIALNET_REPLAY_WINDOW_SECONDS (an hour to 90 days) and SOCIALNET_REMOVAL_MAX_AGE_SECONDS (a minute to 30 days) out of range', () => {
    expect(() => loadConfig({ SOCIALNET_REPLAY_WINDOW_SECONDS: '3599' })).toThrow(/SOCIALNET_REPLAY_WINDOW_SECONDS: /);
    expect(() => loadConfig({ SOCIALNET_REPLAY_WINDOW_SECONDS: String(90 * 86400 + 1) })).toThrow(/SOCIALNET_REPLAY_WINDOW_SECONDS: /);
    expect(() => loadConfig({ SOCIALNET_REPLAY_WINDOW_SECONDS: 'a week' })).toThrow(/SOCIALNET_REPLAY_WINDOW_SECONDS: /);
    expect(() => loadConfig({ SOCIALNET_REMOVAL_MAX_AGE_SECONDS: '59' })).toThrow(/SOCIALNET_REMOVAL_MAX_AGE_SECONDS: /);
    expect(() => loadConfig({ SOCIALNET_REMOVAL_MAX_AGE_SECONDS: String(30 * 86400 + 1) })).toThrow(/SOCIALNET_REMOVAL_MAX_AGE_SECONDS: /);
    expect(loadConfig({ SOCIALNET_REPLAY_WINDOW_SECONDS: '3600', SOCIALNET_REMOVAL_MAX_AGE_SECONDS: '60' }).socialnet).toMatchObject({ replayWindowMs: 3_600_000, removalMaxAgeMs: 60_000 });
  });

  it('caps a campaign at SMS_MAX_RECIPIENTS numbers, 10,000 by default, from 1 to 100,000', () => {
    expect(loadConfig({}).smsMaxRecipients).toBe(10_000);
    expect(loadConfig({ SMS_MAX_RECIPIENTS: '50000' }).smsMaxRecipients).toBe(50_000);
    expect(() => loadConfig({ SMS_MAX_RECIPIENTS: '0' })).toThrow(/SMS_MAX_RECIPIENTS: /);
    expect(() => loadConfig({ SMS_MAX_RECIPIENTS: '100001' })).toThrow(/SMS_MAX_RECIPIENTS: /);
  });

  it('erases contacts CONTACT_RETENTION_DAYS_AFTER_CERTIFICATION days after the certification, 180 by default, from 31 (after the 30-day notice)', () => {
    expect(loadConfig({}).contactRetentionDaysAfterCertification).toBe(180);
    expect(loadConfig({ CONTACT_RETENTION_DAYS_AFTER_CERTIFICATION: '365' }).contactRetentionDaysAfterCertification).toBe(365);
    expect(() => loadConfig({ CONTACT_RETENTION_DAYS_AFTER_CERTIFICATION: '30' })).toThrow(/CONTACT_RETENTION_DAYS_AFTER_CERTIFICATION: /);
  });

  it('counts a message without a receipt as final after SMS_RECEIPT_TIMEOUT_HOURS, 72 by default, from 1 to 720', () => {
    expect(loadConfig({}).smsReceiptTimeoutMs).toBe(72 * 3_600_000);
    expect(loadConfig({ SMS_RECEIPT_TIMEOUT_HOURS: '1' }).smsReceiptTimeoutMs).toBe(3_600_000);
    expect(() => loadConfig({ SMS_RECEIPT_TIMEOUT_HOURS: '0' })).toThrow(/SMS_RECEIPT_TIMEOUT_HOURS: /);
    expect(() => loadConfig({ SMS_RECEIPT_TIMEOUT_HOURS: '721' })).toThrow(/SMS_RECEIPT_TIMEOUT_HOURS: /);
    expect(() => loadConfig({ SMS_RECEIPT_TIMEOUT_HOURS: '1.5' })).toThrow(/SMS_RECEIPT_TIMEOUT_HOURS: /);
  });

  it('caps the news sources one user may have awaiting review at NEWS_MAX_OPEN_REQUESTS, 100 by default', () => {
    expect(loadConfig({}).newsMaxOpenRequests).toBe(100);
    expect(loadConfig({ NEWS_MAX_OPEN_REQUESTS: '5' }).newsMaxOpenRequests).toBe(5);
    expect(() => loadConfig({ NEWS_MAX_OPEN_REQUESTS: '0' })).toThrow(/NEWS_MAX_OPEN_REQUESTS: /);
  });

  it('names the OAuth endpoints and ELECTIONS_PANEL_URL when they are not http(s) URLs', () => {
    expect(() => loadConfig({ SEARCHNET_TOKEN_URL: 'ftp://token.example' })).toThrow(/SEARCHNET_TOKEN_URL: must be an http\(s\) URL/);
    expect(() => loadConfig({ SOCIALVIDEO_REDIRECT_URI: 'not a url' })).toThrow(/SOCIALVIDEO_REDIRECT_URI: must be an absolute URL/);
    expect(() => loadConfig({ ELECTIONS_PANEL_URL: 'https://painel.example/' })).toThrow(/ELECTIONS_PANEL_URL: must be http\(s\), without a trailing slash/);
    expect(() => loadConfig({ ELECTIONS_IMPORT_HOSTS: 'cdn.tse.jus.br, https://evil.example/' })).toThrow(/ELECTIONS_IMPORT_HOSTS: \(1\) must be a comma-separated list of host names/);
    expect(() => loadConfig({ ELECTIONS_IMPORT_HOSTS: 'http://evil.example/x' })).toThrow(/ELECTIONS_IMPORT_HOSTS: \(0\) must be a comma-separated list of host names/);
    expect(() => loadConfig({ ELECTIONS_IMPORT_MAX_RECORD_BYTES: '100' })).toThrow(/ELECTIONS_IMPORT_MAX_RECORD_BYTES: /);
  });

  it('reads the assistants in their order, trimmed, with an empty description by default', () => {
    const config = loadConfig({
      ASSISTANTS: JSON.stringify([
        { id: 'estrategista', name: ' Estrategista ', description: 'Sugere pautas a partir das métricas dos monitores.' },
        { id: 'revisor_2', name: 'Revisor' },
      ]),
    });
    expect(config.assistants).toEqual([
      { id: 'estrategista', name: 'Estrategista', description: 'Sugere pautas a partir das métricas dos monitores.' },
      { id: 'revisor_2', name: 'Revisor', description: '' },
    ]);
    expect(loadConfig({ ASSISTANTS: '[]' }).assistants).toEqual([]);
  });

  it('names the assistant and the field that is wrong', () => {
    const error = configErrorFor({ ASSISTANTS: '[{"id":"ok","name":"Ok"},{"id":"Not OK","name":"x"}]' });
    expect(error.message).toContain('ASSISTANTS: (1.id) must be 1-50 lower-case letters');
  });

  it('accepts both database families', () => {
    expect(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).databaseUrl).toBe('sqlite::memory:');
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@h/db' }).databaseUrl).toBe('postgresql://u@h/db');
  });

  it('behind a pooler: the listener connects to DATABASE_DIRECT_URL, else DATABASE_URL; pool sizes and prepared statements are checked', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u@pooler:6432/db' }).databaseDirectUrl).toBe('postgres://u@pooler:6432/db');
    expect(loadConfig({ DATABASE_URL: 'postgres://u@pooler:6432/db', DATABASE_DIRECT_URL: 'postgres://u@h:5432/db' }).databaseDirectUrl).toBe('postgres://u@h:5432/db');
    expect(configErrorFor({ DATABASE_DIRECT_URL: 'sqlite:data/x.sqlite' }).message).toContain('DATABASE_DIRECT_URL: must start with postgres://');
    expect(configErrorFor({ DB_POOL_MAX: '1' }).message).toContain('DB_POOL_MAX: must be at least 2');
    expect(configErrorFor({ DB_READ_POOL_MAX: '0' }).message).toContain('DB_READ_POOL_MAX');
    expect(configErrorFor({ DATABASE_PREPARED_STATEMENTS: 'maybe' }).message).toContain('DATABASE_PREPARED_STATEMENTS: must be true or false');
  });

  it.each([
    [{}, true],
    [{ NODE_ENV: 'test' }, true],
    [{ NODE_ENV: 'production' }, false],
    [{ NODE_ENV: 'production', VALIDATE_RESPONSES: 'true' }, true],
    [{ NODE_ENV: 'development', VALIDATE_RESPONSES: 'false' }, false],
    [{ VALIDATE_RESPONSES: 'false' }, false],
    [{ NODE_ENV: 'production', VALIDATE_RESPONSES: '1' }, true],
    [{ VALIDATE_RESPONSES: 'no' }, false],
  ] satisfies Array<[NodeJS.ProcessEnv, boolean]>)('validates responses for %j: %s', (env, expected) => {
    // Production requires these two; they do not bear on response validation.
    const required = (env as NodeJS.ProcessEnv).NODE_ENV === 'production' ? { PUBLIC_URL: 'https://api.palanque.app', SECRETS_KEY: Buffer.alloc(32, 1).toString('base64') } : {};
    expect(loadConfig({ ...required, ...env }).validateResponses).toBe(expected);
  });

  it.each([
    ['512kb', 524_288],
    ['2mb', 2_097_152],
    ['2MB', 2_097_152],
    // A bare number is bytes (BODY_LIMIT's floor and its pairing with SMS_MAX_RECIPIENTS: config-consistency.test.ts).
    ['300000', 300_000],
    ['300000b', 300_000],
  ])('reads BODY_LIMIT %s as %d bytes', (value, bytes) => {
    expect(loadConfig({ BODY_LIMIT: value }).bodyLimit).toBe(bytes);
  });

  it.each([
    ['true', true],
    ['false', false],
    ['FALSE', false],
    ['True', true],
    ['2', 2],
    ['loopback, 10.0.0.0/8', 'loopback, 10.0.0.0/8'],
  ] satisfies Array<[string, boolean | number | string]>)('reads TRUST_PROXY %s as %j', (value, expected) => {
    expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toBe(expected);
  });

  it('skips the municipality checksum when MUNICIPIOS_SHA256 is set but empty', () => {
    expect(loadConfig({ MUNICIPIOS_SHA256: '' }).municipiosSha256).toBeUndefined();
  });

  it('normalises MUNICIPIOS_SHA256 to lower case', () => {
    expect(loadConfig({ MUNICIPIOS_SHA256: DEFAULT_MUNICIPIOS_SHA256.toUpperCase() }).municipiosSha256).toBe(DEFAULT_MUNICIPIOS_SHA256);
  });
});

describe('loadConfig errors', () => {
  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['PORT', ' '],
    ['PORT', '1e3'],
    ['PORT', '0x10'],
    ['TRUST_PROXY', 'yes please'],
    ['CORS_ORIGINS', 'app.palanque.app'],
    ['CORS_ORIGINS', 'https://app.palanque.app/'],
    ['METRICS_TOKEN', 'short'],
    ['REDIS_URL', 'localhost:6379'],
    ['RATE_LIMIT_PREFIX', 'palanque rl'],
    ['IDEMPOTENCY_TTL_SECONDS', '5'],
    ['RATE_LIMIT_AUTH', '20'],
    ['RATE_LIMIT_READ', '0/60'],
    ['RATE_LIMIT_WRITE', 'lots'],
    ['REQUEST_TIMEOUT_MS', '10'],
    ['REQUEST_DEADLINE_MS', '50'],
    ['DB_STATEMENT_TIMEOUT_MS', 'soon'],
    ['FRONTEND_UNLOCK_URL', 'javascript:alert(1)'],
    ['MAX_HEADER_BYTES', '10'],
    ['TRUST_PROXY', '10.0.0.0/99'],
    ['BASE_PATH', 'v1'],
    ['BASE_PATH', '/v1/'],
    ['BASE_PATH', '/'],
    ['PUBLIC_URL', 'not a url'],
    ['PUBLIC_URL', 'https://x.example/'],
    ['PUBLIC_URL', 'https://x.example/api?x=1'],
    ['PUBLIC_URL', 'ftp://x.example'],
    ['DATABASE_URL', 'mysql://x'],
    ['LOG_LEVEL', 'loud'],
    ['VALIDATE_RESPONSES', 'maybe'],
    ['BODY_LIMIT', 'lots'],
    ['BODY_LIMIT', '1gb'],
    ['MUNICIPIOS_SHA256', 'xyz'],
    ['MUNICIPIOS_SHA256', 'a'.repeat(63)],
    ['SHUTDOWN_TIMEOUT_MS', 'soon'],
    ['MUNICIPIOS_REFRESH_SECONDS', '0'],
    ['SHUTDOWN_TIMEOUT_MS', '-5'],
    ['TOKEN_LIFETIME_HOURS', '0'],
    ['AUTH_CACHE_SECONDS', '-1'],
    ['AUTH_CACHE_SECONDS', '61'],
    ['LOGIN_MAX_FAILURES', 'many'],
    ['LOGIN_LOCK_WINDOW_SECONDS', '0'],
    ['LOGIN_ADDRESS_MAX_FAILURES', '0'],
    ['LOGIN_MAX_DELAY_SECONDS', 'soon'],
    ['PASSWORD_RESET_LIFETIME_MINUTES', '-1'],
    ['PASSWORD_HASH_COST', '8'],
    ['PASSWORD_HASH_COST', '21'],
    ['PASSWORD_MIN_LENGTH', '7'],
    ['SIGNUP', 'anyone'],
    ['AUDIT_RETENTION_DAYS', '0'],
    ['HISTORY_RETENTION_DAYS', '0'],
    ['EMAIL_VERIFICATION_LIFETIME_HOURS', '0'],
    ['SIGNUP_RESEND_SECONDS', 'soon'],
    ['FRONTEND_VERIFY_URL', 'app.palanque.app/confirmar'],
    ['FRONTEND_SIGNUP_URL', 'app.palanque.app/cadastro'],
    ['INVITATION_LIFETIME_DAYS', '0'],
    ['INVITATION_LIFETIME_DAYS', '91'],
    ['TEAM_MAX_OPEN_INVITATIONS', '0'],
    ['PASSWORD_MIN_LENGTH', '65'],
    ['ADMIN_USERNAME', 'ana@palanque.app'],
    ['ADMIN_EMAIL', 'not-an-address'],
    ['ADMIN_PASSWORD', 'short'],
    ['SMTP_URL', 'smtp.example.com:25'],
    ['ASSISTANTS', 'estrategista'],
    ['ASSISTANTS', '{"id":"estrategista","name":"Estrategista"}'],
    ['ASSISTANTS', '[{"id":"estrategista"}]'],
    ['ASSISTANTS', '[{"id":"estrategista","name":"  "}]'],
    ['ASSISTANTS', '[{"id":"-x","name":"X"}]'],
    ['ASSISTANTS', '[{"id":"x","name":"X","model":"gpt"}]'],
    ['ASSISTANTS', '[{"id":"x","name":"X"},{"id":"x","name":"Y"}]'],
    ['DOCS_URL', 'docs.palanque.app'],
    ['DOCS_URL', 'ftp://palanque.app/docs'],
  ])('rejects %s=%j with a ConfigError naming the variable', (name, value) => {
    const error = configErrorFor({ [name]: value });
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.name).toBe('ConfigError');
    expect(error.message).toMatch(/^Invalid configuration:/);
    expect(error.message).toContain(`${name}: `);
  });

  it('names every bad variable in one message', () => {
    const error = configErrorFor({
      PORT: 'abc',
      BASE_PATH: 'v1',
      LOG_LEVEL: 'loud',
      DATABASE_URL: 'mysql://x',
      VALIDATE_RESPONSES: 'maybe',
      HOST: '0.0.0.0', // valid: must not be named
    });
    const named = error.message
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(':')[0]);
    expect(new Set(named)).toEqual(new Set(['PORT', 'BASE_PATH', 'LOG_LEVEL', 'DATABASE_URL', 'VALIDATE_RESPONSES']));
  });
});

describe('VAPID keys', () => {
  it('come as a pair of one key pair', () => {
    expect(() => loadConfig({ VAPID_PUBLIC_KEY: VAPID.publicKey })).toThrow(/VAPID_PRIVATE_KEY: must be set with its other half/);
    const other = webpush.generateVAPIDKeys();
    expect(() => loadConfig({ VAPID_PUBLIC_KEY: VAPID.publicKey, VAPID_PRIVATE_KEY: other.privateKey })).toThrow(/VAPID_PRIVATE_KEY: .*different key pairs/);
    expect(() => loadConfig({ VAPID_PUBLIC_KEY: 'short', VAPID_PRIVATE_KEY: VAPID.privateKey })).toThrow(/VAPID_PUBLIC_KEY: must be a VAPID public key/);
  });
});
