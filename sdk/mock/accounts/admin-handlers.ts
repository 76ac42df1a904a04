/**
 * The platform admins' operations on accounts in the stateful mock: create, deactivate (revoking the
 * user's keys), reactivate (never a deleted account) and end a user's sessions.
 */
import type { HttpHandler } from 'msw';
import { conflict, envelope, forbidden, invalidBody, notFound } from '../answers.js';
import type { Context, On } from '../auth.js';
import { newId, now, publicUser, type State, type User } from '../store.js';

/** The platform admins' operations on accounts; a created user logs in with the password given, else the demo one. */
export function adminAccountHandlers(on: On): HttpHandler[] {
  const adminOnly = (user: User) => (user.is_admin ? undefined : forbidden('Only platform administrators may do this.'));
  /** The user the path names, or the server's 404. */
  const named = ({ url, state }: Context): User | Response => {
    const id = Number(url.pathname.split('/').filter(Boolean).at(-2));
    return state.users.find((user) => user.id === id) ?? notFound(`There is no user ${id}.`, [{ location: 'path', field: 'user_id', rule: 'existing_user', message: 'must be the id of a user', value: id }]);
  };
  const revokeAllOf = (state: State, userId: number) => {
    const theirs = [...state.keys].filter(([, key]) => key.user_id === userId);
    for (const [token] of theirs) state.keys.delete(token);
    return theirs.length;
  };
  const keysRevoked = (count: number) => (count === 1 ? '1 key was revoked' : `${count} keys were revoked`);
  return [
    on('createUser', ({ body, user, state }) => {
      const refused = adminOnly(user);
      if (refused) return refused;
      const username = String(body.username);
      const email = String(body.email).trim().toLowerCase();
      if (username.includes('@')) return invalidBody([{ location: 'body', field: 'username', rule: 'username', message: 'must be letters, digits and . _ + - only (no @)', value: username }]);
      const taken = state.users.find((other) => other.email === email) ? 'email' : state.users.find((other) => other.username.toLowerCase() === username.toLowerCase()) ? 'username' : undefined;
      if (taken) return conflict(`Another account already has this ${taken === 'email' ? 'e-mail address' : 'username'}.`, [{ location: 'body', field: taken, rule: 'unique', message: 'is taken by another account', value: taken === 'email' ? email : username }]);
      const created: User = {
        id: newId(state, state.users.map((other) => other.id)),
        username,
        email,
        first_name: String(body.first_name ?? ''),
        last_name: String(body.last_name ?? ''),
        phone: null,
        is_admin: body.is_admin === true,
        date_joined: now(),
        last_login: null,
        is_active: true,
        contact_visible_to_team: false,
      };
      state.users.push(created);
      if (typeof body.password === 'string') state.passwords.set(created.id, body.password);
      const how = typeof body.password === 'string' ? '' : `; a link to get a password was mailed to ${email}`;
      return envelope(201, publicUser(created), `User ${created.id} was created${how}.`);
    }),
    on('deactivateUser', (context) => {
      const target = adminOnly(context.user) ?? named(context);
      if (target instanceof Response) return target;
      if (target.id === context.user.id) return conflict('You cannot deactivate your own account; another admin can.', [{ location: 'path', field: 'user_id', rule: 'not_yourself', message: "must not be the caller's own account", value: target.id }]);
      target.is_active = false;
      const revoked = revokeAllOf(context.state, target.id);
      return envelope(200, publicUser(target), `User ${target.id} was deactivated; ${keysRevoked(revoked)}.`);
    }),
    on('reactivateUser', (context) => {
      const target = adminOnly(context.user) ?? named(context);
      if (target instanceof Response) return target;
      if (target.deleted_at) {
        return conflict(`User ${target.id} deleted their account; it cannot be reactivated.`, [
          { location: 'path', field: 'user_id', rule: 'account_deleted', message: 'must not be a deleted account', value: target.id },
        ]);
      }
      target.is_active = true;
      return envelope(200, publicUser(target), `User ${target.id} is active.`);
    }),
    on('endUserSessions', (context) => {
      const target = adminOnly(context.user) ?? named(context);
      if (target instanceof Response) return target;
      const revoked = revokeAllOf(context.state, target.id);
      return envelope(200, { keys_revoked: revoked }, `User ${target.id}: ${keysRevoked(revoked)}.`);
    }),
  ];
}
