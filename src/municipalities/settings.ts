/** The municipality list's settings: where it is imported from, the checksum it must have, and how often the in-memory list looks for changes. */
import { z } from 'zod';

/** The pinned upstream copy of the municipality list (see ../shared/data/README.md). */
export const DEFAULT_MUNICIPIOS_SOURCE =
  'https://raw.githubusercontent.com/kelvins/municipios-brasileiros/194cfcc3062dfc8a8f55bfdc9a630b3aee1f59f4/csv/municipios.csv';
export const DEFAULT_MUNICIPIOS_SHA256 = '4c7cd386e86e152080b01f439da1407e6e5ee7f41372587f2edae0f69dd8b938';

/** MUNICIPIOS_SHA256 may be set empty, deliberately: the check is then skipped (the configuration keeps that empty value). */
export const municipalitiesEnvironment = z.object({
  MUNICIPIOS_SOURCE: z.string().min(1).default(DEFAULT_MUNICIPIOS_SOURCE),
  MUNICIPIOS_SHA256: z
    .string()
    .regex(/^([0-9a-f]{64})?$/i, 'must be a sha256 in hex, or empty to skip the check')
    .default(DEFAULT_MUNICIPIOS_SHA256),
  MUNICIPIOS_REFRESH_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
});

export function municipalitySettingsOf(env: z.output<typeof municipalitiesEnvironment>): { municipiosSource: string; municipiosSha256: string | undefined; municipiosRefreshMs: number } {
  return {
    municipiosSource: env.MUNICIPIOS_SOURCE,
    municipiosSha256: env.MUNICIPIOS_SHA256 === '' ? undefined : env.MUNICIPIOS_SHA256.toLowerCase(),
    municipiosRefreshMs: env.MUNICIPIOS_REFRESH_SECONDS * 1000,
  };
}
