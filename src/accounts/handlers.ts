/**
 * The HTTP side of accounts: each handler reads what the validator already checked, calls the domain
 * and answers in the envelope. Who may do what is decided here, per record.
 */
import type { Request } from 'express';
import { USERNAME_PATTERN } from './settings.js';
import { asIsoTimestamp } from '../db/reader.js';
import { callerOf, requireAdmin } from '../http/auth.js';
import { invalidBody } from '../http/body-fields.js';
import { sendEnvelope } from '../http/envelope.js';
import { ApiError, badRequest, notFound, unauthorized, type ErrorDetail } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import { pageOf } from '../http/pagination.js';
import { apiBaseUrl, type PublicUrlSettings } from '../http/public-url.js';
import { exportPersonalData } from './data-export.js';
import type { Accounts } from './index.js';
import { passwordProblem } from './password-policy.js';
import { profileChanges, type ProfileChanges, type ProfileFields } from './profile.js';
import { newReadablePassword } from './secrets.js';
import { displayName, DuplicateUserError, normaliseEmail, profileAsSeenBy, publicUser, seesContactOf } from './users.js';
import type { UnlockLinks } from './login-unlock.js';
import type { ResetLinks } from './password-reset.js';
import type { SignUpLinks } from './signup.js';
import { counted } from '../http/counted.js';

const USERS_PER_PAGE = 30;
const SESSIONS_PER_PAGE = 30;
const AUDIT_EVENTS_PER_PAGE = 50;

type AccountOperations =
  | 'login'
  | 'logout'
  | 'removeToken'
  | 'checkCredential'
  | 'changePassword'
  | 'listMySessions'
  | 'revokeMySession'
  | 'generateNewPassword'
  | 'validatePasswordResetToken'
  | 'checkEmail'
  | 'checkLoginAttempt'
  | 'requestLoginUnlock'
  | 'listUsers'
  | 'listChatContacts'
  | 'getUser'
  | 'getMyProfile'
  | 'createUser'
  | 'deactivateUser'
  | 'reactivateUser'
  | 'endUserSessions'
  | 'updateMyProfile'
  | 'listUserSocialLogins'
  | 'signUp'
  | 'resendSignUpConfirmation'
  | 'verifyEmail'
  | 'changeMyEmail'
  | 'exportMyData'
  | 'deleteMyAccount'
  | 'listAuditEvents';

/** Who shares a team with a user (from the entities domain), with the shared teams. */
export interface TeamDirectory {
  teammatesOf(userId: number): Promise<Map<number, Array<{ entity_id: number; entity_name: string; role: 'owner' | 'admin' | 'operator' | 'viewer' }>>>;
}

