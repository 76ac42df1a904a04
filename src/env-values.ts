/**
 * The kinds of value an environment variable may hold, as zod schemas shared by the settings of every
 * domain (`src/<domain>/settings.ts`) and the configuration that composes them (`config.ts`). Each turns
 * the variable's text into its value, or names what is wrong with it.
 */
import { z } from 'zod';

/** `true`, `false`, `1`, `0`, `yes` or `no`. */
export const booleanString = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
  .transform((value) => ['true', '1', 'yes'].includes(value));

/** `1mb`, `512kb`, `100b` or a number of bytes. */
export const byteSize = z.string().transform((value, ctx) => {
  const match = /^(\d+)\s*(b|kb|mb)?$/i.exec(value.trim());
  if (!match) {
    ctx.addIssue({ code: 'custom', message: 'must be a size such as 1mb, 512kb or a number of bytes' });
    return z.NEVER;
  }
  const units = { b: 1, kb: 1024, mb: 1024 * 1024 } as const;
  return Number(match[1]) * units[(match[2]?.toLowerCase() ?? 'b') as keyof typeof units];
});

/** An http(s) endpoint of another service; a query is allowed (some providers need one). */
export const endpoint = z
  .string()
  .url('must be an absolute URL')
  .regex(/^https?:\/\/[^#\s]+$/, 'must be an http(s) URL without a fragment');
