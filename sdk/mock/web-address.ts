/**
 * The http(s) addresses of bookmarks and news sources, checked and compared as src/web-address.ts does,
 * simplified: an absolute http or https address, compared without its scheme, `www.` and trailing slash.
 */
import type { ErrorDetail } from '../msw-validation.js';

/** The comparison key of a web address (src/web-address.ts, simplified: scheme, `www.`, trailing slash). */
export const addressKey = (url: string) => url.trim().replace(/^https?:\/\//i, '').replace(/^www\./i, '').replace(/\/+$/, '').toLowerCase();

export function webAddressProblem(url: unknown): ErrorDetail | undefined {
  try {
    const parsed = new URL(String(url).trim());
    if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return undefined;
  } catch {
    // fall through
  }
  return { location: 'body', field: 'url', rule: 'absolute_http_url', message: 'must be an absolute http or https address', value: String(url) };
}

export function optionalText(value: unknown): string | null {
  const trimmed = typeof value === 'string' ? value.trim() : '';
  return trimmed === '' ? null : trimmed;
}
