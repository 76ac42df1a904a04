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
