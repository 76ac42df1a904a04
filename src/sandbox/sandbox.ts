/**
 * The sandbox: the real server on a temporary SQLite database, migrated and seeded with `fixtures/` (the
 * story the spec's examples tell), for front-end developers and provider integrations. Writes are real;
 * `resetSandbox` (or `palanque sandbox reset`) puts the seeded state back in well under a second. The
 * provider simulators of src/simulators/ run beside it, so SMS campaigns are sent, delivered and
 * answered, the elections-panel sync and the OAuth account links complete, with no account anywhere.
 *
 * The demo users share one password (SANDBOX_PASSWORD, default `palanque-sandbox`) and each gets an API
 * key at start; both are part of the seeded state, so they survive every reset.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RequestHandler } from 'express';
import { loadConfig } from '../config.js';
import { seedDemoData, SeedError } from '../db/seed.js';
import type { Logger } from '../logger.js';
import { startServer, type RunningServer, type ServerParts } from '../serve.js';
import { ElectionsPanelSimulator } from '../simulators/elections-panel.js';
import { OAuthProviderSimulator } from '../simulators/oauth-provider.js';
import { SmsProviderSimulator } from '../simulators/sms-provider.js';
import type { SandboxControl, SandboxResetReport } from './control.js';
import { DatabaseSnapshot } from './snapshot.js';

export const DEFAULT_SANDBOX_PASSWORD = 'palanque-sandbox';
/** What the simulated providers and the social network's webhook accept: fixed, so scripts can use them. */
export const SANDBOX_ELECTIONS_TOKEN = 'sandbox-elections-token';
export const SANDBOX_SOCIALNET_VERIFY_TOKEN = 'sandbox-verify-token';
export const SANDBOX_SOCIALNET_APP_SECRET = 'sandbox-app-secret';

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
  electionsPanel: ElectionsPanelSimulator;
  searchnet: OAuthProviderSimulator;
  socialVideo: OAuthProviderSimulator;
}

export interface Sandbox {
  url: string;
  users: DemoUser[];
  simulators: SandboxSimulators | undefined;
  server: RunningServer;
  reset(): Promise<SandboxResetReport>;
  stop(): Promise<void>;
}

export async function startSandbox(options: SandboxOptions): Promise<Sandbox> {
  const base = options.environment ?? process.env;
  const workdir = mkdtempSync(join(tmpdir(), 'palanque-sandbox-'));
  const port = Number(base.PORT ?? 8000);
  const host = base.HOST ?? '127.0.0.1';
  const url = base.PUBLIC_URL ?? `http://${host}:${port}`;
  const simulators = options.simulators === false ? undefined : await startSimulators(url, options.logger);
  const password = base.SANDBOX_PASSWORD || DEFAULT_SANDBOX_PASSWORD;
  try {
    const config = loadConfig({
      ...base,
      NODE_ENV: 'development',
      HOST: host,
      PORT: String(port),
      PUBLIC_URL: url,
      DATABASE_URL: `sqlite:${join(workdir, 'sandbox.sqlite')}`,
      MAIL_DIR: join(workdir, 'mail'),
      SECRETS_KEY: randomBytes(32).toString('base64'),
      SOCIALNET_VERIFY_TOKEN: SANDBOX_SOCIALNET_VERIFY_TOKEN,
      SOCIALNET_APP_SECRET: SANDBOX_SOCIALNET_APP_SECRET,
      ...(simulators ? simulatorSettings(simulators, url, base) : {}),
    });
    let seeded: { users: DemoUser[]; snapshot: DatabaseSnapshot } | undefined;
    let control: SandboxControl | undefined;
    const server = await startServer(config, options.logger, {
      contractFile: options.contractFile,
      unimplemented: options.unimplemented,
      responseHeaders: options.responseHeaders,
      prepare: async (parts) => {
        seeded = await seedAndSnapshot(parts, { password, secretsKey: config.secretsKey!, passwordHashCost: config.accounts.passwordHashCost });
      },
      sandbox: (parts) => (control = resettable(parts, seeded!.snapshot)),
    });
    return {
      url: server.url,
      users: seeded!.users,
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

/** Seeds the demo data, gives each demo user a key, and keeps a copy of the whole database to reset to. */
async function seedAndSnapshot(
  parts: ServerParts,
  settings: { password: string; secretsKey: string; passwordHashCost: number },
): Promise<{ users: DemoUser[]; snapshot: DatabaseSnapshot }> {
  if (parts.municipalities.size === 0) {
    throw new SeedError('The sandbox needs the municipality list (the demo entities name municipalities): set MUNICIPIOS_SOURCE to a copy of it, a file or an http(s) URL.');
  }
  const report = await seedDemoData({ ...parts, ...parts.domains }, { ...settings, logger: parts.logger });
  const users: DemoUser[] = [];
  for (const { username, password } of report.passwords) {
    const user = await parts.accounts.users.byLoginName(username);
    if (!user) throw new Error(`the seed reported ${username}, who is not in the database`);
    users.push({ username, password, key: (await parts.accounts.tokens.issue(user.id)).key, isAdmin: Boolean(user.is_admin) });
  }
  return { users, snapshot: await DatabaseSnapshot.take(parts.sequelize) };
}

/** Resets one at a time: jobs are stopped (those running finish), the tables restored, then jobs and the list resume. */
function resettable(parts: Pick<ServerParts, 'sequelize' | 'jobs' | 'municipalities'>, snapshot: DatabaseSnapshot): SandboxControl {
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
  const electionsPanel = new ElectionsPanelSimulator();
  electionsPanel.addToken(SANDBOX_ELECTIONS_TOKEN);
  const oauthProvider = (name: string) => {
    const simulator = new OAuthProviderSimulator({ clientId: `palanque-sandbox-${name}`, clientSecret: randomBytes(16).toString('hex') });
    simulator.consentAs({ id: `sandbox-${name}-account`, name: `Conta de demonstração (${name})`, email: `demo@${name}.sandbox.test` });
    return simulator;
  };
  const simulators = { sms, electionsPanel, searchnet: oauthProvider('searchnet'), socialVideo: oauthProvider('socialvideo') };
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
