/**
 * The HTTP side of entities (their teams: team-handlers.ts). Every handler first asks the team rules
 * (teams.ts) what the caller may do with the entity named in the request, then reads or writes through
 * the store. An entity linked to a candidacy of the electoral court's data is shown with it, and its
 * writes are judged by the court's tables too (candidacies.ts, electoral-rules.ts).
 */
import type { Response } from 'express';
import type { Transaction } from 'sequelize';
import { withLocks } from '../db/locks.js';
import type { Accounts } from '../accounts/index.js';
import { displayName } from '../accounts/users.js';
import type { UserRow } from '../accounts/models.js';
import { callerOf, type Caller } from '../http/auth.js';
import { sendEnvelope } from '../http/envelope.js';
import { requestCreationKey } from '../http/idempotency.js';
import { parseIfMatch } from '../http/conditional.js';
import { CourtCatalog, type CandidacySummary } from '../elections/tse/catalog.js';
import { ApiError, badRequest, notFound, referenceDataUnavailable } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import { pageOf } from '../http/pagination.js';
import { apiBaseUrl, type PublicUrlSettings } from '../http/public-url.js';
import type { MunicipalityCatalog } from '../municipalities/catalog.js';
import type { Entities } from './index.js';
import type { CandidateEntity, CandidateEntityRecord, EntityRow } from './models.js';
import { maskedRecord, maskedValuesOnCreate, refusePersonalValues, withoutMaskedValues } from './personal-data.js';
import { entityFromCandidacy, summaryOfCandidacy, withoutRefused } from './candidacies.js';
import { judgeCandidate } from './electoral-rules.js';
import { judgeCandidacyLaw } from './candidacy-law.js';
import { asCandidacyDetails } from '@palanque/rules/candidacy-law';
import { readThenWrite, recordEntityEdit } from './history.js';
import { UnknownMarketshareEntry, type EntitySummaryRow, type EntityWrite, type StoredEntity, type UpdateOutcome } from './store.js';
import { asIsoTimestamp, readerOf } from '../db/reader.js';

const ENTITIES_PER_PAGE = 30;

type EntityOperations =
  | 'listEntities'
  | 'getEntity'
  | 'addEntity'
  | 'createEntityFromCandidacy';

export interface EntityHandlerDependencies {
  entities: Entities;
  accounts: Accounts;
  municipalities: MunicipalityCatalog;
  urls: PublicUrlSettings;
}

