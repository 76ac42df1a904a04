/**
 * The HTTP side of news sources: the public list (which never says who asked) and the authenticated
 * request, where an address already requested, in any status, is 409.
 */
import { callerOf } from '../http/auth.js';
import { invalidBody, requiredText } from '../http/body-fields.js';
import { sendEnvelope } from '../http/envelope.js';
import { ApiError, notFound, type ErrorDetail } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import { checkWebAddress } from '../web-address.js';
import { publicNewsSource, type NewsSources } from './sources.js';
import { counted } from '../http/counted.js';

type NewsOperations = 'listRequestedNewsSources' | 'requestNewsSource';

/** Sources per page of the public list. */
export const SOURCES_PER_PAGE = 100;

export function newsHandlers(sources: NewsSources): Pick<Required<OperationHandlers>, NewsOperations> {
  return {
    async listRequestedNewsSources(req, res) {
      const page = req.query.page ?? 1;
      const { total, rows } = await sources.page(page, SOURCES_PER_PAGE);
      const pages = Math.max(1, Math.ceil(total / SOURCES_PER_PAGE));
      if (page > pages) throw notFound(`There is no page ${page}: the list has ${pages}.`, [{ location: 'query', field: 'page', rule: 'existing_page', message: `must be at most ${pages}`, value: page }]);
      // `data` stays the array seed clients read; the pages are linked in the header (RFC 8288),
      // relative to this request's own address so they hold behind any base path or proxy.
      const links = [...(page < pages ? [`<?page=${page + 1}>; rel="next"`] : []), ...(page > 1 ? [`<?page=${page - 1}>; rel="prev"`] : [])];
      if (links.length > 0) res.setHeader('Link', links.join(', '));
      sendEnvelope(res, 200, rows.map(publicNewsSource), `${counted(total, 'news source')}; page ${page} of ${pages}.`);
    },

    async requestNewsSource(req, res) {
      const problems: ErrorDetail[] = [];
      const name = requiredText('name', req.body.name, problems);
      const url = checkWebAddress(req.body.url);
      if (!url.ok) problems.push(url.problem);
      if (problems.length > 0 || !url.ok) throw invalidBody(problems);

      const result = await sources.request(name, url.address, callerOf(res).user.id);
      if (result.outcome === 'too_many_open') {
        throw invalidBody([
          {
            location: 'body',
            field: 'url',
            rule: 'max_open_requests',
            message: `you have ${result.open} sources awaiting review, the most allowed (${result.max}); request more once some are reviewed`,
            value: result.open,
          },
        ]);
      }
      if (result.outcome === 'already_requested') {
        const { id, status, url: normalised } = result.existing;
        throw new ApiError(409, 'conflict', `This news source was already requested (source ${id}, status ${status}).`, [
          { location: 'body', field: 'url', rule: 'unique_source', message: `already requested as source ${id} (${status})`, value: normalised },
        ]);
      }
      sendEnvelope(res, 201, publicNewsSource(result.source), `News source ${result.source.id} requested.`);
    },
  };
}
