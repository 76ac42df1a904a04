/**
 * The HTTP side of the electoral court's data (issue 22): listElections, listElectionOffices,
 * listElectionParties, listRegisteredParties (issue 42), getElectionCodes, searchCandidacies and getCandidacy. The queries are the
 * catalog's (catalog.ts); these handlers check what the contract cannot, mask, and answer.
 *
 * What holds:
 * - Any logged-in user reads (ApiKeyAuth, checked before a handler runs).
 * - Every 200 carries a weak ETag naming the version of the court's data, the operation, its query, the
 *   API address its links start with, and for a candidacy the caller's view of personal data; a request
 *   whose If-None-Match holds it is answered 304 with no body, before the data is read (a candidacy is
 *   read first: whether it exists decides its answer). The tag is weak because the
 *   envelope's request_id differs from one answer to the next.
 * - A candidacy's CPF, voter id and race are whole only for platform admins; everyone else gets the
 *   entities' masks (personal-data.ts) and no race at all. Not even the owner and admins of an entity
 *   linked to the candidacy read them whole: anyone may create an entity from any candidacy (a
 *   competitor's too), so a link proves nothing about the caller; createEntityFromCandidacy fills in the
 *   court's personal data for platform admins only, for the same reason. A search result carries no
 *   personal data, so it is the same for everyone.
 */
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { callerOf } from '../../http/auth.js';
import { ifNoneMatchHits } from '../../http/conditional.js';
import { sendEnvelope } from '../../http/envelope.js';
import { badRequest, notFound } from '../../http/errors.js';
import type { OperationHandlers } from '../../http/operations.js';
import { pageOf } from '../../http/pagination.js';
import { apiBaseUrl, type PublicUrlSettings } from '../../http/public-url.js';
import { maskCpf, maskVoterId } from '../../entities/personal-data.js';
import { CANDIDACIES_PER_PAGE, searchWords, type CandidacyRecord, type CourtCatalog, type CourtData } from './catalog.js';
import type { components } from '../../../sdk/schema.js';
import { counted } from '../../http/counted.js';
import { COVERED_FROM, partiesRegisteredOn } from '@palanque/rules/registered-parties';

type CourtReadOperations = 'listElections' | 'listElectionOffices' | 'listElectionParties' | 'listRegisteredParties' | 'getElectionCodes' | 'searchCandidacies' | 'getCandidacy';
type Candidacy = components['schemas']['Candidacy'];

export interface CourtReadDependencies {
  catalog: CourtCatalog;
  urls: PublicUrlSettings;
}

const SEARCH_PATH = '/api/elections/candidacies/';
/** The search's filters, in the order its links write them. */
const SEARCH_FILTERS = ['nome', 'nr_candidato', 'partido', 'cd_cargo', 'uf', 'codigo_ibge', 'cd_eleicao'] as const;
/** Kept by the client, never by a shared cache (a candidacy may carry personal data), and revalidated. */
const CACHE_CONTROL = 'private, no-cache';

