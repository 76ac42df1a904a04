/**
 * The HTTP side of teams: who is in an entity's team, and how people come in (by invitation, with
 * consent: invitations.ts) and go out. As everywhere in entities, the team rules are asked first: an
 * entity outside the caller's teams is 404, a role that may read it but not do this is 403.
 */
import type { Request } from 'express';
import type { Accounts } from '../accounts/index.js';
import type { UserRow } from '../accounts/models.js';
import { displayName, normaliseEmail, seesContactOf } from '../accounts/users.js';
import { asBoolean, asIsoTimestamp } from '../db/reader.js';
import { callerOf, type Caller } from '../http/auth.js';
import { sendEnvelope } from '../http/envelope.js';
import { ApiError, badRequest, notFound, unauthorized } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import { pageOf } from '../http/pagination.js';
import { apiBaseUrl, type PublicUrlSettings } from '../http/public-url.js';
import type { Entities } from './index.js';
import type { InvitationLinks } from './invitations.js';
import type { MemberRow, TeamRole } from './models.js';
import { counted } from '../http/counted.js';

const INVITATIONS_PER_PAGE = 50;

type TeamOperations =
  | 'listOperators'
  | 'checkOperatorEmail'
  | 'addOperator'
  | 'removeOperator'
  | 'listTeamInvitations'
  | 'listMyInvitations'
  | 'acceptInvitation'
  | 'declineInvitation'
  | 'withdrawInvitation';

export interface TeamUrlSettings extends PublicUrlSettings {
  /** FRONTEND_SIGNUP_URL: the sign-up page an invitation to an address without an account links to. */
  frontendSignUpUrl: string | undefined;
}

export interface TeamHandlerDependencies {
  entities: Entities;
  accounts: Accounts;
  urls: TeamUrlSettings;
}

