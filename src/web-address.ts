/**
 * Web addresses as users paste them (research bookmarks, news sources): checked to be absolute http(s)
 * without credentials, and normalised so that one page or source is recognised however it was pasted.
 * The rules are the contract's ("Research bookmarks, news sources and web addresses" in the spec).
 */
import type { ErrorDetail } from './http/errors.js';

/** The longest address stored (the columns and the contract's `maxLength`). */
export const MAX_ADDRESS_LENGTH = 2048;

const TRACKING_PARAMETER = /^(utm_.*|fbclid|gclid)$/i;

export interface WebAddress {
  /** The address as sent, parsed and re-serialised (fragment kept). */
  href: string;
  /** Lower-cased scheme and host, no default port, fragment or tracking parameters, no trailing `/`. */
  normalised: string;
  /** What two addresses are compared by: the normalised form without its scheme and a leading `www.`. */
  key: string;
}

export type AddressCheck = { ok: true; address: WebAddress } | { ok: false; problem: ErrorDetail };

/** Checks and normalises the address in body field `field`; a problem is a field-level 422 detail. */
export function checkWebAddress(input: string, field = 'url'): AddressCheck {
  // The value is echoed when it is short and carries no credentials.
  const problem = (rule: string, message: string, echo = input.length <= 200): AddressCheck => ({
    ok: false,
    problem: echo ? { location: 'body', field, rule, message, value: input } : { location: 'body', field, rule, message },
  });
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    return problem('absolute_http_url', 'must be an absolute http or https address');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return problem('absolute_http_url', 'must be an absolute http or https address');
  if (url.username || url.password) return problem('no_credentials', 'must not contain a user name or password', false);

  const href = url.href;
  url.hash = '';
  for (const name of [...url.searchParams.keys()]) if (TRACKING_PARAMETER.test(name)) url.searchParams.delete(name);
  if ([...url.searchParams.keys()].length === 0) url.search = '';
  if (url.pathname !== '/') url.pathname = url.pathname.replace(/\/+$/, '') || '/';
  const normalised = url.href;
  if (href.length > MAX_ADDRESS_LENGTH || normalised.length > MAX_ADDRESS_LENGTH) {
    return problem('maxLength', `must not be longer than ${MAX_ADDRESS_LENGTH} characters once encoded`, false);
  }
  const key = normalised.replace(/^https?:\/\//, '').replace(/^www\./, '');
  return { ok: true, address: { href, normalised, key } };
}
