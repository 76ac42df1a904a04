/**
 * Candidates, competitors and parties in the stateful mock (src/entities/handlers.ts): the list of the
 * caller's teams' entities, the get with its ETag, the create and issue 11's partial update (If-Match
 * judged by etags.ts), an entity filled in from a candidacy of the court's demo data, and the server's
 * refusals in its order (the candidacy law, a CPF or candidacy already in the caller's teams, a stale
 * version, an unknown market-share entry).
 */
import type { HttpHandler } from 'msw';
import { asCandidacyDetails } from '@palanque/rules/candidacy-law';
import { documentProblems, type DocumentFields } from '@palanque/rules/documents';
import type { ErrorDetail } from '@palanque/rules/error-detail';
import { errorResponse } from '../../msw-validation.js';
import { conflict, envelope, invalidBody, notFound } from '../answers.js';
import { entityFor, roleIn, type On } from '../auth.js';
import { candidacyLawDetails } from '../elections/candidacy-law.js';
import { candidacyIn, candidacySummary, entityFromCandidacy } from '../elections/court.js';
import { staleVersion, versionTag } from '../etags.js';
import { pageOf } from '../paging.js';
import { displayName, newId, now, type Json, type State, type StoredEntity, type TeamRole, type User } from '../store.js';
import { changedFields, READ_ONLY_FIELDS, recordHistory } from './history.js';

const ENTITIES_PER_PAGE = 30;

/** Fields the server answers as null when they have no value (the store's nullable columns). */
const NULLABLE_FIELDS = new Set(['nr_urna', 'municipioBase']);

export function entityHandlers(on: On): HttpHandler[] {
  return [
    on('listEntities', ({ url, user, state, base }) => {
      const tp = url.searchParams.get('tp') ?? undefined;
      const page = Number(url.searchParams.get('page') ?? 1);
      const visible = [...state.entities.values()].filter((entity) => roleIn(entity, user) && (tp === undefined || entity.tp === tp)).sort((a, b) => a.id - b.id);
      const listUrl = new URL(`${base}/api/entidade/`);
      if (tp) listUrl.searchParams.set('tp', tp);
      const paged = pageOf(visible.map((entity) => summaryOf(state, entity, roleIn(entity, user)!)), page, ENTITIES_PER_PAGE, listUrl);
      return paged instanceof Response ? paged : envelope(200, paged, `${visible.length} entities.`);
    }),
    on('getEntity', (context) => {
      const id = context.url.searchParams.get('id');
      if (id === null) return errorResponse(400, 'bad_request', 'The request is malformed: id is required.', [{ location: 'query', field: 'id', rule: 'required', message: 'is required' }]);
      const entity = entityFor(context, Number(id), { location: 'query', field: 'id' });
      return entity instanceof Response ? entity : entityAnswer(context.state, entity, 200, `Entity ${entity.id}.`);
    }),
    on('addEntity', (context) => {
      const { body, state, user, url, request } = context;
      const ifMatch = request.headers.get('if-match');
      if (body.id === undefined) {
        if (ifMatch !== null) {
          return errorResponse(400, 'bad_request', 'The request is malformed: If-Match applies to updates, and the body has no id.', [
            { location: 'header', field: 'If-Match', rule: 'update_only', message: 'is only for updates: send it with the id of the entity', value: ifMatch.slice(0, 200) },
          ]);
        }
        // The documents' digits, then candidacies the court would refuse (elections/candidacy-law.ts, for candidates), before the duplicates as on the server.
        const unlawful = [...documentDetails(body), ...((url.searchParams.get('tp') ?? 'candidato') === 'candidato' ? candidacyLawDetails(state.court, body) : [])];
        if (unlawful.length > 0) return invalidBody(unlawful, 'The entity is invalid.');
        const duplicate = cpfTaken(state, user, body.cpf, undefined) ?? candidacyRefused(state, user, body.candidacy_id, undefined);
        if (duplicate) return duplicate;
        const id = newId(state, state.entities.keys());
        const record = applyUpdate({}, withIds(state, body));
        const moment = now();
        const tp = (url.searchParams.get('tp') ?? 'candidato') as StoredEntity['tp'];
        state.entities.set(id, { id, tp, record, created_at: moment, updated_at: moment, updated_by: user.id, version: 1, members: [{ id: newId(state, []), user_id: user.id, role: 'owner', added_at: moment }] });
        recordHistory(state, id, 'created', user.id, changedFields({}, record));
        return entityAnswer(state, state.entities.get(id)!, 201, `Entity ${id} created.`);
      }
      const entity = entityFor(context, Number(body.id), { location: 'body', field: 'id' }, 'edit');
      if (entity instanceof Response) return entity;
      // The server's order: the CPF check, then the version (If-Match), then the nested records.
      const unlawful = [...documentDetails(body, entity.record), ...(entity.tp === 'candidato' ? candidacyLawDetails(state.court, body, entity.record) : [])];
      if (unlawful.length > 0) return invalidBody(unlawful, 'The entity is invalid.');
      const duplicate = cpfTaken(state, user, body.cpf, entity.id) ?? candidacyRefused(state, user, body.candidacy_id, entity.id, entity.record.candidacy_id);
      if (duplicate) return duplicate;
      const stale = staleVersion(ifMatch, entity.id, entity.version);
      if (stale) return stale;
      const unknownEntry = unknownMarketshareEntry(entity.record, body);
      if (unknownEntry) return unknownEntry;
      const before = entity.record;
      entity.record = applyUpdate(entity.record, withIds(state, body));
      recordHistory(state, entity.id, 'updated', user.id, changedFields(before, entity.record));
      entity.version += 1;
      entity.updated_at = now();
      entity.updated_by = user.id;
      return entityAnswer(state, entity, 200, `Entity ${entity.id} updated.`);
    }),
    on('createEntityFromCandidacy', ({ body, state, user, url }) => {
      const candidacy = candidacyIn(state.court, body.candidacy_id);
      if (!candidacy) {
        return notFound(`There is no candidacy ${String(body.candidacy_id)} in the court's data.`, [
          { location: 'body', field: 'candidacy_id', rule: 'existing_candidacy', message: "must be the id of a candidacy of the court's data", value: body.candidacy_id as number },
        ]);
      }
      // As the server: the court's personal data for platform admins only.
      const record = entityFromCandidacy(state.court, candidacy, user.is_admin);
      const unlawful = (url.searchParams.get('tp') ?? 'candidato') === 'candidato' ? candidacyLawDetails(state.court, record) : [];
      if (unlawful.length > 0) return invalidBody(asCandidacyDetails(unlawful, candidacy.id), `Candidacy ${candidacy.id} is one the electoral court would refuse, so it is no candidate entity.`);
      const refused = candidacyRefused(state, user, candidacy.id, undefined) ?? cpfTaken(state, user, record.cpf, undefined);
      if (refused) return refused;
      const id = newId(state, state.entities.keys());
      const moment = now();
      const tp = (url.searchParams.get('tp') ?? 'candidato') as StoredEntity['tp'];
      state.entities.set(id, { id, tp, record, created_at: moment, updated_at: moment, updated_by: user.id, version: 1, members: [{ id: newId(state, []), user_id: user.id, role: 'owner', added_at: moment }] });
      recordHistory(state, id, 'created', user.id, changedFields({}, record));
      return entityAnswer(state, state.entities.get(id)!, 201, `Entity ${id} created from candidacy ${candidacy.id}.`);
    }),
  ];
}

