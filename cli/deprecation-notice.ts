/**
 * The CLI's side of deprecation as a protocol (issue 45 §2): when the server answers a call with RFC
 * 9745's `Deprecation` header (the operation is deprecated, or the call used a deprecated parameter or
 * field), the command says so once on stderr, with the date, the `Sunset` when there is one and where to
 * read more, and goes on: stdout stays the answer alone, so scripts that read it keep working. Once per
 * client, and a command makes one: a loop of calls warns once.
 */
import type { Middleware } from 'openapi-fetch';

export function deprecationNotice(stderr: NodeJS.WritableStream = process.stderr): Middleware {
  let warned = false;
  return {
    onResponse({ request, response }) {
      const deprecation = response.headers.get('Deprecation');
      if (deprecation === null || warned) return undefined;
      warned = true;
      stderr.write(`${noticeOf(request, response.headers, deprecation)}\n`);
      return undefined;
    },
  };
}

/** `Warning: POST /api/entidade/add/ uses what the API deprecated on 2026-11-29; ... See <docs>.` */
export function noticeOf(request: Request, headers: Headers, deprecation: string): string {
  const url = new URL(request.url);
  const seconds = /^@(-?\d+)$/.exec(deprecation.trim())?.[1];
  const since = seconds === undefined ? deprecation : new Date(Number(seconds) * 1000).toISOString().slice(0, 10);
  const sunset = headers.get('Sunset');
  const parts = [`Warning: ${request.method} ${url.pathname} uses what the API deprecated on ${since}`];
  if (sunset) parts.push(`it may stop working after ${sunset}`);
  const links = linksOf(headers.get('Link') ?? '');
  if (links['successor-version']) parts.push(`its successor is ${new URL(links['successor-version'], url).href}`);
  const docs = links.deprecation ? ` See ${new URL(links.deprecation, url).href}` : '';
  return `${parts.join('; ')}.${docs}`;
}

/** The targets of a Link header by relation (only the first of each). */
function linksOf(header: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const match of header.matchAll(/<([^>]*)>([^,]*)/g)) {
    const rel = /rel="?([^";]+)"?/.exec(match[2] ?? '')?.[1];
    if (rel) for (const name of rel.split(/\s+/)) found[name] ??= match[1]!;
  }
  return found;
}
