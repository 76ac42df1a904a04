/**
 * Each user's research bookmarks in the stateful mock (src/research/): private to their owner, one per
 * address (saving the same again changes nothing; with other fields it is a conflict).
 */
import type { HttpHandler } from 'msw';
import type { ErrorDetail } from '../../msw-validation.js';
import { conflict, envelope, invalidBody, notFound } from '../answers.js';
import type { On } from '../auth.js';
import { newId, now, type Json } from '../store.js';
import { addressKey, optionalText, webAddressProblem } from '../web-address.js';

export function researchHandlers(on: On): HttpHandler[] {
  const view = ({ user_id: _user, ...bookmark }: Json) => bookmark;
  return [
    on('listResearchBookmarks', ({ user, state }) => {
      const mine = [...state.bookmarks.values()].filter((bookmark) => bookmark.user_id === user.id).map(view);
      return envelope(200, mine, `${mine.length} bookmark${mine.length === 1 ? '' : 's'}.`);
    }),
    on('addResearchBookmark', ({ body, user, state }) => {
      const title = String(body.title ?? '').trim();
      const problems: ErrorDetail[] = [];
      if (title === '') problems.push({ location: 'body', field: 'title', rule: 'not_blank', message: 'must not be blank' });
      const urlProblem = webAddressProblem(body.url);
      if (urlProblem) problems.push(urlProblem);
      if (problems.length > 0) return invalidBody(problems);
      const fields = { title, url: String(body.url).trim(), source: optionalText(body.source), notes: optionalText(body.notes) };
      const existing = [...state.bookmarks.values()].find((bookmark) => bookmark.user_id === user.id && addressKey(bookmark.url) === addressKey(fields.url));
      if (existing) {
        if (existing.title === fields.title && existing.source === fields.source && existing.notes === fields.notes) {
          return envelope(200, view(existing), `You already saved this as bookmark ${existing.id}; nothing changed.`);
        }
        return conflict(`You already saved this address as bookmark ${existing.id}, with other fields. Remove it first.`, [
          { location: 'body', field: 'url', rule: 'unique_per_user', message: `already saved as bookmark ${existing.id}`, value: existing.id },
        ]);
      }
      const id = newId(state, state.bookmarks.keys());
      const bookmark = { id, ...fields, created_at: now(), user_id: user.id };
      state.bookmarks.set(id, bookmark);
      return envelope(201, view(bookmark), `Bookmark ${id} saved.`);
    }),
    on('removeResearchBookmark', ({ body, user, state }) => {
      const id = Number(body.id);
      const bookmark = state.bookmarks.get(id);
      if (!bookmark || bookmark.user_id !== user.id) return notFound(`You have no bookmark ${id}.`, [{ location: 'body', field: 'id', rule: 'own_bookmark', message: 'must be one of your bookmarks', value: id }]);
      state.bookmarks.delete(id);
      return envelope(200, { id, removed: true }, `Bookmark ${id} removed.`);
    }),
  ];
}