/**
 * A `candidacy_id` the server would refuse: one the court's data lacks (422), or one another entity of the
 * caller's teams is linked to (409). `stored` is the entity's current link (posting it back is no new link).
 */
function candidacyRefused(state: State, user: User, candidacyId: unknown, except: number | undefined, stored?: unknown): Response | undefined {
  if (typeof candidacyId !== 'number' || candidacyId === stored) return undefined;
  if (!candidacyIn(state.court, candidacyId)) {
    return invalidBody([{ location: 'body', field: 'candidacy_id', rule: 'existing_candidacy', message: "must be the id of a candidacy of the court's data", value: candidacyId }], 'The entity is invalid.');
  }
  const other = [...state.entities.values()].find((entity) => entity.id !== except && entity.members.some((member) => member.user_id === user.id) && entity.record.candidacy_id === candidacyId);
  if (!other) return undefined;
  return conflict(`Candidacy ${candidacyId} is already linked to entity ${other.id} of your teams.`, [
    { location: 'body', field: 'candidacy_id', rule: 'unique_in_team', message: `is already linked to entity ${other.id} of your teams`, value: candidacyId },
  ]);
}

/**
 * Issue 11's partial update: a field the body leaves out keeps its value, `null` clears it, read-only
 * fields are ignored; `marketshare` is the new list, its entries matched by `id` and updated by the same
 * rule; `referencia_social` is merged the same way (null removes it).
 */
