/**
 * The HTTP side of entities and their teams. Every handler first asks the team rules (teams.ts) what the
 * caller may do with the entity named in the request, then reads or writes through the store.
 */
import type { Response } from 'express';
import { UniqueConstraintError, type Transaction } from 'sequelize';
import { withLocks } from '../db/locks.js';
import type { Accounts } from '../accounts/index.js';
import { displayName } from '../accounts/users.js';
import type { UserRow } from '../accounts/models.js';
import { callerOf, type Caller } from '../http/auth.js';
import { sendEnvelope } from '../http/envelope.js';
import { requestCreationKey } from '../http/idempotency.js';
import { parseIfMatch } from '../http/conditional.js';
import { ApiError, badRequest, notFound, referenceDataUnavailable } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import { pageOf } from '../http/pagination.js';
import { apiBaseUrl, type PublicUrlSettings } from '../http/public-url.js';
import type { MunicipalityCatalog } from '../municipalities/catalog.js';
import type { Entities } from './index.js';
import type { CandidateEntity, CandidateEntityRecord, EntityRow, MemberRow, TeamRole } from './models.js';
import { maskedRecord, maskedValuesOnCreate, refusePersonalValues, withoutMaskedValues } from './personal-data.js';
import { checkCandidate } from './rules.js';
import { UnknownMarketshareEntry, type EntitySummaryRow, type EntityWrite, type StoredEntity, type UpdateOutcome } from './store.js';
import { asDate, asIsoTimestamp, readerOf } from '../db/reader.js';

const ENTITIES_PER_PAGE = 30;

type EntityOperations =
  | 'listEntities'
  | 'getEntity'
  | 'addEntity'
  | 'listOperators'
  | 'checkOperatorEmail'
  | 'addOperator'
  | 'removeOperator';

export interface EntityHandlerDependencies {
  entities: Entities;
  accounts: Accounts;
  municipalities: MunicipalityCatalog;
  urls: PublicUrlSettings;
}

