/**
 * The HTTP side of an entity's edit history (issue 21) and of the data subject's rights over a recorded
 * person who is not a user (LGPD art. 18: correction and erasure).
 *
 * What holds:
 * - The history is read by the entity's owner and admins and by platform admins (`readPersonalData`):
 *   404 for an entity outside the caller's teams, 403 for operators and viewers. Its personal data goes
 *   through the role-aware masks (history.ts), whole for these readers today.
 * - Erasure and correction are platform admins' operations. Each is one transaction: the entity's write
 *   (its version moves on, as an edit's does), the redaction of the erased values from its history, and
 *   the history row of the operation itself. The audit event, written after, names the fields and the
 *   request's reference, never a value.
 */
import type { Response } from 'express';
import type { Accounts } from '../accounts/index.js';
import { callerOf, requireAdmin } from '../http/auth.js';
import { invalidBody } from '../http/body-fields.js';
import { sendEnvelope } from '../http/envelope.js';
import { ApiError, badRequest, notFound, type ErrorDetail } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import { pageOf } from '../http/pagination.js';
import { apiBaseUrl, type PublicUrlSettings } from '../http/public-url.js';
import type { MunicipalityCatalog } from '../municipalities/catalog.js';
import { ERASED_MARKER, readThenWrite, recordEntityEdit } from './history.js';
import type { Entities } from './index.js';
import type { CandidateEntity } from './models.js';
import { PERSONAL_FIELDS } from './personal-data.js';
import { judgeCandidate } from './electoral-rules.js';
import type { StoredEntity } from './store.js';
import { counted } from '../http/counted.js';

const HISTORY_PER_PAGE = 50;

type HistoryOperations = 'listEntityHistory' | 'erasePersonalData' | 'correctPersonalData';

export interface HistoryHandlerDependencies {
  entities: Entities;
  accounts: Pick<Accounts, 'audit'>;
  municipalities: MunicipalityCatalog;
  urls: PublicUrlSettings;
}

export function historyHandlers({ entities, accounts, municipalities, urls }: HistoryHandlerDependencies): Pick<Required<OperationHandlers>, HistoryOperations> {
  const { teams, store, history, models } = entities;
  const sequelize = models.Entity.sequelize!;

  /** The stored entity `entity_id` of an admin's request body; 404 naming the field when there is none. */
  async function entityNamedInBody(entityId: number): Promise<StoredEntity> {
    const found = Number.isSafeInteger(entityId) ? await store.load(entityId) : undefined;
    if (!found) {
      throw notFound(`There is no entity ${entityId}.`, [{ location: 'body', field: 'entity_id', rule: 'existing_entity', message: 'must be the id of an entity', value: entityId }]);
    }
    return found;
  }

  function sendChange(res: Response, data: { entity_id: number; fields: string[]; version: number; history_rows_redacted?: number }, message: string): void {
    res.setHeader('ETag', `"${data.version}"`);
    sendEnvelope(res, 200, data, message);
  }

  return {
    async listEntityHistory(req, res) {
      if (req.query.id === undefined) {
        throw badRequest('The request is malformed: id is required.', [{ location: 'query', field: 'id', rule: 'required', message: 'is required' }]);
      }
      const caller = callerOf(res);
      const { entity, role } = await teams.access(caller, Number(req.query.id), 'readPersonalData', { location: 'query', field: 'id' });
      const page = req.query.page ?? 1;
      const subject = req.query.subject;
      const { total, rows } = await history.page(entity.id, { subject }, page, HISTORY_PER_PAGE, teams.may(caller, role, 'readPersonalData'));
      const listUrl = new URL(apiBaseUrl(req, urls) + '/api/entidade/history/');
      listUrl.searchParams.set('id', String(entity.id));
      if (subject) listUrl.searchParams.set('subject', subject);
      sendEnvelope(res, 200, pageOf(rows, total, page, HISTORY_PER_PAGE, listUrl.toString()), `${counted(total, 'change')}.`);
    },

    async erasePersonalData(req, res) {
      const caller = callerOf(res);
      requireAdmin(caller);
      const reason = requiredReason(req.body.reason);
      const fields: string[] = req.body.fields ?? [...PERSONAL_FIELDS];
      const { entity } = await entityNamedInBody(req.body.entity_id);
      const erased = Object.fromEntries(fields.map((field) => [field, null])) as unknown as CandidateEntity;
      const { version, redacted } = await readThenWrite(sequelize, async (transaction) => {
        const before = (await store.loadWithin(entity.id, transaction))!;
        const outcome = await store.update(entity.id, erased, { userId: caller.user.id }, transaction);
        const redacted = await history.erase(entity.id, fields, transaction);
        const stored = before.entity as Record<string, unknown>;
        // The row of the erasure itself names the fields, never their values.
        const changes = fields.map((field) => ({ field, before: stored[field] == null ? null : ERASED_MARKER, after: null }));
        await history.record({ entityId: entity.id, subject: 'entity', action: 'personal_data_erased', actorId: caller.user.id, changes }, transaction);
        return { version: outcome.written ? outcome.version : outcome.currentVersion, redacted };
      });
      const details = { entity_id: entity.id, fields: fields.join(','), reason };
      await accounts.audit.record({ event: 'personal_data_erased', actorId: caller.user.id, address: req.ip, details });
      sendChange(res, { entity_id: entity.id, fields, version, history_rows_redacted: redacted }, `The personal data of entity ${entity.id} was erased (${fields.join(', ')}).`);
    },

    async correctPersonalData(req, res) {
      const caller = callerOf(res);
      requireAdmin(caller);
      const reason = requiredReason(req.body.reason);
      const stored = await entityNamedInBody(req.body.entity_id);
      const changes = req.body.changes as Partial<CandidateEntity>;
      const fields = Object.keys(changes);
      // The rules of addEntity, on the entity as it will be; each detail names its field inside `changes`.
      const corrected = { ...changes, nome: changes.nome ?? stored.entity.nome };
      const problems = (await judgeCandidate(sequelize, municipalities, corrected, { stored: stored.entity })).map((problem) => ({ ...problem, field: `changes.${problem.field}` }));
      if (problems.length > 0) throw new ApiError(422, 'validation_failed', 'The entity is invalid.', problems);
      const version = await readThenWrite(sequelize, async (transaction) => {
        const before = (await store.loadWithin(stored.entity.id, transaction))!;
        const outcome = await store.update(stored.entity.id, changes as CandidateEntity, { userId: caller.user.id }, transaction);
        await recordEntityEdit(entities, stored.entity.id, before, 'personal_data_corrected', caller.user.id, transaction);
        return outcome.written ? outcome.version : outcome.currentVersion;
      });
      const details = { entity_id: stored.entity.id, fields: fields.join(','), reason };
      await accounts.audit.record({ event: 'personal_data_corrected', actorId: caller.user.id, address: req.ip, details });
      sendChange(res, { entity_id: stored.entity.id, fields, version }, `The personal data of entity ${stored.entity.id} was corrected (${fields.join(', ')}).`);
    },
  };
}

/** The request's reference, trimmed; 422 when it is only blanks (the schema already requires it). */
function requiredReason(reason: string): string {
  const trimmed = reason.trim();
  if (trimmed === '') {
    const problems: ErrorDetail[] = [{ location: 'body', field: 'reason', rule: 'required', message: "is required: the reference of the data subject's request", value: reason }];
    throw invalidBody(problems);
  }
  return trimmed;
}
