/**
 * An entity's edit history in the stateful mock (src/entities/history.ts, history-handlers.ts): every
 * change of an entity recorded with its fields before and after (an update that changed nothing is not),
 * and the data subject's rights over it, for platform admins: the erasure of personal data, redacted in
 * the rows already written, and its correction.
 */
import type { HttpHandler } from 'msw';
import { errorResponse } from '../../msw-validation.js';
import { envelope, forbidden, notFound } from '../answers.js';
import { entityFor, type Context, type On } from '../auth.js';
import { versionTag } from '../etags.js';
import { pageOf } from '../paging.js';
import { displayName, newId, now, type HistoryRow, type Json, type State, type StoredEntity } from '../store.js';

/** Fields the API writes itself: accepted in a body (a front end sends back what it read) and ignored. */
export const READ_ONLY_FIELDS = new Set(['id', 'tp', 'updated_at', 'updated_by', 'candidacy']);

const HISTORY_PER_PAGE = 50;
const PERSONAL_FIELDS = ['cpf', 'titulo_eleitor', 'raca', 'cepBase', 'endBase'];

/** The fields whose values differ between two records (nested lists as one field each); an empty list counts as none. */
export function changedFields(before: Json, after: Json): HistoryRow['changes'] {
  const valueOf = (value: unknown) => (value === undefined || (Array.isArray(value) && value.length === 0) ? null : value);
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((field) => !READ_ONLY_FIELDS.has(field));
  return fields
    .map((field) => ({ field, before: valueOf(before[field]), after: valueOf(after[field]) }))
    .filter((change) => JSON.stringify(change.before) !== JSON.stringify(change.after));
}

/** Records a change of the entity itself; an update that changed nothing is not recorded, as on the server. */
export function recordHistory(state: State, entityId: number, action: string, actorId: number, changes: HistoryRow['changes']): void {
  if (action === 'updated' && changes.length === 0) return;
  const id = newId(state, state.history.map((row) => row.id));
  state.history.push({ id, entity_id: entityId, occurred_at: now(), subject: 'entity', subject_id: null, action, actor_id: actorId, changes });
}

export function historyHandlers(on: On): HttpHandler[] {
  /** The entity of an admin's body, or the server's 403 or 404. */
  const adminsEntity = ({ user, body, state }: Context): StoredEntity | Response => {
    if (!user.is_admin) return forbidden('Only platform administrators may do this.');
    const entity = state.entities.get(Number(body.entity_id));
    if (!entity) return notFound(`There is no entity ${String(body.entity_id)}.`, [{ location: 'body', field: 'entity_id', rule: 'existing_entity', message: 'must be the id of an entity', value: body.entity_id as number }]);
    return entity;
  };
  const changed = (entity: StoredEntity, data: Json, message: string) => envelope(200, { entity_id: entity.id, ...data, version: entity.version }, message, { ETag: versionTag(entity.version) });
  return [
    on('listEntityHistory', (context) => {
      const { url, state, base } = context;
      const id = url.searchParams.get('id');
      if (id === null) return errorResponse(400, 'bad_request', 'The request is malformed: id is required.', [{ location: 'query', field: 'id', rule: 'required', message: 'is required' }]);
      const entity = entityFor(context, Number(id), { location: 'query', field: 'id' }, 'readPersonalData');
      if (entity instanceof Response) return entity;
      const subject = url.searchParams.get('subject');
      const rows = state.history.filter((row) => row.entity_id === entity.id && (subject === null || row.subject === subject)).reverse();
      const items = rows.map(({ entity_id: _entity, actor_id, ...row }) => {
        const actor = state.users.find((candidate) => candidate.id === actor_id);
        return { ...row, actor: actor_id === null ? null : { id: actor_id, display_name: actor ? displayName(actor) : null } };
      });
      const listUrl = new URL(`${base}/api/entidade/history/`);
      listUrl.searchParams.set('id', String(entity.id));
      if (subject) listUrl.searchParams.set('subject', subject);
      const paged = pageOf(items, Number(url.searchParams.get('page') ?? 1), HISTORY_PER_PAGE, listUrl);
      return paged instanceof Response ? paged : envelope(200, paged, `${items.length} change${items.length === 1 ? '' : 's'}.`);
    }),
    on('erasePersonalData', (context) => {
      const entity = adminsEntity(context);
      if (entity instanceof Response) return entity;
      const fields = (context.body.fields as string[] | undefined) ?? PERSONAL_FIELDS;
      const had = new Set(fields.filter((field) => entity.record[field] != null));
      entity.record = Object.fromEntries(Object.entries(entity.record).filter(([field]) => !fields.includes(field)));
      let redacted = 0;
      for (const row of context.state.history.filter((candidate) => candidate.entity_id === entity.id)) {
        if (!row.changes.some((change) => fields.includes(change.field))) continue;
        const erased = (value: unknown) => (value === null ? null : '[erased]');
        row.changes = row.changes.map((change) => (fields.includes(change.field) ? { field: change.field, before: erased(change.before), after: erased(change.after) } : change));
        redacted += 1;
      }
      recordHistory(context.state, entity.id, 'personal_data_erased', context.user.id, fields.map((field) => ({ field, before: had.has(field) ? '[erased]' : null, after: null })));
      entity.version += 1;
      entity.updated_at = now();
      entity.updated_by = context.user.id;
      return changed(entity, { fields, history_rows_redacted: redacted }, `The personal data of entity ${entity.id} was erased (${fields.join(', ')}).`);
    }),
    on('correctPersonalData', (context) => {
      const entity = adminsEntity(context);
      if (entity instanceof Response) return entity;
      const changes = context.body.changes as Json;
      const before = entity.record;
      entity.record = { ...entity.record, ...changes };
      recordHistory(context.state, entity.id, 'personal_data_corrected', context.user.id, changedFields(before, entity.record));
      entity.version += 1;
      entity.updated_at = now();
      entity.updated_by = context.user.id;
      const fields = Object.keys(changes);
      return changed(entity, { fields }, `The personal data of entity ${entity.id} was corrected (${fields.join(', ')}).`);
    }),
  ];
}
