/**
 * Sign-up (SIGNUP=open) and a user's change of address in the stateful mock: nothing is mailed, and a
 * token waits until verifyEmail gets it (`confirmationToken` tells a test what the mail would carry).
 */
import type { HttpHandler } from 'msw';
import { errorResponse, type ErrorDetail } from '../../msw-validation.js';
import { conflict, envelope, invalidBody } from '../answers.js';
import type { On } from '../auth.js';
import { newId, now, type State, type User } from '../store.js';

/** The server's default PASSWORD_MIN_LENGTH (src/accounts/password-policy.ts). */
export const PASSWORD_MIN_LENGTH = 12;

/**
 * Sign-up as a server with SIGNUP=open answers it, and a user's change of address: the same answer for a
 * free and a taken address, a change only once verifyEmail gets the token (`confirmationToken` tells it;
 * nothing is mailed).
 */
export function signUpHandlers(on: On, password: string): HttpHandler[] {
  const linkLifetimeSeconds = 48 * 3600;
  const accepted = (email: string, message: string) => envelope(200, { status: 'confirmation_sent', email, link_expires_in_seconds: linkLifetimeSeconds }, message);
  const newToken = () => [...crypto.getRandomValues(new Uint8Array(24))].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  const forget = (state: State, email: string) => {
    for (const [token, pending] of state.pendingSignUps) if (pending.email === email) state.pendingSignUps.delete(token);
  };
  return [
    on('signUp', ({ body, state }) => {
      const username = String(body.username);
      const email = String(body.email).trim().toLowerCase();
      const chosen = String(body.password);
      const problems: ErrorDetail[] = [];
      if (username.includes('@')) problems.push({ location: 'body', field: 'username', rule: 'username', message: 'must be letters, digits and . _ + - only (no @)', value: username });
      if ([...chosen].length < PASSWORD_MIN_LENGTH) problems.push({ location: 'body', field: 'password', rule: 'min_length', message: `must be at least ${PASSWORD_MIN_LENGTH} characters (it has ${[...chosen].length})` });
      if (problems.length > 0) return invalidBody(problems);
      const key = username.toLowerCase();
      const held = [...state.pendingSignUps.values()].some((pending) => pending.username.toLowerCase() === key && pending.email !== email);
      if (held || state.users.some((other) => other.username.toLowerCase() === key)) {
        return conflict('Another account already has this username.', [{ location: 'body', field: 'username', rule: 'unique', message: 'is taken by another account', value: username }]);
      }
      // A taken address changes nothing (the server mails its owner); a free one gets a pending sign-up.
      if (!state.users.some((other) => other.email === email)) {
        forget(state, email);
        state.pendingSignUps.set(newToken(), { username, email, password: chosen, first_name: String(body.first_name ?? ''), last_name: String(body.last_name ?? '') });
      }
      return accepted(email, 'Check your e-mail. If the address can be used, a link to confirm the account was sent to it.');
    }),
    on('resendSignUpConfirmation', ({ body, state }) => {
      const email = String(body.email).trim().toLowerCase();
      const pending = [...state.pendingSignUps.values()].find((signUp) => signUp.email === email);
      if (pending) {
        forget(state, email);
        state.pendingSignUps.set(newToken(), pending);
      }
      return accepted(email, 'If a sign-up with this address waits for confirmation, a new link was sent to it.');
    }),
    on('changeMyEmail', ({ body, user, state }) => {
      if (body.current_password !== (state.passwords.get(user.id) ?? password)) {
        return errorResponse(401, 'invalid_credentials', 'The current password is incorrect.', [
          { location: 'body', field: 'current_password', rule: 'current_password', message: "must be the account's current password" },
        ]);
      }
      const email = String(body.new_email).trim().toLowerCase();
      if (email === user.email) return invalidBody([{ location: 'body', field: 'new_email', rule: 'different_from_current', message: "must differ from the account's current address", value: email }]);
      // Another account's address changes nothing (the server tells its owner); a newer request replaces the older.
      if (!state.users.some((other) => other.email === email)) {
        for (const [token, pending] of state.pendingEmailChanges) if (pending.user_id === user.id) state.pendingEmailChanges.delete(token);
        state.pendingEmailChanges.set(newToken(), { user_id: user.id, email });
      }
      return envelope(200, { status: 'confirmation_sent', email, link_expires_in_seconds: linkLifetimeSeconds }, "Check the new address's mail. If it can be used, a link to confirm it was sent to it.");
    }),
    on('verifyEmail', ({ url, state }) => {
      const token = url.searchParams.get('token');
      if (token === null) return errorResponse(400, 'bad_request', 'The request is malformed: token is required.', [{ location: 'query', field: 'token', rule: 'required', message: 'is required' }]);
      const change = state.pendingEmailChanges.get(token);
      const mover = change && state.users.find((other) => other.id === change.user_id);
      if (change && mover) {
        state.pendingEmailChanges.delete(token);
        mover.email = change.email;
        return envelope(200, { status: 'email_changed', username: mover.username, email: mover.email }, `The account's e-mail address is now ${mover.email}.`);
      }
      const pending = state.pendingSignUps.get(token);
      if (!pending) {
        return errorResponse(400, 'invalid_token', 'The confirmation link is not valid: unknown, already used or expired. Sign up again, or ask for a new link.', [
          { location: 'query', field: 'token', rule: 'valid_confirmation_token', message: 'must be the token of an unused, unexpired confirmation link' },
        ]);
      }
      forget(state, pending.email);
      const created: User = {
        id: newId(state, state.users.map((other) => other.id)),
        username: pending.username,
        email: pending.email,
        first_name: pending.first_name,
        last_name: pending.last_name,
        phone: null,
        is_admin: false,
        date_joined: now(),
        last_login: null,
        is_active: true,
        contact_visible_to_team: false,
      };
      state.users.push(created);
      state.passwords.set(created.id, pending.password);
      return envelope(200, { status: 'account_activated', username: created.username, email: created.email }, 'The e-mail address is confirmed; you can log in now.');
    }),
  ];
}
