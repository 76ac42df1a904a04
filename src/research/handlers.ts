/**
 * The HTTP side of research bookmarks: list, save and remove the caller's own. Bookmarks are personal,
 * admins included, so someone else's bookmark is 404 exactly like a missing one.
 */
import { callerOf } from '../http/auth.js';
import { invalidBody, optionalText, requiredText } from '../http/body-fields.js';
import { sendEnvelope } from '../http/envelope.js';
import { ApiError, notFound, type ErrorDetail } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import { checkWebAddress } from '../web-address.js';
import { MAX_BOOKMARKS_PER_USER, type ResearchBookmarkRow, type ResearchBookmarks } from './bookmarks.js';
import { counted } from '../http/counted.js';

type ResearchOperations = 'listResearchBookmarks' | 'addResearchBookmark' | 'removeResearchBookmark';

export function researchHandlers(bookmarks: ResearchBookmarks): Pick<Required<OperationHandlers>, ResearchOperations> {
  return {
    async listResearchBookmarks(_req, res) {
      const rows = await bookmarks.list(callerOf(res).user.id);
      sendEnvelope(res, 200, rows.map(publicBookmark), `${counted(rows.length, 'bookmark')}.`);
    },

    async addResearchBookmark(req, res) {
      const problems: ErrorDetail[] = [];
      const title = requiredText('title', req.body.title, problems);
      const url = checkWebAddress(req.body.url);
      if (!url.ok) problems.push(url.problem);
      if (problems.length > 0 || !url.ok) throw invalidBody(problems);

      const bookmark = { title, address: url.address, source: optionalText(req.body.source), notes: optionalText(req.body.notes) };
      const result = await bookmarks.save(callerOf(res).user.id, bookmark);
      switch (result.outcome) {
        case 'created':
          sendEnvelope(res, 201, publicBookmark(result.bookmark), `Bookmark ${result.bookmark.id} saved.`);
          return;
        case 'unchanged':
          sendEnvelope(res, 200, publicBookmark(result.bookmark), `You already saved this as bookmark ${result.bookmark.id}; nothing changed.`);
          return;
        case 'saved_differently':
          throw new ApiError(409, 'conflict', `You already saved this address as bookmark ${result.existing.id}, with other fields. Remove it first.`, [
            { location: 'body', field: 'url', rule: 'unique_per_user', message: `already saved as bookmark ${result.existing.id}`, value: result.existing.id },
          ]);
        case 'limit_reached':
          throw new ApiError(409, 'conflict', `You already keep ${MAX_BOOKMARKS_PER_USER} bookmarks, the most allowed. Remove some first.`, [
            { location: 'body', field: '', rule: 'max_bookmarks', message: `a user keeps at most ${MAX_BOOKMARKS_PER_USER} bookmarks` },
          ]);
      }
    },

    async removeResearchBookmark(req, res) {
      const { id } = req.body;
      if (!(await bookmarks.remove(callerOf(res).user.id, id))) {
        throw notFound(`You have no bookmark ${id}.`, [
          { location: 'body', field: 'id', rule: 'own_bookmark', message: 'must be one of your bookmarks', value: id },
        ]);
      }
      sendEnvelope(res, 200, { id, removed: true as const }, `Bookmark ${id} removed.`);
    },
  };
}

function publicBookmark(row: ResearchBookmarkRow) {
  return {
    id: row.id,
    title: row.title,
    url: row.url,
    source: row.source,
    notes: row.notes,
    created_at: new Date(row.created_at).toISOString(),
  };
}
