/**
 * If-None-Match evaluation (RFC 9110, 13.1.2), used instead of Express's `req.fresh`: `fresh` refuses a
 * 304 whenever the request carries `Cache-Control: no-cache`, which fetch() adds by itself to every
 * request with a conditional header, so browsers and Node clients would never get one.
 */
export function ifNoneMatchHits(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, ''); // weak comparison
  return ifNoneMatch.split(',').some((candidate) => opaque(candidate) === opaque(etag));
}

/** An If-Match header (RFC 9110, 13.1.1): any current version (`*`), or the opaque tags of the versions it accepts. */
export type IfMatch = { any: true } | { any: false; tags: string[] };

/**
 * Reads If-Match; undefined when absent, 'malformed' when it is neither `*` nor a list of entity tags.
 * Weak tags (`W/"..."`) are dropped: If-Match compares strongly, so they never match.
 */
export function parseIfMatch(header: string | undefined): IfMatch | 'malformed' | undefined {
  if (header === undefined) return undefined;
  if (header.trim() === '*') return { any: true };
  const candidates = header.split(',').map((candidate) => candidate.trim());
  if (!candidates.every((candidate) => /^(W\/)?"[\x21\x23-\x7E]*"$/.test(candidate))) return 'malformed';
  return { any: false, tags: candidates.filter((candidate) => !candidate.startsWith('W/')).map((candidate) => candidate.slice(1, -1)) };
}
