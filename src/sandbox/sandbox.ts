/**
 * The sandbox: the real server on a temporary SQLite database, migrated and seeded with `fixtures/` (the
 * story the spec's examples tell), for front-end developers and provider integrations. Writes are real;
 * `resetSandbox` (or `palanque sandbox reset`) puts the seeded state back in well under a second. The
 * provider simulators of src/simulators/ run beside it, so SMS campaigns are sent, delivered and
 * answered, the elections-panel sync and the OAuth account links complete, with no account anywhere.
 *
 * The demo users share one password (SANDBOX_PASSWORD, default `palanque-sandbox`) and each gets an API
 * key at start; both are part of the seeded state, so they survive every reset. The keys are new at each
 * start, or with SANDBOX_DEMO_KEYS=fixed the same at every start (derived, see `fixedDemoKey`), so the
 * key in a front end's `.env` survives a restart.
 *
 * Browser front ends on the usual local dev servers (Vite's 5173, 3000) may call it: those origins are
 * allowed by CORS unless CORS_ORIGINS says otherwise.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RequestHandler } from 'express';
import { KEY_PREFIX } from '../accounts/tokens.js';
import { loadConfig } from '../config.js';
import { loadDemoFixtures } from '../demo/fixtures.js';
import { seedDemoData, SeedError } from '../demo/seed.js';
import type { Logger } from '../logger.js';
import { startServer, type RunningServer, type ServerParts } from '../serve.js';
import { ElectionsPanelSimulator } from '../simulators/elections-panel.js';
import { OAuthProviderSimulator } from '../simulators/oauth-provider.js';
import { SmsProviderSimulator } from '../simulators/sms-provider.js';
import { SocialnetSimulator } from '../simulators/socialnet.js';
import webpush from 'web-push';
import { sandboxHandlers, type SandboxControl, type SandboxResetReport } from './control.js';
import { DatabaseSnapshot } from './snapshot.js';

export const DEFAULT_SANDBOX_PASSWORD = 'palanque-sandbox';
/** What the simulated providers and the social network's webhook accept: fixed, so scripts can use them. */
export const SANDBOX_ELECTIONS_TOKEN = 'sandbox-elections-token';
export const SANDBOX_SOCIALNET_VERIFY_TOKEN = 'sandbox-verify-token';
export const SANDBOX_SOCIALNET_APP_SECRET = 'sandbox-app-secret';
/** What the simulated SMS provider bills a segment, as a Brazilian gateway reports it (negative, in reais). */
export const SANDBOX_SMS_PRICE = { perSegment: '-0.08000', unit: 'BRL' } as const;
/** The origins of the usual local front-end dev servers (Vite, Create React App, Next.js), allowed by default. */
export const SANDBOX_CORS_ORIGINS = ['http://localhost:5173', 'http://localhost:3000', 'http://127.0.0.1:5173', 'http://127.0.0.1:3000'];

/** `fresh`: new demo keys at every start (the default); `fixed`: the same keys at every start (SANDBOX_DEMO_KEYS=fixed). */
export type DemoKeys = 'fresh' | 'fixed';

/** A sandbox setting that cannot be used; `npm run sandbox` prints it and exits. */
export class SandboxSettingError extends Error {
  override name = 'SandboxSettingError';
}

export function demoKeysOf(value: string | undefined): DemoKeys {
  if (value === undefined || value === '' || value === 'fresh') return 'fresh';
  if (value === 'fixed') return 'fixed';
  throw new SandboxSettingError(`SANDBOX_DEMO_KEYS must be "fixed" (the same demo keys at every start) or "fresh" (the default); got "${value}".`);
}

/**
 * A demo user's key under SANDBOX_DEMO_KEYS=fixed: derived, not stored, from the username and the
 * sandbox password (HMAC-SHA256, in the shape of every key: `plq_` and 43 base64url characters), so the
 * same settings give the same keys on any machine and a new SANDBOX_PASSWORD gives new ones. Anyone who
 * knows the password can compute them: they are for a sandbox on one's own machine, never a shared server.
 */
