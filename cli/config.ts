/**
 * The per-user configuration file: one profile per server, each with its address and, once logged in,
 * its API key and the device token its logins send. The key is a credential, so the file is written with mode 0600 (its folder 0700), and
 * replaced atomically (a temporary file renamed over it), so an interrupted write never leaves half a file.
 *
 * Location: $PALANQUE_CONFIG, else $XDG_CONFIG_HOME/palanque/config.json, else ~/.config/palanque/config.json.
 *
 *   { "defaultProfile": "default",
 *     "profiles": { "default": { "baseUrl": "http://127.0.0.1:8000", "token": "plq_...", "username": "ana.souza", "userId": 1, "deviceToken": "plqd_..." } } }
 */
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UsageError } from './errors.js';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8000';
export const DEFAULT_PROFILE = 'default';

export interface Profile {
  baseUrl: string;
  token?: string;
  /** Who the token belongs to (from the login answer), for `whoami`. */
  username?: string;
  userId?: number;
  /** When the token stops working (ISO 8601). */
  expiresAt?: string;
  /**
   * The device token of the last login to this server (`data.device_token`): sent with the next login,
   * so that others' failed logins at the name never delay this machine's. Kept after logout.
   */
  deviceToken?: string;
}

export interface ConfigFile {
  defaultProfile?: string;
  profiles: Record<string, Profile>;
}

export class ConfigFileError extends Error {
  override name = 'ConfigFileError';
}

export function configPath(environment: NodeJS.ProcessEnv = process.env): string {
  if (environment.PALANQUE_CONFIG) return environment.PALANQUE_CONFIG;
  const base = environment.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'palanque', 'config.json');
}

export async function readConfig(path: string): Promise<ConfigFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw new ConfigFileError(`Cannot read the configuration file ${path}: ${(error as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text) as Partial<ConfigFile>;
    if (!parsed || typeof parsed !== 'object' || (parsed.profiles !== undefined && typeof parsed.profiles !== 'object')) throw new Error('not a configuration object');
    return { ...parsed, profiles: parsed.profiles ?? {} };
  } catch (error) {
    throw new ConfigFileError(`The configuration file ${path} is not valid (${(error as Error).message}); fix or delete it.`);
  }
}

export async function writeConfig(path: string, config: ConfigFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, JSON.stringify(config, null, 2) + '\n', { mode: 0o600 });
  // The mode given to writeFile is masked by the umask; make sure of it before the key is in place.
  await chmod(temporary, 0o600);
  await rename(temporary, path);
}

/** The profile to use: `--profile`, else $PALANQUE_PROFILE, else the file's default, else `default`. */
export function profileName(config: ConfigFile, chosen: string | undefined, environment: NodeJS.ProcessEnv = process.env): string {
  return chosen || environment.PALANQUE_PROFILE || config.defaultProfile || DEFAULT_PROFILE;
}

/** A base URL without its trailing slash, after checking it is an http(s) URL (a usage error otherwise). */
export function normaliseBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`"${value}" is not a URL (expected e.g. ${DEFAULT_BASE_URL})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`"${value}" is not an http(s) URL`);
  return url.toString().replace(/\/+$/, '');
}