export function courtReadHandlers({ catalog, urls }: CourtReadDependencies): Pick<Required<OperationHandlers>, CourtReadOperations> {
  /** Sets the answer's ETag (see the top of this file); true when If-None-Match holds it and the 304 was sent. */
  function answeredNotModified(req: Pick<Request, 'get' | 'protocol' | 'host'>, res: Response, data: CourtData, ...request: unknown[]): boolean {
    const digest = createHash('sha256').update(JSON.stringify([data.version, apiBaseUrl(req, urls), ...request])).digest('base64url').slice(0, 22);
    const etag = `W/"${digest}"`;
    res.set({ ETag: etag, 'Cache-Control': CACHE_CONTROL });
    if (!ifNoneMatchHits(req.get('If-None-Match'), etag)) return false;
    res.status(304).end();
    return true;
  }

  return {
    async listElections(req, res) {
      const data = await catalog.current();
      if (answeredNotModified(req, res, data, 'listElections', req.query.ano, req.query.abrangencia)) return;
      const elections = await data.elections({ ano: req.query.ano, abrangencia: req.query.abrangencia });
      sendEnvelope(res, 200, elections, `${counted(elections.length, 'election')}.`);
    },

    async listElectionOffices(req, res) {
      const data = await catalog.current();
      if (answeredNotModified(req, res, data, 'listElectionOffices')) return;
      const offices = await data.offices();
      sendEnvelope(res, 200, offices, `${counted(offices.length, 'office')}.`);
    },

    async listElectionParties(req, res) {
      const code = req.query.cd_eleicao;
      if (code === undefined) {
        throw badRequest('The request is malformed: cd_eleicao is required.', [{ location: 'query', field: 'cd_eleicao', rule: 'required', message: 'is required' }]);
      }
      const data = await catalog.current();
      const parties = await data.parties(code);
      if (!parties) {
        throw notFound(`There is no election ${code} in the court's data loaded here.`, [
          { location: 'query', field: 'cd_eleicao', rule: 'existing_election', message: 'must be the code of a loaded election (listElections)', value: code },
        ]);
      }
      if (answeredNotModified(req, res, data, 'listElectionParties', code)) return;
      const { partidos, federacoes, eleicao } = parties;
      sendEnvelope(res, 200, parties, `${counted(partidos.length, 'party', 'parties')} and ${counted(federacoes.length, 'federation')} in ${eleicao.ds_eleicao}.`);
    },

    /** The registered parties (reference data of their own, migration 0037); with `em`, those existing on that day. */
    async listRegisteredParties(req, res) {
      const day = req.query.em;
      if (day !== undefined && (!/^\d{4}-\d{2}-\d{2}$/.test(day) || day < COVERED_FROM)) {
        throw badRequest(`The request is malformed: em must be a day (YYYY-MM-DD) from ${COVERED_FROM} on.`, [
          { location: 'query', field: 'em', rule: 'covered_day', message: `must be a day from ${COVERED_FROM} on (the list of registered parties covers no earlier day)`, value: day },
        ]);
      }
      const all = await catalog.registeredParties();
      const parties = day === undefined ? all : partiesRegisteredOn(all, day);
      sendEnvelope(res, 200, parties, `${counted(parties.length, 'party', 'parties')}${day === undefined ? '' : ` registered on ${day}`}.`);
    },

    async getElectionCodes(req, res) {
      const data = await catalog.current();
      if (answeredNotModified(req, res, data, 'getElectionCodes', req.query.table)) return;
      const tables = await data.codeTables(req.query.table);
      sendEnvelope(res, 200, tables, `${counted(Object.keys(tables).length, 'code table')}.`);
    },

    async searchCandidacies(req, res) {
      const { page = 1, nome, nr_candidato, partido, cd_cargo, uf, codigo_ibge, cd_eleicao } = req.query;
      if (nome !== undefined && searchWords(nome).join('').length < 2) {
        throw badRequest('The request is malformed: nome must have at least 2 letters or digits.', [
          { location: 'query', field: 'nome', rule: 'min_letters', message: 'must have at least 2 letters or digits, ignoring accents, apostrophes and spaces', value: nome },
        ]);
      }
      const data = await catalog.current();
      const partidos = partido === undefined ? undefined : await data.partyNumbers(partido, cd_eleicao);
      if (partidos?.length === 0) {
        const message = cd_eleicao === undefined ? `No loaded election has a party with the acronym ${partido}.` : `Election ${cd_eleicao} has no party with the acronym ${partido}.`;
        throw badRequest(message, [
          { location: 'query', field: 'partido', rule: 'known_party', message: "must be a party's number or the acronym of a party of a loaded election (listElectionParties)", value: partido },
        ]);
      }
      const listUrl = new URL(apiBaseUrl(req, urls) + SEARCH_PATH);
      for (const filter of SEARCH_FILTERS) if (req.query[filter] !== undefined) listUrl.searchParams.set(filter, String(req.query[filter]));
      if (answeredNotModified(req, res, data, 'searchCandidacies', listUrl.search, page)) return;
      const { total, results } = await data.search({ nome, nr_candidato, partidos, cd_cargo, uf, codigo_ibge, cd_eleicao }, page);
      sendEnvelope(res, 200, pageOf(results, total, page, CANDIDACIES_PER_PAGE, listUrl.toString()), `${counted(total, 'candidacy', 'candidacies')}.`);
    },

    async getCandidacy(req, res) {
      if (req.query.id === undefined) {
        throw badRequest('The request is malformed: id is required.', [{ location: 'query', field: 'id', rule: 'required', message: 'is required' }]);
      }
      const id = Number(req.query.id);
      const data = await catalog.current();
      const candidacy = await data.candidacy(id);
      if (!candidacy) {
        throw notFound(`There is no candidacy ${id}.`, [
          { location: 'query', field: 'id', rule: 'existing_candidacy', message: 'must be the id of a candidacy (searchCandidacies)', value: id },
        ]);
      }
      const whole = callerOf(res).user.is_admin;
      if (answeredNotModified(req, res, data, 'getCandidacy', id, whole)) return;
      const { nm_urna_candidato, nr_candidato, cargo, unidade, eleicao } = candidacy;
      sendEnvelope(res, 200, whole ? wholeView(candidacy) : maskedView(candidacy), `${nm_urna_candidato} (${nr_candidato}), ${cargo.ds_cargo} in ${unidade.nm_ue}, ${eleicao.ds_eleicao}.`);
    },
  };
}

/** The court's 11 digits as the contract writes a CPF (`529.982.247-25`); null for anything else. */
function formattedCpf(digits: string | null): string | null {
  return digits && /^[0-9]{11}$/.test(digits) ? `${digits.slice(0, 3)}.${digits.slice(3, 6)}.${digits.slice(6, 9)}-${digits.slice(9)}` : null;
}

/** A voter id of the lengths the contract takes (12 digits, 13 for some older ones); null for anything else. */
function voterId(digits: string | null): string | null {
  return digits && /^[0-9]{12,13}$/.test(digits) ? digits : null;
}

function wholeView(candidacy: CandidacyRecord): Candidacy {
  return { ...candidacy, cpf: formattedCpf(candidacy.cpf), titulo_eleitor: voterId(candidacy.titulo_eleitor), personal_data: 'whole' };
}

/** As personal-data.ts masks an entity for its operators and viewers: CPF and voter id masked, no race. */
function maskedView(candidacy: CandidacyRecord): Candidacy {
  const { cor_raca: _race, ...shown } = candidacy;
  const cpf = formattedCpf(candidacy.cpf);
  const titulo = voterId(candidacy.titulo_eleitor);
  return { ...shown, cpf: cpf && maskCpf(cpf), titulo_eleitor: titulo && maskVoterId(titulo), personal_data: 'masked' };
}
