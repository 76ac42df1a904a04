/**
 * An entity's team in the stateful mock (src/entities/team-handlers.ts, invitations.ts): its members,
 * with an e-mail shown only where it is shared, the invitations by which people join (one open
 * invitation per address, at most MAX_OPEN_INVITATIONS, expiring after a week, answered once), and
 * removals; only the owner invites, withdraws or removes an admin, and nobody removes the owner.
 */
import type { HttpHandler } from 'msw';
import { errorResponse } from '../../msw-validation.js';
import { conflict, envelope, forbidden, notFound } from '../answers.js';
import { entityFor, may, roleIn, type On } from '../auth.js';
import { notify } from '../notifications/handlers.js';
import { pageOf } from '../paging.js';
import { displayName, newId, now, type Invitation, type Member, type State, type StoredEntity, type User } from '../store.js';

export function operatorHandlers(on: On): HttpHandler[] {
  const operatorOf = (state: State, entity: StoredEntity, member: Member) => {
    const user = state.users.find((candidate) => candidate.id === member.user_id)!;
    return { id: member.id, entity_id: entity.id, user_id: user.id, username: user.username, display_name: displayName(user), email: user.email as string | null, role: member.role, added_at: member.added_at };
  };
  /** What `reader` sees of a member's e-mail: theirs, a platform admin's view, or shared with the team. */
  const seenBy = (reader: User, operator: ReturnType<typeof operatorOf>, state: State) => {
    const member = state.users.find((candidate) => candidate.id === operator.user_id)!;
    return reader.is_admin || reader.id === member.id || member.contact_visible_to_team ? operator : { ...operator, email: null };
  };
  return [
    on('listOperators', (context) => {
      const id = context.url.searchParams.get('id');
      if (id === null) return errorResponse(400, 'bad_request', 'The request is malformed: id is required.', [{ location: 'query', field: 'id', rule: 'required', message: 'is required' }]);
      const entity = entityFor(context, Number(id), { location: 'query', field: 'id' });
      if (entity instanceof Response) return entity;
      const tp = context.url.searchParams.get('tp');
      const operators = entity.members.filter((member) => tp === null || member.role === tp).map((member) => seenBy(context.user, operatorOf(context.state, entity, member), context.state));
      operators.sort((a, b) => Number(b.role === 'owner') - Number(a.role === 'owner') || a.display_name.localeCompare(b.display_name, 'pt-BR'));
      return envelope(200, operators, `${operators.length} members.`);
    }),
    on('addOperator', (context) => {
      const { body, state, user } = context;
      const entity = entityFor(context, Number(body.entity_id), { location: 'body', field: 'entity_id' }, 'manageTeam');
      if (entity instanceof Response) return entity;
      if (body.role === 'admin' && roleIn(entity, user) !== 'owner' && !user.is_admin) return forbidden('Only the owner may invite another admin to the team.');
      const email = String(body.email).trim().toLowerCase();
      const account = state.users.find((candidate) => candidate.email.toLowerCase() === email);
      const member = account && entity.members.find((candidate) => candidate.user_id === account.id);
      if (member) return conflict(`This address is already ${member.role} of this team.`, [{ location: 'body', field: 'email', rule: 'not_in_team', message: `is already ${member.role} of this team`, value: email }]);
      const open = openInvitations(state, entity.id).find((invitation) => invitation.email === email);
      if (open && open.role !== body.role) {
        return conflict(`This address already has an open invitation to this team as ${open.role}; withdraw it first to invite with another role.`, [
          { location: 'body', field: 'email', rule: 'no_open_invitation', message: `has open invitation ${open.id} as ${open.role}`, value: email },
        ]);
      }
      if (open) return envelope(200, invitationOf(state, open), `${email} already has this open invitation; nothing was sent again.`);
      const openCount = openInvitations(state, entity.id).length;
      if (openCount >= MAX_OPEN_INVITATIONS) {
        return conflict(`This entity has ${openCount} open invitations, the most it may have; withdraw one or wait for answers.`, [
          { location: 'body', field: 'entity_id', rule: 'max_open_invitations', message: `may have at most ${MAX_OPEN_INVITATIONS} open invitations`, value: entity.id },
        ]);
      }
      const invitation: Invitation = {
        id: newId(state, state.invitations.map((candidate) => candidate.id)),
        entity_id: entity.id,
        email,
        role: body.role as Invitation['role'],
        state: 'pending',
        invited_by: user.id,
        created_at: now(),
        expires_at: new Date(Date.now() + INVITATION_LIFETIME_MS).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        answered_at: null,
      };
      state.invitations.push(invitation);
      if (account) {
        notify(state, account.id, {
          type: 'invitation_received',
          title: `Convite para a equipe de ${String(entity.record.nome)}`,
          body: `${displayName(user)} convidou você para a equipe de ${String(entity.record.nome)} como ${invitation.role}. Aceite ou recuse em Convites.`,
          entity_id: entity.id,
          subject: { kind: 'invitation', id: invitation.id },
        });
      }
      return envelope(201, invitationOf(state, invitation), `${email} is invited to the team of ${String(entity.record.nome)} as ${invitation.role}.`);
    }),
    on('listTeamInvitations', (context) => {
      const { url, state } = context;
      const id = url.searchParams.get('entity_id');
      if (id === null) return errorResponse(400, 'bad_request', 'The request is malformed: entity_id is required.', [{ location: 'query', field: 'entity_id', rule: 'required', message: 'is required' }]);
      const entity = entityFor(context, Number(id), { location: 'query', field: 'entity_id' }, 'manageTeam');
      if (entity instanceof Response) return entity;
      const wanted = url.searchParams.get('state');
      const views = state.invitations
        .filter((invitation) => invitation.entity_id === entity.id)
        .map((invitation) => invitationOf(state, invitation))
        .filter((view) => wanted === null || view.state === wanted)
        .reverse();
      const listUrl = new URL(`${context.base}/api/operators/invitations/`);
      listUrl.searchParams.set('entity_id', String(entity.id));
      if (wanted !== null) listUrl.searchParams.set('state', wanted);
      const page = pageOf(views, Number(url.searchParams.get('page') ?? 1), 50, listUrl);
      return page instanceof Response ? page : envelope(200, page, `${views.length} invitation${views.length === 1 ? '' : 's'}.`);
    }),
    on('listMyInvitations', ({ state, user }) => {
      const open = state.invitations.filter((invitation) => invitation.email === user.email.toLowerCase() && invitationState(invitation) === 'pending');
      return envelope(200, open.map((invitation) => invitationOf(state, invitation)), `${open.length} open invitation${open.length === 1 ? '' : 's'}.`);
    }),
    on('acceptInvitation', ({ body, state, user }) => {
      const invitation = addressedTo(state, user, Number(body.id));
      if (invitation instanceof Response) return invitation;
      const entity = state.entities.get(invitation.entity_id)!;
      const existing = entity.members.find((member) => member.user_id === user.id);
      if (invitation.state === 'accepted' && existing) return envelope(200, operatorOf(state, entity, existing), `${displayName(user)} is now ${existing.role} of ${String(entity.record.nome)}.`);
      const closed = refuseClosed(invitation);
      if (closed) return closed;
      if (existing) return conflict('You are already in this team.', [{ location: 'body', field: 'id', rule: 'not_in_team', message: 'is an invitation to a team you are already in', value: invitation.id }]);
      Object.assign(invitation, { state: 'accepted', answered_at: now() });
      const member: Member = { id: newId(state, entity.members.map((candidate) => candidate.id)), user_id: user.id, role: invitation.role, added_at: now() };
      entity.members.push(member);
      return envelope(200, operatorOf(state, entity, member), `${displayName(user)} is now ${member.role} of ${String(entity.record.nome)}.`);
    }),
    on('declineInvitation', ({ body, state, user }) => {
      const invitation = addressedTo(state, user, Number(body.id));
      if (invitation instanceof Response) return invitation;
      if (invitation.state !== 'declined') {
        const closed = refuseClosed(invitation);
        if (closed) return closed;
        Object.assign(invitation, { state: 'declined', answered_at: now() });
      }
      return envelope(200, invitationOf(state, invitation), `Invitation ${invitation.id} declined.`);
    }),
    on('withdrawInvitation', (context) => {
      const { body, state, user } = context;
      const entity = entityFor(context, Number(body.entity_id), { location: 'body', field: 'entity_id' }, 'manageTeam');
      if (entity instanceof Response) return entity;
      const invitation = state.invitations.find((candidate) => candidate.id === body.id && candidate.entity_id === entity.id);
      if (!invitation) return notFound(`There is no invitation ${String(body.id)} of this entity.`, [{ location: 'body', field: 'id', rule: 'existing_invitation', message: 'must be an invitation of this entity', value: body.id as number }]);
      if (invitation.role === 'admin' && roleIn(entity, user) !== 'owner' && !user.is_admin) return forbidden('Only the owner may withdraw an invitation to the admin role.');
      if (invitation.state !== 'withdrawn') {
        const closed = refuseClosed(invitation);
        if (closed) return closed;
        Object.assign(invitation, { state: 'withdrawn', answered_at: now() });
      }
      return envelope(200, invitationOf(state, invitation), `Invitation ${invitation.id} withdrawn.`);
    }),
    on('removeOperator', (context) => {
      const { body, user } = context;
      const leaving = body.user_id === user.id;
      const entity = entityFor(context, Number(body.entity_id), { location: 'body', field: 'entity_id' }, leaving ? 'read' : 'manageTeam');
      if (entity instanceof Response) return entity;
      const member = entity.members.find((candidate) => candidate.user_id === body.user_id);
      if (!member) return notFound(`User ${String(body.user_id)} is not in this team.`, [{ location: 'body', field: 'user_id', rule: 'in_team', message: 'must be a member of the team', value: body.user_id as number }]);
      if (member.role === 'owner') return conflict('The owner of an entity cannot be removed from its team.', [{ location: 'body', field: 'user_id', rule: 'not_owner', message: 'is the owner of the entity', value: body.user_id as number }]);
      if (!leaving && member.role === 'admin' && roleIn(entity, user) !== 'owner' && !user.is_admin) return forbidden('Only the owner may remove an admin from the team.');
      entity.members = entity.members.filter((candidate) => candidate !== member);
      return envelope(200, { removed: true }, 'The member was removed from the team.');
    }),
  ];
}

