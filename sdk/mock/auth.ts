/**
 * Who calls and what they may do. Every handler is registered through `operationHandlers`: the
 * contract's path of its operation, the request checks of msw-validation.ts, then the caller found by
 * their key, so an ApiKeyAuth operation never runs without a live key of an active user (401). A handler
 * then asks the team rules (src/entities/teams.ts, in their simplest form) before it reads the store: a
 * stranger to a team learns nothing (404), a member whose role does not allow it is refused (403).
 */
import { http, type HttpHandler } from 'msw';
import { withDeprecation } from '../msw-deprecation.js';
import { apiKeyIn, operationById, refuseInvalidRequest, requiresKey, unauthorizedResponse, type ErrorDetail } from '../msw-validation.js';
import { forbidden, notFound } from './answers.js';
import type { Json, State, StoredEntity, TeamRole, User } from './store.js';

export interface Context {
  request: Request;
  url: URL;
  body: Json;
  /** The caller (for ApiKeyAuth operations; they are refused without a live key before this). */
  user: User;
  /** The id of the caller's key, as listMySessions shows it. */
  keyId: number | undefined;
  state: State;
  base: string;
}
export type On = (operationId: string, answer: (context: Context) => Response | Promise<Response>) => HttpHandler;

/** Registers handlers on `base`, each answering from the State `stateOf` gives at the time of the request. */
export function operationHandlers(base: string, stateOf: () => State): On {
  return (operationId, answer) => {
    const operation = operationById(operationId);
    if (!operation) throw new TypeError(`The contract has no operation "${operationId}"`);
    const basePath = new URL(base).pathname.replace(/\/$/, '');
    const method = operation.method as 'get' | 'post';
    return http[method](`${base}${operation.path.replace(/\{(.+?)\}/g, ':$1')}`, async ({ request, params }) => {
      const url = new URL(request.url);
      // `/api/usuario/{user_id}/` also matches `/api/usuario/get_user_social_logins/`: not ours.
      if (Object.values(params).some((value) => !/^\d+$/.test(String(value)))) return undefined;
      const refused = await refuseInvalidRequest(operation, request, url.pathname.slice(basePath.length) || '/');
      if (refused) return withDeprecation(operationId, request, refused, base, false);
      const state = stateOf();
      const header = request.headers.get('authorization');
      const key = header === null ? undefined : state.keys.get(apiKeyIn(header) ?? '');
      const user = state.users.find((candidate) => candidate.id === key?.user_id);
      if (requiresKey(operation.node) && !user?.is_active) return withDeprecation(operationId, request, unauthorizedResponse('The API key is invalid, expired or revoked. Log in again.'), base, false);
      const body = request.method === 'GET' ? {} : ((await request.clone().json().catch(() => ({}))) as Json);
      // The deprecation headers the server would add (msw-deprecation.ts).
      return withDeprecation(operationId, request, await answer({ request, url, body, user: user!, keyId: key?.id, state, base }), base, true);
    });
  };
}

/** The caller's role in the entity's team (`admin` for a platform admin outside it), or undefined. */
export function roleIn(entity: StoredEntity, user: User): TeamRole | undefined {
  const role = entity.members.find((member) => member.user_id === user.id)?.role;
  return role ?? (user.is_admin ? 'admin' : undefined);
}

/** What each team role may do (src/entities/teams.ts). */
const MAY = {
  read: ['owner', 'admin', 'operator', 'viewer'],
  edit: ['owner', 'admin', 'operator'],
  manageTeam: ['owner', 'admin'],
  readPersonalData: ['owner', 'admin'],
} as const satisfies Record<string, readonly TeamRole[]>;
export type Permission = keyof typeof MAY;
export const PERMISSION_TEXT: Record<Permission, string> = { read: 'read this entity', edit: 'change this entity', manageTeam: 'manage this team', readPersonalData: 'read personal data whole' };

/** Whether the role allows the permission; a platform admin keeps admin rights where a membership gives less. */
export function may(user: User, role: TeamRole, permission: Permission): boolean {
  const allowed: readonly TeamRole[] = MAY[permission];
  return allowed.includes(role) || (user.is_admin && allowed.includes('admin'));
}

/**
 * The entity if the caller is in its team with a role allowing `permission`: otherwise the server's 404
 * naming the field that carried the id (a stranger learns nothing), or its 403.
 */
export function entityFor(context: Context, id: number, where: Pick<ErrorDetail, 'location' | 'field'>, permission: Permission = 'read'): StoredEntity | Response {
  const entity = context.state.entities.get(id);
  const role = entity && roleIn(entity, context.user);
  if (!entity || !role) return notFound(`There is no entity ${id} in your teams.`, [{ ...where, rule: 'in_your_teams', message: 'must be an entity of one of your teams', value: id }]);
  if (!may(context.user, role, permission)) return forbidden(`Your role in this team (${role}) may not ${PERMISSION_TEXT[permission]}.`);
  return entity;
}
