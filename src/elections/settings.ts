/** The elections' settings: the elections panel's API, and where and how the court's candidacy files are downloaded. */
import { z } from 'zod';

/** The electoral court's open-data hosts, where its candidacy files are published. */
export const DEFAULT_ELECTIONS_IMPORT_HOSTS = ['cdn.tse.jus.br', 'dadosabertos.tse.jus.br'] as const;

/** A host name (or an IPv4 address), as a URL's host is compared with it. */
const HOST_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

export const electionsEnvironment = z.object({
  ELECTIONS_PANEL_URL: z
    .string()
    .url('must be an absolute URL such as https://painel.example.org')
    .regex(/^https?:\/\/[^?#]*[^/?#]$/, 'must be http(s), without a trailing slash, query or fragment')
    .optional(),
  ELECTIONS_IMPORT_HOSTS: z
    .string()
    .transform((value) => value.split(',').map((host) => host.trim().toLowerCase()).filter(Boolean))
    // A host is downloaded from over https; `http://host` lets it be plain http (the tests' loopback servers).
    .pipe(z.array(z.string().refine((entry) => HOST_NAME.test(entry.replace(/^http:\/\//, '')), 'must be a comma-separated list of host names such as cdn.tse.jus.br, each written http://host where plain http is allowed')))
    .optional(),
  ELECTIONS_IMPORT_MAX_RECORD_BYTES: z.coerce.number().int().min(1024).max(1024 * 1024).default(8192),
});

type ElectionsEnvironment = z.output<typeof electionsEnvironment>;

/** The panel's API and the court's downloads, as the configuration names them. */
export function electionsSettingsOf(env: ElectionsEnvironment): { electionsPanelUrl: string | undefined; electionsImportHosts: string[]; electionsImportMaxRecordBytes: number } {
  return {
    electionsPanelUrl: env.ELECTIONS_PANEL_URL,
    electionsImportHosts: env.ELECTIONS_IMPORT_HOSTS ?? [...DEFAULT_ELECTIONS_IMPORT_HOSTS],
    electionsImportMaxRecordBytes: env.ELECTIONS_IMPORT_MAX_RECORD_BYTES,
  };
}