export function accountHandlers(accounts: Accounts, urls: ResetLinkSettings, teams: TeamDirectory): Pick<Required<OperationHandlers>, AccountOperations> {
  const { sessions, tokens, resets, users, passwordChanges, signUps, emailChanges, audit } = accounts;
  /** The user an admin names by id; 404 when there is none. */
  const existingUser = async (userId: number) => {
    const user = await users.byId(userId);
    if (!user) throw notFound(`There is no user ${userId}.`, [{ location: 'path', field: 'user_id', rule: 'existing_user', message: 'must be the id of a user', value: userId }]);
    return user;
  };
  return {
    async login(req, res) {
      const trust = { deviceToken: req.body.device_token, unlockToken: req.body.unlock_token };
      const session = await sessions.login(req.body.username, req.body.password, addressOf(req), req.get('User-Agent'), trust);
      const data = {
        token: session.key,
        token_type: 'Token' as const,
        expires_at: session.expiresAt.toISOString(),
        user: publicUser(session.user),
        device_token: session.deviceToken,
      };
      sendEnvelope(res, 200, data, 'Logged in.');
    },

    async requestLoginUnlock(req, res) {
      accounts.unlocks.request(req.body.username, unlockLinks(urls));
      const data = { status: 'unlock_requested' as const, link_expires_in_seconds: Math.ceil(accounts.devices.settings.unlockLifetimeMs / 1000) };
      sendEnvelope(res, 200, data, 'If the name belongs to an account, an unlock token was mailed to its address.');
    },

    async logout(req, res) {
      const caller = callerOf(res);
      await tokens.revokeById(caller.tokenId);
      await audit.record({ event: 'keys_revoked', actorId: caller.user.id, userId: caller.user.id, address: addressOf(req), details: { reason: 'logout', count: 1 } });
      sendEnvelope(res, 200, { revoked: true as const }, 'Logged out: the key was revoked.');
    },

    async removeToken(req, res) {
      if (!(await tokens.revokeKey(req.body.token_key))) {
        throw notFound('No live API key has this value (unknown, expired or already revoked).', [
          { location: 'body', field: 'token_key', rule: 'live_key', message: 'must be a live API key' },
        ]);
      }
      sendEnvelope(res, 200, { revoked: true as const }, 'The key was revoked.');
    },

    async checkCredential(req, res) {
      // The stored row, not the key's cached holder: the password is checked against the current hash.
      const caller = await users.byId(callerOf(res).user.id);
      if (!caller) throw unauthorized('The API key is invalid, expired or revoked. Log in again.');
      await sessions.confirm(caller, req.body.username, req.body.password, addressOf(req));
      sendEnvelope(res, 200, { valid: true as const, checked_at: new Date().toISOString() }, 'Password confirmed.');
    },

    async changePassword(req, res) {
      const caller = callerOf(res);
      // The stored row: the current password is checked against the current hash.
      const user = await users.byId(caller.user.id);
      if (!user) throw unauthorized('The API key is invalid, expired or revoked. Log in again.');
      const change = { caller: user, keptTokenId: caller.tokenId, currentPassword: req.body.current_password, newPassword: req.body.new_password, address: addressOf(req) };
      const revoked = await passwordChanges.change(change);
      const closed = revoked === 1 ? '1 other session was closed' : `${revoked} other sessions were closed`;
      sendEnvelope(res, 200, { changed: true as const, keys_revoked: revoked }, `The password was changed; ${closed}.`);
    },

    async listMySessions(req, res) {
      const caller = callerOf(res);
      const page = req.query.page ?? 1;
      const { total, rows } = await tokens.liveKeysOf(caller.user.id, page, SESSIONS_PER_PAGE);
      const results = rows.map((row) => ({
        id: row.id,
        device: row.device,
        created_at: asIsoTimestamp(row.created_at),
        last_used_at: row.last_used_at === null ? null : asIsoTimestamp(row.last_used_at),
        expires_at: asIsoTimestamp(row.expires_at),
        current: row.id === caller.tokenId,
      }));
      const body = pageOf(results, total, page, SESSIONS_PER_PAGE, apiBaseUrl(req, urls) + '/api/auth/sessions/');
      sendEnvelope(res, 200, body, `${counted(total, 'live session')}.`);
    },

    async revokeMySession(req, res) {
      const sessionId = Number(req.params.session_id);
      const caller = callerOf(res).user;
      if (!(await tokens.revokeOwn(caller.id, sessionId))) {
        throw notFound(`You have no live session ${sessionId} (unknown, expired or already revoked).`, [
          { location: 'path', field: 'session_id', rule: 'own_live_session', message: 'must be the id of one of your live sessions', value: sessionId },
        ]);
      }
      await audit.record({ event: 'keys_revoked', actorId: caller.id, userId: caller.id, address: addressOf(req), details: { reason: 'session_revoked', count: 1 } });
      sendEnvelope(res, 200, { revoked: true as const }, 'The key was revoked.');
    },

    async generateNewPassword(req, res) {
      const { email, token } = req.query;
      if (token === undefined) {
        if (email === undefined) {
          const problem = 'email is required without token';
          throw badRequest(`The request is malformed: ${problem}.`, [{ location: 'query', field: 'email', rule: 'required', message: problem }]);
        }
        await resets.start(email, resetLinks(req, urls));
        sendEnvelope(res, 200, { status: 'reset_requested' as const }, 'If the e-mail belongs to an account, a reset link was sent to it.');
        return;
      }
      // The token alone names its reset (its hash is unique), as the seed lets a client send it; an
      // e-mail sent with it must still be the account's.
      if (!(await resets.complete(email, token))) {
        const message = email === undefined ? 'must be an unused, unexpired reset token' : 'must be an unused, unexpired reset token for this e-mail';
        throw new ApiError(400, 'invalid_token', 'The reset token is not valid: unknown, already used or expired. Ask for a new one.', [
          { location: 'query', field: 'token', rule: 'valid_reset_token', message },
        ]);
      }
      sendEnvelope(res, 200, { status: 'password_sent' as const }, 'A new password was sent by e-mail. All sessions were closed.');
    },

    async validatePasswordResetToken(req, res) {
      const expiresAt = await resets.check(req.body.email, req.body.token);
      const data = { valid: expiresAt !== undefined, expires_at: expiresAt?.toISOString() ?? null };
      sendEnvelope(res, 200, data, expiresAt ? 'The reset token is valid.' : 'The reset token is not valid.');
    },

    async signUp(req, res) {
      const { username, email, password, invitation, ...profileFields } = req.body;
      const profile = checkedNewAccount({ username, email, password, ...profileFields }, accounts.passwordMinLength);
      await signUps.signUp({ username, email, password, invitation, ...profile }, signUpLinks(req, urls));
      const message = 'Check your e-mail. If the address can be used, a link to confirm the account was sent to it.';
      sendEnvelope(res, 200, confirmationSent(email, signUps.linkLifetimeMs), message);
    },

    async resendSignUpConfirmation(req, res) {
      await signUps.resend(req.body.email, signUpLinks(req, urls));
      const message = 'If a sign-up with this address waits for confirmation, a new link was sent to it.';
      sendEnvelope(res, 200, confirmationSent(req.body.email, signUps.linkLifetimeMs), message);
    },

    async verifyEmail(req, res) {
      const { token } = req.query;
      if (token === undefined) {
        throw badRequest('The request is malformed: token is required.', [{ location: 'query', field: 'token', rule: 'required', message: 'is required' }]);
      }
      const account = await signUps.confirm(token);
      if (account) {
        sendEnvelope(res, 200, { status: 'account_activated', username: account.username, email: account.email }, 'The e-mail address is confirmed; you can log in now.');
        return;
      }
      const moved = await emailChanges.confirm(token);
      if (!moved) {
        throw new ApiError(400, 'invalid_token', 'The confirmation link is not valid: unknown, already used or expired. Sign up again, or ask for a new link.', [
          { location: 'query', field: 'token', rule: 'valid_confirmation_token', message: 'must be the token of an unused, unexpired confirmation link' },
        ]);
      }
      sendEnvelope(res, 200, { status: 'email_changed', username: moved.username, email: moved.email }, `The account's e-mail address is now ${moved.email}.`);
    },

    async changeMyEmail(req, res) {
      // The stored row: the password is checked against the current hash.
      const caller = await users.byId(callerOf(res).user.id);
      if (!caller) throw unauthorized('The API key is invalid, expired or revoked. Log in again.');
      const { new_email: newEmail, current_password: currentPassword } = req.body;
      await emailChanges.request({ caller, newEmail, currentPassword, address: addressOf(req) }, signUpLinks(req, urls));
      const message = "Check the new address's mail. If it can be used, a link to confirm it was sent to it.";
      sendEnvelope(res, 200, confirmationSent(newEmail, signUps.linkLifetimeMs), message);
    },

    async checkEmail(req, res) {
      if (req.query.email === undefined) {
        throw badRequest('The request is malformed: email is required.', [{ location: 'query', field: 'email', rule: 'required', message: 'is required' }]);
      }
      const email = normaliseEmail(req.query.email);
      const available = !(await users.isEmailTaken(email));
      sendEnvelope(res, 200, { email, available }, available ? 'The e-mail is available.' : 'The e-mail is already in use.');
    },

    async checkLoginAttempt(req, res) {
      const state = await sessions.stateOf(addressOf(req));
      const data = {
        attempts: state.attempts,
        limit: state.limit,
        locked: state.locked,
        retry_after_seconds: state.retryAfterSeconds,
        window_seconds: state.windowSeconds,
      };
      const message = state.locked ? `Too many failed logins. Try again in ${state.retryAfterSeconds} seconds.` : 'Login is allowed.';
      sendEnvelope(res, 200, data, message);
    },

    async listUsers(req, res) {
      requireAdmin(callerOf(res));
      const page = req.query.page ?? 1;
      const { total, rows } = await users.page(page, USERS_PER_PAGE);
      const body = pageOf(rows.map(publicUser), total, page, USERS_PER_PAGE, apiBaseUrl(req, urls) + '/api/auth/account');
      sendEnvelope(res, 200, body, `${total} users.`);
    },

    async createUser(req, res) {
      const admin = callerOf(res);
      requireAdmin(admin);
      const { username, email, password, is_admin: isAdmin, ...profileFields } = req.body;
      const profile = checkedNewAccount({ username, email, password, ...profileFields }, accounts.passwordMinLength);
      // Without a password, one nobody sees: the owner gets their own through the mailed link.
      const user = await users
        .create({ username, email, password: password ?? newReadablePassword(), is_admin: isAdmin ?? false, ...profile })
        .catch((error: unknown) => {
          throw error instanceof DuplicateUserError ? takenConflict(error.field, error.field === 'email' ? normaliseEmail(email) : username) : error;
        });
      await audit.record({ event: 'account_created', actorId: admin.user.id, userId: user.id, address: addressOf(req), details: { via: 'admin' } });
      if (password === undefined) resets.welcome(user, resetLinks(req, urls));
      const how = password === undefined ? `; a link to get a password was mailed to ${user.email}` : '';
      sendEnvelope(res, 201, publicUser(user), `User ${user.id} was created${how}.`);
    },

    async deactivateUser(req, res) {
      const caller = callerOf(res);
      requireAdmin(caller);
      const user = await existingUser(Number(req.params.user_id));
      if (user.id === caller.user.id) {
        throw new ApiError(409, 'conflict', 'You cannot deactivate your own account; another admin can.', [
          { location: 'path', field: 'user_id', rule: 'not_yourself', message: "must not be the caller's own account", value: user.id },
        ]);
      }
      await users.setActive(user.id, false);
      const revoked = await tokens.revokeAllOf(user.id);
      await audit.record({ event: 'account_deactivated', actorId: caller.user.id, userId: user.id, address: addressOf(req), details: { keys_revoked: revoked } });
      sendEnvelope(res, 200, publicUser({ ...user, is_active: false }), `User ${user.id} was deactivated; ${keysRevoked(revoked)}.`);
    },

    async reactivateUser(req, res) {
      const caller = callerOf(res);
      requireAdmin(caller);
      const user = await existingUser(Number(req.params.user_id));
      if (user.deleted_at) {
        throw new ApiError(409, 'conflict', `User ${user.id} deleted their account; it cannot be reactivated.`, [
          { location: 'path', field: 'user_id', rule: 'account_deleted', message: 'must not be a deleted account', value: user.id },
        ]);
      }
      await users.setActive(user.id, true);
      await audit.record({ event: 'account_reactivated', actorId: caller.user.id, userId: user.id, address: addressOf(req) });
      sendEnvelope(res, 200, publicUser({ ...user, is_active: true }), `User ${user.id} is active.`);
    },

    async endUserSessions(req, res) {
      const caller = callerOf(res);
      requireAdmin(caller);
      const user = await existingUser(Number(req.params.user_id));
      const revoked = await tokens.revokeAllOf(user.id);
      await audit.record({ event: 'keys_revoked', actorId: caller.user.id, userId: user.id, address: addressOf(req), details: { reason: 'ended_by_admin', count: revoked } });
      sendEnvelope(res, 200, { keys_revoked: revoked }, `User ${user.id}: ${keysRevoked(revoked)}.`);
    },

    async listChatContacts(req, res) {
      const caller = callerOf(res);
      const teammates = await teams.teammatesOf(caller.user.id);
      // `1` is `true` and `0` is `false`: the seed types the flag as a string, and clients send either.
      const onlyTeam = req.query.only_team === 'true' || req.query.only_team === '1';
      const admins = onlyTeam ? [] : await users.admins();
      const ids = new Set([...teammates.keys(), ...admins.map((admin) => admin.id)]);
      ids.delete(caller.user.id);
      const contacts = (await users.byIds([...ids]))
        .filter((user) => user.is_active)
        .map((user) => ({
          user_id: user.id,
          username: user.username,
          display_name: displayName(user),
          email: seesContactOf(caller.user, user) ? user.email : null,
          is_admin: Boolean(user.is_admin),
          teams: teammates.get(user.id) ?? [],
        }));
      contacts.sort((a, b) => a.display_name.localeCompare(b.display_name, 'pt-BR'));
      sendEnvelope(res, 200, contacts, `${contacts.length} contacts.`);
    },

    async getUser(req, res) {
      const userId = Number(req.params.user_id);
      const caller = callerOf(res).user;
      // A profile is visible to its user, to admins and to teammates: checked in the query that reads it.
      const user = await users.visibleTo({ id: caller.id, isAdmin: caller.is_admin }, userId);
      // "Not yours" and "does not exist" are one answer: a profile id reveals nothing.
      if (!user) throw notFound(`There is no user ${userId} that you can see.`, [{ location: 'path', field: 'user_id', rule: 'visible_user', message: 'must be a user you can see', value: userId }]);
      sendEnvelope(res, 200, profileAsSeenBy(caller, user), 'User profile.');
    },

    async listAuditEvents(req, res) {
      requireAdmin(callerOf(res));
      const { event, user_id: userId, since, until } = req.query;
      const page = req.query.page ?? 1;
      const filter = { event, userId, since: since === undefined ? undefined : new Date(since), until: until === undefined ? undefined : new Date(until) };
      const { total, rows } = await audit.page(filter, page, AUDIT_EVENTS_PER_PAGE);
      // The page links keep the filters.
      const listUrl = new URL(apiBaseUrl(req, urls) + '/api/auth/audit_events/');
      for (const [name, value] of Object.entries({ event, user_id: userId, since, until })) if (value !== undefined) listUrl.searchParams.set(name, String(value));
      const body = pageOf(rows, total, page, AUDIT_EVENTS_PER_PAGE, listUrl.toString());
      sendEnvelope(res, 200, body, `${counted(total, 'event')}.`);
    },

    async exportMyData(_req, res) {
      const user = await users.byId(callerOf(res).user.id);
      if (!user) throw unauthorized('The API key is invalid, expired or revoked. Log in again.');
      const data = await exportPersonalData(accounts.models.User.sequelize!, user);
      // Usernames are letters, digits and . _ + -: safe inside the quoted file name.
      res.setHeader('Content-Disposition', `attachment; filename="palanque-data-${user.username}-${data.generated_at.slice(0, 10)}.json"`);
      sendEnvelope(res, 200, data, 'Everything Palanque holds about you.');
    },

    async deleteMyAccount(req, res) {
      // The stored row: the password is checked against the current hash.
      const caller = await users.byId(callerOf(res).user.id);
      if (!caller) throw unauthorized('The API key is invalid, expired or revoked. Log in again.');
      const deleted = await accounts.deletions.delete({ caller, currentPassword: req.body.current_password, address: addressOf(req) });
      const data = {
        deleted: true as const,
        username: deleted.pseudonym,
        deleted_at: deleted.deletedAt.toISOString(),
        keys_revoked: deleted.keysRevoked,
        teams_left: deleted.teamsLeft,
        entities_handed_over: deleted.entitiesHandedOver,
        entities_deleted: deleted.entitiesDeleted,
      };
      sendEnvelope(res, 200, data, `Your account was deleted: it is now ${deleted.pseudonym}; ${keysRevoked(deleted.keysRevoked)}.`);
    },

    async getMyProfile(_req, res) {
      const user = await users.byId(callerOf(res).user.id);
      if (!user) throw unauthorized('The API key is invalid, expired or revoked. Log in again.');
      sendEnvelope(res, 200, publicUser(user), 'Your profile.');
    },

    async updateMyProfile(req, res) {
      const user = await users.updateProfile(callerOf(res).user.id, profileChanges(req.body));
      if (!user) throw unauthorized('The API key is invalid, expired or revoked. Log in again.');
      sendEnvelope(res, 200, publicUser(user), 'Your profile was updated.');
    },

    async listUserSocialLogins(_req, res) {
      const rows = await accounts.socialLoginsOf(callerOf(res).user.id);
      const data = rows.map((row) => ({
        provider: row.provider,
        external_id: row.external_id,
        display_name: row.display_name,
        linked_at: new Date(row.linked_at).toISOString(),
      }));
      sendEnvelope(res, 200, data, `${counted(data.length, 'linked account')}.`);
    },
  };
}

