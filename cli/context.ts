/**
 * What every API command starts from: the global options, the configuration file, the profile, and an
 * SDK client pointed at the chosen server with the profile's key.
 *
 * The server is `--base-url`, else the Prism mock with `--mock`, else $PALANQUE_BASE_URL, else the
 * profile's, else http://127.0.0.1:8000. The key is $PALANQUE_TOKEN, else the profile's, which is sent
 * only to the profile's own server: pointing a command elsewhere with --base-url does not leak it.
 */
import type { Command } from 'commander';
import { createApiClient, type PalanqueClient, type RetryEvent, type RetryOptions } from '../sdk/index.js';
import { configPath, DEFAULT_BASE_URL, normaliseBaseUrl, profileName, readConfig, type ConfigFile, type Profile } from './config.js';
import { deprecationNotice } from './deprecation-notice.js';
import { UsageError } from './errors.js';
import type { Output } from './output.js';

export const DEFAULT_MOCK_URL = 'http://127.0.0.1:4010';
/** The mock checks that a key is sent, not which. */
const MOCK_TOKEN = 'plq_mock_key_for_the_prism_mock_server_000000';

export interface GlobalOptions {
  profile?: string;
  baseUrl?: string;
  mock?: boolean;
  json?: boolean;
  envelope?: boolean;
  retry?: boolean;
  requestId?: string;
  idempotencyKey?: string;
}

export interface Context {
  options: GlobalOptions;
  output: Output;
  configFile: string;
  config: ConfigFile;
  profileName: string;
  profile: Profile | undefined;
  baseUrl: string;
  token: string | undefined;
  client: PalanqueClient;
  /** Headers the user set for this call (`--request-id`, `--idempotency-key`). */
  headers: Record<string, string>;
}

export function globalsOf(command: Command): GlobalOptions {
  return command.optsWithGlobals() as GlobalOptions;
}

export function outputOf(options: GlobalOptions): Output {
  return { json: Boolean(options.json || options.envelope), envelope: Boolean(options.envelope), stdout: process.stdout, stderr: process.stderr };
}

/** Tries after the first, for 429, 503 (with a short Retry-After) and failed connections. */
export const CLI_RETRIES = 3;

/**
 * The SDK's retry settings for a command: off with `--no-retry`; otherwise each wait is said on stderr
 * (`503 from server, retrying in 2 s (1/3)`), so a command never waits in silence. A longer Retry-After
 * than the SDK's limit is not waited for: the command ends at once with the server's message.
 */
export function retryOf(options: GlobalOptions, stderr: NodeJS.WritableStream = process.stderr): RetryOptions | false {
  if (options.retry === false) return false;
  return { retries: CLI_RETRIES, onRetry: (event) => stderr.write(`${retryNotice(event, CLI_RETRIES)}\n`) };
}

export function retryNotice({ attempt, waitMs, status, reason }: Pick<RetryEvent, 'attempt' | 'waitMs' | 'status' | 'reason'>, retries: number): string {
  const what = status === undefined ? `connection failed (${reason})` : `${status} from server`;
  const seconds = waitMs >= 10_000 || waitMs % 1000 === 0 ? String(Math.round(waitMs / 1000)) : (waitMs / 1000).toFixed(1);
  return `${what}, retrying in ${seconds} s (${attempt}/${retries})`;
}

export async function contextOf(command: Command): Promise<Context> {
  const options = globalsOf(command);
  const file = configPath();
  const config = await readConfig(file);
  const name = profileName(config, options.profile);
  const profile = config.profiles[name];
  // A profile named on purpose must exist: a typo must not send the command to the default server.
  if (options.profile && !profile && !options.baseUrl && !options.mock) {
    throw new UsageError(`no profile "${options.profile}" in ${file} (palanque profile list shows them; palanque login --profile ${options.profile} creates it)`);
  }
  const baseUrl = baseUrlOf(options, profile);
  const token = options.mock ? MOCK_TOKEN : (process.env.PALANQUE_TOKEN || (profile && profile.baseUrl === baseUrl ? profile.token : undefined));
  const client = createApiClient({ baseUrl, token, retry: retryOf(options) });
  client.use(deprecationNotice());
  const headers: Record<string, string> = {};
  if (options.requestId) headers['X-Request-Id'] = options.requestId;
  if (options.idempotencyKey) headers['Idempotency-Key'] = options.idempotencyKey;
  return { options, output: outputOf(options), configFile: file, config, profileName: name, profile, baseUrl, token, client, headers };
}

export function baseUrlOf(options: GlobalOptions, profile: Profile | undefined): string {
  if (options.baseUrl) return normaliseBaseUrl(options.baseUrl);
  if (options.mock) return normaliseBaseUrl(process.env.PALANQUE_MOCK_URL || DEFAULT_MOCK_URL);
  if (process.env.PALANQUE_BASE_URL) return normaliseBaseUrl(process.env.PALANQUE_BASE_URL);
  return profile?.baseUrl ?? DEFAULT_BASE_URL;
}