function applyUpdate(stored: Json, sent: Json): Json {
  const record: Json = { ...stored };
  for (const [field, value] of Object.entries(sent)) {
    if (READ_ONLY_FIELDS.has(field) || value === undefined) continue;
    if (value === null) {
      if (NULLABLE_FIELDS.has(field)) record[field] = null;
      else delete record[field];
    } else if (field === 'marketshare' && Array.isArray(value)) {
      const before = new Map(((stored.marketshare ?? []) as Json[]).map((entry) => [entry.id, entry]));
      record.marketshare = (value as Json[]).map((entry) => ({ ...(before.get(entry.id) ?? {}), ...withoutNulls(entry) }));
    } else if (field === 'referencia_social' && typeof value === 'object' && !Array.isArray(value)) {
      record.referencia_social = { ...((stored.referencia_social as Json | undefined) ?? {}), ...(value as Json) };
    } else {
      record[field] = value;
    }
  }
  return record;
}

/** A new market-share entry (no `id`) gets one, as the server's store gives it. */
function withIds(state: State, body: Json): Json {
  if (!Array.isArray(body.marketshare)) return body;
  return { ...body, marketshare: (body.marketshare as Json[]).map((entry) => (entry.id === undefined ? { ...entry, id: newId(state, []) } : entry)) };
}

function withoutNulls(entry: Json): Json {
  return Object.fromEntries(Object.entries(entry).filter(([key, value]) => value !== null || key === 'notes'));
}

function unknownMarketshareEntry(stored: Json, body: Json): Response | undefined {
  if (!Array.isArray(body.marketshare)) return undefined;
  const known = new Set(((stored.marketshare ?? []) as Json[]).map((entry) => entry.id));
  const seen = new Set<unknown>();
  for (const [index, entry] of (body.marketshare as Json[]).entries()) {
    if (entry.id === undefined) continue;
    if (!known.has(entry.id) || seen.has(entry.id)) {
      return invalidBody([{ location: 'body', field: `marketshare.${index}.id`, rule: 'existing_entry', message: "must be the id of one of this entity's marketshare entries (once); send no id for a new entry", value: entry.id as number }], 'The entity is invalid.');
    }
    seen.add(entry.id);
  }
  return undefined;
}

/**
 * The server's document rules (@palanque/rules/documents): CPF and voter id check digits, the ballot
 * number's party prefix. A masked value (`***.982.247-**`) stands for the stored one on the server and
 * is not judged; nulls clear a field and break no rule.
 */
function documentDetails(body: Json, stored: Json = {}): ErrorDetail[] {
  const fields = (record: Json): DocumentFields => Object.fromEntries(
    Object.entries(record).filter(([field, value]) => ['cpf', 'titulo_eleitor', 'nr_urna', 'partido'].includes(field) && value !== null && !(typeof value === 'string' && value.includes('*'))),
  ) as DocumentFields;
  return documentProblems(fields(body), fields({ ...stored, ...body }));
}

function cpfTaken(state: State, user: User, cpf: unknown, except: number | undefined): Response | undefined {
  if (typeof cpf !== 'string') return undefined;
  const other = [...state.entities.values()].find((entity) => entity.id !== except && entity.members.some((member) => member.user_id === user.id) && entity.record.cpf === cpf);
  if (!other) return undefined;
  return conflict(`This CPF is already registered by entity ${other.id} of your teams.`, [
    { location: 'body', field: 'cpf', rule: 'unique_in_team', message: 'is already registered by another entity of your teams', value: cpf },
  ]);
}

function entityAnswer(state: State, entity: StoredEntity, status: 200 | 201, message: string): Response {
  const author = state.users.find((user) => user.id === entity.updated_by);
  const nullable = Object.fromEntries([...NULLABLE_FIELDS].map((field) => [field, null]));
  const data = {
    id: entity.id,
    ...nullable,
    ...entity.record,
    marketshare: entity.record.marketshare ?? [],
    ...(typeof entity.record.candidacy_id === 'number' ? { candidacy: candidacySummary(state.court, entity.record.candidacy_id) ?? null } : {}),
    tp: entity.tp,
    updated_at: entity.updated_at,
    updated_by: author ? { id: author.id, display_name: displayName(author) } : null,
  };
  return envelope(status, data, message, { ETag: versionTag(entity.version) });
}

function summaryOf(state: State, entity: StoredEntity, role: TeamRole) {
  const field = (name: string) => (entity.record[name] as unknown) ?? null;
  return {
    id: entity.id,
    tp: entity.tp,
    nome: entity.record.nome as string,
    nm_urna: field('nm_urna'),
    nr_urna: field('nr_urna'),
    partido: field('partido'),
    uf: field('uf'),
    cidade: field('cidade'),
    image_url: field('image_url'),
    role,
    created_at: entity.created_at,
    updated_at: entity.updated_at,
    candidacy: typeof entity.record.candidacy_id === 'number' ? (candidacySummary(state.court, entity.record.candidacy_id) ?? null) : null,
  };
}