export function fixedDemoKey(username: string, password: string): string {
  return KEY_PREFIX + createHmac('sha256', `palanque-sandbox-demo-key:${password}`).update(username).digest('base64url');
}

export interface SandboxOptions {
  /** The environment the configuration is read from (process.env by default); the sandbox overrides its database and providers. */
  environment?: NodeJS.ProcessEnv;
  logger: Logger;
  /** Start the provider simulators (default true). */
  simulators?: boolean;
  /** The hybrid mode's additions: another contract, and who answers its operations without a handler. */
  contractFile?: string;
  unimplemented?: RequestHandler;
  responseHeaders?: Record<string, string>;
}

export interface DemoUser {
  username: string;
  password: string;
  /** An API key issued at start: `Authorization: Token <key>`. */
  key: string;
  isAdmin: boolean;
}

export interface SandboxSimulators {
  sms: SmsProviderSimulator;
  /** The social network's messenger: people writing to connected Pages, and its send API. */
  messenger: SocialnetSimulator;
  electionsPanel: ElectionsPanelSimulator;
  searchnet: OAuthProviderSimulator;
  socialVideo: OAuthProviderSimulator;
}

export interface Sandbox {
  url: string;
  /** Where the sandbox writes its mail (.eml files): a sign-up's confirmation link, a reset link. */
  mailDir: string;
  users: DemoUser[];
  /** Whether the demo keys change at every start or stay the same (SANDBOX_DEMO_KEYS). */
  demoKeys: DemoKeys;
  /** The browser origins CORS allows (CORS_ORIGINS, else SANDBOX_CORS_ORIGINS). */
  corsOrigins: string[];
  simulators: SandboxSimulators | undefined;
  server: RunningServer;
  reset(): Promise<SandboxResetReport>;
  stop(): Promise<void>;
}

