/**
 * The electoral court's data in the stateful mock (src/elections/tse/read-handlers.ts): its demo data's
 * reads, and the parties registered with the court on a day (registered-parties.ts).
 */
import type { HttpHandler } from 'msw';
import { errorResponse } from '../../msw-validation.js';
import { COVERED_FROM as REGISTERED_PARTIES_FROM, partiesRegisteredOn, REGISTERED_PARTIES as REGISTERED_PARTY_LIST } from '@palanque/rules/registered-parties';
import { envelope } from '../answers.js';
import type { On } from '../auth.js';
import { taggedRead } from '../etags.js';
import { pageOf } from '../paging.js';
import type { State } from '../store.js';
import * as courtReads from './court-reads.js';

/**
 * The reads of the court's demo data (answers of court-reads.ts), with the server's weak `ETag` and
 * `Cache-Control`, 304 to an If-None-Match that holds the tag, and the search paged by 30 with its filters
 * kept in the links. The demo data is read-only: no operation writes it.
 */
export function courtReadHandlers(on: On): HttpHandler[] {
  const EMPTY: courtReads.CourtTables = { elections: [], offices: [], codes: [], parties: [], federations: [], coalitions: [], units: [], candidacies: [] };
  const tablesOf = (state: State) => ({ ...EMPTY, ...(state.court as unknown as Partial<courtReads.CourtTables>) });
  const answer = <Data>(request: Request, result: courtReads.CourtAnswer<Data> | Response, view: unknown = null): Response => {
    if (result instanceof Response) return result;
    if ('status' in result) return errorResponse(result.status, result.code, result.message, result.details);
    return taggedRead(request, courtReads.weakTagOf([result.data, view]), result.data, result.message);
  };
  return [
    on('listElections', ({ request, url, state }) => answer(request, courtReads.listElections(tablesOf(state), url.searchParams))),
    on('listElectionOffices', ({ request, state }) => answer(request, courtReads.listOffices(tablesOf(state)))),
    on('listElectionParties', ({ request, url, state }) => answer(request, courtReads.listParties(tablesOf(state), url.searchParams))),
    // The registered parties are reference data of their own (packages/rules/src/registered-parties.ts), as the server's table seeded from it.
    on('listRegisteredParties', ({ url }) => {
      const day = url.searchParams.get('em');
      if (day !== null && (!/^\d{4}-\d{2}-\d{2}$/.test(day) || day < REGISTERED_PARTIES_FROM)) {
        return errorResponse(400, 'bad_request', `The request is malformed: em must be a day (YYYY-MM-DD) from ${REGISTERED_PARTIES_FROM} on.`, [
          { location: 'query', field: 'em', rule: 'covered_day', message: `must be a day from ${REGISTERED_PARTIES_FROM} on (the list of registered parties covers no earlier day)`, value: day },
        ]);
      }
      const parties = day === null ? [...REGISTERED_PARTY_LIST] : partiesRegisteredOn(REGISTERED_PARTY_LIST, day);
      return envelope(200, parties, `${parties.length} ${parties.length === 1 ? 'party' : 'parties'}${day === null ? '' : ` registered on ${day}`}.`);
    }),
    on('getElectionCodes', ({ request, url, state }) => answer(request, courtReads.codeTables(tablesOf(state), url.searchParams))),
    on('searchCandidacies', ({ request, url, state, base }) => {
      const found = courtReads.searchCandidacies(tablesOf(state), url.searchParams);
      if ('status' in found) return answer(request, found);
      const listUrl = new URL(`${base}/api/elections/candidacies/`);
      for (const filter of ['nome', 'nr_candidato', 'partido', 'cd_cargo', 'uf', 'codigo_ibge', 'cd_eleicao']) {
        const value = url.searchParams.get(filter);
        if (value !== null) listUrl.searchParams.set(filter, value);
      }
      const paged = pageOf(found.data, Number(url.searchParams.get('page') ?? 1), courtReads.CANDIDACIES_PER_PAGE, listUrl);
      return answer(request, paged instanceof Response ? paged : { data: paged, message: found.message });
    }),
    on('getCandidacy', ({ request, url, state, user }) => answer(request, courtReads.candidacy(tablesOf(state), url.searchParams, user.is_admin), user.is_admin)),
  ];
}
