/**
 * ETags as the server sends and judges them. An entity's version is its strong tag (`"3"`), and an update
 * whose If-Match names no current version is refused with 409 `edit_conflict`, so a stale write never
 * overwrites a newer one. The court's reads carry a weak tag of what they answer, and an If-None-Match
 * that holds it is answered 304 without a body.
 */
import { conflict, envelope } from './answers.js';

/** An entity's version as its ETag. */
export const versionTag = (version: number) => `"${version}"`;

/** The server's 409 `edit_conflict` when If-Match names no current version of the entity; undefined when it holds, is `*` or is absent. */
export function staleVersion(ifMatch: string | null, entityId: number, version: number): Response | undefined {
  if (ifMatch === null || ifMatch.trim() === '*') return undefined;
  const tags = ifMatch.split(',').map((tag) => tag.trim().replace(/^W\//, ''));
  const current = versionTag(version);
  if (tags.includes(current)) return undefined;
  return conflict(`Entity ${entityId} was changed since you read it: your version is ${ifMatch.slice(0, 100)}, the current one is ${current}. Read it again and reapply your change.`, [
    { location: 'header', field: 'If-Match', rule: 'current_version', message: `must be the current version ${current}`, value: ifMatch.slice(0, 200) },
  ], 'edit_conflict');
}

/** A read with its weak ETag and the server's Cache-Control: 304 to an If-None-Match that holds the tag. */
export function taggedRead(request: Request, etag: string, data: unknown, message: string): Response {
  const headers = { ETag: etag, 'Cache-Control': 'private, no-cache' };
  const sent = request.headers.get('if-none-match');
  if (sent !== null && sent.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag.replace(/^W\//, ''))) return new Response(null, { status: 304, headers });
  return envelope(200, data, message, headers);
}