export async function startSandbox(options: SandboxOptions): Promise<Sandbox> {
  const base = options.environment ?? process.env;
  const demoKeys = demoKeysOf(base.SANDBOX_DEMO_KEYS);
  const workdir = mkdtempSync(join(tmpdir(), 'palanque-sandbox-'));
  const port = Number(base.PORT ?? 8000);
  const host = base.HOST ?? '127.0.0.1';
  const url = base.PUBLIC_URL ?? `http://${host}:${port}`;
  const simulators = options.simulators === false ? undefined : await startSimulators(url, options.logger);
  const password = base.SANDBOX_PASSWORD || DEFAULT_SANDBOX_PASSWORD;
  const smsAuthToken = randomBytes(16).toString('hex');
  try {
    const config = loadConfig({
      ...base,
      NODE_ENV: 'development',
      HOST: host,
      PORT: String(port),
      PUBLIC_URL: url,
      DATABASE_URL: `sqlite:${join(workdir, 'sandbox.sqlite')}`,
      MAIL_DIR: join(workdir, 'mail'),
      // A front end's sign-up page works against the sandbox; the confirmation mail is a file in MAIL_DIR.
      SIGNUP: base.SIGNUP ?? 'open',
      SECRETS_KEY: randomBytes(32).toString('base64'),
      // Push works in a browser against the sandbox (keys of its own unless given), and webhooks reach a
      // receiver on the developer's machine; failed deliveries are retried within seconds, not an hour.
      ...sandboxVapidKeys(base),
      OUTBOUND_ALLOW_PRIVATE_ADDRESSES: base.OUTBOUND_ALLOW_PRIVATE_ADDRESSES ?? 'true',
      WEBHOOK_RETRY_DELAY_SECONDS: base.WEBHOOK_RETRY_DELAY_SECONDS ?? '5',
      SOCIALNET_VERIFY_TOKEN: SANDBOX_SOCIALNET_VERIFY_TOKEN,
      SOCIALNET_APP_SECRET: SANDBOX_SOCIALNET_APP_SECRET,
      // Set, even empty, it is the deployment's choice; unset, the local dev servers may call.
      CORS_ORIGINS: base.CORS_ORIGINS ?? SANDBOX_CORS_ORIGINS.join(','),
      ...(simulators ? simulatorSettings(simulators, url, base) : {}),
    });
    let seeded: { users: DemoUser[]; snapshot: DatabaseSnapshot } | undefined;
    let control: SandboxControl | undefined;
    const server = await startServer(config, options.logger, {
      contractFile: options.contractFile,
      unimplemented: options.unimplemented,
      responseHeaders: options.responseHeaders,
      prepare: async (parts) => {
        seeded = await seedAndSnapshot(parts, { password, secretsKey: config.secretsKey!, passwordHashCost: config.accounts.passwordHashCost, smsAuthToken }, demoKeys);
        // A recipient of the demo campaign answers on a fresh sandbox (the banner's curl line): the
        // simulator knows the demo credential's account, token and sender before anything is sent.
        for (const credential of loadDemoFixtures().sms.credentials) simulators?.sms.knowSandboxAccount(credential.account_id, smsAuthToken, credential.sender_id);
      },
      // resetSandbox plugged in from here: the app itself refuses it (control/not-a-sandbox.ts).
      handlers: (parts) => sandboxHandlers((control = resettable(parts, seeded!.snapshot))),
    });
    return {
      url: server.url,
      mailDir: config.mail.directory,
      users: seeded!.users,
      demoKeys,
      corsOrigins: config.corsOrigins,
      simulators,
      server,
      reset: () => control!.reset(),
      async stop() {
        await server.shutdown('sandbox stopped');
        await stopSimulators(simulators);
        rmSync(workdir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await stopSimulators(simulators);
    rmSync(workdir, { recursive: true, force: true });
    throw error;
  }
}

/** The VAPID keys given in the environment, or a pair made for this sandbox. */
function sandboxVapidKeys(base: NodeJS.ProcessEnv): Record<'VAPID_PUBLIC_KEY' | 'VAPID_PRIVATE_KEY', string> {
  if (base.VAPID_PUBLIC_KEY && base.VAPID_PRIVATE_KEY) return { VAPID_PUBLIC_KEY: base.VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY: base.VAPID_PRIVATE_KEY };
  const { publicKey, privateKey } = webpush.generateVAPIDKeys();
  return { VAPID_PUBLIC_KEY: publicKey, VAPID_PRIVATE_KEY: privateKey };
}

/** Seeds the demo data, gives each demo user a key, and keeps a copy of the whole database to reset to. */
async function seedAndSnapshot(
  parts: ServerParts,
  settings: { password: string; secretsKey: string; passwordHashCost: number; smsAuthToken: string },
  demoKeys: DemoKeys,
): Promise<{ users: DemoUser[]; snapshot: DatabaseSnapshot }> {
  if (parts.municipalities.size === 0) {
    throw new SeedError('The sandbox needs the municipality list (the demo entities name municipalities): set MUNICIPIOS_SOURCE to a copy of it, a file or an http(s) URL.');
  }
  const report = await seedDemoData({ ...parts, ...parts.domains }, { ...settings, logger: parts.logger });
  const users: DemoUser[] = [];
  for (const { username, password } of report.passwords) {
    const user = await parts.accounts.users.byLoginName(username);
    if (!user) throw new Error(`the seed reported ${username}, who is not in the database`);
    const { key } = demoKeys === 'fixed' ? await parts.accounts.tokens.issueGiven(user.id, fixedDemoKey(username, password)) : await parts.accounts.tokens.issue(user.id);
    users.push({ username, password, key, isAdmin: Boolean(user.is_admin) });
  }
  return { users, snapshot: await DatabaseSnapshot.take(parts.sequelize) };
}

/** Resets one at a time: jobs are stopped (those running finish), the tables restored, then jobs and the list resume, and the key cache is emptied. */
function resettable(parts: Pick<ServerParts, 'sequelize' | 'jobs' | 'municipalities' | 'accounts'>, snapshot: DatabaseSnapshot): SandboxControl {
  let queue: Promise<unknown> = Promise.resolve();
  const resetOnce = async (): Promise<SandboxResetReport> => {
    const started = performance.now();
    await parts.jobs.stop();
    try {
      await snapshot.restore(parts.sequelize);
    } finally {
      await parts.jobs.start();
    }
    await parts.municipalities.reload();
    // The restored tables no longer hold the keys issued since the seed: the key cache must not either.
    parts.accounts.keyCache.forgetAll();
    return { resetAt: new Date(), durationMs: Math.round(performance.now() - started), rows: snapshot.rowCount };
  };
  return {
    reset() {
      const next = queue.then(resetOnce, resetOnce);
      queue = next.catch(() => undefined);
      return next;
    },
  };
}

async function startSimulators(url: string, logger: Logger): Promise<SandboxSimulators> {
  const sms = new SmsProviderSimulator();
  sms.sandboxMode({
    inboundWebhookUrl: `${url}/api/webhook/provider_sms/`,
    onError: (error) => logger.warn({ err: error }, 'the SMS provider simulator could not deliver a receipt'),
  });
  // Priced as Brazilian gateways bill, in reais per segment (an illustrative R$ 0,08), so campaign reports show a cost in BRL.
  sms.reportPrices(SANDBOX_SMS_PRICE);
  const electionsPanel = new ElectionsPanelSimulator();
  electionsPanel.addToken(SANDBOX_ELECTIONS_TOKEN);
  const oauthProvider = (name: string) => {
    const simulator = new OAuthProviderSimulator({ clientId: `palanque-sandbox-${name}`, clientSecret: randomBytes(16).toString('hex') });
    simulator.consentAs({ id: `sandbox-${name}-account`, name: `Conta de demonstração (${name})`, email: `demo@${name}.sandbox.test` });
    return simulator;
  };
  // Pages are learned from their first answer; POST /sandbox/messages plays a person writing to one.
  const messenger = new SocialnetSimulator(SANDBOX_SOCIALNET_APP_SECRET);
  messenger.sandboxMode({ webhookBaseUrl: url, onError: (error) => logger.warn({ err: error }, 'the messenger simulator could not deliver an event') });
  const simulators = { sms, messenger, electionsPanel, searchnet: oauthProvider('searchnet'), socialVideo: oauthProvider('socialvideo') };
  await Promise.all(Object.values(simulators).map((simulator) => simulator.start()));
  return simulators;
}

/** The environment that points the server at the simulators. */
function simulatorSettings(simulators: SandboxSimulators, url: string, base: NodeJS.ProcessEnv): Record<string, string> {
  const searchnet = simulators.searchnet.clientSettings('/userinfo');
  const socialVideo = simulators.socialVideo.clientSettings('/channels');
  const socialVideoRedirect = base.SOCIALVIDEO_REDIRECT_URI ?? `${url}/api/social_callback/`;
  simulators.searchnet.allowRedirectUri(`${url}/api/callback/searchnet/`);
  simulators.socialVideo.allowRedirectUri(socialVideoRedirect);
  return {
    SMS_PROVIDER_URL: simulators.sms.url,
    SOCIALNET_GRAPH_URL: simulators.messenger.url,
    ELECTIONS_PANEL_URL: simulators.electionsPanel.url,
    SEARCHNET_CLIENT_ID: searchnet.clientId,
    SEARCHNET_CLIENT_SECRET: searchnet.clientSecret,
    SEARCHNET_AUTHORIZE_URL: searchnet.authorizeUrl,
    SEARCHNET_TOKEN_URL: searchnet.tokenUrl,
    SEARCHNET_USERINFO_URL: searchnet.profileUrl,
    SOCIALVIDEO_CLIENT_ID: socialVideo.clientId,
    SOCIALVIDEO_CLIENT_SECRET: socialVideo.clientSecret,
    SOCIALVIDEO_AUTHORIZE_URL: socialVideo.authorizeUrl,
    SOCIALVIDEO_TOKEN_URL: socialVideo.tokenUrl,
    SOCIALVIDEO_CHANNELS_URL: socialVideo.profileUrl,
    SOCIALVIDEO_REDIRECT_URI: socialVideoRedirect,
  };
}

async function stopSimulators(simulators: SandboxSimulators | undefined): Promise<void> {
  if (simulators) await Promise.all(Object.values(simulators).map((simulator) => simulator.stop()));
}
