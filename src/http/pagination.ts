/** The contract's page structure (`links`, `count`, `total_pages`, `results`) for lists served from the database. */
import { notFound } from './errors.js';

export interface Page<Item> {
  links: { next: string | null; previous: string | null };
  count: number;
  total_pages: number;
  results: Item[];
}

/**
 * Builds one page. `listUrl` is the absolute address of the list, with any filters in its query;
 * a page past the last is 404 naming the last page (an empty list has one, empty, page).
 */
export function pageOf<Item>(results: Item[], total: number, page: number, pageSize: number, listUrl: string): Page<Item> {
  const totalPages = Math.max(1, Math.ceil(total / pageSize));
  if (page > totalPages) {
    throw notFound(`Page ${page} does not exist; the last page is ${totalPages}.`, [
      { location: 'query', field: 'page', rule: 'max_page', message: `must be <= ${totalPages}`, value: page },
    ]);
  }
  const link = (target: number) => {
    const url = new URL(listUrl);
    url.searchParams.set('page', String(target));
    return url.toString();
  };
  return {
    links: { next: page < totalPages ? link(page + 1) : null, previous: page > 1 ? link(page - 1) : null },
    count: total,
    total_pages: totalPages,
    results,
  };
}