export function teamHandlers({ entities, accounts, urls }: TeamHandlerDependencies): Pick<Required<OperationHandlers>, TeamOperations> {
  const { teams, models, invitations } = entities;
  const required = (field: string) => badRequest(`The request is malformed: ${field} is required.`, [{ location: 'query', field, rule: 'required', message: 'is required' }]);

  return {
    async listOperators(req, res) {
      if (req.query.id === undefined) throw required('id');
      const caller = callerOf(res);
      const { entity } = await teams.access(caller, Number(req.query.id), 'read', { location: 'query', field: 'id' });
      // A member's e-mail only where they share it with the team (or it is the caller's, or the caller is a platform admin).
      const operators = (await teams.membersWithUsers(entity.id, req.query.tp)).map((member) =>
        operatorOf(member, { ...member, email: seesContactOf(caller.user, { id: member.user_id, contact_visible_to_team: asBoolean(member.contact_visible_to_team) }) ? member.email : null }),
      );
      // Owner first, then by name.
      operators.sort((a, b) => Number(b.role === 'owner') - Number(a.role === 'owner') || a.display_name.localeCompare(b.display_name, 'pt-BR'));
      sendEnvelope(res, 200, operators, `${operators.length} members.`);
    },

    async checkOperatorEmail(req, res) {
      if (req.query.email === undefined) throw required('email');
      if (req.query.entity_id === undefined) throw required('entity_id');
      const caller = callerOf(res);
      const { entity } = await teams.access(caller, Number(req.query.entity_id), 'manageTeam', { location: 'query', field: 'entity_id' });
      const email = normaliseEmail(req.query.email);
      const role = await teams.roleOfAddress(entity.id, email);
      const open = role ? undefined : await invitations.openFor(entity.id, email);
      const full = !role && !open && (await invitations.openCount(entity.id)) >= invitations.maxOpenPerEntity;
      const data = {
        email,
        // Whether the address has an account is the platform's to know, not a team manager's.
        user_exists: caller.user.is_admin ? Boolean((await accounts.users.byEmail(email))?.is_active) : null,
        already_in_team: role !== undefined,
        role: role ?? null,
        invited: open !== undefined,
        invitation: open ? { id: open.id, role: open.role, expires_at: asIsoTimestamp(open.expires_at) } : null,
        can_invite: !role && !open && !full,
      };
      const message = role ? 'The address is already in the team.' : open ? 'The address has an open invitation to the team.' : full ? 'The entity has its maximum of open invitations.' : 'An invitation can be sent to this address.';
      sendEnvelope(res, 200, data, message);
    },

    async addOperator(req, res) {
      const caller = callerOf(res);
      const { entity, role: callerRole } = await teams.access(caller, req.body.entity_id, 'manageTeam', { location: 'body', field: 'entity_id' });
      if (req.body.role === 'admin' && callerRole !== 'owner' && !caller.user.is_admin) {
        throw new ApiError(403, 'forbidden', 'Only the owner may invite another admin to the team.');
      }
      const inviter = await activeUser(caller);
      const { invitation, created } = await invitations.invite(entity, req.body.email, req.body.role, inviter, invitationLinks(req, urls));
      const message = created ? `${invitation.email} is invited to the team of ${entity.nome} as ${invitation.role}.` : `${invitation.email} already has this open invitation; nothing was sent again.`;
      sendEnvelope(res, created ? 201 : 200, invitation, message);
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
        const changes = [{ field: 'role', before: member.role, after: null }];
        await entities.history.record({ entityId: entity.id, subject: 'team', subjectId: member.user_id, action: 'member_removed', actorId: caller.user.id, changes }, transaction);
      });
      const details = { entity_id: entity.id, role: member.role };
      await accounts.audit.record({ event: 'team_member_removed', actorId: caller.user.id, userId: member.user_id, address: req.ip, details });
      sendEnvelope(res, 200, { removed: true as const }, 'The member was removed from the team.');
    },

    async listTeamInvitations(req, res) {
      if (req.query.entity_id === undefined) throw required('entity_id');
      const { entity } = await teams.access(callerOf(res), Number(req.query.entity_id), 'manageTeam', { location: 'query', field: 'entity_id' });
      const page = req.query.page ?? 1;
      const { total, views } = await invitations.ofEntity(entity.id, req.query.state, page, INVITATIONS_PER_PAGE);
      // The page links keep the filters.
      const listUrl = new URL(apiBaseUrl(req, urls) + '/api/operators/invitations/');
      listUrl.searchParams.set('entity_id', String(entity.id));
      if (req.query.state) listUrl.searchParams.set('state', req.query.state);
      sendEnvelope(res, 200, pageOf(views, total, page, INVITATIONS_PER_PAGE, listUrl.toString()), `${counted(total, 'invitation')}.`);
    },

    async listMyInvitations(_req, res) {
      const open = await invitations.openForUser(await activeUser(callerOf(res)));
      sendEnvelope(res, 200, open, `${counted(open.length, 'open invitation')}.`);
    },

    async acceptInvitation(req, res) {
      const invitee = await activeUser(callerOf(res));
      const { membership, invitation } = await invitations.accept(req.body.id, invitee);
      const entity = (await models.Entity.findByPk(invitation.entity_id, { attributes: ['nome'], raw: true })) as { nome: string | null } | null;
      sendEnvelope(res, 200, operatorOf(membership, invitee), `${displayName(invitee)} is now ${invitation.role} of ${entity?.nome ?? `entity ${invitation.entity_id}`}.`);
    },

    async declineInvitation(req, res) {
      const declined = await invitations.decline(req.body.id, await activeUser(callerOf(res)));
      sendEnvelope(res, 200, await invitations.view(declined), `Invitation ${declined.id} declined.`);
    },

    async withdrawInvitation(req, res) {
      const caller = callerOf(res);
      const { entity, role: callerRole } = await teams.access(caller, req.body.entity_id, 'manageTeam', { location: 'body', field: 'entity_id' });
      const invitation = await invitations.ofEntityById(entity.id, req.body.id);
      if (invitation.role === 'admin' && callerRole !== 'owner' && !caller.user.is_admin) {
        throw new ApiError(403, 'forbidden', 'Only the owner may withdraw an invitation to the admin role.');
      }
      const withdrawn = await invitations.withdraw(invitation, caller.user.id);
      sendEnvelope(res, 200, await invitations.view(withdrawn), `Invitation ${withdrawn.id} withdrawn.`);
    },
  };

  /** The caller's account as stored now (its current address decides which invitations are theirs). */
  async function activeUser(caller: Caller): Promise<UserRow> {
    const user = await accounts.users.byId(caller.user.id);
    if (!user?.is_active) throw unauthorized('The API key is invalid, expired or revoked. Log in again.');
    return user;
  }
}

/** The invitation mail's sign-up link: the front end's page when configured, else the token for signUp. */
function invitationLinks(req: Request, urls: TeamUrlSettings): InvitationLinks {
  return {
    signUpUrl(token, email) {
      if (!urls.frontendSignUpUrl) return `${apiBaseUrl(req, urls)}/api/auth/signup/ (POST, with "invitation": "${token}" and this e-mail address)`;
      const link = new URL(urls.frontendSignUpUrl);
      link.searchParams.set('invitation', token);
      link.searchParams.set('email', email);
      return link.toString();
    },
  };
}

/** A team member as the contract's Operator. */
function operatorOf(member: Pick<MemberRow, 'id' | 'entity_id' | 'user_id' | 'role'> & { added_at: unknown }, user: Pick<UserRow, 'username' | 'first_name' | 'last_name'> & { email: string | null }) {
  return {
    id: member.id,
    entity_id: member.entity_id,
    user_id: member.user_id,
    username: user.username,
    display_name: displayName(user),
    email: user.email,
    role: member.role as TeamRole,
    added_at: asIsoTimestamp(member.added_at),
  };
}
