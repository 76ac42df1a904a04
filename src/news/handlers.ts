/**
 * The HTTP side of news sources: the public list (which never says who asked) and the authenticated
 * request, where an address already requested, in any status, is 409.
 */
import { callerOf } from '../http/auth.js';
import { invalidBody, requiredText } from '../http/body-fields.js';
import { sendEnvelope } from '../http/envelope.js';
import { ApiError, type ErrorDetail } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import { checkWebAddress } from '../web-address.js';
import { publicNewsSource, type NewsSources } from './sources.js';

type NewsOperations = 'listRequestedNewsSources' | 'requestNewsSource';

export function newsHandlers(sources: NewsSources): Pick<Required<OperationHandlers>, NewsOperations> {
  return {
    async listRequestedNewsSources(_req, res) {
      const rows = await sources.list();
      sendEnvelope(res, 200, rows.map(publicNewsSource), `${rows.length} news source${rows.length === 1 ? '' : 's'}.`);
    },

    async requestNewsSource(req, res) {
      const problems: ErrorDetail[] = [];
      const name = requiredText('name', req.body.name, problems);
      const url = checkWebAddress(req.body.url);
      if (!url.ok) problems.push(url.problem);
      if (problems.length > 0 || !url.ok) throw invalidBody(problems);

      const result = await sources.request(name, url.address, callerOf(res).user.id);
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
