/**
 * News sources requested for monitoring in the stateful mock (src/news/): a public list without the
 * requester, one request per address.
 */
import type { HttpHandler } from 'msw';
import type { ErrorDetail } from '../../msw-validation.js';
import { conflict, envelope, invalidBody } from '../answers.js';
import type { On } from '../auth.js';
import { newId, now } from '../store.js';
import { addressKey, webAddressProblem } from '../web-address.js';

export function newsHandlers(on: On): HttpHandler[] {
  return [
    on('listRequestedNewsSources', ({ state }) => {
      const sources = [...state.newsSources.values()].sort((a, b) => a.id - b.id);
      return envelope(200, sources, `${sources.length} news source${sources.length === 1 ? '' : 's'}; page 1 of 1.`);
    }),
    on('requestNewsSource', ({ body, state }) => {
      const name = String(body.name ?? '').trim();
      const problems: ErrorDetail[] = [];
      if (name === '') problems.push({ location: 'body', field: 'name', rule: 'not_blank', message: 'must not be blank' });
      const urlProblem = webAddressProblem(body.url);
      if (urlProblem) problems.push(urlProblem);
      if (problems.length > 0) return invalidBody(problems);
      const url = String(body.url).trim();
      const existing = [...state.newsSources.values()].find((source) => addressKey(source.url) === addressKey(url));
      if (existing) {
        return conflict(`This news source was already requested (source ${existing.id}, status ${existing.status}).`, [
          { location: 'body', field: 'url', rule: 'unique_source', message: `already requested as source ${existing.id} (${existing.status})`, value: existing.url },
        ]);
      }
      const id = newId(state, state.newsSources.keys());
      const moment = now();
      const source = { id, name, url, status: 'requested', requested_at: moment, updated_at: moment };
      state.newsSources.set(id, source);
      return envelope(201, source, `News source ${id} requested.`);
    }),
  ];
}