export function entityHandlers({ entities, accounts, municipalities, urls }: EntityHandlerDependencies): Pick<Required<OperationHandlers>, EntityOperations> {
  const { teams, store, models } = entities;
  const sequelize = models.Entity.sequelize!;
  const court = new CourtCatalog(sequelize);
  const idRequired = (field: string) => badRequest(`The request is malformed: ${field} is required.`, [{ location: 'query', field, rule: 'required', message: 'is required' }]);

  return {
    async listEntities(req, res) {
      const caller = callerOf(res);
      const page = req.query.page ?? 1;
      const { total, rows } = await store.page({ id: caller.user.id, isAdmin: caller.user.is_admin }, req.query.tp, page, ENTITIES_PER_PAGE);
      const listUrl = new URL(apiBaseUrl(req, urls) + '/api/entidade/');
      if (req.query.tp) listUrl.searchParams.set('tp', req.query.tp);
      const candidacies = await candidacySummaries(rows.map((row) => row.candidacy_id));
      const body = pageOf(rows.map((row) => summaryOf(row, candidacies)), total, page, ENTITIES_PER_PAGE, listUrl.toString());
      sendEnvelope(res, 200, body, `${total} entities.`);
    },

    async getEntity(req, res) {
      if (req.query.id === undefined) throw idRequired('id');
      const caller = callerOf(res);
      const { entity, role } = await teams.access(caller, Number(req.query.id), 'read', { location: 'query', field: 'id' });
      await sendEntity(res, 200, entity.id, `Entity ${entity.id}.`, teams.may(caller, role, 'readPersonalData'), entity);
    },

    async addEntity(req, res) {
      const caller = callerOf(res);
      const body = req.body;
      const ifMatch = expectedVersionsOf(req.get('If-Match'), body.id);
      // A retried create whose first run committed before its instance died: answer what it made.
      const creationKey = body.id === undefined ? requestCreationKey(res) : undefined;
      const earlier = creationKey === undefined ? undefined : await store.idByCreationKey(creationKey);
      // Its creator is its owner, who reads it whole.
      if (earlier !== undefined) return sendEntity(res, 201, earlier, `Entity ${earlier} created.`, true);
      // Find the entity to update (and the caller's right to) before judging the body: a stranger learns nothing.
      const existing = body.id === undefined ? undefined : await teams.access(caller, body.id, 'edit', { location: 'body', field: 'id' });
      if (municipalities.size === 0 && (body.municipio_disputa != null || body.municipioBase != null)) {
        throw referenceDataUnavailable('The municipality list is not loaded, so municipalities cannot be checked yet.');
      }
      const stored = existing && (await store.load(existing.entity.id, { row: existing.entity }))!.entity;
      // A masked value stands for the stored one: left out, its field keeps its value (personal-data.ts).
      const sent = withoutMaskedValues(body);
      const wholeView = !existing || teams.may(caller, existing.role, 'readPersonalData');
      if (existing && !wholeView) refusePersonalValues(existing.role, sent);
      const problems = [
        ...(stored ? [] : maskedValuesOnCreate(body)),
        ...(await judgeCandidate(sequelize, municipalities, sent, { stored })),
        // Candidacies the court would refuse (candidacy-law.ts): judged for candidates only.
        ...((existing ? existing.entity.tp : (req.query.tp ?? 'candidato')) === 'candidato' ? await judgeCandidacyLaw(sequelize, sent, { stored }) : []),
      ];
      if (problems.length > 0) throw new ApiError(422, 'validation_failed', 'The entity is invalid.', problems);
      // The CPF check and the write hold a lock on the CPF (and a new link on its candidacy): parallel
      // creates (a double click) cannot both pass.
      const cpf = sent.cpf ?? undefined;
      const linking = typeof sent.candidacy_id === 'number' && sent.candidacy_id !== stored?.candidacy_id ? sent.candidacy_id : undefined;
      const locks = [...(cpf === undefined ? [] : [`entity-cpf:${cpf}`]), ...(linking === undefined ? [] : [`entity-candidacy:${linking}`])];
      // One transaction (the lock's, on PostgreSQL) holds the write and its edit-history row.
      const id = await withLocks(sequelize, locks, (locked) => (locked ? write(locked) : readThenWrite(sequelize, write)));
      async function write(transaction: Transaction): Promise<number> {
        if (cpf !== undefined) await refuseDuplicateCpf(caller, cpf, existing?.entity.id, transaction);
        if (linking !== undefined) await refuseLinkedCandidacy(caller, linking, existing?.entity.id, transaction);
        if (!existing) {
          const created = await store.create(req.query.tp ?? 'candidato', caller.user.id, sent, transaction, creationKey);
          await recordEntityEdit(entities, created, undefined, 'created', caller.user.id, transaction);
          return created;
        }
        // The edit history compares the entity as stored just before and just after the write, both in its transaction.
        const before = await store.loadWithin(existing.entity.id, transaction);
        const outcome = await updateOrExplain(existing.entity.id, sent, { userId: caller.user.id, expectedVersions: ifMatch }, transaction);
        if (!outcome.written) throw editConflict(existing.entity.id, req.get('If-Match')!, outcome.currentVersion);
        await recordEntityEdit(entities, existing.entity.id, before, 'updated', caller.user.id, transaction);
        return existing.entity.id;
      }
      await sendEntity(res, existing ? 200 : 201, id, existing ? `Entity ${id} updated.` : `Entity ${id} created.`, wholeView);
    },

    async createEntityFromCandidacy(req, res) {
      const caller = callerOf(res);
      // A retried create whose first run committed before its instance died: answer what it made.
      const creationKey = requestCreationKey(res);
      const earlier = creationKey === undefined ? undefined : await store.idByCreationKey(creationKey);
      if (earlier !== undefined) return sendEntity(res, 201, earlier, `Entity ${earlier} created.`, true);
      const candidacyId = req.body.candidacy_id;
      const candidacy = await (await court.current()).candidacy(candidacyId);
      if (!candidacy) {
        throw notFound(`There is no candidacy ${candidacyId} in the court's data.`, [
          { location: 'body', field: 'candidacy_id', rule: 'existing_candidacy', message: "must be the id of a candidacy of the court's data", value: candidacyId },
        ]);
      }
      const today = new Date();
      // The court's candidacies are read whole by platform admins only: nobody else gets their personal data this way.
      const filled = entityFromCandidacy(candidacy, { withPersonalData: caller.user.is_admin, today });
      // A candidacy the court would refuse is no candidate entity: 422, as addEntity answers (candidacy-law.ts).
      const refused = (req.query.tp ?? 'candidato') === 'candidato' ? await judgeCandidacyLaw(sequelize, filled) : [];
      if (refused.length > 0) throw new ApiError(422, 'validation_failed', `Candidacy ${candidacy.id} is one the electoral court would refuse, so it is no candidate entity.`, asCandidacyDetails(refused, candidacy.id));
      const { entity, leftOut } = withoutRefused(filled, await judgeCandidate(sequelize, municipalities, filled, { today }));
      const cpf = entity.cpf ?? undefined;
      const locks = [`entity-candidacy:${candidacy.id}`, ...(cpf === undefined ? [] : [`entity-cpf:${cpf}`])];
      const id = await withLocks(sequelize, locks, (locked) => (locked ? write(locked) : readThenWrite(sequelize, write)));
      async function write(transaction: Transaction): Promise<number> {
        await refuseLinkedCandidacy(caller, candidacyId, undefined, transaction);
        if (cpf !== undefined) await refuseDuplicateCpf(caller, cpf, undefined, transaction);
        const created = await store.create(req.query.tp ?? 'candidato', caller.user.id, entity, transaction, creationKey);
        await recordEntityEdit(entities, created, undefined, 'created', caller.user.id, transaction);
        return created;
      }
      const omitted = leftOut.length === 0 ? '' : ` Left out, as the entity rules refuse the court's value: ${leftOut.join(', ')}.`;
      // Its creator is its owner, who reads it whole.
      await sendEntity(res, 201, id, `Entity ${id} created from candidacy ${candidacy.id}.${omitted}`, true);
    },
  };

  /**
   * Answers the stored entity as `getEntity` does: the record with its author, its personal data masked
   * unless the caller has the `wholeView` of it, and its version as the ETag (the same for every view).
   */
  async function sendEntity(res: Response, status: 200 | 201, id: number, message: string, wholeView: boolean, row?: EntityRow): Promise<void> {
    const { stored, author } = await storedWithAuthor(id, row);
    const candidacyId = stored.entity.candidacy_id;
    const record: CandidateEntityRecord = {
      ...stored.entity,
      ...(typeof candidacyId === 'number' ? { candidacy: (await candidacySummaries([candidacyId])).get(candidacyId) ?? null } : {}),
      tp: stored.tp,
      updated_at: stored.updatedAt.toISOString(),
      updated_by: author ? { id: author.id, display_name: displayName(author) } : null,
    };
    res.setHeader('ETag', etagOf(stored.version));
    sendEnvelope(res, status, wholeView ? record : maskedRecord(record), message);
  }

  /** The store's update, with a market-share `id` that is not the entity's turned into the error that names it. */
  async function updateOrExplain(id: number, body: CandidateEntity, write: EntityWrite, transaction?: Transaction): Promise<UpdateOutcome> {
    try {
      return await store.update(id, body, write, transaction);
    } catch (error) {
      if (!(error instanceof UnknownMarketshareEntry)) throw error;
      throw new ApiError(422, 'validation_failed', 'The entity is invalid.', [
        { location: 'body', field: `marketshare.${error.index}.id`, rule: 'existing_entry', message: `must be the id of one of this entity's marketshare entries (once); send no id for a new entry`, value: error.entryId },
      ]);
    }
  }

  /**
   * What an entity shows of the candidacies it is linked to (the search's summary, no personal data), by
   * candidacy id; a candidacy no longer in the court's data is left out.
   */
  async function candidacySummaries(ids: Array<number | null | undefined>): Promise<Map<number, CandidacySummary>> {
    const linked = [...new Set(ids.filter((id): id is number => typeof id === 'number'))];
    if (linked.length === 0) return new Map();
    const data = await court.current();
    const found = await Promise.all(linked.map((id) => data.candidacy(id)));
    return new Map(found.filter((candidacy) => candidacy !== undefined).map((candidacy) => [candidacy.id, summaryOfCandidacy(candidacy)]));
  }

  async function refuseLinkedCandidacy(caller: Caller, candidacyId: number, except: number | undefined, transaction?: Transaction): Promise<void> {
    const other = await store.candidacyTakenAmong(candidacyId, await teams.entityIdsOf(caller.user.id), except, transaction);
    if (other !== undefined) {
      throw new ApiError(409, 'conflict', `Candidacy ${candidacyId} is already linked to entity ${other} of your teams.`, [
        { location: 'body', field: 'candidacy_id', rule: 'unique_in_team', message: `is already linked to entity ${other} of your teams`, value: candidacyId },
      ]);
    }
  }

  async function refuseDuplicateCpf(caller: Caller, cpf: string, except: number | undefined, transaction?: Transaction): Promise<void> {
    const other = await store.cpfTakenAmong(cpf, await teams.entityIdsOf(caller.user.id), except, transaction);
    if (other !== undefined) {
      throw new ApiError(409, 'conflict', `This CPF is already registered by entity ${other} of your teams.`, [
        { location: 'body', field: 'cpf', rule: 'unique_in_team', message: 'is already registered by another entity of your teams', value: cpf },
      ]);
    }
  }

  /**
   * The stored entity and its last author. With its row known (Teams.access read it), the author is read
   * alongside its nested records; otherwise after them, from the row they come with.
   */
  async function storedWithAuthor(id: number, row?: EntityRow): Promise<{ stored: StoredEntity; author: Author | undefined }> {
    if (!row) {
      const stored = (await store.load(id))!;
      return { stored, author: await authorOf(stored.updatedBy) };
    }
    const [stored, author] = await Promise.all([store.load(id, { row }), authorOf(row.updated_by)]);
    return { stored: stored!, author };
  }

  async function authorOf(userId: number | null): Promise<Author | undefined> {
    if (userId === null) return undefined;
    return readerOf(models.Entity.sequelize!).row<Author>('SELECT id, username, first_name, last_name, deleted_at FROM users WHERE id = ?', [userId]);
  }

}