/** 409 for a username or e-mail address another account has. */
function takenConflict(field: 'username' | 'email', value: string): ApiError {
  return new ApiError(409, 'conflict', `Another account already has this ${field === 'email' ? 'e-mail address' : 'username'}.`, [
    { location: 'body', field, rule: 'unique', message: 'is taken by another account', value },
  ]);
}

/** "1 key was revoked", "3 keys were revoked". */
function keysRevoked(count: number): string {
  return count === 1 ? '1 key was revoked' : `${count} keys were revoked`;
}

/** The client's address, as Express resolves it under TRUST_PROXY. */
function addressOf(req: Pick<Request, 'ip'>): string {
  return req.ip ?? 'unknown';
}

/**
 * Where an unlock mail sends its reader: FRONTEND_UNLOCK_URL's login page with `unlock_token` added (the
 * page logs in with the password typed there); without it, the mail gives the token alone.
 */
function unlockLinks(urls: ResetLinkSettings): UnlockLinks {
  return {
    loginUrl(token) {
      if (!urls.frontendUnlockUrl) return undefined;
      const link = new URL(urls.frontendUnlockUrl);
      link.searchParams.set('unlock_token', token);
      return link.toString();
    },
  };
}

interface ResetLinkSettings extends PublicUrlSettings {
  /** FRONTEND_RESET_URL: the front-end page the e-mailed link opens. */
  frontendResetUrl: string | undefined;
  /** FRONTEND_VERIFY_URL: the front-end page a sign-up's confirmation link opens. */
  frontendVerifyUrl: string | undefined;
  /** FRONTEND_UNLOCK_URL: the front-end login page an unlock mail links to; unset, the mail gives the token alone. */
  frontendUnlockUrl?: string | undefined;
}