/** The server's defaults (INVITATION_LIFETIME_DAYS, TEAM_MAX_OPEN_INVITATIONS). */
export const INVITATION_LIFETIME_MS = 7 * 86_400_000;
const MAX_OPEN_INVITATIONS = 20;

function invitationState(invitation: Invitation): Invitation['state'] | 'expired' {
  return invitation.state === 'pending' && Date.parse(invitation.expires_at) <= Date.now() ? 'expired' : invitation.state;
}

function openInvitations(state: State, entityId: number): Invitation[] {
  return state.invitations.filter((invitation) => invitation.entity_id === entityId && invitationState(invitation) === 'pending');
}

function invitationOf(state: State, invitation: Invitation) {
  const inviter = state.users.find((candidate) => candidate.id === invitation.invited_by);
  const entity = state.entities.get(invitation.entity_id);
  return {
    ...invitation,
    entity_name: String(entity?.record.nome ?? ''),
    state: invitationState(invitation),
    invited_by: inviter ? { id: inviter.id, display_name: displayName(inviter) } : null,
  };
}

/** The invitation if it names the caller's address; the server's 404 otherwise. */
function addressedTo(state: State, user: User, id: number): Invitation | Response {
  const invitation = state.invitations.find((candidate) => candidate.id === id && candidate.email === user.email.toLowerCase());
  return invitation ?? notFound(`There is no invitation ${id} to your address.`, [{ location: 'body', field: 'id', rule: 'existing_invitation', message: 'must be an invitation to your e-mail address', value: id }]);
}

/** The server's 409 for an invitation that is no longer open; undefined while it is. */
function refuseClosed(invitation: Invitation): Response | undefined {
  const current = invitationState(invitation);
  if (current === 'pending') return undefined;
  return conflict(`Invitation ${invitation.id} is ${current}, no longer open.`, [{ location: 'body', field: 'id', rule: 'open_invitation', message: `is ${current}`, value: invitation.id }]);
}