/** An entity's last author; a deleted account is shown by its pseudonym (displayName). */
type Author = Pick<UserRow, 'id' | 'username' | 'first_name' | 'last_name' | 'deleted_at'>;

/** An entity's version as an ETag (a strong validator: it changes on every write). */
export function etagOf(version: number): string {
  return `"${version}"`;
}

/** The versions If-Match accepts (undefined: any), for an update of entity `id`. */
function expectedVersionsOf(header: string | undefined, id: number | undefined): number[] | undefined {
  const ifMatch = parseIfMatch(header);
  if (ifMatch === undefined) return undefined;
  if (ifMatch === 'malformed') {
    throw badRequest('The request is malformed: If-Match must be * or a list of quoted entity tags, such as "3".', [
      { location: 'header', field: 'If-Match', rule: 'entity_tag', message: 'must be * or quoted entity tags such as "3"', value: header!.slice(0, 200) },
    ]);
  }
  if (id === undefined) throw ifMatchWithoutId(header!);
  if (ifMatch.any) return undefined;
  // A tag that is not one of our versions can never be current: it stays in the list as an impossible 0.
  return ifMatch.tags.map((tag) => (/^[1-9][0-9]{0,9}$/.test(tag) ? Number(tag) : 0));
}

function ifMatchWithoutId(header: string): ApiError {
  return badRequest('The request is malformed: If-Match applies to updates, and the body has no id.', [
    { location: 'header', field: 'If-Match', rule: 'update_only', message: 'is only for updates: send it with the id of the entity', value: header.slice(0, 200) },
  ]);
}

function editConflict(id: number, sent: string, currentVersion: number): ApiError {
  const current = etagOf(currentVersion);
  return new ApiError(409, 'edit_conflict', `Entity ${id} was changed since you read it: your version is ${sent.slice(0, 100)}, the current one is ${current}. Read it again and reapply your change.`, [
    { location: 'header', field: 'If-Match', rule: 'current_version', message: `must be the current version ${current}`, value: sent.slice(0, 200) },
  ]);
}

function summaryOf(row: EntitySummaryRow, candidacies: ReadonlyMap<number, CandidacySummary>) {
  return {
    id: row.id,
    tp: row.tp,
    nome: row.nome,
    nm_urna: row.nm_urna ?? null,
    nr_urna: row.nr_urna ?? null,
    partido: row.partido ?? null,
    uf: row.uf ?? null,
    cidade: row.cidade ?? null,
    image_url: row.image_url ?? null,
    role: row.role,
    created_at: asIsoTimestamp(row.created_at),
    updated_at: asIsoTimestamp(row.updated_at),
    candidacy: row.candidacy_id === null || row.candidacy_id === undefined ? null : (candidacies.get(Number(row.candidacy_id)) ?? null),
  };
}