/**
 * A new account's fields as createUser and signUp take them: 422 naming every field that breaks a rule
 * (the username's characters, the password rules, the profile's fields); the profile's fields as stored.
 */
function checkedNewAccount(fields: { username: string; email: string; password?: string } & ProfileFields, passwordMinLength: number): ProfileChanges {
  const { username, email, password, ...profileFields } = fields;
  const problems: ErrorDetail[] = [];
  const profile = profileChanges(profileFields, problems);
  if (!USERNAME_PATTERN.test(username)) problems.push({ location: 'body', field: 'username', rule: 'username', message: 'must be letters, digits and . _ + - only (no @)', value: username });
  const weak = password === undefined ? undefined : passwordProblem(password, { username, email }, passwordMinLength);
  if (weak) problems.push({ location: 'body', field: 'password', rule: weak.rule, message: weak.message });
  if (problems.length > 0) throw invalidBody(problems);
  return profile;
}

/** The answer of signUp, resendSignUpConfirmation and changeMyEmail: the same whatever became of the address. */
function confirmationSent(email: string, linkLifetimeMs: number) {
  return { status: 'confirmation_sent' as const, email: normaliseEmail(email), link_expires_in_seconds: Math.ceil(linkLifetimeMs / 1000) };
}

/**
 * Where a confirmation e-mail sends its reader: FRONTEND_VERIFY_URL's page with `token` added (it calls
 * verifyEmail when the person asks, so a mail scanner does not spend the link), or verifyEmail itself on
 * the API's public address, as reset links are built (resetLinks).
 */
function signUpLinks(req: Request, urls: ResetLinkSettings): SignUpLinks {
  return {
    confirmUrl(token) {
      const link = new URL(urls.frontendVerifyUrl ?? apiBaseUrl(req, urls) + '/api/auth/verify_email/');
      link.searchParams.set('token', token);
      return link.toString();
    },
  };
}

/**
 * Where a reset e-mail sends its reader. With FRONTEND_RESET_URL, to that page (with `email` and `token`
 * added to its query), which calls generate_new_pass when the person asks: a mail scanner that opens
 * every link then does not spend the token. Otherwise straight to generate_new_pass on the API's public
 * address (PUBLIC_URL, required in production, so that a forged Host header never reaches the mail).
 */
function resetLinks(req: Request, urls: ResetLinkSettings): ResetLinks {
  return {
    completeUrl(email, token) {
      const link = new URL(urls.frontendResetUrl ?? apiBaseUrl(req, urls) + '/api/auth/generate_new_pass');
      link.searchParams.set('email', email);
      link.searchParams.set('token', token);
      return link.toString();
    },
  };
}
