/**
 * Pages of a list the stateful mock holds, as the server pages its lists: the same page sizes per
 * operation (each domain's constant), the same links, and the same 404 past the last page.
 */
import { errorResponse } from '../msw-validation.js';

/** The server's page (src/http/pagination.ts): links that keep the filters, 404 past the last page. */
export function pageOf<Item>(items: Item[], page: number, pageSize: number, listUrl: URL) {
  const totalPages = Math.max(1, Math.ceil(items.length / pageSize));
  if (page > totalPages) {
    return errorResponse(404, 'not_found', `Page ${page} does not exist; the last page is ${totalPages}.`, [{ location: 'query', field: 'page', rule: 'max_page', message: `must be <= ${totalPages}`, value: page }]);
  }
  const link = (target: number) => {
    const url = new URL(listUrl);
    url.searchParams.set('page', String(target));
    return url.href;
  };
  return {
    links: { next: page < totalPages ? link(page + 1) : null, previous: page > 1 ? link(page - 1) : null },
    count: items.length,
    total_pages: totalPages,
    results: items.slice((page - 1) * pageSize, page * pageSize),
  };
}