export function entityHandlers({ entities, accounts, municipalities, urls }: EntityHandlerDependencies): Pick<Required<OperationHandlers>, EntityOperations> {
  const { teams, store, models } = entities;
  const idRequired = (field: string) => badRequest(`The request is malformed: ${field} is required.`, [{ location: 'query', field, rule: 'required', message: 'is required' }]);

  return {
    async listEntities(req, res) {
      const caller = callerOf(res);
      const page = req.query.page ?? 1;
      const { total, rows } = await store.page({ id: caller.user.id, isAdmin: caller.user.is_admin }, req.query.tp, page, ENTITIES_PER_PAGE);
      const listUrl = new URL(apiBaseUrl(req, urls) + '/api/entidade/');
      if (req.query.tp) listUrl.searchParams.set('tp', req.query.tp);
      const body = pageOf(rows.map(summaryOf), total, page, ENTITIES_PER_PAGE, listUrl.toString());
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
      const problems = [...(stored ? [] : maskedValuesOnCreate(body)), ...checkCandidate(sent, municipalities, new Date(), stored)];
      if (problems.length > 0) throw new ApiError(422, 'validation_failed', 'The entity is invalid.', problems);
      // The CPF check and the write hold a lock on the CPF: parallel creates (a double click) cannot both pass.
      const cpf = sent.cpf ?? undefined;
      const cpfLocks = cpf === undefined ? [] : [`entity-cpf:${cpf}`];
      const id = await withLocks(models.Entity.sequelize!, cpfLocks, async (transaction) => {
        if (cpf !== undefined) await refuseDuplicateCpf(caller, cpf, existing?.entity.id, transaction);
        if (!existing) return store.create(req.query.tp ?? 'candidato', caller.user.id, sent, transaction, creationKey);
        const outcome = await updateOrExplain(existing.entity.id, sent, { userId: caller.user.id, expectedVersions: ifMatch }, transaction);
        if (!outcome.written) throw editConflict(existing.entity.id, req.get('If-Match')!, outcome.currentVersion);
        return existing.entity.id;
      });
      await sendEntity(res, existing ? 200 : 201, id, existing ? `Entity ${id} updated.` : `Entity ${id} created.`, wholeView);
    },

    async listOperators(req, res) {
      if (req.query.id === undefined) throw idRequired('id');
      const { entity } = await teams.access(callerOf(res), Number(req.query.id), 'read', { location: 'query', field: 'id' });
      const operators = (await teams.membersWithUsers(entity.id, req.query.tp)).map((member) => operatorOf(member, member));
      // Owner first, then by name.
      operators.sort((a, b) => Number(b.role === 'owner') - Number(a.role === 'owner') || a.display_name.localeCompare(b.display_name, 'pt-BR'));
      sendEnvelope(res, 200, operators, `${operators.length} members.`);
    },

    async checkOperatorEmail(req, res) {
      if (req.query.email === undefined) throw idRequired('email');
      if (req.query.entity_id === undefined) throw idRequired('entity_id');
      const { entity } = await teams.access(callerOf(res), Number(req.query.entity_id), 'manageTeam', { location: 'query', field: 'entity_id' });
      const found = await accounts.users.byEmail(req.query.email);
      const user = found?.is_active ? found : undefined; // addOperator refuses inactive users, so they are not offered
      const membership = user ? await models.Member.findOne({ where: { entity_id: entity.id, user_id: user.id }, raw: true }) : null;
      const role = (membership as MemberRow | null)?.role ?? null;
      const data = { email: req.query.email.trim().toLowerCase(), user_exists: user !== undefined, already_in_team: role !== null, role };
      sendEnvelope(res, 200, data, !user ? 'No user has this e-mail.' : role ? 'The user is already in the team.' : 'The user can be added to the team.');
    },

    async addOperator(req, res) {
      const caller = callerOf(res);
      const { entity, role: callerRole } = await teams.access(caller, req.body.entity_id, 'manageTeam', { location: 'body', field: 'entity_id' });
      if (req.body.role === 'admin' && callerRole !== 'owner' && !caller.user.is_admin) {
        throw new ApiError(403, 'forbidden', 'Only the owner may add another admin to the team.');
      }
      const user = await accounts.users.byEmail(req.body.email);
      if (!user?.is_active) {
        throw notFound('No active user has this e-mail.', [{ location: 'body', field: 'email', rule: 'existing_user', message: 'must be the e-mail of an active user' }]);
      }
      const current = (await models.Member.findOne({ where: { entity_id: entity.id, user_id: user.id }, raw: true })) as MemberRow | null;
      if (current && current.role !== req.body.role) {
        throw new ApiError(409, 'conflict', `${displayName(user)} is already ${current.role} of this entity; remove them first to change the role.`, [
          { location: 'body', field: 'email', rule: 'not_in_team', message: `is already ${current.role} of this team` },
        ]);
      }
      const membership = current ?? (await addMember(entity.id, user.id, req.body.role));
      if (!current) {
        const details = { entity_id: entity.id, role: req.body.role };
        await accounts.audit.record({ event: 'team_member_added', actorId: caller.user.id, userId: user.id, address: req.ip, details });
      }
      sendEnvelope(res, current ? 200 : 201, operatorOf(membership, user), current ? 'Already in the team with this role.' : `${displayName(user)} is now ${req.body.role} of ${entity.nome}.`);
    },

    async removeOperator(req, res) {
      const caller = callerOf(res);
      const leaving = req.body.user_id === caller.user.id;
      const { entity, role: callerRole } = await teams.access(caller, req.body.entity_id, leaving ? 'read' : 'manageTeam', { location: 'body', field: 'entity_id' });
      const member = (await models.Member.findOne({ where: { entity_id: entity.id, user_id: req.body.user_id }, raw: true })) as MemberRow | null;
      if (!member) {
        throw notFound(`User ${req.body.user_id} is not in this team.`, [{ location: 'body', field: 'user_id', rule: 'in_team', message: 'must be a member of the team', value: req.body.user_id }]);
      }
      if (member.role === 'owner') {
        throw new ApiError(409, 'conflict', 'The owner of an entity cannot be removed from its team.', [
          { location: 'body', field: 'user_id', rule: 'not_owner', message: 'is the owner of the entity', value: req.body.user_id },
        ]);
      }
      if (!leaving && member.role === 'admin' && callerRole !== 'owner' && !caller.user.is_admin) {
        throw new ApiError(403, 'forbidden', 'Only the owner may remove an admin from the team.');
      }
      // The guardianship links the member created from or to this entity leave with them (guardianship.ts).
      await models.Member.sequelize!.transaction(async (transaction) => {
        await models.Member.destroy({ where: { id: member.id }, transaction });
        await entities.guardianship.forgetMember(entity.id, member.user_id, transaction);
      });
      const details = { entity_id: entity.id, role: member.role };
      await accounts.audit.record({ event: 'team_member_removed', actorId: caller.user.id, userId: member.user_id, address: req.ip, details });
      sendEnvelope(res, 200, { removed: true as const }, 'The member was removed from the team.');
    },
  };

  /**
   * Answers the stored entity as `getEntity` does: the record with its author, its personal data masked
   * unless the caller has the `wholeView` of it, and its version as the ETag (the same for every view).
   */
  async function sendEntity(res: Response, status: 200 | 201, id: number, message: string, wholeView: boolean, row?: EntityRow): Promise<void> {
    const { stored, author } = await storedWithAuthor(id, row);
    const record: CandidateEntityRecord = {
      ...stored.entity,
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

  async function refuseDuplicateCpf(caller: Caller, cpf: string, except: number | undefined, transaction?: Transaction): Promise<void> {
    const other = await store.cpfTakenAmong(cpf, await teams.entityIdsOf(caller.user.id), except, transaction);
    if (other !== undefined) {
      throw new ApiError(409, 'conflict', `This CPF is already registered by entity ${other} of your teams.`, [
        { location: 'body', field: 'cpf', rule: 'unique_in_team', message: 'is already registered by another entity of your teams', value: cpf },
      ]);
    }
  }

  async function addMember(entityId: number, userId: number, role: TeamRole): Promise<MemberRow> {
    try {
      const row = await models.Member.create({ entity_id: entityId, user_id: userId, role, added_at: new Date() });
      return row.get({ plain: true });
    } catch (error) {
      // A concurrent add of the same user won: answer with what is there now.
      if (!(error instanceof UniqueConstraintError)) throw error;
      return (await models.Member.findOne({ where: { entity_id: entityId, user_id: userId }, raw: true })) as unknown as MemberRow;
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
    return readerOf(models.Entity.sequelize!).row<Author>('SELECT id, username, first_name, last_name FROM users WHERE id = ?', [userId]);
  }

}

type Author = Pick<UserRow, 'id' | 'username' | 'first_name' | 'last_name'>;

/** A team member as the contract's Operator. */
function operatorOf(member: Pick<MemberRow, 'id' | 'entity_id' | 'user_id' | 'role'> & { added_at: unknown }, user: Pick<UserRow, 'username' | 'first_name' | 'last_name' | 'email'>) {
  return { id: member.id, entity_id: member.entity_id, user_id: member.user_id, username: user.username, display_name: displayName(user), email: user.email, role: member.role, added_at: asIsoTimestamp(member.added_at) };
}

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

function summaryOf(row: EntitySummaryRow) {
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
  };
}
