/** The list's response body and its ETag, shared by the fast path and the validated handler. */
import { createHash } from 'node:crypto';
import type { ResponseBody } from '../http/operations.js';
import type { MunicipalityPage } from './catalog.js';

export type ListBody = ResponseBody<'listMunicipalities', 200>;

export const LIST_PATH = '/api/municipios/';
export const CACHE_CONTROL = 'public, max-age=60';

/** `listUrl` is the absolute URL of the list (origin + base path + LIST_PATH). */
export function renderListBody(page: MunicipalityPage, codigoUf: number | undefined, listUrl: string): ListBody {
  const link = (target: number) => {
    const query = new URLSearchParams();
    if (codigoUf !== undefined) query.set('codigo_uf', String(codigoUf));
    query.set('page', String(target));
    return `${listUrl}?${query}`;
  };
  return {
    links: {
      next: page.page < page.totalPages ? link(page.page + 1) : null,
      previous: page.page > 1 ? link(page.page - 1) : null,
    },
    count: page.count,
    total_pages: page.totalPages,
    results: page.results,
  };
}

/** A strong ETag from the serialised body: it changes exactly when the bytes a client gets change. */
export function etagOf(serialisedBody: string): string {
  return `"${createHash('sha1').update(serialisedBody).digest('base64url')}"`;
}
